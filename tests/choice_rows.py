"""The single-choice rows and fake-model answers the judge CLI tests share."""

from __future__ import annotations

import json
from pathlib import Path

CHOICE_ASK = "Say which option the answer chose"
"""A line of lmmprobe-choice's judge prompt: a fake server's reply table keys its judge on it."""


def choice_rows(path: Path, n: int = 4) -> Path:
    """Write `n` rows ``q0``… ("Which animal is itemI?", cat or dog, cat right) to `path`."""
    rows = [
        {"id": f"q{i}", "images": [], "question": f"Which animal is item{i}?",
         "choices": ["cat", "dog"], "answer": 0}
        for i in range(n)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def unsure_answers(n: int) -> list[tuple[str, str]]:
    """A fake model's answers to `choice_rows`, none naming an option (the rules cannot read
    them, so each goes to the judge)."""
    return [(f"Which animal is item{i}?", f"unsure about item{i}") for i in range(n)]
