"""Per-row plugin metrics (`row_metric`): one function of a row, an interval for free.

Accuracy written as a row metric must be `accuracy`, value and interval ends, for the run and
every ``--by`` group, from a plugin installed as a package and run by the console script, and
from a stored run's rows without a Score built.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from tests.console import lmmprobe
from tests.plugin_dist import install_plugin
from tests.report.test_stored_results_parity import VARIED, _store_run

from lmmprobe.metrics import (
    MetricContext,
    MetricValue,
    Row,
    compute_metrics,
    group_by,
    row_metric,
    summarize,
)
from lmmprobe.metrics.reduction import CachedRows, GroupRows
from lmmprobe.metrics.row_metric import row_metric_value
from lmmprobe.metrics.run_metric import RUN_METRICS
from lmmprobe.report import build_results
from lmmprobe.schema import RunSpec, Score, ScoreRows
from lmmprobe.store import Store

PLUGIN = '''
from lmmprobe.metrics import Row, row_metric


@row_metric("row_accuracy")
def row_accuracy(row: Row) -> float | None:
    """Accuracy, written as a row metric."""
    if not row.answered or row.correct is None:
        return None
    return float(row.correct)
'''


def _accuracy(row: Row) -> float | None:
    if not row.answered or row.correct is None:
        return None
    return float(row.correct)


@pytest.fixture
def row_accuracy() -> Iterator[str]:
    metric = row_metric("test_row_accuracy", summary="accuracy as a row metric")(_accuracy)
    yield metric.name
    RUN_METRICS.unregister(metric.name)


def _install(root: Path) -> Path:
    """The plugin as pip installs a package with a ``lmmprobe.metrics`` entry point."""
    return install_plugin(
        root, "row-acc-xyz", "0.1", PLUGIN,
        {"lmmprobe.metrics": {"row_accuracy": "row_acc_xyz:row_accuracy"}},
    )  # fmt: skip


def test_an_installed_row_metric_equals_accuracy_with_its_interval(tmp_path: Path) -> None:
    plugins = _install(tmp_path / "plugins")
    path = os.pathsep.join([str(plugins), os.environ.get("PYTHONPATH", "")])
    out = tmp_path / "out"
    proc = lmmprobe(
        "run", "-m", "random", "-m", "first", "-d", "demo,n=40", "--repeats", "3",
        "--by", "subtask", "--bootstrap", "300", "--seed", "5",
        "--db", tmp_path / "db", "--out", out, PYTHONPATH=path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    compared = 0
    for model, entry in results["models"].items():
        got, want = entry["metrics"]["row_accuracy"], entry["metrics"]["accuracy"]
        assert got == want, model
        assert got["low"] is not None and got["low"] < got["high"]
        for label, metrics in entry["breakdown"]["subtask"].items():
            assert metrics["row_accuracy"] == metrics["accuracy"], (model, label)
            compared += 1
    assert compared >= 4
    assert "row_accuracy" in proc.stdout  # a headline column of the terminal table
    listed = lmmprobe("list", "metrics", PYTHONPATH=path)
    assert "row_accuracy" in listed.stdout and "row-acc-xyz" in listed.stdout


def test_stored_rows_with_errors_and_groups_give_accuracy(
    tmp_path: Path, row_accuracy: str
) -> None:
    # Errors, unparsed and truncated answers, open-ended rows, repeats, list-valued groups.
    store, outcome = _store_run(tmp_path / "s.db", **VARIED["varied"])  # type: ignore[arg-type]
    with store:
        rows = {mo.spec: store.rows("r1", mo.spec) for mo in outcome.models}
        results = build_results(outcome.record(), rows=rows)
    for model in results.models.values():
        assert model.metrics[row_accuracy] == model.metrics["accuracy"]
        for key, groups in model.breakdown.items():
            for label, metrics in groups.items():
                assert metrics[row_accuracy] == metrics["accuracy"], (key, label)


def test_a_row_metric_builds_no_score(
    tmp_path: Path, row_accuracy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, outcome = _store_run(tmp_path / "s.db", **VARIED["plain"])  # type: ignore[arg-type]

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a Score was built")

    monkeypatch.setattr(Store, "model_scores", refuse)
    monkeypatch.setattr(Store, "iter_score_rows", refuse)
    with store:
        got = compute_metrics(store.rows("r1", "model-0"), outcome.spec)
    assert got[row_accuracy].value == got["accuracy"].value
    assert got[row_accuracy].n == got["accuracy"].n


def test_many_samples_draw_per_profile_and_keep_the_interval() -> None:
    # 4,000 samples of two kinds: both the answer rates and the row metric draw per profile
    # (other random numbers, the same bootstrap distribution), so the ends agree closely.
    scores = [
        Score(model="m", sample_id=f"s{i:05d}", repeat=0, key=f"k{i}", gold=0, gold_text="a",
              stage="mark", correct=i % 3 == 0, format_hit=True)
        for i in range(4000)
    ]  # fmt: skip
    want = summarize(scores, n_boot=400, seed=1)["accuracy"]
    got = row_metric_value(ScoreRows(scores), "acc", _accuracy, n_boot=400, seed=1)
    assert got is not None and want.low is not None and want.high is not None
    assert (got.value, got.n) == (want.value, want.n)
    assert got.low == pytest.approx(want.low, abs=0.01)
    assert got.high == pytest.approx(want.high, abs=0.01)


def test_a_row_metric_reads_metadata_and_skips_rows() -> None:
    scores = [
        Score(model="m", sample_id=f"s{i}", repeat=r, key=f"k{i}{r}", gold=0, gold_text="a",
              stage="mark", correct=True, metadata={"weight": i} if i else {})
        for i in range(3) for r in range(2)
    ]  # fmt: skip

    def weight(row: Row) -> float | None:
        return row.metadata.get("weight")

    # A key not asked for is not shown, whatever the chunk carries (a --by key, say).
    assert row_metric_value(ScoreRows(scores), "w", weight, n_boot=0) is None

    got = row_metric_value(ScoreRows(scores), "w", weight, keys=["weight"], n_boot=0)
    assert got == MetricValue(1.5, None, None, 4)  # s0 lacks the key: its rows are left out
    # numpy's scalars and bools are numbers too.
    got = row_metric_value(ScoreRows(scores), "n", lambda row: np.int64(2), n_boot=0)
    assert got == MetricValue(2.0, None, None, 6)
    got = row_metric_value(ScoreRows(scores), "b", lambda row: row.repeat == 0, n_boot=0)
    assert got == MetricValue(0.5, None, None, 6)
    assert row_metric_value(ScoreRows(scores), "w", lambda row: None, n_boot=10) is None


@pytest.mark.parametrize(
    ("value", "error", "said"),
    [
        ("yes", TypeError, "returned str 'yes': return a number, or None"),
        (float("nan"), ValueError, "returned nan: return a finite number"),
    ],
)
def test_a_bad_value_names_the_metric_and_the_row(
    value: object, error: type[Exception], said: str
) -> None:
    scores = [
        Score(model="m", sample_id="s7", repeat=2, key="k", gold=0, gold_text="a", stage="mark")
    ]
    with pytest.raises(error) as info:
        row_metric_value(ScoreRows(scores), "bad", lambda row: value, n_boot=0)  # type: ignore[arg-type,return-value]
    assert f"row metric 'bad' on sample 's7' repeat 2 {said}" in str(info.value)


def test_an_error_inside_the_function_keeps_its_type_and_says_where() -> None:
    scores = [
        Score(model="m", sample_id="s7", repeat=0, key="k", gold=0, gold_text="a", stage="mark")
    ]

    def broken(row: Row) -> float:
        return 1 / 0

    with pytest.raises(ZeroDivisionError) as info:
        row_metric_value(ScoreRows(scores), "broken", broken, n_boot=0)
    assert "in row metric 'broken' on sample 's7'" in "".join(info.value.__notes__)


def test_the_spec_seed_and_resamples_are_the_answer_rates(row_accuracy: str) -> None:
    scores = [
        Score(model="m", sample_id=f"s{i}", repeat=r, key=f"k{i}{r}", gold=0,
              gold_text="abc"[i % 3], stage="mark", correct=(i * r) % 4 != 1)
        for i in range(30) for r in range(2)
    ]  # fmt: skip
    for seed in (0, 9):
        spec = RunSpec(bootstrap=150, seed=seed)
        got = compute_metrics(scores, spec)
        assert got[row_accuracy] == got["accuracy"]
    spec = RunSpec(bootstrap=0)
    assert compute_metrics(scores, spec)[row_accuracy].low is None


def test_the_run_and_its_groups_come_from_one_pass_and_equal_their_own_rows(tmp_path: Path) -> None:
    # A fractional value (tokens / 7), list-valued and missing keys: each group's figure is the
    # one its own rows give read alone, and the function runs once per row.
    store, outcome = _store_run(tmp_path / "s.db", **VARIED["varied"])  # type: ignore[arg-type]
    calls: list[int] = []

    def per_token(row: Row) -> float | None:
        calls.append(1)
        return None if row.completion_tokens is None else row.completion_tokens / 7

    metric = row_metric("test_per_token", summary="tokens / 7")(per_token)
    try:
        with store:
            rows = {mo.spec: store.rows("r1", mo.spec) for mo in outcome.models}
            source = rows["model-1"]
            results = build_results(outcome.record(), rows=rows)
            model = results.models["model-1"]
            # Once a row of every model: the run's and every group's sums from one pass.
            assert len(calls) == sum(len(mo.scores) for mo in outcome.models)
            parent = CachedRows(source)
            for key, groups in model.breakdown.items():
                assert set(groups) == set(group_by(outcome.models[1].scores, key))
                for label, metrics in groups.items():
                    alone = row_metric_value(
                        GroupRows(parent, key, label), "alone", per_token,
                        n_boot=outcome.spec.bootstrap, seed=outcome.spec.seed,
                    )  # fmt: skip
                    assert metrics[metric.name] == alone, (key, label)
                    # A group's context on its own (no run computed first): one pass for it.
                    ctx = MetricContext(GroupRows(CachedRows(source), key, label), outcome.spec)
                    assert metric.compute(ctx) == alone, (key, label)
    finally:
        RUN_METRICS.unregister(metric.name)
