"""Run TempCompass's caption-matching scoring on generated replies; write its expected file.

TempCompass (llyx97/TempCompass @ ``TEMPCOMPASS``): ``eval_caption_matching.py``'s ``main`` run as written
with ``disable_llm=True`` (its mode without ChatGPT) on a predictions file of generated
caption-matching questions (Option 1/2, Sentence A/B, Caption A/B) (22 videos covering its 11 fine-grained aspects, each with its ``meta_info.json``
entry), from a folder holding that ``meta_info.json``; every rating and its printed accuracy
lines are recorded. Then ``main`` again with the judge on (``disable_llm=False``), its
``get_eval_result`` replaced by a recorder, so the exact prompt it would send about each reply
its rules cannot read is kept. The replies are made here from a seed: whole caption lines,
captions' texts, names and indices (with dots, in lower case), ``(A) text`` forms, both captions
at once, neither, ``</s>`` and blanks, and empty ones; written to
``expected_caption_matching.json``.

    python tests/data/benchmarks/video_parity/make_expected_caption_matching.py TEMPCOMPASS_CHECKOUT
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

STYLES = [("Option", "1", "2"), ("Sentence", "A", "B"), ("Caption", "A", "B")]
TEXTS = ["The man is running.", "The man is walking.", "A dog jumps: high.", "It turns left"]


def replies(rng: random.Random, lines: list[str]) -> list[str]:
    """Replies about one question whose caption lines are `lines`."""
    first, second = lines
    name, text = first.split(": ", 1)
    index = name.split()[1]
    return [
        first, second, text, second.split(": ", 1)[1], name, index, f"{index}.", f"{name}.",
        f"({index}) {text}", f"{index}) {text}", f"({index}) {text}.", name.lower(),
        index.lower(), f"{first}\n{second}", f"{text} {second.split(': ', 1)[1]}", "",
        "Neither", f"{first}</s>", f"</s> {index}", f"  {name}  ", f"The answer is {index}",
        f"{text.lower()}", f"{name}: {text}.", f"{index}..", f"{first}.", "A", "B", "1", "2",
        rng.choice(["A", "1", "B", "2"]) + rng.choice(["", ".", ")", " "]),
    ]  # fmt: skip


def main() -> None:
    checkout = Path(sys.argv[1])
    rng = random.Random(1503)
    videos = [(dim, fine) for dim, fines in FINE.items() for fine in fines] * 2
    meta, predictions, rows = {}, {}, []
    i = 0
    for q in range(12):
        style, one, two = STYLES[q % 3]
        texts = rng.sample(TEXTS, 2)
        lines = [f"{style} {one}: {texts[0]}", f"{style} {two}: {texts[1]}"]
        answer = rng.choice(lines)
        for reply in replies(rng, lines):
            vid_index = i % len(videos)
            dim, fine = videos[vid_index]
            vid = f"8{vid_index:03d}" + ("_reverse" if vid_index % 3 == 0 else "")
            meta[vid] = {
                "eval_dim": {
                    d: ({"type": fine} if d == dim and d != "order" else None) for d in FINE
                }
            }
            question = f"Which caption matches clip {i}?\n" + "\n".join(lines)
            pred = {"question": question, "answer": answer, "prediction": reply}
            predictions.setdefault(vid, {}).setdefault(dim, []).append(pred)
            rows.append({"video": vid, "dimension": dim, "question": question,
                         "answer": answer, "reply": reply})  # fmt: skip
            i += 1
    sys.path.insert(0, str(checkout))
    spec = importlib.util.spec_from_file_location(
        "tc_caption", checkout / "eval_caption_matching.py"
    )
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
    (HERE / "expected_caption_matching.json").write_text(
        json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
