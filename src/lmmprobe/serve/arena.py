"""The arena: HEMM's human evaluation, battle by battle, with a live Elo leaderboard.

A rater enters a name (kept in their server-side session), then sees one sample of a stored
run (its images and the prompt the models were sent) and two models' raw answers to it, as
"A" and "B" in random order, and votes A, B, tie or both bad. Only after the vote does the
reveal page name the two models. Which battle comes next is `lmmprobe.serve.pairs.draw_battle`
(least-voted pair of models, then least-voted sample, never one the rater has voted on).

The leaderboard is `lmmprobe.metrics.elo.elo_table` over the stored votes in the order stored,
the very function ``lmmprobe elo`` runs on the file ``lmmprobe arena export`` writes, so the
two agree to the last digit. ``tie`` and ``both_bad`` both count as a tie, as HEMM and
FastChat count ``tie (bothbad)``.

The vote page and its JSON name neither the models nor the run and sample (either would lead
to the run's pages, which name the models): the sample's images are served by the battle's
opaque id, ``/arena/images/{battle}/{i}``, which only the rater's session resolves. The reveal
names all of them.

Runs are not pooled unasked: the run selector (``/arena/runs``, linked from every arena
page; ``POST /arena/api/runs`` for scripts) scopes a session's battles to chosen runs, and the
leaderboard counts the votes of the same runs (``/arena/leaderboard?run=ID&run=ID`` names
them; without ``run`` it takes the session's), as ``lmmprobe arena export --run ID`` does. Two
answers that read the same are never offered (`lmmprobe.serve.pairs`); an empty answer shows
as "(empty answer)".

Pages: ``/arena`` (vote), ``/arena/reveal``, ``/arena/runs``, ``/arena/leaderboard``. JSON for
scripts and load tests: ``GET /arena/api/session``, ``POST /arena/api/rater``,
``GET``/``POST /arena/api/runs``, ``GET /arena/api/battle``, ``POST /arena/api/vote``,
``GET /arena/api/leaderboard``. Every POST needs the session's CSRF token
(`lmmprobe.serve.security`).
"""

from __future__ import annotations

import random
import secrets
import shlex
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Body, FastAPI, Form, HTTPException, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from lmmprobe.metrics.elo import WIN_RATE_DEFINITIONS, Battle, EloTooLargeError, elo_table
from lmmprobe.serve import _pages, frames
from lmmprobe.serve import images as serve_images
from lmmprobe.serve.pairs import Catalog, Draw, Pair, SeenKey, Tally, draw_battle
from lmmprobe.serve.security import Session, session
from lmmprobe.store import Store, StoreError, queries
from lmmprobe.store import battles as store_battles
from lmmprobe.store.queries import Readers

__all__ = ["LEADERBOARD_SETTINGS", "TIE_NOTE", "Arena", "arena_of", "router", "start", "stop"]

router = APIRouter()

LEADERBOARD_SETTINGS: dict[str, Any] = {"k": 4.0, "shuffles": 1000, "seed": 0, "win_rate": "hemm"}
"""The leaderboard's Elo settings: HEMM's, and ``lmmprobe elo``'s defaults."""
TIE_NOTE = (
    "A tie and a 'both bad' vote both count as a tie (0.5 each), as HEMM and FastChat count "
    "Chatbot Arena's 'tie (bothbad)'; the export keeps the vote itself in its 'vote' field."
)
"""Shown on the leaderboard and written into the docs of the export."""
VOTE_LABELS = {"a": "A is better", "b": "B is better", "tie": "Tie", "both_bad": "Both are bad"}

_INDEX_CHECK_S = 2.0  # how often the runs table is checked for new or changed runs
_DRAW_TRIES = 8  # draws refused because another thread took the battle first, then 503
_PENDING_TTL_S = 15 * 60.0  # a battle handed out and never voted on stops counting after this
_BOARDS = 32  # leaderboards of distinct run scopes kept computed

Scope = frozenset[str] | None
"""The runs a rater draws battles from and a leaderboard counts votes of; None: every run."""


@dataclass
class _Pending:
    """A battle handed to a session, not yet voted on."""

    id: str
    draw: Draw
    rater: str
    at: float = field(default_factory=time.time)


class Arena:
    """Per-app arena state: the runs' models, the vote tally, battles handed out, the board.

    Reads go through the app's pool of read-only connections; votes are written by one
    thread that owns the app's only writing `Store` (SQLite has one writer at a time anyway).
    That store is opened, and the file's integrity checked, in that thread as soon as the
    arena is made, so no vote waits for the check unless it comes first; `close` closes it.

    Args:
        db_path: The store file.
        readers: The app's read-only connection pool.
        seed: Seed of the draws' tie-breaks and sides (with the rater and their vote count).

    """

    def __init__(self, db_path: Path, readers: Readers, *, seed: int = 0) -> None:
        self.db_path = db_path
        self.readers = readers
        self.seed = seed
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lmmprobe-arena-votes")
        self._store: Store | None = None  # opened and used in the writer thread only
        self._opening = self._writer.submit(self._open)
        self._lock = threading.Lock()  # guards the tally and the battles handed out
        self.catalog = Catalog()
        self._catalog_checked = 0.0
        self._catalog_lock = threading.Lock()
        self._tally = Tally()
        # (rater, scope) -> (catalog generation, pairs with nothing left for them)
        self._closed: dict[tuple[str, Scope], tuple[int, set[Pair]]] = {}
        self._catalog_gen = 0
        self._pending: dict[str, _Pending] = {}  # session id -> battle
        self._board_lock = threading.Lock()
        self._boards: dict[Scope, dict[str, Any]] = {}  # scope -> its last board

    def _open(self) -> None:
        """Open the writing store and check the file; runs in the writer thread."""
        store = Store(self.db_path)
        try:
            store.check_integrity()
        except BaseException:
            store.close()
            raise
        self._store = store

    def _record(self, **vote: Any) -> store_battles.BattleVote:
        """Store a vote; runs in the writer thread."""
        if self._store is None:
            self._open()  # the first open failed (locked, damaged): try again, say why
        assert self._store is not None
        return store_battles.record_vote(self._store, **vote)

    def close(self) -> None:
        """Close the writing store (after the votes already queued); the arena stays readable."""

        def shut() -> None:
            if self._store is not None:
                self._store.close()
                self._store = None

        self._writer.submit(shut).result()
        self._writer.shutdown(wait=True)

    def refresh(self) -> Catalog:
        """The runs' models, re-read when a run changed (checked every 2 s, off the lock)."""
        now = time.monotonic()
        if now - self._catalog_checked < _INDEX_CHECK_S:
            return self.catalog
        with self._catalog_lock:
            if now - self._catalog_checked >= _INDEX_CHECK_S:
                with self.readers.connection() as conn:
                    before = self.catalog.pairs()
                    self.catalog.refresh(conn)
                    if self.catalog.pairs() != before:
                        self._catalog_gen += 1  # new battles: pairs closed to raters reopen
                self._catalog_checked = time.monotonic()
        return self.catalog

    def current(self, sess: Session, rater: str, runs: Scope = None) -> _Pending | None:
        """The session's undecided battle, or a new one drawn for it (None: all seen).

        The draw reads the store outside the lock (draws of many raters run side by side);
        under the lock, a battle the same rater took meanwhile in another browser is refused
        and drawn again. `runs` is the session's scope: battles of these runs only (None: of
        every run); a battle held from outside it is given back.
        """
        catalog = self.refresh()
        for _ in range(_DRAW_TRIES):
            with self._lock:
                held = self._pending.get(sess.id)
                now = time.time()
                if (
                    held is not None
                    and held.rater == rater
                    and now - held.at < _PENDING_TTL_S
                    and (runs is None or held.draw.run_id in runs)
                ):
                    return held
                for sid, other in list(self._pending.items()):
                    if now - other.at >= _PENDING_TTL_S or sid == sess.id:
                        del self._pending[sid]  # abandoned: stop counting it
                pending = list(self._pending.values())
                with self.readers.connection() as conn:
                    self._tally.sync(conn)
                gen, closed = self._closed.get((rater, runs), (-1, set()))
                closed = set(closed) if gen == self._catalog_gen else set()
                gen = self._catalog_gen
            drawn, closed = self._draw(catalog, rater, pending, closed, runs)
            with self._lock:
                self._closed[(rater, runs)] = (gen, closed)
                if drawn is None:
                    return None
                before = {id(p) for p in pending}
                taken = {p.draw.seen_key for p in self._pending.values() if p.rater == rater} | {
                    p.draw.key for p in self._pending.values() if id(p) not in before
                }
                if drawn.seen_key in taken or drawn.key in taken:
                    continue  # drawn meanwhile for this rater, or for someone else: again
                held = _Pending(secrets.token_urlsafe(16), drawn, rater)
                self._pending[sess.id] = held
                return held
        raise HTTPException(503, "too many raters drew at once; open /arena again")

    def _draw(
        self,
        catalog: Catalog,
        rater: str,
        pending: list[_Pending],
        closed: set[Pair],
        runs: Scope,
    ) -> tuple[Draw | None, set[Pair]]:
        """Draw for `rater` given the battles handed out (reads only; no lock held)."""
        with self.readers.connection() as conn:
            mine = store_battles.list_votes(conn, rater=rater)
            seen: set[SeenKey] = set()
            seen_answers: set[tuple[str, str]] = set()
            for v in mine:
                low, high = sorted((v.model_a, v.model_b))
                seen.add((v.run_id, v.sample_id, low, high))
                seen_answers.add((min(v.key_a, v.key_b), max(v.key_a, v.key_b)))
            for other in pending:
                if other.rater == rater:  # the same name in another browser
                    seen.add(other.draw.seen_key)
                    seen_answers.add(other.draw.answers)
            rng = random.Random(f"{self.seed}|{rater}|{len(mine)}")
            drawn = draw_battle(
                conn,
                catalog,
                self._tally,
                seen=seen,
                seen_answers=seen_answers,
                pending=[p.draw for p in pending],
                rng=rng,
                closed=closed,
                runs=runs,
            )
        return drawn, closed

    def vote(
        self, sess: Session, rater: str, battle_id: str, vote: str
    ) -> store_battles.BattleVote:
        """Store the vote on the session's current battle (committed when this returns).

        Raises:
            HTTPException: 409 when the battle is not the session's current one (voted on
                already, or drawn again since), 400 for an unknown vote.

        """
        if vote not in store_battles.VOTES:
            raise HTTPException(400, f"vote must be one of {', '.join(store_battles.VOTES)}")
        with self._lock:
            held = self._pending.get(sess.id)
            if held is None or held.id != battle_id or held.rater != rater:
                raise HTTPException(
                    409, "this battle is no longer yours to vote on: open /arena for the next one"
                )
            del self._pending[sess.id]
        d = held.draw
        try:
            return self._writer.submit(
                self._record,
                rater=rater,
                run_id=d.run_id,
                sample_id=d.sample_id,
                repeat=d.repeat,
                model_a=d.model_a,
                model_b=d.model_b,
                key_a=d.key_a,
                key_b=d.key_b,
                vote=vote,
            ).result()
        except store_battles.DuplicateVoteError as exc:
            raise HTTPException(409, str(exc)) from exc
        except StoreError as exc:
            with self._lock:  # not stored: the rater may vote on it again
                self._pending.setdefault(sess.id, held)
            raise HTTPException(503, str(exc)) from exc

    def leaderboard(self, runs: Scope = None) -> dict[str, Any]:
        """The leaderboard over the stored votes, with ``votes_stored`` (the count now).

        `runs` scopes it to the votes on those runs' answers (None: every vote); ``runs`` in
        the answer says which (null: all). Recomputed only when a vote was added. 1,000
        shuffled replays take seconds once there are thousands of votes, so one computation
        runs at a time: while it runs, other requests get the last board (its ``votes`` says
        how many votes it covers, and ``updating`` is true); the first request after the
        votes stop gets the exact one.
        """
        with self.readers.connection() as conn:
            count, last = store_battles.vote_stamp(conn, runs)
        board = self._boards.get(runs)
        if board is not None and board["stamp"] == [count, last]:
            return {**board, "votes_stored": count, "updating": False}
        if not self._board_lock.acquire(blocking=board is None):
            assert board is not None
            return {**board, "votes_stored": count, "updating": True}
        try:
            board = self._boards.get(runs)
            if board is None or board["stamp"] != [count, last]:
                with self.readers.connection() as conn:
                    votes = store_battles.list_votes(conn, runs=runs)
                try:
                    board = _board_of(votes)
                except EloTooLargeError as exc:
                    raise HTTPException(413, _too_large(len(votes), exc)) from None
                board["runs"] = None if runs is None else sorted(runs)
                if len(self._boards) >= _BOARDS:
                    self._boards.pop(next(iter(self._boards)))  # the oldest scope's
                self._boards[runs] = board
        finally:
            self._board_lock.release()
        return {**board, "votes_stored": board["votes"], "updating": False}


def _too_large(votes: int, exc: EloTooLargeError) -> str:
    """Why a leaderboard of `votes` votes is not computed, and how to rate them instead."""
    return (
        f"the leaderboard of these {votes:,} votes is too large to compute here: {exc}; show "
        "the votes of some runs (?run=ID), or rate them all offline: lmmprobe arena export -o "
        f"votes.jsonl, then lmmprobe elo votes.jsonl --shuffles {exc.fit}"
    )


def _board_of(votes: list[store_battles.BattleVote]) -> dict[str, Any]:
    """The leaderboard of these votes, in the order stored: `elo_table` and the vote counts."""
    battles = [Battle(v.model_a, v.model_b, v.winner) for v in votes]
    rows = elo_table(battles, **LEADERBOARD_SETTINGS) if battles else []
    counts: dict[str, int] = dict.fromkeys(store_battles.VOTES, 0)
    for v in votes:
        counts[v.vote] += 1
    return {
        "stamp": [len(votes), votes[-1].id if votes else None],
        "votes": len(votes),
        "vote_counts": counts,
        "raters": len({v.rater for v in votes}),
        "settings": {**LEADERBOARD_SETTINGS, "initial": 1000.0, "scale": 400.0, "base": 10.0},
        "columns": {
            "elo": "median Elo over 1,000 seeded shuffles of the votes (HEMM)",
            "win_rate": WIN_RATE_DEFINITIONS["hemm"],
            "win_rate_over_opponents_met": WIN_RATE_DEFINITIONS["met"],
        },
        "tie_note": TIE_NOTE,
        "models": rows,
        "computed_at": time.time(),
    }


_ARENA_LOCK = threading.Lock()


def arena_of(request: Request) -> Arena:
    """The app's `Arena`, made on first use from ``app.state.db_path`` and ``readers``."""
    found = getattr(request.app.state, "arena", None)
    if isinstance(found, Arena):
        return found
    return start(request.app)


def start(app: FastAPI) -> Arena:
    """Make the app's arena now (call at startup): its writing store opens in the background.

    Args:
        app: The app, with ``state.db_path`` and ``state.readers`` set.

    Returns:
        The arena.

    """
    with _ARENA_LOCK:
        found = getattr(app.state, "arena", None)
        if found is None:
            found = Arena(Path(app.state.db_path), app.state.readers)
            app.state.arena = found
    assert isinstance(found, Arena)
    return found


def stop(app: FastAPI) -> None:
    """Close the arena's writing store, if the app made an arena (call at shutdown)."""
    with _ARENA_LOCK:
        found = getattr(app.state, "arena", None)
        app.state.arena = None  # a later start (the app served again) makes a fresh one
    if isinstance(found, Arena):
        found.close()


def _rater(request: Request) -> str | None:
    name = session(request).data.get("rater")
    return name if isinstance(name, str) else None


def _set_rater(request: Request, name: str) -> str:
    # Checked before the session keeps it: every page of the session shows the name, so one
    # that cannot be shown (a lone surrogate) would break them all.
    try:
        clean = store_battles.rater_name(name)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    session(request).data["rater"] = clean
    return clean


def _session_scope(request: Request, arena: Arena) -> Scope:
    """The session's chosen runs that still offer battles (None: every run)."""
    chosen = session(request).data.get("arena_runs")
    if not chosen:
        return None
    offered = arena.refresh().runs()
    kept = frozenset(r for r in chosen if r in offered)
    return kept or None


def _set_scope(request: Request, arena: Arena, runs: list[str] | None) -> Scope:
    """Scope the session to `runs` (None or empty: every run), each one a run with battles.

    Raises:
        HTTPException: 400 naming a run that is not stored or has fewer than two models.

    """
    data = session(request).data
    if not runs:
        data.pop("arena_runs", None)
        return None
    offered = arena.refresh().runs()
    for run_id in runs:
        if run_id not in offered:
            raise HTTPException(
                400,
                f"run {run_id!r} offers no battles (not stored, or fewer than two models); "
                f"runs that do: {', '.join(offered) or 'none yet'}",
            )
    data["arena_runs"] = sorted(set(runs))
    return frozenset(runs)


def _query_scope(request: Request, arena: Arena) -> Scope:
    """The leaderboard's runs: ``?run=ID`` (repeatable), ``?all=1`` (all), else the session's.

    Raises:
        HTTPException: 404 naming a run the store does not hold.

    """
    asked = request.query_params.getlist("run")
    if not asked:
        return None if "all" in request.query_params else _session_scope(request, arena)
    with arena.readers.connection() as conn:
        for run_id in asked:
            if conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
                raise _pages.not_found(f"no run {run_id!r} in this store")
    return frozenset(asked)


def _scope_view(arena: Arena, runs: Scope) -> dict[str, Any]:
    """The run selector: the runs offering battles (newest first), which are chosen, a label."""
    offered = arena.refresh().runs()
    with arena.readers.connection() as conn:
        rows = [r for r in queries.list_runs(conn) if r.id in offered]
    choices = [
        {
            "id": r.id,
            "data": r.data or "",
            "models": offered[r.id],
            "created": time.strftime("%Y-%m-%d %H:%M", time.localtime(r.created_at)),
            "chosen": runs is not None and r.id in runs,
        }
        for r in rows
    ]
    if runs is None:
        label = count = f"all {len(choices)} run{'' if len(choices) == 1 else 's'}"
    else:
        label = ", ".join(sorted(runs))
        # The vote page names no run (its page names the models): a count says enough there.
        count = f"{len(runs)} chosen run{'' if len(runs) == 1 else 's'} of {len(choices)}"
    query = "?all=1" if runs is None else "?" + urlencode([("run", r) for r in sorted(runs)])
    export = "" if runs is None else "".join(f" --run {shlex.quote(r)}" for r in sorted(runs))
    return {
        "choices": choices,
        "all": runs is None,
        "label": label,
        "count_label": count,
        "query": query,
        "export_args": export,
    }


_IMAGE_TOKENS = 16  # battles per session whose images stay reachable (the current and recent)


def _battle_view(request: Request, arena: Arena, held: _Pending) -> dict[str, Any]:
    """What the vote page shows: images, prompt, the two answers; never the models.

    Nor the run or the sample: either would lead to the run's pages, which name the models.
    The images are served by the battle's opaque id (``/arena/images/{battle}/{i}``), which
    only this session can resolve.
    """
    d = held.draw
    with arena.readers.connection() as conn:
        texts = store_battles.battle_texts(conn, d.key_a, d.key_b, shown=True)
        recorded = queries.get_sample(conn, d.run_id, d.sample_id) or {}
    a, b = texts.get(d.key_a), texts.get(d.key_b)
    if a is None or b is None:
        raise HTTPException(410, "an answer of this battle is no longer stored; open /arena again")
    n_images = len(recorded.get("images") or [])
    shown: dict[str, tuple[str, str]] = session(request).data.setdefault("battle_images", {})
    shown.pop(held.id, None)
    shown[held.id] = (d.run_id, d.sample_id)
    while len(shown) > _IMAGE_TOKENS:
        del shown[next(iter(shown))]  # the oldest battle's images
    return {
        "battle": held.id,
        "images": [f"/arena/images/{held.id}/{i}" for i in range(n_images)],
        # A video's frames, by the battle's id too (the file name is left out: it may name
        # the sample, and through it the run).
        "strips": [
            {**strip, "name": None} for strip in frames.strips(recorded, f"/arena/frames/{held.id}")
        ],
        "prompt": a["prompt"],
        "prompt_b": b["prompt"] if b["prompt"] != a["prompt"] else None,
        "answer_a": a["text"],
        "answer_b": b["text"],
    }


def _votes_by(arena: Arena, rater: str) -> int:
    with arena.readers.connection() as conn:
        return store_battles.count_votes(conn, rater=rater)


def _reveal_view(arena: Arena, vote: store_battles.BattleVote) -> dict[str, Any]:
    with arena.readers.connection() as conn:
        texts = store_battles.battle_texts(conn, vote.key_a, vote.key_b, shown=True)
    return {
        "id": vote.id,
        "run_id": vote.run_id,
        "sample_id": vote.sample_id,
        "repeat": vote.repeat,
        "model_a": vote.model_a,
        "model_b": vote.model_b,
        "vote": vote.vote,
        "vote_label": VOTE_LABELS[vote.vote],
        "winner": vote.winner,
        "prompt": texts.get(vote.key_a, {}).get("prompt"),
        "answer_a": texts.get(vote.key_a, {}).get("text"),
        "answer_b": texts.get(vote.key_b, {}).get("text"),
    }


# -- pages ----------------------------------------------------------------------------------


@router.get("/arena", include_in_schema=False)
def arena_page(request: Request) -> Response:
    """The vote page (or the name form, or the page saying every battle has been seen)."""
    rater = _rater(request)
    if rater is None:
        return _pages.render(
            request, "arena_rater.html", {"max_chars": store_battles.MAX_RATER_CHARS}
        )
    arena = arena_of(request)
    runs = _session_scope(request, arena)
    held = arena.current(session(request), rater, runs)
    scope = _scope_view(arena, runs)
    if held is None:
        return _pages.render(
            request,
            "arena_done.html",
            {
                "rater": rater,
                "votes": _votes_by(arena, rater),
                "models": arena.catalog.models_in(runs),
                "scope": scope,
            },
        )
    return _pages.render(
        request,
        "arena.html",
        {
            "rater": rater,
            "b": _battle_view(request, arena, held),
            "labels": VOTE_LABELS,
            "scope": scope,
        },
    )


@router.get("/arena/runs", include_in_schema=False)
def arena_runs_page(request: Request) -> Response:
    """The run selector: which runs battles come from (and the leaderboard counts)."""
    arena = arena_of(request)
    return _pages.render(
        request,
        "arena_runs.html",
        {"rater": _rater(request), "scope": _scope_view(arena, _session_scope(request, arena))},
    )


@router.post("/arena/runs", include_in_schema=False)
def arena_runs(
    request: Request,
    run: Annotated[list[str] | None, Form()] = None,
    scope: Annotated[str, Form()] = "chosen",
) -> Response:
    """Choose the runs battles come from (the run selector); ``scope=all``: every run."""
    _set_scope(request, arena_of(request), None if scope == "all" else run)
    return RedirectResponse("/arena", status_code=303)


@router.post("/arena/rater", include_in_schema=False)
async def arena_rater(request: Request) -> Response:
    """Set (or change) the session's rater name, then go to the vote page."""
    _set_rater(request, await _form_text(request, "name"))
    return RedirectResponse("/arena", status_code=303)


async def _form_text(request: Request, field: str) -> str:
    r"""The form field `field` of `request` as sent ("" if absent), its bad UTF-8 kept visible.

    A form decoder reads bytes that are no UTF-8 (``name=%ED%A0%80``, an encoded lone
    surrogate) as U+FFFD, so a name would be stored as marks the rater never typed. Here an
    encoded surrogate is read as the surrogate it encodes and any other bad byte as a lone
    surrogate too (``surrogateescape``), which `store_battles.rater_name` refuses in the words
    the JSON endpoint uses for ``"\ud800"``. A multipart form is read as the app reads it.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        value = (await request.form()).get(field, "")
        return value if isinstance(value, str) else ""
    # Latin-1 maps each byte to one character, so the field's bytes come back exactly.
    body = (await request.body()).decode("latin-1")
    for key, value in parse_qsl(body, keep_blank_values=True, encoding="latin-1"):
        if key == field:
            raw = value.encode("latin-1")
            try:
                return raw.decode("utf-8", "surrogatepass")
            except UnicodeDecodeError:
                return raw.decode("utf-8", "surrogateescape")
    return ""


@router.post("/arena/leave", include_in_schema=False)
def arena_leave(request: Request) -> Response:
    """Forget the session's rater (another person takes the seat)."""
    session(request).data.pop("rater", None)
    session(request).data.pop("revealed", None)
    session(request).data.pop("revealed_battle", None)
    return RedirectResponse("/arena", status_code=303)


@router.post("/arena/vote", include_in_schema=False)
def arena_vote(
    request: Request,
    battle: Annotated[str, Form()] = "",
    vote: Annotated[str, Form()] = "",
) -> Response:
    """Store a vote from the vote page's form and show the reveal."""
    rater = _rater(request)
    if rater is None:
        return RedirectResponse("/arena", status_code=303)
    data = session(request).data
    if battle and battle == data.get("revealed_battle"):
        # The same form sent twice (a double click): the first vote stands; show its reveal.
        return RedirectResponse("/arena/reveal", status_code=303)
    stored = arena_of(request).vote(session(request), rater, battle, vote)
    data["revealed"], data["revealed_battle"] = stored, battle
    return RedirectResponse("/arena/reveal", status_code=303)


@router.get("/arena/reveal", include_in_schema=False)
def arena_reveal(request: Request) -> Response:
    """Which models the rater's last vote was between (only after the vote)."""
    stored = session(request).data.get("revealed")
    if not isinstance(stored, store_battles.BattleVote):
        return RedirectResponse("/arena", status_code=303)
    arena = arena_of(request)
    return _pages.render(
        request,
        "arena_reveal.html",
        {
            "rater": _rater(request),
            "r": _reveal_view(arena, stored),
            "votes_by_rater": _votes_by(arena, stored.rater),
            "scope": _scope_view(arena, _session_scope(request, arena)),
        },
    )


@router.get("/arena/leaderboard", include_in_schema=False)
def arena_leaderboard(request: Request) -> Response:
    """The live leaderboard of ``?run=ID`` (repeatable), else of the session's runs.

    The table refreshes itself from the JSON endpoint, asked for the same runs.
    """
    arena = arena_of(request)
    runs = _query_scope(request, arena)
    return _pages.render(
        request,
        "arena_leaderboard.html",
        {"board": arena.leaderboard(runs), "scope": _scope_view(arena, runs)},
    )


@router.get("/arena/images/{battle}/{index}", include_in_schema=False)
def arena_image(request: Request, battle: str, index: str) -> Response:
    """An image of one of this session's battles, by the battle's opaque id."""
    shown = session(request).data.get("battle_images") or {}
    where = shown.get(battle)
    if where is None:
        raise _pages.not_found("no such image: open /arena for the current battle")
    run_id, sample_id = where
    return serve_images.image(request, run_id, sample_id, index)


@router.get("/arena/frames/{battle}/{index}", include_in_schema=False)
def arena_frame(
    request: Request, battle: str, index: str, p: str = "0", size: str = "thumb"
) -> Response:
    """A video frame of one of this session's battles, by the battle's opaque id."""
    shown = session(request).data.get("battle_images") or {}
    where = shown.get(battle)
    if where is None:
        raise _pages.not_found("no such frame: open /arena for the current battle")
    run_id, sample_id = where
    with _pages.connection(request) as conn:
        recorded = queries.get_sample(conn, run_id, sample_id)
    return frames.frame_response(request, recorded, index, p, size)


_SCRIPT = Path(__file__).with_name("templates") / "arena_leaderboard.js"


@router.get("/arena/leaderboard.js", include_in_schema=False)
def arena_leaderboard_script() -> Response:
    """The leaderboard's polling script (a file: the pages allow no inline script)."""
    return Response(
        _SCRIPT.read_text(encoding="utf-8"),
        media_type="text/javascript",
        headers={"cache-control": "no-cache"},
    )


# -- JSON ------------------------------------------------------------------------------------


@router.get("/arena/api/session")
def api_session(request: Request) -> dict[str, Any]:
    """The session's rater (or null) and its CSRF token, for scripts and API clients."""
    return {"rater": _rater(request), "csrf_token": session(request).csrf_token}


@router.get("/arena/api/runs")
def api_runs_chosen(request: Request) -> dict[str, Any]:
    """The session's runs (null: all) and the runs that offer battles, with their models."""
    arena = arena_of(request)
    runs = _session_scope(request, arena)
    return {"runs": None if runs is None else sorted(runs), "offered": arena.refresh().runs()}


@router.post("/arena/api/runs")
def api_runs(
    request: Request, runs: Annotated[list[str] | None, Body(embed=True)] = None
) -> dict[str, Any]:
    """Choose the runs battles come from (null or []: every run)."""
    chosen = _set_scope(request, arena_of(request), runs)
    return {"runs": None if chosen is None else sorted(chosen)}


@router.post("/arena/api/rater")
def api_rater(request: Request, name: Annotated[str, Body(embed=True)]) -> dict[str, Any]:
    """Set the session's rater name."""
    return {"rater": _set_rater(request, name)}


@router.get("/arena/api/battle")
def api_battle(request: Request) -> Response:
    """The session's current battle (the same one until it is voted on); 204 when none is left."""
    rater = _rater(request)
    if rater is None:
        raise HTTPException(409, "set a rater name first (POST /arena/api/rater)")
    arena = arena_of(request)
    held = arena.current(session(request), rater, _session_scope(request, arena))
    if held is None:
        return Response(status_code=204)
    return JSONResponse(_battle_view(request, arena, held))


@router.post("/arena/api/vote")
def api_vote(
    request: Request,
    battle: Annotated[str, Body()],
    vote: Annotated[str, Body()],
) -> dict[str, Any]:
    """Vote on the current battle; the answer names its two models (the reveal)."""
    rater = _rater(request)
    if rater is None:
        raise HTTPException(409, "set a rater name first (POST /arena/api/rater)")
    arena = arena_of(request)
    stored = arena.vote(session(request), rater, battle, vote)
    data = session(request).data
    data["revealed"], data["revealed_battle"] = stored, battle
    return _reveal_view(arena, stored)


@router.get("/arena/api/leaderboard")
def api_leaderboard(request: Request) -> dict[str, Any]:
    """The leaderboard: `elo_table` rows over the votes of some runs, with its settings.

    The runs are ``?run=ID`` (repeatable), else the session's, else every run; ``runs`` in the
    answer names them (null: all).
    """
    arena = arena_of(request)
    return arena.leaderboard(_query_scope(request, arena))
