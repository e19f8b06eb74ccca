"""Official scores computed from judges' verdicts: MM-Vet, LLaVA-Bench, MMBench's judged letters.

Pure functions over the verdicts (`lmmprobe.schema.Judgement` values and readings) that the
official judge protocols (`lmmprobe.judge.protocols`) read; the run metrics in
`lmmprobe.metrics.builtin.benchmark_judged` apply them to score rows. Each reproduces its
reference's arithmetic, rounding included where the reference rounds before dividing.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import numpy as np

__all__ = [
    "llava_relative",
    "mmbench_letter_correct",
    "mmvet_capability_scores",
]


def mmvet_capability_scores(
    rows: Sequence[tuple[Sequence[str], Sequence[float | None]]], runs: int
) -> dict[str, float]:
    """MM-Vet's scores per capability and in total, in points (yuweihao/MM-Vet @ acde843).

    ``export_result``: per run, the sum of the grades of the questions needing a capability
    over their count x 100; the score is the mean over runs (the reference then rounds it to
    ``--decimal_places``, 1). ``total`` is over every question.

    Args:
        rows: Per question, its capabilities and its grade in each run (None where the judge
            left it unjudged: left out of that run's sum and count).
        runs: The number of runs (the protocol's repeats).

    Returns:
        Capability (and ``total``) to score in [0, 100], unrounded; a capability with no
        graded question in some run is left out.

    """
    sums: dict[str, list[float]] = {}
    counts: dict[str, list[int]] = {}
    for caps, grades in rows:
        for run in range(runs):
            grade = grades[run] if run < len(grades) else None
            if grade is None:
                continue
            for cap in [*dict.fromkeys(caps), "total"]:
                sums.setdefault(cap, [0.0] * runs)[run] += grade
                counts.setdefault(cap, [0] * runs)[run] += 1
    scores: dict[str, float] = {}
    for cap, total in sums.items():
        if any(c == 0 for c in counts[cap]):
            continue
        scores[cap] = float(np.mean(np.array(total) / np.array(counts[cap]) * 100))
    return scores


def llava_relative(pairs: Sequence[tuple[float, float]]) -> tuple[float, float, float] | None:
    """LLaVA-Bench's relative score of reviewed answers (haotian-liu/LLaVA @ c121f04).

    ``summarize_gpt_review.py``: the mean of the (reference, model) score pairs, each mean
    rounded to 3 decimals, then round(model / reference x 100, 1), round(reference x 10, 1) and
    round(model x 10, 1).

    Args:
        pairs: (reference answer's score, model answer's score) per reviewed answer.

    Returns:
        (relative score, reference mean x 10, model mean x 10); None without pairs, or where
        the reference mean rounds to 0 (unread reviews' -1 pairs can bring it there; the
        reference script divides by zero).

    """
    if not pairs:
        return None
    ref, model = (round(x, 3) for x in np.asarray(pairs, dtype=float).mean(0).tolist())
    if ref == 0:
        return None
    return round(model / ref * 100, 1), round(ref * 10, 1), round(model * 10, 1)


def mmbench_letter_correct(letter: str, order: Sequence[int] | None, gold: int | list[str]) -> bool:
    """Whether the shown option `letter` is the gold option (``Z``, no option, is wrong).

    Args:
        letter: The option letter read (by VLMEvalKit's rules or a judge).
        order: ``order[i]`` is the original index of the option shown at position i (None:
            shown in the original order).
        gold: The gold option index.

    """
    if len(letter) != 1 or letter not in string.ascii_uppercase:
        return False
    shown = string.ascii_uppercase.index(letter)
    if order is not None:
        if shown >= len(order):
            return False
        shown = order[shown]
    return isinstance(gold, int) and shown == gold
