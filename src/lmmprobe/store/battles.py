"""Human battles (the arena of ``lmmprobe serve``): votes between two stored answers.

A battle shows one rater two models' answers to the same sample and repeat of a run, in an
order the rater cannot tell, and records the vote: ``a`` (left), ``b`` (right), ``tie`` or
``both_bad``. Rows live in the store's ``battles`` table (schema 5) with the rater, the time,
the run, sample and repeat, both response keys and both models **in the order shown**.

For Elo, a vote becomes a battle winner (`WINNER_OF_VOTE`): ``a`` and ``b`` name the winner;
``tie`` and ``both_bad`` are both ties, as HEMM and FastChat count Chatbot Arena's
``tie (bothbad)``. Exports keep the vote itself in an extra ``vote`` field.

A judge's votes on the same battles (``lmmprobe arena judge``) live in ``judge_votes``
(schema 9): `put_judge_votes` and `list_judge_votes`.

Writes go through `Store.transaction` (``BEGIN IMMEDIATE`` with the store's lock timeout), so
a vote this module returns from is committed; a rater never votes twice on the same sample,
repeat and pair of models, whatever order the pair was shown in.
"""

from __future__ import annotations

import json
import sqlite3
import time
import unicodedata
from collections.abc import Collection, Iterator
from dataclasses import asdict, dataclass
from typing import Any, Literal, TextIO

from lmmprobe._secrets import redact_spec
from lmmprobe.store.errors import StoreDamagedError
from lmmprobe.store.layout import capped, over_cap, past_cap, shown_capped, within_cap
from lmmprobe.store.sqlite import Store

__all__ = [
    "VOTES",
    "WINNER_OF_VOTE",
    "BattleVote",
    "DuplicateVoteError",
    "JudgeVote",
    "Reader",
    "battle_texts",
    "count_votes",
    "export_rows",
    "item_counts",
    "list_judge_votes",
    "list_votes",
    "pair_counts",
    "put_judge_votes",
    "rater_name",
    "record_vote",
    "seen_pairs",
    "vote_stamp",
    "write_jsonl",
]

Vote = Literal["a", "b", "tie", "both_bad"]
VOTES: tuple[Vote, ...] = ("a", "b", "tie", "both_bad")
"""The votes a rater can cast: left better, right better, tie, both bad."""

WINNER_OF_VOTE: dict[str, Literal["a", "b", "tie"]] = {
    "a": "a",
    "b": "b",
    "tie": "tie",
    "both_bad": "tie",
}
"""Vote -> battle winner for Elo; ``both_bad`` is a tie, as FastChat's ``tie (bothbad)``."""

MAX_RATER_CHARS = 80
"""Longest rater name stored (names are display labels, not identities)."""

# Joiners that scripts (Persian, Indic) and emoji sequences need: the only format characters
# a name may hold.
_JOINERS = frozenset("\u200c\u200d")


def rater_name(raw: str) -> str:
    r"""The rater name `raw` stands for, or why it cannot be one.

    Whitespace is trimmed and inner runs of it become one space. A name is shown on pages,
    stored and exported, so it must be text a page can show as it reads: no lone surrogates
    (valid JSON, ``"\ud800"``, but not text), no control characters (NUL, escapes) and no
    invisible format characters (right-to-left overrides and isolates, which make a name read
    as another one), the zero-width joiners names and emoji need excepted.

    Args:
        raw: The name as typed.

    Returns:
        The name as stored: 1 to `MAX_RATER_CHARS` characters.

    Raises:
        ValueError: The name is blank, too long, or holds a character no name may hold; the
            message says which (the character shown as its code point).

    """
    name = " ".join(raw.split())
    if not name:
        raise ValueError("a rater name cannot be blank: type a name to vote under")
    if len(name) > MAX_RATER_CHARS:
        raise ValueError(
            f"a rater name has at most {MAX_RATER_CHARS} characters (this one has {len(name)})"
        )
    for i, char in enumerate(name, start=1):
        category = unicodedata.category(char)
        if category in ("Cc", "Cs") or (category == "Cf" and char not in _JOINERS):
            what = {"Cc": "a control character", "Cs": "a lone surrogate"}.get(
                category, "an invisible format character"
            )
            raise ValueError(
                f"a rater name cannot hold {what} (U+{ord(char):04X} at character {i}): "
                "type the name as plain text"
            )
    return name


_VOTE_COLUMNS = (
    "id, created_at, rater, run_id, sample_id, repeat, model_a, model_b, key_a, key_b, vote"
)


Reader = Store | sqlite3.Connection
"""What the read functions take: a `Store`, or an open connection to one (a reader pool's)."""


def _conn(source: Reader) -> sqlite3.Connection:
    return source.conn if isinstance(source, Store) else source


def _where(source: Reader) -> str:
    """The store, as a refusal names it (a reader pool's connection knows no path)."""
    return str(source.path) if isinstance(source, Store) else "the store"


class DuplicateVoteError(ValueError):
    """The rater has already voted on this sample, repeat and pair of models."""


@dataclass(frozen=True, slots=True)
class BattleVote:
    """One stored vote.

    Attributes:
        id: Row id; votes are numbered in the order they were stored.
        created_at: Unix time of the vote.
        rater: The name the rater entered.
        run_id: The run whose responses were compared.
        sample_id: The sample both models answered.
        repeat: The repeat of the sample within the run.
        model_a: The model whose answer was shown first (left, "A").
        model_b: The model whose answer was shown second (right, "B").
        key_a: The stored response key of A's answer.
        key_b: The stored response key of B's answer.
        vote: ``a``, ``b``, ``tie`` or ``both_bad``.

    """

    id: int
    created_at: float
    rater: str
    run_id: str
    sample_id: str
    repeat: int
    model_a: str
    model_b: str
    key_a: str
    key_b: str
    vote: str

    @property
    def winner(self) -> Literal["a", "b", "tie"]:
        """The battle winner Elo counts (`WINNER_OF_VOTE`)."""
        return WINNER_OF_VOTE[self.vote]

    def export_row(self) -> dict[str, Any]:
        """The vote as a line of a battle file that ``lmmprobe elo`` reads.

        ``winner`` is what Elo counts (``both_bad`` -> ``tie``); ``vote`` keeps the vote cast.
        """
        row = asdict(self)
        return {
            "model_a": row.pop("model_a"),
            "model_b": row.pop("model_b"),
            "winner": self.winner,
            **row,
        }


def _check_vote(vote: str) -> None:
    if vote not in VOTES:
        raise ValueError(f"vote must be one of {', '.join(VOTES)}, got {vote!r}")


def record_vote(
    store: Store,
    *,
    rater: str,
    run_id: str,
    sample_id: str,
    repeat: int,
    model_a: str,
    model_b: str,
    key_a: str,
    key_b: str,
    vote: str,
    created_at: float | None = None,
) -> BattleVote:
    """Store one vote and commit it before returning.

    Args:
        store: The store.
        rater: The rater's name, as `rater_name` makes it (stored so).
        run_id: The run both responses belong to.
        sample_id: The sample.
        repeat: The repeat.
        model_a: The model shown first (left).
        model_b: The model shown second (right), not `model_a`.
        key_a: A's response key.
        key_b: B's response key.
        vote: ``a``, ``b``, ``tie`` or ``both_bad``.
        created_at: Unix time of the vote (now by default).

    Returns:
        The stored vote, with its id.

    Raises:
        ValueError: The vote, rater or models are invalid.
        DuplicateVoteError: The rater already voted on this sample, repeat and pair (in
            either order); nothing is stored.
        StoreError: The store cannot be written (locked past its timeout, disk full...);
            nothing is stored.

    """
    _check_vote(vote)
    name = rater_name(rater)
    if model_a == model_b:
        raise ValueError(f"a battle needs two different models, got {model_a!r} twice")
    when = time.time() if created_at is None else created_at
    with store.transaction(doing=f"storing a vote of {name}") as c:
        # Inside BEGIN IMMEDIATE: no other writer can slip the same battle in between.
        already = c.execute(
            "SELECT 1 FROM battles WHERE rater = ? AND run_id = ? AND sample_id = ? AND "
            "repeat = ? AND ((model_a = ? AND model_b = ?) OR (model_a = ? AND model_b = ?))",
            (name, run_id, sample_id, repeat, model_a, model_b, model_b, model_a),
        ).fetchone()
        if already is not None:
            raise DuplicateVoteError(
                f"{name} has already voted on sample {sample_id} (repeat {repeat}) of run "
                f"{run_id} between {model_a} and {model_b}"
            )
        try:
            cur = c.execute(
                "INSERT INTO battles (created_at, rater, run_id, sample_id, repeat, model_a, "
                "model_b, key_a, key_b, vote) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (when, name, run_id, sample_id, repeat, model_a, model_b, key_a, key_b, vote),
            )
        except sqlite3.IntegrityError as exc:  # the UNIQUE constraint, as a second guard
            raise DuplicateVoteError(f"{name} has already voted on this battle ({exc})") from exc
        row_id = cur.lastrowid
    assert row_id is not None  # an INSERT always sets it
    return BattleVote(
        row_id, when, name, run_id, sample_id, repeat, model_a, model_b, key_a, key_b, vote
    )


def _vote_from_row(row: tuple[Any, ...]) -> BattleVote:
    return BattleVote(*row)


def _in_runs(runs: Collection[str] | None) -> tuple[str, list[Any]]:
    """The SQL condition (and its arguments) of a run scope; None: every run."""
    if runs is None:
        return "", []
    return f" AND run_id IN ({', '.join('?' * len(runs))})", sorted(runs)


def list_votes(
    store: Reader,
    *,
    rater: str | None = None,
    after_id: int = 0,
    limit: int | None = None,
    runs: Collection[str] | None = None,
) -> list[BattleVote]:
    """Stored votes in the order they were stored (by id).

    Args:
        store: The store.
        rater: Only this rater's votes (all by default).
        after_id: Only votes with a larger id (to read new votes incrementally).
        limit: At most this many (all by default).
        runs: Only votes on answers of these runs (every run by default).

    Returns:
        The votes, oldest first.

    """
    scope, scope_args = _in_runs(runs)
    sql = f"SELECT {_VOTE_COLUMNS} FROM battles WHERE id > ?{scope}"
    args: list[Any] = [after_id, *scope_args]
    if rater is not None:
        sql += " AND rater = ?"
        args.append(rater)
    sql += " ORDER BY id"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return [_vote_from_row(r) for r in _conn(store).execute(sql, args)]


def count_votes(store: Reader, *, rater: str | None = None) -> int:
    """Number of stored votes (of one rater, or of all)."""
    if rater is None:
        row = _conn(store).execute("SELECT COUNT(*) FROM battles").fetchone()
    else:
        row = (
            _conn(store)
            .execute("SELECT COUNT(*) FROM battles WHERE rater = ?", (rater,))
            .fetchone()
        )
    return int(row[0])


def vote_stamp(store: Reader, runs: Collection[str] | None = None) -> tuple[int, int | None]:
    """How many votes (on `runs`' answers, or all) are stored, and the newest one's id."""
    scope, args = _in_runs(runs)
    count, last = (
        _conn(store)
        .execute(f"SELECT COUNT(*), MAX(id) FROM battles WHERE 1 = 1{scope}", args)
        .fetchone()
    )
    return int(count), None if last is None else int(last)


def seen_pairs(store: Reader, rater: str) -> set[tuple[str, str, int, str, str]]:
    """The battles a rater has voted on, as ``(run_id, sample_id, repeat, m1, m2)``, m1 < m2.

    The pair is sorted, so a battle counts as seen whichever side each model was shown on.
    """
    rows = _conn(store).execute(
        "SELECT run_id, sample_id, repeat, model_a, model_b FROM battles WHERE rater = ?",
        (rater,),
    )
    return {(r, s, int(k), min(a, b), max(a, b)) for r, s, k, a, b in rows}


def pair_counts(store: Reader) -> dict[tuple[str, str], int]:
    """Votes per pair of models (the pair sorted, whichever side each was shown on)."""
    rows = _conn(store).execute(
        "SELECT min(model_a, model_b), max(model_a, model_b), COUNT(*) FROM battles GROUP BY 1, 2"
    )
    return {(a, b): int(n) for a, b, n in rows}


def item_counts(store: Reader) -> dict[tuple[str, str, int, str, str], int]:
    """Votes per ``(run_id, sample_id, repeat, m1, m2)`` battle (m1 < m2), all raters."""
    rows = _conn(store).execute(
        "SELECT run_id, sample_id, repeat, min(model_a, model_b), max(model_a, model_b), "
        "COUNT(*) FROM battles GROUP BY 1, 2, 3, 4, 5"
    )
    return {(r, s, int(k), a, b): int(n) for r, s, k, a, b, n in rows}


def export_rows(store: Reader, runs: Collection[str] | None = None) -> Iterator[dict[str, Any]]:
    """Every vote (on `runs`' answers, or all) as a battle-file row, in the order stored."""
    scope, args = _in_runs(runs)
    cur = _conn(store).execute(
        f"SELECT {_VOTE_COLUMNS} FROM battles WHERE 1 = 1{scope} ORDER BY id", args
    )
    for row in cur:
        yield _vote_from_row(row).export_row()


def write_jsonl(store: Reader, out: TextIO, runs: Collection[str] | None = None) -> int:
    """Write every vote to `out` as JSONL that ``lmmprobe elo`` reads; return the number written.

    The stream is the caller's: ``lmmprobe arena export`` hands the ``--out`` writer's
    (`lmmprobe.cli._common.write_out_file`), which refuses the store itself, writes through
    links and devices, and renames a finished file into place.

    Args:
        store: The store.
        out: The text stream to write to.
        runs: Only votes on answers of these runs, as the arena's leaderboard scoped to
            them counts (every vote by default).

    """
    n = 0
    for row in export_rows(store, runs):
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        n += 1
    return n


def battle_texts(
    store: Reader, key_a: str, key_b: str, *, shown: bool = False
) -> dict[str, dict[str, str]]:
    """The prompt sent and the raw text generated, for two response keys.

    A text longer than lmmprobe stores (`lmmprobe.store.layout.MAX_STORED_TEXT`) is measured
    in SQL, never read: refused, or with `shown` (a page) a marker naming its length instead.

    Returns:
        Key -> ``{"prompt": ..., "text": ...}``; a key not stored (or stored as an error)
        is missing.

    Raises:
        StoreDamagedError: A text is past the cap and `shown` is false.

    """
    text = shown_capped("text") if shown else within_cap("text")
    rows = _conn(store).execute(
        f"SELECT key, prompt, {text}, {over_cap('text')} FROM responses WHERE key IN (?, ?) "
        "AND text IS NOT NULL AND error_type IS NULL",
        (key_a, key_b),
    )
    out: dict[str, dict[str, str]] = {}
    for k, p, t, found in rows:
        if found is not None and not shown:
            raise StoreDamagedError(past_cap(f"{_where(store)}: the stored response {k}", found))
        out[k] = {"prompt": p, "text": t}
    return out


@dataclass(frozen=True, slots=True)
class JudgeVote:
    """A judge's vote on one human battle, asked in both orders.

    Attributes:
        battle_id: The human vote's `BattleVote.id`.
        judge: The judge's spec as given.
        protocol: The pairwise protocol's name (``lmmprobe-pairwise``).
        version: The protocol's version.
        sees_image: Whether the judge was sent the sample's image(s).
        key_first: Store key of the judge's reply with A shown first.
        key_swapped: Store key of the judge's reply with B shown first.
        first: The verdict with A first: ``A``, ``B``, ``tie``, or None (unreadable).
        swapped: The swapped order's verdict in terms of the answers, or None.
        winner: The combined vote as a battle winner (``a``, ``b``, ``tie``); None: unjudged.
        reason: Why the battle is unjudged, when it is.

    """

    battle_id: int
    judge: str
    protocol: str
    version: str
    sees_image: bool
    key_first: str | None
    key_swapped: str | None
    first: str | None
    swapped: str | None
    winner: str | None
    reason: str | None


_JUDGE_VOTE_COLUMNS = (
    "battle_id, judge, protocol, version, sees_image, key_first, key_swapped, first, swapped, "
    "winner, reason"
)
# As `list_judge_votes` reads them: the reason measured in SQL (`within_cap`, `over_cap`).
_JUDGE_VOTE_READ = (
    _JUDGE_VOTE_COLUMNS.replace("reason", within_cap("reason")) + f", {over_cap('reason')}"
)


def put_judge_votes(store: Store, votes: Collection[JudgeVote]) -> None:
    """Store a judge's votes in one transaction.

    A vote replaces the stored one of the same battle, judge, protocol, version and image
    setting (the judge asked again). The judge's spec is recorded with its secrets redacted
    (`Store.recorded_spec`), as the store records every spec.
    """
    now = time.time()
    rows = [
        (
            v.battle_id, store.recorded_spec(v.judge), v.protocol, v.version, int(v.sees_image), v.key_first,
            v.key_swapped, v.first, v.swapped, v.winner, capped(v.reason), now,
        )
        for v in votes
    ]  # fmt: skip
    with store.transaction(doing="storing a judge's votes on the arena's battles") as c:
        c.executemany(
            f"INSERT OR REPLACE INTO judge_votes ({_JUDGE_VOTE_COLUMNS}, created_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )


def list_judge_votes(store: Reader, *, judge: str | None = None) -> list[JudgeVote]:
    """Stored judge votes (of one judge, or all), by battle then judge.

    `judge` is a spec as given or as recorded (`put_judge_votes` redacts it alike).
    """
    sql = f"SELECT {_JUDGE_VOTE_READ} FROM judge_votes"
    args: list[Any] = []
    if judge is not None:
        sql += " WHERE judge = ?"
        args.append(redact_spec(judge))
    rows = _conn(store).execute(sql + " ORDER BY battle_id, judge, protocol, version", args)
    out: list[JudgeVote] = []
    for b, j, p, v, img, kf, ks, f, s, w, r, found in rows:
        if found is not None:  # measured in SQL: the text itself never came here
            raise StoreDamagedError(past_cap(f"{_where(store)}: {j}'s vote on battle {b}", found))
        out.append(JudgeVote(b, j, p, v, bool(img), kf, ks, f, s, w, r))
    return out
