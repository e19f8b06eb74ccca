"""The arena offers only battles worth a vote, shows an empty answer as such, and counts only
the runs a rater chose: through the real app served on loopback, and `lmmprobe arena export`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lmmprobe.metrics.elo import Battle, elo_table, load_battles
from lmmprobe.serve.app import create_app
from lmmprobe.store import Store

from .conftest import Row, choice_sample, write_run
from .test_arena_support import serving

LMMPROBE = str(Path(sys.executable).with_name("lmmprobe"))

# Models "m1" and "m2" answer sample i with M1[i] and M2[i]: the same, the same but for the
# blanks around it, one empty, both empty or blank.
M1 = ["(A) red", "(A) red", "(A) red", "(B) green", "(A) red", "(A) red", "\n", ""]
M2 = ["(A) red", "  (A) red\n", "", "(C) blue", "(B) green", "   ", " ", ""]
DIFFERENT = {"s002", "s003", "s004", "s005"}  # an empty answer differs from a non-empty one
"""The samples whose two answers read differently: the only battles the arena may offer."""


def _store(db: Path) -> None:
    samples = [choice_sample(i) for i in range(len(M1))]
    rows = [Row("m1", s, t, None, None, stage="unparsed") for s, t in zip(samples, M1, strict=True)]
    rows += [
        Row("m2", s, t, None, None, stage="unparsed") for s, t in zip(samples, M2, strict=True)
    ]
    with Store(db) as store:
        write_run(store, "run-x", ["m1", "m2"], samples, rows)
        # A second run on other data, with another model: the pool the user may not want.
        other = [choice_sample(i, question=f"Count the dots in {i}") for i in range(10, 14)]
        more = [Row("m1", s, f"m1 says {s.id}", None, None, stage="unparsed") for s in other]
        more += [Row("m3", s, f"m3 says {s.id}", None, None, stage="unparsed") for s in other]
        write_run(store, "run-y", ["m1", "m3"], other, more)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[httpx.Client, Path]]:
    db = tmp_path / "arena.db"
    _store(db)
    with serving(create_app(db)) as base, httpx.Client(base_url=base, timeout=30) as client:
        yield client, db


def _rater(client: httpx.Client, name: str) -> str:
    token = str(client.get("/arena/api/session").json()["csrf_token"])
    r = client.post("/arena/api/rater", json={"name": name}, headers={"X-CSRF-Token": token})
    r.raise_for_status()
    return token


def _vote_all(client: httpx.Client, token: str) -> list[dict[str, Any]]:
    """Draw and vote (always A) until no battle is left; each battle with its reveal."""
    seen = []
    for _ in range(100):
        r = client.get("/arena/api/battle")
        if r.status_code == 204:
            return seen
        battle = r.json()
        if not battle["answer_a"].strip() or not battle["answer_b"].strip():
            page = client.get("/arena").text  # the same battle, as the rater sees it
            assert page.count("(empty answer)") == 1, page
            assert '<pre class="arena-text"></pre>' not in page
        v = client.post(
            "/arena/api/vote",
            json={"battle": battle["battle"], "vote": "a"},
            headers={"X-CSRF-Token": token},
        )
        v.raise_for_status()
        seen.append({**battle, **v.json()})
    raise AssertionError("the arena never ran out of battles")


def test_identical_answers_are_never_offered_and_an_empty_one_says_so(served) -> None:
    client, _ = served
    token = _rater(client, "ana")
    r = client.post("/arena/api/runs", json={"runs": ["run-x"]}, headers={"X-CSRF-Token": token})
    assert r.status_code == 200 and r.json() == {"runs": ["run-x"]}
    chosen = client.get("/arena/api/runs").json()
    assert chosen == {"runs": ["run-x"], "offered": {"run-x": ["m1", "m2"], "run-y": ["m1", "m3"]}}
    battles = _vote_all(client, token)
    assert {b["sample_id"] for b in battles} == DIFFERENT
    for b in battles:
        assert b["answer_a"].strip() != b["answer_b"].strip()
    # The reveal shows the empty answer as such too.
    empty = next(b for b in battles if b["sample_id"] == "s002")
    assert "" in (empty["answer_a"], empty["answer_b"])


def test_battles_leaderboard_and_export_take_the_chosen_runs(served, tmp_path: Path) -> None:
    client, db = served
    token = _rater(client, "ben")
    assert "all 2 runs" in client.get("/arena").text  # the vote page names no run
    page = client.get("/arena/runs").text
    assert 'name="run" value="run-x"' in page and 'name="run" value="run-y"' in page
    # The selector's form: only run-y.
    r = client.post(
        "/arena/runs", data={"csrf_token": token, "run": "run-y", "scope": "chosen"},
        follow_redirects=False,
    )  # fmt: skip
    assert r.status_code == 303
    assert "1 chosen run of 2" in client.get("/arena").text
    page = client.get("/arena/runs").text
    assert 'value="run-y" checked' in page and 'value="run-x" checked' not in page
    only_y = _vote_all(client, token)
    assert len(only_y) == 4 and {b["run_id"] for b in only_y} == {"run-y"}
    assert {b["model_a"] for b in only_y} | {b["model_b"] for b in only_y} == {"m1", "m3"}
    # Then every run: what is left comes from run-x.
    r = client.post("/arena/runs", data={"csrf_token": token, "scope": "all"})
    assert r.status_code == 303
    assert "all 2 runs" in client.get("/arena").text
    rest = _vote_all(client, token)
    assert {b["run_id"] for b in rest} == {"run-x"}

    def board(query: str) -> dict[str, Any]:
        got = client.get(f"/arena/api/leaderboard{query}")
        got.raise_for_status()
        return dict(got.json())

    def expected(votes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        battles = [Battle(v["model_a"], v["model_b"], v["winner"]) for v in votes]
        return elo_table(battles, k=4.0, shuffles=1000, seed=0, win_rate="hemm")

    scoped = board("?run=run-y")
    assert scoped["runs"] == ["run-y"] and scoped["votes"] == 4
    assert scoped["models"] == expected(only_y)
    assert {m["model"] for m in scoped["models"]} == {"m1", "m3"}
    pooled = board("?all=1")
    assert pooled["runs"] is None and pooled["votes"] == len(only_y) + len(rest)
    assert pooled["models"] == expected(only_y + rest)
    html = client.get("/arena/leaderboard?run=run-y").text
    assert "--run run-y" in html and 'data-api="/arena/api/leaderboard?run=run-y"' in html
    assert client.get("/arena/leaderboard?run=nope").status_code == 404
    bad = client.post("/arena/api/runs", json={"runs": ["nope"]}, headers={"X-CSRF-Token": token})
    assert bad.status_code == 400 and "nope" in bad.text

    out = tmp_path / "y.jsonl"
    done = subprocess.run(
        [LMMPROBE, "arena", "export", "-o", str(out), "--db", str(db), "--run", "run-y"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4 and {r["run_id"] for r in rows} == {"run-y"}
    assert elo_table(load_battles(out), k=4.0, shuffles=1000, seed=0) == scoped["models"]
    missing = subprocess.run(
        [LMMPROBE, "arena", "export", "-o", str(out), "--db", str(db), "--run", "nope"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert missing.returncode == 2
    assert "--run nope: no such run" in missing.stderr and len(missing.stderr.splitlines()) == 1
