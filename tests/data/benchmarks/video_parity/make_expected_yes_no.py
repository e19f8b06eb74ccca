"""Run TempCompass's yes/no scoring on generated replies; write ``expected_yes_no.json``.

TempCompass (llyx97/TempCompass @ ``TEMPCOMPASS``): ``eval_yes_no.py``'s ``main`` run as written
with ``disable_llm=True`` (its mode without ChatGPT) on a predictions file of generated yes/no
questions (22 videos covering its 11 fine-grained aspects, each with its ``meta_info.json``
entry), from a folder holding that ``meta_info.json``; every rating and its printed accuracy
lines are recorded. Then ``main`` again with the judge on (``disable_llm=False``), its
``get_eval_result`` replaced by a recorder, so the exact prompt it would send about each reply
its rules cannot read is kept. The replies are made here from a seed: yes and no in any case, with
punctuation, ``</s>``, leading blanks, words that start "no" (nope, none, not, nothing),
sentences that say yes or no later, and empty ones.

    python tests/data/benchmarks/video_parity/make_expected_yes_no.py TEMPCOMPASS_CHECKOUT
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import random
import sys
import tempfile
from pathlib import Path

from make_expected import FINE, TEMPCOMPASS  # type: ignore[import-not-found]

HERE = Path(__file__).parent

FIXED = ["yes", "no", "Yes", "No.", "YES, it is", "NO", " yes ", "no</s>", "Yes</s>", "</s>yes",
         "nope", "None of them", "not really", "nothing", "Nobody knows", "yesterday",
         "The answer is yes", "I think no", "", "   ", "\nyes", "y", "n", "Yes\nNo",
         "(yes)", "'no'", "Noo", "yes-no", "No, yes", "Absolutely yes"]  # fmt: skip
WORDS = ["yes", "no", "Yes", "No", "YES", "maybe", "the", "man", "is", "not", "dunking"]


def replies(rng: random.Random) -> list[str]:
    out = list(FIXED)
    for _ in range(90):
        words = rng.choices(WORDS, k=rng.choice([1, 2, 5]))
        text = " ".join(words) + rng.choice(["", ".", "!", "</s>", ",", " </s>"])
        out.append(rng.choice(["", " ", "\n"]) + text)
    return out


def main() -> None:
    checkout = Path(sys.argv[1])
    rng = random.Random(2453)
    videos = [(dim, fine) for dim, fines in FINE.items() for fine in fines] * 2
    meta, predictions, rows = {}, {}, []
    for i, reply in enumerate(replies(rng)):
        vid_index = i % len(videos)
        dim, fine = videos[vid_index]
        vid = f"8{vid_index:03d}" + ("_reverse" if vid_index % 3 == 0 else "")
        meta[vid] = {
            "eval_dim": {d: ({"type": fine} if d == dim and d != "order" else None) for d in FINE}
        }
        question = f"Is the object in clip {i} moving?"
        answer = rng.choice(["yes", "no"])
        pred = {"question": question, "answer": answer, "prediction": reply}
        predictions.setdefault(vid, {}).setdefault(dim, []).append(pred)
        rows.append(
            {"video": vid, "dimension": dim, "question": question, "answer": answer, "reply": reply}
        )
    sys.path.insert(0, str(checkout))
    spec = importlib.util.spec_from_file_location("tc_yes_no", checkout / "eval_yes_no.py")
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
    for vid, dims in results.items():  # ratings back onto the rows, in order
        for dim, rated in dims.items():
            mine = [r for r in rows if r["video"] == vid and r["dimension"] == dim]
            for row, result in zip(mine, rated, strict=True):
                row["rating"] = result["rating"]
                row["match_success"] = result["match_success"]
    out = {
        "tempcompass_commit": TEMPCOMPASS,
        "meta_info": meta,
        "rows": rows,
        "printed": printed.getvalue().splitlines(),
        "judge_prompts": sent,
    }
    (HERE / "expected_yes_no.json").write_text(
        json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
