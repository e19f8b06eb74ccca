"""Run MMIU's own scoring code on the parity inputs; write ``expected.json``.

OpenGVLab/MMIU @ 36c48ec ``evaluate.py`` and ``evaluate_correct.py`` are taken from a clone at
that commit and run as scripts, unmodified, in a temporary folder laid out as they read it:
``xx/TASK/Mantis/metadata_info.json`` holds each task's rows of ``dataset.json`` with the
model's answer (``answers.json``) under ``Mantis`` (one of the model names both scripts list;
``xx`` is the folder both name). A scripted ``openai`` module first on their path stands in for
gpt-4o-mini: ``client.chat.completions.create`` replies ``judge.json``'s reply for the ``#tN``
tag in the prompt (``!fail`` raises, which ``evaluate.py`` records as ``GPT error``) and
records each prompt. Recorded: per tag the choice ``evaluate.py`` stored and the judge prompt it
sent (null where it asked none), and ``evaluate_correct.py``'s ``Accuracy_data_all.csv`` column
for Mantis: each task's accuracy and ``Overall``.

    git clone https://github.com/OpenGVLab/MMIU /path/to/MMIU
    python tests/data/benchmarks/mmiu_parity/make_expected.py /path/to/MMIU

(``/path/to/MMIU`` may be a bare clone: the scripts are read with ``git show``.)
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
COMMIT = "36c48ec6d59732bc49e9c5ebd7670be41d34a874"
MODEL = "Mantis"

STUB = """
import json, os, re

_REPLIES = json.load(open(os.environ["MMIU_PARITY_JUDGE"], encoding="utf-8"))
_LOG = os.environ["MMIU_PARITY_LOG"]


class _Message:
    def __init__(self, content):
        self.content = content


class _Choice:
    def __init__(self, content):
        self.message = _Message(content)


class _Response:
    def __init__(self, content):
        self.choices = [_Choice(content)]


class _Completions:
    def create(self, model, messages, max_tokens):
        text = messages[0]["content"][0]["text"]
        tag = re.search(r"#(t[0-9]+)[?]\\nOptions: ", text).group(1)
        with open(_LOG, "a", encoding="utf-8") as log:  # one short line per call
            log.write(json.dumps({"tag": tag, "prompt": text, "model": model,
                                  "max_tokens": max_tokens}) + "\\n")
        reply = _REPLIES[tag]
        if reply == "!fail":
            raise RuntimeError("scripted failure")
        return _Response(reply)


class _Chat:
    completions = _Completions()


class OpenAI:
    def __init__(self, base_url=None, api_key=None):
        self.chat = _Chat()
"""


def main(repo: Path) -> None:
    rows = json.loads((HERE / "dataset.json").read_text(encoding="utf-8"))
    answers = json.loads((HERE / "answers.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for script in ("evaluate.py", "evaluate_correct.py"):
            text = subprocess.run(["git", "-C", str(repo), "show", f"{COMMIT}:{script}"],
                                  check=True, capture_output=True, text=True).stdout  # fmt: skip
            (work / script).write_text(text, encoding="utf-8")
        (work / "stub").mkdir()
        (work / "stub" / "openai.py").write_text(STUB, encoding="utf-8")
        by_task: dict[str, list[dict[str, object]]] = {}
        for row in rows:
            tag = re.search(r"#(t\d+)", row["question"]).group(1)  # type: ignore[union-attr]
            by_task.setdefault(row["task"], []).append({**row, MODEL: answers[tag]})
        for task, items in by_task.items():
            folder = work / "xx" / task / MODEL
            folder.mkdir(parents=True)
            (folder / "metadata_info.json").write_text(json.dumps(items), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(work / "stub"),
               "MMIU_PARITY_JUDGE": str(HERE / "judge.json"),
               "MMIU_PARITY_LOG": str(work / "calls.jsonl")}  # fmt: skip
        for script in ("evaluate.py", "evaluate_correct.py"):
            subprocess.run([sys.executable, script], cwd=work, env=env, check=True,
                           capture_output=True)  # fmt: skip
        prompts = {}
        for line in (work / "calls.jsonl").read_text(encoding="utf-8").splitlines():
            call = json.loads(line)
            assert call["model"] == "gpt-4o-mini" and call["max_tokens"] == 512, call
            prompts[call["tag"]] = call["prompt"]
        choices = {}
        for task in by_task:
            path = work / "xx" / task / MODEL / "metadata_info_choice.json"
            for item in json.loads(path.read_text(encoding="utf-8")):
                tag = re.search(r"#(t\d+)", item["question"]).group(1)
                choices[tag] = item[f"{MODEL}_choice"]
        with (work / "Accuracy_data_all.csv").open(encoding="utf-8") as f:
            table = {r[""]: float(r[MODEL]) for r in csv.DictReader(f)}
    out = {
        "source": f"OpenGVLab/MMIU@{COMMIT} evaluate.py, evaluate_correct.py",
        "rows": {tag: {"choice": choices[tag], "judge_prompt": prompts.get(tag)}
                 for tag in sorted(choices, key=lambda t: int(t[1:]))},
        "tasks": {k: v for k, v in table.items() if k != "Overall"},
        "Overall": table["Overall"],
    }  # fmt: skip
    (HERE / "expected.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
