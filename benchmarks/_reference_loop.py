"""The least work an evaluation of multiple-choice questions must do, in plain Python.

For each question: build the prompt text (question, lettered options, instruction), ask an
instant model (it answers "A"), read the letter from the answer, count it towards accuracy
and write one JSON line for the sample to a file. No validation, no store, no statistics:
`benchmarks/overhead.py` divides lmmprobe's samples/s by this loop's, measured in the same
process, so the ratio says what lmmprobe's checks, store and reports cost on any machine.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
INSTRUCTION = "Answer with the option's letter from the given choices directly."

Question = tuple[str, str, Sequence[str], int]
"""(id, question, options, index of the right option)."""


def instant_model(prompt: str) -> str:
    """A model that answers at once, whatever it is asked."""
    return "A"


def reference_loop(questions: Sequence[Question], out: Path) -> tuple[float, float]:
    """Evaluate `questions` the minimal way, writing one JSON line per sample to `out`.

    Args:
        questions: The questions to ask.
        out: The file the per-sample lines go to (replaced).

    Returns:
        (accuracy, samples per second).

    """
    t0 = time.perf_counter()
    correct = 0
    with out.open("w", encoding="utf-8") as f:
        for sid, question, options, answer in questions:
            lines = [question]
            lines += [f"{LETTERS[i]}. {text}" for i, text in enumerate(options)]
            lines.append(INSTRUCTION)
            reply = instant_model("\n".join(lines))
            letter = reply.strip()[:1].upper()
            predicted = LETTERS.find(letter) if letter else -1
            hit = predicted == answer
            correct += hit
            f.write(
                json.dumps({"id": sid, "answer": reply, "prediction": predicted, "correct": hit})
            )
            f.write("\n")
    elapsed = time.perf_counter() - t0
    return correct / max(1, len(questions)), len(questions) / elapsed
