"""Regenerate tests/judge/parity/*.json by running each benchmark's released judge code.

Every reference function is executed from its checkout (its source is parsed and the named
top-level functions run as written; never copied into lmmprobe), with a scripted judge in place
of the API: the judge replies come from this script, the prompts the reference sends are
recorded. Recorded per case: the prompt(s) sent, the verdict the reference reads, and the final
scores the reference computes.

- ``mathvista.json``: lupantech/MathVista ``evaluation/extract_answer.py`` ``extract_answer``
  (``quick_extract=True``, the judge a scripted ``GPT_Model``) and ``evaluation/calculate_score.py``
  ``normalize_extracted_answer``, ``safe_equal``.
- ``mmbench.json``: open-compass/VLMEvalKit ``vlmeval/dataset/utils/multiple_choice.py``
  ``extract_answer_from_item`` (with ``vlmeval/utils/matching_util.py`` ``can_infer`` and
  ``vlmeval/smp`` ``build_option_str``, ``cn_string``) per answer, and ``eval_circular_group``
  per question (CircularEval).
- ``hallusionbench.json``: tianyi-lab/HallusionBench ``utils.py`` ``evaluate_by_chatgpt`` (the
  scripted reply returned by ``openai.ChatCompletion.create``), then ``assign_correctness``,
  ``get_eval_all``, ``get_eval_fig``, ``get_eval_pair_all``; ``strict``: the same aggregation
  with each verdict it only defaulted to "2" (a reply holding none of its answers) read "0",
  lmmprobe's strict figures.
- ``mmvet.json``: yuweihao/MM-Vet ``mm-vet_evaluator.py`` ``load_metadata``, ``runs`` (a
  scripted ``client``), ``export_result``: the grades and the capability scores it writes.
- ``llava_wild.json``: haotian-liu/LLaVA ``llava/eval/eval_gpt_review_bench.py`` run as a script
  with a scripted ``openai`` module first on its path (the content and system message sent,
  the tuple stored), then ``llava/eval/summarize_gpt_review.py -f REVIEWS`` (its printed
  relative scores).

Run with the shared venv plus Levenshtein and prettytable (MathVista's and HallusionBench's
imports), from the repository root::

    PYTHONPATH=/tmp/judge_official/venv/lib/python3.11/site-packages \\
      /work/main/.venv/bin/python tests/judge/parity/generate.py --refs /tmp/judge_official/ref

``--refs`` holds checkouts named MathVista, VLMEvalKit, HallusionBench, MM-Vet and LLaVA at the
commits in ``COMMITS``. A re-run writes the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import logging
import os
import random
import re
import string
import subprocess
import sys
import tempfile
import types
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
SEED = 26
COMMITS = {
    "MathVista": ("lupantech/MathVista", "53d525874bdde205128e6b160b7357a88277d479"),
    "VLMEvalKit": ("open-compass/VLMEvalKit", "e8e78f05f3080fe28154f2130321f17951c3be94"),
    "HallusionBench": ("tianyi-lab/HallusionBench", "744007c232c292942c7f80eb61edb2465482da31"),
    "MM-Vet": ("yuweihao/MM-Vet", "acde843e02dae30047bb456ee4a8ab28dee7e0ae"),
    "LLaVA": ("haotian-liu/LLaVA", "c121f0432da27facab705978f83c4ada465e46fd"),
}


def functions(path: Path, names: list[str], namespace: dict[str, Any]) -> dict[str, Any]:
    """Run the named top-level functions (and assignments) of `path` in `namespace`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    keep = [
        node
        for node in tree.body
        if (isinstance(node, ast.FunctionDef) and node.name in names)
        or (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id in names for t in node.targets)
        )
    ]
    missing = (
        set(names)
        - {getattr(n, "name", None) for n in keep}
        - {
            t.id
            for n in keep
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
    )
    assert not missing, f"{path}: {missing}"
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(path), "exec"), namespace)
    return namespace


def write(name: str, key: str, files: str, cases: list[dict[str, Any]]) -> None:
    repo, commit = COMMITS[key]
    doc = {
        "reference": {"repo": repo, "commit": commit, "files": files},
        "generator": "tests/judge/parity/generate.py",
        "seed": SEED,
        "cases": cases,
    }
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    (HERE / f"{name}.json").write_text(text, encoding="utf-8")
    print(f"{name}.json: {len(cases)} cases")


# --------------------------------------------------------------------------- MathVista

MV_PROBLEMS: list[dict[str, Any]] = [
    {"question_type": "multi_choice", "answer_type": "text", "choices": ["3", "5", "7"],
     "precision": None, "answer": "5"},
    {"question_type": "multi_choice", "answer_type": "text", "choices": ["red", "blue", "green"],
     "precision": None, "answer": "blue"},
    {"question_type": "multi_choice", "answer_type": "text", "choices": ["8/11", "3/5", "1/2", "{x}"],
     "precision": None, "answer": "8/11"},
    {"question_type": "free_form", "answer_type": "integer", "choices": None, "precision": None,
     "answer": "14"},
    {"question_type": "free_form", "answer_type": "float", "choices": None, "precision": 1.0,
     "answer": "0.6"},
    {"question_type": "free_form", "answer_type": "float", "choices": None, "precision": 2.0,
     "answer": "1.45"},
    {"question_type": "free_form", "answer_type": "list", "choices": None, "precision": None,
     "answer": "[1, 2]"},
]  # fmt: skip
MV_RESPONSES = [
    "", "5", "blue", "14", "0.6", "1.45", "The answer is \"B\".", "The answer is \"14\".",
    "I think the answer is B because it is the middle one.", "The number missing is 14.",
    "Luca needs $1.45.", "It is blue.", "(C) 1/2", "The fraction is 0.6.", "14.0", "[1, 2]",
    "The list is [1, 2].", "None of them.", "B", "{x} is it",
]  # fmt: skip
MV_REPLIES = [
    "B", "5", "blue", "14", "0.6", "1.45", "(A) 8/11", "", "   ", "[1, 2]", "1.4", "Blue",
    "The answer is 14", "C", "14.7", "0.61", "8/11", "E",
]  # fmt: skip


class ScriptedGPT:
    """Stands in for MathVista's ``GPT_Model``: returns the scripted reply, keeps the prompt."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def get_response(self, user_prompt: str, decoded_image: Any = None) -> str:
        self.prompts.append(user_prompt)
        return self.reply


def mathvista(root: Path, rng: random.Random) -> None:
    ns: dict[str, Any] = {"re": re, "logging": logging}
    ext = types.ModuleType("ext")
    exec((root / "evaluation/prompts/ext_ans.py").read_text(encoding="utf-8"), ext.__dict__)
    ns["demo_prompt"] = ext.demo_prompt
    functions(root / "evaluation/extract_answer.py", ["create_test_prompt", "extract_answer"], ns)
    from Levenshtein import distance

    ns["distance"] = distance
    functions(
        root / "evaluation/calculate_score.py",
        ["get_most_similar", "normalize_extracted_answer", "safe_equal"],
        ns,
    )
    logging.disable(logging.CRITICAL)
    cases = []
    for pid in range(60):
        problem = dict(rng.choice(MV_PROBLEMS))
        problem["pid"] = str(pid)
        problem["query"] = (
            "Hint: Please answer the question and provide the final answer at the end.\n"
            f"Question: What is shown in figure {{{pid}}}?"
        )
        if problem["choices"]:
            problem["query"] += "\nChoices:\n" + "\n".join(
                f"({chr(65 + i)}) {c}" for i, c in enumerate(problem["choices"])
            )
        response = rng.choice(MV_RESPONSES)
        reply = rng.choice(MV_REPLIES)
        model = ScriptedGPT(reply)
        extraction = ns["extract_answer"](model, response, problem, quick_extract=True)
        normalized = ns["normalize_extracted_answer"](
            extraction,
            problem["choices"],
            problem["question_type"],
            problem["answer_type"],
            problem["precision"],
        )
        cases.append({
            "problem": problem, "response": response, "reply": reply,
            "prompt": model.prompts[0] if model.prompts else None,
            "extraction": extraction, "normalized": normalized,
            "correct": bool(ns["safe_equal"](normalized, problem["answer"])),
        })  # fmt: skip
    write(
        "mathvista",
        "MathVista",
        "evaluation/extract_answer.py, evaluation/prompts/ext_ans.py, evaluation/calculate_score.py",
        cases,
    )


# --------------------------------------------------------------------------- MMBench

MMB_OPTIONS = [
    ["teddy bear", "rabbit", "cat", "dog"],
    ["yes", "no"],
    ["A red car", "A blue car", "A green bus"],
    ["1", "2", "3", "4"],
]
MMB_ANSWERS = [
    "A", "B", "C.", "(D)", "The answer is B.", "The correct answer is **C**.", "rabbit",
    "It is a cat", "I think it is a dog, not a cat.", "a cute teddy bear",
    "Sorry, I can't help with images of people yet.", "Cannot determine the answer",
    "A B", "Option A is wrong, B is right and C is also plausible.", "", "blue car", "2",
    "The image shows an animal.", "Z", "A. teddy bear", "None of the above.",
    "Failed to obtain answer via API", "我认为是B", "B) rabbit because it has long ears.",
]  # fmt: skip
MMB_REPLIES = [
    "A", "B", "C", "D", "Z", "The answer is B", "b", "I cannot tell", "",
    "Failed to obtain answer via API", "A or B", "rabbit", "Option C.",
]  # fmt: skip
MMB_QUESTIONS = ["What is the main object in image", "What does the sign say?", "图中是什么"]


class ScriptedJudge:
    """Stands in for VLMEvalKit's judge wrapper: ``generate`` returns the scripted reply."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def generate(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.reply


def _vlmeval(root: Path) -> dict[str, Any]:
    import pandas as pd

    ns: dict[str, Any] = {
        "re": re,
        "string": string,
        "pd": pd,
        "osp": os.path,
        "cp": __import__("copy"),
    }
    ns["os"] = os
    ns["Counter"] = Counter
    ns["logger"] = logging.getLogger("vlmeval")
    functions(root / "vlmeval/smp/misc.py", ["cn_string"], ns)
    functions(root / "vlmeval/smp/vlm.py", ["build_option_str"], ns)
    functions(
        root / "vlmeval/utils/matching_util.py",
        ["_VERBOSE_ANSWER_RE", "can_infer_option", "can_infer_text", "can_infer"],
        ns,
    )
    ns["rd"] = random.Random(SEED)
    functions(
        root / "vlmeval/dataset/utils/multiple_choice.py",
        ["build_prompt", "build_prompt_cn", "build_choices", "prefetch_answer",
         "extract_answer_from_item", "prefetch_circular_group", "eval_circular_group"],
        ns,
    )  # fmt: skip
    return ns


class GroupJudge:
    """A group's scripted judge: each unread answer's reply in turn, as the reference asks."""

    def __init__(self, replies: Any) -> None:
        self.replies = replies

    def generate(self, prompt: str) -> str:
        return str(next(self.replies))


def mmbench(root: Path, rng: random.Random) -> None:
    import pandas as pd

    ns = _vlmeval(root)
    logging.disable(logging.CRITICAL)
    answers = []
    for _ in range(80):
        options = rng.choice(MMB_OPTIONS)
        item = {"question": rng.choice(MMB_QUESTIONS), "prediction": rng.choice(MMB_ANSWERS)}
        item.update({chr(65 + i): o for i, o in enumerate(options)})
        reply = rng.choice(MMB_REPLIES)
        judge = ScriptedJudge(reply)
        result = ns["extract_answer_from_item"](judge, pd.Series(item))
        answers.append({
            "question": item["question"], "options": options, "prediction": item["prediction"],
            "reply": reply, "prompt": judge.prompts[0] if judge.prompts else None,
            "calls": len(judge.prompts), "opt": result["opt"],
            "guessed": result["log"].startswith("Failed to predict"),
        })  # fmt: skip
    groups = []
    for _ in range(25):
        options = rng.choice(MMB_OPTIONS[:1] + MMB_OPTIONS[2:])
        gold = rng.randrange(len(options))
        rows = []
        for k in range(len(options)):
            rotated = options[k:] + options[:k]
            gt = chr(65 + rotated.index(options[gold]))
            prediction = rng.choice([gt, gt, f"The answer is {gt}.", rotated[rotated.index(options[gold])],
                                     rng.choice("ABCD"), "I am not sure.", "Both are fine"])  # fmt: skip
            row = {"question": "What is it", "prediction": prediction, "GT": gt,
                   "reply": rng.choice([gt, gt, gt, "Z", rng.choice("ABCD")])}  # fmt: skip
            row.update({chr(65 + i): o for i, o in enumerate(rotated)})
            rows.append(row)
        # One scripted judge per group: each answer's reply in turn, as the reference asks.
        replies = iter([r["reply"] for r in rows if not ns["prefetch_answer"](pd.Series(r))])

        frame = pd.DataFrame([{k: v for k, v in r.items() if k != "reply"} for r in rows])
        hit = ns["eval_circular_group"](GroupJudge(replies), frame)["hit"]
        groups.append({"rows": rows, "hit": int(hit)})
    write(
        "mmbench",
        "VLMEvalKit",
        "vlmeval/dataset/utils/multiple_choice.py, vlmeval/utils/matching_util.py, vlmeval/smp/vlm.py, vlmeval/smp/misc.py",
        [{"answers": answers, "circular": groups}],
    )


# --------------------------------------------------------------------------- HallusionBench

HB_REPLIES = [
    "correct", "incorrect", "Correct.", "INCORRECT", "unclear", "The prediction is correct.",
    "The prediction is not correct", "It is Incorrect because...", "", "I cannot say",
    "“correct”", "correctness unclear", "Unclear; it may be incorrect",
]  # fmt: skip
HB_ANSWERS = ["Yes.", "No, it is not.", "I cannot tell from the image.", "Yes, the line goes up."]


def hallusion(root: Path, rng: random.Random) -> None:
    sent: list[str] = []
    script: list[str] = []

    class ChatCompletion:
        @staticmethod
        def create(model: str, messages: list[dict[str, str]], **kw: Any) -> dict[str, Any]:
            sent.append(messages[0]["content"])
            return {"choices": [{"message": {"content": script[len(sent) - 1]}}]}

    fake_openai = types.SimpleNamespace(ChatCompletion=ChatCompletion)
    ns: dict[str, Any] = {"openai": fake_openai, "tqdm": lambda x: x, "json": json, "os": os,
                          "time": __import__("time"), "api_key": ""}  # fmt: skip
    import numpy as np

    ns["np"] = np
    functions(
        root / "utils.py",
        ["evaluate_by_chatgpt", "assign_correctness", "get_eval_all", "get_eval_fig",
         "get_eval_pair_all"],
        ns,
    )  # fmt: skip
    entry, out = "gpt4v_output_gpt_check", "model_prediction"
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(30):
            data = []
            for set_id in range(rng.randint(1, 3)):
                category = rng.choice(["VD", "VS"])
                sub = rng.choice(["illusion", "chart"])
                questions = range(rng.randint(1, 2))
                for fig in range(rng.randint(1, 3)):
                    for q in questions:
                        visual = "0" if category == "VS" and fig == 0 else "1"
                        data.append({
                            "category": category, "subcategory": sub, "set_id": str(set_id),
                            "figure_id": str(fig), "question_id": str(q), "visual_input": visual,
                            "question": f"Is the {sub} {set_id}/{q} larger?",
                            "gt_answer_details": rng.choice(["Yes, it is larger.", "No."]),
                            "gt_answer": rng.choice("01"), out: rng.choice(HB_ANSWERS),
                        })  # fmt: skip
            sent.clear()
            script[:] = [rng.choice(HB_REPLIES) for _ in data]
            rows = [dict(r) for r in data]
            for r in rows:
                # check_same_by_chatgpt's flag feeds only the failure analysis, not the scores.
                if r["figure_id"] != "0":
                    r["same"] = "1"
            judged = ns["evaluate_by_chatgpt"](
                rows, out, entry, save_json_path=os.path.join(tmp, "out.json")
            )
            ns["assign_correctness"](judged, correctness_entry=entry)
            a = ns["get_eval_all"](judged, entry)
            try:
                f = ns["get_eval_fig"](judged)
                fig = [int(f["correct"]), int(f["total"])]
            except ZeroDivisionError:
                fig = None
            q = ns["get_eval_pair_all"](judged, entry)
            # lmmprobe's strict figures: the same aggregation with every verdict the reference
            # only defaulted to "2" (a reply holding none of its answers) read "0" instead.
            strict = [dict(r) for r in judged]
            for r, reply in zip(strict, script, strict=True):
                if not any(t in reply.lower() for t in ("correct", "unclear")):
                    r[entry] = "0"
            ns["assign_correctness"](strict, correctness_entry=entry)
            sa = ns["get_eval_all"](strict, entry)
            try:
                sf = ns["get_eval_fig"](strict)
                sfig = [int(sf["correct"]), int(sf["total"])]
            except ZeroDivisionError:
                sfig = None
            sq = ns["get_eval_pair_all"](strict, entry)
            cases.append({
                "rows": data, "replies": list(script), "prompts": list(sent),
                "verdicts": [r[entry] for r in judged],
                "aAcc": [int(a["correct"]), int(a["total"])], "fAcc": fig,
                "qAcc": [int(q["correct"]), int(q["total"])],
                "strict": {"aAcc": [int(sa["correct"]), int(sa["total"])], "fAcc": sfig,
                           "qAcc": [int(sq["correct"]), int(sq["total"])]},
            })  # fmt: skip
    write("hallusionbench", "HallusionBench", "utils.py", cases)


# --------------------------------------------------------------------------- MM-Vet

MMV_CAPS = [
    ["rec"],
    ["ocr"],
    ["rec", "know"],
    ["ocr", "math"],
    ["rec", "ocr", "spat"],
    ["gen", "rec"],
]
MMV_REPLIES_OK = ["0.0", "1.0", "0.5", "0.3 ", "1", "0", "0.7", "0.25", ".5", "1.0 because"]
MMV_REPLIES_BAD = ["", " 0.5", "1.5", "-0.1", "nan", "The score", "0,5"]


def mmvet(root: Path, rng: random.Random) -> None:
    retry_suffix = "\nPredict the correctness of the answer (digit): "
    script: dict[str, list[list[str]]] = {}
    state: dict[str, list[int]] = {}
    first_prompts: dict[str, str] = {}
    asked: list[dict[str, Any]] = []

    class Completions:
        @staticmethod
        def create(
            model: str, max_tokens: int, temperature: float, messages: list[dict[str, str]]
        ) -> Any:
            content = messages[0]["content"]
            found = re.search(r"\nWhat is (\d+)\? \| ", content)
            assert found is not None
            qid = f"v1_{found.group(1)}"
            pointer = state.setdefault(qid, [-1, 0])
            if content.endswith(retry_suffix):
                pointer[1] += 1
            else:
                pointer[0], pointer[1] = pointer[0] + 1, 0
                first_prompts.setdefault(qid, content)
            asked.append({"max_tokens": max_tokens, "temperature": temperature})
            reply = script[qid][pointer[0]][pointer[1]]
            message = types.SimpleNamespace(content=reply)
            return types.SimpleNamespace(
                choices=[types.SimpleNamespace(message=message)], model=model
            )

    class RateLimitError(Exception):
        pass

    src = (root / "mm-vet_evaluator.py").read_text(encoding="utf-8")
    ns: dict[str, Any] = {"__name__": "mmvet_ref"}
    # The module's top level (imports, the prompt, the functions) without its __main__ block.
    body = [n for n in ast.parse(src).body if not isinstance(n, ast.If)]
    exec(compile(ast.Module(body=body, type_ignores=[]), "mm-vet_evaluator.py", "exec"), ns)
    ns["client"] = types.SimpleNamespace(chat=types.SimpleNamespace(completions=Completions()))
    ns["RateLimitError"] = RateLimitError
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in range(20):
            n = rng.randint(3, 8)
            num_run = rng.choice([1, 2, 5])
            readable_only = c < 14
            data, preds = {}, {}
            script.clear()
            state.clear()
            first_prompts.clear()
            asked.clear()
            for i in range(n):
                qid = f"v1_{i}"
                answer = rng.choice(["4", "cat<AND>dog", "yes<OR>no", "a long answer about a meme"])
                data[qid] = {"question": f"What is {i}?", "answer": answer,
                             "capability": rng.choice(MMV_CAPS)}  # fmt: skip
                preds[qid] = rng.choice(["4", "cat", "dog and cat", "no", "something"])
                script[qid] = []
                for _j in range(num_run):
                    ok = readable_only or rng.random() < 0.6
                    first = rng.choice(MMV_REPLIES_OK if ok else MMV_REPLIES_BAD)
                    retries = [rng.choice(MMV_REPLIES_OK + MMV_REPLIES_BAD) for _ in range(5)]
                    script[qid].append([first, *retries])
            folder = Path(tmp) / f"case{c}"
            folder.mkdir()
            (folder / "mm-vet.json").write_text(json.dumps(data))
            (folder / "model.json").write_text(json.dumps(preds))
            args = argparse.Namespace(
                mmvet_path=str(folder), result_file=str(folder / "model.json"),
                result_path=str(folder), gpt_model="gpt-4-0613", prompt=ns["prompt"],
                use_sub_set=False, decimal_places=1, num_run=num_run,
            )  # fmt: skip
            (sub_set, _name, data_, counter, cap_set_list, cap_set_counter, len_data, df, df2,
             cap_set_names) = ns["load_metadata"](args)  # fmt: skip
            grade_file, cap_file, cap_int_file = ns["get_file_names"](args, "model", "")
            ns.update(sub_set=sub_set, counter=counter, cap_set_list=cap_set_list,
                      len_data=len_data, cap_score_file=cap_file,
                      cap_int_score_file=cap_int_file)  # fmt: skip
            with contextlib.redirect_stdout(io.StringIO()):
                grades = ns["runs"](args, grade_file, data_, len_data, sub_set)
                df, df2 = ns["export_result"](args, "model", df, df2, grades, data_,
                                              cap_set_counter, cap_set_names)  # fmt: skip
            row = df.loc["model"].to_dict()
            cases.append({
                "data": data, "predictions": preds, "num_run": num_run,
                "replies": {q: [r[0] for r in runs] for q, runs in script.items()},
                "prompts": dict(first_prompts),
                "decoding": asked[0],
                "grades": {q: v["score"] for q, v in grades.items()},
                "capability_scores": {k: (v if isinstance(v, str) else float(v)) for k, v in sorted(row.items())},
                "readable_only": readable_only,
            })  # fmt: skip
    write("mmvet", "MM-Vet", "mm-vet_evaluator.py", cases)


# --------------------------------------------------------------------------- LLaVA-Bench

LL_REPLIES = [
    "8 6\nAssistant 1 is better.", "7 7\nBoth good.", "9,5\nReason", "10 3", "6 8\nAssistant 2.",
    "8 7.5\nok", "7, 7\nok", "Score: 8 6\nbad format", "8\n6", "", "8 6 5\nthree", "eight six",
    "5 9\n", "1 10\nx", "nan 5\nx",
]  # fmt: skip
LL_CATEGORIES = ["conv", "detail", "complex"]


def llava(root: Path, rng: random.Random) -> None:
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        fake = Path(tmp) / "fake"
        (fake / "openai").mkdir(parents=True)
        (fake / "openai" / "__init__.py").write_text(
            "import json, os\n"
            "class _E(Exception):\n    pass\n"
            "class error:\n    RateLimitError = _E\n"
            "_replies = json.load(open(os.environ['SCRIPT']))\n"
            "_sent = []\n"
            "class ChatCompletion:\n"
            "    @staticmethod\n"
            "    def create(model, messages, temperature, max_tokens):\n"
            "        _sent.append({'model': model, 'messages': messages, 'temperature': temperature,"
            " 'max_tokens': max_tokens})\n"
            "        json.dump(_sent, open(os.environ['SENT'], 'w'))\n"
            "        return {'choices': [{'message': {'content': _replies[len(_sent) - 1]}}]}\n"
        )
        for c in range(20):
            folder = Path(tmp) / f"case{c}"
            folder.mkdir()
            n = rng.randint(3, 9)
            questions, refs, answers, contexts, replies = [], [], [], [], []
            for i in range(n):
                image = f"{i:03d}.jpg"
                caption: str | list[str] = rng.choice(
                    ["A dog on a beach.", ["A dog.", "It runs on the sand."]]
                )
                contexts.append({"image": image, "caption": caption})
                questions.append({"question_id": i, "image": image, "text": f"What is {i}?",
                                  "category": rng.choice(LL_CATEGORIES)})  # fmt: skip
                refs.append({"question_id": i, "answer_id": f"ref{i}", "text": f"Reference {i}."})
                answers.append({"question_id": i, "answer_id": f"ans{i}",
                                "text": rng.choice(["A dog.", "A cat on a mat.", ""])})  # fmt: skip
                replies.append(rng.choice(LL_REPLIES[:7] if c < 12 else LL_REPLIES))
            for name, rows in (
                ("q", questions),
                ("ref", refs),
                ("ans", answers),
                ("ctx", contexts),
            ):
                (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
            (folder / "script.json").write_text(json.dumps(replies))
            env = dict(os.environ, PYTHONPATH=str(fake), SCRIPT=str(folder / "script.json"),
                       SENT=str(folder / "sent.json"))  # fmt: skip
            subprocess.run(
                [sys.executable, str(root / "llava/eval/eval_gpt_review_bench.py"),
                 "-q", str(folder / "q.jsonl"), "-c", str(folder / "ctx.jsonl"),
                 "-a", str(folder / "ref.jsonl"), str(folder / "ans.jsonl"),
                 "-r", str(root / "llava/eval/table/rule.json"),
                 "-o", str(folder / "review.jsonl")],
                env=env, check=True, capture_output=True, cwd=folder,
            )  # fmt: skip
            sent = json.loads((folder / "sent.json").read_text())
            reviews = [json.loads(x) for x in (folder / "review.jsonl").read_text().splitlines()]
            printed = subprocess.run(
                [sys.executable, str(root / "llava/eval/summarize_gpt_review.py"),
                 "-f", str(folder / "review.jsonl")],
                check=True, capture_output=True, text=True, cwd=folder,
            ).stdout  # fmt: skip
            summary = {}
            for line in printed.splitlines()[1:]:
                parts = line.split()
                if len(parts) == 4:
                    summary[parts[0]] = [float(p) for p in parts[1:]]
            cases.append({
                "questions": questions, "references": refs, "answers": answers,
                "contexts": contexts, "replies": replies,
                "sent": [{"system": s["messages"][0]["content"], "user": s["messages"][1]["content"],
                          "temperature": s["temperature"], "max_tokens": s["max_tokens"]}
                         for s in sent],
                "tuples": [r["tuple"] for r in reviews],
                "categories": [r["category"] for r in reviews],
                "summary": summary,
            })  # fmt: skip
    write(
        "llava_wild",
        "LLaVA",
        "llava/eval/eval_gpt_review_bench.py, llava/eval/table/rule.json, llava/eval/summarize_gpt_review.py",
        cases,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--refs", type=Path, required=True, help="folder of the checkouts")
    parser.add_argument("--only", nargs="*", default=None, help="protocols to regenerate")
    args = parser.parse_args()
    for name, fn, key in (
        ("mathvista", mathvista, "MathVista"),
        ("mmbench", mmbench, "VLMEvalKit"),
        ("hallusionbench", hallusion, "HallusionBench"),
        ("mmvet", mmvet, "MM-Vet"),
        ("llava_wild", llava, "LLaVA"),
    ):
        if args.only is None or name in args.only:
            fn(args.refs / key, random.Random(f"{SEED}-{name}"))


if __name__ == "__main__":
    main()
