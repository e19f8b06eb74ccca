"""`lmmprobe arena judge` end to end: a scripted fake judge votes on stored human battles."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from PIL import Image
from sklearn.metrics import cohen_kappa_score
from tests.console import lmmprobe
from tests.serve.test_arena_support import build_demo_store, copy_the_vote, offered_battles

from lmmprobe.metrics.elo import Battle, elo_ratings
from lmmprobe.metrics.ranking import rank_correlation
from lmmprobe.store import Store
from lmmprobe.store.battles import list_judge_votes, record_vote
from lmmprobe.testing import FakeOpenAIServer

# (human vote, judge reply with A's answer first, judge reply with the answers swapped)
SCRIPT = [
    ("a", "Verdict: A", "Verdict: B"),  # A both ways: agrees
    ("b", "Verdict: B", "**Verdict: A**"),  # B both ways: agrees
    ("tie", "Verdict: tie", "tie"),  # tie both ways: agrees
    ("a", "Verdict: A", "Verdict: A"),  # the first place wins both times: flips -> tie
    ("both_bad", "B", "Verdict: A"),  # B both ways; the human's both_bad is a tie (HEMM)
    ("b", "I cannot decide.", "Verdict: A"),  # unreadable first reply: unjudged
]
HUMAN = ["a", "b", "tie", "a", "tie"]  # the judged battles' human winners
JUDGE = ["a", "b", "tie", "tie", "b"]  # and the judge's


@pytest.fixture(scope="module")
def voted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store with one human vote on six battles spread over the four models."""
    folder = tmp_path_factory.mktemp("arena-judge")
    db = build_demo_store(folder)
    battles = sorted(offered_battles(db))
    chosen, pairs = [], set()
    for battle in battles:  # a new pair of models first, so every model takes part
        if (battle[3], battle[4]) not in pairs:
            pairs.add((battle[3], battle[4]))
            chosen.append(battle)
    chosen += [b for b in battles if b not in chosen]
    with Store(db) as store:
        for (run_id, sample_id, repeat, m1, m2), (vote, _, _) in zip(chosen, SCRIPT, strict=False):
            keys = dict(
                store.conn.execute(
                    "SELECT model, key FROM scores WHERE run_id = ? AND sample_id = ? AND "
                    "repeat = ?",
                    (run_id, sample_id, repeat),
                ).fetchall()
            )
            record_vote(
                store,
                rater="kim",
                run_id=run_id,
                sample_id=sample_id,
                repeat=repeat,
                model_a=m1,
                model_b=m2,
                key_a=keys[m1],
                key_b=keys[m2],
                vote=vote,
            )
    return db


def _replies() -> list[str]:
    return [reply for _, first, swapped in SCRIPT for reply in (first, swapped)]


def test_arena_judge_reports_agreement_consistency_and_rank_correlation(
    voted: Path, tmp_path: Path
) -> None:
    db = tmp_path / "arena.db"
    db.write_bytes(voted.read_bytes())
    out = tmp_path / "judge.jsonl"
    with FakeOpenAIServer(replies=_replies()) as server:
        # One request at a time, so the scripted replies meet the battles in order.
        spec = f"openai:judge@{server.base_url},max_concurrency=1"
        done = lmmprobe(
            "arena", "judge", "--judge", spec, "--db", db, "--format", "json", "-o", out
        )
        assert done.returncode == 0, done.stderr
        assert server.replies_left == 0 and server.received_images == []
        # Asked again (same judge, same server): every reply comes from the store.
        again = lmmprobe("arena", "judge", "--judge", spec, "--db", db)
        assert again.returncode == 0, again.stderr
        assert server.requests_total == 12
    # The summary is prose, wrapped between words at the width (160 here): read as one line.
    said = " ".join(again.stdout.split())
    assert "5 of 6 battles judged, 1 unjudged; 0 judge call(s), 12 from the store" in said
    assert "Cohen's kappa" in again.stdout and "Kendall tau" in again.stdout
    got = json.loads(done.stdout)
    assert (got["battles"], got["judged"], got["unjudged"]) == (6, 5, 1)
    with Store(db) as store:  # the judge's votes are kept in the store, beside the humans'
        kept = list_judge_votes(store, judge=spec)
    assert [v.winner for v in kept] == [*JUDGE, None]
    assert kept[3].first == "A" and kept[3].swapped == "B" and not kept[3].sees_image
    assert kept[5].reason == "unreadable reply (no Verdict: A, B or tie)"
    assert got["judge_calls"] == {
        "requests": 12,
        "cached": 0,
        "called": 12,
        "errors": 0,
        "unsent": 0,
    }
    assert got["percent_agreement"] == pytest.approx(3 / 5)
    assert got["cohen_kappa"] == pytest.approx(cohen_kappa_score(HUMAN, JUDGE))
    assert (got["decided_battles"], got["decided_agreement"]) == (2, 1.0)
    # Battles 1, 2, 3 and 5 gave the same verdict both ways; battle 4 flipped; 6 is unreadable.
    assert (got["position_consistency"], got["position_consistency_n"]) == (0.8, 5)

    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["winner"] for r in rows] == JUDGE and [r["human"] for r in rows] == HUMAN
    assert rows[3]["judge_first"] == "A" and rows[3]["judge_swapped"] == "B"
    judge_elo = elo_ratings([Battle(r["model_a"], r["model_b"], r["winner"]) for r in rows])
    human_elo = elo_ratings([Battle(r["model_a"], r["model_b"], r["human"]) for r in rows])
    assert {m: v["judge"] for m, v in got["elo"].items()} == judge_elo
    assert {m: v["human"] for m, v in got["elo"].items()} == human_elo
    corr = rank_correlation(human_elo, judge_elo)
    assert got["rank_correlation"]["spearman_rho"] == pytest.approx(corr["spearman_rho"])
    assert got["rank_correlation"]["kendall_tau"] == pytest.approx(corr["kendall_tau"])
    # The verdict file is a battle file: `lmmprobe elo` ranks the judge's votes.
    elo = lmmprobe("elo", out, "--format", "json")
    assert elo.returncode == 0, elo.stderr
    assert {r["model"]: r["elo"] for r in json.loads(elo.stdout)["models"]} == judge_elo


def test_arena_judge_sends_the_image_when_asked(voted: Path, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    db.write_bytes(voted.read_bytes())
    with FakeOpenAIServer() as server:  # unscripted: it names the image's colour, unreadable
        spec = f"openai:judge@{server.base_url}"
        done = lmmprobe(
            "arena", "judge", "--judge", spec, "--db", db, "--judge-sees-image", "-f", "json"
        )
        assert len(server.received_images) == 12
    with Store(db) as store:
        kept = list_judge_votes(store, judge=spec)
    assert len(kept) == 6 and all(v.sees_image and v.winner is None for v in kept)
    # Not one reply could be read (re-test 9, #4): the judge judged nothing, and it fails
    # saying why (its first reply quoted), as `compare --judge` does; before, exit 0.
    assert done.returncode == 1 and done.stdout == "", done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.strip()]
    assert f"error: judge {spec}: none of its 12 replies could be read (first: '" in line


def test_arena_judge_without_votes_or_with_a_bad_judge_says_so(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    Store(db).close()
    with FakeOpenAIServer() as server:
        done = lmmprobe("arena", "judge", "--judge", f"openai:j@{server.base_url}", "--db", db)
    assert done.returncode == 2 and "no human votes" in done.stderr
    bad = lmmprobe("arena", "judge", "--judge", "nosuch:thing", "--db", db)
    assert bad.returncode == 2 and "--judge nosuch:thing" in bad.stderr


def test_arena_judge_run_scope(voted: Path, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    db.write_bytes(voted.read_bytes())
    with Store(db) as store:
        (run_id,) = {v[0] for v in store.conn.execute("SELECT run_id FROM battles")}
    with FakeOpenAIServer(replies=[]) as server:
        spec = f"openai:judge@{server.base_url}"
        missing = lmmprobe("arena", "judge", "--judge", spec, "--db", db, "--run", "nosuch")
        assert missing.returncode == 2 and "--run nosuch: no such run" in missing.stderr
        assert server.requests_total == 0
    with FakeOpenAIServer(replies=_replies()) as server:
        spec = f"openai:judge@{server.base_url},max_concurrency=1"
        scoped = lmmprobe(
            "arena", "judge", "--judge", spec, "--db", db, "--run", run_id, "-f", "json"
        )
        assert scoped.returncode == 0, scoped.stderr
    assert json.loads(scoped.stdout)["battles"] == 6


def test_arena_judge_refuses_an_unknown_executor(voted: Path) -> None:
    bad = lmmprobe(
        "arena", "judge", "--judge", "openai:j@http://127.0.0.1:9/v1", "--db", voted,
        "--executor", "slurm",
    )  # fmt: skip
    assert bad.returncode == 2 and "--executor: unknown executor 'slurm'" in bad.stderr


@pytest.mark.slow
def test_arena_judge_on_a_local_ray_instance(voted: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray")
    db = tmp_path / "arena.db"
    db.write_bytes(voted.read_bytes())
    # A judge that always prefers the first place: every battle is a tie, never consistent.
    with FakeOpenAIServer(reply_table=[("[Answer A]", "Verdict: A")]) as server:
        done = lmmprobe(
            "arena", "judge", "--judge", f"openai:judge@{server.base_url}", "--db", db,
            "--executor", "ray", "--replicas", "1", "--cpus-per-replica", "0.5", "-f", "json",
            RAY_ADDRESS="",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert server.requests_total == 12
    got = json.loads(done.stdout)
    assert (got["judged"], got["position_consistency"]) == (6, 0.0)
    assert got["judge_calls"]["called"] == 12


def test_arena_judge_reads_a_thinking_judge_from_its_answer(voted: Path, tmp_path: Path) -> None:
    """A judge's thinking is never read for its verdict, and a cut-off reply is unjudged."""
    db = tmp_path / "arena.db"
    db.write_bytes(voted.read_bytes())
    thinks = "<think>My first instinct is Verdict: B, but A is more faithful.</think>\n\n"
    cut = "<think>Hmm. My first instinct is Verdict: A, but answer B ... so"
    replies = [
        f"{thinks}Verdict: A",  # battle 1: the thinking names B, the answer A
        "Verdict: B",  # (swapped: B shown first, so A both ways)
        cut,  # battle 2: cut off inside the thinking: unjudged, not A
        "Verdict: B",
        *(["Verdict: tie"] * 8),
    ]
    with FakeOpenAIServer(replies=replies) as server:
        spec = f"openai:judge@{server.base_url},max_concurrency=1"
        done = lmmprobe("arena", "judge", "--judge", spec, "--db", db, "--format", "json")
        assert done.returncode == 0, done.stderr
    with Store(db) as store:
        kept = list_judge_votes(store, judge=spec)
    assert (kept[0].first, kept[0].swapped, kept[0].winner) == ("A", "A", "a")
    assert (kept[1].first, kept[1].winner) == (None, None)
    assert kept[1].reason == "first order: truncated"
    assert json.loads(done.stdout)["unjudged"] == 1


def test_arena_judge_never_sends_an_image_file_changed_since_the_run(
    voted: Path, tmp_path: Path
) -> None:
    # One battle's sample recorded as a file whose content the run hashed (issue 34): the
    # file now holds another picture, so that battle is unjudged, its reason naming the file.
    db = tmp_path / "arena.db"
    db.write_bytes(voted.read_bytes())
    image = tmp_path / "seen.png"
    Image.new("RGB", (16, 16), (200, 30, 30)).save(image)
    recorded = {"path": str(image), "sha256": "0" * 64}  # not the file's content now
    with Store(db) as store:
        run_id, sample_id = store.conn.execute(
            "SELECT run_id, sample_id FROM battles ORDER BY id LIMIT 1"
        ).fetchone()
        doc = json.loads(
            store.conn.execute(
                "SELECT sample FROM samples WHERE run_id = ? AND sample_id = ?", (run_id, sample_id)
            ).fetchone()[0]
        )
        with store.transaction() as c:
            c.execute(
                "UPDATE samples SET sample = ? WHERE run_id = ? AND sample_id = ?",
                (json.dumps({**doc, "images": [recorded]}), run_id, sample_id),
            )
        same_sample = store.conn.execute(
            "SELECT COUNT(*) FROM battles WHERE run_id = ? AND sample_id = ?", (run_id, sample_id)
        ).fetchone()[0]
    with FakeOpenAIServer(reply_table=[("[Answer A]", "Verdict: A")]) as server:
        spec = f"openai:judge@{server.base_url}"
        done = lmmprobe(
            "arena", "judge", "--judge", spec, "--db", db, "--judge-sees-image", "-f", "json"
        )
        assert done.returncode == 0, done.stderr
        # The other battles' pictures only, each sent in both orders.
        assert len(server.received_images) == 2 * (6 - same_sample)
    with Store(db) as store:
        reasons = [v.reason for v in list_judge_votes(store, judge=spec) if v.reason]
    changed = [r for r in reasons if str(image) in r]
    assert len(changed) == same_sample and "changed since the run" in changed[0]


def test_more_votes_than_one_rating_replays_are_refused_before_any_judge_call(
    voted: Path, tmp_path: Path
) -> None:
    # Re-test 7 (#18): the judge was asked about every vote, then rating them over 1,000
    # shuffles was refused (or ran for many minutes); refused now before any call, in one line.
    db = tmp_path / "arena.db"
    db.write_bytes(voted.read_bytes())
    copy_the_vote(db, 100_000)
    with FakeOpenAIServer() as server:
        done = lmmprobe("arena", "judge", "--judge", f"openai:judge@{server.base_url}", "--db", db)
        assert server.requests_total == 0
    assert done.returncode == 2, done.stderr[-2000:]
    (line,) = [x for x in done.stderr.splitlines() if x.strip()]
    assert line.startswith("error: ") and db.name in line
    assert "100,006 votes over 1,000 shuffles is 100,006,000 battles to replay" in line
    assert line.endswith("judge the votes of some runs only (--run ID)")
    assert "Traceback" not in done.stderr


SECRET = "Zq7secretVALUE99"


def secret_urls(base_url: str) -> list[str]:
    """The fake server's URL with `SECRET` in it, in each shape a key is put in a URL."""
    host = base_url.removeprefix("http://").removesuffix("/v1")
    return [
        f"{base_url}?api_key={SECRET}",  # a query parameter
        f"http://u:{SECRET}@{host}/v1",  # a password
        f"http://{host}/key/{SECRET}/v1",  # a path segment after one named key
    ]


def test_arena_judge_never_shows_a_secret_in_the_judge_url(voted: Path, tmp_path: Path) -> None:
    # Re-test 9 (#6): the judge spec was printed as given, in the header line and in the
    # -f json document's "judge" field (the form saved as a CI artifact), its key included.
    with FakeOpenAIServer(reply_table=[("[Answer A]", "Verdict: A")]) as server:
        for i, url in enumerate(secret_urls(server.base_url)):
            db = tmp_path / f"arena{i}.db"
            db.write_bytes(voted.read_bytes())
            spec = f"openai:judge@{url},max_attempts=1"
            table = lmmprobe("arena", "judge", "--judge", spec, "--db", db)
            doc = lmmprobe("arena", "judge", "--judge", spec, "--db", db, "-f", "json")
            for proc in (table, doc):
                assert SECRET not in proc.stdout + proc.stderr, (url, proc.stdout, proc.stderr)
                assert "[redacted]" in proc.stdout + proc.stderr, (url, proc.stderr)
            if doc.returncode == 0:  # the judge answered: its spec is the document's, redacted
                assert "[redacted]" in json.loads(doc.stdout)["judge"]
                assert "[redacted]" in " ".join(table.stdout.split()).split(" (")[0]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # closed again: nothing listens there


def test_arena_judge_whose_every_call_fails_exits_1_saying_why(voted: Path, tmp_path: Path) -> None:
    # Re-test 9 (#4): a misspelt judge model (every call a 404) or a judge server that is not
    # there printed "0 of 6 battles judged ... 12 failed" and an empty table, and exited 0:
    # a CI step with a misspelt judge passed. Now as `compare --judge`: one error line, exit 1.
    db = tmp_path / "arena.db"
    db.write_bytes(voted.read_bytes())
    out = tmp_path / "verdicts.jsonl"
    with FakeOpenAIServer(reply_table=[("@judge-misspelt ", "!missing")]) as server:
        spec = f"openai:judge-misspelt@{server.base_url},max_attempts=1"
        missing = lmmprobe("arena", "judge", "--judge", spec, "--db", db, "-o", out, "-f", "json")
        assert server.requests_total == 12
    assert missing.returncode == 1, missing.stderr
    assert missing.stdout == "" and not out.exists()  # no document that reads as a result
    (line,) = [x for x in missing.stderr.splitlines() if x.strip()]
    assert line.startswith(f"error: judge {spec}: every one of 12 call(s) failed: not_found: ")
    assert "does not exist" in line and "run the same command again" in line
    with Store(db) as store:  # each battle's vote is kept, unjudged, saying why
        kept = list_judge_votes(store, judge=spec)
    assert len(kept) == 6 and {v.winner for v in kept} == {None}
    assert all(v.reason and "not_found" in v.reason for v in kept), [v.reason for v in kept]

    spec = f"openai:judge@http://127.0.0.1:{_closed_port()}/v1,max_attempts=1"
    nobody = lmmprobe("arena", "judge", "--judge", spec, "--db", db)
    assert nobody.returncode == 1, nobody.stderr
    (line,) = [x for x in nobody.stderr.splitlines() if x.startswith("error:")]
    assert f"error: judge {spec}: every one of 12 call(s) failed: " in line
    assert "Traceback" not in nobody.stderr


def test_a_battle_answer_past_the_stored_text_cap_is_refused_before_any_call(
    voted: Path, tmp_path: Path
) -> None:
    # Re-test 10 #6: the arena read its answers whole. One past what lmmprobe stores is damage,
    # measured in SQL: `arena judge` refuses it in one line before paying for a call, and the
    # arena's page shows a marker in its place (`battle_texts(shown=True)`).
    import sqlite3

    from lmmprobe.store.battles import battle_texts

    db = tmp_path / "arena.db"
    db.write_bytes(voted.read_bytes())
    with sqlite3.connect(db) as conn:
        key_a, key_b = conn.execute("SELECT key_a, key_b FROM battles ORDER BY id").fetchone()
        conn.execute(
            "UPDATE responses SET text = printf('%.*c', 1048577, 'x') WHERE key = ?", (key_a,)
        )
    with FakeOpenAIServer(replies=_replies()) as server:
        proc = lmmprobe("arena", "judge", "--judge", f"openai:judge@{server.base_url}",
                        "--db", db)  # fmt: skip
        assert server.requests_total == 0
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    (line,) = proc.stderr.strip().splitlines()
    assert f"{db}: the stored response {key_a}: its text column holds 1,048,577 characters" in line
    with sqlite3.connect(db) as conn:
        texts = battle_texts(conn, key_a, key_b, shown=True)
    assert texts[key_a]["text"] == (
        "[a stored text of 1,048,577 characters, more than lmmprobe stores: not shown]"
    )
    assert texts[key_b]["text"] and "[a stored text" not in texts[key_b]["text"]


def test_a_spec_ending_in_an_emoji_code_is_printed_as_written(tmp_path: Path) -> None:
    # Re-test 13 #11: rich read ":x:" in "--judge nosuch:x: unknown ..." as an emoji.
    done = lmmprobe("arena", "judge", "--judge", "nosuch:x", "--db", tmp_path / "db")
    assert done.returncode == 2, done.stderr
    assert "error: --judge nosuch:x: unknown model backend 'nosuch'" in done.stderr
    assert "\u274c" not in done.stderr


def test_arena_judge_under_max_cost_stops_paid_judge_calls_and_resumes(
    voted: Path, tmp_path: Path
) -> None:
    # Re-test 19 of issue 34 (#15): `arena judge` had no --max-cost or --prices, so its paid
    # judge calls were unbounded. They read as `run` and `judge` read them.
    db = tmp_path / "arena.db"
    db.write_bytes(voted.read_bytes())
    with FakeOpenAIServer(replies=_replies()) as server:
        # $1 a completion token (price=), one call at a time: stopped past $3.
        spec = f"openai:judge@{server.base_url},max_concurrency=1,price=0:1000000"
        bad = lmmprobe("arena", "judge", "--judge", spec, "--db", db, "--max-cost", "1_0")
        assert bad.returncode == 2 and bad.stderr.startswith("error: --max-cost '1_0': ")
        unpriced = lmmprobe("arena", "judge", "--judge", f"openai:judge@{server.base_url}",
                            "--db", db, "--max-cost", "3")  # fmt: skip
        assert unpriced.returncode == 2
        assert unpriced.stderr.startswith("error: --max-cost needs a price for every judge; ")
        assert server.requests_total == 0
        stopped = lmmprobe("arena", "judge", "--judge", spec, "--db", db, "--max-cost", "3")
        assert stopped.returncode == 3, stopped.stdout + stopped.stderr
        sent = server.requests_total
        assert 1 <= sent < 12
        said = " ".join(stopped.stdout.split())
        assert f"{12 - sent} left unsent by --max-cost." in said, said
        assert "spent by this command: $" in said and " of --max-cost $3, on the " in said
        assert " ".join(stopped.stderr.split()).startswith("judging stopped: a budget ran out")
        rest = lmmprobe("arena", "judge", "--judge", spec, "--db", db, "--max-cost", "none",
                        "-f", "json")  # fmt: skip
        assert rest.returncode == 0, rest.stdout + rest.stderr
        assert server.requests_total == 12  # the rest asked once, the first ones not again
    got = json.loads(rest.stdout)
    assert got["judge_calls"]["unsent"] == 0 and got["judged"] == 5 and got["spent"] > 0
