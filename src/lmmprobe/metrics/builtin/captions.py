"""Corpus caption metrics (pycocoevalcap, as ReForm-Eval): BLEU-1..4, ROUGE-L, CIDEr.

Computed over the rows judged as a corpus (captions: no per-answer verdict, a list of
references, not a free-form description) of the whole run only: CIDEr's IDF depends on the
corpus, so a group's value would not be comparable. The scorer takes the corpus at once, so
the texts (not the rows' Scores) are held while it runs: pycocoevalcap's CIDEr needs the
references' document frequencies over the whole corpus before it scores any caption, and its
BLEU the whole corpus's lengths and clipped counts, and both are built from every text in one
call. Its own n-gram counts of every reference, not these texts, are most of the peak then
(about 27 KB an image with five references, `benchmarks/results_scale.py --shape captions`). METEOR is left out (it starts a Java
process per call); ``lmmprobe score --formulation generation`` computes it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from lmmprobe.metrics.freeform import FREE_FORM
from lmmprobe.metrics.reduction import RowSummary, row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.text import MetricUnavailable, caption_scores
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import RunSpec, Score

log = logging.getLogger(__name__)

FAMILY = "captions"
CAPTION_TEXTS = "caption_texts"

# name, position in the family, headline, summary.
CAPTION_COLUMNS: tuple[tuple[str, int, bool, str], ...] = (
    ("BLEU-1", 0, False, "Corpus BLEU with 1-grams (captions)."),
    ("BLEU-2", 1, False, "Corpus BLEU up to 2-grams (captions)."),
    ("BLEU-3", 2, False, "Corpus BLEU up to 3-grams (captions)."),
    ("BLEU-4", 3, True, "Corpus BLEU up to 4-grams (captions)."),
    ("ROUGE-L", 4, True, "Mean LCS F-measure against the best reference (captions)."),
    ("CIDEr", 5, True, "CIDEr-D consensus score, 0-10 (captions)."),
)


def _caption_rows(summary: RowSummary, spec: RunSpec) -> bool:
    return summary.captions


@row_extract(CAPTION_TEXTS, _caption_rows)
def _caption_texts(s: Score, spec: RunSpec) -> tuple[str, str, list[str]] | None:
    """(row key, answer, references) of a caption row: its texts, not its Score."""
    if not (
        s.correct is None and s.error_type is None and isinstance(s.gold, list)
        and s.metadata.get("question_type") != FREE_FORM
    ):  # fmt: skip
        return None
    return f"{s.sample_id}#{s.repeat}", s.prediction_text or "", list(s.gold)


def _captions(ctx: MetricContext) -> dict[str, MetricValue]:
    if not ctx.summary.captions:
        return {}
    # pycocoevalcap scores the corpus at once: it is given every text, read in the model's one
    # pass over its rows, and no row's Score is kept.
    rows = ctx.records(CAPTION_TEXTS)
    if not rows:
        return {}
    preds = {key: pred for key, pred, _ in rows}
    refs = {key: refs for key, _, refs in rows}
    try:
        # Raw strings, as ReForm-Eval feeds pycocoevalcap, so numbers compare with theirs.
        values = caption_scores(
            preds,
            refs,
            meteor=False,
        )
    except MetricUnavailable as exc:
        log.warning("caption metrics skipped: %s", exc)
        return {}
    return {k: MetricValue(v, None, None, len(rows)) for k, v in values.items()}


def _caption(name: str) -> Callable[[MetricContext], MetricValue | None]:
    def compute(ctx: MetricContext) -> MetricValue | None:
        return ctx.shared("captions", lambda: _captions(ctx)).get(name)

    compute.__doc__ = f"{name} over the run's caption rows."
    return compute


for _name, _order, _headline, _summary in CAPTION_COLUMNS:
    run_metric(
        _name, summary=_summary, headline=_headline, order=_order, per_group=False, family=FAMILY
    )(_caption(_name))
