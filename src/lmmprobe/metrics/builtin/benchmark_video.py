"""Official scores of the video benchmarks as run metrics (Video-MME, MVBench).

Each applies to the rows whose benchmark names it as its official metric
(`lmmprobe.metrics.builtin._official`). The answers are read by the benchmark's matcher, which
is its official rule (a run of the benchmark uses it unless ``--matcher`` names another):

- ``videomme_accuracy``: Video-MME's ``eval_your_results.py`` (MME-Benchmarks/Video-MME @
  4e7566d). The ``videomme`` matcher is its ``extract_characters_regex``
  (`lmmprobe.parse.videomme`), and the accuracy is the right answers over the *answered*
  ones: an answer it reads no letter from (``unparsed``) leaves the denominator, as that
  script counts (its ``answered``); a truncated answer, never read, stays in it as wrong.
  ``--by duration`` gives its short / medium / long figures, ``--by domain`` and ``--by
  task_type`` its categories. ``accuracy`` beside it counts every question.
- ``mvbench_accuracy``: MVBench's ``Avg`` (OpenGVLab/Ask-Anything @ 4dd8210,
  ``video_chat2/mvbench.ipynb``): ``check_ans`` on ``(`` and the reply's first line against the
  gold ``(x) text`` (`lmmprobe.parse.mvbench`), right answers over every question. The
  ``mvbench`` matcher reads the one option ``check_ans`` accepts; a reply it accepts for
  several options (a bare ``(``) is unparsed there, and is checked here against the gold as
  the notebook checks it. ``--by task_type`` gives each task's.

Under another ``--matcher`` (or ``--method likelihood``) neither is given (`read_officially`).
Failed requests are not answers and are left out. Shares in [0, 1], each with its 95%
cluster-bootstrap interval over samples.
"""

from __future__ import annotations

from lmmprobe.metrics.bootstrap import ratio
from lmmprobe.metrics.builtin._official import (
    answer_text,
    bootstrap_value,
    is_answer,
    mean_of,
    read_officially,
    tagged_in,
)
from lmmprobe.metrics.reduction import row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue
from lmmprobe.parse.mvbench import mvbench_check, mvbench_prediction
from lmmprobe.schema import RunSpec, Score

FAMILY = "benchmark_choice"
VIDEOMME = "videomme_accuracy"
MVBENCH = "mvbench_accuracy"

GOLD_OPTION = "answer_option"
"""The metadata key holding an MVBench row's gold as its ``qa_template`` writes it."""


@row_extract(VIDEOMME, tagged_in(VIDEOMME))
def _videomme_row(s: Score, spec: RunSpec) -> tuple[str, float, float] | None:
    """(sample, 1.0 answered or 0.0, 1.0 right or 0.0) of an answered row."""
    if not is_answer(s, VIDEOMME):
        return None
    if s.stage == "unparsed":  # no letter read: not in the script's ``answered``
        return s.sample_id, 0.0, 0.0
    return s.sample_id, 1.0, float(bool(s.correct))


@run_metric(
    VIDEOMME,
    summary="Video-MME's accuracy (its eval_your_results.py): right answers over the answers "
    "its extract_characters_regex reads a letter from (--by duration: short/medium/long).",
    label="Video-MME",
    family=FAMILY,
    order=64,
)
def videomme_accuracy(ctx: MetricContext) -> MetricValue | None:
    """Right over answered (the script's ``correct / answered``; 0 where none is answered)."""
    if VIDEOMME not in ctx.summary.tags or not read_officially(
        ctx, "videomme", "Video-MME's accuracy", "Video-MME's extract_characters_regex"
    ):
        return None
    records = ctx.records(VIDEOMME)
    answered = sum(a for _, a, _ in records)
    right = sum(r for _, _, r in records)
    # The script prints 0 where no answer was read (``if total_answered > 0 else 0``).
    value = right / answered if answered else 0.0
    return bootstrap_value(
        ctx,
        value if records else None,
        len(records),
        [sample for sample, _, _ in records],
        [[r, a] for _, a, r in records],
        lambda sums: ratio(sums[:, 0], sums[:, 1]),
    )


@row_extract(MVBENCH, tagged_in(MVBENCH))
def _mvbench_row(s: Score, spec: RunSpec) -> tuple[str, float] | None:
    """(sample, 1.0 right or 0.0) of an answered row."""
    if not is_answer(s, MVBENCH):
        return None
    if s.stage == "unparsed":
        # The raw reply (what an unparsed row keeps): check_ans against the gold, as there.
        gold_option = str(s.metadata.get(GOLD_OPTION))
        return s.sample_id, float(mvbench_check(mvbench_prediction(answer_text(s)), gold_option))
    return s.sample_id, float(bool(s.correct))


@run_metric(
    MVBENCH,
    summary="MVBench's accuracy (its mvbench.ipynb Avg): check_ans on '(' and the reply's "
    "first line against the gold '(x) text', over every question (--by task_type: each task).",
    label="MVBench",
    family=FAMILY,
    order=65,
)
def mvbench_accuracy(ctx: MetricContext) -> MetricValue | None:
    """Right answers over all answered rows (MVBench's ``correct / total``)."""
    if MVBENCH not in ctx.summary.tags or not read_officially(
        ctx, "mvbench", "MVBench's accuracy", "MVBench's check_ans"
    ):
        return None
    return mean_of(ctx, ctx.records(MVBENCH))
