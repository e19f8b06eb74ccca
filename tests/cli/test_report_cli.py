"""``lmmprobe report``: writes the HTML page or prints md/csv/json; clear errors."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lmmprobe.api import evaluate
from lmmprobe.cli.main import app
from lmmprobe.schema import RunSpec

runner = CliRunner()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    db = tmp_path_factory.mktemp("cli") / "runs" / "lmmprobe.db"
    ev = evaluate(RunSpec(models=["random", "first"], data="demo,n=16", db=str(db), bootstrap=20))
    return db, ev.run_id, ev.results_json.parent


def test_html_report_is_written(run: tuple[Path, str, Path], tmp_path: Path) -> None:
    db, run_id, _ = run
    out = tmp_path / "sub" / "r.html"
    res = runner.invoke(app, ["report", run_id[:10], "--db", str(db), "--out", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and run_id in html
    assert 'id="samples"' in html


def test_latest_is_the_default_run(run: tuple[Path, str, Path], tmp_path: Path) -> None:
    db, run_id, _ = run
    res = runner.invoke(app, ["report", "--db", str(db), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["runs"][0]["run_id"] == run_id


def test_text_formats_go_to_stdout_or_a_file(run: tuple[Path, str, Path], tmp_path: Path) -> None:
    db, run_id, run_dir = run
    res = runner.invoke(app, ["report", str(run_dir), "--format", "md"])
    assert res.exit_code == 0, res.output
    assert "## Leaderboard" in res.stdout and "| 1 | " in res.stdout
    assert "random" in res.stdout and "first" in res.stdout
    out = tmp_path / "r.csv"
    res = runner.invoke(app, ["report", run_id, "--db", str(db), "-f", "csv", "-o", str(out)])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert {r["model"] for r in rows if r["section"] == "leaderboard"} == {"random", "first"}


def test_errors_exit_2_with_a_message(run: tuple[Path, str, Path], tmp_path: Path) -> None:
    db, run_id, _ = run
    res = runner.invoke(app, ["report", run_id, "--db", str(db), "--format", "pdf"])
    assert res.exit_code == 2 and "--format must be one of" in res.output
    res = runner.invoke(app, ["report", "no-such-run", "--db", str(db)])
    assert res.exit_code == 2 and "no run 'no-such-run'" in res.output
    res = runner.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "neither results.json" in res.output


def test_cards_are_shown_and_bad_cards_exit_2(run: tuple[Path, str, Path], tmp_path: Path) -> None:
    db, run_id, _ = run
    cards = tmp_path / "cards.yaml"
    cards.write_text(
        "random:\n  parameters: 7B\n  instruction_tuning: true\nfirst:\n  parameters: 1B\n"
    )
    res = runner.invoke(
        app, ["report", run_id, "--db", str(db), "-f", "json", "--cards", str(cards)]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert {c["model"]: c["groups"]["parameters"] for c in doc["cards"]} == {
        "random": "medium",
        "first": "small",
    }
    assert doc["cards_source"] == str(cards)
    (t,) = doc["group_tests"]  # medium vs small: pairs over the demo's four tasks
    assert (t["dimension"], t["a"], t["b"], t["n"]) == ("parameters", "medium", "small", 4)
    assert t["p_value"] is None or 0.0 <= t["p_value"] <= 1.0
    bad = tmp_path / "bad.yaml"
    bad.write_text("random:\n  instruction_tuning: maybe\n")
    res = runner.invoke(app, ["report", run_id, "--db", str(db), "--cards", str(bad)])
    assert res.exit_code == 2
    assert f"{bad}:1: model 'random': field 'instruction_tuning'" in res.output
    res = runner.invoke(
        app, ["report", run_id, "--db", str(db), "--cards", str(tmp_path / "no.yaml")]
    )
    assert res.exit_code == 2 and "no.yaml: file does not exist" in res.output
