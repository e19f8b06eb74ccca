"""Which two answers the arena shows next: balanced over model pairs and samples.

Nothing here lists every battle a store offers (a store of a million responses offers
millions): a draw reads a handful of rows.

1. **Pair.** Every two models that answered the same run form a pair (`Catalog`: the models of
   each run, found by a few index seeks and cached per run ``status``/``updated_at``). The pair
   with the fewest votes so far (all raters, plus battles handed out and not yet voted on, so
   concurrent raters spread over pairs) comes first; ties are broken by a seeded
   ``random.Random``. Votes are counted in memory (`Tally`), read from the battles table once
   and then only the rows added since.
2. **Sample.** One SQL query walks the run's samples in index order from a random one, keeping
   those where both models stored a generated answer (text, no error) that nobody has voted on
   for this pair yet; it stops after `CANDIDATES` of them, and the one with the fewest votes on
   its sample over all pairs wins (random tie-break). Once a pair has a vote on every sample of
   a run (``covered``), the least-voted of its voted samples that this rater has not judged
   comes next.
3. **Side.** A seeded coin flip puts each answer on the left or the right.

Two answers that read the same (equal once surrounding blanks are stripped) are never offered:
a rater could only call them a tie, which says nothing about which model answers better. A
rater may scope the draw to chosen runs (``runs``): battles then come from these runs only.

A rater never gets a sample with a pair of models they have already voted on, in either order
and in whatever repeat of the sample (repeats ask the same question again, with the options
maybe shuffled); when none is left the draw is None. Two runs that stored the very same two
answers (a run repeated on the same data reuses its cached responses) offer that battle once.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Set
from dataclasses import dataclass, field
from itertools import combinations

__all__ = [
    "CANDIDATES",
    "BattleKey",
    "Catalog",
    "Draw",
    "SeenKey",
    "Tally",
    "battle_key",
    "draw_battle",
]

BattleKey = tuple[str, str, int, str, str]
"""``(run_id, sample_id, repeat, m1, m2)`` with m1 < m2: one battle, whatever side is shown."""
SeenKey = tuple[str, str, str, str]
"""``(run_id, sample_id, m1, m2)``: what a rater must not judge twice (any repeat)."""
Pair = tuple[str, str]
AnswerPair = tuple[str, str]

CANDIDATES = 4
"""Unvoted samples a draw reads before choosing among them."""

_MODELS_OF_RUN = """
WITH RECURSIVE m(model) AS (
    SELECT MIN(model) FROM scores WHERE run_id = :run
    UNION ALL
    SELECT (SELECT MIN(model) FROM scores WHERE run_id = :run AND model > m.model)
    FROM m WHERE m.model IS NOT NULL
)
SELECT model FROM m WHERE model IS NOT NULL"""
# One index seek per model (the scores primary key starts with run_id, model): no scan.

_ANSWERED = """
SELECT a.sample_id, a.repeat, a.key, b.key FROM scores a
JOIN scores b ON b.run_id = a.run_id AND b.model = :mb AND b.sample_id = a.sample_id
    AND b.repeat = a.repeat
JOIN responses ra ON ra.key = a.key
JOIN responses rb ON rb.key = b.key
WHERE a.run_id = :run AND a.model = :ma AND a.sample_id {op} :pivot
    AND ra.method = 'generate' AND ra.text IS NOT NULL AND ra.error_type IS NULL
    AND rb.method = 'generate' AND rb.text IS NOT NULL AND rb.error_type IS NULL
    AND trim(ra.text, :blank) <> trim(rb.text, :blank)
ORDER BY a.sample_id, a.repeat"""
# Walked row by row from the pivot along the scores primary key, and left after a few rows.
BLANK = " \t\r\n\f\v"
"""What `_ANSWERED` strips before it compares two answers (a rater cannot see it either)."""


def battle_key(run_id: str, sample_id: str, repeat: int, model_1: str, model_2: str) -> BattleKey:
    """The order-free key of a battle (the two models sorted)."""
    low, high = sorted((model_1, model_2))
    return (run_id, sample_id, repeat, low, high)


def _answers(key_1: str, key_2: str) -> AnswerPair:
    low, high = sorted((key_1, key_2))
    return (low, high)


@dataclass(frozen=True, slots=True)
class Draw:
    """A battle handed to a rater: one sample, two models, in the order shown.

    Attributes:
        run_id: The run both answers come from.
        sample_id: The sample.
        repeat: The repeat.
        model_a: The model shown first (left, "A").
        model_b: The model shown second (right, "B").
        key_a: A's response key.
        key_b: B's response key.

    """

    run_id: str
    sample_id: str
    repeat: int
    model_a: str
    model_b: str
    key_a: str
    key_b: str

    @property
    def key(self) -> BattleKey:
        """The battle's order-free key."""
        return battle_key(self.run_id, self.sample_id, self.repeat, self.model_a, self.model_b)

    @property
    def seen_key(self) -> SeenKey:
        """What the rater must not judge again (any repeat of the sample)."""
        k = self.key
        return (k[0], k[1], k[3], k[4])

    @property
    def answers(self) -> AnswerPair:
        """The two response keys, sorted."""
        return _answers(self.key_a, self.key_b)


@dataclass
class _Run:
    stamp: tuple[str, float]
    models: list[str]
    sizes: dict[str, int] = field(default_factory=dict)  # model -> scores rows, read lazily
    covered: set[Pair] = field(default_factory=set)  # pairs voted on every sample of the run


class Catalog:
    """The models of each stored run, and so the pairs of models the arena can show.

    `refresh` reads the runs table (one row per run) and, for a run whose status or
    ``updated_at`` changed, its models (an index seek per model); the rest is cached.
    """

    def __init__(self) -> None:
        self._runs: dict[str, _Run] = {}
        self._lock = threading.Lock()

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Re-read the runs that changed since the last refresh."""
        stamps = {
            r: (str(s), float(u))
            for r, s, u in conn.execute("SELECT id, status, updated_at FROM runs")
        }
        fresh: dict[str, _Run] = {}
        for run_id, stamp in stamps.items():
            known = self._runs.get(run_id)
            if known is not None and known.stamp == stamp:
                fresh[run_id] = known
                continue
            models = [m for (m,) in conn.execute(_MODELS_OF_RUN, {"run": run_id})]
            fresh[run_id] = _Run(stamp, models)
        with self._lock:
            self._runs = fresh

    @property
    def models(self) -> list[str]:
        """Every model in a run with at least two models, sorted."""
        return self.models_in(None)

    def models_in(self, runs: Set[str] | None) -> list[str]:
        """Every model in a run of `runs` (None: any run) with at least two models, sorted."""
        return sorted(
            {
                m
                for run_id, run in self._runs.items()
                if len(run.models) > 1 and (runs is None or run_id in runs)
                for m in run.models
            }
        )

    def runs(self) -> dict[str, list[str]]:
        """The runs that offer battles (two models or more) -> their models, by run id."""
        return {r: list(run.models) for r, run in sorted(self._runs.items()) if len(run.models) > 1}

    def pairs(self, runs: Set[str] | None = None) -> dict[Pair, list[str]]:
        """Pair of models (sorted) -> the runs of `runs` (None: all) both answered, in order."""
        found: dict[Pair, list[str]] = {}
        for run_id, run in sorted(self._runs.items()):
            if runs is not None and run_id not in runs:
                continue
            for low, high in combinations(sorted(run.models), 2):
                found.setdefault((low, high), []).append(run_id)
        return found

    def _run(self, run_id: str) -> _Run | None:
        return self._runs.get(run_id)

    def size(self, conn: sqlite3.Connection, run_id: str, model: str) -> int:
        """Scores rows of one model in one run (counted once per run stamp)."""
        run = self._run(run_id)
        if run is None:
            return 0
        if model not in run.sizes:
            (n,) = conn.execute(
                "SELECT COUNT(*) FROM scores WHERE run_id = ? AND model = ?", (run_id, model)
            ).fetchone()
            run.sizes[model] = int(n)
        return run.sizes[model]

    def covered(self, run_id: str, pair: Pair) -> bool:
        """Whether every answered sample of the run has a vote for this pair."""
        run = self._run(run_id)
        return run is not None and pair in run.covered

    def mark_covered(self, run_id: str, pair: Pair) -> None:
        """Remember that the pair has a vote on every sample of the run (until it changes)."""
        run = self._run(run_id)
        if run is not None:
            run.covered.add(pair)


class Tally:
    """Stored votes, counted in memory: per pair, per battle, per sample, per two answers.

    `sync` reads only the battles rows added since the last call (by id), so votes written by
    this server or by another process are all counted.
    """

    def __init__(self) -> None:
        self.last_id = 0
        self.pair: Counter[Pair] = Counter()
        self.item: Counter[BattleKey] = Counter()
        self.sample: Counter[tuple[str, str, int]] = Counter()
        self.answers: Counter[AnswerPair] = Counter()
        self.run_pair: Counter[tuple[str, str, str]] = Counter()
        self.voted: dict[tuple[str, str, str], dict[BattleKey, tuple[str, str]]] = {}
        """(run, m1, m2) -> voted battles -> the response keys of m1 and m2."""

    def sync(self, conn: sqlite3.Connection) -> None:
        """Count the votes stored since the last call."""
        rows = conn.execute(
            "SELECT id, run_id, sample_id, repeat, model_a, model_b, key_a, key_b FROM battles "
            "WHERE id > ? ORDER BY id",
            (self.last_id,),
        ).fetchall()
        for row_id, run_id, sample_id, repeat, model_a, model_b, key_a, key_b in rows:
            self.add(
                Draw(run_id, sample_id, int(repeat), model_a, model_b, key_a, key_b), int(row_id)
            )

    def add(self, draw: Draw, row_id: int) -> None:
        """Count one stored vote (row `row_id` of the battles table)."""
        if row_id <= self.last_id:
            return
        self.last_id = row_id
        key = draw.key
        keys = (draw.key_a, draw.key_b) if draw.model_a == key[3] else (draw.key_b, draw.key_a)
        self.pair[(key[3], key[4])] += 1
        self.item[key] += 1
        self.sample[key[:3]] += 1
        self.answers[draw.answers] += 1
        self.run_pair[(key[0], key[3], key[4])] += 1
        self.voted.setdefault((key[0], key[3], key[4]), {})[key] = keys


def draw_battle(
    conn: sqlite3.Connection,
    catalog: Catalog,
    tally: Tally,
    *,
    seen: Set[SeenKey],
    seen_answers: Set[AnswerPair],
    pending: Iterable[Draw],
    rng: random.Random,
    closed: set[Pair],
    runs: Set[str] | None = None,
) -> Draw | None:
    """The next battle for a rater, or None when they have voted on every battle.

    Args:
        conn: A connection to the store.
        catalog: The runs' models (refreshed by the caller).
        tally: The stored votes (synced by the caller).
        seen: What this rater has voted on or holds undecided.
        seen_answers: The response-key pairs of those battles.
        pending: Battles handed out to anyone and not yet voted on (counted like votes).
        rng: The seeded tie-breaker (and side chooser).
        closed: Pairs with nothing left for this rater; pairs found empty are added to it.
        runs: Draw from these runs only (the rater's scope); None: from every run.

    Returns:
        The battle, with the side of each model chosen.

    """
    held = list(pending)
    held_pair = Counter((d.key[3], d.key[4]) for d in held)
    held_item = Counter(d.key for d in held)
    held_answers = {d.answers for d in held}
    pairs = catalog.pairs(runs)
    order = sorted(pairs, key=lambda p: (tally.pair[p] + held_pair[p], rng.random()))
    for pair in order:
        if pair in closed:
            continue
        where = sorted(pairs[pair], key=lambda r: (tally.run_pair[(r, *pair)], rng.random()))
        for run_id in where:
            found = _unvoted(
                conn, catalog, tally, run_id, pair, held_item, held_answers, seen, rng
            ) or _least_voted(conn, tally, run_id, pair, held_item, seen, seen_answers, rng)
            if found is not None:
                sample_id, repeat, key_low, key_high = found
                if rng.random() < 0.5:
                    return Draw(run_id, sample_id, repeat, *pair, key_low, key_high)
                return Draw(run_id, sample_id, repeat, pair[1], pair[0], key_high, key_low)
        if not held_pair[pair]:
            # Closed for good only when no battle of the pair is handed out: one held by
            # someone else may be given back unvoted, or voted on and then open to revisit.
            closed.add(pair)
    return None


def _unvoted(
    conn: sqlite3.Connection,
    catalog: Catalog,
    tally: Tally,
    run_id: str,
    pair: Pair,
    held_item: Counter[BattleKey],
    held_answers: Set[AnswerPair],
    seen: Set[SeenKey],
    rng: random.Random,
) -> tuple[str, int, str, str] | None:
    """A sample of the run nobody has voted on for this pair, near a random one."""
    if catalog.covered(run_id, pair):
        return None
    low, high = pair
    size = catalog.size(conn, run_id, low)
    if size == 0:
        return None
    (pivot,) = conn.execute(
        "SELECT sample_id FROM scores WHERE run_id = ? AND model = ? "
        "ORDER BY sample_id, repeat LIMIT 1 OFFSET ?",
        (run_id, low, rng.randrange(size)),
    ).fetchone() or ("",)
    found: list[tuple[str, int, str, str]] = []
    held_back = False  # a sample skipped only because it is handed out (not voted) right now
    for op in (">=", "<"):
        cur = conn.execute(
            _ANSWERED.format(op=op),
            {"run": run_id, "ma": low, "mb": high, "pivot": pivot, "blank": BLANK},
        )
        try:
            for sample_id, repeat, key_low, key_high in cur:
                key = (run_id, sample_id, int(repeat), low, high)
                answers = _answers(key_low, key_high)
                if tally.item[key] or tally.answers[answers]:
                    continue
                if (
                    held_item[key]
                    or answers in held_answers
                    or (run_id, sample_id, low, high) in seen
                ):
                    held_back = True
                    continue
                found.append((sample_id, int(repeat), key_low, key_high))
                if len(found) >= CANDIDATES:
                    break
        finally:
            cur.close()
        if found:
            break
    if not found:
        if not held_back:
            catalog.mark_covered(run_id, pair)
        return None
    fewest = min(tally.sample[(run_id, s, r)] for s, r, _, _ in found)
    return rng.choice([f for f in found if tally.sample[(run_id, f[0], f[1])] == fewest])


def _least_voted(
    conn: sqlite3.Connection,
    tally: Tally,
    run_id: str,
    pair: Pair,
    held_item: Counter[BattleKey],
    seen: Set[SeenKey],
    seen_answers: Set[AnswerPair],
    rng: random.Random,
) -> tuple[str, int, str, str] | None:
    """The least-voted battle of the pair in the run that this rater has not judged."""
    voted = tally.voted.get((run_id, *pair), {})
    open_items = [
        (tally.item[k] + held_item[k], tally.sample[k[:3]], rng.random(), k, keys)
        for k, keys in list(voted.items())  # a copy: another thread may add a vote
        if (k[0], k[1], k[3], k[4]) not in seen and _answers(*keys) not in seen_answers
    ]
    for *_, key, keys in sorted(open_items)[:20]:
        # Still answered? (a run can be deleted or re-scored after a vote).
        alive = conn.execute(
            "SELECT COUNT(*) FROM responses WHERE key IN (?, ?) AND method = 'generate' "
            "AND text IS NOT NULL AND error_type IS NULL",
            keys,
        ).fetchone()[0]
        if alive == 2:
            return (key[1], key[2], keys[0], keys[1])
    return None
