"""Drawing battles (`lmmprobe.serve.pairs`) and storing votes (`lmmprobe.store.battles`)."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from lmmprobe.schema import ContentPart, Message, Request, Response, Score
from lmmprobe.serve.pairs import Catalog, Draw, Tally, draw_battle
from lmmprobe.store import Store
from lmmprobe.store.battles import (
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


def _put_run(db: Path, run_id: str, answers: dict[str, dict[tuple[str, int], str | None]]) -> None:
    """A run whose model -> (sample, repeat) -> response key (None: an error, no text)."""
    with Store(db) as store:
        store.create_run(run_id, {"data": "t", "models": list(answers)}, str(db.parent))
        for model, keys in answers.items():
            requests, responses, scores = [], [], []
            for (sample_id, repeat), key in keys.items():
                k = key or f"{model}-{run_id}-{sample_id}-{repeat}-error"
                message = Message(role="user", content=[ContentPart(type="text", text="q")])
                requests.append(
                    Request(
                        key=k, sample_id=sample_id, method="generate", messages=[message],
                        prompt="q",
                    )
                )  # fmt: skip
                responses.append(
                    Response(key=k, text=f"answer {k}")
                    if key
                    else Response(key=k, text=None, error_type="timeout", error_message="slow")
                )
                scores.append(
                    Score(
                        model=model, sample_id=sample_id, repeat=repeat, key=k,
                        stage="unparsed", gold=["x"], gold_text="x",
                    )
                )  # fmt: skip
            store.put_responses(model, requests, responses)
            store.put_scores(run_id, scores)
        store.update_run(run_id, status="done")


def _grid(samples: int, models: tuple[str, ...] = MODELS, run: str = "run") -> dict:
    return {m: {(f"s{i}", 0): f"{m}-{run}-s{i}" for i in range(samples)} for m in models}


class _Rater:
    """Draws and votes as the arena does, on a real store."""

    def __init__(self, db: Path, name: str = "ann", seed: int = 0) -> None:
        self.db, self.name, self.seed = db, name, seed
        self.conn = sqlite3.connect(db, isolation_level=None)
        self.catalog, self.tally, self.closed = Catalog(), Tally(), set()  # type: ignore[var-annotated]
        self.catalog.refresh(self.conn)

    def draw(self, pending: list[Draw] | None = None) -> Draw | None:
        self.tally.sync(self.conn)
        mine = list_votes(self.conn, rater=self.name)
        seen = {(v.run_id, v.sample_id, *sorted((v.model_a, v.model_b))) for v in mine}
        answers = {tuple(sorted((v.key_a, v.key_b))) for v in mine}
        return draw_battle(
            self.conn, self.catalog, self.tally, seen=seen, seen_answers=answers,  # type: ignore[arg-type]
            pending=pending or [], rng=random.Random(f"{self.seed}|{len(mine)}"),
            closed=self.closed,
        )  # fmt: skip

    def vote(self, d: Draw, store: Store) -> None:
        record_vote(
            store, rater=self.name, run_id=d.run_id, sample_id=d.sample_id, repeat=d.repeat,
            model_a=d.model_a, model_b=d.model_b, key_a=d.key_a, key_b=d.key_b, vote="a",
        )  # fmt: skip


def _vote_all(db: Path, name: str = "ann", seed: int = 0) -> list[Draw]:
    rater, drawn = _Rater(db, name, seed), []
    with Store(db) as store:
        while (d := rater.draw()) is not None:
            rater.vote(d, store)
            drawn.append(d)
    return drawn


def test_draws_cover_every_battle_once_least_used_pair_first(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _put_run(db, "run", _grid(4))
    rater = _Rater(db)
    assert rater.catalog.models == list(MODELS)
    counts: Counter = Counter()
    with Store(db) as store:
        while (d := rater.draw()) is not None:
            assert d.key not in counts
            counts[d.key] += 1
            per_pair = Counter((k[3], k[4]) for k in counts)
            assert (
                max(per_pair.values()) - min(per_pair.get(p, 0) for p in rater.catalog.pairs()) <= 1
            )
            assert {d.model_a, d.model_b} <= set(MODELS) and d.model_a != d.model_b
            assert d.key_a == f"{d.model_a}-run-{d.sample_id}"
            assert d.key_b == f"{d.model_b}-run-{d.sample_id}"
            rater.vote(d, store)
    assert len(counts) == 12


def test_the_least_used_sample_of_the_pair_comes_next(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _put_run(db, "run", _grid(3, ("m1", "m2")))
    with Store(db) as store:
        for rater, sample in (("x", "s0"), ("y", "s0"), ("z", "s1")):
            record_vote(
                store, rater=rater, run_id="run", sample_id=sample, repeat=0, model_a="m2",
                model_b="m1", key_a=f"m2-run-{sample}", key_b=f"m1-run-{sample}", vote="tie",
            )  # fmt: skip
    for seed in range(5):
        d = _Rater(db, "ann", seed).draw()
        assert d is not None and d.sample_id == "s2"
    # A battle handed to someone else counts like a vote; the rater's own are never redrawn.
    held = Draw("run", "s2", 0, "m1", "m2", "m1-run-s2", "m2-run-s2")
    d = _Rater(db, "ann").draw(pending=[held])
    assert d is not None and d.sample_id == "s1"
    d = _Rater(db, "z").draw(pending=[held])
    assert d is not None and d.sample_id == "s0"


def test_draws_are_seeded_and_mix_the_sides(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _put_run(db, "run", _grid(4))
    first = [_Rater(db, "ann", s).draw() for s in range(40)]
    again = [_Rater(db, "ann", s).draw() for s in range(40)]
    assert first == again
    sides = Counter(d.model_a < d.model_b for d in first if d is not None)
    assert sides[True] > 5 and sides[False] > 5
    assert len({d.sample_id for d in first if d is not None}) > 1  # a random sample, not the first


def test_nothing_to_draw_and_errors_are_never_shown(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with Store(db):
        pass
    assert _Rater(db).draw() is None
    # s1 has m2's error: only s0 is a battle; m3 answered another run only.
    _put_run(
        db,
        "run",
        {"m1": {("s0", 0): "a0", ("s1", 0): "a1"}, "m2": {("s0", 0): "b0", ("s1", 0): None}},
    )
    _put_run(db, "other", {"m3": {("s0", 0): "c0"}})
    assert [(d.sample_id, sorted((d.model_a, d.model_b))) for d in _vote_all(db)] == [
        ("s0", ["m1", "m2"])
    ]
    assert _Rater(db).draw() is None


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


def test_repeats_of_a_sample_are_judged_once_and_identical_battles_offered_once(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    _put_run(db, "run1", {
        "m1": {("s0", 0): "k1-0", ("s0", 1): "k1-1"},  # the same question again
        "m2": {("s0", 0): "k2-0", ("s0", 1): "k2-1"},
    })  # fmt: skip
    _put_run(db, "run2", {
        "m1": {("s0", 0): "k1-0", ("s1", 0): "k1-s1"},  # a re-run: cached answers
        "m2": {("s0", 0): "k2-0", ("s1", 0): "k2-s1"},
    })  # fmt: skip
    drawn = sorted((d.run_id, d.sample_id) for d in _vote_all(db))
    assert len(drawn) == 2 and drawn[-1] == ("run2", "s1")
    assert drawn[0] in {("run1", "s0"), ("run2", "s0")}
    # Another rater still gets both, whatever the first voted on.
    assert len(_vote_all(db, "bob")) == 2


def test_balanced_over_samples_with_many_raters(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _put_run(db, "run", _grid(5, ("m1", "m2")))
    for name in ("a", "b", "c"):
        assert len(_vote_all(db, name)) == 5
    with Store(db) as store:
        assert set(item_counts(store).values()) == {3}


def test_a_battle_held_by_another_rater_comes_back_once_voted(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _put_run(db, "run", _grid(1, ("m1", "m2")))
    ann, bob = _Rater(db, "ann"), _Rater(db, "bob")
    held = ann.draw()
    assert held is not None
    assert bob.draw(pending=[held]) is None  # the only battle is in ann's hands
    with Store(db) as store:
        ann.vote(held, store)
    again = bob.draw()
    assert again is not None and again.key == held.key
