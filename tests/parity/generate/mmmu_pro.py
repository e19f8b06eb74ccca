"""Regenerate tests/parity/data/mmmu_pro.json.gz by running MMMU-Pro's released scoring code.

The reference is MMMU-Benchmark/MMMU ``mmmu-pro/evaluate.py``, imported from a checkout and run,
never copied. Runtime patch: its module's ``random.choice`` (the fallback of
``parse_multi_choice_response`` when nothing can be read) returns None, so the fallback is
recorded as None instead of a random letter (lmmprobe never scores a random option); nothing
else is changed. Two kinds of cases:

- ``released``: every row of the four answer files the repository ships
  (``mmmu-pro/output/gpt-4o_{standard(10 options),vision}_{direct,cot}.jsonl``, 1,730 real
  GPT-4o answers each): ``check_files`` is run on a copy of each in a temporary folder (the
  script's own entry point; it rewrites each row with ``pred_indexs`` and ``if_right``), and
  the accuracy it prints is recorded with each row's reading. ``check_files`` reads only file
  names matching ``MODEL_(standard|vision)_(cot|direct).jsonl``, which the shipped
  ``standard(10 options)`` names do not: their copies are named ``gpt-4o_standard_*.jsonl``.
- ``generated``: seeded answers written to be hard for the reading (an ``Answer:`` line naming
  one, several or no letters; several letters; bracketed and bare letters; a letter ending a
  word, ``B.``; option texts; empty and unreadable answers) over 1 to 12 options, each read by
  ``mmmu_process_results``.

Run with an environment holding numpy and pandas (evaluate.py imports them)::

    /tmp/refenv/bin/python tests/parity/generate/mmmu_pro.py --mmmu /path/to/MMMU

A re-run with the same seed writes the same data.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import importlib.util
import io
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

SEED = 20261130
DATA = Path(__file__).resolve().parents[1] / "data"
GENERATOR = "tests/parity/generate/mmmu_pro.py"
REPO = "MMMU-Benchmark/MMMU"
RELEASED = [
    "gpt-4o_standard(10 options)_direct.jsonl",
    "gpt-4o_standard(10 options)_cot.jsonl",
    "gpt-4o_vision_direct.jsonl",
    "gpt-4o_vision_cot.jsonl",
]


def _module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def released(evaluate: ModuleType, root: Path, options: dict[str, str]) -> list[dict[str, Any]]:
    files = []
    for name in RELEASED:
        with tempfile.TemporaryDirectory() as tmp:
            # check_files reads only names matching MODEL_(standard|vision)_(cot|direct).jsonl,
            # which the shipped "standard(10 options)" names do not: the copy is named so.
            copy = Path(tmp) / name.replace("standard(10 options)", "standard")
            shutil.copy(root / "mmmu-pro" / "output" / name, copy)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                evaluate.check_files(tmp)
            printed = out.getvalue()
            rows = [json.loads(line) for line in copy.read_text().splitlines()]
        accuracy = re.search(r"Accuracy:\s+(\S+)%", printed)
        assert accuracy is not None, printed
        for r in rows:  # the same questions in every file: their options are kept once
            assert options.setdefault(r["id"], r["options"]) == r["options"], r["id"]
        files.append(
            {
                "file": f"mmmu-pro/output/{name}",
                "printed_accuracy": float(accuracy.group(1)),
                "rows": [
                    {
                        "id": r["id"],
                        "answer": r["answer"],
                        "response": r["response"],
                        "pred_indexs": r["pred_indexs"],
                        "if_right": r["if_right"],
                    }
                    for r in rows
                ],
            }
        )
        print(f"{name}: {len(rows)} rows, accuracy {accuracy.group(1)}%")
    return files


WORDS = ["apple", "Blue sky", "river", "Paris", "mitochondria", "3.5 m", "red", "a", "The cell",
         "photosynthesis", "12", "B", "none of these", "PLAN B", "<image 2>", "x = 4",
         "Answer: C", "Dog.", "A and B", "(C)"]  # fmt: skip
TEMPLATES = [
    "{L}", "({L})", "{L}.", "Answer: {L}", "Answer: ({L})", "answer: {L}", "Answer:{L}",
    "Answer: {L}\nAnswer: {M}", "Reasoning... Answer: {L} or {M}", "Answer: {t}",
    "Answer: none", "Answer:", "The answer is {L}.", "I choose {L} because it fits.",
    "{L} and {M}", "({L}) or ({M})", "It is {t}.", "{t}", "", "   ", "hmm",
    "I don't know the answer to this one at all.", "'{L}'", "**{L}**", "{L}) {t}",
    "Both ({L}) and {M} are plausible, but ({M}) is best.",
    "{t} or maybe {u}, I think it is {t} really.", "Option {L}: {t}", "PLAN {L} is the one",
    "{L}.{M}.", "The options {L}. and {M}. differ", "Final: {L}\n\nAnswer: {M}", "{l}",
    "The answer is ({l}).", "Answer: {L}{M}", "x{L} y{M} ", "Answer: \\boxed{{{L}}}",
    "I think the answer is {t}, not {u}, definitely and surely.", "A B C D E F G H I J",
    "Answer: The correct option is {L}.", "{L}\n{M}", "!{L}?", ";:{L},.",
]  # fmt: skip


def generated(evaluate: ModuleType, rng: random.Random) -> list[dict[str, Any]]:
    cases = []
    for _ in range(1500):
        n = rng.choice([1, 2, 3, 4, 4, 4, 5, 8, 9, 10, 10, 10, 12])
        letters = [chr(ord("A") + i) for i in range(n)]
        texts = [rng.choice(WORDS) for _ in range(n)]
        i, j = rng.randrange(n), rng.randrange(n)
        response = rng.choice(TEMPLATES).format(
            L=letters[i], M=letters[j], l=letters[i].lower(), t=texts[i], u=texts[j]
        )
        row = {"id": "g", "options": str(texts), "answer": letters[rng.randrange(n)],
               "response": response}  # fmt: skip
        done = evaluate.mmmu_process_results(dict(row))
        cases.append({**row, "pred_indexs": done["pred_indexs"], "if_right": done["if_right"]})
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mmmu", type=Path, required=True, help="checkout of MMMU-Benchmark/MMMU")
    root = parser.parse_args().mmmu.resolve()
    commit = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    evaluate = _module(root / "mmmu-pro" / "evaluate.py", "mmmu_pro_evaluate")
    evaluate.random.choice = lambda seq: None  # the random fallback, recorded as None
    options: dict[str, str] = {}  # id -> options as the files write them, filled by released
    doc = {
        "reference": {
            "repo": REPO,
            "commit": commit,
            "file": "mmmu-pro/evaluate.py",
            "function": "check_files, mmmu_process_results (parse_multi_choice_response)",
        },
        "generator": GENERATOR,
        "seed": SEED,
        "released": released(evaluate, root, options),
        "released_options": options,
        "generated": generated(evaluate, random.Random(SEED)),
    }
    text = json.dumps(doc, indent=0, ensure_ascii=False) + "\n"
    # mtime=0: the same input writes the same bytes.
    with gzip.GzipFile(DATA / "mmmu_pro.json.gz", "wb", mtime=0) as f:
        f.write(text.encode("utf-8"))
    print(f"mmmu_pro.json.gz: {len(doc['generated'])} generated cases")


if __name__ == "__main__":
    main()
