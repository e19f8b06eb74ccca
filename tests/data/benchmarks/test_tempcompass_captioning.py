"""TempCompass's captioning task by name, against ``eval_captioning.py``'s own outputs.

``video_parity/expected_captioning.json`` holds what llyx97/TempCompass @ e1b4631
``eval_captioning.py`` did on generated captions with recorded judge replies
(``video_parity/make_expected_captioning.py``): every prompt it sent and the request's settings,
each rating, its printed per-aspect, per-fine-aspect and average accuracies, and the replies it
rates -1. The copies here are built in the release's layout (``questions/captioning.json``,
``questions/multi-choice.json``, ``meta_info.json``, ``videos/ID.mp4``) with generated videos.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import scripted_model
from tests.videos import needs_av, write_video

from lmmprobe.api import evaluate
from lmmprobe.data.benchmarks._describe import official_matcher
from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem
from lmmprobe.judge.protocols.tempcompass_captioning import (
    captioning_answer,
    captioning_rating,
)
from lmmprobe.schema import JudgeConfig, Sample, Score
from lmmprobe.testing.openai_server import FakeOpenAIServer

EXPECTED = json.loads(
    (Path(__file__).parent / "video_parity" / "expected_captioning.json").read_text(
        encoding="utf-8"
    )
)
SCRIPT = scripted_model("tempcompass-captioning-scripted")
PROTOCOL = JUDGE_PROTOCOLS.get("tempcompass-captioning")


def _copy(
    root: Path,
    rows: list[dict[str, Any]],
    mc: dict[str, Any],
    meta: dict[str, Any],
) -> Path:
    """A TempCompass copy holding `rows` as captioning questions and `mc` as multi-choice."""
    (root / "questions").mkdir(parents=True)
    (root / "videos").mkdir()
    questions: dict[str, dict[str, list[dict[str, str]]]] = {}
    for row in rows:
        questions.setdefault(row["video"], {}).setdefault(row["dimension"], []).append(
            {"question": row["question"], "answer": row.get("answer", "A. x")}
        )
    for video in questions:
        write_video(root / "videos" / f"{video}.mp4", frames=40, fps=10)
    (root / "questions" / "captioning.json").write_text(json.dumps(questions), encoding="utf-8")
    (root / "questions" / "multi-choice.json").write_text(json.dumps(mc), encoding="utf-8")
    (root / "meta_info.json").write_text(json.dumps(meta), encoding="utf-8")
    return root


def _item(row: dict[str, Any], reply_to: str = "") -> JudgeItem:
    """The judge's view of a parity row: its caption and its video's first question."""
    first = EXPECTED["multi_choice"][row["video"]][row["dimension"]][0]
    lines = first["question"].split("\n")[1:]
    options = [line[3:] for line in lines]
    gold = "ABCD".index(first["answer"][0])
    sample = Sample(id="s", question=row["question"], choices=options, answer=gold,
                    metadata={"mc_question": first["question"]})  # fmt: skip
    score = Score(model="m", sample_id="s", repeat=0, key="k", stage="unparsed", gold=gold,
                  gold_text=options[gold])  # fmt: skip
    return JudgeItem(sample, (reply_to or row["caption"]).strip(), score)


def _judge_key(row: dict[str, Any]) -> str:
    """What only this row's judge prompt holds: its caption and its question, in place."""
    first = EXPECTED["multi_choice"][row["video"]][row["dimension"]][0]
    caption = row["caption"].replace("</s>", "").strip()
    return f"Video Description:{caption}\nMulti-Choice Question:\n{first['question']}\n"


def test_tempcompass_captioning_judge_prompts_and_ratings_equal_its_eval_script() -> None:
    rows = EXPECTED["rows"]
    assert len(EXPECTED["judge_prompts"]) == len(rows)  # every caption is judged: no rules
    for row, sent in zip(rows, EXPECTED["judge_prompts"], strict=True):
        item = _item(row)
        assert PROTOCOL.rule(item) is None
        assert PROTOCOL.applies(item)  # type: ignore[attr-defined]
        prompt = PROTOCOL.prompt(item)
        assert prompt.user == sent, row
        assert prompt.system == EXPECTED["request"]["system"]
        reading = PROTOCOL.read(row["judge_reply"], item)
        assert reading is not None and reading.value == row["rating"], row["judge_reply"]
        assert reading.detail is not None and reading.detail["answer"] == row["judge_answer"]
    request = EXPECTED["request"]
    assert (PROTOCOL.gen.max_new_tokens, PROTOCOL.gen.temperature, PROTOCOL.gen.top_p) == (
        request["max_tokens"], request["temperature"], request["top_p"],
    )  # fmt: skip
    assert {r["rating"] for r in rows} == {0, 1}


def test_the_replies_it_rates_minus_one_are_unjudged_here() -> None:
    # eval_captioning.py rates an empty reply, a refused request, the literal
    # "invalid_request_error" and a reply without usage -1 (subtracted in its sums);
    # lmmprobe reads no verdict from the first three (a refused request is a failed call).
    item = _item(EXPECTED["rows"][0])
    ratings = {f["kind"]: f["rating"] for f in EXPECTED["failures"]}
    assert set(ratings.values()) == {-1}
    for kind in ("empty", "blank", "literal"):
        response = next(f["response"] for f in EXPECTED["failures"] if f["kind"] == kind)
        assert PROTOCOL.read(response["choices"][0]["message"]["content"], item) is None, kind


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["A. run", "B. walk", "C. 3.5 times"]))
def test_the_judges_answer_is_read_from_any_reply(text: str, gold: str) -> None:
    for reply in (text, text * 2000, f"Reasoning: {text}\nAnswer: {text}"):  # linear work
        answer, reasoning = captioning_answer(reply)
        assert answer in reply or answer in reply.replace("Answer:", "")
        assert reasoning is None or reasoning in reply.replace("Reasoning:", "")
        assert captioning_rating(answer, gold) in (0, 1)


def test_tempcompass_captioning_accuracies_equal_its_eval_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_av()
    rows = []
    for i, row in enumerate(EXPECTED["rows"]):
        stem, rest = row["question"].split("\n", 1)
        rows.append({**row, "question": f"{stem} #p{i}\n{rest}"})  # the scripted model's tag
        SCRIPT.replies[f"p{i}"] = row["caption"]
    copy = _copy(tmp_path / "tc", rows, EXPECTED["multi_choice"], EXPECTED["meta_info"])
    table = [(_judge_key(row), row["judge_reply"]) for row in EXPECTED["rows"]]
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    SCRIPT.prompts.clear()
    with FakeOpenAIServer(reply_table=table) as server:
        ev = evaluate(models=[SCRIPT.name], data=f"tempcompass-captioning,path={copy}",
                      bootstrap=0, db=str(tmp_path / "db"), out=str(tmp_path / "out"),
                      frames="2", by=["dimension", "fine_dimension"],
                      judge=JudgeConfig(judges=[f"openai:judge@{server.base_url}"]),
                      formulate={"matcher": official_matcher("tempcompass-captioning")})  # fmt: skip
    m = ev.results.models[SCRIPT.name]
    printed = [line for line in EXPECTED["printed"] if "retries" not in line]
    aspects = ast.literal_eval(printed[1])  # print_result's dictionaries, in percent
    ours = {d: round(m.breakdown["dimension"][d]["accuracy"].value * 100, 1) for d in aspects
            if d != "avg"}  # fmt: skip
    ours["avg"] = round(m.metrics["accuracy"].value * 100, 1)
    assert ours == aspects
    fine = ast.literal_eval(printed[2])
    assert {f: round(v["accuracy"].value * 100, 1)
            for f, v in m.breakdown["fine_dimension"].items()} == fine  # fmt: skip
    assert m.metrics["accuracy"].value == pytest.approx(
        sum(r["rating"] for r in EXPECTED["rows"]) / len(EXPECTED["rows"])
    )
    # Its match success rate (0.0: no rules) is our format-hit rate.
    assert printed[3] == "Match Success Rate=0.0"
    assert m.metrics["unparsed_rate"].value == 1.0
    assert m.metrics["accuracy_rules_only"].value == 0.0
    assert SCRIPT.prompts["p0"] == rows[0]["question"]  # answer_prompt['captioning'] is empty


def test_tempcompass_captioning_with_its_judge_through_the_console(tmp_path: Path) -> None:
    needs_av()
    info = "Information A: {'action': 'run'}\nInformation B: {'action': 'walk'}"
    rows = [
        {"video": "1", "dimension": "action",
         "question": f"Describe. #t1\n{info}\nGenerated Caption:"},
        {"video": "2", "dimension": "speed",
         "question": f"Describe. #t2\n{info}\nGenerated Caption:"},
    ]  # fmt: skip
    mc = {
        "1": {"action": [{"question": "What? #m1\nA. run\nB. walk", "answer": "A. run"},
                         {"question": "Not this one\nA. run\nB. walk", "answer": "B. walk"}]},
        "2": {"speed": [{"question": "How fast? #m2\nA. slow\nB. fast", "answer": "B. fast"}]},
    }  # fmt: skip
    meta = {"1": {"eval_dim": {"action": {"type": "fine-grained action"}}},
            "2": {"eval_dim": {"speed": {"type": "absolute speed"}}}}  # fmt: skip
    copy = _copy(tmp_path / "tc", rows, mc, meta)
    # The model writes "A. B." captions a letter rule would read; only the judge rates them:
    # its answer to the first question of clip 1 is right, to clip 2's is "B" without a dot.
    table = [
        ("@judge #m1", "Reasoning: It runs.\nAnswer: A. run"),
        ("@judge #m2", "Reasoning: Fast.\nAnswer: B"),
        ("@vlm #t1", "A man runs. A."),
        ("@vlm #t2", "B. A car goes fast."),
    ]
    with FakeOpenAIServer(reply_table=table) as server:
        url = server.base_url
        out = tmp_path / "out"
        proc = lmmprobe("run", "-d", f"tempcompass-captioning,path={copy}", "-m",
                        f"openai:vlm@{url}", "--judge", f"openai:judge@{url}", "--db",
                        tmp_path / "db", "--out", out, "--frames", "2", "-q",
                        OPENAI_API_KEY="test-key")  # fmt: skip
        judged = [p for p in server.received_params if p.get("model") == "judge"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    metrics = next(iter(json.loads((out / "results.json").read_text())["models"].values()))[
        "metrics"
    ]
    assert metrics["accuracy"]["value"] == 0.5  # clip 1 right; "Answer: B" names no "B."
    assert metrics["accuracy_rules_only"]["value"] == 0.0  # no rules: nothing read
    # One judge call a caption, with eval_captioning.py's settings (its reply for clip 1 is
    # keyed by the first question of the video and aspect, not the second).
    assert len(judged) == 2, judged
    for params in judged:
        assert (params.get("max_tokens") or params.get("max_completion_tokens")) == 128
        assert (params["temperature"], params["top_p"]) == (1.0, 1.0)


def test_a_caption_question_without_its_multi_choice_question_is_named(tmp_path: Path) -> None:
    needs_av()
    good = {"video": "1", "dimension": "action", "question": "Describe. #t1\nGenerated Caption:"}
    lost = {"video": "2", "dimension": "speed", "question": "Describe. #t2\nGenerated Caption:"}
    bad = {"video": "3", "dimension": "order", "question": "Describe. #t3\nGenerated Caption:"}
    mc = {"1": {"action": [{"question": "What?\nA. run\nB. walk", "answer": "A. run"}]},
          "3": {"order": [{"question": "What?\nA. x\nB. y", "answer": "C. z"}]}}  # fmt: skip
    copy = _copy(tmp_path / "tc", [good, lost, bad], mc, {})
    file = copy / "questions" / "captioning.json"
    proc = lmmprobe("run", "-d", f"tempcompass-captioning,path={copy}", "-m", "first",
                    "--dry-run", columns=1000)  # fmt: skip
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said
    assert "1 request(s) to send of 1" in proc.stdout, said
    lines = said.splitlines()
    line = next((x for x in lines if f"{file}:2/speed/0: " in x), None)
    assert line is not None and "has none for this video and aspect" in line, said
    line = next((x for x in lines if f"{file}:3/order/0: " in x), None)
    assert line is not None and "'C. z' is none of its option lines" in line, said
