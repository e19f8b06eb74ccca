"""A store crafted or edited by hand (re-test 8 #3, #4): one line naming what is wrong, never a
traceback, a hang or a figure the store's rows do not give.

Each store is made by a real run (``lmmprobe run -m random``), then edited with SQLite the way
the re-test did; every command runs through the real console script.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from tests.console import lmmprobe


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding one finished run of the ``random`` baseline on 20 demo samples."""
    root = tmp_path_factory.mktemp("crafted")
    db = root / "db.sqlite"
    proc = lmmprobe("run", "-q", "-m", "random", "-d", "demo,n=20", "--db", db, "--out", root / "o")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return db


def _edited(made: Path, tmp_path: Path, *statements: str) -> Path:
    db = tmp_path / "db.sqlite"
    shutil.copy(made, db)
    with sqlite3.connect(db) as conn:
        for statement in statements:
            conn.execute(statement)
    return db


def _one_line(proc: object) -> str:
    stderr = str(getattr(proc, "stderr", ""))
    assert getattr(proc, "returncode", None) == 2, stderr[-2000:]
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr[-2000:]
    return lines[0]


def test_a_trigger_lmmprobe_did_not_create_is_refused_before_it_runs(
    made: Path, tmp_path: Path
) -> None:
    # Re-test 8 #4: the trigger rewrote a new run's answers to correct (accuracy 1.000).
    db = _edited(
        made,
        tmp_path,
        "CREATE TRIGGER t AFTER INSERT ON scores BEGIN UPDATE scores SET correct = 1; END",
    )
    proc = lmmprobe("run", "-q", "-m", "random", "-d", "demo,n=20", "--db", db,
                    "--out", tmp_path / "o")  # fmt: skip
    line = _one_line(proc)
    assert f"{db} holds a trigger 't' that lmmprobe did not create" in line
    with sqlite3.connect(db) as conn:  # nothing written: the one run made before
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    for command in (("runs",), ("show", "latest"), ("export", "latest", "--format", "jsonl")):
        assert "holds a trigger 't'" in _one_line(lmmprobe(*command, "--db", db))


def test_an_endless_view_in_place_of_a_table_is_refused_not_read(
    made: Path, tmp_path: Path
) -> None:
    # Re-test 8 #3: every command hung reading a recursive view named runs.
    db = _edited(
        made,
        tmp_path,
        "DROP TABLE runs",
        "CREATE VIEW runs AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) "
        "SELECT 'x' AS id, 0.0 AS created_at, 0.0 AS updated_at, 'complete' AS status, "
        "'{}' AS spec, NULL AS manifest, NULL AS results, NULL AS out_dir, NULL AS owner FROM r",
    )
    for command in (("runs",), ("show", "latest"), ("report", "latest", "--out", tmp_path / "r")):
        proc = lmmprobe(*command, "--db", db, timeout=60)
        assert f"{db} holds a view 'runs' that lmmprobe did not create" in _one_line(proc)


def test_a_store_with_only_lmmprobe_objects_still_opens(made: Path, tmp_path: Path) -> None:
    # SQLite's own objects (ANALYZE's statistics) are not foreign.
    db = _edited(made, tmp_path, "ANALYZE")
    proc = lmmprobe("runs", "--db", db)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_results_nested_past_the_recursion_limit_are_damaged_not_a_traceback(
    made: Path, tmp_path: Path
) -> None:
    # Re-test 8 #3: a RecursionError traceback from `runs`, `show` and `report`.
    db = _edited(made, tmp_path, "UPDATE runs SET results = '" + "[" * 100_000 + "'")
    listed = lmmprobe("runs", "--db", db)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "Traceback" not in listed.stdout + listed.stderr
    for command in (("show", "latest"), ("report", "latest", "--out", tmp_path / "r")):
        line = _one_line(lmmprobe(*command, "--db", db))
        assert "'s results column does not hold a JSON object (damaged, or edited by hand)" in line


def test_an_infinite_stored_figure_is_damaged_not_shown_as_inf(made: Path, tmp_path: Path) -> None:
    # Re-test 8 #3: a value edited to 1e999 was shown as accuracy "inf [1.00, 1.00]".
    with sqlite3.connect(made) as conn:
        results = conn.execute("SELECT results FROM runs").fetchone()[0]
    edited = re.sub(r'"value": ?[0-9.eE+-]+', '"value": 1e999', results, count=1)
    assert edited != results
    db = _edited(made, tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET results = ?", (edited,))
    proc = lmmprobe("show", "latest", "--db", db)
    assert "inf" not in proc.stdout
    assert "results column does not hold a JSON object" in _one_line(proc)


def test_score_metadata_that_is_not_json_is_one_line_naming_run_and_column(
    made: Path, tmp_path: Path
) -> None:
    # Re-test 8 #3: a JSONDecodeError traceback from `export` and `report`.
    db = _edited(made, tmp_path, "UPDATE scores SET metadata = '[1,2'")
    for command in (
        ("export", "latest", "--format", "jsonl", "--out", tmp_path / "e.jsonl"),
        ("report", "latest", "--out", tmp_path / "r"),
    ):
        line = _one_line(lmmprobe(*command, "--db", db))
        assert "metadata" in line and "(damaged, or edited by hand: " in line, line


_DEEP = "[" * 100_000
_PAST_CAP = 2_000_000  # characters: past the 1,048,576 a run stores of a reply (MAX_REPLY_CHARS)


def test_a_reply_past_what_a_run_stores_is_refused_unread_naming_its_row(
    made: Path, tmp_path: Path
) -> None:
    # Re-test 8 #3: a 50 MB responses.text in every row kept export and report busy past 30 s
    # (each text read whole into Python). Measured in SQL, refused in one line.
    db = _edited(made, tmp_path, f"UPDATE responses SET text = printf('%.*c', {_PAST_CAP}, 'x')")
    for command in (
        ("export", "latest", "--format", "jsonl", "--out", tmp_path / "e.jsonl"),
        ("report", "latest", "--out", tmp_path / "r"),
    ):
        line = _one_line(lmmprobe(*command, "--db", db))
        assert f"{db}: run " in line and "'s answer of random to sample " in line, line
        assert f"its text column holds {_PAST_CAP:,} characters, more than the 1,048,576" in line
    # `show` reads the run's recorded figures, no answer text: it still shows them.
    shown = lmmprobe("show", "latest", "--db", db)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "random" in shown.stdout


def test_an_export_refused_half_way_leaves_the_earlier_export_as_it_was(
    made: Path, tmp_path: Path
) -> None:
    # `--out F` was opened (emptied) before the first row was read: a refusal left F empty.
    out = tmp_path / "e.jsonl"
    assert lmmprobe("export", "latest", "--out", out, "--db", made).returncode == 0
    before = out.read_bytes()
    assert before.count(b"\n") > 1
    db = _edited(
        made, tmp_path,
        f"UPDATE responses SET text = printf('%.*c', {_PAST_CAP}, 'x') WHERE rowid = "
        "(SELECT max(rowid) FROM responses)",
    )  # fmt: skip
    assert "more than the 1,048,576" in _one_line(lmmprobe("export", "latest", "--out", out,
                                                            "--db", db))  # fmt: skip
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".e.jsonl")) == []


def test_an_out_naming_the_store_itself_is_refused_and_the_store_kept(
    made: Path, tmp_path: Path
) -> None:
    # Re-test 10 #5: `--out` the store's own file renamed the export over the database.
    db = _edited(made, tmp_path)
    before = db.read_bytes()
    for command in (
        ("export", "latest", "--out", db),
        ("report", "latest", "--out", db),
        ("report", "latest", "--format", "csv", "--out", Path(f"{db}-wal")),
    ):
        line = _one_line(lmmprobe(*command, "--db", db))
        assert line.startswith(f"error: --out {command[-1]} is the store "), line
    assert db.read_bytes() == before
    assert lmmprobe("runs", "--db", db).returncode == 0


def test_an_out_that_cannot_be_written_is_one_line_naming_it(made: Path, tmp_path: Path) -> None:
    # Re-test 10 #8: a traceback on a full disk; a missing folder named the hidden temporary file.
    missing = tmp_path / "nodir" / "x.jsonl"
    line = _one_line(lmmprobe("export", "latest", "--out", missing, "--db", made))
    assert line == f"error: cannot write --out {missing}: no folder {missing.parent}", line
    if Path("/dev/full").exists():
        for command in (("export", "latest"), ("report", "latest", "--format", "csv")):
            line = _one_line(lmmprobe(*command, "--out", "/dev/full", "--db", made))
            assert line == "error: cannot write --out /dev/full: No space left on device", line


def test_an_out_that_is_a_link_is_written_through_and_stays_a_link(
    made: Path, tmp_path: Path
) -> None:
    # Renamed over, the link itself (`/dev/stdout` into a file, as root) would become a file.
    target = tmp_path / "kept" / "e.jsonl"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert lmmprobe("export", "latest", "--out", link, "--db", made).returncode == 0
    assert link.is_symlink() and target.read_text().count("\n") > 1


def test_thinking_past_what_a_run_stores_is_refused_too(made: Path, tmp_path: Path) -> None:
    db = _edited(
        made, tmp_path, f"UPDATE responses SET reasoning = printf('%.*c', {_PAST_CAP}, 'x')"
    )
    line = _one_line(lmmprobe("export", "latest", "--format", "jsonl", "--db", db))
    assert f"its reasoning column holds {_PAST_CAP:,} characters" in line, line


def test_a_verdict_detail_nested_past_the_rule_is_one_line_naming_run_and_column(
    made: Path, tmp_path: Path
) -> None:
    # json.loads read a verdict's detail: 100,000 brackets were a RecursionError traceback.
    db = _edited(
        made,
        tmp_path,
        "INSERT INTO judgements (run_id, model, sample_id, repeat, judge, protocol, version, "
        "attempt, decided_by, key, value, reading, detail, reason, created_at) "
        "SELECT run_id, model, sample_id, repeat, '', 'lmmprobe-choice', '1', 0, 'rule', NULL, "
        f"1.0, 'A', '{_DEEP}', NULL, 0.0 FROM scores LIMIT 1",
    )
    line = _one_line(lmmprobe("export", "latest", "--format", "jsonl", "--db", db))
    assert f"{db}: run " in line and "'s verdict on sample " in line, line
    assert "its detail column does not hold JSON as lmmprobe writes it" in line
    assert "nested more than 100 levels deep" in line


def test_a_stored_answer_with_damaged_token_counts_is_one_line_when_reused(
    made: Path, tmp_path: Path
) -> None:
    # The run reads its stored answers back (the cache): json.loads of a crafted column. (Not
    # the same data as the stored run, whose rows an identical re-run would copy unread.)
    db = _edited(made, tmp_path, f"UPDATE responses SET token_counts = '{_DEEP}'")
    proc = lmmprobe("run", "-q", "-m", "random", "-d", "demo,n=19", "--db", db,
                    "--out", tmp_path / "o")  # fmt: skip
    line = _one_line(proc)
    assert f"{db}: the stored response " in line and "'s token_counts column" in line, line


def test_a_recorded_sample_nested_past_the_rule_is_one_line_naming_it(
    made: Path, tmp_path: Path
) -> None:
    # A judge reads the samples the run recorded: json.loads of a crafted column.
    db = _edited(made, tmp_path, f"UPDATE samples SET sample = '{_DEEP}'")
    proc = lmmprobe("judge", "latest", "--judge", "openai:j@http://127.0.0.1:9/v1", "--db", db,
                    "--dry-run", OPENAI_API_KEY="test-key")  # fmt: skip
    line = _one_line(proc)
    assert "'s recorded sample 'demo-0-000000': its sample column does not hold JSON" in line


# Re-test 10 #6: the cap held responses.text and reasoning only. 20 rows of 50 MB in
# judgements.reason or responses.error_message made export write 1 GB at 1.29 GB RSS and report
# take 1.29 GB. Every free text a command reads is now measured in SQL and refused in one line;
# one character past the cap is enough to show it (and keeps the test's memory small).
_JUST_PAST = 1_048_577


def _verdict(column: str, length: int) -> str:
    """SQL: one rule's verdict on the run's first answer, `column` (reading or reason) long."""
    texts = {"reading": "'A'", "reason": "NULL"}
    texts[column] = f"printf('%.*c', {length}, 'x')"
    return (
        "INSERT INTO judgements (run_id, model, sample_id, repeat, judge, protocol, version, "
        "attempt, decided_by, key, value, reading, detail, reason, created_at) "
        "SELECT run_id, model, sample_id, repeat, '', 'lmmprobe-choice', '1', 0, 'rule', NULL, "
        f"1.0, {texts['reading']}, '{{}}', {texts['reason']}, 0.0 FROM scores "
        "ORDER BY sample_id LIMIT 1"
    )


@pytest.mark.parametrize(
    ("table", "column"), [("responses", "error_message"), ("scores", "prediction_text")]
)
def test_an_answer_text_past_the_cap_is_refused_unread_naming_its_row(
    made: Path, tmp_path: Path, table: str, column: str
) -> None:
    db = _edited(
        made, tmp_path,
        f"UPDATE {table} SET {column} = printf('%.*c', {_JUST_PAST}, 'x') "
        f"WHERE rowid = (SELECT min(rowid) FROM {table})",
    )  # fmt: skip
    commands: list[tuple[object, ...]] = [
        ("export", "latest", "--format", "jsonl", "--out", tmp_path / "e.jsonl")
    ]
    if column == "error_message":
        commands.append(("report", "latest", "--out", tmp_path / "r"))
    for command in commands:
        line = _one_line(lmmprobe(*command, "--db", db))
        assert f"{db}: run " in line and "'s answer of random to sample " in line, line
        assert f"its {column} column holds {_JUST_PAST:,} characters, more than the " in line
    assert not (tmp_path / "e.jsonl").exists()


@pytest.mark.parametrize("column", ["reason", "reading"])
def test_a_verdict_text_past_the_cap_is_refused_unread_naming_its_row(
    made: Path, tmp_path: Path, column: str
) -> None:
    db = _edited(made, tmp_path, _verdict(column, _JUST_PAST))
    commands: list[tuple[object, ...]] = [("export", "latest", "--format", "jsonl")]
    if column == "reason":
        commands.append(("report", "latest", "--out", tmp_path / "r"))
    for command in commands:
        line = _one_line(lmmprobe(*command, "--db", db))
        assert f"{db}: run " in line and "'s verdict on sample " in line, line
        assert f"its {column} column holds {_JUST_PAST:,} characters, more than the " in line
    # At the cap it is lmmprobe's own: read and exported whole.
    (tmp_path / "at").mkdir()
    at_cap = _edited(made, tmp_path / "at", _verdict(column, _JUST_PAST - 1))
    proc = lmmprobe("export", "latest", "--format", "jsonl", "--db", at_cap)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "x" * (_JUST_PAST - 1) in proc.stdout


def test_every_text_column_is_held_to_the_cap_or_named_here_as_not_free_text(
    tmp_path: Path,
) -> None:
    # A new column of free text must join CAPPED_COLUMNS (cut when written, refused or marked
    # when read): this names every other one and why it is not held to the cap.
    from lmmprobe.store import Store
    from lmmprobe.store.layout import CAPPED_COLUMNS, OUR_TABLES

    not_free_text = {
        # Ids, keys, labels and enumerations lmmprobe writes (short by construction).
        ("runs", "id"), ("runs", "status"), ("runs", "out_dir"), ("runs", "owner"),
        ("responses", "key"), ("responses", "model"), ("responses", "method"),
        ("responses", "error_type"), ("responses", "finish_reason"),
        ("scores", "run_id"), ("scores", "model"), ("scores", "sample_id"), ("scores", "key"),
        ("scores", "stage"), ("scores", "error_type"), ("scores", "formulation"),
        ("samples", "run_id"), ("samples", "sample_id"), ("images", "hash"),
        ("battles", "rater"), ("battles", "run_id"), ("battles", "sample_id"),
        ("battles", "model_a"), ("battles", "model_b"), ("battles", "key_a"),
        ("battles", "key_b"), ("battles", "vote"),
        ("judgements", "run_id"), ("judgements", "model"), ("judgements", "sample_id"),
        ("judgements", "judge"), ("judgements", "protocol"), ("judgements", "version"),
        ("judgements", "decided_by"), ("judgements", "key"),
        ("judge_votes", "judge"), ("judge_votes", "protocol"), ("judge_votes", "version"),
        ("judge_votes", "key_first"), ("judge_votes", "key_swapped"), ("judge_votes", "first"),
        ("judge_votes", "swapped"), ("judge_votes", "winner"),
        ("image_checks", "path"), ("image_checks", "content_hash"),
        ("load_checks", "source"), ("load_checks", "content"),
        # JSON lmmprobe writes, decoded under stored_json's rules (the 100-level rule).
        ("runs", "spec"), ("runs", "manifest"), ("runs", "results"),
        ("responses", "loglikelihoods"), ("responses", "token_counts"),
        ("scores", "gold"), ("scores", "metadata"), ("scores", "options"), ("scores", "marks"),
        ("scores", "option_order"), ("samples", "sample"), ("samples", "row_metadata"),
        ("judgements", "detail"), ("load_checks", "summary"),
        # The dataset's own texts: as long as the data holds them, no cap where written.
        ("responses", "prompt"), ("scores", "gold_text"), ("samples", "question"),
    }  # fmt: skip
    with Store(tmp_path / "s.db") as store:
        text = {
            (table, str(col[1]))
            for table in OUR_TABLES
            for col in store.conn.execute(f"PRAGMA table_info({table})")
            if str(col[2]).upper() == "TEXT"
        }
    capped = {(t, c) for t, columns in CAPPED_COLUMNS.items() for c in columns}
    assert capped <= text
    assert text - capped == not_free_text


def _results_edited(made: Path, tmp_path: Path, edit: dict[str, object]) -> Path:
    """A copy of `made` whose random model's stored accuracy has the fields of `edit`."""
    import json

    db = _edited(made, tmp_path)
    with sqlite3.connect(db) as conn:
        doc = json.loads(conn.execute("SELECT results FROM runs").fetchone()[0])
        doc["models"]["random"]["metrics"]["accuracy"].update(edit)
        conn.execute("UPDATE runs SET results = ?", (json.dumps(doc),))
    return db


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ({"value": "0.99"}, "value: '0.99' is not a number"),
        ({"n": -5}, "n: -5 is negative (a count of rows)"),
        ({"n": 3.5}, "n: 3.5 is not a whole number"),
        ({"low": 0.9, "high": 0.1}, "low: 0.9 is above high 0.1 (an inverted interval)"),
        (
            {"value": 0.99, "low": 0.2, "high": 0.4},
            "value: 0.99 lies outside its own interval [0.2, 0.4]",
        ),
        ({"low": True}, "low: True is not a number"),
    ],
)
def test_a_stored_figure_edited_by_hand_is_one_line_naming_run_and_field(
    made: Path, tmp_path: Path, edit: dict[str, object], said: str
) -> None:
    # Re-test 12 #7: a text "0.99" became the headline ("0.990 [0.24, 0.40]"), an inverted
    # interval and a negative count were shown as they were; pydantic read them laxly.
    db = _results_edited(made, tmp_path, edit)
    field = "models.random.metrics.accuracy."
    for command in (("show", "latest"), ("report", "latest", "--out", tmp_path / "r")):
        line = _one_line(lmmprobe(*command, "--db", db))
        assert (
            line.startswith("error: run ") and f" in {db}: not readable lmmprobe results: " in line
        )
        assert line.endswith(f"{field}{said}"), line
    # The listing keeps listing: the figure is left out and a line under the table says why.
    listed = lmmprobe("runs", "--db", db)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "0.990" not in listed.stdout
    assert f"not shown: random accuracy.{said}" in " ".join(listed.stdout.split())
    assert "(damaged, or edited by hand)" in listed.stdout


def test_a_stored_figure_edited_by_hand_is_the_error_page_of_serve(
    made: Path, tmp_path: Path
) -> None:
    import httpx
    from tests.serve.test_serve_cli import serving

    db = _results_edited(made, tmp_path, {"value": "0.99"})
    with sqlite3.connect(db) as conn:
        run_id = conn.execute("SELECT id FROM runs").fetchone()[0]
    log: list[str] = []
    with serving("--db", str(db), log=log) as url, httpx.Client(base_url=url, timeout=20) as c:
        page = c.get(f"/runs/{run_id}")
        assert page.status_code == 500, page.text[:300]
        assert "models.random.metrics.accuracy.value: &#39;0.99&#39; is not a number" in page.text
        assert "0.990" not in page.text
    assert "Traceback" not in log[0], log[0][-2000:]


def test_results_lmmprobe_writes_read_back_strictly(made: Path) -> None:
    # Strict reading refuses nothing lmmprobe itself stores (the figures of the made run).
    shown = lmmprobe("show", "latest", "--db", made)
    assert shown.returncode == 0, shown.stderr[-2000:]
    listed = lmmprobe("runs", "--db", made)
    assert "not shown" not in listed.stdout
