"""Dysca's post-processing of generated questions: random deletion and per-subtask caps.

Origin: Dysca (Zhang et al., 2024), ``pqa_generate/pqa_postprocess.py`` at commit
442ef7565029ca62756bea79138b63c038cfb7e4 of github.com/Benchmark-Dysca/Dysca (the step between
``pqa_generate.py`` and image generation in its README). Reproduced exactly, draws and quirks
included, with a local ``random.Random(seed)`` (Dysca seeds the global one with 2024):

1. Per source file (one per group), per item: ``randint(1, 4)``; on 1 or 2 that many questions
   are popped at random, on 3 or 4 the item is removed *while the list is being iterated*, so
   the item after it is skipped (draws nothing). This pass only consumes draws: Dysca then reads
   the files again and the deletions are lost.
2. Per item, per ``question_majority`` in first-appearance order: one question is dropped with
   probability 2/3; of two, one is popped; of three or more, one or two are popped (``randint(1,
   4) == 1``: one). Kept questions are regrouped by majority in that order.
3. Questions are numbered; ``style``, ``background`` and ``color`` questions are moved to the end
   and each capped at 13,000 by ``random.sample`` (a no-op, drawing nothing, below 13,000).

Dysca lists its files with ``os.walk`` (the filesystem's order); here the groups come in the
order given (the recipe's: `lmmprobe.synth.dysca_pqa.GROUPS`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

__all__ = ["CAP", "CAPPED", "DYSCA_HINT", "dysca_instruction", "postprocess", "select_questions"]

CAPPED: tuple[str, ...] = ("style", "background", "color")
"""The subtasks Dysca caps (its coarse ones)."""

CAP = 13000
"""Questions kept per capped subtask."""

DYSCA_HINT = (
    "Hint: Please answer the question and provide the correct option letter, e.g., (A), (B), "
    "(C), (D), at the end. Do not contain the analysis progress.\nYour answer is:"
)


def _first_pass(rng: random.Random, files: Sequence[Sequence[int]]) -> None:
    # `files` holds each item's number of questions; only the draws matter (module docstring).
    for lengths in files:
        items = list(range(len(lengths)))
        sizes = list(lengths)
        for item in items:  # removing while iterating skips the next item, as Dysca's loop does
            n = rng.randint(1, 4)
            if n >= 3:
                items.remove(item)
            else:
                for _ in range(n):
                    rng.randint(0, sizes[item] - 1)
                    sizes[item] -= 1


def _second_pass(rng: random.Random, majorities: Sequence[str]) -> list[int]:
    order: dict[str, list[int]] = {}
    for k, m in enumerate(majorities):
        order.setdefault(m, []).append(k)
    kept: list[int] = []
    for ks in order.values():
        ks = list(ks)
        if len(ks) == 1:
            if rng.random() < 2 / 3:
                continue
        elif len(ks) == 2:
            ks.pop(rng.randint(0, 1))
        elif rng.randint(1, 4) == 1:
            ks.pop(rng.randint(0, 2))
        else:
            ks.pop(rng.randint(0, 2))
            ks.pop(rng.randint(0, 1))
        kept.extend(ks)
    return kept


def _select(
    files: Sequence[Sequence[Sequence[str]]], seed: int
) -> tuple[list[list[list[int]]], dict[str, list[tuple[int, int, int]]]]:
    rng = random.Random(seed)
    _first_pass(rng, [[len(item) for item in items] for items in files])
    kept = [[_second_pass(rng, item) for item in items] for items in files]
    pools: dict[str, list[tuple[int, int, int]]] = {m: [] for m in CAPPED}
    for f, items in enumerate(kept):
        for i, ks in enumerate(items):
            for k in ks:
                m = files[f][i][k]
                if m in pools:
                    pools[m].append((f, i, k))
    for m in CAPPED:
        if len(pools[m]) >= CAP:  # random.sample raises (and draws nothing) below; Dysca passes
            pools[m] = rng.sample(pools[m], CAP)
    chosen = {q for qs in pools.values() for q in qs}
    for f, items in enumerate(kept):
        for i, ks in enumerate(items):
            ks[:] = [k for k in ks if files[f][i][k] not in pools or (f, i, k) in chosen]
    return kept, pools


def select_questions(
    files: Sequence[Sequence[Sequence[str]]], seed: int = 2024
) -> list[list[list[int]]]:
    """Which questions Dysca's post-processing keeps, and in which order.

    Args:
        files: Per source file (group), per item, its questions' ``question_majority`` in order.
        seed: Seed of the stream (Dysca's is 2024).

    Returns:
        Per file, per item, the indices of the kept questions in Dysca's output order within
        the item. Capped subtasks (`CAPPED`) above `CAP` questions lose the ones Dysca's
        ``random.sample`` leaves out; Dysca's move of those questions to the end of its file is
        `postprocess`'s to reproduce.

    """
    return _select(files, seed)[0]


def dysca_instruction(question: str, question_type: str, options: Sequence[str]) -> str:
    r"""The ``instruction`` Dysca's ``pqa_postprocess.py`` writes (at the pinned commit).

    Multiple choice: ``Question: {q} \n`` (a space before the newline) and the options with
    no ``Choices:`` line; true/false: ``Question: {q}\nChoices:\n(A) True\n(B) False\n`` and
    the hint; image caption: ``{q}\nYour answer is:``.
    """
    if question_type == "multi choice":
        lines = "".join(f"({chr(65 + i)}) {o}\n" for i, o in enumerate(options))
        return f"Question: {question} \n{lines}{DYSCA_HINT}"
    if question_type == "true or false":
        return f"Question: {question}\nChoices:\n(A) True\n(B) False\n{DYSCA_HINT}"
    return f"{question}\nYour answer is:"


def postprocess(
    files: Sequence[Sequence[dict[str, Any]]], seed: int = 2024
) -> list[dict[str, Any]]:
    """Dysca's ``Dysca.json`` from ``pqa_generate.py``'s files, as its script writes it.

    Args:
        files: Per source file, its items (``prompt``, ``negative_prompt``, ``q_a``).
        seed: Seed of the stream (Dysca's is 2024).

    Returns:
        The question records, numbered from 1, in Dysca's order and with its keys.

    """
    majorities = [
        [[qa["question_majority"] for qa in it["q_a"]] for it in items] for items in files
    ]
    kept, pools = _select(majorities, seed)
    items = [(it, ks) for f, its in enumerate(files) for it, ks in zip(its, kept[f], strict=True)]
    head: list[dict[str, Any]] = []
    tail: dict[tuple[int, int, int], dict[str, Any]] = {}
    numbered = [(f, i) for f, its in enumerate(files) for i in range(len(its))]
    for number, ((item, ks), (f, i)) in enumerate(zip(items, numbered, strict=True), start=1):
        for k in ks:
            qa = item["q_a"][k]
            record = {
                "id": 0,
                "images": [f"images/{number}.png"],
                "prompt": item["prompt"],
                "negative_prompt": item["negative_prompt"],
                "instruction": dysca_instruction(
                    qa["question"], qa["question_type"], qa["options"]
                ),
                "question": qa["question"],
                "answer": qa["answer"],
                "question_type": qa["question_type"],
                "task": qa["task"],
                "options": qa["options"],
                "question_majority": qa["question_majority"],
                "granularity": "coarse" if qa["question_majority"] in CAPPED else "fine",
            }
            if qa["question_majority"] in CAPPED:
                tail[(f, i, k)] = record
            else:
                head.append(record)
    # Capped subtasks go last, each in its pool's order (random.sample's, when it sampled).
    out = head + [tail[q] for m in CAPPED for q in pools[m]]
    for i, record in enumerate(out, start=1):
        record["id"] = i
    return out
