"""Run TempCompass's captioning scoring on generated captions and judge replies; write its file.

TempCompass (llyx97/TempCompass @ ``TEMPCOMPASS``): ``eval_captioning.py``'s ``main`` run as
written on a predictions file of generated captioning questions (22 videos covering its 11
fine-grained aspects, each with its ``meta_info.json`` entry, and a ``questions/multi-choice.json``
whose first question of each video and aspect is the one its judge answers; a second one with
another answer is there to show the first is used), from a folder holding that
``meta_info.json``. Only its ChatGPT call is replaced: the module's ``requests`` answers each
request with a recorded reply chosen by the caption in the prompt (the request itself, its
settings and prompt, is recorded), and ``time.sleep`` between its retries returns at once.
Everything else (``get_llm_output``, ``parse_llm_output``, ``get_eval_result``, ``print_result``)
is the script's own. Recorded: each rating and the judge's answer as it read it, the printed
accuracy lines, every prompt and the request's settings.

A second run on other videos holds the replies the script rates -1 (an empty reply, a refused
request, a reply without ``usage`` tried eleven times, the literal ``invalid_request_error``):
recorded apart, since lmmprobe leaves those unjudged (rated 0).

The captions and judge replies are made here from a seed: captions with ``</s>``, blanks, several
lines, an empty one; judge replies right and wrong, ``Answer: B`` without its dot, several
``Answer`` lines, no ``Answer`` line, two options named, lower case, a full-width colon, CRLF.

    python tests/data/benchmarks/video_parity/make_expected_captioning.py TEMPCOMPASS_CHECKOUT
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import random
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

from make_expected import FINE, TEMPCOMPASS  # type: ignore[import-not-found]

HERE = Path(__file__).parent

TEXTS = ["running", "walking", "jumping", "swimming", "turning left", "3.5 times faster"]


def judge_replies(gold: str, other: str) -> list[str]:
    """Judge replies about a caption whose question's gold line is `gold` (`other` another)."""
    g = gold.split(". ")[0]
    o = other.split(". ")[0]
    return [
        f"Reasoning: The description says so.\nAnswer: {gold}", f"Reasoning: No.\nAnswer: {other}",
        "Reasoning: The description lacks it.\nAnswer: None of the choices are correct",
        f"Answer: {g}", gold, f"Answer: {gold}\nAnswer: {other}", f"Answer: {other}\nAnswer: {gold}",
        f"Reasoning: The Answer is {o}.\nSo it is.", f"Answer:{gold}", f"Answer: {g}.{gold[3:]}",
        f"Answer: {gold}. Also {other}", f"  Reasoning:  spaced  \n  Answer:  {gold}  \n",
        f"answer: {gold}", f"The answer is {gold}", f"Reasoning: r\r\nAnswer: {gold}\r\n",
        f"Answer: {gold}\n```", "Correct", f"Answer: D. {gold[3:]}",
        f"Reasoning: Answer: {other}", f"Reasoning: Answer: {other}\nAnswer: {gold}",
        f"Answer\uff1a{gold}", f"{g}.  {gold[3:]}", f"Reasoning: fine\nAnswer: {g}. A. B.",
        f"Answer: {gold}</s>", f"Answer: ({g}) {gold[3:]}", f"Answer: {g}. ",
    ]  # fmt: skip


def captions(i: int) -> list[str]:
    """Captions of clip `i` (each names its clip, so a judge reply can be found by it)."""
    return [
        f"A man is running in clip {i}.", f"A man is running in clip {i}.</s>",
        f"  A dog walks in clip {i}.  ", f"Clip {i}: first line.\nSecond line.",
        f"Answer: A. in clip {i}", f"</s>clip {i} jumps",
    ]  # fmt: skip


FAILURES = [
    ("empty", {"choices": [{"message": {"content": ""}}], "usage": {}}),
    ("blank", {"choices": [{"message": {"content": "   "}}], "usage": {}}),
    ("refused", {"error": {"type": "invalid_request_error"}, "usage": {}}),
    ("literal", {"choices": [{"message": {"content": "invalid_request_error"}}], "usage": {}}),
    ("no-usage", {"choices": [{"message": {"content": "Answer: A. x"}}]}),
]


class FakeRequests:
    """``requests`` as the script uses it: ``post`` answered from a table keyed by the prompt's
    tail (the caption and the multi-choice question after ``Video Description:``)."""

    def __init__(self, table: dict[str, dict[str, Any]], head: str) -> None:
        self.table = table
        self.head = head  # what every prompt starts with: the instructions and examples
        self.sent: list[dict[str, Any]] = []

    def post(self, url: str, headers: dict[str, str], data: bytes) -> types.SimpleNamespace:
        body = json.loads(data.decode("utf-8"))
        self.sent.append(body)
        prompt = body["messages"][1]["content"]
        assert prompt.startswith(self.head), prompt[:200]
        answer = self.table[prompt[len(self.head) :]]
        return types.SimpleNamespace(content=json.dumps(answer).encode("utf-8"))


def load(checkout: Path) -> types.ModuleType:
    sys.path.insert(0, str(checkout))
    spec = importlib.util.spec_from_file_location("tc_captioning", checkout / "eval_captioning.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.args = argparse.Namespace(video_llm="video-llava")  # its __main__ sets it
    module.time = types.SimpleNamespace(sleep=lambda s: None)  # its retries wait 1-2 s each
    return module


def run(module: types.ModuleType, meta: dict[str, Any], predictions: dict[str, Any],
        mc: dict[str, Any], table: dict[str, dict[str, Any]],
        every_aspect: bool = True) -> tuple[dict[str, Any], list[str], FakeRequests]:  # fmt: skip
    """``main`` on `predictions`; its ratings, printed lines and the requests it sent.

    Without `every_aspect`, ``print_result`` (which divides by each aspect's count) fails after
    the ratings are made: the ratings are still returned.
    """
    fake = FakeRequests(table, f"{module.base_prompt}\nVideo Description:")
    module.requests = fake
    here = os.getcwd()
    printed = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "meta_info.json").write_text(json.dumps(meta), encoding="utf-8")
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
                results: dict[str, Any] = {}
                try:
                    module.main(predictions, results, str(Path(tmp) / "out.json"), mc)
                except ZeroDivisionError:
                    if every_aspect:
                        raise
        finally:
            os.chdir(here)
    return results, printed.getvalue().splitlines(), fake


def main() -> None:
    module = load(Path(sys.argv[1]))
    rng = random.Random(2004)
    videos = [(dim, fine) for dim, fines in FINE.items() for fine in fines] * 2
    meta: dict[str, Any] = {}
    mc: dict[str, Any] = {}
    predictions: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    table: dict[str, dict[str, Any]] = {}
    clip = 0
    for v, (dim, fine) in enumerate(videos):
        vid = f"9{v:03d}" + ("_reverse" if v % 4 == 0 else "")
        meta[vid] = {"eval_dim": {d: ({"type": fine} if d == dim else None) for d in FINE}}
        n = rng.choice([3, 4])
        texts = rng.sample(TEXTS, n)
        gold, other = rng.sample(range(n), 2)
        lines = [f"{'ABCD'[k]}. {t}" for k, t in enumerate(texts)]
        question = f"What happens in video {vid}?\n" + "\n".join(lines)
        decoy = f"What else happens in video {vid}?\n" + "\n".join(lines)
        mc[vid] = {dim: [{"question": question, "answer": lines[gold]},
                         {"question": decoy, "answer": lines[other]}]}  # fmt: skip
        info = "\n".join(f"Information {'ABCD'[k]}: {{'subject': 'man', 'action': '{t}'}}"
                         for k, t in enumerate(texts))  # fmt: skip
        replies = judge_replies(lines[gold], lines[other])
        for _ in range(rng.choice([3, 4, 5])):
            caption = rng.choice(captions(clip))
            if clip % 17 == 5:
                caption = ""  # an empty caption is judged as it is
            reply = rng.choice(replies)
            cap_q = f"Describe clip {clip} of video {vid}.\n{info}\nGenerated Caption:"
            pred = {"question": cap_q, "answer": lines[gold], "prediction": caption}
            predictions.setdefault(vid, {}).setdefault(dim, []).append(pred)
            key = f"{caption.replace('</s>', '').strip()}\nMulti-Choice Question:\n{question}\n"
            assert key not in table, key
            table[key] = {"choices": [{"message": {"content": reply}}], "usage": {"n": 1}}
            rows.append({"video": vid, "dimension": dim, "question": cap_q,
                         "caption": caption, "judge_reply": reply})  # fmt: skip
            clip += 1
    results, printed, fake = run(module, meta, predictions, mc, table)
    for vid, dims in results.items():  # ratings back onto the rows, in order
        for dim, rated in dims.items():
            mine = [r for r in rows if r["video"] == vid and r["dimension"] == dim]
            for row, result in zip(mine, rated, strict=True):
                row["rating"] = result["rating"]
                row["judge_answer"] = result["chatgpt-answer"]
    settings = {k: v for k, v in fake.sent[0].items() if k != "messages"}
    settings["system"] = fake.sent[0]["messages"][0]["content"]

    failures: list[dict[str, Any]] = []
    f_meta: dict[str, Any] = {}
    f_mc: dict[str, Any] = {}
    f_pred: dict[str, Any] = {}
    f_table: dict[str, dict[str, Any]] = {}
    for k, (kind, answer) in enumerate(FAILURES):
        vid = f"7{k:03d}"
        f_meta[vid] = {"eval_dim": {"action": {"type": "fine-grained action"}}}
        f_mc[vid] = {
            "action": [{"question": f"What in {vid}?\nA. run\nB. walk", "answer": "A. run"}]
        }
        caption = f"failure {kind}"
        f_pred[vid] = {"action": [{"question": f"Describe {vid}.", "answer": "A. run",
                                   "prediction": caption}]}  # fmt: skip
        f_table[f"{caption}\nMulti-Choice Question:\n{f_mc[vid]['action'][0]['question']}\n"] = (
            answer
        )
        failures.append({"kind": kind, "response": answer})
    f_results, _, f_fake = run(module, f_meta, f_pred, f_mc, f_table, every_aspect=False)
    for k, row in enumerate(failures):
        row["rating"] = f_results[f"7{k:03d}"]["action"][0]["rating"]
    out = {
        "tempcompass_commit": TEMPCOMPASS,
        "meta_info": meta,
        "multi_choice": mc,
        "rows": rows,
        "printed": printed,
        "judge_prompts": [body["messages"][1]["content"] for body in fake.sent],
        "request": settings,
        "failures": failures,
        "failure_requests": len(f_fake.sent),
    }
    (HERE / "expected_captioning.json").write_text(
        json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
