"""Run-level metrics are registry entries: a new one is one decorated function."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lmmprobe import evaluate
from lmmprobe.metrics import (
    RUN_METRICS,
    MetricContext,
    MetricValue,
    compute_metrics,
    headline_metrics,
    run_metric,
    run_metrics,
    summarize,
)
from lmmprobe.schema import RunSpec
from lmmprobe.store import Store


@pytest.fixture
def first_option_rate() -> Iterator[str]:
    """A plugin-style metric: share of answers that picked the first option shown."""

    @run_metric("first_option_rate", summary="Answers picking option A.", label="picks A")
    def compute(ctx: MetricContext) -> MetricValue | None:
        answered = [s for s in ctx.scores if s.error_type is None and s.prediction is not None]
        if not answered:
            return None
        picks = sum(s.prediction == 0 for s in answered)
        return MetricValue(picks / len(answered), None, None, len(answered))

    yield compute.name
    RUN_METRICS.unregister(compute.name)


def test_builtins_are_listed_in_column_order_with_summaries() -> None:
    names = [m.name for m in run_metrics()]
    # The terminal table's order before metrics were registered: abstention after errors; the
    # truncated rate (issue 25) right after the unparsed rate.
    assert names[:7] == ["accuracy", "balanced_accuracy", "format_hit_rate", "unparsed_rate",
                         "truncated_rate", "error_rate", "abstention_rate"]  # fmt: skip
    assert {"instability", "circular_accuracy", "BLEU-4", "CIDEr", "freeform_score"} <= set(names)
    assert all(RUN_METRICS.summary(n) for n in names)
    headline = [m.name for m in headline_metrics()]
    assert "BLEU-4" in headline and "BLEU-1" not in headline  # BLEU-1..3 only in results.json


def test_answer_rates_are_summarize_and_others_apply_only_when_defined(tmp_path: Path) -> None:
    from lmmprobe.run import execute_run

    spec = RunSpec(models=["random"], data="demo,n=12", bootstrap=20, db=str(tmp_path / "db"))
    outcome = execute_run(spec)
    with Store(tmp_path / "db") as store:  # a run keeps no Scores: they are in the store
        scores = store.model_scores(outcome.run_id, "random")
    got = compute_metrics(scores, spec)
    assert {k: got[k] for k in summarize(scores)} == summarize(scores, n_boot=20, seed=0)
    # Asked once, no circular evaluation, no captions or free-form rows: nothing else applies.
    assert set(got) == set(summarize(scores))


def test_a_new_metric_reaches_results_markdown_and_the_cli(
    first_option_rate: str, tmp_path: Path
) -> None:
    ev = evaluate(models=["first", "random"], data="demo,n=16", by=["subtask"], bootstrap=0,
                  db=str(tmp_path / "db"), out=str(tmp_path / "o"))  # fmt: skip
    first = ev.results.models["first"]
    assert first.metrics[first_option_rate].value == 1.0  # "first" always answers option A
    assert first_option_rate in first.breakdown["subtask"]["color"]
    assert first_option_rate in (tmp_path / "o" / "results.md").read_text()

    from lmmprobe.cli.main import app

    res = CliRunner().invoke(app, ["show", ev.run_id, "--db", str(tmp_path / "db")])
    assert res.exit_code == 0, res.output
    assert "picks A" in res.output


def test_per_group_false_metrics_skip_breakdown_groups(tmp_path: Path) -> None:
    calls: list[str | None] = []

    @run_metric("whole_run_only", summary="Counts calls.", per_group=False, headline=False)
    def compute(ctx: MetricContext) -> MetricValue | None:
        calls.append(ctx.group)
        return MetricValue(float(len(ctx.scores)), None, None, len(ctx.scores))

    try:
        ev = evaluate(models=["first"], data="demo,n=8", by=["subtask"], bootstrap=0,
                      db=str(tmp_path / "db"), out=str(tmp_path / "o"))  # fmt: skip
    finally:
        RUN_METRICS.unregister("whole_run_only")
    assert calls == [None]
    assert ev.results.models["first"].metrics["whole_run_only"].value == 8.0
    assert "whole_run_only" not in (tmp_path / "o" / "results.md").read_text()  # not headline


def test_columns_come_by_family_in_family_order() -> None:
    from lmmprobe.metrics.run_metric import FAMILIES

    metrics = run_metrics()
    families = [m.family for m in metrics]
    # Each family's columns sit together, families in the order FAMILIES gives.
    runs = [f for i, f in enumerate(families) if i == 0 or families[i - 1] != f]
    assert runs == [f for f in FAMILIES if f in families]
    # Within a family no two metrics share a position (ties would fall back to names).
    for family in FAMILIES:
        orders = [m.order for m in metrics if m.family == family]
        assert len(orders) == len(set(orders)), family
    names = [m.name for m in metrics]
    # The official scores of choice benchmarks, then of open-ended ones, never interleaved.
    assert names.index("mathvista_accuracy") < names.index("vqa_accuracy")
    assert names.index("mme_perception") < names.index("mme_cognition") < names.index("pope_f1")
    assert names[names.index("hallusionbench_qacc") + 1] == "hallusionbench_facc"


def test_a_plugin_metric_sits_in_its_family_or_after_the_builtins() -> None:
    @run_metric("answered_twice", summary="test", family="answers", order=99)
    def in_answers(ctx: MetricContext) -> MetricValue | None:
        return None

    @run_metric("own_family_metric", summary="test")
    def own(ctx: MetricContext) -> MetricValue | None:
        return None

    try:
        names = [m.name for m in run_metrics()]
    finally:
        RUN_METRICS.unregister("answered_twice")
        RUN_METRICS.unregister("own_family_metric")
    assert names[names.index("abstention_rate") + 1] == "answered_twice"
    assert names[-1] == "own_family_metric"
