"""Official scores of the multiple-choice and yes/no benchmarks as run metrics.

Each metric computes over the rows whose benchmark names it as its official metric and is
left out otherwise (`lmmprobe.metrics.builtin._official`, which also says how the answer is
read). The scores read each model answer again with the benchmark's own rules
(`lmmprobe.metrics.benchmark_choice`), or, where the benchmark's official judge protocol judged
it, with the protocol's verdict (`_official.verdicts`: MathVista's extraction, MMBench's
option letter, HallusionBench's correctness); a row left unjudged counts as its benchmark's
script counts an answer its judge could not read (`_official`), and ``METRIC_judged_only``
leaves it out. Failed requests are not answers and are left out.
Values are points for MME (as MME reports them) and shares in [0, 1] otherwise, each with a 95%
cluster-bootstrap interval: over samples, MME's over images (its acc+ unit) and
HallusionBench's over question sets (its figures and question pairs lie within one).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from lmmprobe.metrics.benchmark_choice import (
    MME_COGNITION,
    MME_PERCEPTION,
    HallusionRow,
    PopeCounts,
    hallusion_correctness,
    hallusion_scores,
    mathvista_correct,
    mathvista_judged_correct,
    mme_subtask_score,
    mmmu_multi_choice,
    mmmu_open_correct,
    mmmu_parse_open,
    mmmu_pro_multi_choice,
    pope_scores,
)
from lmmprobe.metrics.benchmark_judged import mmbench_letter_correct
from lmmprobe.metrics.bootstrap import FloatArray, ratio
from lmmprobe.metrics.builtin._official import (
    answer_text,
    bootstrap_value,
    gold,
    is_answer,
    judge_of,
    judged_only_metric,
    mean_of,
    per_row,
    read_officially,
    tagged_in,
    verdicts,
)
from lmmprobe.metrics.cmmmu import (
    FILL_BLANK,
    MULTI_CHOICE,
    cmmmu_fill_blank,
    cmmmu_fill_correct,
    cmmmu_multi_choice,
    cmmmu_true_false,
)
from lmmprobe.metrics.mantis import mantis_correct
from lmmprobe.metrics.mathvision import mathvision_correct
from lmmprobe.metrics.mmiu import mmiu_correct, mmiu_rule
from lmmprobe.metrics.reduction import row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.stability import circular_of
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import RunSpec, Score

FAMILY = "benchmark_choice"
MME = "mme_perception"
POPE = "pope_f1"
HALLUSION = "hallusionbench_qacc"
MMBENCH = "mmbench_circular"
MMMU = "mmmu_accuracy"
MMMU_PRO = "mmmu_pro_accuracy"
CMMMU = "cmmmu_accuracy"
MATHVISION = "mathvision_accuracy"
MATHVISTA = "mathvista_accuracy"
VLMEVALKIT = "vlmevalkit_accuracy"
MMVP = "mmvp_pair_accuracy"
BLINK = "blink_accuracy"
CVBENCH = "cvbench_accuracy"
HRBENCH = "hrbench_accuracy"
MMT_META = "mmt_meta_task_accuracy"
MANTIS = "mantis_accuracy"
MMIU = "mmiu_accuracy"

# The official judge protocols whose verdicts these metrics read (lmmprobe.judge.protocols).
HALLUSION_JUDGE = "hallusionbench-correct"
MMBENCH_JUDGE = "mmbench-choice"
MATHVISTA_JUDGE = "mathvista-extract"
BLINK_JUDGE = "blink-choice"
MMIU_JUDGE = "mmiu-choice"


def _value(value: float | None, n: int) -> MetricValue:
    return MetricValue(value, None, None, n)


# --------------------------------------------------------------------------- MME


@row_extract(MME, tagged_in(MME))
def _mme_row(s: Score, spec: RunSpec) -> tuple[str, tuple[str, int], str, str] | None:
    """(subtask, (image, repeat), gold, answer) of an answered MME row."""
    if not is_answer(s, MME):
        return None
    image = (str(s.metadata.get("question_id")), s.repeat)
    return str(s.metadata.get("category")), image, gold(s), answer_text(s)


def _mme(ctx: MetricContext, subtasks: Sequence[str], figure: str) -> MetricValue | None:
    if MME not in ctx.summary.tags:
        return None
    # acc+ is per image and asking: with --repeats each repeat's pair is its own, so the score
    # is the average over repeats of MME's score (a pair never spans two repeats).
    by_task: dict[str, dict[tuple[str, int], list[tuple[str, str]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for task, image, gold_text, answer in ctx.records(MME):
        by_task[task][image].append((gold_text, answer))
    present = [t for t in subtasks if t in by_task]
    if not present or not read_officially(ctx, "mme", f"MME's {figure} score", "MME's rule"):
        return None
    total = sum(mme_subtask_score(list(by_task[t].values()))[0] for t in present)
    n = sum(sum(len(p) for p in by_task[t].values()) for t in present)
    return _mme_interval(ctx, total, n, {t: by_task[t] for t in present})


def _mme_interval(
    ctx: MetricContext,
    total: float,
    n: int,
    by_task: dict[str, dict[tuple[str, int], list[tuple[str, str]]]],
) -> MetricValue:
    """MME's score with its interval: images are resampled, each with its questions and repeats.

    Per image and subtask the columns are (right answers, questions, pairs all right, pairs), so
    a resample's score is MME's sum over subtasks of (acc + acc+) x 100 on the drawn images.
    """
    tasks = list(by_task)
    clusters: list[tuple[str, str]] = []
    columns: list[list[float]] = []
    for i, task in enumerate(tasks):
        for (image, _repeat), pair in by_task[task].items():
            _, acc, acc_plus = mme_subtask_score([pair])
            row = [0.0] * (4 * len(tasks))
            row[4 * i : 4 * i + 4] = [
                float(round(acc * len(pair))),
                float(len(pair)),
                acc_plus,
                1.0,
            ]
            clusters.append((task, image))
            columns.append(row)

    def statistic(sums: FloatArray) -> FloatArray:
        score = np.zeros(sums.shape[0])
        for i in range(len(tasks)):
            right, asked, both, pairs = (sums[:, 4 * i + j] for j in range(4))
            score = score + 100 * (ratio(right, asked) + ratio(both, pairs))
        return score

    return bootstrap_value(ctx, total, n, clusters, columns, statistic)


@run_metric(
    MME,
    summary="MME perception score: sum over its subtasks of (acc + acc+) x 100 (MME's eval "
    "tool); with --repeats, acc+ pairs each image's questions within a repeat.",
    label="MME perc.",
    family=FAMILY,
    order=0,
)
def mme_perception(ctx: MetricContext) -> MetricValue | None:
    """Perception subtasks present in the rows; a breakdown by category gives each subtask's."""
    return _mme(ctx, MME_PERCEPTION, "perception")


@run_metric(
    "mme_cognition",
    summary="MME cognition score: sum over its subtasks of (acc + acc+) x 100 (MME's eval "
    "tool); with --repeats, acc+ pairs each image's questions within a repeat.",
    label="MME cogn.",
    family=FAMILY,
    order=1,
)
def mme_cognition(ctx: MetricContext) -> MetricValue | None:
    """Cognition subtasks present in the rows."""
    return _mme(ctx, MME_COGNITION, "cognition")


# --------------------------------------------------------------------------- POPE


@row_extract(POPE, tagged_in(POPE))
def _pope_row(s: Score, spec: RunSpec) -> tuple[str, PopeCounts] | None:
    """(sample id, the row's own counts) of an answered POPE row."""
    if not is_answer(s, POPE):
        return None
    return s.sample_id, pope_scores([(gold(s).lower(), answer_text(s))])


def _pope(ctx: MetricContext, pick: Callable[[PopeCounts], float], what: str) -> MetricValue | None:
    if POPE not in ctx.summary.tags or not read_officially(
        ctx, "pope", f"POPE's {what}", "POPE's evaluate.py reading"
    ):
        return None
    rows = ctx.records(POPE)
    if not rows:
        return _value(None, 0)
    # Each row's own counts (one of TP, FP, TN, FN is 1): a resample's counts are their sums.
    per_row = [c for _, c in rows]
    counts = PopeCounts(*(sum(getattr(c, f) for c in per_row) for f in ("tp", "fp", "tn", "fn")))
    value = pick(counts)

    def statistic(sums: FloatArray) -> FloatArray:
        # POPE's own formulas on each resample's counts (NaN where one is undefined).
        return np.array([pick(PopeCounts(*(round(float(x)) for x in row))) for row in sums])

    return bootstrap_value(
        ctx,
        None if value != value else value,  # NaN: undefined
        counts.n,
        [sample_id for sample_id, _ in rows],
        [[c.tp, c.fp, c.tn, c.fn] for c in per_row],
        statistic,
    )


def _pope_metric(
    name: str, label: str, order: int, what: str, pick: Callable[[PopeCounts], float]
) -> None:
    def compute(ctx: MetricContext) -> MetricValue | None:
        return _pope(ctx, pick, what)

    compute.__doc__ = f"POPE's {what}."
    run_metric(
        name,
        summary=f"POPE {what} with POPE's yes/no reading (evaluate.py).",
        label=label,
        family=FAMILY,
        order=order,
    )(compute)


_pope_metric(POPE, "POPE F1", 10, "F1 of 'yes'", lambda c: c.f1)
_pope_metric("pope_accuracy", "POPE acc", 11, "accuracy", lambda c: c.accuracy)
_pope_metric("pope_precision", "POPE prec.", 12, "precision of 'yes'", lambda c: c.precision)
_pope_metric("pope_recall", "POPE recall", 13, "recall of 'yes'", lambda c: c.recall)
_pope_metric("pope_yes_ratio", "POPE yes", 14, "share of 'yes' answers", lambda c: c.yes_ratio)


# --------------------------------------------------------------------------- HallusionBench


_HALLUSION_KEYS = ("aAcc", "fAcc", "qAcc")


@row_extract(HALLUSION, tagged_in(HALLUSION))
def _hallusion_row(s: Score, spec: RunSpec) -> tuple[int, HallusionRow, bool, bool] | None:
    """(repeat, the row as HallusionBench scores it, unjudged, read by rule) of an answered row.

    A row the official judge left unjudged reads "2" in the official figures: what
    ``evaluate_by_chatgpt`` writes for a reply holding none of its answers (tianyi-lab's and
    lmms-eval's alike) and lmms-eval's for a request that failed, so a figure-less
    visual-supplement question counts it right, as their `assign_correctness` does. The strict
    figures (``_strict``) count it wrong (`_hallusion`).
    """
    if not is_answer(s, HALLUSION):
        return None
    m: dict[str, Any] = s.metadata
    judged = verdicts(s, HALLUSION_JUDGE, judge_of(spec))
    if judged == []:
        verdict = "2"
    elif judged:
        verdict = str(judged[0].reading)
    else:
        verdict = hallusion_correctness(answer_text(s), str(m.get("gt_answer")))
    row = HallusionRow(
        str(m.get("category")),
        str(m.get("subcategory")),
        str(m.get("set_id")),
        str(m.get("figure_id")),
        str(m.get("question_id")),
        verdict,
    )
    return s.repeat, row, judged == [], judged is None


def _hallusion(ctx: MetricContext, key: str, mode: str = "official") -> MetricValue | None:
    """aAcc, fAcc or qAcc (`key`) of the rows, an unjudged row counted as `mode` says.

    ``official``: it reads "2", as the reference scores the verdict its judge could not give;
    ``judged_only``: it is left out; ``strict`` (lmmprobe's own): it is wrong, on a
    figure-less visual-supplement question too. The last two are None where no row is
    unjudged (all three are then equal).
    """
    if HALLUSION not in ctx.summary.tags:
        return None
    records = ctx.records(HALLUSION)
    # A judged row keeps its verdict; a row read by rule must have been read by HallusionBench's.
    if any(r[3] for r in records) and not read_officially(
        ctx, "hallusionbench", f"HallusionBench's {key}", "HallusionBench's rule"
    ):
        return None
    if mode != "official":
        if not any(r[2] for r in records):
            return None
        if mode == "judged_only":
            records = [r for r in records if not r[2]]
        else:
            records = [
                (repeat, replace(row, correctness="0") if unjudged else row, unjudged, by_rule)
                for repeat, row, unjudged, by_rule in records
            ]

    def compute() -> dict[tuple[str, ...], list[int]]:
        # HallusionBench scores one answer per question: each repeat is scored as its own run
        # and the counts are pooled, i.e. the accuracies are averaged over repeats. Figures and
        # question pairs lie within a question set, so the counts are kept per set (the unit
        # the interval resamples): (right, total) of aAcc, fAcc and qAcc in a row.
        by_pass: dict[tuple[tuple[str, ...], int], list[HallusionRow]] = defaultdict(list)
        for repeat, row, _unjudged, _by_rule in records:
            by_pass[(row.category, row.subcategory, row.set_id), repeat].append(row)
        per_set: dict[tuple[str, ...], list[int]] = defaultdict(lambda: [0] * 6)
        for (question_set, _repeat), rows in by_pass.items():
            scores = hallusion_scores(rows)
            counts = per_set[question_set]
            for i, name in enumerate(_HALLUSION_KEYS):
                counts[2 * i] += scores[name][0]
                counts[2 * i + 1] += scores[name][1]
        return dict(per_set)

    per_set = ctx.shared(f"hallusion_sets_{mode}", compute)
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


@run_metric(
    HALLUSION,
    summary="HallusionBench qAcc: question pairs right on every figure (judged by hallusionbench-correct "
    "where judged, else read by rule; an unjudged answer reads unclear ('2'), the reference's default; "
    "averaged over repeats).",
    label="HB qAcc",
    family=FAMILY,
    order=20,
)
def hallusion_qacc(ctx: MetricContext) -> MetricValue | None:
    """Per question pair."""
    return _hallusion(ctx, "qAcc")


@run_metric(
    "hallusionbench_facc",
    summary="HallusionBench fAcc: figures whose every question is right (judged by hallusionbench-correct "
    "where judged, else read by rule; an unjudged answer reads unclear ('2'), the reference's default; "
    "averaged over repeats).",
    label="HB fAcc",
    family=FAMILY,
    order=21,
)
def hallusion_facc(ctx: MetricContext) -> MetricValue | None:
    """Per figure."""
    return _hallusion(ctx, "fAcc")


@run_metric(
    "hallusionbench_aacc",
    summary="HallusionBench aAcc: questions right (judged by hallusionbench-correct where judged, "
    "else read by rule; an unjudged answer reads unclear ('2'), the reference's default; averaged over "
    "repeats).",
    label="HB aAcc",
    family=FAMILY,
    order=22,
)
def hallusion_aacc(ctx: MetricContext) -> MetricValue | None:
    """Per question."""
    return _hallusion(ctx, "aAcc")


def _hallusion_judged_only(key: str) -> Callable[[MetricContext], MetricValue | None]:
    """`_hallusion` of `key` over the judged answers alone."""
    return lambda ctx: _hallusion(ctx, key, "judged_only")


def _hallusion_strict(key: str) -> Callable[[MetricContext], MetricValue | None]:
    """`_hallusion` of `key` with every unjudged answer counted wrong."""
    return lambda ctx: _hallusion(ctx, key, "strict")


for _order, (_name, _key, _label) in enumerate(
    [(HALLUSION, "qAcc", "HB qAcc"), ("hallusionbench_facc", "fAcc", "HB fAcc"),
     ("hallusionbench_aacc", "aAcc", "HB aAcc")]
):  # fmt: skip
    judged_only_metric(
        _name, _label, _hallusion_judged_only(_key), family=FAMILY, order=23 + _order
    )
    run_metric(
        f"{_name}_strict",
        summary=f"HallusionBench {_key} (lmmprobe's own) with every answer its judge left "
        "unjudged counted wrong, where the official figure reads it unclear ('2'), which counts "
        "a visual-supplement question asked without its figure right (shown where some answer "
        "was left unjudged).",
        label=f"{_label} (strict)",
        family=FAMILY,
        order=26 + _order,
        headline=False,
    )(_hallusion_strict(_key))


# --------------------------------------------------------------------------- MMBench


_MMBENCH_LMMS_EVAL = "mmbench"


def _n_options(s: Score) -> int:
    n = s.metadata.get("n_options")
    return n if isinstance(n, int) else len(s.options or ())


@run_metric(
    MMBENCH,
    summary="MMBench CircularEval: a question counts only if every circular copy is right "
    "(questions missing a copy, e.g. under limit=, are left out; an unjudged copy is wrong).",
    label="MMB circ.",
    family=FAMILY,
    order=30,
)
def mmbench_circular(ctx: MetricContext) -> MetricValue | None:
    """Rows grouped by ``metadata["circular_index"]`` (MMBench's index mod 1e6).

    The published data holds each question once per rotation of its options (as many copies
    as options); with ``--circular`` lmmprobe's own rotations of each copy join the same
    group, otherwise each repeat is its own CircularEval pass (averaged over repeats). A
    question whose group lacks one of its copies (``limit=``, a partial copy of the data)
    cannot pass CircularEval and is left out; with no complete question the value is None.
    A row judged by ``mmbench-choice`` (VLMEvalKit's rules, then a judge) is right when the
    option letter read is the gold option; an unjudged row is wrong, and its question fails.
    """
    return _mmbench(ctx)


def _mmbench(ctx: MetricContext, judged_only: bool = False) -> MetricValue | None:
    """`mmbench_circular`; `judged_only`: unjudged rows left out (their questions with them)."""
    if MMBENCH not in ctx.summary.tags:
        return None
    records = ctx.records(MMBENCH)
    if not _vlmevalkit_read(ctx, (r[6] for r in records), "MMBench's CircularEval score"):
        return None
    if judged_only:
        if not any(r[5] for r in records):
            return None
        records = [r for r in records if not r[5]]
    # Per question (and pass): the most options a copy has, the copies present, whether some
    # copy failed and whether every copy is right: what CircularEval reads of its rows.
    groups: dict[str, tuple[int, set[Hashable], bool, bool]] = {}
    for question, copy, n_options, failed, right, _unjudged, _by_rule in records:
        need, copies, was_failed, was_right = groups.get(question, (n_options, set(), False, True))
        copies.add(copy)
        groups[question] = (
            max(need, n_options),
            copies,
            was_failed or failed,
            was_right and right,
        )
    complete = {
        question: (failed, right)
        for question, (need, copies, failed, right) in groups.items()
        if need >= 2 and len(copies) >= need
    }
    if not complete:
        return _value(None, 0)
    return circular_of(complete, n_boot=ctx.n_boot, seed=ctx.seed)


judged_only_metric(
    MMBENCH, "MMB circ.", lambda ctx: _mmbench(ctx, judged_only=True), family=FAMILY, order=31
)


@row_extract(MMBENCH, tagged_in(MMBENCH))
def _mmbench_row(
    s: Score, spec: RunSpec
) -> tuple[str, Hashable, int, bool, bool, bool, bool] | None:
    """(question and pass, copy, options, failed, right, unjudged, read by rule) of a row.

    A row judged by ``mmbench-choice`` is right when the option letter read is the gold option;
    an unjudged one is wrong (VLMEvalKit guesses a random option there: a guess, not a reading).
    """
    if s.official_metric != MMBENCH:
        return None
    judged = verdicts(s, MMBENCH_JUDGE, judge_of(spec))
    right = s.correct and judged != []
    if judged and judged[0].reading is not None:
        right = mmbench_letter_correct(judged[0].reading, s.order, s.gold)
    question = str(s.metadata.get("circular_index", s.sample_id))
    if not spec.formulate.circular:
        question = f"{question}@{s.repeat}"
    copy = s.metadata.get("index", s.sample_id)
    failed = s.error_type is not None or s.stage == "error"
    # lmms-eval's MMBench dev copy (``mmbench``) has no rule of its own (``Benchmark.matcher``
    # None: its official reading is the judge's), so its rows read by rule are not gated.
    by_rule = judged is None and not failed and s.benchmark_name != _MMBENCH_LMMS_EVAL
    return question, copy, _n_options(s), failed, bool(right), judged == [], by_rule


# --------------------------------------------------------------------------- VLMEvalKit


def _vlmevalkit_read(ctx: MetricContext, by_rule: Iterable[bool], figure: str) -> bool:
    """Whether `figure` is VLMEvalKit's: every row its judge did not read, read by its rule.

    A row judged by the benchmark's protocol keeps its verdict whatever the matcher; a row read
    by rule stores the option the run's matcher chose, VLMEvalKit's only under ``vlmevalkit``.
    """
    return not any(by_rule) or read_officially(ctx, "vlmevalkit", figure, "VLMEvalKit's rule")


@run_metric(
    VLMEVALKIT,
    summary="VLMEvalKit's multiple-choice accuracy (mcq_vanilla_eval): its rules read the option "
    "letter, a judge where they cannot (--judge, mmbench-choice); an unread answer is wrong.",
    label="VLMEvalKit acc.",
    family=FAMILY,
    order=32,
)
def vlmevalkit_accuracy(ctx: MetricContext) -> MetricValue | None:
    """The share of rows whose option, as VLMEvalKit reads it, is the gold one.

    Without a judge the answer is read by the benchmark's matcher (``vlmevalkit``: VLMEvalKit's
    ``can_infer``), which is VLMEvalKit's ``exact_matching`` policy; a row judged by
    ``mmbench-choice`` is right when the letter it read is the gold option, and an unjudged row
    is wrong (VLMEvalKit guesses a random option there).
    """
    return _vlmevalkit(ctx)


def _vlmevalkit(ctx: MetricContext, judged_only: bool = False) -> MetricValue | None:
    """`vlmevalkit_accuracy`; `judged_only`: unjudged rows left out."""
    if VLMEVALKIT not in ctx.summary.tags:
        return None
    records = ctx.records(VLMEVALKIT)
    if not _vlmevalkit_read(ctx, (r[3] for r in records), "VLMEvalKit's accuracy"):
        return None
    if judged_only:
        if not any(r[2] for r in records):
            return None
        records = [r for r in records if not r[2]]
    return mean_of(ctx, [(sample_id, value) for sample_id, value, _unjudged, _rule in records])


judged_only_metric(
    VLMEVALKIT,
    "VLMEvalKit acc.",
    lambda ctx: _vlmevalkit(ctx, judged_only=True),
    family=FAMILY,
    order=33,
)


def _vlmevalkit_right(
    s: Score, spec: RunSpec, protocol: str = MMBENCH_JUDGE
) -> tuple[bool, bool, bool]:
    """(right, unjudged, read by rule) of a row as VLMEvalKit reads it.

    The verdict of `protocol` (``mmbench-choice``; BLINK's ``blink-choice``) where it judged the
    row, else the run's matcher (VLMEvalKit's under ``vlmevalkit``: `_vlmevalkit_read`); an
    unjudged row is wrong.
    """
    judged = verdicts(s, protocol, judge_of(spec))
    right = s.correct and judged != []
    if judged and judged[0].reading is not None:
        right = mmbench_letter_correct(judged[0].reading, s.order, s.gold)
    return bool(right), judged == [], judged is None


@row_extract(VLMEVALKIT, tagged_in(VLMEVALKIT))
def _vlmevalkit_row(s: Score, spec: RunSpec) -> tuple[str, float, bool, bool] | None:
    """(sample, 1.0 right or 0.0, unjudged, read by rule) of an answered row."""
    if not is_answer(s, VLMEVALKIT):
        return None
    right, unjudged, by_rule = _vlmevalkit_right(s, spec)
    return s.sample_id, float(right), unjudged, by_rule


# --------------------------------------------------------------------------- MMT-Bench

_MMT = ("mmt-bench", "mmt-bench-mi")


@run_metric(
    MMT_META,
    summary="MMT-Bench's meta-task figure (VLMEvalKit's report_acc_MMT): the mean of the "
    "meta-task's subtask accuracies; per --by l2_category group (rows of one meta-task).",
    label="MMT meta-task",
    family=FAMILY,
    order=38,
)
def mmt_meta_task_accuracy(ctx: MetricContext) -> MetricValue | None:
    """The mean over subtasks (``metadata["category"]``) of each subtask's accuracy.

    ``report_acc_MMT`` reports each meta-task (``l2-category``) as the mean of its subtasks'
    accuracies, not of its questions (what ``vlmevalkit_accuracy`` gives under ``--by
    l2_category``). Defined only over rows of one meta-task, so ``--by l2_category`` gives
    VLMEvalKit's figure per meta-task and the whole run none. Answers are read as
    `vlmevalkit_accuracy` reads them; the interval resamples samples.
    """
    if VLMEVALKIT not in ctx.summary.tags:
        return None
    records = ctx.records(MMT_META)
    if not records or len({key[0] for _, key, _, _ in records}) != 1:
        return None
    if not _vlmevalkit_read(ctx, (r[3] for r in records), "MMT-Bench's meta-task accuracy"):
        return None
    return _mean_of_means(ctx, [r[:3] for r in records])


@row_extract(MMT_META, tagged_in(VLMEVALKIT))
def _mmt_row(s: Score, spec: RunSpec) -> tuple[str, tuple[str, str], float, bool] | None:
    """(sample, (meta-task, subtask), 1.0 right or 0.0, read by rule) of an MMT-Bench row."""
    if not is_answer(s, VLMEVALKIT) or s.benchmark_name not in _MMT:
        return None
    key = (str(s.metadata.get("l2_category")), str(s.metadata.get("category")))
    right, _unjudged, by_rule = _vlmevalkit_right(s, spec)
    return s.sample_id, key, float(right), by_rule


# --------------------------------------------------------------------------- MMVP


@run_metric(
    MMVP,
    summary="MMVP's pair accuracy (VLMEvalKit's report_acc_MMVP 'Overall'): a pair of questions "
    "counts only if both are right; a pair missing a question (limit=) is left out.",
    label="MMVP pairs",
    family=FAMILY,
    order=34,
)
def mmvp_pair_accuracy(ctx: MetricContext) -> MetricValue | None:
    """The share of MMVP's question pairs (``metadata["pair"]``) with both answers right.

    Each answer is read as `vlmevalkit_accuracy` reads it; with --repeats each repeat's pairs
    are their own. Its interval resamples pairs.
    """
    if MMVP not in ctx.summary.tags:
        return None
    records = ctx.records(MMVP)
    if not _vlmevalkit_read(ctx, (r[2] for r in records), "MMVP's pair accuracy"):
        return None
    pairs: dict[str, list[bool]] = defaultdict(list)
    for pair, right, _by_rule in records:
        pairs[pair].append(right)
    complete = [(pair, float(all(v))) for pair, v in pairs.items() if len(v) == 2]
    return mean_of(ctx, complete)


@row_extract(MMVP, tagged_in(MMVP))
def _mmvp_row(s: Score, spec: RunSpec) -> tuple[str, bool, bool] | None:
    """(pair and repeat, right, read by rule) of an answered row."""
    if not is_answer(s, MMVP):
        return None
    right, _unjudged, by_rule = _vlmevalkit_right(s, spec)
    return f"{s.metadata.get('pair')}@{s.repeat}", right, by_rule


# --------------------------------------------------------------------------- BLINK


@run_metric(
    BLINK,
    summary="BLINK's accuracy (its eval/evaluate.py): the mean of its subtasks' accuracies "
    "(metadata category); answers read as VLMEvalKit reads them (--judge: blink-choice).",
    label="BLINK",
    family=FAMILY,
    order=35,
)
def blink_accuracy(ctx: MetricContext) -> MetricValue | None:
    """The mean over subtasks (``metadata["category"]``) of each subtask's accuracy.

    BLINK's ``eval_prediction`` averages its 14 subtasks' accuracies (``Total``), not the
    questions; a subtask with no row (``limit=``) is left out of the mean. The interval
    resamples samples, each subtask's share recomputed on every resample.
    """
    if BLINK not in ctx.summary.tags:
        return None
    records = ctx.records(BLINK)
    if not _vlmevalkit_read(ctx, (r[3] for r in records), "BLINK's accuracy"):
        return None
    return _mean_of_means(
        ctx, [(sample, ("all", task), right) for sample, task, right, _ in records]
    )


def _mean_of_means(
    ctx: MetricContext, records: Sequence[tuple[str, tuple[str, str], float]]
) -> MetricValue:
    """The mean over outer groups of the mean over their inner groups of the accuracy.

    `records` are (sample, (outer, inner), 1.0 right or 0.0): BLINK's subtasks are the inner
    groups of one outer group; CV-Bench's sources (ADE20K, COCO; Omni3D) those of its 2D and
    3D. A group with no row is left out of its mean. The interval resamples samples, each
    group's accuracy recomputed on every resample (one lacking a group is dropped).
    """
    if not records:
        return MetricValue(None, None, None, 0)
    keys = sorted({key for _, key, _ in records})
    column = {key: i for i, key in enumerate(keys)}
    rows = np.zeros((len(records), 2 * len(keys)))
    for r, (_, key, right) in enumerate(records):
        rows[r, 2 * column[key] : 2 * column[key] + 2] = [right, 1.0]
    outer = sorted({o for o, _ in keys})
    inner = {o: [column[k] for k in keys if k[0] == o] for o in outer}

    def combine(shares: Sequence[FloatArray]) -> FloatArray:
        per_outer = [np.mean([shares[i] for i in inner[o]], axis=0) for o in outer]
        return np.asarray(np.mean(per_outer, axis=0), dtype=np.float64)

    totals = rows.sum(axis=0)
    value = float(
        combine([np.array([totals[2 * i] / totals[2 * i + 1]]) for i in range(len(keys))])[0]
    )

    def statistic(sums: FloatArray) -> FloatArray:
        return combine([ratio(sums[:, 2 * i], sums[:, 2 * i + 1]) for i in range(len(keys))])

    return bootstrap_value(
        ctx, value, len(records), [sample for sample, _, _ in records], rows, statistic
    )


def _ruled_mean_of_means(
    ctx: MetricContext, records: Sequence[tuple[str, tuple[str, str], float, bool]], figure: str
) -> MetricValue | None:
    """`_mean_of_means` of (sample, key, right, read by rule) records, if VLMEvalKit read them."""
    if not _vlmevalkit_read(ctx, (r[3] for r in records), figure):
        return None
    return _mean_of_means(ctx, [r[:3] for r in records])


@row_extract(BLINK, tagged_in(BLINK))
def _blink_row(s: Score, spec: RunSpec) -> tuple[str, str, float, bool] | None:
    """(sample, subtask, 1.0 right or 0.0, read by rule) of an answered row."""
    if not is_answer(s, BLINK):
        return None
    right, _unjudged, by_rule = _vlmevalkit_right(s, spec, BLINK_JUDGE)
    return s.sample_id, str(s.metadata.get("category")), float(right), by_rule


# --------------------------------------------------------------------------- CV-Bench


@run_metric(
    CVBENCH,
    summary="CV-Bench's accuracy (its card): the mean of 2D (the mean of ADE20K's and COCO's "
    "accuracies) and 3D (Omni3D's); answers read as VLMEvalKit reads them.",
    label="CV-Bench",
    family=FAMILY,
    order=36,
)
def cvbench_accuracy(ctx: MetricContext) -> MetricValue | None:
    """``(accuracy_2D + accuracy_3D) / 2``, each the mean of its sources' accuracies.

    Rows are grouped by ``metadata["type"]`` (2D, 3D) and ``metadata["source"]``; a group
    with no row (``limit=``) is left out of its mean.
    """
    if CVBENCH not in ctx.summary.tags:
        return None
    return _ruled_mean_of_means(ctx, ctx.records(CVBENCH), "CV-Bench's accuracy")


@row_extract(CVBENCH, tagged_in(CVBENCH))
def _cvbench_row(s: Score, spec: RunSpec) -> tuple[str, tuple[str, str], float, bool] | None:
    """(sample, (2D or 3D, source), 1.0 right or 0.0, read by rule) of an answered row."""
    if not is_answer(s, CVBENCH):
        return None
    key = (str(s.metadata.get("type")), str(s.metadata.get("source")))
    right, _unjudged, by_rule = _vlmevalkit_right(s, spec)
    return s.sample_id, key, float(right), by_rule


# --------------------------------------------------------------------------- HR-Bench


@run_metric(
    HRBENCH,
    summary="HR-Bench's accuracy (VLMEvalKit's report_acc_hrbench): each cycle's accuracy "
    "over its questions, averaged over the cycles (metadata cycle_category).",
    label="HR-Bench",
    family=FAMILY,
    order=37,
)
def hrbench_accuracy(ctx: MetricContext) -> MetricValue | None:
    """The mean over cycles (``metadata["cycle_category"]``) of each cycle's accuracy."""
    if HRBENCH not in ctx.summary.tags:
        return None
    return _ruled_mean_of_means(ctx, ctx.records(HRBENCH), "HR-Bench's accuracy")


@row_extract(HRBENCH, tagged_in(HRBENCH))
def _hrbench_row(s: Score, spec: RunSpec) -> tuple[str, tuple[str, str], float, bool] | None:
    """(sample, (cycle, "all"), 1.0 right or 0.0, read by rule) of an answered row."""
    if not is_answer(s, HRBENCH):
        return None
    key = (str(s.metadata.get("cycle_category")), "all")
    right, _unjudged, by_rule = _vlmevalkit_right(s, spec)
    return s.sample_id, key, float(right), by_rule


# --------------------------------------------------------------------------- MMMU


def _mmmu_correct(s: Score) -> bool:
    m = s.metadata
    if m.get("question_type") == "multiple-choice":
        letters = m.get("option_letters") or []
        options = m.get("option_texts") or []
        index2ans = dict(zip(letters, options, strict=True))
        return mmmu_multi_choice(answer_text(s), index2ans) == gold(s)
    return mmmu_open_correct(list(m.get("answers") or [gold(s)]), mmmu_parse_open(answer_text(s)))


_mmmu = per_row(MMMU, lambda s: float(_mmmu_correct(s)))


@run_metric(
    MMMU,
    summary="MMMU accuracy with MMMU's rule-based answer reading (unread answers are wrong).",
    label="MMMU acc",
    family=FAMILY,
    order=40,
)
def mmmu_accuracy(ctx: MetricContext) -> MetricValue | None:
    """Multiple-choice and open questions, each with its own reading."""
    return _mmmu(ctx)


# --------------------------------------------------------------------------- MMMU-Pro


def _mmmu_pro_correct(s: Score) -> bool:
    m = s.metadata
    index2ans = dict(zip(m.get("option_letters") or [], m.get("option_texts") or [], strict=True))
    return mmmu_pro_multi_choice(answer_text(s), index2ans) == gold(s)


_mmmu_pro = per_row(MMMU_PRO, lambda s: float(_mmmu_pro_correct(s)))


@run_metric(
    MMMU_PRO,
    summary="MMMU-Pro accuracy with MMMU-Pro's answer reading (evaluate.py; unread answers are "
    "wrong).",
    label="MMMU-Pro",
    family=FAMILY,
    order=45,
)
def mmmu_pro_accuracy(ctx: MetricContext) -> MetricValue | None:
    """Every question is multiple-choice, read by MMMU-Pro's parse_multi_choice_response."""
    return _mmmu_pro(ctx)


# --------------------------------------------------------------------------- CMMMU


def _cmmmu_correct(s: Score) -> bool:
    """CMMMU's verdict on one answer; an answer its code would draw for is wrong."""
    m = s.metadata
    qtype = m.get("question_type")
    text = answer_text(s)
    if qtype == MULTI_CHOICE:
        letters, texts = m.get("option_letters") or [], m.get("option_texts") or []
        index2ans = dict(zip(letters, texts, strict=True))
        return bool(text) and cmmmu_multi_choice(text, index2ans) == gold(s)
    if qtype == FILL_BLANK:
        return cmmmu_fill_correct(gold(s), cmmmu_fill_blank(text, gold(s)))
    return cmmmu_true_false(text) == gold(s)


_cmmmu = per_row(CMMMU, lambda s: float(_cmmmu_correct(s)))


@run_metric(
    CMMMU,
    summary="CMMMU accuracy with CMMMU's rule-based answer reading (eval_utils.py; answers its "
    "code would draw at random for are wrong).",
    label="CMMMU acc",
    family=FAMILY,
    order=46,
)
def cmmmu_accuracy(ctx: MetricContext) -> MetricValue | None:
    """Multiple-choice, true/false and fill-in-the-blank questions, each with its own reading."""
    return _cmmmu(ctx)


# --------------------------------------------------------------------------- MathVista


def _mathvista_correct(s: Score) -> bool:
    m = s.metadata
    choices = m.get("choices")
    return mathvista_correct(
        answer_text(s),
        gold(s),
        list(choices) if choices is not None else None,
        str(m.get("mathvista_question_type")),
        str(m.get("answer_type")),
        m.get("precision"),
    )


def _mathvista_judged(s: Score, extraction: str) -> bool:
    m = s.metadata
    choices = m.get("choices")
    return mathvista_judged_correct(
        extraction,
        gold(s),
        list(choices) if choices is not None else None,
        str(m.get("mathvista_question_type")),
        str(m.get("answer_type")),
        m.get("precision"),
    )


@row_extract(MATHVISTA, tagged_in(MATHVISTA))
def _mathvista_row(s: Score, spec: RunSpec) -> tuple[str, float, bool] | None:
    """(sample id, right, unjudged) of an answered row.

    Unjudged, it is wrong: ``calculate_score.py`` scores the empty extraction MathVista's
    ``extract_answer`` leaves when its judge fails.
    """
    if not is_answer(s, MATHVISTA):
        return None
    judged = verdicts(s, MATHVISTA_JUDGE, judge_of(spec))
    if judged == []:
        return s.sample_id, 0.0, True
    right = _mathvista_judged(s, str(judged[0].reading)) if judged else _mathvista_correct(s)
    return s.sample_id, float(right), False


def _mathvista(ctx: MetricContext, judged_only: bool = False) -> MetricValue | None:
    if MATHVISTA not in ctx.summary.tags:
        return None
    records = ctx.records(MATHVISTA)
    if judged_only and not any(unjudged for _, _, unjudged in records):
        return None
    return mean_of(ctx, [(i, v) for i, v, unjudged in records if not (judged_only and unjudged)])


@run_metric(
    MATHVISTA,
    summary="MathVista accuracy: the answer extracted by mathvista-extract where judged (its "
    "rules, then a judge), else by the rule-based reading; an unjudged answer is wrong.",
    label="MathVista",
    family=FAMILY,
    order=50,
)
def mathvista_accuracy(ctx: MetricContext) -> MetricValue | None:
    """Normalized extraction equal to the answer."""
    return _mathvista(ctx)


judged_only_metric(
    MATHVISTA, "MathVista", lambda ctx: _mathvista(ctx, judged_only=True), family=FAMILY, order=51
)


# --------------------------------------------------------------------------- MATH-Vision


def _mathvision_correct(s: Score) -> bool:
    options = s.metadata.get("options") or []
    return mathvision_correct(answer_text(s), gold(s), [str(o) for o in options])


_mathvision = per_row(MATHVISION, lambda s: float(_mathvision_correct(s)))


@run_metric(
    MATHVISION,
    summary="MATH-Vision accuracy with MATH-V's answer reading and LaTeX equality "
    "(evaluation/evaluate.py, utils.py is_equal).",
    label="MATH-V",
    family=FAMILY,
    order=55,
)
def mathvision_accuracy(ctx: MetricContext) -> MetricValue | None:
    """Right when the answer read equals the answer, or a choice question's chosen option text."""
    return _mathvision(ctx)


# --------------------------------------------------------------------------- Mantis-Eval


def _mantis_correct(s: Score) -> bool:
    m = s.metadata
    return mantis_correct(
        str(m.get("question_type")),
        answer_text(s),
        str(m.get("mantis_answer")),
        [str(o) for o in m.get("options") or []],
    )


_mantis = per_row(MANTIS, lambda s: float(_mantis_correct(s)))


@run_metric(
    MANTIS,
    summary="Mantis-Eval accuracy with Mantis's answer reading (eval.py get_prediction).",
    label="Mantis acc",
    family=FAMILY,
    order=47,
)
def mantis_accuracy(ctx: MetricContext) -> MetricValue | None:
    """Multi-choice and short-answer questions, each read as Mantis's get_prediction reads it."""
    return _mantis(ctx)


# --------------------------------------------------------------------------- MMIU


@run_metric(
    MMIU,
    summary="MMIU's Overall (its evaluate_correct.py): the mean of its tasks' accuracies "
    "(metadata task); answers read by its letter rule, the rest by its judge (--judge: "
    "mmiu-choice), else wrong.",
    label="MMIU",
    family=FAMILY,
    order=48,
)
def mmiu_accuracy(ctx: MetricContext) -> MetricValue | None:
    """The mean over tasks (``metadata["task"]``) of each task's accuracy.

    ``evaluate_correct.py`` averages the stored tasks' accuracies (``Overall``), not the
    questions; a task with no row (``limit=``) is left out of the mean. An answer its rule
    cannot read and no judge read, or that the judge left unjudged, counts as wrong. The
    interval resamples samples, each task's share recomputed on every resample.
    """
    return _mmiu(ctx)


def _mmiu(ctx: MetricContext, judged_only: bool = False) -> MetricValue | None:
    """`mmiu_accuracy`; `judged_only`: unjudged rows left out (the reference's GPT errors)."""
    if MMIU not in ctx.summary.tags:
        return None
    records = ctx.records(MMIU)
    if judged_only:
        if not any(r[3] for r in records):
            return None
        records = [r for r in records if not r[3]]
    return _mean_of_means(
        ctx, [(sample, ("all", task), right) for sample, task, right, _ in records]
    )


judged_only_metric(MMIU, "MMIU", lambda ctx: _mmiu(ctx, judged_only=True), family=FAMILY, order=49)


@row_extract(MMIU, tagged_in(MMIU))
def _mmiu_row(s: Score, spec: RunSpec) -> tuple[str, str, float, bool] | None:
    """(sample, task, 1.0 right or 0.0, unjudged) of an answered row.

    The choice is the ``mmiu-choice`` verdict where the protocol read the row (its rule or
    the judge), else the rule on the answer (none: wrong); an unjudged row is wrong.
    """
    if not is_answer(s, MMIU):
        return None
    judged = verdicts(s, MMIU_JUDGE, judge_of(spec))
    if judged is None:
        choice = mmiu_rule(answer_text(s))
    elif judged and judged[0].reading is not None:
        choice = judged[0].reading
    else:
        choice = None
    right = choice is not None and mmiu_correct(choice, gold(s))
    return s.sample_id, str(s.metadata.get("task")), float(right), judged == []
