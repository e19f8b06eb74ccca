"""Official scores of the open-ended, OCR and caption benchmarks as run metrics.

Each metric computes over the rows whose ``metadata["metric"]`` names it (the loader of
`lmmprobe.data.benchmarks` sets it from the definition) and is left out otherwise. The model's
raw answer (``Score.prediction_text``) is scored again against every reference
(``Score.gold``) with the rules of the evaluation the benchmark's prompt comes from
(`lmmprobe.metrics.benchmark_open`), after stripping it as lmms-eval strips every generation;
failed requests are not answers and are left out, while an empty answer scores 0. Accuracies are
shares in [0, 1] with 95% cluster-bootstrap intervals over samples; OCRBench is in points (out of
1,000 for the whole benchmark), as OCRBench reports it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from lmmprobe.metrics.benchmark_open import (
    gqa_exact_match,
    ocrbench_correct,
    relaxed_correct,
    vqa_accuracy_evalai,
    vqa_accuracy_lmms_eval,
)
from lmmprobe.metrics.bootstrap import finite_or_none, ratio_intervals
from lmmprobe.metrics.choice import MetricValue
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.text import MetricUnavailable, anls, caption_scores
from lmmprobe.schema import Score

log = logging.getLogger(__name__)

VQA = "vqa_accuracy"
VQA_EVALAI = "vqa_accuracy_evalai"
ANLS = "anls"
RELAXED = "relaxed_accuracy"
GQA = "gqa_exact_match"
OCRBENCH = "ocrbench_score"
COCO = "coco_cider"


def _rows(ctx: MetricContext, tag: str) -> list[Score]:
    """The answered rows of the benchmarks scored by ``tag`` (failed requests left out)."""
    return [s for s in ctx.tagged(tag) if s.error_type is None and s.stage != "error"]


def _refs(score: Score) -> list[str]:
    gold = score.gold
    if not isinstance(gold, list) or not gold:
        raise ValueError(
            f"sample {score.sample_id!r}: {score.metadata.get('benchmark')} scores open-ended "
            f"answers against reference texts, but its gold answer is {gold!r}"
        )
    return gold


def _mean(ctx: MetricContext, rows: list[Score], values: list[float]) -> MetricValue:
    """Mean of per-row values, with a cluster bootstrap over samples (repeats stay together)."""
    if not rows:
        return MetricValue(None, None, None, 0)
    clusters: dict[str, list[float]] = {}
    for s, v in zip(rows, values, strict=True):
        clusters.setdefault(s.sample_id, []).append(v)
    num = np.array([[sum(v)] for v in clusters.values()])
    den = np.array([[len(v)] for v in clusters.values()], dtype=float)
    low, high = ratio_intervals(num, den, ctx.n_boot, np.random.default_rng(ctx.seed))
    return MetricValue(
        sum(values) / len(values), finite_or_none(low[0]), finite_or_none(high[0]), len(rows)
    )


def _per_row(
    tag: str, score: Callable[[Score], float]
) -> Callable[[MetricContext], MetricValue | None]:
    def compute(ctx: MetricContext) -> MetricValue | None:
        if not ctx.tagged(tag):
            return None
        rows = _rows(ctx, tag)
        return _mean(ctx, rows, [score(s) for s in rows])

    return compute


def _text(score: Score) -> str:
    # lmms-eval's ConfigurableTask.process_results strips every generation before the task's
    # scoring; ChartQA's relaxed accuracy is the one rule here that a stray space or line
    # break changes (" Yes" is not "yes"); the others strip or tokenize anyway.
    return (score.prediction_text or "").strip()


run_metric(
    VQA,
    summary="VQA accuracy over the 10 annotators, every answer normalized (lmms-eval's vqav2).",
    label="VQA acc",
    order=320,
)(_per_row(VQA, lambda s: vqa_accuracy_lmms_eval(_text(s), _refs(s))))

run_metric(
    VQA_EVALAI,
    summary="VQA accuracy with EvalAI's answer processor (lmms-eval): TextVQA, VizWiz, OK-VQA.",
    label="VQA acc (EvalAI)",
    order=321,
)(_per_row(VQA_EVALAI, lambda s: vqa_accuracy_evalai(_text(s), _refs(s))))

run_metric(
    ANLS,
    summary="Average normalized Levenshtein similarity, threshold 0.5 (DocVQA's RRC script).",
    label="ANLS",
    order=322,
)(_per_row(ANLS, lambda s: anls(_text(s), _refs(s))))

run_metric(
    RELAXED,
    summary="ChartQA relaxed accuracy: numbers within 5% of the gold, other answers exact.",
    label="relaxed acc",
    order=323,
)(_per_row(RELAXED, lambda s: float(relaxed_correct(_text(s), _refs(s)[0]))))

run_metric(
    GQA,
    summary="GQA exact match ignoring case and punctuation (lmms-eval's gqa task).",
    label="GQA EM",
    order=324,
)(_per_row(GQA, lambda s: float(gqa_exact_match(_text(s), _refs(s)[0]))))


@run_metric(
    OCRBENCH,
    summary="OCRBench points: answers containing a reference (its example.py), out of 1,000.",
    label="OCRBench",
    order=325,
)
def ocrbench_score(ctx: MetricContext) -> MetricValue | None:
    """OCRBench's final score (points); ``--by question_type`` gives its category totals."""
    if not ctx.tagged(OCRBENCH):
        return None
    rows = _rows(ctx, OCRBENCH)
    points = sum(
        ocrbench_correct(_text(s), _refs(s), str(s.metadata.get("dataset", ""))) for s in rows
    )
    return MetricValue(float(points), None, None, len(rows))


# --------------------------------------------------------------------------- captions

# name, column label, position, headline, summary.
COCO_COLUMNS: tuple[tuple[str, str, int, bool, str], ...] = (
    (COCO, "CIDEr (COCO)", 330, True, "CIDEr-D as COCO's caption evaluation (PTB tokenizer)."),
    ("coco_bleu4", "BLEU-4 (COCO)", 331, False, "BLEU-4 as COCO's caption evaluation."),
    ("coco_rouge_l", "ROUGE-L (COCO)", 332, False, "ROUGE-L as COCO's caption evaluation."),
)
_COCO_KEYS = {COCO: "CIDEr", "coco_bleu4": "BLEU-4", "coco_rouge_l": "ROUGE-L"}


def _coco(ctx: MetricContext) -> dict[str, MetricValue]:
    rows = _rows(ctx, COCO)
    if not rows:
        return {}
    preds = {f"{s.sample_id}#{s.repeat}": _text(s) for s in rows}
    refs = {f"{s.sample_id}#{s.repeat}": _refs(s) for s in rows}
    try:
        # COCOEvalCap (and lmms-eval's coco_cap, nocaps, flickr30k tasks) tokenize both sides
        # with the PTB tokenizer; METEOR is left out as in the other caption metrics (a Java
        # process per call).
        values = caption_scores(preds, refs, meteor=False, tokenizer="ptb")
    except MetricUnavailable as exc:
        log.warning("COCO caption metrics skipped: %s", exc)
        return {}
    return {
        name: MetricValue(values[key], None, None, len(rows)) for name, key in _COCO_KEYS.items()
    }


def _coco_metric(name: str) -> Callable[[MetricContext], MetricValue | None]:
    def compute(ctx: MetricContext) -> MetricValue | None:
        if not ctx.tagged(COCO):
            return None
        return ctx.shared("coco_captions", lambda: _coco(ctx)).get(name)

    compute.__doc__ = f"{name} over the rows of COCO Caption, NoCaps and Flickr30k."
    return compute


for _name, _label, _order, _headline, _summary in COCO_COLUMNS:
    # The whole run only: CIDEr's IDF depends on the corpus scored together.
    run_metric(
        _name, summary=_summary, label=_label, order=_order, headline=_headline, per_group=False
    )(_coco_metric(_name))
