"""MME's reading of a yes/no answer, reproduced, and the ``mme`` matcher.

MME's eval tool (BradyFU/Awesome-Multimodal-Large-Language-Models, branch Evaluation,
``tools/eval_tool/calculation.py`` ``parse_pred_ans``) reads each answer as ``yes``, ``no`` or
``other`` (`mme_read`); its scores (`lmmprobe.metrics.benchmark_choice.mme_subtask_score`) and,
as the ``mme`` matcher, a run's answer rates (``accuracy``) share that reading: an MME question
is a choice between ``yes`` and ``no`` that is never shown. An answer read ``other`` is
``unparsed``: where a judge read it, the judge's verdict decides it in the headline (the judged
headline); MME's scores count it wrong, as the tool does.
"""

from __future__ import annotations

from collections.abc import Sequence

from lmmprobe.parse.matcher import MATCHERS, Extraction, yes_no_option
from lmmprobe.schema import FormulateConfig

__all__ = ["mme_matcher", "mme_read"]


def mme_read(answer: str) -> str:
    """MME's reading of a model answer: ``"yes"``, ``"no"`` or ``"other"``.

    The eval tool reads each answer from a results line whose last field ends in a newline
    (answers must be one line: the tool's readme asks to delete line breaks), lowercases it,
    and looks for "yes", then "no", in its first four characters.
    """
    # The tool's exact-equality test never holds for a line with its newline, so only the
    # four-character prefix (newline included) decides.
    head = (answer.replace("\n", "").lower() + "\n")[:4]
    if "yes" in head:
        return "yes"
    if "no" in head:
        return "no"
    return "other"


@MATCHERS.register(
    "mme",
    summary="MME's yes/no reading (eval_tool calculation.py): 'yes', then 'no', in the "
    "answer's first four characters, lower-cased; anything else unparsed (a judge's part)",
)
def mme_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`mme_read` as a matcher over the options ``yes`` and ``no``."""
    return yes_no_option(mme_read(output), options)
