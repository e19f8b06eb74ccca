"""The report's accuracy-against-output-tokens chart (issue 25, item 6).

One point per model and setting: x is the run metric ``output_tokens`` (mean completion tokens
per answered row) read from the results as they are, y the accuracy with its 95% interval. A
run whose results do not carry ``output_tokens`` has no such chart, and no error. The runs are
made by the console script; the metric is added to their results (the store's copy, which the
report reads, and ``results.json``) as a run that counts tokens records it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

from lmmprobe.store import Store

MODELS = ("random", "random,seed=7", "first")
TOKENS = {"random": (12.0, 10.5, 13.5), "random,seed=7": (850.0, 800.0, 910.0), "first": (3.0,)}


def _lmmprobe(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return lmmprobe(*args)


def _figures(page: str) -> dict[str, Any]:
    match = re.search(
        r'<script type="application/json" id="lmmprobe-data">(.*?)</script>', page, re.S
    )
    assert match
    figures: dict[str, Any] = json.loads(match.group(1))["figures"]
    return figures


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    """One run of three models; returns (store, run folder, results before tokens)."""
    tmp = tmp_path_factory.mktemp("tokens")
    db, out = tmp / "db", tmp / "run"
    flags = [f for m in MODELS for f in ("-m", m)]
    proc = _lmmprobe("run", *flags, "-d", "demo,n=30", "-q", "--bootstrap", "50",
                     "--db", db, "--out", out)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return db, out, json.loads((out / "results.json").read_text())


def _with_tokens(db: Path, out: Path, results: dict[str, Any]) -> dict[str, Any]:
    doc = json.loads(json.dumps(results))
    for model, (value, *ci) in TOKENS.items():
        low, high = ci or (None, None)
        doc["models"][model]["metrics"]["output_tokens"] = {
            "value": value, "low": low, "high": high, "n": 30,
        }  # fmt: skip
    (out / "results.json").write_text(json.dumps(doc, indent=2))
    with Store(db) as store:
        store.update_run(doc["run_id"], results=doc)
    return doc


def test_accuracy_against_output_tokens_one_point_per_model(run, tmp_path: Path) -> None:
    db, out, results = run
    doc = _with_tokens(db, out, results)
    page_file = tmp_path / "r.html"
    proc = _lmmprobe("report", doc["run_id"], "--db", db, "-o", page_file)
    assert proc.returncode == 0, proc.stderr
    page = page_file.read_text(encoding="utf-8")
    fig = _figures(page)["fig-tokens-0"]
    assert 'id="fig-tokens-0"' in page
    points = {t["name"]: t for t in fig["data"]}
    assert set(points) == {"M1 random", "M2 random,seed=7", "M3 first"}
    for code, model in enumerate(MODELS, 1):
        t = points[f"M{code} {model}"]
        acc = doc["models"][model]["metrics"]["accuracy"]
        value, *ci = TOKENS[model]
        assert t["x"] == [value]
        assert t["y"] == [pytest.approx(100 * acc["value"])]
        assert t["error_y"]["array"] == [pytest.approx(100 * (acc["high"] - acc["value"]))]
        assert t["error_y"]["arrayminus"] == [pytest.approx(100 * (acc["value"] - acc["low"]))]
        # The tokens' own interval where the results give one, none where they do not.
        want_x = [ci[1] - value] if ci else [0.0]
        assert t["error_x"]["array"] == [pytest.approx(want_x[0])]
    # 3 to 850 tokens: a log axis keeps the short answers off the zero line.
    assert fig["layout"]["xaxis"]["type"] == "log"
    assert fig["layout"]["yaxis"]["range"] == [0, 100]


def test_no_output_tokens_no_chart_and_no_error(run, tmp_path: Path) -> None:
    db, out, results = run
    (out / "results.json").write_text(json.dumps(results, indent=2))
    with Store(db) as store:
        store.update_run(results["run_id"], results=results)
    page_file = tmp_path / "r.html"
    proc = _lmmprobe("report", results["run_id"], "--db", db, "-o", page_file)
    assert proc.returncode == 0, proc.stderr
    page = page_file.read_text(encoding="utf-8")
    assert "fig-tokens" not in page and "fig-board-0" in page
