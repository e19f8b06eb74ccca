"""The plumbing every official benchmark metric shares: its rows, its answer text, its interval.

An official metric applies to the rows whose `Score.official_metric` names it (samples loaded
by name carry their benchmark's `BenchmarkTag`) and is left out otherwise (`answered` gives
None). Failed requests are not answers and are left out; an empty answer is scored as the empty
text.

Every official metric reads the answer as `answer_text` gives it: the model's raw text
(``Score.prediction_text``) stripped of surrounding whitespace. That is what the reference
pipelines score: lmms-eval's ``ConfigurableTask.process_results`` strips every generation, and
the inference scripts whose output files the papers' own tools read (MME's eval tool, POPE's
``evaluate.py``, MMMU's and MathVista's evaluation) strip the decoded text.

Intervals are the 95% cluster-bootstrap percentile intervals every metric reports: samples are
resampled (a sample's repeats stay together), with ``spec.bootstrap`` resamples seeded by
``spec.seed``. `mean_value` gives the mean of per-row values; `bootstrap_value` any statistic
of per-cluster sums (MME's score, OCRBench's points).

Where a benchmark's official protocol uses a judge, its metric reads the verdicts stored on the
row (`Score.judgements`, from the protocol's rules or a judge: `verdicts`) and falls back to
lmmprobe's rule-based reading on a row that was not judged. With several judges the official
figure is the first ``--judge``'s alone (`official_judge`).

A row that judge left ``unjudged`` (it failed or replied unreadably) counts in the official
figure as the benchmark's own script counts an answer its judge could not read: not correct
(MathVista's empty extraction, MM-Vet's grade 0.0, HallusionBench's default "2", LLaVA-Bench's
[-1, -1] pair; MMBench's random option is a guess, so the copy counts as wrong). Every item
stays in the denominator. Beside it, ``METRIC_judged_only`` (`judged_only_metric`) gives the
figure over the judged answers alone, where some answer was left unjudged, and
``judge_coverage`` the share judged.

An official figure whose benchmark reads choice answers with its own rule (MME's, POPE's,
HallusionBench's matcher: the benchmark's ``matcher``) is given only under that reading
(`read_officially`): with another ``--matcher``, or answers ranked by likelihood, a row stores
the option that reading chose, not what the benchmark's rule would read, so the figure would
not be the benchmark's. It is then not given (None), and one info line says why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Sequence

import numpy as np
import numpy.typing as npt

from lmmprobe.metrics.bootstrap import (
    FloatArray,
    WeightArray,
    bootstrap_distribution,
    finite_or_none,
    percentile_interval,
    ratio_intervals,
)
from lmmprobe.metrics.reduction import RowSummary, row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import Judgement, RunSpec, Score

log = logging.getLogger(__name__)

__all__ = [
    "answer_text",
    "answered",
    "bootstrap_value",
    "gold",
    "is_answer",
    "judge_of",
    "judged_only_metric",
    "mean_of",
    "mean_value",
    "official_judge",
    "per_row",
    "read_officially",
    "references",
    "tagged_in",
    "unjudged_attempts",
    "verdicts",
]


def answered(ctx: MetricContext, tag: str) -> list[Score] | None:
    """The answered rows of the benchmarks whose official metric is `tag`.

    Returns:
        The rows, failed requests left out; None when no row is tagged `tag` (the metric does
        not apply), an empty list when every tagged row failed.

    """
    tagged = ctx.tagged(tag)
    if not tagged:
        return None
    return [s for s in tagged if s.error_type is None and s.stage != "error"]


def official_judge(ctx: MetricContext) -> str | None:
    """The judge whose verdicts an official figure reads: the first ``--judge`` given.

    None where the run names no judge (its rows' verdicts were stored without the run's
    spec): `verdicts` then reads the first judge on the row.
    """
    return judge_of(ctx.spec)


def judge_of(spec: RunSpec) -> str | None:
    """`official_judge` of a run's spec (what a `RowExtract` is given)."""
    config = spec.judge
    return config.judges[0] if config is not None and config.judges else None


def verdicts(score: Score, protocol: str, judge: str | None = None) -> list[Judgement] | None:
    """The verdicts of judge protocol `protocol` on a row that an official metric reads.

    An official figure is one judge's, never a per-row mix: with several judges it reads
    `judge` (the first ``--judge`` given, `official_judge`) alone; the aggregate over every
    judge is ``judge_score``. A row that judge left unjudged stays unjudged here even where
    another judge decided it.

    Args:
        score: The row.
        protocol: The protocol's name.
        judge: The judge whose verdicts count; None: the first judge on the row.

    Returns:
        None where the protocol did not judge the row (the metric reads it by rule, as without
        a judge); the rule's reading where the protocol's rules decided it; an empty list where
        the official judge left it unjudged (the metric counts it as its benchmark's script
        counts an unread answer; see the module docstring);
        else that judge's decided verdicts, one per repeat in order.

    """
    mine = [j for j in score.judgements if j.protocol == protocol]
    if not mine:
        return None
    rules = [j for j in mine if j.decided_by == "rule"]
    if rules:
        return rules[:1]
    if judge is None:
        judge = next((j.judge for j in mine if j.judge is not None), None)
    own = [j for j in mine if j.judge == judge and j.decided_by == "judge"]
    return sorted(own, key=lambda j: j.attempt)


def unjudged_attempts(score: Score, protocol: str, judge: str | None = None) -> list[int]:
    """The attempts (judge repeats) of `protocol` that `judge` left unjudged on a row.

    An attempt the judge decided (on a later run, say) is not among them. `judge` is read as
    `verdicts` reads it (None: the first judge on the row); a row whose protocol's rules
    decided it has none.
    """
    mine = [j for j in score.judgements if j.protocol == protocol]
    if not mine or any(j.decided_by == "rule" for j in mine):
        return []
    if judge is None:
        judge = next((j.judge for j in mine if j.judge is not None), None)
    own = [j for j in mine if j.judge == judge]
    decided = {j.attempt for j in own if j.decided_by == "judge"}
    return sorted({j.attempt for j in own if j.decided_by == "unjudged"} - decided)


def judged_only_metric(
    name: str,
    label: str,
    compute: Callable[[MetricContext], MetricValue | None],
    *,
    family: str,
    order: int,
    digits: int = 3,
) -> None:
    """Register ``NAME_judged_only``: official metric `name` over the judged answers alone.

    The official figure counts an unjudged answer as not correct; this one leaves it out, as a
    figure over what the judge read. `compute` gives None where no answer was left unjudged
    (the two would be equal), so it is shown only where it tells something.
    """
    run_metric(
        f"{name}_judged_only",
        summary=f"{name} over the answers its judge read, unjudged ones left out (shown where "
        "some answer was left unjudged; the official figure counts them not correct).",
        label=f"{label} (judged only)",
        family=family,
        order=order,
        digits=digits,
        headline=False,
    )(compute)


def read_officially(ctx: MetricContext, matcher: str, figure: str, rule: str) -> bool:
    """Whether the run read its choice answers as the benchmark's own code does.

    A metric cannot look its benchmark up (metrics sit below data in the layers), so it names
    the benchmark's matcher itself. Where the run used another matcher, or ranked answers by
    likelihood, one info line says why `figure` is not given.

    Args:
        ctx: The metric's context (the run's spec).
        matcher: The benchmark's own matcher (its ``Benchmark.matcher``), e.g. ``mme``.
        figure: The figure, for the line: "MME's perception score".
        rule: Whose reading that matcher is, for the line: "MME's rule".

    Returns:
        True where the answers were generated and read with `matcher` (named, or as the
        benchmark's own under ``--matcher benchmark``).

    """
    formulate = ctx.spec.formulate
    # ``benchmark`` reads each row with the matcher `FormulateConfig.matchers` names for its
    # benchmark (`run.scoring.matcher_for`, a set's runs), lmmprobe's where it names none: this
    # benchmark's rows were read with `matcher` only where the map names it (a spec whose map
    # is empty or names another read them otherwise).
    by_benchmark = formulate.matcher == "benchmark" and matcher in formulate.matchers.values()
    if formulate.method == "generate" and (formulate.matcher == matcher or by_benchmark):
        return True
    if formulate.method != "generate":
        reading = f"ranked by --method {formulate.method}"
    elif formulate.matcher == "benchmark":
        reading = "read with --matcher benchmark, whose map of matchers names no such reading"
    else:
        reading = f"read with --matcher {formulate.matcher}"
    log.info("%s not given: answers %s, not %s (--matcher %s)", figure, reading, rule, matcher)
    return False


def answer_text(score: Score) -> str:
    """The answer an official metric reads: the raw text, stripped (see the module docstring)."""
    return (score.prediction_text or "").strip()


def gold(score: Score) -> str:
    """The gold answer text: the first reference of an open-ended row, else the gold option."""
    value = score.gold
    return value[0] if isinstance(value, list) and value else score.gold_text


def references(score: Score) -> list[str]:
    """Every reference text of an open-ended row.

    Raises:
        ValueError: The row's gold answer is no list of reference texts (a choice index).

    """
    value = score.gold
    if not isinstance(value, list) or not value:
        # Shortened: both are outside text. (A sample read from data is checked when it is
        # read, `lmmprobe.schema.benchmark.tag_problem`; this stays for rows stored before.)
        name = score.benchmark_name or ""
        raise ValueError(
            f"sample {score.sample_id[:80]!r}: {name[:80]} scores open-ended "
            f"answers against reference texts, but its gold answer is {str(value)[:80]!r}"
        )
    return value


def bootstrap_value(
    ctx: MetricContext,
    value: float | None,
    n: int,
    clusters: Sequence[Hashable],
    columns: npt.ArrayLike,
    statistic: Callable[[FloatArray], FloatArray],
) -> MetricValue:
    """A metric's value with the cluster-bootstrap interval of a statistic of per-row sums.

    Args:
        ctx: The metric's context (resamples and seed).
        value: The point value (computed by the metric's own rule, so it stays exact).
        n: The rows it is computed over.
        clusters: Each row's cluster (its sample): rows of one cluster are drawn together.
        columns: ``(rows, k)`` per-row values the statistic sums.
        statistic: Maps resampled sums ``(b, k)`` to the statistic ``(b,)``; NaN drops a
            resample on which it is undefined.

    Returns:
        The value with its interval; no interval when the value is None, ``spec.bootstrap``
        is 0 or no resample is defined.

    """
    if value is None or ctx.n_boot == 0 or not clusters:
        return MetricValue(value, None, None, n)
    index: dict[Hashable, int] = {}
    where = np.array([index.setdefault(c, len(index)) for c in clusters])
    per_row = np.asarray(columns, dtype=np.float64).reshape(len(where), -1)
    sums = np.zeros((len(index), per_row.shape[1]))
    np.add.at(sums, where, per_row)

    def resampled(weights: WeightArray) -> FloatArray:
        return np.asarray(statistic(weights @ sums), dtype=np.float64).reshape(-1, 1)

    rng = np.random.default_rng(ctx.seed)
    low, high = percentile_interval(bootstrap_distribution(resampled, len(index), ctx.n_boot, rng))
    return MetricValue(value, finite_or_none(low[0]), finite_or_none(high[0]), n)


def mean_value(ctx: MetricContext, rows: Sequence[Score], values: Sequence[float]) -> MetricValue:
    """Mean of per-row values, with a cluster bootstrap over samples (repeats stay together).

    Args:
        ctx: The metric's context.
        rows: The rows scored.
        values: Each row's value.

    Returns:
        The mean (None for no rows) and its interval.

    """
    return mean_of(ctx, [(s.sample_id, v) for s, v in zip(rows, values, strict=True)])


def mean_of(ctx: MetricContext, pairs: Sequence[tuple[str, float]]) -> MetricValue:
    """`mean_value` of (sample id, value) pairs: what a metric reduced its rows to.

    Args:
        ctx: The metric's context.
        pairs: Each scored row's sample id and value, in row order.

    Returns:
        The mean (None for no rows) and its interval.

    """
    if not pairs:
        return MetricValue(None, None, None, 0)
    clusters: dict[str, list[float]] = {}
    for sample_id, v in pairs:
        clusters.setdefault(sample_id, []).append(v)
    num = np.array([[sum(v)] for v in clusters.values()])
    den = np.array([[len(v)] for v in clusters.values()], dtype=float)
    low, high = ratio_intervals(num, den, ctx.n_boot, np.random.default_rng(ctx.seed))
    values = [v for _, v in pairs]
    return MetricValue(
        sum(values) / len(values), finite_or_none(low[0]), finite_or_none(high[0]), len(pairs)
    )


def per_row(
    tag: str, score: Callable[[Score], float]
) -> Callable[[MetricContext], MetricValue | None]:
    """An official metric that is the mean of a per-row score over its benchmark's rows.

    Args:
        tag: The metric's name, which its benchmarks' rows carry (`Score.official_metric`).
        score: One answered row's score (1.0 right, 0.0 wrong, or a partial credit).

    Returns:
        The metric's compute function: None where no row is tagged `tag`.

    """

    def extract(s: Score, spec: RunSpec) -> tuple[str, float] | None:
        return (s.sample_id, score(s)) if is_answer(s, tag) else None

    name = f"official:{tag}"
    row_extract(name, tagged_in(tag))(extract)

    def compute(ctx: MetricContext) -> MetricValue | None:
        if tag not in ctx.summary.tags:
            return None
        return mean_of(ctx, ctx.records(name))

    return compute


def is_answer(s: Score, tag: str) -> bool:
    """Whether `s` is a row `answered` gives for `tag`: tagged `tag`, no failed request."""
    return s.official_metric == tag and s.error_type is None and s.stage != "error"


def tagged_in(tag: str) -> Callable[[RowSummary, RunSpec], bool]:
    """A `RowExtract`'s ``applies`` for the rows of official metric `tag`."""

    def applies(summary: RowSummary, spec: RunSpec) -> bool:
        return tag in summary.tags

    return applies
