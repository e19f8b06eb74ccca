"""Two runs (or two models of one run) compared answer by answer on the samples both scored.

The accuracy difference comes with a paired cluster-bootstrap interval (samples resampled, as
the run metrics do, so the repeats of a sample travel together), McNemar's exact test on the
answers where exactly one side is right, how often the two agree, and the answers where they
differ. Only answers both sides scored count: errors are errors, not wrong answers, so a pair
with an error on either side is left out (and counted), as are answers judged only as a corpus
(captions).

Two specs of one checkpoint (``hf:PATH`` and ``hf:PATH,enable_thinking=false``: thinking on
and off) are two models like any others, paired answer by answer: `checkpoint` names what they
share and `checkpoint_pair` finds such a pair among two runs' models, so comparing thinking on
against off needs no ``--model`` when the runs hold one such pair.

`lmmprobe compare` prints a `Comparison`; ``lmmprobe serve`` shows it with the differing
answers paged.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from dataclasses import dataclass

import numpy as np

from lmmprobe.metrics.paired import LEVEL, difference_interval, mcnemar, natural_key
from lmmprobe.spec import SpecError, parse_spec
from lmmprobe.store import Store
from lmmprobe.store.queries import PairedAnswer, data_fingerprint, paired_answers

__all__ = [
    "Comparison",
    "Difference",
    "checkpoint",
    "checkpoint_pair",
    "compare_runs",
]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def checkpoint(model: str) -> str:
    """A model spec without its options: what two settings of one checkpoint share.

    ``hf:/m/qwen,chat_template_kwargs=enable_thinking:false`` → ``hf:/m/qwen``;
    ``openai:m@http://h/v1,reasoning_effort=high`` → ``openai:m@http://h/v1``. A spec that does
    not parse is its own checkpoint.
    """
    try:
        return parse_spec(model, "model").head
    except SpecError:
        return model


def checkpoint_pair(models_a: list[str], models_b: list[str]) -> tuple[str, str] | None:
    """The one pair of different specs of one checkpoint, a from `models_a`, b from `models_b`.

    Two runs of a checkpoint with thinking on and off, or one run holding both, give that
    pair; pass the same list twice for the models of one run (the pair then keeps the run's
    order). None when no such pair exists, or when several do (the caller asks which).
    """
    same = models_a is models_b or models_a == models_b
    found = [
        (a, b)
        for i, a in enumerate(models_a)
        for b in (models_b[i + 1 :] if same else models_b)
        if a != b and checkpoint(a) == checkpoint(b)
    ]
    return found[0] if len(found) == 1 else None


@dataclass
class Difference:
    """One paired answer where exactly one side is right."""

    sample_id: str
    repeat: int
    gold: str
    a: str
    b: str
    a_correct: bool


@dataclass
class Comparison:
    """Two sets of answers to the same samples, compared pair by pair (see the module docstring)."""

    run_a: str
    model_a: str
    run_b: str
    model_b: str
    n: int
    """Paired answers: (sample, repeat) scored right or wrong on both sides."""
    samples: int
    """Distinct samples among them (the bootstrap resamples these)."""
    accuracy_a: float | None
    accuracy_b: float | None
    difference: float | None
    """accuracy_a - accuracy_b on the paired answers."""
    low: float | None
    high: float | None
    level: float
    n_boot: int
    seed: int
    a_only_correct: int
    """Paired answers right on side A only (a discordant pair)."""
    b_only_correct: int
    """Paired answers right on side B only (a discordant pair)."""
    both_correct: int
    """Paired answers right on both sides."""
    both_wrong: int
    """Paired answers wrong on both sides (an unparsed or cut-off answer is wrong)."""
    mcnemar_p: float | None
    """Two-sided exact McNemar p-value (binomial test of the discordant pairs at 1/2)."""
    agreement: float | None
    """Share of paired answers with the same verdict (both right or both wrong)."""
    same_answer: float | None
    """Share of paired answers where both gave the same answer (option or text)."""
    left_out: dict[str, int]
    """Answers not paired, by reason: an error on either side, answered only by one side, no
    right/wrong verdict (captions), or a different gold answer for the same sample id."""
    same_data: bool | None
    """Whether the two runs' data fingerprints match (None when one is unknown)."""
    differ_total: int
    differ: list[Difference]
    """The differing answers from `offset`, at most `limit` of them, in sample order."""
    offset: int = 0


def _plain(text: str | None) -> str:
    return "" if text is None else _CONTROL.sub(" ", text).strip()


def _shown(ans: PairedAnswer) -> str:
    if ans.prediction_text is not None:
        return ans.prediction_text
    # A cut-off answer (thinking that never ended) is named as such, not as an unparsed one.
    why = "(cut off)" if ans.stage == "truncated" else "(unparsed)"
    return f"{why} {ans.raw or ''}".strip()


def _same_answer(x: PairedAnswer, y: PairedAnswer) -> bool:
    if x.prediction is not None or y.prediction is not None:
        return x.prediction == y.prediction
    return _plain(x.prediction_text).casefold() == _plain(y.prediction_text).casefold()


def compare_runs(
    store: Store | sqlite3.Connection,
    run_a: str,
    model_a: str,
    run_b: str,
    model_b: str,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    limit: int = 20,
    offset: int = 0,
) -> Comparison:
    """Compare two models' answers (of one run or two) on the samples both scored.

    Args:
        store: An open store, or a connection to one (`lmmprobe.store.queries.Readers`).
        run_a: Run id of side A (resolved: see `Store.resolve_run`).
        model_a: Model spec of side A, as stored in the run.
        run_b: Run id of side B (may equal `run_a`).
        model_b: Model spec of side B.
        n_boot: Bootstrap resamples for the difference's interval.
        seed: Seed of the bootstrap (`numpy.random.default_rng`).
        limit: Keep at most this many differing answers in `Comparison.differ`.
        offset: Skip this many differing answers first (to page through them).

    Raises:
        ImportError: scipy is missing (McNemar's test needs it).

    """
    conn = store.conn if isinstance(store, Store) else store
    a, b = paired_answers(conn, run_a, model_a), paired_answers(conn, run_b, model_b)
    left = Counter[str]()
    left["only_a"] = len(a.keys() - b.keys())
    left["only_b"] = len(b.keys() - a.keys())
    pairs: list[tuple[tuple[str, int], PairedAnswer, PairedAnswer]] = []
    for key in sorted(a.keys() & b.keys(), key=lambda k: (natural_key(k[0]), k[1])):
        x, y = a[key], b[key]
        if x.error_type or y.error_type:
            left["error"] += 1
        elif x.correct is None or y.correct is None:
            left["no_verdict"] += 1
        elif x.gold != y.gold:
            left["gold_differs"] += 1
        else:
            pairs.append((key, x, y))
    n = len(pairs)
    ca = np.array([x.correct for _, x, _ in pairs], dtype=np.float64)
    cb = np.array([y.correct for _, _, y in pairs], dtype=np.float64)
    # The bootstrap resamples samples (their repeats travel together), as the run's own
    # accuracy intervals do.
    low, high, samples = difference_interval(
        [sid for (sid, _), _, _ in pairs], list(ca - cb), n_boot=n_boot, seed=seed
    )
    a_only = int(((ca == 1) & (cb == 0)).sum())
    b_only = int(((ca == 0) & (cb == 1)).sum())
    differing = [(k, x, y) for k, x, y in pairs if x.correct != y.correct]
    fa, fb = data_fingerprint(conn, run_a), data_fingerprint(conn, run_b)
    return Comparison(
        run_a=run_a,
        model_a=model_a,
        run_b=run_b,
        model_b=model_b,
        n=n,
        samples=samples,
        accuracy_a=float(ca.mean()) if n else None,
        accuracy_b=float(cb.mean()) if n else None,
        difference=float(ca.mean() - cb.mean()) if n else None,
        low=low,
        high=high,
        level=LEVEL,
        n_boot=n_boot,
        seed=seed,
        a_only_correct=a_only,
        b_only_correct=b_only,
        both_correct=int(((ca == 1) & (cb == 1)).sum()),
        both_wrong=int(((ca == 0) & (cb == 0)).sum()),
        mcnemar_p=mcnemar(a_only, b_only),
        agreement=(n - a_only - b_only) / n if n else None,
        same_answer=sum(_same_answer(x, y) for _, x, y in pairs) / n if n else None,
        left_out={k: v for k, v in sorted(left.items()) if v},
        same_data=None if fa is None or fb is None else fa == fb,
        differ_total=len(differing),
        differ=[
            Difference(
                sample_id=sid,
                repeat=rep,
                gold=x.gold_text,
                a=_shown(x),
                b=_shown(y),
                a_correct=bool(x.correct),
            )
            for (sid, rep), x, y in differing[offset : offset + limit]
        ],
        offset=offset,
    )
