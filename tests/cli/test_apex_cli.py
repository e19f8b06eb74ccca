"""``lmmprobe apex``: a campaign from the command line, replay, and clear errors."""

from __future__ import annotations

import json

import pytest
from tests.console import lmmprobe
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


def test_the_announced_next_step_is_the_experiment_run_and_a_replay_says_what_it_did(tmp_path):
    """Through the console script: the rules' ``next:`` names the experiment that then runs;
    a replay prints steps replayed (no orchestrator was asked) and records the file it read."""
    out = tmp_path / "rules"
    done = lmmprobe(
        "apex", "Can models identify rotated images?", "-m", "first", "--out", out,
        "--cache-dir", tmp_path / "cache", "--max-experiments", "2", *FAST, columns=400,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    announced = [line.split("; next: ", 1)[1] for line in lines if "; next: " in line]
    ran = [line for line in lines if line.startswith("experiment 2 ")]
    # It said "Can rotation be told apart from right rotation, vertical flip?" and then asked
    # rotated left / rotated right / upside down / no change.
    assert announced and ran and ran[0].startswith(announced[0] + ","), done.stdout
    assert "orchestrator calls)" in done.stdout  # the rules orchestrator was asked, 8 times

    saved = out / "report.json"
    again = lmmprobe(
        "apex", "Can models identify rotated images?", "-m", "random",
        "--orchestrator", f"replay:{saved}", "--out", tmp_path / "replay",
        "--cache-dir", tmp_path / "cache", "-q", columns=400,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert "steps replayed)" in again.stdout and "orchestrator calls" not in again.stdout
    report = json.loads((tmp_path / "replay" / "report.json").read_text())
    assert report["orchestrator"] == f"replay:{saved}"  # it was replay:report.json
    assert "steps replayed" in (tmp_path / "replay" / "report.md").read_text()


def test_a_replay_file_that_is_not_utf8_is_named(tmp_path):
    # Before: only "'utf-8' codec can't decode byte 0xff in position 0", naming no file.
    saved = tmp_path / "report.json"
    saved.write_bytes(b'\xff\xfe{"query": 1}')
    proc = lmmprobe("apex", "Can models recognize dogs?", "-m", "random", "--out",
                    tmp_path / "o", "--orchestrator", f"replay:{saved}")  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f"error: replay: {saved} is not an APEx report.json: {saved}:1: not a text file (byte 0 "
        "is not UTF-8); give a JSON or YAML file"
    )


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply to read"),
        ('{"query": "q", "query": "r"}', "report.json:1: 'query' is defined twice"),
        ("[1, 2, 3]", "the top level must be a mapping of names to report fields, got list"),
        ('{"n": 1' + "0" * 5000 + "}", "not valid JSON (Exceeds the limit (4300 digits)"),
        ('{"x": "' + "a" * (17 << 20) + '"}', "larger than 16 MiB"),
        ('{"query": "' + "[[[[" * 50 + '"}', "models: Field required (and "),
    ],
)
def test_a_hostile_replay_file_is_one_line_naming_it(tmp_path, content, says):
    # A 300 MB file was read whole (30 s, 1.8 GB), pydantic's 3-10 line dumps echoed the
    # file's text, a key given twice was taken silently, and a 5,000-digit number's error
    # named no file.
    saved = tmp_path / "report.json"
    saved.write_text(content)
    proc = lmmprobe("apex", "Can models recognize dogs?", "-m", "random", "--out",
                    tmp_path / "o", "--orchestrator", f"replay:{saved}")  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: replay: {saved} is not an APEx report.json: "), line
    assert says in line, line
    assert "[[[[" not in line and "errors.pydantic.dev" not in line


@pytest.mark.parametrize("experiments", ["[1]", '[{"a": 1}]', "[]"])
def test_a_wrong_shaped_campaign_named_alone_to_report_is_refused(tmp_path, experiments):
    # Re-test 11 #10: a report.json with an "experiments" list but nothing else of a campaign
    # gave an empty report and exit 0; the user learnt nothing was read.
    folder = tmp_path / "campaign"
    folder.mkdir()
    (folder / "report.json").write_text('{"experiments": ' + experiments + "}")
    proc = lmmprobe("report", folder, "-f", "md")
    assert proc.returncode == 2, proc.stdout
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: {folder / 'report.json'} is not an APEx report.json: "), line
    assert proc.stdout == ""
