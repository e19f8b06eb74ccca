"""Official scores of the benchmarks a judge grades: MM-Vet, LLaVA-Bench, MathVerse, CharXiv.

Each metric computes over the rows whose benchmark names it as its official metric
(`lmmprobe.metrics.builtin._official`) and reads the verdicts its judge protocol stored on them
(`Score.judgements`): MM-Vet's 0-1 grades (``mmvet-grade``, graded `repeats` times) and
LLaVA-Bench's pairs of 1-10 scores (``llava-wild-review``), MathVerse's judgements of its
judge's extractions (``mathverse-judge``) and CharXiv's reasoning and descriptive scores
(``charxiv-reasoning-grade``, ``charxiv-descriptive-grade``). Without a judge these benchmarks
have no score (None). An unjudged answer counts as the reference scripts count a grade or
review they could not read: MM-Vet's 0.0, LLaVA-Bench's [-1, -1] pair; ``METRIC_judged_only``
leaves it out and ``judge_coverage`` counts it apart. Failed requests are not answers and are
left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from lmmprobe.metrics.benchmark_judged import llava_relative, mmvet_capability_scores
from lmmprobe.metrics.bootstrap import FloatArray, ratio
from lmmprobe.metrics.builtin._official import (
    bootstrap_value,
    is_answer,
    judge_of,
    judged_only_metric,
    mean_of,
    tagged_in,
    unjudged_attempts,
    verdicts,
)
from lmmprobe.metrics.reduction import row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import RunSpec, Score

FAMILY = "benchmark_open"
MMVET = "mmvet_score"
LLAVA_WILD = "llava_wild_relative"
MMVET_JUDGE = "mmvet-grade"
LLAVA_JUDGE = "llava-wild-review"


def _grades(s: Score, judge: str | None) -> dict[int, float]:
    """A row's MM-Vet grade per run (attempt); empty where none was graded."""
    judged = verdicts(s, MMVET_JUDGE, judge) or []
    return {j.attempt: float(j.value) for j in judged if j.value is not None}


@row_extract(MMVET, tagged_in(MMVET))
def _mmvet_row(
    s: Score, spec: RunSpec
) -> tuple[str, int, Any, dict[int, float], tuple[int, ...]] | None:
    """(sample id, repeat, capabilities, grade per attempt, unjudged attempts) of a row.

    An unjudged attempt is graded 0.0, as ``mm-vet_evaluator.py`` grades a question whose
    grade it could not read after its five tries.
    """
    if not is_answer(s, MMVET):
        return None
    judge = judge_of(spec)
    unjudged = tuple(unjudged_attempts(s, MMVET_JUDGE, judge))
    grades = _grades(s, judge) | dict.fromkeys(unjudged, 0.0)
    return s.sample_id, s.repeat, s.metadata.get("capability"), grades, unjudged


def _mmvet(
    ctx: MetricContext, capability: str | None, judged_only: bool = False
) -> MetricValue | None:
    """MM-Vet's score over the questions needing `capability` (None: every question).

    `judged_only`: unjudged grades left out of their run's sum and count (None where none is).
    """
    if MMVET not in ctx.summary.tags:
        return None
    records = ctx.records(MMVET)
    if judged_only and not any(unjudged for *_, unjudged in records):
        return None
    by_run: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    for sample_id, repeat, caps, grades, unjudged in records:
        if capability is not None and not (isinstance(caps, list) and capability in caps):
            continue
        for attempt, grade in grades.items():
            if judged_only and attempt in unjudged:
                continue
            by_run[(repeat, attempt)][sample_id] = grade
    runs = sorted(by_run)
    per_question: dict[str, list[float | None]] = defaultdict(lambda: [None] * len(runs))
    for r, run in enumerate(runs):
        for sample_id, grade in by_run[run].items():
            per_question[sample_id][r] = grade
    if not per_question:
        return MetricValue(None, None, None, 0)
    value = mmvet_capability_scores([((), g) for g in per_question.values()], len(runs)).get(
        "total"
    )
    # Per question: (grade, graded) in each run; a resample's score is MM-Vet's on its draw.
    columns = [
        [x for g in grades for x in ((g or 0.0), float(g is not None))]
        for grades in per_question.values()
    ]

    def statistic(sums: FloatArray) -> FloatArray:
        per_run = [ratio(sums[:, 2 * r], sums[:, 2 * r + 1]) for r in range(len(runs))]
        return np.asarray(np.mean(per_run, axis=0) * 100, dtype=np.float64)

    return bootstrap_value(
        ctx,
        value,
        sum(1 for g in per_question.values() for x in g if x is not None),
        list(per_question),
        columns,
        statistic,
    )


@run_metric(
    MMVET,
    summary="MM-Vet score: the judge's 0-1 grades (mmvet-grade) averaged per run and over runs, "
    "in points (mm-vet_evaluator.py); an unjudged grade is 0.0, as the reference's last resort.",
    label="MM-Vet",
    family=FAMILY,
    order=60,
    digits=1,
)
def mmvet_score(ctx: MetricContext) -> MetricValue | None:
    """Total score in [0, 100]; ``mmvet_rec``, ``mmvet_ocr``... give each capability's.

    As ``export_result`` computes it: per run (a judge repeat; with ``--repeats`` each model
    repeat is one more run), the sum of the grades over the graded answers x 100 / their count,
    then the mean over runs. ``--by capability`` groups rows by their capability combination
    (the reference's capability-integration table). The interval resamples questions.
    """
    return _mmvet(ctx, None)


judged_only_metric(
    MMVET,
    "MM-Vet",
    lambda ctx: _mmvet(ctx, None, judged_only=True),
    family=FAMILY,
    order=61,
    digits=1,
)


def _capability_metric(capability: str, title: str, order: int) -> None:
    def compute(ctx: MetricContext) -> MetricValue | None:
        return _mmvet(ctx, capability)

    compute.__doc__ = f"MM-Vet's {title} score: over the questions needing {capability}."
    run_metric(
        f"mmvet_{capability}",
        summary=f"MM-Vet {title} ({capability}) score: mmvet_score over the questions needing "
        "it, as export_result's per-capability columns.",
        label=f"MM-Vet {capability}",
        family=FAMILY,
        order=order,
        digits=1,
        headline=False,
    )(compute)


# MM-Vet's six capabilities (its paper and mm-vet.json's "capability" lists).
for _i, (_cap, _title) in enumerate(
    [("rec", "recognition"), ("ocr", "OCR"), ("know", "knowledge"),
     ("gen", "language generation"), ("spat", "spatial awareness"), ("math", "math")]
):  # fmt: skip
    _capability_metric(_cap, _title, 62 + _i)


@row_extract(LLAVA_WILD, tagged_in(LLAVA_WILD))
def _llava_row(s: Score, spec: RunSpec) -> tuple[str, list[tuple[float, float]], int] | None:
    """(sample id, (reference score, model score) of each verdict, unjudged reviews) of a row."""
    if not is_answer(s, LLAVA_WILD):
        return None
    judge = judge_of(spec)
    pairs = [
        (float(j.detail["reference"]), float(j.value))
        for j in verdicts(s, LLAVA_JUDGE, judge) or []
        if j.value is not None and "reference" in j.detail
    ]
    return s.sample_id, pairs, len(unjudged_attempts(s, LLAVA_JUDGE, judge))


# What ``eval_gpt_review_bench.py``'s ``parse_score`` stores for a review it cannot read, and
# ``summarize_gpt_review.py`` then averages in: the unjudged review's (reference, model) pair.
_LLAVA_UNREAD = (-1.0, -1.0)


@run_metric(
    LLAVA_WILD,
    summary="LLaVA-Bench (In-the-Wild) relative score: the judge's mean score of the model's "
    "answers over its mean score of the reference answers x 100 (llava-wild-review, "
    "summarize_gpt_review.py); an unjudged review enters as the reference's [-1, -1].",
    label="LLaVA-W",
    family=FAMILY,
    order=70,
    digits=1,
)
def llava_wild_relative(ctx: MetricContext) -> MetricValue | None:
    """Relative score in points; a breakdown by ``category`` gives each category's.

    As ``summarize_gpt_review.py`` prints it: both means rounded to 3 decimals, then
    round(model / reference x 100, 1). The interval resamples questions (repeats together).
    """
    return _llava(ctx)


def _llava(ctx: MetricContext, judged_only: bool = False) -> MetricValue | None:
    """`llava_wild_relative`; `judged_only`: unjudged reviews left out (None where none is)."""
    if LLAVA_WILD not in ctx.summary.tags:
        return None
    records = ctx.records(LLAVA_WILD)
    if judged_only and not any(unread for *_, unread in records):
        return None
    pairs: list[tuple[float, float]] = []
    clusters: list[str] = []
    for sample_id, scored, unread in records:
        for pair in scored if judged_only else [*scored, *[_LLAVA_UNREAD] * unread]:
            pairs.append(pair)
            clusters.append(sample_id)
    result = llava_relative(pairs)
    return bootstrap_value(
        ctx,
        None if result is None else result[0],
        len(pairs),
        clusters,
        [[model, ref] for ref, model in pairs],
        lambda sums: ratio(sums[:, 0], sums[:, 1]) * 100,
    )


judged_only_metric(
    LLAVA_WILD,
    "LLaVA-W",
    lambda ctx: _llava(ctx, judged_only=True),
    family=FAMILY,
    order=71,
    digits=1,
)


# --------------------------------------------------------------------------- MathVerse, CharXiv

MATHVERSE = "mathverse_accuracy"
MATHVERSE_JUDGE = "mathverse-judge"
CHARXIV = "charxiv_reasoning_accuracy"
CHARXIV_JUDGE = "charxiv-reasoning-grade"


def _judged_share(tag: str, protocol: str) -> Callable[[MetricContext, bool], MetricValue | None]:
    """An official metric that is the share of answers `protocol`'s judge scored 1.

    No judge read any answer: no score (the benchmark has none without its judge). An unjudged
    answer, or one the judging step did not reach (cut off before its answer), is wrong: every
    question stays in the denominator. With `judged_only`, those are left out (None where there
    is none).
    """

    def extract(s: Score, spec: RunSpec) -> tuple[str, float | None, bool] | None:
        if not is_answer(s, tag):
            return None
        judged = verdicts(s, protocol, judge_of(spec))
        if judged is None:
            return s.sample_id, None, False
        if not judged:
            return s.sample_id, 0.0, True
        return s.sample_id, float(judged[0].value == 1.0), False

    row_extract(tag, tagged_in(tag))(extract)

    def compute(ctx: MetricContext, judged_only: bool = False) -> MetricValue | None:
        if tag not in ctx.summary.tags:
            return None
        records = ctx.records(tag)
        if not any(v is not None for _, v, _ in records):
            return MetricValue(None, None, None, 0)
        if judged_only and not any(unjudged or v is None for _, v, unjudged in records):
            return None
        kept = [
            (i, v or 0.0)
            for i, v, unjudged in records
            if not (judged_only and (unjudged or v is None))
        ]
        return mean_of(ctx, kept)

    return compute


_mathverse = _judged_share(MATHVERSE, MATHVERSE_JUDGE)


@run_metric(
    MATHVERSE,
    summary="MathVerse accuracy ('w/o' score): the share of answers mathverse-judge scored 1 "
    "(the judge extracts the answer, then says whether it matches the standard answer: "
    "extract_answer_s1.py, score_answer_s2.py); an unjudged answer is wrong. No judge, no score.",
    label="MathVerse",
    family=FAMILY,
    order=75,
)
def mathverse_accuracy(ctx: MetricContext) -> MetricValue | None:
    """``score_answer_s2.py``'s ``Acc``: the judgements of 1 over the questions.

    ``--by problem_version``, ``--by subject`` and ``--by subject,subfield`` give its other
    figures.
    """
    return _mathverse(ctx, False)


judged_only_metric(
    MATHVERSE, "MathVerse", lambda ctx: _mathverse(ctx, True), family=FAMILY, order=76
)

_charxiv = _judged_share(CHARXIV, CHARXIV_JUDGE)


@run_metric(
    CHARXIV,
    summary="CharXiv reasoning accuracy: the share of answers charxiv-reasoning-grade scored 1 "
    "(get_stats.py's Overall Score, a score not 0 or 1 counted 0); an unjudged answer is "
    "wrong, as the reference's -1. No judge, no score.",
    label="CharXiv-R",
    family=FAMILY,
    order=77,
)
def charxiv_reasoning_accuracy(ctx: MetricContext) -> MetricValue | None:
    """``get_stats.py``'s reasoning ``Overall Score`` as a share.

    ``--by answer_type``, ``source``, ``subject``, ``year``, ``subplots`` give its other figures.
    """
    return _charxiv(ctx, False)


judged_only_metric(CHARXIV, "CharXiv-R", lambda ctx: _charxiv(ctx, True), family=FAMILY, order=78)

CHARXIV_D = "charxiv_descriptive_accuracy"
CHARXIV_D_JUDGE = "charxiv-descriptive-grade"
_charxiv_d = _judged_share(CHARXIV_D, CHARXIV_D_JUDGE)


@run_metric(
    CHARXIV_D,
    summary="CharXiv descriptive accuracy: the share of answers charxiv-descriptive-grade "
    "scored 1, five answers of one template graded a prompt (get_stats.py's Overall Score); "
    "an unjudged answer (its group's reply refused) is wrong, as the reference's -1. No "
    "judge, no score.",
    label="CharXiv-D",
    family=FAMILY,
    order=79,
)
def charxiv_descriptive_accuracy(ctx: MetricContext) -> MetricValue | None:
    """``get_stats.py``'s descriptive ``Overall Score`` as a share.

    ``--by template``, ``question_type``, ``subject``, ``year``, ``subplots`` give its other
    figures (By Question, By Category, By Subject, By Year, By Subplot).
    """
    return _charxiv_d(ctx, False)


judged_only_metric(
    CHARXIV_D, "CharXiv-D", lambda ctx: _charxiv_d(ctx, True), family=FAMILY, order=80
)
