"""Which two answers the arena shows next: balanced over model pairs and samples.

Every sample and repeat that two or more models answered offers one battle per pair of those
models. The next battle for a rater is drawn in three steps:

1. the pair of models with the fewest votes so far (all raters, plus battles handed out and not
   yet voted on, so concurrent raters spread over pairs);
2. among that pair's battles the rater has not voted on, the least-used sample: fewest votes
   for this pair on it, then fewest votes on it over all pairs;
3. ties in either step are broken by a seeded ``random.Random``, and the side each answer is
   shown on is a seeded coin flip.

A rater never gets a sample with a pair of models they have already voted on, in either order
and in whatever repeat of the sample (repeats ask the same question again, with the options
maybe shuffled); when none is left the draw is None. Two runs that stored the very same two
answers (a run repeated on the same data reuses its cached responses) offer that battle once.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from itertools import combinations

from lmmprobe.store.battles import ArenaItem

__all__ = ["BattleKey", "Draw", "PairIndex", "SeenKey", "battle_key", "draw_battle"]

BattleKey = tuple[str, str, int, str, str]
"""``(run_id, sample_id, repeat, m1, m2)`` with m1 < m2: one battle, whatever side is shown."""
SeenKey = tuple[str, str, str, str]
"""``(run_id, sample_id, m1, m2)``: what a rater must not judge twice (any repeat)."""


def battle_key(run_id: str, sample_id: str, repeat: int, model_1: str, model_2: str) -> BattleKey:
    """The order-free key of a battle (the two models sorted)."""
    low, high = sorted((model_1, model_2))
    return (run_id, sample_id, repeat, low, high)


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


class PairIndex:
    """The battles the stored runs offer, grouped by pair of models.

    Args:
        items: Samples and repeats with two or more answered models
            (`lmmprobe.store.battles.arena_items`).

    """

    def __init__(self, items: Iterable[ArenaItem]) -> None:
        by_pair: defaultdict[tuple[str, str], list[ArenaItem]] = defaultdict(list)
        answers: set[tuple[str, str]] = set()
        groups: set[SeenKey] = set()
        for item in items:
            for low, high in combinations(sorted(item.keys), 2):
                both = (item.keys[low], item.keys[high])
                if both in answers:
                    continue  # the same two stored answers, reached through another run
                answers.add(both)
                by_pair[(low, high)].append(item)
                groups.add((item.run_id, item.sample_id, low, high))
        self.by_pair: dict[tuple[str, str], list[ArenaItem]] = dict(sorted(by_pair.items()))
        self.groups: frozenset[SeenKey] = frozenset(groups)
        self.samples_per_pair: Counter[tuple[str, str]] = Counter((g[2], g[3]) for g in groups)
        """Pair -> how many (run, sample) it offers: what one rater can judge of it."""

    @property
    def battles(self) -> int:
        """How many battles one rater can vote on: (run, sample, pair of models), all repeats."""
        return len(self.groups)

    @property
    def models(self) -> list[str]:
        """The models that appear in some battle, sorted."""
        return sorted({m for pair in self.by_pair for m in pair})


def draw_battle(
    index: PairIndex,
    *,
    seen: Set[BattleKey],
    counts: Mapping[BattleKey, int],
    rng: random.Random,
) -> Draw | None:
    """The next battle for a rater, or None when they have voted on every battle.

    Args:
        index: The battles on offer.
        seen: The battles this rater has voted on (or holds undecided); a battle seen in one
            repeat of a sample closes every repeat of it.
        counts: Votes per battle over all raters, plus battles handed out and not yet voted.
        rng: The seeded tie-breaker (and side chooser).

    Returns:
        The battle, with the side of each model chosen.

    """
    pair_total: defaultdict[tuple[str, str], int] = defaultdict(int)
    sample_total: defaultdict[tuple[str, str, int], int] = defaultdict(int)
    for (run_id, sample_id, repeat, low, high), n in counts.items():
        pair_total[(low, high)] += n
        sample_total[(run_id, sample_id, repeat)] += n
    judged: set[SeenKey] = {(k[0], k[1], k[3], k[4]) for k in seen}
    seen_per_pair: Counter[tuple[str, str]] = Counter(
        (g[2], g[3]) for g in judged if g in index.groups
    )
    # A pair is open to the rater while it offers more samples than they have judged of it.
    open_pairs = [p for p in index.by_pair if index.samples_per_pair[p] > seen_per_pair[p]]
    if not open_pairs:
        return None
    fewest = min(pair_total[p] for p in open_pairs)
    pair = rng.choice([p for p in open_pairs if pair_total[p] == fewest])
    best: list[ArenaItem] = []
    best_rank: tuple[int, int] | None = None
    for item in index.by_pair[pair]:
        if (item.run_id, item.sample_id, *pair) in judged:
            continue
        key = (item.run_id, item.sample_id, item.repeat, *pair)
        rank = (counts.get(key, 0), sample_total[(item.run_id, item.sample_id, item.repeat)])
        if best_rank is None or rank < best_rank:
            best, best_rank = [item], rank
        elif rank == best_rank:
            best.append(item)
    item = rng.choice(best)
    first, second = pair if rng.random() < 0.5 else (pair[1], pair[0])
    return Draw(
        item.run_id,
        item.sample_id,
        item.repeat,
        first,
        second,
        item.keys[first],
        item.keys[second],
    )
