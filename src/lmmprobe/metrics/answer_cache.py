"""Per-answer scores computed once: kept in a store between runs, shared within a scope.

Some scores depend only on the answer text, its reference and the scoring definition (the
embedding similarity of a free-form description, say), and some cost seconds to compute (an
embedding model must load and run). `cached_pair_scores` computes each distinct (answer,
reference) pair of such a score once: inside a `scoring_scope` opened with a store (the runner
opens one over its SQLite store), values are read from and written to it, keyed by what
changes them (the metric's name and version, the scoring model's identity, the answer and the
reference), so a re-run of the same answers loads no model at all. A scope also shares values
between the run's figures and its ``--by`` groups, and shows a labelled progress bar while
anything is computed. Without a scope every call computes, as a plain function would.

The store is a protocol here, since metrics sit above the store layer and never import it;
`lmmprobe.store.answer_scores.AnswerScores` is the SQLite one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "AnswerScoreStore",
    "PairScorer",
    "ScoringProgress",
    "cached_pair_scores",
    "pair_key",
    "scoring_scope",
]

CHUNK = 64
"""Pairs computed (and written to the store) at a time inside a scope: the progress step."""

KNOWN_CAP = 65_536
"""Values of one score a scope with a store keeps in memory: past this, it lets them go (the
store holds every one, to be read back), so a run of millions of answers stays in flat memory.
A scope without a store keeps them all: nothing else would."""


class AnswerScoreStore(Protocol):
    """Where per-answer scores are kept between runs (the SQLite store's ``answer_scores``)."""

    def get_answer_scores(
        self, metric: str, version: int, scorer: str, keys: Sequence[str]
    ) -> dict[str, float]:
        """The stored values of `keys` (`pair_key` s) for one scoring definition; missing left out."""
        ...

    def put_answer_scores(
        self, metric: str, version: int, scorer: str, values: Mapping[str, float]
    ) -> None:
        """Keep `values` (by `pair_key`) for one scoring definition, replacing older ones."""
        ...


class ScoringProgress(Protocol):
    """A progress bar (the runner's `ProgressSink` fits): one task per computed score."""

    def start(self, model: str, total: int, cached: int) -> None:
        """A labelled task of `total` answers begins, `cached` of them already known."""
        ...

    def advance(self, done: int, errors: int) -> None:
        """`done` more answers were scored (`errors` is always 0 here)."""
        ...

    def finish(self) -> None:
        """The task is done."""
        ...


@dataclass(frozen=True)
class PairScorer:
    """The identity of a per-answer score: what a stored value is keyed by, with the pair.

    Attributes:
        metric: Name of the per-answer value (e.g. ``"freeform_similarity"``).
        version: Bumped whenever the definition changes; values of other versions are never
            read.
        scorer: Identity of the model computing it (e.g. a checkpoint fingerprint); a
            callable, so that it is only worked out inside a `scoring_scope`.
        label: What the progress bar says while it is computed.

    """

    metric: str
    version: int
    scorer: Callable[[], str]
    label: str


@dataclass
class _Scope:
    store: AnswerScoreStore | None
    progress: ScoringProgress | None
    read: bool
    # Values known in this scope, by (metric, version, scorer) then pair key: the run's
    # figures and each of its groups ask for the same pairs again.
    known: dict[tuple[str, int, str], dict[str, float]] = field(default_factory=dict)


_SCOPE: ContextVar[_Scope | None] = ContextVar("lmmprobe_scoring_scope", default=None)


@contextmanager
def scoring_scope(
    store: AnswerScoreStore | None = None,
    progress: ScoringProgress | None = None,
    *,
    read: bool = True,
) -> Iterator[None]:
    """Share per-answer scores inside the block, and keep them in `store` when one is given.

    Args:
        store: Where values are read and written; None keeps them for the block only.
        progress: Shows a labelled bar while values are computed.
        read: Read stored values (False recomputes every value once and stores it again,
            as ``lmmprobe run --no-cache`` does).

    """
    token = _SCOPE.set(_Scope(store, progress, read))
    try:
        yield
    finally:
        _SCOPE.reset(token)


def pair_key(answer: str, reference: str) -> str:
    """The key of one (answer, reference) pair: a SHA-256 of both texts, exactly as given."""
    # surrogatepass: a model's text may hold a lone surrogate, which is still one exact text.
    data = json.dumps([answer, reference], ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def cached_pair_scores(
    scorer: PairScorer,
    answers: Sequence[str],
    references: Sequence[str],
    compute: Callable[[list[str], list[str]], list[float]],
) -> list[float]:
    """``compute(answers, references)``, each distinct pair computed at most once in a scope.

    Outside a `scoring_scope` this is ``compute(answers, references)``. Inside one, values
    already known (in the scope, or in its store unless it was opened with ``read=False``) are
    reused, the rest are computed in chunks of `CHUNK` distinct pairs (each chunk written to
    the store as soon as it is computed, so an interrupted scoring keeps what it did), and the
    scope's progress shows a task labelled ``scorer.label`` while that happens.

    Args:
        scorer: Identity of the score (see `PairScorer`).
        answers: The answers.
        references: One reference per answer.
        compute: ``(answers, references) -> values``, one value per pair, in order.

    Returns:
        One value per pair, in order.

    """
    scope = _SCOPE.get()
    if scope is None:
        return compute(list(answers), list(references))
    keys = [pair_key(a, r) for a, r in zip(answers, references, strict=True)]
    pairs = dict(zip(keys, zip(answers, references, strict=True), strict=True))
    ident = (scorer.metric, scorer.version, scorer.scorer())
    known = scope.known.setdefault(ident, {})
    missing = [k for k in pairs if k not in known]
    if missing and scope.store is not None and scope.read:
        known.update(scope.store.get_answer_scores(*ident, missing))
        missing = [k for k in missing if k not in known]
    if missing:
        _compute_missing(scope, ident, scorer.label, pairs, missing, known, compute)
    values = [known[k] for k in keys]
    if scope.store is not None and len(known) > KNOWN_CAP:
        known.clear()
    return values


def _compute_missing(
    scope: _Scope,
    ident: tuple[str, int, str],
    label: str,
    pairs: Mapping[str, tuple[str, str]],
    missing: list[str],
    known: dict[str, float],
    compute: Callable[[list[str], list[str]], list[float]],
) -> None:
    progress = scope.progress
    if progress is not None:
        progress.start(label, len(pairs), len(pairs) - len(missing))
    try:
        for start in range(0, len(missing), CHUNK):
            chunk = missing[start : start + CHUNK]
            values = compute([pairs[k][0] for k in chunk], [pairs[k][1] for k in chunk])
            computed = dict(zip(chunk, values, strict=True))
            if scope.store is not None:
                scope.store.put_answer_scores(*ident, computed)
            known.update(computed)
            if progress is not None:
                progress.advance(len(chunk), 0)
    finally:
        if progress is not None:
            progress.finish()
