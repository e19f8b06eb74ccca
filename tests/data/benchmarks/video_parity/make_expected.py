"""Run Video-MME's and MVBench's own scoring on generated answers; write ``expected.json``.

- Video-MME (MME-Benchmarks/Video-MME @ ``VIDEOMME``, ``evaluation/eval_your_results.py``, the
  last commit holding it): ``extract_characters_regex`` on every answer, and
  ``eval_your_results`` run as written on a results file in its format (every video
  ``missing: false``, ``skip_missing=True`` since the file has fewer than 300 videos a type);
  its printed lines are recorded (each duration's Overall and the whole set's).
- MVBench (OpenGVLab/Ask-Anything @ ``ASK_ANYTHING``, ``video_chat2/mvbench.ipynb``):
  ``check_ans(pred, gt)`` as the notebook defines it, on ``'(' + reply.strip().split('\\n')[0]``
  (its ``return_prompt`` and first line) against golds ``(x) text``.

- LongVideoBench, as lmms-eval reads it (EvolvingLMMs-Lab/lmms-eval @ ``LMMS_EVAL``,
  ``lmms_eval/tasks/longvideobench/utils.py``): ``parse_multi_choice_response`` (its source
  taken from the file and run; the file's other imports, decord and lmms-eval's own, are not
  needed by it) over options A-E, with ``random.choice`` replaced to return ``"RANDOM"`` so a
  guess is recorded as one.

- TempCompass (llyx97/TempCompass @ ``TEMPCOMPASS``): ``eval_multi-choice.py``'s ``main`` run as
  written with ``disable_llm=True`` (its mode without ChatGPT) on a predictions file of
  generated multi-choice questions (3 or 4 options; 22 videos covering its 11 fine-grained
  aspects, each with its ``meta_info.json`` entry), from a folder holding that
  ``meta_info.json``; every rating and its printed accuracy lines are recorded. Then ``main``
  again with the judge on (``disable_llm=False``), its ``get_eval_result`` replaced by a
  recorder, so the exact prompt it would send about each reply its rules cannot read is kept;
  and ``llm_output_to_rating`` on generated judge replies (null where its assert fails).

The replies are made here from a seed: letters alone, with brackets and dots, the answer
phrases Video-MME's script removes (and the ones its missing commas leave), long sentences with
and without a capital A-D, empty and blank replies, lower case, several lines.

    python tests/data/benchmarks/video_parity/make_expected.py VIDEO_MME_CHECKOUT ASK_ANYTHING_CHECKOUT \
        LMMS_EVAL_CHECKOUT TEMPCOMPASS_CHECKOUT
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import random
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).parent
VIDEOMME = "4e7566d36f63121fc72f040654d6f38f83f30125"
ASK_ANYTHING = "4dd8210b030374bb0c510a57dfbe916f70d3ef71"
LMMS_EVAL = "75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3"
TEMPCOMPASS = "e1b463166400633e6061962d890a9ae85db29f70"
FINE = {
    "action": ["fine-grained action", "coarse-grained action"],
    "direction": ["object motion", "camera motion"],
    "speed": ["absolute speed", "relative speed"],
    "order": ["order"],
    "attribute_change": [
        "color & light change",
        "size & shape change",
        "combined change",
        "other change",
    ],
}

PHRASES = [
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Best answer:",
    "Best option:",
    "The best option isThe correct option is",
    "Best answer:Best option:",
    "Answer:",
    "",
]
TAILS = ["", ".", ")", " because the person in the video is running.", "\nIt is clear."]
WORDS = [
    "the",
    "video",
    "shows",
    "a",
    "person",
    "who",
    "runs",
    "across",
    "the",
    "field",
    "and",
    "then",
    "stops",
    "near",
    "a",
    "tree",
]


def replies(rng: random.Random) -> list[str]:
    fixed = [
        "A",
        "B",
        "C",
        "D",
        "E",
        "a",
        "(B)",
        "(c)",
        "C.",
        " D ",
        "",
        "   ",
        "\n",
        "(",
        "A) yes",
        "B. Gray.",
        "The answer is C",
        "The best option is D",
        "The correct option is A",
        "Best option: B",
        "Best answer: C",
        "I cannot tell from the video which one it is for sure, so I guess nothing here",
        "Honestly the video is quite unclear and blurry and I am not sure about it at all.",
        "The person wears a black coat, so A is right.",
        "the answer is b",
        "Option (D) fits best.",
        "ABCD",
        "\u00c0 propos: B",
        "B\nA",
        "(A) black\n(B) gray",
        "..A",
        "A.B",
        "(a)",
        "b) gray",
        "(E) none",
    ]
    out = list(fixed)
    for _ in range(140):
        letter = rng.choice("ABCDabcd")
        mark = rng.choice(["{}", "({})", "{}.", "{})", "Option {}", "{} ."]).format(letter)
        words = " ".join(rng.choices(WORDS, k=rng.choice([0, 2, 9, 12])))
        phrase = rng.choice(PHRASES)
        parts = rng.choice(
            [
                [phrase, mark],
                [mark, words],
                [words, mark],
                [phrase, words],
                [words],
                [phrase, mark, rng.choice(TAILS)],
            ]
        )
        out.append(rng.choice(["", " ", "\n"]) + " ".join(p for p in parts if p))
    return out


def _load(path: Path, name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def videomme(checkout: Path, answers: list[str], rng: random.Random) -> dict[str, object]:
    script = _load(checkout / "evaluation/eval_your_results.py", "videomme_eval")
    rows = []
    for i, reply in enumerate(answers):
        rows.append(
            {
                "reply": reply,
                "gold": rng.choice("ABCD"),
                "duration": ["short", "medium", "long"][i % 3],
                "domain": script.CATEGORIES[i % len(script.CATEGORIES)],
                "sub_category": script.SUB_CATEGORIES[i % len(script.SUB_CATEGORIES)],
                "task_type": script.TASK_CATEGORIES[i % len(script.TASK_CATEGORIES)],
                "letter": script.extract_characters_regex(reply),
            }
        )
    videos = []
    for i, row in enumerate(rows):  # one video a question: categories follow the question
        videos.append(
            {
                "video_id": f"{i:03d}",
                "duration_category": row["duration"],
                "video_category": row["domain"],
                "video_subcategory": row["sub_category"],
                "missing": False,
                "questions": [
                    {"task_type": row["task_type"], "answer": row["gold"], "response": row["reply"]}
                ],
            }
        )
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.json"
        results.write_text(json.dumps(videos), encoding="utf-8")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            script.eval_your_results(
                str(results),
                video_types="short,medium,long",
                skip_missing=True,
                return_categories_accuracy=False,
            )
    overall = [line for line in printed.getvalue().splitlines() if line.startswith("Overall:")]
    return {
        "rows": rows,
        "overall": dict(zip(["short", "medium", "long", "all"], overall, strict=True)),
    }


def mvbench(checkout: Path, answers: list[str], rng: random.Random) -> list[dict[str, object]]:
    notebook = json.loads((checkout / "video_chat2/mvbench.ipynb").read_text(encoding="utf-8"))
    source = next(
        "".join(c["source"])
        for c in notebook["cells"]
        if c["cell_type"] == "code" and "def check_ans" in "".join(c["source"])
    )
    names: dict[str, object] = {}
    exec(compile(source, "mvbench.ipynb", "exec"), names)  # the notebook's own cell
    check_ans = names["check_ans"]
    rows = []
    for reply in answers:
        letter = rng.choice("ABCD")
        gold = f"({letter}) {rng.choice(['a red ball.', 'Walking', 'the man opened the door'])}"
        pred = "(" + reply.strip().split("\n")[0]  # infer_mvbench's return_prompt + first line
        rows.append({"reply": reply, "gold": gold, "right": bool(check_ans(pred=pred, gt=gold))})  # type: ignore[operator]
    return rows


def longvideobench(checkout: Path, answers: list[str]) -> dict[str, object]:
    import ast
    import re

    path = checkout / "lmms_eval/tasks/longvideobench/utils.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = next(
        n
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and n.name == "parse_multi_choice_response"
    )
    guess = types.SimpleNamespace(choice=lambda choices: "RANDOM")
    names: dict[str, object] = {"re": re, "random": guess}
    exec(compile(ast.Module([node], []), str(path), "exec"), names)  # its own function
    parse = names["parse_multi_choice_response"]
    choices = ["A", "B", "C", "D", "E"]
    index2ans = {c: f"option {c}" for c in choices}
    rows = [{"reply": r, "read": parse(r, choices, index2ans)} for r in answers]  # type: ignore[operator]
    # The aggregation as written (its logger stubbed): each row in its duration group and its
    # category, golds A-D in turn; a guess ("RANDOM") is never the gold, as lmmprobe counts it.
    wanted = (
        "evaluate_longvideobench",
        "eval_multi_choice",
        "calculate_ins_level_acc",
        "longvideobench_aggregate_results",
    )
    nodes = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    from collections import defaultdict

    logger = types.SimpleNamespace(info=lambda *a, **k: None)
    names.update(defaultdict=defaultdict, eval_logger=logger)
    exec(compile(ast.Module(nodes, []), str(path), "exec"), names)  # its own functions
    results = [{"id": f"q{i}", "duration_group": [15, 60, 600, 3600][i % 4],
                "question_category": ["E2O", "T2A", "S2E"][i % 3], "answer": "ABCD"[i % 4],
                "parsed_pred": row["read"]} for i, row in enumerate(rows)]  # fmt: skip
    overall = names["longvideobench_aggregate_results"](results)  # type: ignore[operator]
    return {"rows": rows, "results": results, "overall": overall}


def tempcompass(checkout: Path, answers: list[str], rng: random.Random) -> dict[str, object]:
    import os

    videos = [(dim, fine) for dim, fines in FINE.items() for fine in fines] * 2
    meta, predictions, rows = {}, {}, []
    words = ["rolling left", "rolling right", "speeding up", "slowing down", "turning red"]
    extra = ["A. rolling left", "B. rolling right</s>", "rolling left", "C)", "D.", " B ", "E"]
    # Then 80 replies made from their own question's lines (None: made below).
    for i, reply in enumerate([*answers, *extra, *([None] * 80)]):
        vid_index = i % len(videos)
        dim, fine = videos[vid_index]
        vid = f"9{vid_index:03d}" + ("_reverse" if vid_index % 3 == 0 else "")
        meta[vid] = {
            "eval_dim": {d: ({"type": fine} if d == dim and d != "order" else None) for d in FINE}
        }
        n = rng.choice([3, 4])
        options = rng.sample(words, n)
        gold = rng.randrange(n)
        lines = [f"{'ABCD'[k]}. {o}" for k, o in enumerate(options)]
        question = f"What happens in clip {i}?\n" + "\n".join(lines)
        if reply is None:
            k = rng.randrange(n)
            reply = rng.choice(
                [
                    lines[k],
                    lines[k] + "</s>",
                    "ABCD"[k],
                    f"{'ABCD'[k]}.",
                    f"{'ABCD'[k]}) {options[k]}",
                    options[k],
                    f" {lines[k]} ",
                    f"({'ABCD'[k]})",
                    lines[k].lower(),
                ]
            )
        pred = {"question": question, "answer": lines[gold], "prediction": reply}
        predictions.setdefault(vid, {}).setdefault(dim, []).append(pred)
        rows.append(
            {
                "video": vid,
                "dimension": dim,
                "question": question,
                "answer": lines[gold],
                "reply": reply,
            }
        )
    sys.path.insert(0, str(checkout))
    spec = importlib.util.spec_from_file_location("tc_eval", checkout / "eval_multi-choice.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "meta_info.json").write_text(json.dumps(meta), encoding="utf-8")
        os.chdir(tmp)
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                results: dict[str, dict[str, list[dict[str, object]]]] = {}
                module.main(predictions, results, str(Path(tmp) / "out.json"), True)
        finally:
            os.chdir(here)
    sent: list[str] = []

    def record(prompt: str) -> tuple[str, int]:
        sent.append(prompt)
        return "Correct", 1

    module.get_eval_result = record  # the ChatGPT call; everything else is main's own
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        (Path(tmp) / "meta_info.json").write_text(json.dumps(meta), encoding="utf-8")
        os.chdir(tmp)
        try:
            module.main(predictions, {}, str(Path(tmp) / "out.json"), False)
        finally:
            os.chdir(here)
    judge_replies = ["Correct", "Incorrect", "Correct.", " Incorrect, because", "correct",
                     "The prediction is Correct", "The prediction is Incorrect",
                     "Correct or Incorrect", "Incorrect? Correct", "", "I cannot decide",
                     "INCORRECT", "Correctly so", "\nCorrect\n"]  # fmt: skip

    def rating(reply: str) -> int | None:
        try:
            return int(module.llm_output_to_rating(reply.strip()))
        except AssertionError:
            return None

    for vid, dims in results.items():  # ratings back onto the rows, in order
        for dim, rated in dims.items():
            mine = [r for r in rows if r["video"] == vid and r["dimension"] == dim]
            for row, result in zip(mine, rated, strict=True):
                row["rating"] = result["rating"]
    return {
        "meta_info": meta,
        "rows": rows,
        "printed": printed.getvalue().splitlines(),
        "judge_prompts": sent,
        "judge_ratings": [{"reply": r, "rating": rating(r)} for r in judge_replies],
    }


def main() -> None:
    rng = random.Random(1138)
    answers = replies(rng)
    out = {
        "videomme_commit": VIDEOMME,
        "ask_anything_commit": ASK_ANYTHING,
        "videomme": videomme(Path(sys.argv[1]), answers, rng),
        "mvbench": mvbench(Path(sys.argv[2]), answers, rng),
        "lmms_eval_commit": LMMS_EVAL,
        "longvideobench": longvideobench(Path(sys.argv[3]), answers),
        "tempcompass_commit": TEMPCOMPASS,
        "tempcompass": tempcompass(Path(sys.argv[4]), answers, rng),
    }
    (HERE / "expected.json").write_text(
        json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
