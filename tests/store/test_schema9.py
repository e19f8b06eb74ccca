"""Store schema 9: judges' verdicts on a run's answers (``judgements``), read back on scores.

A store written before is migrated in place (an empty table: nobody judged its runs); verdicts
stored for an answer come back on its `Score.judgements`, in a fixed order, and a verdict
stored again for the same judge, protocol, version and attempt replaces the earlier one (a
judge asked again on resume).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from lmmprobe.schema import Judgement, Score
from lmmprobe.store import Store
from lmmprobe.store.layout import SCHEMA_VERSION
from lmmprobe.store.sqlite import score_from_row


def _score(sid: str) -> Score:
    return Score(model="m", sample_id=sid, repeat=0, key=f"k{sid}", stage="unparsed",
                 correct=False, gold=0, gold_text="cat")  # fmt: skip


def _judged(**kw: object) -> Judgement:
    base: dict[str, object] = {"judge": "j", "protocol": "p", "version": "1"}
    return Judgement.model_validate({**base, **kw})


def test_verdicts_come_back_on_their_scores(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        store.create_run("r", {}, str(tmp_path))
        store.put_scores("r", [_score("a"), _score("b")])
        store.put_judgements("r", "m", [
            ("a", 0, _judged(decided_by="unjudged", reason="judge error timeout: slow")),
            ("a", 0, _judged(judge=None, decided_by="rule", value=1.0, reading="A")),
        ])  # fmt: skip
        # Resumed: the judge asked again replaces its unjudged verdict.
        store.put_judgements("r", "m", [("a", 0, _judged(decided_by="judge", value=0.0,
                                                          reading="B", detail={"choice": 1}))])  # fmt: skip
        rows = {r["sample_id"]: score_from_row(r) for r in store.iter_score_rows("r")}
    assert [j.decided_by for j in rows["a"].judgements] == ["rule", "judge"]
    assert rows["a"].judgements[1] == _judged(decided_by="judge", value=0.0, reading="B",
                                             detail={"choice": 1})  # fmt: skip
    assert rows["b"].judgements == []
    # A row nobody judged dumps as it did before judges existed.
    assert "judgements" not in rows["b"].model_dump()


def test_a_version_8_store_is_migrated(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with Store(db) as store:
        store.create_run("r", {}, str(tmp_path))
        store.put_scores("r", [_score("a")])
    conn = sqlite3.connect(db)  # what a version 8 store looks like: no judgements table
    conn.execute("DROP TABLE judgements")
    conn.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with Store(db) as store:
        (row,) = store.iter_score_rows("r")
        assert "judgements" not in row
        store.put_judgements("r", "m", [("a", 0, _judged(decided_by="judge", value=1.0))])
        assert store.get_judgements("r")[("m", "a", 0)][0].value == 1.0
    conn = sqlite3.connect(db)
    (version,) = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    conn.close()
    assert version == str(SCHEMA_VERSION)


def test_free_texts_longer_than_lmmprobe_stores_are_cut_when_written(tmp_path: Path) -> None:
    # Re-test 10 #6: a stored text past MAX_STORED_TEXT is read as damage (refused unread), so
    # lmmprobe never writes one: a server's error message, a judge's reading and reason, a
    # prediction text and a judge's vote reason are cut as an answer's text is.
    from lmmprobe.schema import MAX_REPLY_CHARS, ErrorInfo, Request, Response
    from lmmprobe.store.battles import JudgeVote, list_judge_votes, put_judge_votes

    long = "é" * (MAX_REPLY_CHARS + 5)
    cut = long[:MAX_REPLY_CHARS]
    with Store(tmp_path / "s.db") as store:
        store.create_run("r", {}, str(tmp_path))
        store.put_responses(
            "m",
            [Request(key="ka", sample_id="a", method="generate", messages=[], prompt="?")],
            [
                Response(
                    key="ka", error=ErrorInfo(type="server_error", message=long, retryable=True)
                )
            ],
        )
        store.put_scores("r", [_score("a").model_copy(update={"prediction_text": long})])
        store.put_judgements(
            "r", "m", [("a", 0, _judged(decided_by="unjudged", reading=long, reason=long))]
        )
        put_judge_votes(store, [JudgeVote(1, "j", "p", "1", False, None, None, None, None,
                                          None, long)])  # fmt: skip
        (row,) = store.iter_score_rows("r")  # read back: nothing past the cap to refuse
        votes = list_judge_votes(store)
        error = store.get_responses(["ka"], include_errors=True)["ka"].error
    assert row["error_message"] == cut and row["prediction_text"] == cut
    assert row["judgements"][0]["reading"] == cut and row["judgements"][0]["reason"] == cut
    assert error is not None and error.message == cut
    assert votes[0].reason == cut
