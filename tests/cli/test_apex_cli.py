"""``lmmprobe apex``: a campaign from the command line, replay, and clear errors."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from lmmprobe.cli.main import app

runner = CliRunner()

FAST = ["--images-per-answer", "3", "--image-size", "32", "--bootstrap", "50"]


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_apex_rules_campaign_then_replay_on_another_model(tmp_path):
    out, cache = tmp_path / "run", tmp_path / "cache"
    res = invoke(
        "apex", "Can models identify rotated images?", "--model", "random", "--model", "first",
        "--out", str(out), "--cache-dir", str(cache), "--seed", "4", "--max-experiments", "3",
        "--unknown", *FAST,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "experiment 1 (easy)" in res.output
    # Once, after the results (it was printed twice).
    assert res.output.count("report: ") == 1 and f"report: {out / 'report.md'}" in res.output
    assert "random" in res.output and "first" in res.output
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["seed"] == 4 and report["settings"]["unknown_option"] is True
    assert (out / "report.md").exists() and (out / "apex.db").exists()
    assert list((out / "thumbnails").rglob("*.png"))

    replay = invoke(
        "apex", "Can models identify rotated images?", "--model", "random",
        "--orchestrator", f"replay:{out / 'report.json'}", "--out", str(tmp_path / "replay"),
        "--cache-dir", str(cache), "-q",
    )  # fmt: skip
    assert replay.exit_code == 0, replay.output
    again = json.loads((tmp_path / "replay" / "report.json").read_text())
    assert again["settings"]["seed"] == 4
    assert [e["dataset"]["fingerprint"] for e in again["experiments"]] == [
        e["dataset"]["fingerprint"] for e in report["experiments"]
    ]
    assert "experiment 1" not in replay.output  # --quiet prints only the results


def test_apex_errors_exit_2_and_write_nothing(tmp_path):
    out = tmp_path / "never"
    res = runner.invoke(app, ["apex", "What is the meaning of life?", "-m", "random",
                              "--out", str(out)])  # fmt: skip
    assert res.exit_code == 2 and "supported query forms" in res.output
    assert not out.exists()
    res = runner.invoke(app, ["apex", "Can models recognize dogs?", "--out", str(out)])
    assert res.exit_code == 2 and "--model" in res.output
    res = runner.invoke(app, ["apex", "Can models recognize dogs?", "-m", "nosuchmodel",
                              "--out", str(out)])  # fmt: skip
    assert res.exit_code == 2 and "nosuchmodel" in res.output
    res = runner.invoke(app, ["apex", "Can models recognize dogs?", "-m", "random",
                              "--orchestrator", "replay:/nonexistent/report.json"])  # fmt: skip
    assert res.exit_code == 2 and "no report file" in res.output


def test_apex_generates_through_a_diffusion_pipeline_when_given_one(tmp_path):
    from lmmprobe.synth.tiny_diffusion import tiny_sdxl_path

    out = tmp_path / "diff"
    res = invoke(
        "apex", "Can models identify rotated images?", "--model", "first",
        "--diffusion-model", str(tiny_sdxl_path()), "--max-experiments", "1",
        "--out", str(out), "--cache-dir", str(tmp_path / "cache"), *FAST,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())
    assert report["metadata"]["renderer"].startswith("diffusion:")
    assert list((out / "thumbnails").rglob("*.png"))
    bad = runner.invoke(
        app, ["apex", "Can models identify rotated images?", "-m", "first",
              "--diffusion-model", str(tmp_path / "missing"), "--out", str(tmp_path / "x")],
    )  # fmt: skip
    assert bad.exit_code == 2 and "missing" in bad.output
