"""Regenerate the parity data of the metrics lmms-eval defines, by running lmms-eval's code.

Writes five files under tests/parity/data/:

- ``benchmark_open_evalai.json``: ``textvqa_process_results`` (``lmms_eval/tasks/textvqa/
  utils.py``, the EvalAI answer processor and 10-annotator accuracy; ``vizwiz_vqa`` runs the
  same code) on seeded answer sets of 10 and predictions;
- ``benchmark_open_okvqa.json``: ``ok_vqa_process_results`` (``lmms_eval/tasks/ok_vqa/utils.py``)
  on such answer sets and predictions (the same computation, checked from its own code);
- ``benchmark_open_vqav2.json``: ``vqav2_process_results`` (``lmms_eval/tasks/vqav2/utils.py``,
  VQA's punctuation and digit-article rules on every answer, then the 10-annotator accuracy) on
  answer records ``{answer, answer_confidence, answer_id}`` as lmms-lab/VQAv2 stores them;
- ``benchmark_open_chartqa.json``: ``relaxed_correctness`` (``lmms_eval/tasks/chartqa/utils.py``)
  on numbers (integers, decimals, percentages, exponents, signs, ``nan``/``inf``, underscores,
  surrounding spaces, zero gold answers, values 4-6% apart) and words;
- ``benchmark_open_gqa.json``: ``exact_match_hf_evaluate`` (``lmms_eval/api/metrics.py``) with
  ``ignore_case=True, ignore_punctuation=True`` as ``lmms_eval/tasks/gqa/gqa.yaml`` sets, on the
  generation stripped as ``ConfigurableTask.process_results`` strips it.

lmms-eval's package ``__init__`` files import its whole framework (models, torch, loguru...),
so the script does not import the installed package: it extracts the few files it runs from a
checkout into a temporary tree with empty package ``__init__`` files, gives ``loguru`` a stand-in
logger (the functions run never log), and takes ``exact_match_hf_evaluate`` out of
``metrics.py`` with ``ast`` (that module's imports pull in sacrebleu and the registry). Usage::

    .venv/bin/python tests/parity/generate/benchmark_open_lmms_eval.py \\
        --git-dir /work/.mirror/EvolvingLMMs-Lab+lmms-eval/repo
"""

from __future__ import annotations

import argparse
import ast
import importlib
import logging
import random
import re
import string
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import numpy as np
from benchmark_open_cases import annotators, dump, prediction, vary

SEED = 20261125
N_CASES = 3000
COMMIT = "75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3"
DATA = Path(__file__).resolve().parents[1] / "data"
FILES = (
    "lmms_eval/tasks/_task_utils/vqa_eval_metric.py",
    "lmms_eval/tasks/_task_utils/file_utils.py",
    "lmms_eval/tasks/textvqa/utils.py",
    "lmms_eval/tasks/vqav2/utils.py",
    "lmms_eval/tasks/ok_vqa/utils.py",
    "lmms_eval/tasks/chartqa/utils.py",
    "lmms_eval/api/metrics.py",
)


def _extract(git_dir: Path, commit: str, folder: Path) -> None:
    for name in FILES:
        text = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{commit}:{name}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for package in ("lmms_eval", "lmms_eval/tasks", "lmms_eval/tasks/_task_utils",
                    "lmms_eval/tasks/textvqa", "lmms_eval/tasks/vqav2", "lmms_eval/tasks/ok_vqa",
                    "lmms_eval/tasks/chartqa", "lmms_eval/api"):  # fmt: skip
        (folder / package / "__init__.py").write_text("", encoding="utf-8")


def _exact_match_function(folder: Path) -> Any:
    source = (folder / "lmms_eval/api/metrics.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    node = next(
        n
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and n.name == "exact_match_hf_evaluate"
    )
    namespace: dict[str, Any] = {"np": np, "re": re, "string": string}
    exec(compile(ast.Module(body=[node], type_ignores=[]), "metrics.py", "exec"), namespace)
    return namespace["exact_match_hf_evaluate"]


NUMBERS = [
    "0", "0.0", "1", "12", "12.0", "12.5", "13", "11.4", "11.41", "12.6", "12.61", "100",
    "95", "94.9", "105", "105.1", "-3", "-3.1", "3", "1e3", "1000", "1,000", "50%", "0.5",
    "49%", "52.5%", "5%%", "0%", " 12 ", "12\n", "nan", "inf", "-inf", "1_000", "0.05",
    "0.0525", "2019", "2020", "1.5", "1.575", "1.5751", "+7", "7.35", "6.65", "6.649",
]  # fmt: skip
WORDS = ["Yes", "yes", "No", "no", "Republicans", "republicans", "Asia", "ASIA", "blue",
         "Blue ", "light blue", "12 million", "$12", "", " "]  # fmt: skip


def _chart_case(rng: random.Random) -> dict[str, str]:
    kind = rng.randrange(4)
    if kind == 0:
        gold = rng.choice(NUMBERS)
        value = float(gold.strip().rstrip("%")) if _is_plain(gold) else 10.0
        factor = rng.choice([0.94, 0.95, 0.9501, 0.96, 1.0, 1.04, 1.05, 1.0499, 1.06])
        pred = repr(round(value * factor, rng.choice([0, 1, 2, 4])))
        return {"prediction": pred + (rng.choice(["", "%"]) if "%" in gold else ""), "target": gold}
    if kind == 1:
        return {"prediction": rng.choice(NUMBERS), "target": rng.choice(NUMBERS)}
    if kind == 2:
        gold = rng.choice(WORDS)
        return {"prediction": vary(rng, gold), "target": gold}
    return {"prediction": rng.choice(NUMBERS + WORDS), "target": rng.choice(NUMBERS + WORDS)}


def _is_plain(text: str) -> bool:
    try:
        float(text.strip().rstrip("%"))
    except ValueError:
        return False
    return True


GQA_ANSWERS = ["yes", "no", "left", "right", "man", "woman", "table", "white", "black",
               "t-shirt", "tshirt", "the man", "dog's", "dogs", "cat", "pink", "gray", "grey"]  # fmt: skip


def _gqa_case(rng: random.Random) -> dict[str, str]:
    gold = rng.choice(GQA_ANSWERS)
    pred = vary(rng, gold) if rng.random() < 0.8 else rng.choice(GQA_ANSWERS)
    if rng.random() < 0.1:
        pred += rng.choice(["\x00", "\x00\x00", " \x00"])
    return {"prediction": pred, "answer": gold}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", type=Path, required=True, help="lmms-eval's git directory")
    parser.add_argument("--commit", default=COMMIT)
    parser.add_argument("--out", type=Path, default=DATA)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _extract(args.git_dir, args.commit, folder)
        loguru = types.ModuleType("loguru")
        loguru.logger = logging.getLogger("lmms-eval")  # type: ignore[attr-defined]
        sys.modules.setdefault("loguru", loguru)
        sys.path.insert(0, str(folder))
        textvqa = importlib.import_module("lmms_eval.tasks.textvqa.utils")
        chartqa = importlib.import_module("lmms_eval.tasks.chartqa.utils")
        vqav2 = importlib.import_module("lmms_eval.tasks.vqav2.utils")
        ok_vqa = importlib.import_module("lmms_eval.tasks.ok_vqa.utils")
        exact_match = _exact_match_function(folder)

        rng = random.Random(SEED)
        evalai = []
        for _ in range(N_CASES):
            answers = annotators(rng)
            case = {"prediction": prediction(rng, answers), "answers": answers}
            doc = {"answers": list(answers), "question_id": 0}
            got = textvqa.textvqa_process_results(doc, [case["prediction"]])["exact_match"]
            evalai.append({"input": case, "expected": float(got)})
        chart = []
        for _ in range(N_CASES):
            case = _chart_case(rng)
            got = chartqa.relaxed_correctness(case["prediction"], case["target"])
            chart.append({"input": case, "expected": bool(got)})
        gqa = []
        for _ in range(N_CASES // 2):
            case = _gqa_case(rng)
            got = exact_match(
                predictions=[case["prediction"].strip()],
                references=[case["answer"]],
                ignore_case=True,
                ignore_punctuation=True,
            )["exact_match"]
            gqa.append({"input": case, "expected": bool(got)})
        # Their own generator, so the three files above stay as they were generated.
        rng = random.Random(SEED + 1)
        vqa2, okvqa = [], []
        for _ in range(N_CASES):
            answers = annotators(rng)
            case = {"prediction": prediction(rng, answers), "answers": answers}
            records = [
                {"answer": a, "answer_confidence": "yes", "answer_id": i + 1}
                for i, a in enumerate(answers)
            ]
            doc = {"answers": records, "question_id": 0}
            got = vqav2.vqav2_process_results(doc, [case["prediction"]])["exact_match"]
            vqa2.append({"input": case, "expected": float(got)})
        for _ in range(N_CASES):
            answers = annotators(rng)
            case = {"prediction": prediction(rng, answers), "answers": answers}
            doc = {"answers": list(answers), "question_id": 0}
            got = ok_vqa.ok_vqa_process_results(doc, [case["prediction"]])["exact_match"]
            okvqa.append({"input": case, "expected": float(got)})

    outputs = {
        "benchmark_open_evalai.json": (
            "lmms_eval/tasks/textvqa/utils.py", "textvqa_process_results (exact_match)", evalai
        ),
        "benchmark_open_vqav2.json": (
            "lmms_eval/tasks/vqav2/utils.py", "vqav2_process_results (exact_match)", vqa2
        ),
        "benchmark_open_okvqa.json": (
            "lmms_eval/tasks/ok_vqa/utils.py", "ok_vqa_process_results (exact_match)", okvqa
        ),
        "benchmark_open_chartqa.json": (
            "lmms_eval/tasks/chartqa/utils.py", "relaxed_correctness", chart
        ),
        "benchmark_open_gqa.json": (
            "lmms_eval/api/metrics.py",
            "exact_match_hf_evaluate(ignore_case=True, ignore_punctuation=True) on the stripped "
            "generation",
            gqa,
        ),
    }  # fmt: skip
    for name, (file, function, cases) in outputs.items():
        payload = {
            "reference": {
                "repo": "EvolvingLMMs-Lab/lmms-eval",
                "commit": args.commit,
                "file": file,
                "function": function,
            },
            "generator": "tests/parity/generate/benchmark_open_lmms_eval.py",
            "seed": SEED,
            "cases": cases,
        }
        (args.out / name).write_text(dump(payload), encoding="utf-8")
        print(f"{len(cases)} cases -> {args.out / name}")


if __name__ == "__main__":
    main()
