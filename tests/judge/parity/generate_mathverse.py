"""Regenerate tests/judge/parity/mathverse.json by running MathVerse's released evaluation.

ZrrSkywalker/MathVerse's ``evaluation/extract_answer_s1.py`` and then
``evaluation/score_answer_s2.py`` (once as the README runs it, once with ``--quick_match``) run
as scripts, unmodified, from a checkout at `COMMIT`, with a scripted ``openai`` module first on
their path: its ``ChatCompletion.create`` records each prompt the scripts send and replies from
this script's table (a needle of the prompt → the reply). Recorded per case: the row, the
model's response, the extraction prompt sent, the judge's reply and the extraction stored, the
scoring prompt sent, its reply and the judgement stored, the quick-match judgement; and the
figures ``score_answer_s2.py`` prints (per subject and subfield, subject, problem version,
total).

One accommodation of the input, not of the code: ``score_answer_s2.py`` groups by
``inst['category']['subject']`` while the released data (``testmini.json``, the
``output_templates``) name that field ``metadata``; the inputs carry it under both names, or the
script stops with a KeyError after its first judgement.

Run from the repository root with the shared venv (the scripts import tqdm, PIL and ``openai``,
which the scripted module replaces)::

    /work/main/.venv/bin/python tests/judge/parity/generate_mathverse.py --git-dir MathVerse.git

``--git-dir`` is a clone (bare or not) of the repository: the four ``evaluation/`` files are
taken from it at `COMMIT` (``git show COMMIT:PATH``) into a temporary folder and run there
(the clone's data files, some of them large, are not needed).

A re-run writes the same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
REPO = "ZrrSkywalker/MathVerse"
COMMIT = "937b090597aeafb8e82b35d310a4bc5b9e2ea29d"
SEED = 37

# The scripted openai module: records each prompt, replies from the table (first needle found).
FAKE_OPENAI = """
import json, os

_TABLE = json.load(open(os.environ["MV_TABLE"], encoding="utf-8"))
_LOG = os.environ["MV_LOG"]


class OpenAI:
    def __init__(self, *a, **k):
        pass


class ChatCompletion:
    @staticmethod
    def create(model, messages, api_key=None, temperature=None, max_tokens=None, n=1):
        prompt = messages[0]["content"]
        with open(_LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps({"model": model, "temperature": temperature,
                                "max_tokens": max_tokens, "prompt": prompt}) + "\\n")
        for needle, reply in _TABLE:
            if needle in prompt:
                return {"choices": [{"message": {"content": reply}}]}
        # Not an exception: the scripts catch those and ask again, without end.
        import sys
        sys.stderr.write("no scripted reply for: " + prompt[-200:] + "\\n")
        os._exit(3)
"""

VERSIONS = ["Text Dominant", "Text Lite", "Vision Intensive", "Vision Dominant", "Vision Only"]
SUBJECTS = {
    "Plane Geometry": ["Angle", "Length", "Area"],
    "Solid Geometry": ["Volume", "Length"],
    "Functions": ["Coordinate", "Property", "Expression"],
}
# Extraction replies (reply, extraction the reply is meant to give); {a} is the answer.
EXTRACT_REPLIES = [
    "{a}",
    "Extracted Answer: {a}",
    "  {a}  ",
    "Extracted Answer: Extracted Answer: {a}",
    "Extracted answer: {a}",  # lower case "answer": not removed by the script
    "null",
    "Extracted Answer: ",
    "{a}\nExtracted Answer: {a}",
    "The answer is {a}.",
    "B:2\u221a{{3}}",
    "\\frac{{x^2}}{{81}} + \\frac{{y^2}}{{9}} = 1",
    "Extracted Answer: {{1, 2}}",
]
SCORE_REPLIES = ["1", "0", "Judgement: 1", "Judgement: 0", " 1 ", "Judgement:0", "\n0\n"]


def _rows(rng: random.Random) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(60):
        version = VERSIONS[i % len(VERSIONS)]
        subject = rng.choice(sorted(SUBJECTS))
        subfield = rng.choice(SUBJECTS[subject])
        choice = rng.random() < 0.5
        answer = (
            rng.choice("ABCD")
            if choice
            else rng.choice(["14", "(-2,1]", "3\u221a{2}", "y=2x+1", "0.5"])
        )
        question = (
            f"As shown in the figure, find the value {{x}}\nChoices:\nA:40\u00b0\nB:60\u00b0\nC:120\u00b0\nD:140\u00b0 #q{i}"
            if choice
            else f"Find L's length in cm, written \\frac{{a}}{{b}} if needed. #q{i}"
        )
        qtype = "multi-choice" if choice else "free-form"
        meta = {
            "split": "testmini",
            "source": "generated",
            "subject": subject,
            "subfield": subfield,
        }
        rows.append(
            {
                "sample_index": str(i + 1),
                "problem_index": str(i // 5 + 1),
                "problem_version": version,
                "question": question if version != "Vision Only" else f"#q{i}",
                "image": f"images_version_1-4/image_{i // 5 + 1}.png",
                "answer": answer,
                "question_type": qtype,
                "metadata": meta,
                "query_wo": f"Please directly answer the question. #w{i}",
                "query_cot": f"Please first conduct reasoning. #c{i}",
                # score_answer_s2.py reads this name (see the module docstring).
                "category": meta,
                "model_answer": rng.choice(
                    [
                        f"The answer is {answer} #r{i}",
                        f"Let's think. It's '{answer}' #r{i}",
                        f"I cannot tell. #r{i}",
                        f"Therefore, x = \\frac{{1}}{{2}}\n\nFinal: {answer} #r{i}",
                    ]
                ),
            }
        )
    return rows


def _script(
    rows: list[dict[str, Any]], rng: random.Random
) -> tuple[list[list[str]], list[dict[str, Any]]]:
    table: list[list[str]] = []
    plan: list[dict[str, Any]] = []
    for i, row in enumerate(rows):
        a = row["answer"] if rng.random() < 0.6 else rng.choice(["A", "C", "7", "null"])
        ext_reply = rng.choice(EXTRACT_REPLIES).format(a=a)
        score_reply = rng.choice(SCORE_REPLIES)
        # Stage 1 quotes the response (its marker #r); stage 2 the question (its marker #q).
        table.append([f"#r{i}'\nExtracted Answer: ", ext_reply])
        table.append([f"#q{i}\n[Standard Answer]", score_reply])
        plan.append({"extract_reply": ext_reply, "score_reply": score_reply})
    return table, plan


def _run(ref: Path, script: str, args: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, script, *args],
        cwd=ref / "evaluation",
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{script} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.stdout


def _figures(stdout: str) -> dict[str, str]:
    """The ``NAME Acc: 0.xxx`` lines score_answer_s2.py prints, by name.

    Its last line, ``Acc:`` over every version, is named ``overall``.
    """
    found = re.finditer(r"^(.*?) ?Acc: (\d\.\d{3})$", stdout, re.M)
    return {(m.group(1) or "overall"): m.group(2) for m in found}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--git-dir", type=Path, required=True, help="a clone of MathVerse")
    args = parser.parse_args()
    rng = random.Random(SEED)
    rows = _rows(rng)
    table, plan = _script(rows, rng)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        ref = tmp / "ref"
        (ref / "evaluation").mkdir(parents=True)
        for name in ("extract_answer_s1.py", "score_answer_s2.py", "prompts.py", "utils.py"):
            text = subprocess.run(
                ["git", "--git-dir", str(args.git_dir), "show", f"{COMMIT}:evaluation/{name}"],
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            (ref / "evaluation" / name).write_text(text, encoding="utf-8")
        (tmp / "fake" / "openai").mkdir(parents=True)
        (tmp / "fake" / "openai" / "__init__.py").write_text(FAKE_OPENAI, encoding="utf-8")
        (tmp / "table.json").write_text(json.dumps(table), encoding="utf-8")
        (tmp / "out").mkdir()
        (tmp / "output.json").write_text(json.dumps(rows), encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=str(tmp / "fake"), MV_TABLE=str(tmp / "table.json"))
        env["MV_LOG"] = str(tmp / "s1.jsonl")
        _run(ref, "extract_answer_s1.py", ["--model_output_file", str(tmp / "output.json"),
             "--save_file", str(tmp / "out" / "extraction.json"), "--api_key", "x"], env)  # fmt: skip
        env["MV_LOG"] = str(tmp / "s2.jsonl")
        stdout = _run(ref, "score_answer_s2.py", ["--answer_extraction_file",
                      str(tmp / "out" / "extraction.json"), "--save_file",
                      str(tmp / "out" / "score.json"), "--api_key", "x"], env)  # fmt: skip
        env["MV_LOG"] = str(tmp / "quick.jsonl")
        quick_out = _run(ref, "score_answer_s2.py", ["--answer_extraction_file",
                         str(tmp / "out" / "extraction.json"), "--save_file",
                         str(tmp / "out" / "quick.json"), "--quick_match", "--api_key", "x"], env)  # fmt: skip
        s1 = [json.loads(x) for x in (tmp / "s1.jsonl").read_text(encoding="utf-8").splitlines()]
        s2 = [json.loads(x) for x in (tmp / "s2.jsonl").read_text(encoding="utf-8").splitlines()]
        assert not (tmp / "quick.jsonl").exists(), "quick_match asked the judge"
        scored = json.loads((tmp / "out" / "score.json").read_text(encoding="utf-8"))
        quick = json.loads((tmp / "out" / "quick.json").read_text(encoding="utf-8"))
    assert len(s1) == len(s2) == len(rows) == len(scored) == len(quick)
    cases = []
    for row, p, c1, c2, out, q in zip(rows, plan, s1, s2, scored, quick, strict=True):
        cases.append(
            {
                "row": {k: v for k, v in row.items() if k not in ("category", "model_answer")},
                "response": row["model_answer"],
                "extract_prompt": c1["prompt"],
                "extract_reply": p["extract_reply"],
                "extraction": out["extraction"],
                "score_prompt": c2["prompt"],
                "score_reply": p["score_reply"],
                "judgement": out["judgement"],
                "quick_judgement": q["judgement"],
            }
        )
    doc = {
        "reference": {
            "repo": REPO,
            "commit": COMMIT,
            "files": "evaluation/extract_answer_s1.py, evaluation/score_answer_s2.py, "
            "evaluation/prompts.py, evaluation/utils.py",
            "judge_call": {k: s1[0][k] for k in ("model", "temperature", "max_tokens")},
        },
        "cases": cases,
        "figures": _figures(stdout),
        "quick_figures": _figures(quick_out),
    }
    out_path = HERE / "mathverse.json"
    out_path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out_path}: {len(cases)} cases, figures {doc['figures']}")


if __name__ == "__main__":
    main()
