"""Write MMIU parity inputs: ``dataset.json``, ``answers.json`` and ``judge.json``.

``dataset.json`` holds 42 questions in the release's row layout (``all.parquet``'s fields:
task, visual_input_component, source, options, question, context, input_image_path as
``./RELATIONSHIP/TASK/TASK_N_K.png``, output) over six tasks in six relationships, two of them
asked question first (the inference scripts' ``tasks_exist``); each question carries a ``#tN``
tag. ``answers.json`` is the model's answer per tag (letters in several forms, option texts,
sentences, failure texts, punctuation only, no-break spaces, Chinese); ``judge.json`` the
scripted judge's reply per tag for the answers the letter rule cannot read (a letter, ``Z``, a
sentence, a padded lower-case letter, and ``!fail``: a failed call). No answer or reply is
empty: lmmprobe's backends take an empty completion as a failed call (``empty_response``).
Seeded, so every run writes the same bytes:

    python tests/data/benchmarks/mmiu_parity/make_inputs.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent

TASKS = [
    ("person_reid", "High-level-obj-semantic", 4),
    ("temporal_ordering", "Continuous-temporal", 3),
    ("jigsaw_puzzle_solving", "2D-spatial", 4),
    ("forensic_detection_blink", "Low-level-semantic", 4),
    ("threeD_Depth_Estimation", "3D-spatial", 2),
    ("visual_ordering", "Discrete-temporal", 3),
]
ANSWERS = [
    "A", "b", "(C)", "D.", " B ", "\u00a0A", "A: the first image", "The answer is B.", "(A).",
    "image none", "model error", "((", "n", "I think it is the second one", "C,", "答案是A",
    "Z", "a.", ".B)", "Option D", "c", "model error or image error", "image error", "B\n",
    "( d )", "The third image shows it.", "D", "e",
]  # fmt: skip
REPLIES = ["A", "B", "Z", "a", " c ", "The answer is A", "!fail", "D", "b", "C"]


def main() -> None:
    rng = random.Random(37)
    rows, answers, judge = [], {}, {}
    n = 0
    for task, relationship, n_options in TASKS:
        for q in range(7):
            letters = "ABCD"[:n_options]
            texts = [f"the {w} image" for w in ("first", "second", "third", "fourth")][:n_options]
            options = "\n".join(f"{m}: {t}" for m, t in zip(letters, texts, strict=True))
            tag = f"t{n}"
            question = f"Which image fits the {task.replace('_', ' ')} query #{tag}"
            context = (
                f"You are given {n_options} images for {task}.\n"
                f"Select from the following choices.\n{options}\n"
            )
            k = rng.randint(2, 4)
            paths = [f"./{relationship}/{task}/{task}_{q}_{i}.png" for i in range(k)]
            rows.append({
                "task": task, "visual_input_component": "natural image", "source": "parity",
                "options": options, "question": question, "context": context,
                "input_image_path": paths, "output": rng.choice(letters),
            })  # fmt: skip
            answers[tag] = ANSWERS[n % len(ANSWERS)]
            judge[tag] = REPLIES[n % len(REPLIES)]
            n += 1
    for name, value in (("dataset", rows), ("answers", answers), ("judge", judge)):
        text = json.dumps(value, indent=1, ensure_ascii=False) + "\n"
        (HERE / f"{name}.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
