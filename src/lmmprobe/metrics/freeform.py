"""lmmprobe's free-form score over a run's rows: mean embedding similarity with a bootstrap CI.

This is lmmprobe's own summary, not Dysca's figure (that is `dysca_caption_score`, below).

Free-form descriptions (``metadata.question_type == "free_form"``) are never right or wrong;
each is scored by `lmmprobe.metrics.embedding.freeform_scores` (cosine similarity of
all-MiniLM-L6-v2 embeddings × 100) against its reference, and the scores are averaged. An empty
answer scores 0 (it describes nothing) rather than whatever the embedding of "" happens to be;
failed requests are errors and left out. The interval resamples samples, like `summarize`.
In a run, each distinct (answer, reference) similarity is computed once and kept in the store
(`lmmprobe.metrics.answer_cache`): the ``--by`` groups and later re-runs read it back.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from lmmprobe.metrics.reduction import FREE_FORM
from lmmprobe.metrics.stability import mean_with_interval
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import Score

__all__ = [
    "FREE_FORM",
    "FreeFormRow",
    "dysca_caption_of",
    "dysca_caption_score",
    "freeform_rows",
    "freeform_summary",
    "freeform_summary_of",
]


Scorer = Callable[[Sequence[str], Sequence[str]], list[float]]


def freeform_rows(scores: Sequence[Score]) -> list[Score]:
    """The answered free-form rows of `scores` (errors left out)."""
    return [
        s
        for s in scores
        if s.metadata.get("question_type") == FREE_FORM
        and s.error_type is None
        and s.stage != "error"
    ]


@dataclass(frozen=True, slots=True)
class FreeFormRow:
    """What the free-form scores read of an answered free-form row (kept instead of its Score).

    Attributes:
        sample_id: The row's sample (the bootstrap's cluster).
        text: The answer's raw text (``""`` for none).
        reference: Its reference: the first of the gold references, else the gold text.

    """

    sample_id: str
    text: str
    reference: str

    @classmethod
    def of(cls, score: Score) -> FreeFormRow:
        """The record of `score`."""
        gold = score.gold
        reference = gold[0] if isinstance(gold, list) and gold else score.gold_text
        return cls(score.sample_id, score.prediction_text or "", reference)


def _similarities(rows: Sequence[FreeFormRow], scorer: Scorer | None) -> list[float]:
    if scorer is None:
        from lmmprobe.metrics.embedding import freeform_scores

        scorer = freeform_scores
    texts = [r.text.strip() for r in rows]
    refs = [r.reference for r in rows]
    asked = [i for i, t in enumerate(texts) if t]
    values = [0.0] * len(rows)
    for i, v in zip(
        asked, scorer([texts[i] for i in asked], [refs[i] for i in asked]), strict=True
    ):
        values[i] = v
    return values


def freeform_summary(
    scores: Sequence[Score],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    scorer: Scorer | None = None,
) -> MetricValue | None:
    """Mean free-form score (0-100 scale) with a 95% cluster-bootstrap interval.

    Args:
        scores: A model's rows (any mix; only free-form rows are used).
        n_boot: Bootstrap resamples (0: no interval).
        seed: Bootstrap seed.
        scorer: ``(predictions, references) -> scores``; defaults to Dysca's MiniLM similarity.

    Returns:
        None when there is no answered free-form row.

    """
    rows = [FreeFormRow.of(s) for s in freeform_rows(scores)]
    return freeform_summary_of(rows, n_boot=n_boot, seed=seed, scorer=scorer)


def freeform_summary_of(
    rows: Sequence[FreeFormRow],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    scorer: Scorer | None = None,
) -> MetricValue | None:
    """`freeform_summary` of the records of a model's answered free-form rows, in row order."""
    if not rows:
        return None
    values = _similarities(rows, scorer)
    per_sample: dict[str, list[float]] = defaultdict(list)
    for row, v in zip(rows, values, strict=True):
        per_sample[row.sample_id].append(v)
    means = np.array([float(np.mean(v)) for v in per_sample.values()])
    # Every sample with a free-form row has a mean: all are defined.
    return mean_with_interval(means, np.ones_like(means), len(rows), n_boot, seed)


def dysca_caption_score(rows: Sequence[Score]) -> float:
    """Dysca's caption score of free-form rows, as ``Dysca_compute.py`` computes it.

    Each answer (the raw text, empty or not) is compared with its reference by
    `lmmprobe.metrics.embedding.dysca_similarities` (cosine rounded to 2 decimals); the
    similarities are summed in row order and ``round(sum / n * 100, 2)`` is returned. Unlike
    `freeform_summary`, an empty answer is embedded and scored, and rows are not averaged per
    sample first (Dysca has one row per question).

    Args:
        rows: Free-form rows (see `freeform_rows`); at least one.

    Returns:
        The score on a 0-100 scale.

    Raises:
        ValueError: ``rows`` is empty.

    """
    return dysca_caption_of([FreeFormRow.of(s) for s in rows])


def dysca_caption_of(rows: Sequence[FreeFormRow]) -> float:
    """`dysca_caption_score` of the records of free-form rows, in row order.

    Raises:
        ValueError: ``rows`` is empty.

    """
    from lmmprobe.metrics.embedding import dysca_similarities

    if not rows:
        raise ValueError("Dysca's caption score needs at least one free-form row")
    answers = [r.text for r in rows]
    refs = [r.reference for r in rows]
    total = 0.0
    for value in dysca_similarities(answers, [str(r) for r in refs]):
        total += value
    return round(total / len(rows) * 100, 2)
