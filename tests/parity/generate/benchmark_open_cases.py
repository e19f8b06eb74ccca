"""Seeded inputs shared by the benchmark_open_* parity generators (answers and predictions).

Short answers as annotators and models write them: number words and digits, numbers with
commas and periods, articles, contractions with and without apostrophes, possessives, marks
that touch or do not touch spaces, line breaks and tabs, case changes, percentages and units.
"""

from __future__ import annotations

import json
import random
from typing import Any

ANSWERS = [
    "2", "two", "Two", "10", "ten", "none", "0", "zero", "1,000", "1000", "1 000", "3.5",
    "3.50", "$5", "5 dollars", "50%", "50 %", "10:30", "10.30", "yes", "Yes", "YES", "no",
    "No.", "yes!", "the dog", "a dog", "dog", "dogs", "an apple", "apple", "red", "Red.",
    "red and white", "red, white", "white/red", "left", "on the left", "left side", "dont know",
    "don't know", "cant tell", "can't tell", "its", "it's", "man's", "mans", "t-shirt",
    "t shirt", "tshirt", "e-mail", "email", "mr. smith", "Mr Smith", "u.s.a.", "usa", "(a) b",
    "a b", "n/a", "unanswerable", "Unanswerable", "unsuitable", "stop", "STOP", "stop sign",
    "\"stop\"", "#1", "no. 1", "number 1", "1st", "first", "12.5%", "0.125", "-3", "- 3",
    "x-ray", "@home", "a+b", "c++", "3/4", "3 / 4", "well done", "well-done", "what's up",
    "whats up", "they're", "theyre", "ma'am", "maam", "o'clock", "oclock", "yall", "y'all",
    "café", "naïve", "coca cola", "Coca-Cola", "coca-cola", "hello world", "hello, world",
    "1,5", "1.5", "5.", ".5", "a.b.c.d", "...", "?", "", " ", "the", "a",
]  # fmt: skip

SUFFIXES = ["", "", "", ".", "!", "?", " .", ",", "'s", " 's", "\n", "\t", "  ", " ?"]
PREFIXES = ["", "", "", " ", "the ", "a ", "an ", "\n", "The answer is ", "("]


def vary(rng: random.Random, text: str) -> str:
    """A model's or another annotator's way of writing `text`."""
    kind = rng.randrange(7)
    if kind == 0:
        return text
    if kind == 1:
        return rng.choice([text.upper(), text.lower(), text.title(), text.capitalize()])
    if kind == 2:
        return rng.choice(PREFIXES) + text + rng.choice(SUFFIXES)
    if kind == 3:
        return text.replace(" ", rng.choice([" ", "  ", "\n", "\t", "-", ", "]))
    if kind == 4:
        return text.replace("'", "") if "'" in text else text + rng.choice(["'", "'s"])
    if kind == 5:
        swaps = {"2": "two", "two": "2", "10": "ten", "ten": "10", "0": "none", "none": "zero"}
        return " ".join(swaps.get(w, w) for w in text.split(" "))
    return rng.choice(ANSWERS)


def annotators(rng: random.Random, n: int = 10) -> list[str]:
    """`n` annotators' answers: unanimous, near-unanimous with variants, or scattered."""
    base = rng.choice(ANSWERS)
    kind = rng.randrange(5)
    if kind == 0:
        return [base] * n
    if kind == 1:
        return [base if rng.random() < 0.7 else vary(rng, base) for _ in range(n)]
    if kind == 2:
        return [vary(rng, base) for _ in range(n)]
    if kind == 3:
        pool = [base, vary(rng, base), rng.choice(ANSWERS)]
        return [rng.choice(pool) for _ in range(n)]
    return [rng.choice(ANSWERS) for _ in range(n)]


def prediction(rng: random.Random, answers: list[str]) -> str:
    """A prediction close to (or far from) the annotators' answers."""
    kind = rng.randrange(6)
    if kind == 0:
        return rng.choice(answers)
    if kind in (1, 2, 3):
        return vary(rng, rng.choice(answers))
    if kind == 4:
        return vary(rng, vary(rng, rng.choice(answers)))
    return rng.choice(ANSWERS)


def dump(payload: dict[str, Any]) -> str:
    """The parity file's text: its header, then one case per line (readable diffs)."""
    head = {k: v for k, v in payload.items() if k != "cases"}
    body = ",\n".join(json.dumps(c, ensure_ascii=False) for c in payload["cases"])
    return json.dumps(head, ensure_ascii=False)[:-1] + ', "cases": [\n' + body + "\n]}\n"
