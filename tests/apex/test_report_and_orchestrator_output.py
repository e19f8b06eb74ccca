"""report.md / report.json / the HTML section, and reading orchestrator output safely."""

from __future__ import annotations

import json

import pytest
from tests.apex.scripts import answer, call, experiment_json

from lmmprobe.apex import Experiment, Report, Settings, run_campaign
from lmmprobe.apex.experiments import Conclusions, Discussion, Initialization, Sufficiency
from lmmprobe.apex.orchestrator_output import UnsafeOutputError, load_json, parse_output, safe_name
from lmmprobe.apex.protocol import Attempt, PlanningEnv, Reply
from lmmprobe.report.apex_section import apex_section

HOSTILE = "<script>alert(1)</script> | [x](javascript:alert(2))"


class ScriptedOrchestrator:
    """An in-process orchestrator returning fixed outputs (the LLM tests use a real server)."""

    name = "scripted"

    def __init__(self, design: str) -> None:
        self._design = design

    def init(self, report: Report, env: PlanningEnv, retries: list[Attempt]) -> Reply:
        return Reply(Initialization(open_questions=[HOSTILE]), [("assistant", "{}")])

    def design(self, report: Report, env: PlanningEnv, retries: list[Attempt]) -> Reply:
        return Reply(self._design, [("assistant", self._design)])

    def discuss(self, report, env, retries) -> Reply:
        return Reply(Discussion(findings=[{"statement": HOSTILE}]), [])

    def judge(self, report, env, retries) -> Reply:
        return Reply(Sufficiency(sufficient=True, reason=HOSTILE), [])

    def conclude(self, report, env, retries) -> Reply:
        return Reply(Conclusions(conclusions=[HOSTILE]), [])


@pytest.fixture
def hostile_campaign(tmp_path, cache_dir):
    design = experiment_json(
        question=f"Is this rotated? {HOSTILE}",
        answers=[
            answer("yes <b>", call("RotateImage", angle=90)),
            answer("no/maybe", call("Identity")),
        ],
    )
    settings = Settings(images_per_answer=4, image_size=32, bootstrap=50)
    return run_campaign(
        "Can models identify rotation?", ["random", "first"], ScriptedOrchestrator(design),
        out=tmp_path / "out", settings=settings, cache_dir=cache_dir,
    )  # fmt: skip


def test_report_files_tables_and_thumbnails(hostile_campaign):
    c = hostile_campaign
    out = c.out_dir
    saved = json.loads(c.report_json.read_text())
    assert saved["format"] == "lmmprobe-apex/1" and saved["status"] == "sufficient"
    thumbs = saved["experiments"][0]["dataset"]["thumbnails"]
    assert set(thumbs) == {"yes <b>", "no/maybe"} and all(len(v) == 3 for v in thumbs.values())
    for paths in thumbs.values():
        for rel in paths:
            path = (out / rel).resolve()
            assert path.is_file() and path.is_relative_to(out.resolve())
            assert "/" not in path.name and ".." not in path.name
    md = c.report_md.read_text()
    assert "## Experiment 1 (easy)" in md
    assert "| model | method | accuracy [95% CI] |" in md
    assert md.count("| random | likelihood |") == 1 and "| first | likelihood |" in md
    # Orchestrator text cannot inject HTML, links or table cells.
    assert "<script>" not in md and "&lt;script&gt;" in md and "\\|" in md
    assert "[x](javascript" not in md and "\\[x\\](javascript" in md


def test_html_section_escapes_everything_and_inlines_thumbnails(hostile_campaign, tmp_path):
    out = hostile_campaign.out_dir
    fragment = apex_section(out)
    assert fragment.startswith('<section class="apex">')
    assert "<script>" not in fragment and "&lt;script&gt;" in fragment
    assert "yes &lt;b&gt;" in fragment
    assert fragment.count('src="data:image/png;base64,') == 6
    # A tampered report cannot make the section read files outside the folder.
    data = json.loads((out / "report.json").read_text())
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 10)
    data["experiments"][0]["dataset"]["thumbnails"]["yes <b>"] = ["../secret.png", "/etc/passwd"]
    (out / "report.json").write_text(json.dumps(data))
    assert apex_section(out).count('src="data:image/png;base64,') == 3
    with pytest.raises(FileNotFoundError):
        apex_section(tmp_path / "nowhere")


def test_parse_output_accepts_fenced_json_and_rejects_the_rest():
    exp = parse_output("```json\n" + experiment_json() + "\n```", Experiment)
    assert exp.answers[0].transforms[0].tool == "RotateImage"
    with pytest.raises(UnsafeOutputError, match="not valid JSON"):
        load_json("{'single': 'quotes'}")
    with pytest.raises(UnsafeOutputError, match="expected one JSON object"):
        parse_output("[1, 2]", Experiment)
    with pytest.raises(UnsafeOutputError, match=r"Extra inputs|extra_forbidden"):
        parse_output(experiment_json(run="rm -rf /"), Experiment)
    for hostile in [
        "__import__('os').system('id')",
        "eval('1+1')",
        "import os",
        "../../etc/passwd",
        "$(whoami)",
        "{{ config }}",
    ]:
        with pytest.raises(UnsafeOutputError, match="never code or file paths"):
            parse_output(experiment_json(rationale=hostile), Experiment)


def test_safe_name():
    names = {safe_name(t) for t in ["../../etc/passwd", "a/b", "a b", "A B", "x" * 300, ""]}
    assert len(names) == 6
    for n in names:
        assert n.replace("-", "").isalnum() and len(n) <= 49


def test_report_files_hold_no_secret_of_a_spec(hostile_campaign, tmp_path):
    # Issue 34: report.json and report.md wrote the model and orchestrator specs as given.
    from lmmprobe.apex import write_report

    secret = "hunter2-s3cr3t-9"
    spec = f"openai:m@http://user:{secret}@127.0.0.1:1/v1,note=--api-key {secret}"
    report = Report.model_validate_json(hostile_campaign.report_json.read_text())
    report.models = ["random", spec]
    report.orchestrator = f"llm:openai:o@https://u:{secret}@h/v1"
    report.experiments[0].results.models[0].model = spec
    report.transcript[0].content = json.dumps({"models": [spec]})
    report.metadata["models"] = [spec]
    j, md = write_report(report, tmp_path / "again")
    for path in (j, md):
        assert secret not in path.read_text(encoding="utf-8"), path
    saved = json.loads(j.read_text())
    assert (
        saved["models"][1]
        == "openai:m@http://user:[redacted]@127.0.0.1:1/v1,note=--api-key [redacted]"
    )
    assert (
        saved["experiments"][0]["results"]["models"][0]["accuracy"]
        == json.loads(hostile_campaign.report_json.read_text())["experiments"][0]["results"][
            "models"
        ][0]["accuracy"]
    )
