"""One answer's judged figure from its verdicts: majority for verdicts, mean for grades.

An answer a judge protocol applies to carries its verdicts in `Score.judgements`: a rule's
reading (``decided_by="rule"``: the protocol's rules read it and no judge was asked), each
judge's verdict per repeat (``judge``), or a judge's failure (``unjudged``). This module turns
them into one figure per answer, lmmprobe's own definition (docs/definitions.md, "judged
figure"). A verdict's figure is its `Judgement.value`: a grade, or for a reading (an option
letter, an extraction) the correctness its protocol gives it, set when it is read:

- a rule's verdict, where one decided, is the figure;
- else each judge's repeats are averaged (MM-Vet's grader is asked several times and averaged);
- several judges: where every judge's figure is 0 or 1 (a verdict), the majority; a tie
  decides nothing (the answer counts as not judged: never a coin flip); otherwise (grades
  on a scale) the mean of the judges' figures.

An answer none of whose verdicts holds a figure (every judge failed or replied unreadably) has
no judged figure: it is counted apart, in `judge_coverage`.
"""

from __future__ import annotations

from collections.abc import Sequence

from lmmprobe.schema import Judgement, Score
from lmmprobe.schema.judgement import judge_values, judges_figure

__all__ = ["decided", "judge_values", "judged_rows", "judged_value"]


def decided(judgements: Sequence[Judgement]) -> bool:
    """Whether a rule or at least one judge decided the answer (not every path failed)."""
    return any(j.decided_by != "unjudged" for j in judgements)


def judged_value(judgements: Sequence[Judgement]) -> float | None:
    """The answer's judged figure (module docstring), or None where nothing decided one."""
    for j in judgements:
        if j.decided_by == "rule" and j.value is not None:
            return j.value
    return judges_figure(judge_values(judgements).values())


def judged_rows(scores: Sequence[Score]) -> list[Score]:
    """The rows a judge protocol applies to: those carrying any verdict."""
    return [s for s in scores if s.judgements]
