"""``lmmprobe --version``, ``lmmprobe runs`` and ``lmmprobe compare`` (issue 15, item 8).

Every test goes through the installed console script in a subprocess, as a user would; the
figures are checked against what the store and ``results.json`` hold, recomputed here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lmmprobe._version import __version__
from lmmprobe.store import Store
from lmmprobe.testing.openai_server import FakeOpenAIServer, FaultPlan


def _lmmprobe(*args: str | Path, columns: int = 80) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {**os.environ, "COLUMNS": str(columns), "OPENAI_API_KEY": "test-key"}
    return subprocess.run(
        [exe, *map(str, args)], capture_output=True, text=True, timeout=300, env=env, check=False
    )


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def _run(db: Path, out: Path, *args: str) -> dict[str, Any]:
    _ok(_lmmprobe("run", *args, "-q", "--db", db, "--out", out))
    return json.loads((out / "results.json").read_text())


@pytest.fixture(scope="module")
def two_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """Run A (random and first) and, later, run B (first only) on the same 40 demo samples."""
    tmp = tmp_path_factory.mktemp("runs")
    db = tmp / "db"
    a = _run(db, tmp / "a", "-m", "random", "-m", "first", "-d", "demo,n=40")
    b = _run(db, tmp / "b", "-m", "first", "-d", "demo,n=40")
    return db, a, b


def _paired(db: Path, run_a: str, model_a: str, run_b: str, model_b: str) -> list[tuple[int, int]]:
    """(A right, B right) per sample both scored without an error, from the store itself."""
    with Store(db) as store:
        rows = {
            (r["run"], r["model"], r["sample_id"]): r
            for run in {run_a, run_b}
            for r in ({**x, "run": run} for x in store.iter_score_rows(run))
        }
    out = []
    for (run, model, sid), x in sorted(rows.items()):
        if (run, model) != (run_a, model_a):
            continue
        y = rows.get((run_b, model_b, sid))
        if y is None or x["error_type"] or y["error_type"]:
            continue
        out.append((int(x["correct"]), int(y["correct"])))
    return out


def test_version() -> None:
    proc = _lmmprobe("--version")
    assert _ok(proc).strip() == f"lmmprobe {__version__}"


def test_runs_lists_newest_first_with_accuracy_per_model(two_runs) -> None:
    db, a, b = two_runs
    got = json.loads(_ok(_lmmprobe("runs", "--db", db, "--format", "json")))
    assert [r["id"] for r in got] == [b["run_id"], a["run_id"]]
    newest, older = got
    assert newest["models"] == ["first"] and older["models"] == ["random", "first"]
    assert newest["status"] == "complete" and newest["data"] == "demo,n=40" and newest["n"] == 40
    for listed, results in ((newest, b), (older, a)):
        for model, r in results["models"].items():
            assert listed["accuracy"][model] == pytest.approx(r["metrics"]["accuracy"]["value"])
    assert newest["created"] >= older["created"]

    table = _ok(_lmmprobe("runs", "--db", db))
    assert table.index(b["run_id"]) < table.index(a["run_id"])
    first_acc = f"{a['models']['first']['metrics']['accuracy']['value']:.3f}"
    assert any(first_acc in line and "first" in line for line in table.splitlines())
    limited = json.loads(_ok(_lmmprobe("runs", "--db", db, "-f", "json", "--limit", "1")))
    assert [r["id"] for r in limited] == [b["run_id"]]


def test_runs_reads_at_80_columns_with_long_specs(tmp_path: Path) -> None:
    db = tmp_path / "db"
    long_model = "openai:fake-vlm@http://127.0.0.1:44397/v1,max_requests=4,timeout=30"
    long_data = "/home/someone/datasets/a/very/long/folder/name/of/questions/file.jsonl"
    with Store(db) as store:  # a run as another machine left it: only its rows are needed
        store.create_run(
            "20261123-200739-38e361", {"models": [long_model, "random"], "data": long_data}, "o"
        )
        store.update_run(
            "20261123-200739-38e361",
            status="complete_with_errors",
            results={
                "data": {"samples": 12345},
                "models": {
                    long_model: {"metrics": {"accuracy": {"value": 0.625}}},
                    "random": {"metrics": {"accuracy": {"value": 0.25}}},
                },
            },
        )
    out = _ok(_lmmprobe("runs", "--db", db, columns=80))
    lines = out.splitlines()
    # Everything but the legend (the spec whole on its own line) fits in 80 columns.
    assert all(len(line) <= 80 for line in lines if " = openai:" not in line), out
    assert any("20261123-200739-38e361" in line for line in lines)  # the id whole on one line
    # Each figure is whole, on the line of its model's short label; the spec whole below.
    assert any("0.625" in line and "fake-vlm" in line for line in lines), out
    assert any("0.250" in line and "random" in line for line in lines), out
    assert f"  fake-vlm = {long_model}" in lines
    assert "12345" in out and "".join(x.strip() for x in lines).count("max_requests") == 1
    empty = _ok(_lmmprobe("runs", "--db", tmp_path / "none.db"))
    assert "no runs" in empty


def test_compare_two_models_of_one_run(two_runs) -> None:
    db, a, _ = two_runs
    run = a["run_id"]
    proc = _lmmprobe("compare", run, "-m", "random", "-m", "first", "--db", db, "-f", "json")
    got = json.loads(_ok(proc))
    pairs = _paired(db, run, "random", run, "first")
    x, y = np.array(pairs).T
    assert got["n"] == len(pairs) == 40
    assert got["accuracy_a"] == pytest.approx(a["models"]["random"]["metrics"]["accuracy"]["value"])
    assert got["accuracy_b"] == pytest.approx(a["models"]["first"]["metrics"]["accuracy"]["value"])
    assert got["difference"] == pytest.approx(x.mean() - y.mean())
    assert got["low"] <= got["difference"] <= got["high"] and got["level"] == 0.95
    only_a, only_b = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
    assert (got["a_only_correct"], got["b_only_correct"]) == (only_a, only_b)
    stats = pytest.importorskip("scipy.stats")
    assert got["mcnemar_p"] == pytest.approx(stats.binomtest(only_a, only_a + only_b).pvalue)
    assert got["agreement"] == pytest.approx(float((x == y).mean()))
    assert got["differ_total"] == only_a + only_b > 0
    assert len(got["differ"]) == min(20, only_a + only_b)
    assert all(d["a_correct"] == (d["a"] == d["gold"]) for d in got["differ"])
    # Seeded: the same call gives the same interval; the `runs compare` spelling is the same.
    again = _lmmprobe(
        "runs", "compare", run, "-m", "random", "-m", "first", "--db", db, "-f", "json"
    )
    assert json.loads(_ok(again)) == got
    # Two models and none named: the run's two are taken in order.
    assert json.loads(_ok(_lmmprobe("compare", run, "--db", db, "-f", "json"))) == got


def test_compare_table_at_80_columns(two_runs) -> None:
    db, a, _ = two_runs
    out = _ok(_lmmprobe("compare", a["run_id"], "--db", db, "--limit", "3"))
    assert all(len(line) <= 80 for line in out.splitlines()), out
    assert "95% CI" in out and "McNemar" in out and "agreement" in out
    assert "(first 3; --limit N for more)" in out
    assert out.count("✓") == 3 and out.count("✗") == 3


def test_compare_two_runs_same_model_and_across_models(two_runs) -> None:
    db, a, b = two_runs
    same = json.loads(_ok(_lmmprobe("compare", a["run_id"], b["run_id"], "--db", db, "-f", "json")))
    # Only `first` is in both runs; it answers the same questions the same way.
    assert (same["model_a"], same["model_b"]) == ("first", "first")
    assert same["difference"] == 0 and same["differ_total"] == 0 and same["mcnemar_p"] == 1.0
    assert same["same_data"] is True and same["agreement"] == 1.0
    across = _lmmprobe(
        "compare", a["run_id"], b["run_id"], "-m", "random", "-m", "first", "--db", db, "-f", "json"
    )
    got = json.loads(_ok(across))
    pairs = np.array(_paired(db, a["run_id"], "random", b["run_id"], "first"))
    assert got["difference"] == pytest.approx(pairs[:, 0].mean() - pairs[:, 1].mean())


def test_compare_refuses_what_it_cannot_compare(two_runs) -> None:
    db, a, b = two_runs
    missing = _lmmprobe("compare", a["run_id"], b["run_id"], "-m", "random", "--db", db)
    assert missing.returncode == 2
    assert f"run {b['run_id']} has no scores for model 'random'; it has: first" in " ".join(
        missing.stderr.split()
    )
    unknown = _lmmprobe("compare", "nosuchrun", "--db", db)
    assert unknown.returncode == 2 and "no run 'nosuchrun'" in unknown.stderr
    same = _lmmprobe("compare", b["run_id"], "--db", db)
    assert same.returncode == 2 and "name two of its models" in " ".join(same.stderr.split())
    for proc in (missing, unknown, same):
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2


def test_compare_leaves_errors_out_of_the_pairs(tmp_path: Path) -> None:
    db = tmp_path / "db"
    plan = FaultPlan(rate=0.5, kinds=("bad_request",), max_per_request=100)
    with FakeOpenAIServer(faults=plan) as server:
        spec = f"openai:fake-vlm@{server.base_url}"
        proc = _lmmprobe(
            "run",
            "-m",
            spec,
            "-m",
            "first",
            "-d",
            "demo,n=30",
            "-q",
            "--db",
            db,
            "--out",
            tmp_path / "o",
        )
    assert "Traceback" not in proc.stderr
    got = json.loads(
        _ok(_lmmprobe("compare", "latest", "-m", spec, "-m", "first", "--db", db, "-f", "json"))
    )
    with Store(db) as store:
        run = store.resolve_run("latest")
        errors = sum(
            1 for r in store.iter_score_rows(run) if r["model"] == spec and r["error_type"]
        )
    assert 0 < errors < 30
    assert got["left_out"] == {"error": errors} and got["n"] == 30 - errors
    pairs = np.array(_paired(db, run, spec, run, "first"))
    assert got["accuracy_a"] == pytest.approx(pairs[:, 0].mean())


def test_a_run_whose_results_are_not_json_lists_and_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    """One reader: the listing shows missing figures, commands reading the run refuse it."""
    db = tmp_path / "db"
    with Store(db) as store:
        store.create_run("edited", {"data": "demo,n=3", "models": ["random"]}, str(tmp_path))
        store.update_run("edited", status="complete", manifest={"data": {"samples": 3}})
        store.conn.execute("UPDATE runs SET results = '{bad' WHERE id = 'edited'")
    (listed,) = json.loads(_ok(_lmmprobe("runs", "--db", db, "--format", "json")))
    assert (listed["id"], listed["n"], listed["accuracy"]) == ("edited", 3, {"random": None})
    for command in (["show", "edited"], ["report", "edited", "-o", tmp_path / "r.html"]):
        proc = _lmmprobe(*command, "--db", db)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.strip().splitlines() == [
            f"error: {db}: run edited's results column does not hold a JSON object (damaged, "
            "or edited by hand); re-run it, or pass another --db"
        ]
