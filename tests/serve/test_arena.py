"""The arena through its HTTP API and pages: CSRF, reveal after the vote, no battle twice,
balance over pairs and samples, the leaderboard equal to `elo_table`, hostile strings as text."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest
from markupsafe import escape

from lmmprobe.metrics.elo import Battle, elo_table, load_battles
from lmmprobe.store import Store
from lmmprobe.store.battles import count_votes, list_votes, write_jsonl

from .test_arena_support import (
    DEMO_SAMPLES,
    HOSTILE_ANSWERS,
    HOSTILE_MODELS,
    HOSTILE_PROMPT,
    MODELS,
    add_hostile_run,
    build_demo_store,
    client_for,
    copy_store,
    csrf_of,
    offered_battles,
    start_rater,
    vote_once,
)


def _esc(text: str) -> str:
    return str(escape(text))


PAIRS = len(MODELS) * (len(MODELS) - 1) // 2
BATTLES = PAIRS * DEMO_SAMPLES
"""Battles of the demo store, those whose two answers read the same included (never offered)."""


@pytest.fixture(scope="module")
def arena_demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory.mktemp("arena-demo"))


@pytest.fixture
def db(arena_demo_db: Path, tmp_path: Path) -> Path:
    return copy_store(arena_demo_db, tmp_path / "store")


def test_a_vote_needs_the_sessions_csrf_token(db: Path) -> None:
    with client_for(db) as client:
        token = start_rater(client, "ana")
        battle = client.get("/arena/api/battle").json()
        body = {"battle": battle["battle"], "vote": "a"}
        assert client.post("/arena/api/vote", json=body).status_code == 403
        other = client_for(db)
        wrong = csrf_of(other)  # a token of another session
        assert (
            client.post("/arena/api/vote", json=body, headers={"X-CSRF-Token": wrong}).status_code
            == 403
        )
        # The form route too, without the field.
        form = {"battle": battle["battle"], "vote": "b"}
        assert client.post("/arena/vote", data=form, follow_redirects=False).status_code == 403
        with Store(db) as store:
            assert count_votes(store) == 0
        ok = client.post("/arena/api/vote", json=body, headers={"X-CSRF-Token": token})
        assert ok.status_code == 200
        with Store(db) as store:
            assert count_votes(store) == 1


def test_the_models_are_named_only_after_the_vote(db: Path) -> None:
    add_hostile_run(db, samples=1)
    with client_for(db) as client:
        token = start_rater(client, "ben")
        assert client.get("/arena/reveal", follow_redirects=False).status_code == 303
        for _ in range(BATTLES + 1):
            battle = client.get("/arena/api/battle").json()
            page = client.get("/arena").text
            if battle["answer_a"] in HOSTILE_ANSWERS:
                break
            vote_once(client, token)
        else:  # pragma: no cover - the hostile battle is always drawn eventually
            pytest.fail("the hostile run's battle was never drawn")
        # Before the vote: neither the JSON nor the page names a model, in any form.
        for name in HOSTILE_MODELS:
            for form in (name, str(escape(name)), json.dumps(name)[1:-1]):
                assert form not in json.dumps(battle)
                assert form not in page
        assert "model_a" not in battle and "model_b" not in battle
        assert {battle["answer_a"], battle["answer_b"]} == set(HOSTILE_ANSWERS)
        # Reloading shows the same battle: no redrawing until a vote.
        assert client.get("/arena/api/battle").json()["battle"] == battle["battle"]
        r = client.post(
            "/arena/api/vote",
            json={"battle": battle["battle"], "vote": "b"},
            headers={"X-CSRF-Token": token},
        )
        reveal = r.json()
        assert {reveal["model_a"], reveal["model_b"]} == set(HOSTILE_MODELS)
        shown = dict(zip(HOSTILE_MODELS, HOSTILE_ANSWERS, strict=True))
        assert shown[reveal["model_a"]] == battle["answer_a"]
        assert shown[reveal["model_b"]] == battle["answer_b"]
        assert reveal["winner"] == "b"
        # The same battle cannot be voted on twice.
        again = client.post(
            "/arena/api/vote",
            json={"battle": battle["battle"], "vote": "a"},
            headers={"X-CSRF-Token": token},
        )
        assert again.status_code == 409
        page = client.get("/arena/reveal").text
        assert _esc(HOSTILE_MODELS[0]) in page


def test_the_vote_view_names_no_run_sample_or_model_and_images_go_by_battle(db: Path) -> None:
    with Store(db) as store:
        run_id, n_samples = store.conn.execute(
            "SELECT run_id, COUNT(DISTINCT sample_id) FROM scores"
        ).fetchone()
        sample_ids = [s for (s,) in store.conn.execute("SELECT DISTINCT sample_id FROM samples")]
    assert n_samples == DEMO_SAMPLES
    with client_for(db) as client, client_for(db) as other:
        token = start_rater(client, "ivy")
        for _ in range(3):
            battle = client.get("/arena/api/battle").json()
            page = client.get("/arena").text
            for text in (json.dumps(battle), page):
                assert run_id not in text and "/runs/" not in text.replace('href="/runs"', "")
                assert not set(battle) & {"run_id", "sample_id", "repeat", "model_a", "model_b"}
                for model in MODELS:
                    assert f'"{model}"' not in text and f">{model}<" not in text
            # Sample ids are short ("0", "1"...): none appears as a field or in a link.
            for sid in sample_ids:
                assert f"/{sid}/" not in json.dumps(battle["images"])
            assert battle["images"], "the demo's samples have images"
            for src in battle["images"]:
                assert src.startswith(f"/arena/images/{battle['battle']}/")
                got = client.get(src)
                assert got.status_code == 200 and got.headers["content-type"].startswith("image/")
                # Another session cannot resolve this battle's images.
                assert other.get(src).status_code == 404
            reveal = vote_once(client, token)
            assert reveal is not None and reveal["reveal"]["run_id"] == run_id
        assert client.get("/arena/images/not-a-battle/0").status_code == 404


def test_a_rater_never_gets_the_same_battle_twice_and_is_told_when_done(db: Path) -> None:
    with client_for(db) as client:
        token = start_rater(client, "cy")
        seen = []
        while (done := vote_once(client, token, vote="tie")) is not None:
            r = done["reveal"]
            seen.append(
                (r["run_id"], r["sample_id"], r["repeat"], *sorted((r["model_a"], r["model_b"])))
            )
            assert len(seen) <= BATTLES
        assert len(seen) == len(set(seen))
        # Every battle worth a vote, and none whose two answers read the same.
        assert set(seen) == offered_battles(db) and len(seen) < BATTLES
        page = client.get("/arena")
        assert "you have voted on every battle" in page.text
        # Another rater in the same browser starts afresh.
        client.post("/arena/leave", data={"csrf_token": token})
        start_rater(client, "dee")
        assert client.get("/arena/api/battle").status_code == 200


def test_the_same_name_in_two_browsers_never_votes_twice_on_a_battle(db: Path) -> None:
    with client_for(db) as one, client_for(db) as two:
        t1, t2 = start_rater(one, "eve"), start_rater(two, "eve")
        while True:
            a, b = vote_once(one, t1), vote_once(two, t2)
            if a is None and b is None:
                break
        with Store(db) as store:
            votes = list_votes(store, rater="eve")
        keys = [(v.run_id, v.sample_id, v.repeat, *sorted((v.model_a, v.model_b))) for v in votes]
        assert len(keys) == len(set(keys)) and set(keys) == offered_battles(db)


def test_pairs_and_samples_are_drawn_balanced(db: Path) -> None:
    clients = [client_for(db) for _ in range(3)]
    tokens = [start_rater(c, f"rater{i}") for i, c in enumerate(clients)]
    for round_ in range(10):
        for client, token in zip(clients, tokens, strict=True):
            vote_once(client, token, vote="a" if round_ % 2 else "b")
            with Store(db) as store:
                votes = list_votes(store)
            pairs = Counter(tuple(sorted((v.model_a, v.model_b))) for v in votes)
            counts = [pairs.get(p, 0) for p in itertools.combinations(sorted(MODELS), 2)]
            assert max(counts) - min(counts) <= 1, counts
    # Within each pair the samples it is offered on are used evenly too, and the sides mixed.
    per_sample = Counter((tuple(sorted((v.model_a, v.model_b))), v.sample_id) for v in votes)
    offered = offered_battles(db)
    with Store(db) as store:
        sample_ids = [s for (s,) in store.conn.execute("SELECT DISTINCT sample_id FROM scores")]
    assert len(sample_ids) == DEMO_SAMPLES
    for pair in itertools.combinations(sorted(MODELS), 2):
        on = [sid for sid in sample_ids if any(b[1] == sid and b[3:] == pair for b in offered)]
        used = [per_sample.get((pair, sid), 0) for sid in on]
        assert max(used) - min(used) <= 1, (pair, used)
        assert sum(per_sample.get((pair, sid), 0) for sid in sample_ids) == sum(used)
    assert len({(v.model_a, v.model_b) for v in votes}) > PAIRS  # both orders were shown
    for client in clients:
        client.close()


def test_the_leaderboard_is_elo_table_on_the_exported_battles(db: Path, tmp_path: Path) -> None:
    with client_for(db) as client:
        assert client.get("/arena/api/leaderboard").json()["models"] == []
        token = start_rater(client, "fay")
        for i, vote in zip(
            range(14), itertools.cycle(["a", "b", "tie", "both_bad", "a"]), strict=False
        ):
            assert vote_once(client, token, vote=vote) is not None, i
        board = client.get("/arena/api/leaderboard").json()
        page = client.get("/arena/leaderboard").text
    out = tmp_path / "battles.jsonl"
    with Store(db) as store, out.open("w", encoding="utf-8") as f:
        assert write_jsonl(store, f) == 14
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["vote"] for r in rows].count("both_bad") >= 2
    assert all(r["winner"] == "tie" for r in rows if r["vote"] in ("tie", "both_bad"))
    battles = load_battles(out)
    assert board["votes"] == 14
    assert board["models"] == elo_table(battles)
    assert board["vote_counts"]["both_bad"] == [r["vote"] for r in rows].count("both_bad")
    # The page shows the same figures.
    for row in board["models"]:
        assert f"{row['elo']:.1f}" in page


def test_a_leaderboard_of_more_votes_than_one_rating_replays_is_a_clear_refusal(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Re-test 7 (#18): votes past what one rating replays (`MAX_ELO_REPLAYS`: 100,000 over
    # the leaderboard's 1,000 shuffles) made `elo_table` refuse, and the page was a 500 with a
    # traceback. It says why, and how to rate them. The limit is lowered to three votes' worth
    # here: storing and listing 100,001 votes would make the test slow, not different.
    from lmmprobe.metrics import elo

    monkeypatch.setattr(elo, "MAX_ELO_REPLAYS", 2_999)
    with client_for(db) as client:
        token = start_rater(client, "gus")
        for _ in range(3):
            assert vote_once(client, token) is not None
        api = client.get("/arena/api/leaderboard")
        page = client.get("/arena/leaderboard")
    assert api.status_code == 413, api.text[:2000]
    detail = api.json()["detail"]
    assert detail.startswith("the leaderboard of these 3 votes is too large to compute here: ")
    assert "3 votes over 1,000 shuffles is 3,000 battles to replay" in detail
    assert detail.endswith("lmmprobe elo votes.jsonl --shuffles 999")
    assert page.status_code == 413 and "Traceback" not in page.text
    assert _esc("the leaderboard of these 3 votes is too large") in page.text


def test_an_empty_store_offers_no_battle(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    Store(db).close()
    with client_for(db) as client:
        token = start_rater(client, "gus")
        assert client.get("/arena/api/battle").status_code == 204
        assert "No battles yet" in client.get("/arena").text
        assert (
            client.post(
                "/arena/api/vote",
                json={"battle": "x", "vote": "a"},
                headers={"X-CSRF-Token": token},
            ).status_code
            == 409
        )


def test_hostile_strings_render_as_text(db: Path) -> None:
    add_hostile_run(db, samples=1)
    with client_for(db) as client:
        token = start_rater(client, '<b onmouseover="x()">rater</b>')
        for _ in range(BATTLES + 1):
            if client.get("/arena/api/battle").json()["answer_a"] in HOSTILE_ANSWERS:
                break
            vote_once(client, token)
        pages = [client.get("/arena").text]
        vote_once(client, token, vote="a")
        pages += [client.get("/arena/reveal").text, client.get("/arena/leaderboard").text]
    payloads = [*HOSTILE_MODELS, *HOSTILE_ANSWERS, HOSTILE_PROMPT, '<b onmouseover="x()">rater</b>']
    joined = "\n".join(pages)
    for raw in payloads:
        assert raw not in joined
    assert _esc(HOSTILE_ANSWERS[0]) in pages[0]
    assert _esc(HOSTILE_PROMPT) in pages[0]
    assert _esc(HOSTILE_MODELS[1]) in pages[1]
    assert _esc(HOSTILE_MODELS[0]) in pages[2]
    assert "<script>alert" not in joined


def test_a_bad_vote_or_rater_name_is_refused(db: Path) -> None:
    with client_for(db) as client:
        token = csrf_of(client)
        h = {"X-CSRF-Token": token}
        assert client.post("/arena/api/rater", json={"name": "  "}, headers=h).status_code == 400
        assert (
            client.post("/arena/api/rater", json={"name": "x" * 81}, headers=h).status_code == 400
        )
        assert client.get("/arena/api/battle").status_code == 409  # no rater yet
        start_rater(client, "hal")
        battle = client.get("/arena/api/battle").json()
        r = client.post(
            "/arena/api/vote", json={"battle": battle["battle"], "vote": "maybe"}, headers=h
        )
        assert r.status_code == 400
        with Store(db) as store:
            assert count_votes(store) == 0


def test_votes_through_the_html_form(db: Path) -> None:
    with client_for(db) as client:
        token = csrf_of(client)
        assert "Your name" in client.get("/arena").text
        r = client.post(
            "/arena/rater", data={"name": "ida", "csrf_token": token}, follow_redirects=False
        )
        assert r.status_code == 303
        page = client.get("/arena").text
        battle = page.split('name="battle" value="', 1)[1].split('"', 1)[0]
        r = client.post(
            "/arena/vote",
            data={"battle": battle, "vote": "both_bad", "csrf_token": token},
            follow_redirects=False,
        )
        assert r.status_code == 303 and r.headers["location"] == "/arena/reveal"
        # A double click sends the form twice: the first vote stands, the reveal shows it.
        twice = client.post(
            "/arena/vote",
            data={"battle": battle, "vote": "a", "csrf_token": token},
            follow_redirects=False,
        )
        assert twice.status_code == 303 and twice.headers["location"] == "/arena/reveal"
        reveal = client.get("/arena/reveal").text
        assert "counted as a tie" in reveal
    with Store(db) as store:
        (vote,) = list_votes(store)
    assert vote.vote == "both_bad" and vote.winner == "tie" and vote.rater == "ida"
    assert vote.key_a != vote.key_b and vote.model_a in MODELS and vote.model_b in MODELS
    assert [vote.model_a, vote.model_b] != [vote.model_b, vote.model_a]


def test_exported_battles_carry_what_elo_reads_and_the_vote(db: Path, tmp_path: Path) -> None:
    with client_for(db) as client:
        token = start_rater(client, "jo")
        vote_once(client, token, vote="both_bad")
    out = tmp_path / "b.jsonl"
    with Store(db) as store, out.open("w", encoding="utf-8") as f:
        write_jsonl(store, f)
    (row,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert row["winner"] == "tie" and row["vote"] == "both_bad"
    assert set(row) >= {
        "model_a",
        "model_b",
        "rater",
        "created_at",
        "run_id",
        "sample_id",
        "repeat",
        "key_a",
        "key_b",
    }
    assert load_battles(out) == [Battle(row["model_a"], row["model_b"], "tie")]


def test_the_arena_opens_its_writer_at_start_and_closes_it_at_stop(db: Path) -> None:
    import threading

    from lmmprobe.serve import arena
    from lmmprobe.serve.app import create_app

    def writers() -> int:
        return sum(t.name.startswith("lmmprobe-arena-votes") for t in threading.enumerate())

    before = writers()
    app = create_app(db)
    made = arena.start(app)
    assert arena.start(app) is made  # one arena per app
    made.close()
    assert writers() == before
    with client_for(db) as client:  # an app whose arena was never started makes one on use
        token = start_rater(client, "zed")
        assert vote_once(client, token) is not None
