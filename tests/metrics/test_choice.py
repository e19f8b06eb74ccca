import random
from typing import Any

import numpy as np
import pytest

from lmmprobe.metrics import (
    METRIC_NAMES,
    MISSING,
    MetricValue,
    bootstrap,
    breakdown,
    sample_profiles,
    summarize,
)
from lmmprobe.metrics.bootstrap import weight_chunks
from lmmprobe.metrics.choice import AnswerSums, _build_table, _point_values, _profiles, _statistics
from lmmprobe.schema import Score
from lmmprobe.schema.rows import chunk_of_scores


def row(
    sid: str,
    correct: bool | None = True,
    *,
    repeat: int = 0,
    stage: str = "mark",
    gold: int | list[str] = 0,
    gold_text: str = "yes",
    error: str | None = None,
    offered: bool = False,
    abstained: bool = False,
    metadata: dict[str, Any] | None = None,
) -> Score:
    if error is not None:
        stage, correct = "error", None
    return Score(
        model="m",
        sample_id=sid,
        repeat=repeat,
        key=f"{sid}-{repeat}",
        stage=stage,
        correct=correct,
        format_hit=stage in {"mark", "text", "likelihood"},
        gold=gold,
        gold_text=gold_text,
        abstain_offered=offered,
        abstained=abstained,
        error_type=error,
        metadata=metadata or {},
    )


def accuracy_rows(n: int, share_correct: float, prefix: str = "s") -> list[Score]:
    n_correct = round(n * share_correct)
    return [row(f"{prefix}{i}", i < n_correct) for i in range(n)]


def width(m: MetricValue) -> float:
    assert m.low is not None and m.high is not None
    return m.high - m.low


def test_errors_excluded_from_answers_but_counted_in_error_rate() -> None:
    rows = [row("a"), row("b"), row("c"), row("d", False)]
    rows += [row("e", error="timeout"), row("f", error="rate_limit")]
    out = summarize(rows, n_boot=0)
    assert out["accuracy"].value == pytest.approx(0.75)
    assert out["accuracy"].n == 4
    assert out["format_hit_rate"].n == 4
    assert out["unparsed_rate"].n == 4
    assert out["balanced_accuracy"].n == 4
    assert out["error_rate"].value == pytest.approx(2 / 6)
    assert out["error_rate"].n == 6


def test_error_stage_row_is_never_an_answer() -> None:
    # An error row must not become a wrong answer, even if its fields look like one.
    failed = Score(
        model="m",
        sample_id="x",
        repeat=0,
        key="k",
        stage="error",
        correct=False,
        gold=0,
        gold_text="yes",
        error_type="internal",
        abstain_offered=True,
    )
    out = summarize([row("a"), failed], n_boot=0)
    assert out["accuracy"].value == 1.0
    assert out["abstention_rate"].value is None
    assert out["error_rate"].value == 0.5


def test_all_rows_failed() -> None:
    out = summarize([row("a", error="timeout"), row("b", error="budget")], n_boot=50)
    assert out["error_rate"].value == 1.0
    for name in ("accuracy", "balanced_accuracy", "format_hit_rate", "unparsed_rate"):
        assert out[name] == MetricValue(None, None, None, 0)


def test_unparsed_counts_as_incorrect() -> None:
    rows = [
        row("a"),
        row("b"),
        row("c", False, stage="unparsed"),
        row("d", False, stage="unparsed"),
    ]
    out = summarize(rows, n_boot=0)
    assert out["accuracy"].value == pytest.approx(0.5)
    assert out["unparsed_rate"].value == pytest.approx(0.5)
    assert out["format_hit_rate"].value == pytest.approx(0.5)
    assert out["error_rate"].value == 0.0


def test_balanced_accuracy_on_imbalanced_classes() -> None:
    rows = [row(f"y{i}", True, gold=0, gold_text="yes") for i in range(8)]
    rows += [row(f"n{i}", False, gold=1, gold_text="no") for i in range(2)]
    out = summarize(rows, n_boot=0)
    assert out["accuracy"].value == pytest.approx(0.8)
    assert out["balanced_accuracy"].value == pytest.approx(0.5)
    assert out["balanced_accuracy"].n == 10


def test_balanced_accuracy_weighs_repeats_within_a_class() -> None:
    # Class "no": 3 of 4 rows right (one sample, 4 repeats); class "yes": 1 of 2.
    rows = [row("n", r < 3, repeat=r, gold=1, gold_text="no") for r in range(4)]
    rows += [row("y1", True, gold_text="yes"), row("y2", False, gold_text="yes")]
    out = summarize(rows, n_boot=0)
    assert out["balanced_accuracy"].value == pytest.approx((0.75 + 0.5) / 2)


def test_balanced_accuracy_ignores_open_ended_and_error_rows() -> None:
    rows = [row("c1", True, gold_text="red"), row("c2", False, gold_text="blue")]
    rows += [
        row(f"o{i}", False, stage="match", gold=["a cat"], gold_text="a cat") for i in range(3)
    ]
    rows += [row("e", error="timeout", gold_text="green")]
    out = summarize(rows, n_boot=0)
    assert out["accuracy"].value == pytest.approx(1 / 5)
    assert out["balanced_accuracy"].value == pytest.approx(0.5)
    assert out["balanced_accuracy"].n == 2


def test_balanced_accuracy_undefined_without_choice_rows() -> None:
    rows = [row(f"o{i}", i == 0, stage="match", gold=["ref"], gold_text="ref") for i in range(4)]
    out = summarize(rows, n_boot=100)
    assert out["accuracy"].value == pytest.approx(0.25)
    assert out["balanced_accuracy"] == MetricValue(None, None, None, 0)


def test_abstention_none_when_not_offered() -> None:
    out = summarize([row("a"), row("b", False)], n_boot=100)
    assert out["abstention_rate"] == MetricValue(None, None, None, 0)


def test_abstention_rate_over_rows_offered_unknown() -> None:
    rows = [row(f"o{i}", False, offered=True, abstained=(i == 0)) for i in range(4)]
    rows += [row("plain1"), row("plain2"), row("err", error="timeout")]
    out = summarize(rows, n_boot=0)
    assert out["abstention_rate"].value == pytest.approx(0.25)
    assert out["abstention_rate"].n == 4


def test_empty_input() -> None:
    out = summarize([])
    assert tuple(out) == METRIC_NAMES
    assert all(m == MetricValue(None, None, None, 0) for m in out.values())


def test_metric_names_and_to_dict() -> None:
    out = summarize(accuracy_rows(10, 0.5), n_boot=20)
    assert tuple(out) == METRIC_NAMES
    d = out["accuracy"].to_dict()
    assert set(d) == {"value", "low", "high", "n"}
    assert d["value"] == 0.5 and d["n"] == 10
    assert all(isinstance(d[k], float) for k in ("value", "low", "high"))


def test_n_boot_zero_gives_values_without_intervals() -> None:
    out = summarize(accuracy_rows(10, 0.7), n_boot=0)["accuracy"]
    assert out.value == pytest.approx(0.7)
    assert (out.low, out.high, out.n) == (None, None, 10)
    with pytest.raises(ValueError, match="n_boot"):
        summarize(accuracy_rows(3, 1.0), n_boot=-1)


def mixed_rows(n: int, seed: int = 0) -> list[Score]:
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        gold = rnd.randrange(3)
        for r in range(2):
            p = rnd.random()
            if p < 0.05:
                rows.append(row(f"s{i}", repeat=r, error="timeout", gold=gold))
            elif p < 0.12:
                rows.append(row(f"s{i}", False, repeat=r, stage="unparsed", gold=gold))
            elif p < 0.16:  # cut off before an answer: wrong, and in truncated_rate
                rows.append(row(f"s{i}", False, repeat=r, stage="truncated", gold=gold))
            else:
                rows.append(
                    row(
                        f"s{i}",
                        rnd.random() < 0.5 + 0.15 * gold,
                        repeat=r,
                        gold=gold,
                        gold_text=f"opt{gold}",
                        offered=i % 3 == 0,
                        abstained=i % 3 == 0 and rnd.random() < 0.2,
                    )
                )
    return rows


def test_interval_contains_point_value() -> None:
    out = summarize(mixed_rows(300), n_boot=500)
    for name, m in out.items():
        assert m.value is not None and m.low is not None and m.high is not None, name
        assert m.low <= m.value <= m.high, name
        assert m.low < m.high, name


def test_interval_narrows_with_more_samples() -> None:
    small = summarize(accuracy_rows(40, 0.6), n_boot=500)["accuracy"]
    large = summarize(accuracy_rows(400, 0.6), n_boot=500)["accuracy"]
    assert small.value == large.value == pytest.approx(0.6)
    # Ten times the samples: about a third of the width.
    assert width(large) < 0.5 * width(small)


def test_same_seed_same_interval_other_seed_other_interval() -> None:
    rows = mixed_rows(200)
    a = summarize(rows, n_boot=300, seed=1)
    b = summarize(rows, n_boot=300, seed=1)
    c = summarize(rows, n_boot=300, seed=2)
    assert a == b
    assert a["accuracy"].value == c["accuracy"].value
    assert (a["accuracy"].low, a["accuracy"].high) != (c["accuracy"].low, c["accuracy"].high)


def test_interval_does_not_depend_on_row_order() -> None:
    rows = mixed_rows(100)
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    assert summarize(rows, n_boot=200) == summarize(shuffled, n_boot=200)


def test_repeats_do_not_narrow_the_interval_like_new_samples() -> None:
    base = accuracy_rows(50, 0.6)
    as_repeats = [row(s.sample_id, s.correct, repeat=r) for s in base for r in range(4)]
    as_samples = [row(f"{s.sample_id}-{r}", s.correct) for s in base for r in range(4)]
    w_base = width(summarize(base, n_boot=1000)["accuracy"])
    w_repeats = width(summarize(as_repeats, n_boot=1000)["accuracy"])
    w_samples = width(summarize(as_samples, n_boot=1000)["accuracy"])
    # Identical repeats carry no new information: the resampled samples are the same.
    assert w_repeats == pytest.approx(w_base)
    assert w_samples < 0.7 * w_base


def _naive_cluster_intervals(
    rows: list[Score], n_boot: int, seed: int
) -> dict[str, tuple[float, float]]:
    """Percentile intervals of accuracy and balanced accuracy by explicit sample resampling."""
    ids = sorted({s.sample_id for s in rows})
    by_sample = {sid: [s for s in rows if s.sample_id == sid] for sid in ids}
    weights = np.concatenate(list(weight_chunks(len(ids), n_boot, np.random.default_rng(seed))))
    acc: list[float] = []
    bal: list[float] = []
    for w in weights:
        correct = answered = 0.0
        per_class: dict[str, list[float]] = {}
        for count, sid in zip(w, ids, strict=True):
            for s in by_sample[sid]:
                if s.error_type is not None:
                    continue
                answered += count
                correct += count * bool(s.correct)
                cls = per_class.setdefault(s.gold_text, [0.0, 0.0])
                cls[0] += count * bool(s.correct)
                cls[1] += count
        acc.append(correct / answered if answered else np.nan)
        ratios = [c / n for c, n in per_class.values() if n > 0]
        bal.append(float(np.mean(ratios)) if ratios else np.nan)
    intervals = {}
    for name, dist in (("accuracy", acc), ("balanced_accuracy", bal)):
        low, high = np.nanpercentile(dist, [2.5, 97.5])
        intervals[name] = (float(low), float(high))
    return intervals


def test_cluster_bootstrap_matches_explicit_sample_resampling() -> None:
    rows = mixed_rows(60, seed=5)
    assert _profiles(_build_table(rows)) is None  # too varied to collapse: samples are drawn
    out = summarize(rows, n_boot=200, seed=11)
    naive = _naive_cluster_intervals(rows, 200, seed=11)
    for name, (low, high) in naive.items():
        assert out[name].low == pytest.approx(low, abs=1e-6), name
        assert out[name].high == pytest.approx(high, abs=1e-6), name


def many_alike_rows(n: int, seed: int = 0) -> list[Score]:
    """Rows of many samples but few distinct profiles (class, verdict, offer, error)."""
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        gold = i % 4
        p = rnd.random()
        if p < 0.04:
            rows.append(row(f"s{i:05d}", error="timeout", gold=gold))
        elif p < 0.1:
            rows.append(row(f"s{i:05d}", False, stage="unparsed", gold=gold))
        else:
            correct = rnd.random() < 0.4 + 0.1 * gold
            offered = i % 2 == 0
            rows.append(
                row(
                    f"s{i:05d}",
                    correct,
                    gold=gold,
                    gold_text=f"opt{gold}",
                    offered=offered,
                    abstained=offered and not correct and rnd.random() < 0.3,
                )
            )
    return rows


def test_profile_statistics_equal_sample_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    # Collapse whatever the ratio, on rows with errors, unparsed rows (their gold text differs
    # from the option's, so those samples have cells in two classes), a class of one sample
    # and a sample whose repeats have different classes.
    monkeypatch.setattr(bootstrap, "CLUSTERS_PER_PROFILE", 1)
    rows = [
        *mixed_rows(150, seed=3),
        row("single", gold_text="only-one"),
        row("split", gold_text="opt0"),
        row("split", False, repeat=1, gold_text="opt1"),
    ]
    table = _build_table(rows)
    collapsed = _profiles(table)
    assert collapsed is not None
    small, profile, sizes = collapsed
    assert sizes.size < table.n_samples
    assert np.array_equal(np.bincount(profile), sizes)
    weights = np.concatenate(list(weight_chunks(table.n_samples, 300, np.random.default_rng(0))))
    # Plus resamples of nothing but the lone-class sample, or the split one: metrics undefined.
    alone = np.zeros((2, table.n_samples))
    alone[0, -2], alone[1, -1] = table.n_samples, table.n_samples  # ids sort as s..., single, split
    weights = np.concatenate([weights.astype(np.float64), alone])
    per_profile = weights @ np.eye(sizes.size)[profile]
    expected = _statistics(table, weights)
    assert np.isnan(expected).any()
    assert _statistics(small, per_profile) == pytest.approx(expected, nan_ok=True)


def test_profile_intervals_agree_with_sample_resampling(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = many_alike_rows(1500)
    assert _profiles(_build_table(rows)) is not None
    by_profile = summarize(rows, n_boot=2000, seed=1)
    monkeypatch.setattr(bootstrap, "CLUSTERS_PER_PROFILE", 10**9)  # never collapse
    assert _profiles(_build_table(rows)) is None
    by_sample = summarize(rows, n_boot=2000, seed=1)
    for name in METRIC_NAMES:
        a, b = by_profile[name], by_sample[name]
        assert a.value == b.value and a.n == b.n, name
        assert a.low is not None and a.high is not None and b.low is not None, name
        # The same bootstrap distribution: the ends agree within Monte Carlo error.
        assert a.low == pytest.approx(b.low, abs=0.1 * width(b)), name
        assert a.high == pytest.approx(b.high, abs=0.1 * width(b)), name


def test_profile_interval_does_not_depend_on_row_order() -> None:
    rows = many_alike_rows(1000)
    assert _profiles(_build_table(rows)) is not None
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    assert summarize(rows, n_boot=200) == summarize(shuffled, n_boot=200)


def test_resamples_without_denominator_are_dropped() -> None:
    # Only one of 30 samples offers "unknown": many resamples miss it and must be dropped,
    # not counted as 0 or NaN in the interval.
    rows = [*accuracy_rows(29, 0.5), row("offered", offered=True, abstained=True)]
    out = summarize(rows, n_boot=300)["abstention_rate"]
    assert out == MetricValue(1.0, 1.0, 1.0, 1)


def test_breakdown_groups_and_missing() -> None:
    rows = [
        row("a", True, metadata={"task": "ocr", "level": 10}),
        row("b", False, metadata={"task": "ocr", "level": 2}),
        row("c", True, metadata={"task": "count", "level": 2}),
        row("d", False, metadata={"task": "count"}),
        row("e", True, metadata={}),
    ]
    out = breakdown(rows, ["task", "level"], n_boot=50)
    assert list(out) == ["task", "level"]
    assert list(out["task"]) == ["count", "ocr", MISSING]
    assert list(out["level"]) == ["2", "10", MISSING]
    assert out["task"]["ocr"]["accuracy"].value == 0.5
    assert out["task"]["count"]["accuracy"].n == 2
    assert out["task"][MISSING]["accuracy"].value == 1.0
    assert out["level"]["2"]["accuracy"].value == 0.5
    assert out["level"][MISSING]["accuracy"].n == 2
    assert out["level"]["10"]["accuracy"].low == 1.0
    assert out["task"]["ocr"] == summarize(rows[:2], n_boot=50)


def test_breakdown_without_missing_rows_or_keys() -> None:
    rows = [row("a", metadata={"style": "photo"}), row("b", metadata={"style": "anime"})]
    out = breakdown(rows, ["style"], n_boot=0)
    assert list(out["style"]) == ["anime", "photo"]
    assert out["style"]["anime"]["accuracy"].low is None
    assert breakdown(rows, []) == {}
    assert breakdown([], ["style"]) == {"style": {}}


def _sorted_rows(n: int, seed: int, most_repeats: int) -> list[Score]:
    """Rows in sample-id order, as the store gives them: repeats, errors, several classes."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        for repeat in range(rng.randrange(1, most_repeats + 1)):
            roll = rng.random()
            stage = "unparsed" if roll > 0.9 else "mark"
            error = "timeout" if 0.85 < roll <= 0.9 else None
            rows.append(
                row(f"s{i:04d}", roll < 0.6, repeat=repeat, gold_text=rng.choice("abcd"),
                    stage=stage, error=error, offered=roll < 0.3, abstained=roll < 0.1)
            )  # fmt: skip
    return rows


@pytest.mark.parametrize(("n", "repeats", "size"), [(40, 3, 1), (40, 3, 7), (2000, 1, 64)])
def test_sums_of_rows_in_sample_order_equal_the_sums_of_the_rows_in_any_order(
    n: int, repeats: int, size: int
) -> None:
    """Rows in sample-id order, chunked anywhere (a sample split across chunks), give the
    figures and intervals of the same rows held whole (2000 samples: the profile bootstrap)."""
    rows = _sorted_rows(n, n, repeats)
    assert (_profiles(_build_table(rows)) is not None) == (n == 2000)
    whole = summarize(rows, n_boot=300, seed=5)
    streamed = AnswerSums(by_sample=True)
    for start in range(0, len(rows), size):
        streamed.add(chunk_of_scores(rows[start : start + size]))
    assert streamed.n_samples == n
    assert streamed.summarize(n_boot=300, seed=5) == whole
    shuffled = AnswerSums()
    mixed = rows[:]
    random.Random(1).shuffle(mixed)
    shuffled.add(chunk_of_scores(mixed))
    assert shuffled.summarize(n_boot=300, seed=5) == whole


def test_rows_said_to_come_in_sample_order_are_refused_out_of_it() -> None:
    sums = AnswerSums(by_sample=True)
    sums.add(chunk_of_scores([row("b"), row("b", repeat=1)]))
    with pytest.raises(ValueError, match="sample-id order"):
        sums.add(chunk_of_scores([row("a")]))
    with pytest.raises(ValueError, match="sample-id order"):
        AnswerSums(by_sample=True).add(chunk_of_scores([row("c"), row("b")]))


@pytest.mark.parametrize(
    ("seed", "limit", "size"), [(1, 1 << 14, 37), (2, 1 << 14, 500), (3, 6, 37)]
)
def test_samples_kept_as_profiles_give_the_per_sample_tables_figures(
    seed: int, limit: int, size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows in sample-id order are kept as profile numbers (`SampleProfiles`): the point
    values, the table over the profiles and so the intervals are the per-sample table's,
    float for float, with samples of several gold classes (each a profile of its own), a
    class met in one sample only, errors and repeats; past the profile limit the sums go back
    to per-sample arrays and still give them."""
    monkeypatch.setattr(sample_profiles, "PROFILE_LIMIT", limit)
    rng = random.Random(seed)
    rows = []
    for i in range(3000):
        gold = "lonely" if i == 1234 else rng.choice("abc")
        for repeat in range(rng.randrange(1, 3)):
            roll = rng.random()
            text = rng.choice("xy") if roll > 0.995 else gold  # a second class now and then
            rows.append(
                row(f"s{i:05d}", roll < 0.6, repeat=repeat, gold_text=text,
                    error="timeout" if 0.97 < roll <= 0.98 else None, offered=roll < 0.2,
                    abstained=roll < 0.05)
            )  # fmt: skip
    sums = AnswerSums(by_sample=True)
    for start in range(0, len(rows), size):
        sums.add(chunk_of_scores(rows[start : start + size]))
    kept = sums.collapsed()
    assert (kept is not None) == (limit > 6)  # the profiles pay off, or were too many
    for n_boot in (0, 300):
        assert sums.summarize(n_boot=n_boot, seed=seed) == summarize(rows, n_boot=n_boot, seed=seed)
    if kept is not None:
        table = _build_table(rows)
        values, counts = _point_values(table)
        collapsed = _profiles(table)
        assert collapsed is not None
        small, sizes = kept[0], kept[1]
        assert np.array_equal(kept[2], values, equal_nan=True) and kept[3] == counts
        assert np.array_equal(sizes, collapsed[2]) and np.array_equal(
            small.totals, collapsed[0].totals
        )
        for got, want in zip(small.cells, collapsed[0].cells, strict=True):
            assert got.dtype == want.dtype and np.array_equal(got, want)
