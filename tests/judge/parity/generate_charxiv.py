"""Regenerate tests/judge/parity/charxiv.json.gz by running CharXiv's released evaluation.

princeton-nlp/CharXiv's ``src/evaluate.py --mode reasoning`` and then ``src/get_stats.py`` run as
scripts, unmodified, on the 1,000 real val reasoning questions (``data/*_val.json`` at
`COMMIT`) with one generated response each, and a scripted ``openai`` module first on their
path: its ``OpenAI().chat.completions.create`` records each prompt and the call's settings and
replies from this script's table (a needle of the prompt → the reply; the same reply on every
retry). Recorded per question: the row as lmmprobe's reader joins it, the question
``build_reasoning_queries`` asks the model, the response, the grading prompt, the reply, how many
times the script asked, the ``extracted_answer`` and ``score`` it stored; and the statistics
``get_stats.py`` wrote.

Run from the repository root with the shared venv (the scripts import tqdm and ``openai``,
which the scripted module replaces)::

    /work/main/.venv/bin/python tests/judge/parity/generate_charxiv.py --git-dir CharXiv.git

``--git-dir`` is a clone (bare or not) of princeton-nlp/CharXiv; the files are taken from it at
`COMMIT` (``git show COMMIT:PATH``). A re-run writes the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
REPO = "princeton-nlp/CharXiv"
COMMIT = "7ebe88f78dee387691551f071abcb2b9e1a8025b"
SEED = 37
FILES = (
    "src/evaluate.py", "src/reasoning_utils.py", "src/constants.py", "src/get_stats.py",
    "src/score_utils.py", "data/reasoning_val.json", "data/descriptive_val.json",
    "data/image_metadata_val.json",
)  # fmt: skip

FAKE_OPENAI = """
import json, os, sys, types

_TABLE = json.load(open(os.environ["CX_TABLE"], encoding="utf-8"))
_LOG = os.environ["CX_LOG"]


def _create(**kwargs):
    prompt = kwargs["messages"][0]["content"]
    with open(_LOG, "a", encoding="utf-8") as f:
        settings = {k: v for k, v in kwargs.items() if k != "messages"}
        f.write(json.dumps({"settings": settings, "prompt": prompt}) + "\\n")
    for needle, reply in _TABLE:
        if needle in prompt:
            message = types.SimpleNamespace(content=reply)
            return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])
    sys.stderr.write("no scripted reply for: " + prompt[-200:] + "\\n")
    os._exit(3)


class OpenAI:
    def __init__(self, *a, **k):
        self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=_create))
"""

# Replies: the valid ones, then the ones the script asks again about ({a} the extraction).
REPLIES = [
    '{{"extracted_answer": "{a}", "score": 1}}',
    '{{"extracted_answer": "{a}", "score": 0}}',
    '{{\n  "extracted_answer": "{a}",\n  "score": 1\n}}',
    '{{"extracted_answer": "{a}", "score": 1.0}}',
    '{{"extracted_answer": "{a}", "score": true}}',
    '{{"extracted_answer": "{a}", "score": "1"}}',
    '{{"extracted_answer": "{a}", "score": 0.5}}',
    '{{"extracted_answer": "{a}", "score": 2}}',
    '{{"extracted_answer": "", "score": 0}}',
    '{{"extracted_answer": ["{a}"], "score": 1}}',
    '{{"extract_answer": "{a}", "score": 1}}',  # the key the prefix names: not the one read
    "Score: 1",
    "[1]",
    '```json\n{{"extracted_answer": "{a}", "score": 1}}\n```',
]
WEIGHTS = [20, 20, 5, 4, 4, 3, 2, 2, 3, 2, 3, 2, 1, 2]


def _git(git_dir: Path, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{COMMIT}:{path}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


def _run(ref: Path, args: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run([sys.executable, *args], cwd=ref, env=env, capture_output=True,
                          text=True, check=False)  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"{args[0]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--git-dir", type=Path, required=True, help="a clone of CharXiv")
    args = parser.parse_args()
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        ref = tmp / "ref"
        for path in FILES:
            (ref / path).parent.mkdir(parents=True, exist_ok=True)
            (ref / path).write_text(_git(args.git_dir, path), encoding="utf-8")
        (ref / "results").mkdir()
        data = json.loads((ref / "data/reasoning_val.json").read_text(encoding="utf-8"))
        described = json.loads((ref / "data/descriptive_val.json").read_text(encoding="utf-8"))
        meta = json.loads((ref / "data/image_metadata_val.json").read_text(encoding="utf-8"))
        # The questions the model is asked: the reference's own build_reasoning_queries.
        sys.path.insert(0, str(ref / "src"))
        from reasoning_utils import build_reasoning_queries  # type: ignore[import-not-found]

        queries = build_reasoning_queries(data, str(ref / "images"))
        sys.path.pop(0)
        gen: dict[str, Any] = {}
        table: list[list[str]] = []
        plan: dict[str, dict[str, str]] = {}
        for key, q in queries.items():
            fid = str(q["figure_id"])
            answer = data[str(key)]["answer"]
            said = answer if rng.random() < 0.6 else rng.choice(["0.5", "(b)", "Not sure", "12"])
            response = rng.choice(
                [
                    f"The answer is {said}. #r{fid}",
                    f"Looking at the chart, {said}. #r{fid}",
                    f"#r{fid}",
                    f"I think it's '{said}' <|ground_truth|> #r{fid}",
                ]
            )
            reply = rng.choices(REPLIES, weights=WEIGHTS)[0].format(a=said.replace('"', "'"))
            gen[fid] = {
                "figure_id": q["figure_id"], "inst_category": q["inst_category"],
                "raw_question": q["raw_question"], "response": response,
            }  # fmt: skip
            table.append([f"#r{fid}\n", reply])
            plan[fid] = {"question": q["question"], "response": response, "reply": reply}
        (ref / "results/gen-parity-reasoning_val.json").write_text(
            json.dumps(gen), encoding="utf-8"
        )
        (tmp / "fake/openai").mkdir(parents=True)
        (tmp / "fake/openai/__init__.py").write_text(FAKE_OPENAI, encoding="utf-8")
        (tmp / "table.json").write_text(json.dumps(table), encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=str(tmp / "fake"), CX_TABLE=str(tmp / "table.json"),
                   CX_LOG=str(tmp / "calls.jsonl"))  # fmt: skip
        _run(ref, ["src/evaluate.py", "--model_name", "parity", "--split", "val", "--mode",
                   "reasoning", "--api_key", "x"], env)  # fmt: skip
        _run(ref, ["src/get_stats.py", "--model_name", "parity", "--split", "val"], env)
        calls = [
            json.loads(x) for x in (tmp / "calls.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        scores = json.loads(
            (ref / "results/scores-parity-reasoning_val.json").read_text(encoding="utf-8")
        )
        stats = json.loads(
            (ref / "results/stats-parity-reasoning_val.json").read_text(encoding="utf-8")
        )
    by_case: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        fid = next(n[2:-1] for n, _ in table if n in call["prompt"])
        by_case.setdefault(fid, []).append(call)
    cases = []
    for key, entry in data.items():
        fid = str(entry["figure_id"])
        asked = by_case[fid]
        assert all(c["prompt"] == asked[0]["prompt"] for c in asked)
        cases.append(
            {
                "row": {**entry, "num_subplots": described[key]["num_subplots"],
                        "category": meta[key]["category"], "year": meta[key]["year"]},
                "question": plan[fid]["question"],
                "response": plan[fid]["response"],
                "grading_prompt": asked[0]["prompt"],
                "reply": plan[fid]["reply"],
                "asked": len(asked),
                "extracted_answer": scores[fid]["extracted_answer"],
                "score": scores[fid]["score"],
            }
        )  # fmt: skip
    doc = {
        "reference": {
            "repo": REPO,
            "commit": COMMIT,
            "files": ", ".join(FILES),
            "judge_call": calls[0]["settings"],
        },
        "cases": cases,
        "stats": stats,
    }
    out = HERE / "charxiv.json.gz"
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    with gzip.GzipFile(out, "wb", mtime=0) as f:
        f.write(text.encode("utf-8"))
    print(f"wrote {out}: {len(cases)} cases, {len(calls)} calls; stats {stats['Overall Score']}")


if __name__ == "__main__":
    main()
