"""End-to-end CLI tests through typer's runner and the installed console script."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lmmprobe.cli.main import app

runner = CliRunner()


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "runs" / "db.sqlite")


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_run_defaults_to_demo_and_baselines_then_show_and_export(db, tmp_path):
    res = invoke("run", "--db", db, "--limit", "20", "--by", "subtask", "-q")
    assert res.exit_code == 0, res.output
    assert "random" in res.output and "first" in res.output and "accuracy" in res.output
    out_dir = tmp_path / "runs"
    results = list(out_dir.glob("*/results.json"))
    assert len(results) == 1
    data = json.loads(results[0].read_text())
    assert data["data"]["samples"] == 20 and set(data["models"]) == {"random", "first"}

    shown = invoke("show", "latest", "--db", db)
    assert shown.exit_code == 0 and "first" in shown.output

    exported = invoke("export", "latest", "--db", db, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(exported.output)))
    assert len(rows) == 40 and {"prompt", "text", "prediction", "correct", "stage"} <= set(rows[0])

    again = invoke("run", "--db", db, "--limit", "20", "-q")
    assert "20 from the store, 0 sent" in again.output


def test_run_with_jsonl_reports_bad_rows_and_strict_fails(tmp_path, db):
    from PIL import Image

    Image.new("RGB", (8, 8), "blue").save(tmp_path / "b.png")
    good = {
        "id": "1",
        "images": ["b.png"],
        "question": "Color?",
        "choices": ["red", "blue"],
        "answer": 1,
    }
    bad = {
        "id": "2",
        "images": ["missing.png"],
        "question": "Color?",
        "choices": ["red", "blue"],
        "answer": 1,
    }
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    res = invoke("run", "--db", db, "--data", str(path), "-m", "first", "-q")
    assert res.exit_code == 0
    assert "skipped 1 invalid" in res.output and f"{path}:2: images[0]" in res.output.replace(
        "\n", ""
    )
    strict = invoke("run", "--db", db, "--data", str(path), "-m", "first", "--strict", "-q")
    assert strict.exit_code == 2 and f"{path}:2" in strict.output.replace("\n", "")


def test_unknown_and_uninstalled_backends_fail_clearly(db):
    res = invoke("run", "--db", db, "-m", "nosuch", "-q")
    assert res.exit_code == 2 and "unknown model backend 'nosuch'" in res.output
    if importlib.util.find_spec("transformers") is not None:
        return  # installed: the hf backend's own tests cover it
    res = invoke("run", "--db", db, "-m", "hf:some/model", "-q")
    assert res.exit_code == 2 and "pip install 'lmmprobe[hf]'" in res.output.replace("\n", " ")


def test_models_lists_backends():
    res = invoke("models")
    assert res.exit_code == 0
    for name in ("random", "first", "hf", "openai"):
        assert name in res.output


def test_show_unknown_run_fails(db):
    invoke("run", "--db", db, "--limit", "4", "-q")
    res = invoke("show", "nope", "--db", db)
    assert res.exit_code == 2 and "no run 'nope'" in res.output


def test_console_script_runs(tmp_path):
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None, "pip install -e . installs the lmmprobe console script"
    proc = subprocess.run(
        [exe, "run", "--limit", "8", "-q", "--db", str(tmp_path / "db")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "accuracy" in proc.stdout
