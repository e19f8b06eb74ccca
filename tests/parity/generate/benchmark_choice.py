"""Regenerate tests/parity/data/benchmark_choice_*.json by running each benchmark's released code.

Every reference is imported (or executed) from its checkout and run, never copied: this script
builds seeded inputs and records what the reference returns or prints.

- ``benchmark_choice_mme.json``: MME's ``tools/eval_tool/calculation.py``
  (BradyFU/Awesome-Multimodal-Large-Language-Models, branch Evaluation, ``tools/eval_tool.zip``):
  ``calculate_metrics().process_result(results_dir)`` on generated results folders (one
  ``TASK.txt`` per subtask, ``image\\tquestion\\tgold\\tanswer`` lines, two per image); the
  per-subtask scores and the two totals it prints are parsed from its output.
- ``benchmark_choice_pope.json``: RUCAIBox/POPE ``evaluate.py`` executed on generated answer and
  label files. The script names its input files in two module-level assignments
  (``ans_file = ''``, ``label_file = ''``); those two assignments are the only thing set before
  running it. Recorded: what it prints (accuracy, precision, recall, F1, yes ratio; or the
  exception it raises) and each answer as it rewrote it ("yes"/"no").
- ``benchmark_choice_hallusion.json``: tianyi-lab/HallusionBench ``utils.py``:
  ``assign_correctness`` then ``get_eval_all`` (aAcc), ``get_eval_fig`` (fAcc) and
  ``get_eval_pair_all`` (qAcc) on generated question sets with given GPT-check verdicts.
- ``benchmark_choice_mmmu.json``: MMMU-Benchmark/MMMU ``mmmu/utils/eval_utils.py``:
  ``parse_multi_choice_response``, ``parse_open_response`` and ``eval_open`` on generated
  answers. Runtime patch: the module's ``random.choice`` (its fallback when nothing can be read)
  is replaced by a function returning None, so that the fallback is recorded as None instead of
  a random letter (lmmprobe never scores a random option). Nothing else is changed.
- ``benchmark_choice_mathvista.json``: lupantech/MathVista ``evaluation/extract_answer.py``
  (``extract_answer(model=None, ..., quick_extract=True)``: its rules; the GPT call that follows
  fails on the None model and the function returns "" as it does when the API fails) and
  ``evaluation/calculate_score.py`` (``normalize_extracted_answer``, ``safe_equal``).

Run with the reference environment (numpy, pandas, scikit-learn, Levenshtein, rich, openai,
datasets, opencv-python-headless, word2number installed)::

    /work/refenv/bin/python tests/parity/generate/benchmark_choice.py \\
        --mme /path/eval_tool --pope /path/POPE --hallusion /path/HallusionBench \\
        --mmmu /path/MMMU --mathvista /path/MathVista

``--mme`` is the folder ``tools/eval_tool.zip`` of the Evaluation branch unpacks to. A re-run
with the same seed writes the same bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import random
import re
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

SEED = 20261124
DATA = Path(__file__).resolve().parents[1] / "data"
GENERATOR = "tests/parity/generate/benchmark_choice.py"
COMMITS = {
    "mme": (
        "BradyFU/Awesome-Multimodal-Large-Language-Models",
        "dd2950902889cd614d4edf606827240166d29381",
    ),
    "pope": ("RUCAIBox/POPE", "3df3ba1b110ecce25696989577fad583b67d4239"),
    "hallusion": ("tianyi-lab/HallusionBench", "744007c232c292942c7f80eb61edb2465482da31"),
    "mmmu": ("MMMU-Benchmark/MMMU", "bb0b95a945998d91dfef37e969e07d49d1139438"),
    "mathvista": ("lupantech/MathVista", "53d525874bdde205128e6b160b7357a88277d479"),
}


def _module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _write(name: str, key: str, file: str, function: str, cases: list[dict[str, Any]]) -> None:
    repo, commit = COMMITS[key]
    doc = {
        "reference": {"repo": repo, "commit": commit, "file": file, "function": function},
        "generator": GENERATOR,
        "seed": SEED,
        "cases": cases,
    }
    text = json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n"
    (DATA / f"benchmark_choice_{name}.json").write_text(text, encoding="utf-8")
    print(f"benchmark_choice_{name}.json: {len(cases)} cases")


# --------------------------------------------------------------------------- MME

MME_TASKS = [
    "existence", "count", "position", "color", "posters", "celebrity", "scene", "landmark",
    "artwork", "OCR", "commonsense_reasoning", "numerical_calculation", "text_translation",
    "code_reasoning",
]  # fmt: skip
MME_ANSWERS = [
    "Yes", "No", "yes", "no", "Yes, it is.", "No, it is not.", "Not sure", "", "The answer is yes",
    "nope", "y", "N", "yes.", " yes", "Noo", "It's a yes", "NO.", "I cannot tell", "yES", "no way",
    "Yes and no", "know", "Sure, yes", "none",
]  # fmt: skip


def mme(root: Path, rng: random.Random) -> None:
    calc = _module(root / "calculation.py", "mme_calculation")
    cases = []
    while len(cases) < 12:
        files: dict[str, list[list[str]]] = {}
        for task in MME_TASKS:
            rows = []
            for img in range(rng.randint(1, 4)):
                golds = rng.choice([("Yes", "No"), ("No", "Yes"), ("Yes", "Yes"), ("No", "No")])
                for q, gold in enumerate(golds):
                    rows.append(
                        [
                            f"{img}.png",
                            f"Question {q}? Please answer yes or no.",
                            gold,
                            rng.choice(MME_ANSWERS),
                        ]
                    )
            files[task] = rows
        with tempfile.TemporaryDirectory() as tmp:
            for task, rows in files.items():
                text = "".join("\t".join(r) + "\n" for r in rows)
                (Path(tmp) / f"{task}.txt").write_text(text, encoding="utf-8")
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out), _quiet():
                    calc.calculate_metrics().process_result(tmp)
            except Exception as exc:  # a degenerate input the tool cannot score: draw again
                print(f"mme: skipped an input ({type(exc).__name__})", file=sys.stderr)
                continue
        printed = out.getvalue()
        totals = [float(x) for x in re.findall(r"^total score: (\S+)", printed, re.M)]
        scores = {t: float(s) for t, s in re.findall(r"^\t (\S+)  score: (\S+)$", printed, re.M)}
        cases.append(
            {"files": files, "perception": totals[0], "cognition": totals[1], "scores": scores}
        )
    _write(
        "mme",
        "mme",
        "tools/eval_tool/calculation.py (in tools/eval_tool.zip)",
        "calculate_metrics.process_result",
        cases,
    )


@contextlib.contextmanager
def _quiet() -> Any:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# --------------------------------------------------------------------------- POPE

POPE_ANSWERS = [
    "Yes", "No", "yes", "no", "Yes, there is a dog in the image.", "No, there is no dog.",
    "There is not a dog.", "I think so.", "no.", "Not really", "NO", "Yes. No.", "", "nope",
    "There is a cat, not a dog.", "The image shows no dog", "Yes, no doubt.", "None", "not",
    "It is not clear. Yes.", "Absolutely", "no, there is not",
]  # fmt: skip


def pope(root: Path, rng: random.Random) -> None:
    source = (root / "evaluate.py").read_text(encoding="utf-8")
    cases = []
    for i in range(40):
        n = rng.randint(1, 30)
        labels = [rng.choice(["yes", "no"]) for _ in range(n)]
        answers = [rng.choice(POPE_ANSWERS) for _ in range(n)]
        if i == 0:
            labels, answers = ["no", "no"], ["No", "no."]  # nothing read as yes: precision 0/0
        with tempfile.TemporaryDirectory() as tmp:
            ans, lab = Path(tmp) / "ans.jsonl", Path(tmp) / "label.jsonl"
            ans.write_text(
                "".join(json.dumps({"answer": a}) + "\n" for a in answers), encoding="utf-8"
            )
            lab.write_text(
                "".join(json.dumps({"label": x}) + "\n" for x in labels), encoding="utf-8"
            )
            code = source.replace("ans_file = ''", f"ans_file = {str(ans)!r}", 1).replace(
                "label_file = ''", f"label_file = {str(lab)!r}", 1
            )
            scope: dict[str, Any] = {"__name__": "pope_evaluate"}
            out = io.StringIO()
            error = None
            try:
                with contextlib.redirect_stdout(out):
                    exec(compile(code, str(root / "evaluate.py"), "exec"), scope)
            except ZeroDivisionError as exc:
                error = type(exc).__name__
        printed = out.getvalue()

        def field(name: str, text: str = printed) -> float | None:
            found = re.search(rf"^{name}: (\S+)$", text, re.M)
            return float(found.group(1)) if found else None

        cases.append({
            "labels": labels,
            "answers": answers,
            "read": [a["answer"] for a in scope.get("answers", [])],
            "error": error,
            "accuracy": field("Accuracy"),
            "precision": field("Precision"),
            "recall": field("Recall"),
            "f1": field("F1 score"),
            "yes_ratio": field("Yes ratio"),
        })  # fmt: skip
    _write("pope", "pope", "evaluate.py", "(script)", cases)


# --------------------------------------------------------------------------- HallusionBench


def hallusion(root: Path, rng: random.Random) -> None:
    utils = _module(root / "utils.py", "hallusion_utils")
    entry = "gpt4v_output_gpt_check"
    cases = []
    for _ in range(30):
        data = []
        for set_id in range(rng.randint(1, 4)):
            category = rng.choice(["VD", "VS"])
            sub = rng.choice(["illusion", "math", "chart", "map"])
            questions = range(rng.randint(1, 3))
            for fig in range(rng.randint(1, 3)):
                for q in questions:
                    visual = (
                        "0"
                        if category == "VS" and fig == 0
                        else ("1" if category == "VD" else rng.choice("12"))
                    )
                    row = {"category": category, "subcategory": sub, "set_id": str(set_id),
                           "figure_id": str(fig), "question_id": str(q), "visual_input": visual,
                           entry: rng.choice("012")}  # fmt: skip
                    if fig != 0:
                        row["same"] = rng.choice("01")
                    data.append(row)
        rows = [dict(r) for r in data]
        utils.assign_correctness(rows, correctness_entry=entry)
        a = utils.get_eval_all(rows, entry)
        try:
            f = utils.get_eval_fig(rows)
            fig = [int(f["correct"]), int(f["total"])]
        except ZeroDivisionError:  # no question with a figure: the reference divides by 0
            fig = None
        q = utils.get_eval_pair_all(rows, entry)
        cases.append({
            "rows": data,
            "aAcc": [int(a["correct"]), int(a["total"])],
            "fAcc": fig,
            "qAcc": [int(q["correct"]), int(q["total"])],
        })  # fmt: skip
    _write(
        "hallusion",
        "hallusion",
        "utils.py",
        "assign_correctness, get_eval_all, get_eval_fig, get_eval_pair_all",
        cases,
    )


# --------------------------------------------------------------------------- MMMU

WORDS = ["apple", "blue sky", "river", "Paris", "mitochondria", "3.5 m", "red", "a", "the cell",
         "photosynthesis", "12", "B", "none of these"]  # fmt: skip
MC_TEMPLATES = [
    "{L}", "({L})", "The answer is ({L}).", "I choose {L} because it fits.", "{L} and {M}",
    "({L}) or ({M})", "Answer: {L}.", "The correct option is {t} as shown in the figure here.",
    "It is {t}.", "{t}", "", "I don't know the answer to this one at all.", "{L}.", "'{L}'",
    "Both ({L}) and {M} are plausible, but ({M}) is best.", "{t} or maybe {u}, I think it is {t} really.",
    "Option {L}: {t}", "A", "(E)", "I think the answer is {t}, not {u}, definitely and surely.",
]  # fmt: skip
OPEN_GOLD = ["12", "3.5", "1,234", "Paris", "0.25", "-4", "blue", "2e3", "x", "100"]
OPEN_TEMPLATES = [
    "{g}", "The answer is {g}.", "So the result is {g}", "Thus x = {g}", "I think it could be {g}.",
    "Therefore, the final answer is {g}.\nDone", "{g} apples", "It is about {h}.", "",
    "First compute 2 + 2 = 4. So the answer is {g}.", "Answer {h}", "The value is 1,234.",
    "result 2.0e3", "{g}.", "The capital is paris.", "final {h} units",
]  # fmt: skip


def mmmu(root: Path, rng: random.Random) -> None:
    utils = _module(root / "mmmu" / "utils" / "eval_utils.py", "mmmu_eval_utils")
    utils.random.choice = lambda seq: None  # the random fallback, recorded as None
    mc = []
    for _ in range(400):
        n = rng.randint(2, 5)
        letters = [chr(ord("A") + i) for i in range(n)]
        texts = rng.sample(WORDS, n)
        index2ans = dict(zip(letters, texts, strict=True))
        i, j = rng.randrange(n), rng.randrange(n)
        response = rng.choice(MC_TEMPLATES).format(
            L=letters[i], M=letters[j], t=texts[i], u=texts[j]
        )
        mc.append({"response": response, "index2ans": index2ans,
                   "parsed": utils.parse_multi_choice_response(response, letters, index2ans)})  # fmt: skip
    open_cases = []
    for _ in range(300):
        gold = rng.choice(OPEN_GOLD)
        golds: str | list[str] = gold if rng.random() < 0.7 else [gold, rng.choice(OPEN_GOLD)]
        response = rng.choice(OPEN_TEMPLATES).format(g=gold, h=rng.choice(OPEN_GOLD))
        parsed = utils.parse_open_response(response)
        open_cases.append({
            "response": response,
            "gold": golds,
            "parsed": sorted(parsed, key=lambda v: (isinstance(v, str), str(v))),
            "correct": bool(utils.eval_open(golds, parsed)),
        })  # fmt: skip
    _write(
        "mmmu",
        "mmmu",
        "mmmu/utils/eval_utils.py",
        "parse_multi_choice_response, parse_open_response, eval_open",
        [{"multi_choice": mc, "open": open_cases}],
    )


# --------------------------------------------------------------------------- MathVista

MV_CHOICES = [["3", "5", "7"], ["red", "blue"], ["(1,2)", "(2,1)", "(0,0)", "(3,3)"], ["1.5", "2.5"],
              ["yes", "no"], ["A triangle", "A square", "A circle"]]  # fmt: skip
MV_RESPONSES = [
    "{c}", "{L}", "({L})", 'The answer is "{L}".', 'The answer is "{c}".', "The answer is {L}", "",
    "12", "3.14159", "answer: 5", "(b) is right", " 7 ", "7.0", "1e2", "[1, 2]", "The answer is 2.",
    'The answer is "3.14".', "{c} is the answer", "nan", "-0", "2.50",
]  # fmt: skip


def mathvista(root: Path, rng: random.Random) -> None:
    sys.path.insert(0, str(root))
    extract = _module(root / "evaluation" / "extract_answer.py", "mathvista_extract_answer")
    score = _module(root / "evaluation" / "calculate_score.py", "mathvista_calculate_score")
    import logging

    logging.disable(logging.CRITICAL)  # the failed GPT call is logged at info level
    cases = []
    for pid in range(400):
        if rng.random() < 0.5:
            choices = rng.choice(MV_CHOICES)
            qtype, atype, precision = "multi_choice", "text", None
            answer = rng.choice(choices)
        else:
            choices = None
            qtype = "free_form"
            atype = rng.choice(["integer", "float", "list"])
            precision = float(rng.choice([1, 2])) if atype == "float" else None
            answer = {
                "integer": "7",
                "float": "3.14" if precision == 2 else "2.5",
                "list": "[1, 2]",
            }[atype]
        k = rng.randrange(len(choices)) if choices else 0
        response = rng.choice(MV_RESPONSES).format(
            L=chr(ord("A") + k), c=choices[k] if choices else "7"
        )
        problem = {"question_type": qtype, "answer_type": atype, "choices": choices,
                   "query": "q", "pid": str(pid)}  # fmt: skip
        extraction = extract.extract_answer(None, response, problem, quick_extract=True)
        normalized = score.normalize_extracted_answer(extraction, choices, qtype, atype, precision)
        cases.append({
            "response": response, "choices": choices, "question_type": qtype, "answer_type": atype,
            "precision": precision, "answer": answer, "extraction": extraction,
            "normalized": normalized, "correct": bool(score.safe_equal(normalized, answer)),
        })  # fmt: skip
    _write(
        "mathvista",
        "mathvista",
        "evaluation/extract_answer.py, evaluation/calculate_score.py",
        "extract_answer(quick_extract=True), normalize_extracted_answer, safe_equal",
        cases,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    for name in ("mme", "pope", "hallusion", "mmmu", "mathvista"):
        parser.add_argument(f"--{name}", type=Path, help=f"checkout of the {name} reference")
    args = parser.parse_args()
    for name, fn in (("mme", mme), ("pope", pope), ("hallusion", hallusion), ("mmmu", mmmu),
                     ("mathvista", mathvista)):  # fmt: skip
        root = getattr(args, name)
        if root is not None:
            fn(root.resolve(), random.Random(f"{SEED}:{name}"))


if __name__ == "__main__":
    main()
