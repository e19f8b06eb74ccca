"""Drawing battles (`lmmprobe.serve.pairs`) and storing votes (`lmmprobe.store.battles`)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from lmmprobe.serve.pairs import PairIndex, battle_key, draw_battle
from lmmprobe.store import Store
from lmmprobe.store.battles import (
    ArenaItem,
    DuplicateVoteError,
    count_votes,
    export_rows,
    item_counts,
    list_votes,
    pair_counts,
    record_vote,
    seen_pairs,
)

MODELS = ("m1", "m2", "m3")


def _index(samples: int = 4, models: tuple[str, ...] = MODELS) -> PairIndex:
    items = [ArenaItem("run", f"s{i}", 0, {m: f"{m}-s{i}" for m in models}) for i in range(samples)]
    return PairIndex(items)


def test_draws_cover_every_battle_once_least_used_pair_first() -> None:
    index = _index()
    assert index.battles == 12 and index.models == list(MODELS)
    seen: set = set()
    counts: Counter = Counter()
    rng = random.Random(0)
    while (d := draw_battle(index, seen=seen, counts=counts, rng=rng)) is not None:
        assert d.key not in seen
        seen.add(d.key)
        counts[d.key] += 1
        per_pair = Counter((k[3], k[4]) for k in counts.elements())
        assert max(per_pair.values()) - min(per_pair.get(p, 0) for p in index.by_pair) <= 1
        assert {d.model_a, d.model_b} <= set(MODELS) and d.model_a != d.model_b
        assert d.key_a == f"{d.model_a}-{d.sample_id}" and d.key_b == f"{d.model_b}-{d.sample_id}"
    assert len(seen) == 12


def test_the_least_used_sample_of_the_pair_comes_next() -> None:
    index = _index(samples=3, models=("m1", "m2"))
    counts = {battle_key("run", "s0", 0, "m1", "m2"): 2, battle_key("run", "s1", 0, "m2", "m1"): 1}
    d = draw_battle(index, seen=set(), counts=counts, rng=random.Random(1))
    assert d is not None and d.sample_id == "s2"
    # A battle the rater has seen is never drawn, however little it was used.
    seen = {battle_key("run", "s2", 0, "m1", "m2")}
    d = draw_battle(index, seen=seen, counts=counts, rng=random.Random(1))
    assert d is not None and d.sample_id == "s1"


def test_draws_are_seeded_and_mix_the_sides() -> None:
    index = _index()
    first = [draw_battle(index, seen=set(), counts={}, rng=random.Random(s)) for s in range(40)]
    again = [draw_battle(index, seen=set(), counts={}, rng=random.Random(s)) for s in range(40)]
    assert first == again
    sides = Counter(d.model_a < d.model_b for d in first if d is not None)
    assert sides[True] > 5 and sides[False] > 5


def test_nothing_to_draw() -> None:
    assert draw_battle(PairIndex([]), seen=set(), counts={}, rng=random.Random(0)) is None
    index = _index(samples=1, models=("m1", "m2"))
    seen = {battle_key("run", "s0", 0, "m2", "m1")}
    assert draw_battle(index, seen=seen, counts={}, rng=random.Random(0)) is None


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store(tmp_path / "b.db") as s:
        yield s


def _vote(store: Store, **kw: object) -> object:
    args = dict(
        rater="ann", run_id="r", sample_id="s", repeat=0, model_a="x", model_b="y",
        key_a="kx", key_b="ky", vote="a",
    )  # fmt: skip
    args.update(kw)
    return record_vote(store, **args)  # type: ignore[arg-type]


def test_votes_are_stored_once_per_rater_battle_whatever_the_order(store: Store) -> None:
    first = _vote(store)
    with pytest.raises(DuplicateVoteError):
        _vote(store, model_a="y", model_b="x", key_a="ky", key_b="kx", vote="b")
    with pytest.raises(DuplicateVoteError):
        _vote(store)
    _vote(store, rater="bob", vote="both_bad")
    _vote(store, sample_id="t", vote="tie")
    assert count_votes(store) == 3 and count_votes(store, rater="ann") == 2
    assert [v.id for v in list_votes(store)] == sorted(v.id for v in list_votes(store))
    assert list_votes(store)[0] == first
    assert seen_pairs(store, "ann") == {("r", "s", 0, "x", "y"), ("r", "t", 0, "x", "y")}
    assert pair_counts(store) == {("x", "y"): 3}
    assert item_counts(store)[("r", "s", 0, "x", "y")] == 2
    rows = list(export_rows(store))
    assert [(r["winner"], r["vote"]) for r in rows] == [
        ("a", "a"),
        ("tie", "both_bad"),
        ("tie", "tie"),
    ]


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"vote": "maybe"}, "vote must be"),
        ({"rater": " "}, "rater"),
        ({"model_b": "x"}, "two different"),
    ],
)
def test_bad_votes_are_refused(store: Store, change: dict[str, str], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _vote(store, **change)
    assert count_votes(store) == 0


def test_repeats_of_a_sample_are_judged_once_and_identical_battles_offered_once() -> None:
    items = [
        ArenaItem("run1", "s0", 0, {"m1": "k1-0", "m2": "k2-0"}),
        ArenaItem("run1", "s0", 1, {"m1": "k1-1", "m2": "k2-1"}),  # the same question again
        ArenaItem("run2", "s0", 0, {"m1": "k1-0", "m2": "k2-0"}),  # a re-run: cached answers
        ArenaItem("run2", "s1", 0, {"m1": "k1-s1", "m2": "k2-s1"}),
    ]
    index = PairIndex(items)
    assert index.battles == 2
    seen: set = set()
    drawn = []
    while (d := draw_battle(index, seen=seen, counts={}, rng=random.Random(3))) is not None:
        seen.add(d.key)
        drawn.append((d.run_id, d.sample_id))
    assert sorted(drawn) == [("run1", "s0"), ("run2", "s1")]
