"""Write Mantis-Eval parity inputs: questions in Mantis's local-JSON layout and the answers.

``dataset.json`` is what TIGER-AI-Lab/Mantis ``mantis/benchmark/eval.py`` reads when given a
file path (a list of rows: id, question_type, question with ``<image>`` marks, images as paths
beside it, options, answer, category, data_source); ``images/`` holds the PNGs;
``answers.json`` the model's answer to each id (letters, ``(B)``, ``Answer: C``, ``Final
Answer: ...``, option texts, short answers in several cases, refusals, Chinese, a first letter outside A-Z), drawn
with a fixed seed. The test writes the same rows as the Hub's parquet layout.

    python tests/data/benchmarks/mantis_parity/make_inputs.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from PIL import Image

HERE = Path(__file__).parent
CATEGORIES = ["Co-reference", "Comparison", "Reasoning", "Temporal understanding"]
WORDS = ["red", "blue", "a cat", "two dogs", "the left one", "3", "yes", "a tree"]


def _answer(rng: random.Random, qtype: str, options: list[str], gold: str) -> str:
    if qtype == "short-answer":
        pick = gold if rng.random() < 0.7 else rng.choice(WORDS)
        forms = [pick, pick.upper(), f"Final Answer: {pick}", f"The answer is {pick}",
                 f"I think so.\nFinal Answer: {pick}", f"answer: {pick}.", "No idea", ""]  # fmt: skip
        return rng.choice(forms)
    letters = [chr(ord("A") + i) for i in range(len(options))]
    pick = gold if rng.random() < 0.7 else rng.choice(letters)
    text = options[letters.index(pick)]
    bare = text.split(" ", 1)[1] if text[:2] in {f"{c}." for c in letters} else text
    forms = [pick, pick.lower(), f"({pick})", f"Answer: {pick}", f"The answer is {pick}.",
             bare, text, f"Final Answer: ({pick}) {bare}", "Cannot tell.", "答案是" + pick,
             "étrange: " + pick, "", "E", "Zebra", f"{pick}) {bare}"]  # fmt: skip
    return rng.choice(forms)


def main(n: int = 48, seed: int = 7000) -> None:
    rng = random.Random(seed)
    (HERE / "images").mkdir(exist_ok=True)
    rows, answers = [], {}
    for q in range(1, n + 1):
        qtype = "short-answer" if q % 4 == 0 else "multi-choice"
        n_images = rng.randint(2, 4)
        paths = []
        for k in range(n_images):
            path = f"images/{q}_{k}.png"
            color = tuple(rng.randrange(256) for _ in range(3))
            Image.new("RGB", (8, 8), color).save(HERE / path)
            paths.append(path)
        marks = rng.choice(["lead", "inline", "none"])
        body = f"Which image differs from the others? #m{q}"
        if marks == "lead":
            question = "<image>" * n_images + body
        elif marks == "inline":
            question = "Image 1: <image>\n" + " ".join(["<image>"] * (n_images - 1)) + "\n" + body
        else:
            question = body
        options: list[str] = []
        if qtype == "multi-choice":
            texts = rng.sample(WORDS, rng.choice([2, 3, 4]))
            lettered = rng.random() < 0.3  # some options carry their letter already
            options = [f"{chr(65 + i)}. {t}" if lettered else t for i, t in enumerate(texts)]
            letter = chr(65 + rng.randrange(len(options)))
            answer = f"({letter})" if rng.random() < 0.5 else letter
            gold_for_answer = letter
        else:
            answer = rng.choice(WORDS)
            gold_for_answer = answer
        rows.append({"id": f"mantis_{q}", "question_type": qtype, "question": question,
                     "images": paths, "options": options, "answer": answer,
                     "category": rng.choice(CATEGORIES), "data_source": "parity"})  # fmt: skip
        answers[f"m{q}"] = _answer(rng, qtype, options, gold_for_answer)
    (HERE / "dataset.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    (HERE / "answers.json").write_text(
        json.dumps(answers, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
