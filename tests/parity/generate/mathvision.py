"""Regenerate tests/parity/data/mathvision.json.gz by running MATH-V's released evaluation.

The reference is mathllm/MATH-V ``evaluation/evaluate.py`` (with its ``utils.py``), imported
from a checkout and run, never copied, from the checkout's root (it reads ``./data/test.jsonl``
when imported). Nothing is patched. For each answer file: a copy in a temporary folder,
``evaluate(path, regen_answer=True)`` (rewrites each line with ``model_answer`` and
``correct``), then ``math_level_subject_acc(path)`` (writes ``*_result.json``: overall, per level,
per subject and per subject and level). Two kinds of files:

- ``released``: four of the answer files the repository ships in ``outputs/`` (Gemini-Pro CoT,
  InternLM-XComposer2-VL CoT, Qwen-VL-Max, LLaVA-v1.5-7B: 3,040 real answers each).
- ``generated``: 2,000 seeded answers over the test questions, written to be hard for the
  reading: boxed LaTeX (fractions, roots, degrees, tuples, several boxes), the gold answer
  reworded (``\\dfrac``, ``3/4``, ``0.5``, units, ``x = ...``), option letters and option texts,
  answer phrases, empty and unreadable answers.

Run with an environment holding latex2sympy2 1.9.1 (and its antlr4-python3-runtime 4.7.2),
numpy, fire and tqdm::

    /tmp/refenv/bin/python tests/parity/generate/mathvision.py --mathv /path/to/MATH-V

A re-run with the same seed writes the same data.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import importlib.util
import io
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

SEED = 20261130
DATA = Path(__file__).resolve().parents[1] / "data"
GENERATOR = "tests/parity/generate/mathvision.py"
REPO = "mathllm/MATH-V"
RELEASED = [
    "outputs/closed-source/Gemini/Gemini-Pro-CoT.jsonl",
    "outputs/open-source/Internlm/InternLM-XComposer2-VL-CoT.jsonl",
    "outputs/closed-source/Qwen/Qwen-VL-Max.jsonl",
    "outputs/open-source/LLavA/LLaVA-v1.5-7B.jsonl",
]


def _module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _score(evaluate: ModuleType, lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Run evaluate and math_level_subject_acc on `lines` written as an answer file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "answers.jsonl"
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            evaluate.evaluate(str(path), True)
            evaluate.math_level_subject_acc(str(path))
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        result = json.loads((Path(tmp) / "answers_result.json").read_text())
    return {
        "rows": [
            {
                "id": r["id"],
                "response": r["response"],
                "model_answer": r["model_answer"],
                "correct": r["correct"],
            }
            for r in rows
        ],
        "result": result,
    }


TEMPLATES = [
    "\\boxed{{{g}}}", "The answer is {g}.", "the final answer is {g}\nMore text.", "{g}",
    "x = {g}", "$${g}$$", "\\boxed{{{g}}} and then \\boxed{{{h}}}", "({L})\nBecause ...",
    "So the answer is ({L}).", "I pick {L}.", "\\boxed{{\\text{{{L}}}}}", "\\boxed{{{v}}}",
    "{g} cm", "\\boxed{{({g}, {h})}}", "\\boxed{{[{g},{h}]}}", "\\boxed{{{g}^\\circ}}",
    "\\boxed{{ {g} }}", "\\boxed{{-{g}}}", "", "I cannot tell from the image.",
    "The answer is: {g}", "The correct answer is {v}. It fits.", "Thus it is {g}",
    "The answer should be {g}\n\nDone", "\\boxed{{\\dfrac{{{g}}}{{1}}}}", "{L}\nExplanation",
    "(({L}))", "\\boxed{{{g}}}.", "= {g} \\approx 3", "{g} units", "{g}km", "\\boxed{{{g}",
    "\\boxed{{\\sqrt{{{g}}}}}", "\\boxed{{{g}\\%}}", "The answer is {g}.5", "{h}",
    "\\frac{{{g}}}{{2}}", "\\boxed{{{g}}}\\boxed{{{g}}}", "Answer: {L}", "{g}/1",
]  # fmt: skip
REWRITES = ["{g}", "\\dfrac{{3}}{{4}}", "3/4", "0.75", "0.5", "\\frac{{1}}{{2}}", "\\sqrt{{2}}",
            "1.41", "\\pi", "3.14", "2\\sqrt{{3}}", "(1,2)", "e", "10^{{3}}", "1000",
            "\\frac{{\\sqrt{{6}}}}{{6}}", "0.41", "-{g}", "{g}.0", "{g}0"]  # fmt: skip


def generated(evaluate: ModuleType, rng: random.Random) -> dict[str, Any]:
    questions = list(evaluate.id_raw.values())
    lines = []
    for _ in range(2000):
        q = rng.choice(questions)
        letters = ["A", "B", "C", "D", "E"]
        k = rng.randrange(5)
        gold = q["answer"]
        g = rng.choice(REWRITES).format(g=gold.strip("$ ")) if rng.random() < 0.5 else gold
        h = rng.choice(REWRITES).format(g=rng.choice(["2", "7", "1/3"]))
        v = q["options"][k] if q["options"] else g
        response = rng.choice(TEMPLATES).format(g=g, h=h, L=letters[k], v=v)
        lines.append({"id": q["id"], "response": response})
    return _score(evaluate, lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mathv", type=Path, required=True, help="checkout of mathllm/MATH-V")
    root = parser.parse_args().mathv.resolve()
    commit = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    os.chdir(root)  # evaluate.py reads ./data/test.jsonl when imported
    sys.path.insert(0, str(root / "evaluation"))  # its `from utils import ...`
    evaluate = _module(root / "evaluation" / "evaluate.py", "mathv_evaluate")
    released = []
    for name in RELEASED:
        lines = [json.loads(x) for x in (root / name).read_text(encoding="utf-8").splitlines()]
        done = _score(evaluate, [{"id": x["id"], "response": x["response"]} for x in lines])
        released.append({"file": name, **done})
        print(f"{name}: {len(lines)} answers, {done['result']['-all']}")
    questions = {
        q["id"]: {k: q[k] for k in ("answer", "options", "subject", "level")}
        for q in evaluate.id_raw.values()
    }
    doc = {
        "reference": {
            "repo": REPO,
            "commit": commit,
            "file": "evaluation/evaluate.py, evaluation/utils.py",
            "function": "evaluate(regen_answer=True), math_level_subject_acc",
        },
        "generator": GENERATOR,
        "seed": SEED,
        "questions": questions,
        "released": released,
        "generated": generated(evaluate, random.Random(SEED)),
    }
    text = json.dumps(doc, indent=0, ensure_ascii=False) + "\n"
    with gzip.GzipFile(DATA / "mathvision.json.gz", "wb", mtime=0) as f:
        f.write(text.encode("utf-8"))
    print(f"mathvision.json.gz: {len(doc['generated']['rows'])} generated answers")


if __name__ == "__main__":
    main()
