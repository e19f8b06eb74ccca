"""Official scores of the open-ended, OCR and caption benchmarks as run metrics.

Each metric computes over the rows whose benchmark names it as its official metric and is
left out otherwise (`lmmprobe.metrics.builtin._official`, which also says how the answer is
read). The model's answer is scored again against every reference (``Score.gold``) with the
rules of the evaluation the benchmark's prompt comes from (`lmmprobe.metrics.benchmark_open`);
failed requests are not answers and are left out, while an empty answer scores 0. Accuracies are
shares in [0, 1] with 95% cluster-bootstrap intervals over samples; OCRBench is in points (out of
1,000 for the whole benchmark), as OCRBench reports it, with the interval of that sum.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from lmmprobe.metrics.benchmark_open import (
    gqa_exact_match,
    ocrbench_correct,
    relaxed_correct,
    vqa_accuracy_evalai,
    vqa_accuracy_lmms_eval,
)
from lmmprobe.metrics.builtin._official import (
    answer_text,
    bootstrap_value,
    is_answer,
    per_row,
    references,
    tagged_in,
)
from lmmprobe.metrics.reduction import row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.text import MetricUnavailable, anls, caption_scores
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import RunSpec, Score

log = logging.getLogger(__name__)

FAMILY = "benchmark_open"
VQA = "vqa_accuracy"
VQA_EVALAI = "vqa_accuracy_evalai"
ANLS = "anls"
RELAXED = "relaxed_accuracy"
GQA = "gqa_exact_match"
OCRBENCH = "ocrbench_score"
COCO = "coco_cider"


run_metric(
    VQA,
    summary="VQA accuracy over the 10 annotators, every answer normalized (lmms-eval's vqav2).",
    label="VQA acc",
    family=FAMILY,
    order=0,
)(per_row(VQA, lambda s: vqa_accuracy_lmms_eval(answer_text(s), references(s))))

run_metric(
    VQA_EVALAI,
    summary="VQA accuracy with EvalAI's answer processor (lmms-eval): TextVQA, VizWiz, OK-VQA.",
    label="VQA acc (EvalAI)",
    family=FAMILY,
    order=1,
)(per_row(VQA_EVALAI, lambda s: vqa_accuracy_evalai(answer_text(s), references(s))))

run_metric(
    ANLS,
    summary="Average normalized Levenshtein similarity, threshold 0.5 (DocVQA's RRC script).",
    label="ANLS",
    family=FAMILY,
    order=2,
)(per_row(ANLS, lambda s: anls(answer_text(s), references(s))))

run_metric(
    RELAXED,
    summary="ChartQA relaxed accuracy: numbers within 5% of the gold, other answers exact.",
    label="relaxed acc",
    family=FAMILY,
    order=3,
)(per_row(RELAXED, lambda s: float(relaxed_correct(answer_text(s), references(s)[0]))))

run_metric(
    GQA,
    summary="GQA exact match ignoring case and punctuation (lmms-eval's gqa task).",
    label="GQA EM",
    family=FAMILY,
    order=4,
)(per_row(GQA, lambda s: float(gqa_exact_match(answer_text(s), references(s)[0]))))


@run_metric(
    OCRBENCH,
    summary="OCRBench points: answers containing a reference (its example.py), out of 1,000.",
    label="OCRBench",
    family=FAMILY,
    order=5,
)
def ocrbench_score(ctx: MetricContext) -> MetricValue | None:
    """OCRBench's final score (points); ``--by question_type`` gives its category totals."""
    if OCRBENCH not in ctx.summary.tags:
        return None
    rows = ctx.records(OCRBENCH)
    points = [p for _, p in rows]
    # Points are a sum: the interval resamples samples and adds their points up.
    return bootstrap_value(
        ctx,
        float(sum(points)),
        len(rows),
        [sample_id for sample_id, _ in rows],
        points,
        lambda sums: sums[:, 0],
    )


@row_extract(OCRBENCH, tagged_in(OCRBENCH))
def _ocrbench_row(s: Score, spec: RunSpec) -> tuple[str, float] | None:
    """(sample id, points) of an answered OCRBench row."""
    if not is_answer(s, OCRBENCH):
        return None
    dataset = str(s.metadata.get("dataset", ""))
    return s.sample_id, float(ocrbench_correct(answer_text(s), references(s), dataset))


# --------------------------------------------------------------------------- captions

# name, column label, position in the family, headline, summary.
COCO_COLUMNS: tuple[tuple[str, str, int, bool, str], ...] = (
    (COCO, "CIDEr (COCO)", 10, True, "CIDEr-D as COCO's caption evaluation (PTB tokenizer)."),
    ("coco_bleu4", "BLEU-4 (COCO)", 11, False, "BLEU-4 as COCO's caption evaluation."),
    ("coco_rouge_l", "ROUGE-L (COCO)", 12, False, "ROUGE-L as COCO's caption evaluation."),
)
_COCO_KEYS = {COCO: "CIDEr", "coco_bleu4": "BLEU-4", "coco_rouge_l": "ROUGE-L"}


@row_extract(COCO, tagged_in(COCO))
def _coco_row(s: Score, spec: RunSpec) -> tuple[str, str, list[str]] | None:
    """(row key, answer, references) of an answered caption row: its texts, not its Score."""
    if not is_answer(s, COCO):
        return None
    return f"{s.sample_id}#{s.repeat}", answer_text(s), references(s)


def _coco(ctx: MetricContext) -> dict[str, MetricValue]:
    # The scorer takes the corpus at once: every text, read in the model's one pass.
    rows = ctx.records(COCO) if COCO in ctx.summary.tags else []
    if not rows:
        return {}
    preds = {key: pred for key, pred, _ in rows}
    refs = {key: refs for key, _, refs in rows}
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
        if COCO not in ctx.summary.tags:
            return None
        return ctx.shared("coco_captions", lambda: _coco(ctx)).get(name)

    compute.__doc__ = f"{name} over the rows of COCO Caption, NoCaps and Flickr30k."
    return compute


for _name, _label, _order, _headline, _summary in COCO_COLUMNS:
    # The whole run only: CIDEr's IDF depends on the corpus scored together.
    run_metric(
        _name,
        summary=_summary,
        label=_label,
        family=FAMILY,
        order=_order,
        headline=_headline,
        per_group=False,
    )(_coco_metric(_name))
