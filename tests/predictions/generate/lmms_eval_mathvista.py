"""Write a MathVista ``--log_samples`` log with lmms-eval's own code (v0.4 on: no ``doc``).

lmms-eval @ 75571cf (EvolvingLMMs-Lab/lmms-eval, 75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3)
is run on generated MathVista-shaped docs and replies:

- ``lmms_eval/tasks/mathvista/utils.py``: ``mathvista_doc_to_text`` (the prompt logged as
  ``input``), ``mathvista_process_results`` (the per-sample ``llm_as_judge_eval`` and
  ``submission``) and ``mathvista_aggregate_results`` (the task's figure, written to
  ``mathvista_expected.json``). The judge ``MathVistaEvaluator`` calls is a stand-in for
  ``lmms_eval.llm_judge`` answering from `JUDGE` (a failed call where a reply is not there).
- ``lmms_eval/loggers/evaluation_tracker.py``'s ``save_results_samples`` (the writer: it pops
  ``doc`` and ``arguments``, unwraps one response, drops ``resps`` equal to ``filtered_resps``),
  given each record as ``lmms_eval/evaluator.py`` builds it (``doc_id``, ``doc``, ``target``,
  ``arguments``, ``resps``, ``filtered_resps``, ``token_counts``, ``doc_hash``, the metrics).

The package's ``__init__`` files (which import torch and transformers) are not run: the
modules above are loaded from the exported tree, the writer's method and its helpers
(``sanitize_list``, ``handle_non_serializable``, ``hash_string``) compiled from their source.
Made with (Levenshtein, loguru, pyyaml, pandas in a scratch venv)::

    git --git-dir=MIRROR archive 75571cf lmms_eval | tar -x -C /tmp/lmms75
    python -m venv /tmp/mv_venv && /tmp/mv_venv/bin/pip install Levenshtein loguru pyyaml pandas
    /tmp/mv_venv/bin/python tests/predictions/generate/lmms_eval_mathvista.py /tmp/lmms75
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "lmms_eval" / "docs"
DATE = "20261130_190000"
TASK = "mathvista_testmini_format"

_CHOICE_HINT = (
    "Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, "
    "D, at the end."
)
_INT_HINT = (
    "Hint: Please answer the question requiring an integer answer and provide the final "
    "value, e.g., 1, 2, 3, at the end."
)
_FLOAT_HINT = (
    "Hint: Please answer the question requiring a floating-point number with {n} decimal "
    "place{s} and provide the final value, e.g., {e}, at the end."
)
_LIST_HINT = (
    "Hint: Please answer the question requiring a Python list as an answer and provide the "
    "final list, e.g., [1, 2, 3], [1.2, 1.3, 1.4], at the end."
)


def _query(hint: str, question: str, unit: str, choices: list[str] | None) -> str:
    """The dataset's ``query`` column, as MathVista's ``build_query.py`` writes it."""
    text = f"{hint}\nQuestion: {question}" + (f" (Unit: {unit})" if unit else "")
    if choices:
        text += "\nChoices:\n" + "\n".join(f"({chr(65 + i)}) {c}" for i, c in enumerate(choices))
    return text


def _doc(pid: str, question: str, answer: str, kind: str, **more: Any) -> dict[str, Any]:
    choices = more.get("choices")
    precision = more.get("precision")
    unit = more.get("unit", "")
    if choices:
        hint, qtype, atype = _CHOICE_HINT, "multi_choice", "text"
    elif kind == "integer":
        hint, qtype, atype = _INT_HINT, "free_form", "integer"
    elif kind == "float":
        n = int(precision)
        e = {1: "1.2, 1.3, 1.4", 2: "1.23, 1.34, 1.45"}[n]
        hint, qtype, atype = _FLOAT_HINT.format(n=n, s="s" if n > 1 else "", e=e), "free_form", kind
    else:
        hint, qtype, atype = _LIST_HINT, "free_form", "list"
    return {
        "pid": pid, "question": question, "image": f"images/{pid}.jpg", "choices": choices,
        "unit": unit or None, "precision": precision, "answer": answer,
        "question_type": qtype, "answer_type": atype,
        "metadata": {
            "category": more.get("category", "math-targeted-vqa"), "context": "synthetic scene",
            "grade": more.get("grade", "elementary school"), "img_height": 100,
            "img_width": 100, "language": "english", "skills": more.get("skills"),
            "source": more.get("source", "synthetic"), "split": "testmini",
            "task": more.get("task", "figure question answering"),
        },
        "query": _query(hint, question, unit, choices),
    }  # fmt: skip


DOCS = [
    _doc("1", "How many squares are there?", "4", "text", choices=["3", "4", "5", "6"],
         skills=["arithmetic reasoning"]),
    _doc("2", "What colour is the largest ball?", "blue", "text",
         choices=["red", "blue", "green"], category="general-vqa", task="visual question answering",
         skills=["numeric commonsense"], source="VQA-AS"),
    _doc("3", "Which colour is the smallest ball?", "green", "text",
         choices=["red", "blue", "green"], category="general-vqa", skills=["numeric commonsense"],
         source="VQA-AS", grade="high school"),
    _doc("4", "How long is the bar?", "7", "integer", unit="cm",
         skills=["arithmetic reasoning", "statistical reasoning"]),
    _doc("5", "What is the height of the tallest bar?", "2.5", "float", precision=1.0,
         skills=["statistical reasoning"], task="math word problem"),
    _doc("6", "How many objects are left after removing the red ones?", "12", "integer",
         skills=["arithmetic reasoning"]),
    _doc("7", "Which positions hold a circle?", "[1, 2]", "list", skills=["logical reasoning"],
         task="textbook question answering", grade="college"),
    _doc("8", "What is the slope of the line?", "1.25", "float", precision=2.0,
         skills=["algebraic reasoning"], source="FunctionQA"),
]  # fmt: skip
"""Eight testmini-shaped docs: choice, integer (one with a unit), float, list."""

REPLIES = ["4", "The answer is (B).", "I cannot tell.", "7", "2.50", "It is 13.", "[1, 2]",
           "about 1.3"]  # fmt: skip
"""The model's replies, in doc order: read by the rules (1, 4, 5), by the judge (2, 6, 7, 8),
or not at all (3: the judge's call fails, the extraction is empty)."""

JUDGE = {"The answer is (B).": "B", "It is 13.": "13", "[1, 2]": "[1, 2]", "about 1.3": "1.3"}
"""The stand-in judge's extraction of each reply it is asked about."""


class _Reply:
    def __init__(self, content: str | None) -> None:
        self.success = content is not None
        self.content = content or ""
        self.error = None if content is not None else "stand-in judge: no extraction"


class _Server:
    def evaluate(self, request: Any) -> _Reply:
        prompt = request.messages[0]["content"]
        for reply, extraction in JUDGE.items():
            if prompt.endswith(f"\n\n{reply}\n\nExtracted answer: "):
                return _Reply(extraction)
        return _Reply(None)


def _stub_packages(tree: Path) -> None:
    """Packages whose ``__init__`` is not run, and the judge module, as stand-ins."""
    for name, folder in (
        ("lmms_eval", tree / "lmms_eval"),
        ("lmms_eval.tasks", tree / "lmms_eval" / "tasks"),
        ("lmms_eval.tasks.mathvista", tree / "lmms_eval" / "tasks" / "mathvista"),
    ):
        module = types.ModuleType(name)
        module.__path__ = [str(folder)]
        sys.modules[name] = module
    judge = types.ModuleType("lmms_eval.llm_judge")
    judge.Request = lambda **kw: types.SimpleNamespace(**kw)  # type: ignore[attr-defined]
    judge.ServerConfig = lambda **kw: types.SimpleNamespace(**kw)  # type: ignore[attr-defined]
    judge.get_server = lambda **kw: _Server()  # type: ignore[attr-defined]
    sys.modules["lmms_eval.llm_judge"] = judge


def _compiled(source: Path, names: set[str], namespace: dict[str, Any]) -> dict[str, Any]:
    """The named top-level functions (or methods) of `source`, compiled into `namespace`."""
    tree = ast.parse(source.read_text("utf-8"))
    found = [
        node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name in names
    ]
    module = ast.Module(body=found, type_ignores=[])  # type: ignore[arg-type]
    exec(compile(module, str(source), "exec"), namespace)  # the writer's own code, from its source
    return namespace


def main(tree: Path) -> None:
    """Write the log and lmms-eval's own figure on it into the fixture folder."""
    import numpy as np
    from loguru import logger

    _stub_packages(tree)
    utils = importlib.import_module("lmms_eval.tasks.mathvista.utils")
    helpers = _compiled(
        tree / "lmms_eval" / "utils.py",
        {"sanitize_list", "handle_non_serializable", "hash_string"},
        {"np": np, "hashlib": importlib.import_module("hashlib")},
    )
    writer = _compiled(
        tree / "lmms_eval" / "loggers" / "evaluation_tracker.py",
        {"save_results_samples"},
        {"json": json, "Path": Path, "eval_logger": logger, **helpers},
    )["save_results_samples"]
    kwargs = {"shot": 0, "shot_type": "format-prompt", "use_caption": False, "use_ocr": False}
    samples, judged = [], []
    for doc_id, (doc, reply) in enumerate(zip(DOCS, REPLIES, strict=True)):
        metrics = utils.mathvista_process_results(doc, [reply])
        judged.append(json.loads(json.dumps(metrics["llm_as_judge_eval"])))
        prompt = utils.mathvista_doc_to_text(doc, kwargs)
        serialised = json.dumps(
            doc, indent=2, default=helpers["handle_non_serializable"], ensure_ascii=False
        )
        samples.append({
            "doc_id": doc_id, "doc": doc, "target": doc["answer"],
            "arguments": [prompt, {"max_new_tokens": 16384}, doc_id, TASK, "testmini"],
            "resps": [[reply]], "filtered_resps": [reply], "token_counts": [None],
            "doc_hash": helpers["hash_string"](serialised), **metrics,
        })  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        me = types.SimpleNamespace(
            output_path=tmp, date_id=DATE, api=None, push_samples_to_hub=False,
            general_config_tracker=types.SimpleNamespace(model_name_sanitized="m"),
        )  # fmt: skip
        writer(me, TASK, samples)
        written = Path(tmp) / "m" / f"{DATE}_samples_{TASK}.jsonl"
        (OUT / written.name).write_text(written.read_text("utf-8"), encoding="utf-8")
    figure = utils.mathvista_aggregate_results(judged, None)
    expected = {
        "source": "EvolvingLMMs-Lab/lmms-eval @ 75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3, "
        "lmms_eval/tasks/mathvista/utils.py mathvista_aggregate_results",
        "llm_as_judge_eval": figure,
        "true_false": [j["true_false"] for j in judged],
        "docs": [{k: d[k] for k in ("pid", "question", "unit")} for d in DOCS],
    }
    (OUT / "mathvista_expected.json").write_text(json.dumps(expected, indent=1) + "\n", "utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
