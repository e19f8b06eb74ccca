"""Regenerate tests/parity/data/mmmu_published.json by running MMMU's released evaluation.

MMMU-Benchmark/MMMU ``mmmu/main_parse_and_eval.py --path FOLDER --subject ALL`` is executed,
unchanged, from its checkout (so its ``random.seed(42)`` at import of ``utils/eval_utils.py`` and
its subject order decide its random letters) on:

- ``llava1.5_13b`` and ``qwen_vl``: the released ``mmmu/example_outputs/`` folders (900 answers
  each);
- ``scripted``: a seeded set of answers over 9 subjects with many answers its parser cannot
  read (so the random fallback is drawn often, across subjects, from one stream);
- ``parsed:llava1.5_13b`` and ``parsed:qwen_vl``: ``mmmu/main_eval_only.py --output_path
  example_outputs/MODEL/total_val_output.json`` (parsed answers against ``answer_dict_val.json``),
  its printed table recorded.

Recorded per case: the inputs (compact), each item's ``parsed_pred`` and ``judge`` from the
``parsed_output.json`` it writes, each subject's ``result.json``, and the overall figure of
``calculate_ins_level_acc`` over the subjects in the order it evaluated them (as
``main_eval_only.py`` and ``print_results.py`` compute it).

Run (the shared venv has what it needs: numpy)::

    git --git-dir=/work/.mirror/MMMU-Benchmark+MMMU/repo archive bb0b95a mmmu | tar x -C /tmp/m
    python tests/parity/generate/mmmu_published.py --mmmu /tmp/m/mmmu

A re-run writes the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SEED = 20261127
COMMIT = "bb0b95a945998d91dfef37e969e07d49d1139438"
OUT = Path(__file__).resolve().parents[1] / "data" / "mmmu_published.json"

_MC_RESPONSES = [
    "(A)", "B", "C.", "The answer is (D).", "", "I cannot tell from the image.", "E",
    "b", "Answer: A", "None of these", "A or B", "(B) and (C)", "Option C is right",
    "It must be the first one.", "42", "?", "Let me think step by step about this figure.",
]  # fmt: skip
_OPEN = [("30", ["30 watts", "36 watts", "The answer is 30.", "thirty", "", "3.0e1"]),
         ("blue", ["Blue", "It is blue.", "green", "", "The color is light blue"]),
         ("1,200", ["1200", "1,200 dollars", "1.2k", "so the result is 1200"])]  # fmt: skip
_SUBJECTS = ["Sociology", "Accounting", "Math", "Art", "Physics", "Music", "Pharmacy",
             "Electronics", "History"]  # fmt: skip


def _scripted(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    folders: dict[str, list[dict[str, Any]]] = {}
    for subject in _SUBJECTS:
        items = []
        for i in range(1, rng.randint(8, 16)):
            sid = f"validation_{subject}_{i}"
            if rng.random() < 0.8:
                n = rng.randint(2, 5)
                letters = [chr(ord("A") + k) for k in range(n)]
                texts = [f"option {subject.lower()} {k}" for k in range(n)]
                response = rng.choice(
                    [*_MC_RESPONSES, f"I think it is {texts[rng.randrange(n)]} here."]
                )
                items.append(
                    {
                        "id": sid,
                        "question_type": "multiple-choice",
                        "answer": rng.choice(letters),
                        "all_choices": letters,
                        "index2ans": dict(zip(letters, texts, strict=True)),
                        "response": response,
                    }
                )
            else:
                gold, answers = rng.choice(_OPEN)
                items.append(
                    {
                        "id": sid,
                        "question_type": "short-answer",
                        "answer": gold,
                        "response": rng.choice(answers),
                    }
                )
        folders[subject] = items
    return folders


def _released(root: Path, model: str) -> dict[str, list[dict[str, Any]]]:
    folder = root / "example_outputs" / model
    out = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        out[sub.name] = json.loads((sub / "output.json").read_text(encoding="utf-8"))
    return out


def _run(root: Path, folders: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        for subject, items in folders.items():
            (Path(tmp) / subject).mkdir()
            (Path(tmp) / subject / "output.json").write_text(json.dumps(items), encoding="utf-8")
        printed = subprocess.run(
            [sys.executable, "main_parse_and_eval.py", "--path", tmp, "--subject", "ALL"],
            cwd=root,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        # The subjects in the order it evaluated them (its printed "Evaluating: X" lines).
        order = [
            line.split(": ", 1)[1]
            for line in printed.splitlines()
            if line.startswith("Evaluating: ") and line.split(": ", 1)[1] in folders
        ]
        subjects: dict[str, Any] = {}
        items: dict[str, Any] = {}
        for subject in order:
            result = json.loads((Path(tmp) / subject / "result.json").read_text())
            subjects[subject] = result
            for row in json.loads((Path(tmp) / subject / "parsed_output.json").read_text()):
                items[row["id"]] = {"parsed_pred": row["parsed_pred"], "judge": row["judge"]}
    spec = importlib.util.spec_from_file_location("mmmu_eval_utils", root / "utils/eval_utils.py")
    assert spec is not None and spec.loader is not None
    eval_utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(eval_utils)
    overall = eval_utils.calculate_ins_level_acc(subjects)
    return {"order": order, "subjects": subjects, "overall": overall, "items": items}


def _parsed(root: Path, model: str) -> dict[str, Any]:
    """``main_eval_only.py`` on the released parsed answers (``total_val_output.json``)."""
    file = f"example_outputs/{model}/total_val_output.json"
    printed = subprocess.run(
        [sys.executable, "main_eval_only.py", "--output_path", file],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    results = ast.literal_eval(printed.strip().splitlines()[-1])
    answers = json.loads((root / "answer_dict_val.json").read_text(encoding="utf-8"))
    return {
        "name": f"parsed:{model}",
        "parsed": json.loads((root / file).read_text(encoding="utf-8")),
        "answers": answers,
        "expected": results,
    }


def _compact(folders: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    keep = ("id", "question_type", "answer", "all_choices", "index2ans", "response")
    return {s: [{k: r[k] for k in keep if k in r} for r in rows] for s, rows in folders.items()}


def main() -> None:
    """Run MMMU's evaluation on each case and write the fixture."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mmmu", type=Path, required=True, help="the checkout's mmmu/ folder")
    args = parser.parse_args()
    root: Path = args.mmmu
    cases = []
    for name in ("llava1.5_13b", "qwen_vl"):
        folders = _released(root, name)
        cases.append({"name": name, "folders": _compact(folders), "expected": _run(root, folders)})
    folders = _scripted(random.Random(SEED))
    cases.append({"name": "scripted", "folders": folders, "expected": _run(root, folders)})
    for name in ("llava1.5_13b", "qwen_vl"):
        cases.append(_parsed(root, name))
    doc = {
        "reference": {
            "repo": "MMMU-Benchmark/MMMU",
            "commit": COMMIT,
            "file": "mmmu/main_parse_and_eval.py (+ utils/eval_utils.py calculate_ins_level_acc)",
            "command": "python main_parse_and_eval.py --path FOLDER --subject ALL",
        },
        "generator": "tests/parity/generate/mmmu_published.py",
        "seed": SEED,
        "cases": cases,
    }
    OUT.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
    for case in cases:
        overall = (
            case["expected"]["overall"]
            if "items" in case["expected"]
            else case["expected"]["Overall"]
        )
        print(f"{case['name']}: overall {overall}")
    shutil.rmtree(root / "__pycache__", ignore_errors=True)


if __name__ == "__main__":
    main()
