"""lmmprobe's free-form score over a run's rows: mean embedding similarity with a bootstrap CI.

This is lmmprobe's own summary, not Dysca's figure (that is `dysca_caption_score`, below).

Free-form descriptions (``metadata.question_type == "free_form"``) are never right or wrong;
each is scored by `lmmprobe.metrics.embedding.freeform_scores` (cosine similarity of
all-MiniLM-L6-v2 embeddings × 100) against its reference, and the scores are averaged. An empty
answer scores 0 (it describes nothing) rather than whatever the embedding of "" happens to be;
failed requests are errors and left out. The interval resamples samples, like `summarize`.
In a run, each distinct (answer, reference) similarity is computed once and kept in the store
(`lmmprobe.metrics.answer_cache`): the ``--by`` groups and later re-runs read it back.

A pass over stored rows settles the records (`settle_free_form`) 16,384 at a time (`SETTLE_EVERY`):
each `FreeFormRow` becomes a `ScoredFreeForm` holding its similarities instead of its texts,
so the memory a run's free-form rows take does not grow with their texts. Both figures read
either form. lmmprobe's score embeds a batch's texts together, padded to the longest, so
its value can differ from an embedding of all answers at once in the last float32 bits (a
relative 1e-6); Dysca's embeds each text on its own and is exact whatever the batches.
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
    "FreeFormRecord",
    "FreeFormRow",
    "ScoredFreeForm",
    "any_text",
    "dysca_caption_from",
    "dysca_caption_of",
    "dysca_caption_score",
    "dysca_similarities_of",
    "freeform_rows",
    "freeform_summary",
    "freeform_summary_of",
    "settle_free_form",
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


@dataclass(frozen=True, slots=True)
class ScoredFreeForm:
    """A `FreeFormRow` once scored (`settle_free_form`): its numbers, not its texts.

    Attributes:
        sample_id: The row's sample (the bootstrap's cluster).
        score: lmmprobe's free-form score (0 for an empty answer).
        has_text: The answer has text other than whitespace.
        caption: Dysca's similarity of the raw answer (`dysca_similarities`); None where it
            was not computed (a batch of empty answers before the embedding model was
            loaded), `row` then kept to compute it should Dysca's figure be asked for.
        row: The unscored record where `caption` is None, else None.

    """

    sample_id: str
    score: float
    has_text: bool
    caption: float | None
    row: FreeFormRow | None


FreeFormRecord = FreeFormRow | ScoredFreeForm
"""A free-form row's record, before or after `settle_free_form`."""


def settle_free_form(
    rows: Sequence[FreeFormRecord], *, caption: bool | None = None, scorer: Scorer | None = None
) -> list[FreeFormRecord]:
    """The records of `rows` with their similarities computed and their texts dropped.

    Args:
        rows: Records in row order (already settled ones are kept as they are).
        caption: Compute Dysca's similarity too: True always; False never (``caption`` left
            None); None (default) where some answer has text or the embedding model is loaded
            already, so that a batch of empty answers (a baseline's) loads no model.
        scorer: lmmprobe's scorer (`freeform_summary`'s); defaults to MiniLM similarity.

    Returns:
        One record per row, in order.

    Raises:
        ImportError: Some answer has text and the embedding model is not installed.

    """
    todo = [i for i, r in enumerate(rows) if isinstance(r, FreeFormRow)]
    if not todo:
        return list(rows)
    fresh = [r for r in rows if isinstance(r, FreeFormRow)]
    has_text = [bool(r.text.strip()) for r in fresh]
    scores = _similarities(fresh, scorer)
    if caption is None:
        caption = any(has_text) or _embedder_loaded()
    captions: list[float | None] = [None] * len(fresh)
    if caption:
        captions = list(dysca_similarities_of(fresh))
    out = list(rows)
    for i, row, score, text, cap in zip(todo, fresh, scores, has_text, captions, strict=True):
        out[i] = ScoredFreeForm(row.sample_id, score, text, cap, row if cap is None else None)
    return out


def _embedder_loaded() -> bool:
    import sys

    # Not imported means not loaded: asking would import the embedding module for nothing.
    module = sys.modules.get("lmmprobe.metrics.embedding")
    return module is not None and bool(module.embedder_loaded())


def dysca_similarities_of(rows: Sequence[FreeFormRow]) -> list[float]:
    """Dysca's similarity of each row's raw answer to its reference (`dysca_similarities`).

    Raises:
        ImportError: The embedding model is not installed.

    """
    from lmmprobe.metrics.embedding import dysca_similarities

    return dysca_similarities([r.text for r in rows], [str(r.reference) for r in rows])


def _has_text(record: FreeFormRecord) -> bool:
    if isinstance(record, ScoredFreeForm):
        return record.has_text
    return bool(record.text.strip())


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
    rows: Sequence[FreeFormRecord],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    scorer: Scorer | None = None,
) -> MetricValue | None:
    """`freeform_summary` of the records of a model's answered free-form rows, in row order.

    The records may be settled (`settle_free_form`) or not, or a mix.
    """
    if not rows:
        return None
    values = _scores_of(rows, scorer)
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


def dysca_caption_of(rows: Sequence[FreeFormRecord]) -> float:
    """`dysca_caption_score` of the records of free-form rows, in row order.

    The records may be settled (`settle_free_form`) or not, or a mix.

    Raises:
        ValueError: ``rows`` is empty.

    """
    if not rows:
        raise ValueError("Dysca's caption score needs at least one free-form row")
    return dysca_caption_from(_captions_of(rows))


def dysca_caption_from(similarities: Sequence[float]) -> float:
    """Dysca's caption score from its per-row similarities (`dysca_similarities`), in row order.

    Summed one by one in row order, then ``round(sum / n * 100, 2)``, as ``Dysca_compute.py``.

    Raises:
        ValueError: ``similarities`` is empty.

    """
    if not similarities:
        raise ValueError("Dysca's caption score needs at least one free-form row")
    total = 0.0
    for value in similarities:
        total += value
    return round(total / len(similarities) * 100, 2)


def _scores_of(rows: Sequence[FreeFormRecord], scorer: Scorer | None) -> list[float]:
    """The lmmprobe score of each record: a settled one's, the others' computed together."""
    values = [r.score if isinstance(r, ScoredFreeForm) else 0.0 for r in rows]
    fresh = [i for i, r in enumerate(rows) if isinstance(r, FreeFormRow)]
    computed = _similarities([_raw(rows[i]) for i in fresh], scorer) if fresh else []
    for i, v in zip(fresh, computed, strict=True):
        values[i] = v
    return values


def _captions_of(rows: Sequence[FreeFormRecord]) -> list[float]:
    """Dysca's similarity of each record: a settled one's, the others' computed together."""
    values: list[float] = [0.0] * len(rows)
    todo: list[int] = []
    for i, r in enumerate(rows):
        if isinstance(r, ScoredFreeForm) and r.caption is not None:
            values[i] = r.caption
        else:
            todo.append(i)
    if todo:
        for i, v in zip(todo, dysca_similarities_of([_raw(rows[i]) for i in todo]), strict=True):
            values[i] = v
    return values


def _raw(record: FreeFormRecord) -> FreeFormRow:
    """The unscored record (a settled record without a caption keeps it)."""
    if isinstance(record, FreeFormRow):
        return record
    if record.row is None:
        raise ValueError("a settled free-form record with its caption has no texts left")
    return record.row


def any_text(rows: Sequence[FreeFormRecord]) -> bool:
    """Whether some record's answer has text other than whitespace."""
    return any(_has_text(r) for r in rows)
