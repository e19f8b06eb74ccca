"""Regenerate tests/parity/data/cmmmu.json.gz by running CMMMU's released scoring code.

The reference is CMMMU-Benchmark/CMMMU ``eval/eval_script.py`` with ``eval/utils/eval_utils.py``,
imported from a checkout and run, never copied. Nothing is patched: ``eval_utils``' module-level
``random`` is wrapped by an object that forwards every call to the real module (so the global
stream, seeded with 42 at import, draws exactly as it would) and records each ``choice`` made,
and ``eval_script.evaluate_response`` is wrapped to keep the rows it scored (it writes
``predicted_answer`` and ``judge`` into them).

Each case writes a data file (``id``, ``type``, ``category``, ``option1..4``, ``answer``: the
fields ``process_response_jsonl_file`` reads) and a response file (``id``, ``type``,
``response``, in a shuffled order), then:

- runs ``process_response_jsonl_file`` for each discipline in the script's ``category_list``
  order, in one process (the script's own loop), recording every row's reading, verdict and
  draw and each discipline's ``results_count``;
- runs ``eval_script.py --output_path ... --data_path ...`` as a command and records the table
  it prints.

Cases: ``generated`` (720 seeded answers over the six disciplines, written to be hard for the
reading: bracketed, bare and repeated letters, letters inside words, option texts, several
options, empty and unreadable answers; true/false answers positive, negative, tied, ambiguous,
negated; fill answers with numbers, commas, Chinese commas, exponents, ``=``, units, long
texts); ``partial`` (three disciplines only: the others print 0 of 0).

Run with an environment holding tabulate, tqdm and numpy (the scripts import them)::

    /tmp/refenv/bin/python tests/parity/generate/cmmmu.py --cmmmu /path/to/CMMMU

A re-run with the same seed writes the same data.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SEED = 20261130
DATA = Path(__file__).resolve().parents[1] / "data"
REPO = "CMMMU-Benchmark/CMMMU"
COMMIT = "59a4776bc656638c0b07eef093c48ffef464fdcd"
CATEGORIES = ["艺术与设计", "商业", "科学", "健康与医学", "人文社会科学", "技术与工程"]

OPTIONS = ["黑陶", "寺庙乐", "甲品种", "A、B、D、C", "$2n_{2} e$", "400元", "方案二", "DNA",
           "GDP增长", "", "减小", "增大", "保持不变", "不确定", "(A) 宗炳", "3.14", "正确", "ABC"]  # fmt: skip
MC = [
    "{L}", "({L})", "({L}) {t}", "正确答案是({L}) {t}。", "{L}{M}", "({L})({M})", "({L}) 或 ({M})",
    "{t}", "{t}和{u}", "", "   ", "无法确定", "我不知道", "这个问题没有足够的信息。", "{l}",
    "正确答案是{L}。", "GDP增长了", "DNA", "Answer: {L}", "{L}, {M}, {L}", "'{L}'", ",.{L}!?",
    "({L})\n({M})\n({N})", "选项{L}和选项{M}都对，但{L}更好", "{t}{t}{u}", "(E)", "e",
    "首先，我们需要计算投资组合的方差。然后再根据比例计算。",
]  # fmt: skip
TF = [
    "正确", "错误", "对", "错", "不对", "不正确", "这个说法是正确的。", "这个说法是错误的。",
    "这个陈述不准确。", "答案是对的", "答案是错的", "", "无法判断", "是否正确无法确定",
    "这个问题没有足够的信息来给出一个确定的答案。", "判断：正确。\n判断：错误。",
    "结果为正确。结果为错误。结果为错误", "对错难说", "肯定", "否定", "说法不合适",
    "我认为是对的。所以答案是错。", "。正确。", "这是正确性的问题", "或者对或者错",
    "答案：对\n答案：对", "表达准确。陈述错误。说法对的",
]  # fmt: skip
FILL = [
    "{a}", "答案是{a}", "答案为{a}。", "所以结果是{a}元", "x = {a}", "{a}。", "等于{a}",
    "因此{a}，最后{b}", "{n1},{n2}", "1，000，000", "1,234.5", "3.14159", "2.5e3", "-7",
    ".5", "12%", "", "对不起，我无法理解您的问题。", "方案A更优。", "{a}{a}{a}",
    "首先计算。然后结果为{a}\n最后答案是 {b}", "100000000000000000000000000000000000",
    "这是一个非常长的回答，它并没有给出一个确切的答案而只是在不停地重复一些无关紧要的话语而已",
    "ABCDEFG {a}", "= {a}", "答案是：", "结果是.", "{a} ", "正确答案：{a}；因此{n1}",
]  # fmt: skip
FILL_GOLDS = ["400", "甲", "高", "7.8", "5037", "DNA", "0.6", "球—枕", "3.14", "1,234.5",
              "减少", "-7", "2500", "12%", "基因工程", "1000000"]  # fmt: skip


def _mc(rng: random.Random) -> tuple[dict[str, Any], str]:
    opts = rng.sample(OPTIONS, 4)
    k = rng.choice([1, 1, 1, 2, 3])
    answer = "".join(sorted(rng.sample("ABCD", k)))
    letters = rng.sample("ABCD", 3)
    t, u = rng.sample(opts, 2)
    text = rng.choice(MC).format(
        L=letters[0], M=letters[1], N=letters[2], l=letters[0].lower(), t=t, u=u
    )
    row = {f"option{i + 1}": o for i, o in enumerate(opts)}
    return {"type": "选择", "answer": answer, **row}, text


def _tf(rng: random.Random) -> tuple[dict[str, Any], str]:
    return {"type": "判断", "answer": rng.choice(["对", "错"])}, rng.choice(TF)


def _fill(rng: random.Random) -> tuple[dict[str, Any], str]:
    a = rng.choice(FILL_GOLDS)
    b = rng.choice(FILL_GOLDS)
    text = rng.choice(FILL).format(a=a, b=b, n1=rng.randint(1, 999), n2=rng.randint(0, 999))
    return {"type": "填空", "answer": a}, text


def _case(rng: random.Random, n: int, categories: list[str]) -> tuple[list[dict], list[dict]]:
    data, output = [], []
    for i in range(n):
        make = rng.choice([_mc, _mc, _tf, _fill])
        row, response = make(rng)
        qid = 1000 + i
        data.append({"id": qid, "category": rng.choice(categories), **row})
        output.append({"id": qid, "type": row["type"], "response": response})
    rng.shuffle(output)  # the script scores in the response file's order
    return data, output


class _Recorder:
    """Forwards to the real ``random`` module, recording what each ``choice`` returned."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.draws: list[Any] = []

    def choice(self, seq: Any) -> Any:
        value = self.real.choice(seq)
        self.draws.append(value)
        return value

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def _run(root: Path, data: list[dict], output: list[dict]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        dpath, opath = Path(tmp) / "data.jsonl", Path(tmp) / "output.jsonl"
        dpath.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data))
        opath.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in output))
        printed = subprocess.run(
            [sys.executable, "eval/eval_script.py", "--output_path", str(opath),
             "--data_path", str(dpath)],
            cwd=root, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        # In process: a fresh import seeds the stream with 42, as the command did.
        sys.path.insert(0, str(root / "eval"))
        for name in ("utils.eval_utils", "utils", "eval_script"):
            sys.modules.pop(name, None)
        eval_utils = importlib.import_module("utils.eval_utils")
        script = importlib.import_module("eval_script")
        recorder = _Recorder(eval_utils.random)
        eval_utils.random = recorder
        scored: list[dict[str, Any]] = []
        original = script.evaluate_response

        def keep(entries: Any) -> Any:
            rows = list(entries)
            result = original(rows)
            scored.extend(rows)
            return result

        script.evaluate_response = keep
        items: dict[str, Any] = {}
        categories = []
        for category in CATEGORIES:
            start = len(scored)
            count = script.process_response_jsonl_file(str(dpath), str(opath), category)
            categories.append([category, count["correct_num"], count["entries_num"], count["acc"]])
            for r in scored[start:]:
                items[str(r["id"])] = {
                    "judge": r["judge"],
                    "predicted_answer": r.get("predicted_answer"),
                }
        stream = list(recorder.draws)
        # Which items drew: the same rows again, one at a time in the same order, on a fresh
        # import (the same stream), noting the draw each one made.
        draws: dict[str, Any] = {}
        for name in ("utils.eval_utils", "utils", "eval_script"):
            sys.modules.pop(name, None)
        eval_utils = importlib.import_module("utils.eval_utils")
        script = importlib.import_module("eval_script")
        recorder = _Recorder(eval_utils.random)
        eval_utils.random = recorder
        by_id = {r["id"]: r for r in data}
        for category in CATEGORIES:
            for out in output:
                d = by_id[out["id"]]
                if d["category"] != category:
                    continue
                entry = dict(out, answer=d["answer"])
                if d["type"] == "选择":
                    entry["index2ans"] = {
                        k: d.get(f"option{i}", "") for i, k in enumerate("ABCD", 1)
                    }
                n = len(recorder.draws)
                eval_utils.evaluate_response([entry])
                if len(recorder.draws) > n:
                    draws[str(out["id"])] = recorder.draws[n]
        sys.path.remove(str(root / "eval"))
    assert list(draws.values()) == stream, "the replay drew otherwise than the script"
    return {
        "items": items,
        "categories": categories,
        "draws": draws,
        "draw_order": list(draws),  # the keys of "draws" are written sorted
        "printed": printed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cmmmu", type=Path, required=True, help="a checkout of " + REPO)
    args = parser.parse_args()
    rng = random.Random(SEED)
    cases = []
    for name, n, cats in (("generated", 720, CATEGORIES), ("partial", 90, CATEGORIES[1:4])):
        data, output = _case(rng, n, cats)
        expected = _run(args.cmmmu, data, output)
        cases.append({"name": name, "data": data, "output": output, "expected": expected})
        print(f"{name}: {n} answers, {len(expected['draws'])} drawn\n{expected['printed']}")
    doc = {
        "reference": {
            "repo": REPO,
            "commit": COMMIT,
            "code": "eval/eval_script.py (process_response_jsonl_file, __main__), "
            "eval/utils/eval_utils.py (evaluate_response)",
            "generator": "tests/parity/generate/cmmmu.py",
        },
        "cases": cases,
    }
    raw = json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True).encode()
    with gzip.GzipFile(DATA / "cmmmu.json.gz", "wb", mtime=0) as f:
        f.write(raw)


if __name__ == "__main__":
    main()
