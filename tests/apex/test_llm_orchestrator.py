"""The LLM orchestrator against a loopback OpenAI-compatible server with scripted replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.apex.scripts import (
    answer,
    call,
    conclude_json,
    discuss_json,
    experiment_json,
    init_json,
    judge_json,
)

from lmmprobe.apex import Settings, run_campaign
from lmmprobe.apex.loop import MAX_HEALS
from lmmprobe.apex.orchestrators.llm import LLMOrchestrator, parse_spec
from lmmprobe.testing import FakeOpenAIServer


def _run(replies, tmp_path: Path, small: Settings, cache_dir: Path, *, spec_extra: str = "", **kw):
    settings = small.model_copy(update=kw)
    with FakeOpenAIServer(replies=replies) as server:
        campaign = run_campaign(
            "Can models identify rotated images?",
            ["random"],
            f"openai:planner@{server.base_url}{spec_extra}",
            out=tmp_path / "out",
            settings=settings,
            cache_dir=cache_dir,
        )
        params = server.received_params
        left = server.replies_left
    return campaign, params, left


def test_valid_plan_runs_one_experiment_and_stores_every_message(tmp_path, small, cache_dir):
    replies = [init_json(), experiment_json(), discuss_json(), judge_json(True), conclude_json()]
    campaign, params, left = _run(replies, tmp_path, small, cache_dir)
    report = campaign.report
    assert left == 0 and report.status == "sufficient"
    assert report.orchestrator_calls == 5
    [rec] = report.experiments
    assert [a.text for a in rec.experiment.answers] == ["yes", "no"]
    assert rec.results.n_images == 2 * small.images_per_answer
    assert rec.findings[0].statement == "The model is at chance."
    assert report.conclusions == ["random cannot identify rotation."]
    # Temperature 0 and a JSON-schema response format on every request.
    assert all(p["temperature"] == 0 for p in params)
    assert [p["response_format"]["json_schema"]["name"] for p in params] == [
        "Initialization", "Experiment", "Discussion", "Sufficiency", "Conclusions",
    ]  # fmt: skip
    # Every message sent and received is in the transcript, and in report.json.
    steps = [(t.step, t.role) for t in report.transcript]
    assert steps.count(("design", "assistant")) == 1 and ("design", "system") in steps
    replies_seen = [t.content for t in report.transcript if t.role == "assistant"]
    assert replies_seen == replies
    saved = json.loads(campaign.report_json.read_text())
    assert len(saved["transcript"]) == len(report.transcript)
    assert "RotateImage" in saved["transcript"][0]["content"]  # the catalog went to the model


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ('{"question": "Is it rotated?", "answers": [', "not valid JSON"),
        (experiment_json(answers=[answer("yes", call("RotateImageX")), answer("no")]),
         "unknown transform tool 'RotateImageX'"),
        (experiment_json(answers=[answer("yes", call("RotateImage", angle=9000)), answer("no")]),
         "argument 'angle'"),
        (experiment_json(answers=[answer("yes", call("lmmprobe.tools.transforms.rotate_image", angle=90)), answer("no")]),
         "dotted module path"),
        (experiment_json(answers=[answer("only one")]), "answers"),
        (experiment_json(question="__import__('os').system('touch /tmp/x')"), "dunder"),
        (experiment_json(answers=[answer("yes", select={"tool": "RotateImage", "args": {}}),
                                  answer("no")]), "not a select tool"),
    ],
)  # fmt: skip
def test_invalid_output_is_fed_back_and_healed(tmp_path, small, cache_dir, bad, expected):
    replies = [init_json(), bad, experiment_json(), discuss_json(), judge_json(), conclude_json()]
    campaign, _, left = _run(replies, tmp_path, small, cache_dir)
    report = campaign.report
    assert left == 0 and report.status == "sufficient" and len(report.experiments) == 1
    [rejection] = report.rejections
    assert rejection.step == "design" and expected in rejection.error
    assert report.experiments[0].attempts == 2
    # The heal request carried the bad reply and the error back to the model.
    heal = [t for t in report.transcript if t.step == "design:heal" and t.role == "user"]
    assert heal and expected in heal[-1].content
    assert any(t.step == "design:heal" and t.content == bad for t in report.transcript)


def test_injection_in_any_field_executes_nothing(tmp_path, small, cache_dir):
    sentinel = tmp_path / "pwned"
    payloads = [
        experiment_json(question=f"__import__('os').system('touch {sentinel}')"),
        experiment_json(answers=[answer("yes", call("PasteTextAtRandomPosition",
                                                     text=f"open('{sentinel}', 'w')")),
                                 answer("no")]),
        experiment_json(answers=[answer("../../etc/passwd", call("Identity")), answer("no")]),
        experiment_json(rationale="import subprocess; subprocess.run(['touch', 'x'])"),
    ]  # fmt: skip
    replies = [init_json(), *payloads, experiment_json(), discuss_json(), judge_json(),
               conclude_json()]  # fmt: skip
    # 4 injected designs: 1 design + 3 heals are rejected, then a fresh design is valid.
    campaign, _, left = _run(replies, tmp_path, small, cache_dir)
    report = campaign.report
    assert left == 0 and not sentinel.exists()
    assert len(report.rejections) == 4 and report.status == "sufficient"
    errors = " ".join(r.error for r in report.rejections)
    assert "dunder" in errors and "function call" in errors and "traversal" in errors
    assert "import" in errors
    assert [p.name for p in (tmp_path / "out").rglob("*passwd*")] == []


def test_retry_cap_then_new_design_then_give_up(tmp_path, small, cache_dir):
    bad = experiment_json(answers=[answer("yes", call("NoSuchTool")), answer("no")])
    # MAX_FRESH_DESIGNS designs of 1 + MAX_HEALS attempts each, all rejected.
    replies = [init_json(), *[bad] * (3 * (1 + MAX_HEALS)), conclude_json()]
    campaign, _, left = _run(replies, tmp_path, small, cache_dir)
    report = campaign.report
    assert left == 0 and report.status == "no_design" and report.experiments == []
    assert len(report.rejections) == 3 * (1 + MAX_HEALS)
    assert [r.attempt for r in report.rejections[:5]] == [1, 2, 3, 4, 1]
    assert report.conclusions == ["random cannot identify rotation."]


def test_hard_cap_on_orchestrator_calls(tmp_path, small, cache_dir):
    bad = "not json at all"
    replies = [init_json(), *[bad] * 20]
    campaign, _, left = _run(replies, tmp_path, small, cache_dir, max_orchestrator_calls=4)
    report = campaign.report
    assert report.status == "call_cap" and report.orchestrator_calls == 4
    assert left == 20 - 3  # the cap stopped the loop before the script ran out
    assert report.conclusions[0].startswith("Stopped at the orchestrator call cap")
    assert campaign.report_md.exists()


def test_tool_calling_mode(tmp_path, small, cache_dir):
    def as_tool(text: str) -> dict:
        return {"tool_calls": [{"id": "c1", "type": "function",
                                "function": {"name": "submit", "arguments": text}}]}  # fmt: skip

    replies = [as_tool(r) for r in (init_json(), experiment_json(), discuss_json(),
                                      judge_json(), conclude_json())]  # fmt: skip
    campaign, params, _ = _run(replies, tmp_path, small, cache_dir, spec_extra=",mode=tools")
    assert campaign.report.status == "sufficient" and len(campaign.report.experiments) == 1
    assert params[1]["tool_choice"]["function"]["name"] == "submit_experiment"
    assert params[1]["tools"][0]["function"]["parameters"]["title"] == "Experiment"


def test_api_failure_stops_with_a_report(tmp_path, small, cache_dir):
    # The script runs out after the design: the next request gets a 400.
    replies = [init_json(), experiment_json()]
    campaign, _, _ = _run(replies, tmp_path, small, cache_dir)
    report = campaign.report
    assert report.status == "orchestrator_error" and len(report.experiments) == 1
    assert "chat request failed" in report.metadata["error"]
    assert campaign.report_json.exists()


def test_spec_parsing_and_key_handling(monkeypatch):
    opts = parse_spec("gpt-4o@http://127.0.0.1:9/v1,mode=tools,temperature=0.5")
    assert (opts.model, opts.base_url, opts.mode, opts.temperature) == (
        "gpt-4o", "http://127.0.0.1:9/v1", "tools", 0.5,
    )  # fmt: skip
    with pytest.raises(ValueError, match="mode"):
        parse_spec("m@http://127.0.0.1:9/v1,mode=yaml")
    with pytest.raises(ValueError, match="not one of"):
        parse_spec("m@http://127.0.0.1:9/v1,bogus=1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="no API key"):
        LLMOrchestrator.from_spec("gpt-4o@https://api.example.com/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    orch = LLMOrchestrator.from_spec("gpt-4o@https://api.example.com/v1")
    assert "sk-secret" not in repr(orch)


def test_a_thinking_orchestrator_is_read_after_its_thinking(tmp_path, small, cache_dir):
    # Thinking that holds JSON of its own (a trap): only the answer after it is the program.
    trap = experiment_json(question="__import__('os')")

    def thinking(reply: str) -> str:
        return f"<think>\nFirst draft: {trap}\n</think>\n\n{reply}"

    replies = [init_json(), experiment_json(), discuss_json(), judge_json(True), conclude_json()]
    campaign, _, left = _run([thinking(r) for r in replies], tmp_path, small, cache_dir)
    report = campaign.report
    assert left == 0 and report.status == "sufficient" and report.orchestrator_calls == 5
    [rec] = report.experiments
    assert [a.text for a in rec.experiment.answers] == ["yes", "no"]
    assert [t.content for t in report.transcript if t.role == "assistant"] == replies


def test_an_orchestrator_cut_off_inside_its_thinking_says_so(tmp_path, small, cache_dir):
    replies = ["<think>\nLet me plan the experiments. First"]
    campaign, _, _ = _run(replies, tmp_path, small, cache_dir)
    report = campaign.report
    assert report.status == "orchestrator_error" and not report.experiments
    assert "cut off inside its thinking; raise max_tokens" in report.metadata["error"]
