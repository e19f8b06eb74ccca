"""Regenerate charxiv_descriptive.json.gz by running CharXiv's released descriptive evaluation.

princeton-nlp/CharXiv's ``src/evaluate.py --mode descriptive`` and then ``src/get_stats.py`` run
as scripts, unmodified, on the 4,000 real val descriptive questions (``data/*_val.json`` at
`COMMIT`) with one generated response each, and a scripted ``openai`` module first on their
path: its ``OpenAI().chat.completions.create`` records each prompt and the call's settings and
replies from this script's table (a needle of the prompt → the reply; the same reply on every
retry). The table is keyed by each grading prompt's first answer: the groups are planned with
the reference's own ``preprocess_descriptive_grading_queries`` and
``build_descriptive_grading_queries``, and each group gets a scripted reply (valid, or one the
script refuses: a key missing, a score outside 0 and 1, no JSON, a cut-off string).

Recorded: per question, the row as lmmprobe's reader gives it (figure, index, template, answer,
subplot location, metadata), the question ``build_descriptive_quries`` asks the model, the
response, the ``extracted_answer`` and ``score`` the script stored; per grading prompt, its
answers' keys (in the order it quotes them), the prompt, the reply and how many times the
script asked; and the statistics ``get_stats.py`` wrote.

Run from the repository root with the shared venv (the scripts import tqdm and ``openai``,
which the scripted module replaces)::

    /work/main/.venv/bin/python tests/judge/parity/generate_charxiv_descriptive.py \\
        --git-dir CharXiv.git

``--git-dir`` is a clone (bare or not) of princeton-nlp/CharXiv; the files are taken from it at
`COMMIT` (``git show COMMIT:PATH``). A re-run writes the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
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
REPO = "princeton-nlp/CharXiv"
COMMIT = "7ebe88f78dee387691551f071abcb2b9e1a8025b"
SEED = 3737
FILES = (
    "src/evaluate.py", "src/descriptive_utils.py", "src/constants.py", "src/get_stats.py",
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

# How a group's reply is written (weights beside): the valid ones first, then those the script
# refuses whole (it asks again, then stores -1 for every answer of the group).
STYLES = {
    "compact": 30, "pretty": 10, "loose scores": 6, "numbers": 4, "extra keys": 4,
    "repeated key": 2, "null extraction": 2,
    "missing score": 4, "missing extraction": 3, "score 2": 3, "score text": 2,
    "not json": 2, "list": 1, "fenced": 2, "cut off": 2,
}  # fmt: skip


def _reply(style: str, said: list[str], scores: list[int], rng: random.Random) -> str:
    n = len(said)
    doc: dict[str, Any] = {}
    for i, (a, s) in enumerate(zip(said, scores, strict=True), start=1):
        doc[f"extract_answer_T{i}"] = a
        doc[f"score_T{i}"] = s
    one = rng.randrange(1, n + 1)
    if style == "pretty":
        return json.dumps(doc, indent=4, ensure_ascii=False)
    if style == "loose scores":
        doc[f"score_T{one}"] = [1.0, True, 0.0, False][rng.randrange(4)]
    elif style == "numbers":
        doc[f"extract_answer_T{one}"] = rng.choice([5, 1.0, 0, -2.5])
    elif style == "extra keys":
        doc[f"extract_answer_T{n + 1}"] = "x"
        doc[f"score_T{n + 1}"] = 7
        doc["note"] = "graded"
    elif style == "repeated key":
        text = json.dumps(doc, ensure_ascii=False)
        return text[:-1] + f', "score_T{one}": {1 - scores[one - 1]}}}'
    elif style == "null extraction":
        doc[f"extract_answer_T{one}"] = None
    elif style == "missing score":
        del doc[f"score_T{one}"]
    elif style == "missing extraction":
        del doc[f"extract_answer_T{one}"]
    elif style == "score 2":
        doc[f"score_T{one}"] = rng.choice([2, -1, 0.5])
    elif style == "score text":
        doc[f"score_T{one}"] = "1"
    elif style == "not json":
        return "\n".join(f"T{i}: score {s}" for i, s in enumerate(scores, start=1))
    elif style == "list":
        return json.dumps([doc])
    elif style == "fenced":
        return "```json\n" + json.dumps(doc, ensure_ascii=False) + "\n```"
    elif style == "cut off":
        return json.dumps(doc, ensure_ascii=False)[:40] + ' "cut'
    return json.dumps(doc, ensure_ascii=False)


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


def _responses(queries: dict[str, Any], data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One generated response per question, ending in its tag ``#rKEY``."""
    gen: dict[str, Any] = {}
    for key, q in queries.items():
        fid, i = key.split("_")
        answer = data[fid]["answers"][int(i)]
        said = answer if rng.random() < 0.6 else rng.choice(["Not Applicable", "3", "0.5", "x"])
        response = rng.choice(
            [
                f"The answer is {said}. #r{key}",
                f"{said} #r{key}",
                f"#r{key}",
                f"Looking at the chart:\n{said} {{braces}} <|JSON_KEYS|> #r{key}",
            ]
        )
        gen[key] = {**{k: v for k, v in q.items() if k not in ("figure_path", "question")},
                    "response": response, "said": said}  # fmt: skip
    return gen


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
        data = json.loads((ref / "data/descriptive_val.json").read_text(encoding="utf-8"))
        meta = json.loads((ref / "data/image_metadata_val.json").read_text(encoding="utf-8"))
        # The questions and the groups: the reference's own functions.
        sys.path.insert(0, str(ref / "src"))
        from descriptive_utils import (  # type: ignore[import-not-found]
            build_descriptive_grading_queries,
            build_descriptive_quries,
            preprocess_descriptive_grading_queries,
        )

        queries = build_descriptive_quries(data, str(ref / "images"))
        gen = _responses(queries, data, rng)
        planned = build_descriptive_grading_queries(
            preprocess_descriptive_grading_queries(data, gen)
        )
        sys.path.pop(0)
        table: list[list[str]] = []
        for group in planned:
            keys = group["resp_keys"]
            said = [gen[k]["said"] for k in keys]
            truth = [data[k.split("_")[0]]["answers"][int(k.split("_")[1])] for k in keys]
            scores = [int(s == t) if rng.random() < 0.9 else 1 - int(s == t)
                      for s, t in zip(said, truth, strict=True)]  # fmt: skip
            style = rng.choices(list(STYLES), weights=list(STYLES.values()))[0]
            table.append([f"#r{keys[0]}\nGround Truth 1: ", _reply(style, said, scores, rng)])
        (ref / "results/gen-parity-descriptive_val.json").write_text(
            json.dumps(
                {k: {kk: vv for kk, vv in v.items() if kk != "said"} for k, v in gen.items()}
            ),
            encoding="utf-8",
        )
        (tmp / "fake/openai").mkdir(parents=True)
        (tmp / "fake/openai/__init__.py").write_text(FAKE_OPENAI, encoding="utf-8")
        (tmp / "table.json").write_text(json.dumps(table), encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=str(tmp / "fake"), CX_TABLE=str(tmp / "table.json"),
                   CX_LOG=str(tmp / "calls.jsonl"))  # fmt: skip
        _run(ref, ["src/evaluate.py", "--model_name", "parity", "--split", "val", "--mode",
                   "descriptive", "--api_key", "x"], env)  # fmt: skip
        _run(ref, ["src/get_stats.py", "--model_name", "parity", "--split", "val"], env)
        calls = [
            json.loads(x) for x in (tmp / "calls.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        scores_doc = json.loads(
            (ref / "results/scores-parity-descriptive_val.json").read_text(encoding="utf-8")
        )
        stats = json.loads(
            (ref / "results/stats-parity-descriptive_val.json").read_text(encoding="utf-8")
        )
    replies = dict((needle, reply) for needle, reply in table)
    groups: list[dict[str, Any]] = []
    for call in calls:
        keys = re.findall(r"#r(\d+_\d)\nGround Truth \d+: ", call["prompt"])
        if groups and groups[-1]["prompt"] == call["prompt"]:
            groups[-1]["asked"] += 1  # the script asking again
            continue
        needle = f"#r{keys[0]}\nGround Truth 1: "
        groups.append({"keys": keys, "prompt": call["prompt"], "reply": replies[needle],
                       "asked": 1})  # fmt: skip
    assert [g["keys"] for g in groups] == [p["resp_keys"] for p in planned]
    cases = []
    for key, q in queries.items():
        fid, i = key.split("_")
        entry = data[fid]
        cases.append(
            {
                "row": {"figure_id": entry["figure_id"], "index": int(i), "qid": q["qid"],
                        "answer": entry["answers"][int(i)], "subplot_loc": entry["subplot_loc"],
                        "num_subplots": entry["num_subplots"],
                        "category": meta[fid]["category"], "year": meta[fid]["year"]},
                "question": q["question"],
                "response": gen[key]["response"],
                "extracted_answer": scores_doc[key]["extracted_answer"],
                "score": scores_doc[key]["score"],
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
        "groups": groups,
        "stats": stats,
    }
    out = HERE / "charxiv_descriptive.json.gz"
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    with gzip.GzipFile(out, "wb", mtime=0) as f:
        f.write(text.encode("utf-8"))
    print(
        f"wrote {out}: {len(cases)} cases, {len(groups)} grading prompts, {len(calls)} calls; "
        f"stats {stats['Overall Score']} ({stats['N_invalid']} invalid)"
    )


if __name__ == "__main__":
    main()
