"""Shared helpers of the arena and security tests (no tests here).

A store gets its battles the way a user's does: `lmmprobe.api.evaluate` runs the demo with
baselines that answer differently, and a second run with hostile model names and answers is
written through the store's own API (the runner never makes such names).
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from lmmprobe.api import evaluate
from lmmprobe.schema import ContentPart, Message, Request, Response, Score
from lmmprobe.serve.app import create_app
from lmmprobe.store import Store

MODELS = ["random", "first", "random,seed=3", "random,seed=7"]
"""Four demo baselines: six pairs of models."""
DEMO_SAMPLES = 6
"""Demo samples per run: 6 samples x 6 pairs = 36 battles."""

HOSTILE_MODELS = ['<script>alert("m1")</script>', 'm2"><img src=x onerror=alert(2)>']
HOSTILE_ANSWERS = ["<img src=x onerror=alert(3)>", "</pre><script>alert(4)</script>&amp;"]
HOSTILE_PROMPT = "What is <b>this</b>? </pre><script>alert(5)</script>"
HOSTILE_RUN = "hostile-run"


def build_demo_store(folder: Path) -> Path:
    """A store with one demo run of the four baselines (36 battles); returns its path."""
    db = folder / "arena.db"
    evaluate(models=MODELS, limit=DEMO_SAMPLES, db=str(db), out=str(folder / "out"))
    return db


def offered_battles(db: Path) -> set[tuple[str, str, int, str, str]]:
    """The battles the arena may offer, found here without its code: ``(run, sample, repeat,
    m1, m2)`` with m1 < m2 where both answered with text that reads differently (the demo's
    baselines sometimes give the same answer, and such a pair is never offered)."""
    with Store(db) as store:
        rows = store.conn.execute(
            "SELECT s.run_id, s.sample_id, s.repeat, s.model, r.text FROM scores s "
            "JOIN responses r ON r.key = s.key WHERE r.text IS NOT NULL AND r.error_type IS NULL"
        ).fetchall()
    answers: dict[tuple[str, str, int], dict[str, str]] = {}
    for run_id, sample_id, repeat, model, text in rows:
        answers.setdefault((run_id, sample_id, int(repeat)), {})[model] = text
    return {
        (*item, low, high)
        for item, by_model in answers.items()
        for low, high in itertools.combinations(sorted(by_model), 2)
        if by_model[low].strip() != by_model[high].strip()
    }


def copy_store(db: Path, folder: Path) -> Path:
    """A private copy of a closed store (tests vote into their own copy)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / db.name
    shutil.copyfile(db, target)
    return target


def add_hostile_run(db: Path, samples: int = 2) -> None:
    """Add a run whose two models' names, answers and prompts are HTML/JS payloads."""
    with Store(db) as store:
        store.create_run(HOSTILE_RUN, {"data": "hostile", "models": HOSTILE_MODELS}, str(db.parent))
        for model, answer in zip(HOSTILE_MODELS, HOSTILE_ANSWERS, strict=True):
            requests, responses, scores = [], [], []
            for i in range(samples):
                key = f"hostile-{HOSTILE_MODELS.index(model)}-{i}"
                requests.append(
                    Request(
                        key=key,
                        sample_id=f"h{i}",
                        method="generate",
                        messages=[
                            Message(
                                role="user", content=[ContentPart(type="text", text=HOSTILE_PROMPT)]
                            )
                        ],
                        prompt=HOSTILE_PROMPT,
                    )
                )
                responses.append(Response(key=key, text=answer))
                scores.append(
                    Score(
                        model=model,
                        sample_id=f"h{i}",
                        repeat=0,
                        key=key,
                        stage="unparsed",
                        gold=["x"],
                        gold_text="x",
                    )
                )
            store.put_responses(model, requests, responses)
            store.put_scores(HOSTILE_RUN, scores)
        store.update_run(HOSTILE_RUN, status="done")


def client_for(db: Path, **kwargs: Any) -> TestClient:
    """A TestClient of the real app, addressed to 127.0.0.1 as a browser on this machine is."""
    return TestClient(create_app(db, **kwargs), base_url="http://127.0.0.1")


def csrf_of(client: TestClient) -> str:
    """The session's CSRF token, as a script reads it."""
    r = client.get("/arena/api/session")
    r.raise_for_status()
    return str(r.json()["csrf_token"])


def start_rater(client: TestClient, name: str) -> str:
    """Set the rater name through the JSON API; returns the CSRF token."""
    token = csrf_of(client)
    r = client.post("/arena/api/rater", json={"name": name}, headers={"X-CSRF-Token": token})
    r.raise_for_status()
    return token


def vote_once(client: TestClient, token: str, vote: str = "a") -> dict[str, Any] | None:
    """Draw the current battle and vote on it; the reveal, or None when none is left."""
    r = client.get("/arena/api/battle")
    if r.status_code == 204:
        return None
    r.raise_for_status()
    battle = r.json()
    v = client.post(
        "/arena/api/vote",
        json={"battle": battle["battle"], "vote": vote},
        headers={"X-CSRF-Token": token},
    )
    v.raise_for_status()
    return {"battle": battle, "reveal": v.json()}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(app: FastAPI) -> tuple[uvicorn.Server, threading.Thread, str] | None:
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive():
            return None  # the port was taken meanwhile
        if time.monotonic() > deadline:
            raise RuntimeError(f"uvicorn did not start on port {port}")
        time.sleep(0.02)
    return server, thread, f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """Run `app` with uvicorn on a free loopback port in a thread; yields its base URL."""
    for _ in range(3):  # another process may take the free port before uvicorn binds it
        started = _start(app)
        if started is not None:
            break
    else:
        raise RuntimeError("uvicorn could not bind a free loopback port three times")
    server, thread, base = started
    try:
        # Up means answering (a server with a token answers 401 here).
        assert httpx.get(base + "/arena/api/session", timeout=5).status_code in (200, 401)
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def copy_the_vote(db: Path, copies: int) -> None:
    """`copies` more of the store's first vote, each by another rater (the vote's unique key).

    A store of many votes in a second (an arena past what one rating replays), written as the
    store holds them: rows of its ``battles`` table.
    """
    conn = sqlite3.connect(db)
    try:
        columns = "created_at, run_id, sample_id, repeat, model_a, model_b, key_a, key_b, vote"
        row = conn.execute(f"SELECT {columns} FROM battles ORDER BY id LIMIT 1").fetchone()
        with conn:
            conn.executemany(
                f"INSERT INTO battles (rater, {columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                ((f"rater{i}", *row) for i in range(copies)),
            )
    finally:
        conn.close()
