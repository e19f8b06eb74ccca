"""OCRBench v2's official figures as run metrics: its English and Chinese overall scores.

Each answered row of a benchmark whose official metric is ``ocrbench_v2`` is scored by its
task type as OCRBench v2's eval.py scores it (`lmmprobe.metrics.ocrbench_v2.score_item`); the
English figure (``ocrbench_v2``) and the Chinese one (``ocrbench_v2_cn``) are get_score.py's
overall scores: the mean over its capability groups of each group's mean score. A failed
request is not an answer and is left out; an empty answer scores as the rules score it (0).
A row whose rule needs a library that is missing makes its language's figure refuse (one
warning naming the library and the install command), never a figure over fewer types.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from lmmprobe.metrics.builtin._official import is_answer, tagged_in
from lmmprobe.metrics.builtin.benchmark_choice import _mean_of_means
from lmmprobe.metrics.ocrbench_v2 import OcrbenchV2Item, group_of, score_item
from lmmprobe.metrics.reduction import row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.text import MetricUnavailable
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import RunSpec, Score

log = logging.getLogger(__name__)

FAMILY = "benchmark_open"
OCRBENCH_V2 = "ocrbench_v2"
OCRBENCH_V2_CN = "ocrbench_v2_cn"


def item_of(s: Score) -> OcrbenchV2Item:
    """The question's fields eval.py reads, from the row's metadata (``ocrbench_v2`` JSON)."""
    raw: Any = s.metadata.get("ocrbench_v2")
    fields = json.loads(raw) if isinstance(raw, str) else {}
    return OcrbenchV2Item(
        type=str(s.metadata.get("type")),
        question=str(fields.get("question", "")),
        answers=fields.get("answers"),
        eval=fields.get("eval"),
        bbox=fields.get("bbox"),
        content=fields.get("content"),
    )


@row_extract(OCRBENCH_V2, tagged_in(OCRBENCH_V2))
def _ocrbench_v2_row(s: Score, spec: RunSpec) -> tuple[str, str, str, float | None, str] | None:
    """(sample, language, group, score or None, why none) of an answered, not ignored row."""
    if not is_answer(s, OCRBENCH_V2):
        return None
    item = item_of(s)
    lang, group = group_of(item.type)
    try:
        score, ignored = score_item(item, s.prediction_text or "")
    except MetricUnavailable as exc:
        return s.sample_id, lang, group, None, str(exc)
    except (ValueError, ZeroDivisionError, TypeError, KeyError, IndexError, AttributeError) as exc:
        # Where OCRBench v2's eval.py stops on an answer (no figure at all), the answer
        # scores 0 here and the line says so.
        log.warning(
            "OCRBench v2 sample %s (%s): its rule fails on this answer (%s: %s); scored 0",
            s.sample_id, item.type, type(exc).__name__, str(exc)[:200],
        )  # fmt: skip
        return s.sample_id, lang, group, 0.0, ""
    if ignored:
        return None
    return s.sample_id, lang, group, float(score), ""


def _overall(ctx: MetricContext, lang: str) -> MetricValue | None:
    if OCRBENCH_V2 not in ctx.summary.tags:
        return None
    rows = [r for r in ctx.records(OCRBENCH_V2) if r[1] == lang]
    if not rows:
        return None
    missing = next((why for *_, score, why in rows if score is None), None)
    if missing is not None:
        log.warning("OCRBench v2 %s overall score refused: %s", lang.upper(), missing)
        return None
    return _mean_of_means(
        ctx, [(sample, ("all", group), score) for sample, _, group, score, _ in rows]
    )


@run_metric(
    OCRBENCH_V2,
    summary="OCRBench v2 English overall (its get_score.py): the mean of its eight groups' "
    "mean scores, each answer scored by its task type's rule (eval.py).",
    label="OCRBench v2 EN",
    family=FAMILY,
    order=6,
)
def ocrbench_v2(ctx: MetricContext) -> MetricValue | None:
    """The English overall score; None without English rows."""
    return _overall(ctx, "en")


@run_metric(
    OCRBENCH_V2_CN,
    summary="OCRBench v2 Chinese overall (its get_score.py): the mean of its five groups' "
    "mean scores.",
    label="OCRBench v2 CN",
    family=FAMILY,
    order=7,
)
def ocrbench_v2_cn(ctx: MetricContext) -> MetricValue | None:
    """The Chinese overall score; None without Chinese rows."""
    return _overall(ctx, "cn")
