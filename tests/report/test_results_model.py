"""results.json is the dump of a typed, versioned `Results`; older files migrate, newer ones are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lmmprobe import evaluate
from lmmprobe.metrics import MetricValue
from lmmprobe.report import (
    FORMAT_VERSION,
    Results,
    ResultsFormatError,
    load_report_data,
    load_results,
    render_markdown,
)
from lmmprobe.schema import RunSpec

BASELINE = Path(__file__).parents[1] / "invariants" / "baseline"
# Every results.json written before results were versioned: the invariant baselines still in
# that form, and (in v1/) the ones re-recorded since, kept as they were for this test.
VERSION_1 = sorted(
    p for p in BASELINE.rglob("*.results.json") if '"format_version"' not in p.read_text()
)


def test_results_json_is_the_models_dump_and_reads_back(tmp_path: Path) -> None:
    ev = evaluate(models=["random", "first"], data="demo,n=20", by=["subtask"], repeats=2,
                  db=str(tmp_path / "db"), out=str(tmp_path / "o"), bootstrap=50)  # fmt: skip
    assert isinstance(ev.results, Results)
    text = ev.results_json.read_text(encoding="utf-8")
    assert text == ev.results.model_dump_json(indent=2) + "\n"
    back = load_results(ev.results_json)
    assert back == ev.results
    assert json.loads(text)["format_version"] == FORMAT_VERSION
    acc = back.models["first"].metrics["accuracy"]
    assert isinstance(acc, MetricValue) and acc.n == 40
    assert set(back.models["first"].breakdown["subtask"]) == {"color", "color_tf", "count", "shape"}
    assert back.spec.repeats == 2 and back.spec.by == ["subtask"]


@pytest.mark.parametrize("path", VERSION_1, ids=lambda p: p.name)
def test_version_1_files_migrate_without_losing_a_value(path: Path) -> None:
    before = json.loads(path.read_text(encoding="utf-8"))
    assert "format_version" not in before  # written before results were versioned
    results = load_results(path)
    assert results.format_version == FORMAT_VERSION
    after = json.loads(results.model_dump_json())
    assert after.pop("format_version") == FORMAT_VERSION
    # Spec fields added since (where requests run) read as their defaults; nothing else moves.
    defaults = RunSpec().model_dump(mode="json")
    added_since = ("executor", "replicas", "gpus_per_replica", "cpus_per_replica", "prices")
    for added in (*added_since, "max_cost"):
        assert added not in before["spec"]
        assert after["spec"].pop(added) == defaults[added]
    # ...and the per-benchmark matchers of the matcher ``benchmark`` (a set's runs)
    assert "matchers" not in before["spec"]["formulate"]
    assert after["spec"]["formulate"].pop("matchers") == defaults["formulate"]["matchers"] == {}
    for model in after["models"].values():  # counted since: answers a key was taken out of
        assert "redacted" not in before["models"]["random"]["stats"]
        assert model["stats"].pop("redacted") == 0
        # ...and requests a backend's own budget refused unsent (retest 3, item 6)
        assert "refused" not in before["models"]["random"]["stats"]
        assert model["stats"].pop("refused") == 0
    assert after == before
    # The Markdown is rendered from the typed object as for a new run.
    md = render_markdown(results)
    assert f"# lmmprobe run {before['run_id']}" in md and "balanced_accuracy" in md


def test_a_run_folder_with_a_version_1_file_is_reported(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.json").write_text((BASELINE / "demo.results.json").read_text())
    data = load_report_data([folder], db=tmp_path / "no.db", samples=False)
    (run,) = data.runs
    assert run.results is not None and run.spec.data == "demo"
    assert [e.model for e in data.entries] == ["random", "first"]


def test_a_newer_version_is_refused_naming_file_and_versions(tmp_path: Path) -> None:
    doc = json.loads((BASELINE / "demo.results.json").read_text(encoding="utf-8"))
    path = tmp_path / "results.json"
    path.write_text(json.dumps({**doc, "format_version": FORMAT_VERSION + 1}))
    with pytest.raises(ResultsFormatError) as err:
        load_results(path)
    msg = str(err.value)
    assert str(path) in msg and f"version {FORMAT_VERSION + 1}" in msg
    assert f"up to {FORMAT_VERSION}" in msg and "upgrade lmmprobe" in msg


def test_a_broken_file_names_the_field(tmp_path: Path) -> None:
    doc = json.loads((BASELINE / "demo.results.json").read_text(encoding="utf-8"))
    doc["models"]["first"]["metrics"]["accuracy"]["n"] = "many"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultsFormatError, match=r"models\.first\.metrics\.accuracy\.n"):
        load_results(path)
    path.write_text("[1, 2]")
    with pytest.raises(ResultsFormatError, match="JSON object"):
        load_results(path)
