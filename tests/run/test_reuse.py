"""A run identical to an earlier complete run copies its rows: the same results as scoring them.

A re-run of the same data, spec, models and scorer, whose answers are all stored and unchanged,
copies the earlier run's sample and score rows in SQL (`lmmprobe.store.reuse`) instead of
planning, scoring and writing them. Each shape here (repeats with breakdowns, CircularEval, a
judged run with two judges, a run read in chunks) is run three times: first, re-run on the
plain path (``reuse=False``), re-run with reuse; the copy's results.json, results.md and stored
rows are the plain re-run's, and its figures are the first run's. Then each thing the rule
names, changed, sends the run back to the plain path.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from tests.bounded import bounded
from tests.choice_rows import CHOICE_ASK
from tests.console import lmmprobe, lmmprobe_with_key
from tests.plugin_dist import install_plugin, plugin_path

import lmmprobe.judge.step as judge_step
import lmmprobe.run.runner as runner
from lmmprobe import evaluate
from lmmprobe.api import Evaluation
from lmmprobe.run.manifest import NO_SOURCE_CHANGES, git_commit, source_changes
from lmmprobe.store import Store
from lmmprobe.testing.openai_server import FakeOpenAIServer

N = 24


def _rows(folder: Path) -> Path:
    """N two-option questions, each with its own small picture, three subtasks."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "img").mkdir(exist_ok=True)
    lines = []
    for i in range(N):
        name = f"img/q{i:02d}.png"
        Image.new("RGB", (8, 8), (i * 9, 40, 200 - i)).save(folder / name)
        row = {"id": f"q{i:02d}", "images": [name], "question": f"Which animal is item{i}?",
               "choices": ["cat", "dog", "cow"], "answer": i % 3,
               "metadata": {"subtask": f"s{i % 3}"}}  # fmt: skip
        lines.append(json.dumps(row) + "\n")
    path = folder / "rows.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _normalized(out: Path) -> tuple[dict[str, Any], str]:
    """results.json and results.md without what names the run (its id, folder, time)."""
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    run_id = res.pop("run_id")
    for key in ("finished_at", "store"):
        res.pop(key)
    res["manifest"].pop("rows_scored_at")  # the time the rows were scored: a moment
    for key in ("out", "db"):
        res["spec"].pop(key)
    md = (out / "results.md").read_text(encoding="utf-8").replace(run_id, "RUN")
    md = "\n".join(
        line for line in md.splitlines() if str(out) not in line and "20" not in line[:4]
    )
    return res, md


def _figures(res: dict[str, Any]) -> dict[str, Any]:
    """The figures alone: metrics, breakdowns and counts, not how answers were fetched."""
    out = {}
    for spec, model in res["models"].items():
        out[spec] = {k: v for k, v in model.items() if k != "stats"}
        for calls in ((model.get("judge") or {}).get("calls") or {}).values():
            calls.pop("called")
            calls.pop("cached")
    return out


def _stored(db: Path, run_id: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """A run's score rows and sample rows, every column but the run's id, in a fixed order."""
    with sqlite3.connect(db) as c:
        scores = c.execute(
            "SELECT model, sample_id, repeat, key, stage, prediction, prediction_text, correct, "
            "format_hit, gold, gold_text, abstain_offered, abstained, error_type, metadata, "
            "formulation, options, marks, option_order FROM scores WHERE run_id = ? "
            "ORDER BY model, sample_id, repeat",
            (run_id,),
        ).fetchall()
        samples = c.execute(
            "SELECT sample_id, question, sample, row_metadata FROM samples WHERE run_id = ? "
            "ORDER BY sample_id",
            (run_id,),
        ).fetchall()
    return scores, samples


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """A fake OpenAI server: the model answers (B) to some questions and no option to others."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    table = [(f"@judge-b {CHOICE_ASK}", "B"), (CHOICE_ASK, "A")]
    table += [
        (f"Which animal is item{i}?", f"unsure about item{i}" if i % 4 == 0 else "(B)")
        for i in range(N)
    ]
    with FakeOpenAIServer(reply_table=table) as fake:
        yield fake


def _shape(name: str, url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    vlm = f"openai:fake-vlm@{url}"
    if name == "repeats":
        return {"models": ["first", "random", vlm], "repeats": 3, "by": ["subtask"],
                "formulate": {"shuffle_repeats": True}}  # fmt: skip
    if name == "circular":
        return {"models": ["first", vlm], "formulate": {"circular": True}}
    if name == "judged":
        judges = [f"openai:judge-a@{url}", f"openai:judge-b@{url}"]
        return {"models": [vlm], "repeats": 2, "judge": {"judges": judges}}
    assert name == "chunked"
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", 5)
    monkeypatch.setattr(judge_step, "CHUNK_SAMPLES", 5)
    return {"models": ["first", vlm], "repeats": 2, "by": ["subtask"]}


@pytest.mark.parametrize("shape", ["repeats", "circular", "judged", "chunked"])
def test_a_copied_rerun_gives_the_plain_reruns_results_byte_for_byte(
    tmp_path: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    data = _rows(tmp_path / "data")
    spec = {**_shape(shape, server.base_url, monkeypatch), "data": str(data)}
    db = tmp_path / "s.db"
    first = evaluate(**spec, db=str(db), out=str(tmp_path / "first"))
    assert first.outcome.reused_from is None
    plain = evaluate(**spec, db=str(db), out=str(tmp_path / "plain"), reuse=False)
    assert plain.outcome.reused_from is None
    sent = server.requests_total
    copied = evaluate(**spec, db=str(db), out=str(tmp_path / "copied"))
    assert copied.outcome.reused_from == plain.outcome.run_id
    assert copied.results.status == plain.results.status == "complete"
    # results.json and results.md: the plain re-run's, byte for byte but the run's names.
    assert _normalized(tmp_path / "copied") == _normalized(tmp_path / "plain")
    # The figures are the first run's (which asked the model: its counts say so).
    assert _figures(_normalized(tmp_path / "copied")[0]) == _figures(
        _normalized(tmp_path / "first")[0]
    )
    # The stored rows are the plain re-run's, so a report rebuilt later reads the same.
    assert _stored(db, copied.outcome.run_id) == _stored(db, plain.outcome.run_id)
    assert server.requests_total == sent  # judges' verdicts came from the store too
    assert copied.outcome.manifest["scorer_version"] == runner.SCORER_VERSION


def _run(data: Path, db: Path, out: Path, **extra: Any) -> Evaluation:
    return evaluate(models=["first"], data=str(data), db=str(db), out=str(out), **extra)


def test_a_changed_image_is_read_again_and_nothing_is_copied(tmp_path: Path) -> None:
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    _run(data, db, tmp_path / "a")
    picture = data.parent / "img" / "q03.png"
    Image.new("RGB", (8, 8), (1, 2, 3)).save(picture)
    st = picture.stat()
    os.utime(picture, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    again = _run(data, db, tmp_path / "b")
    assert again.outcome.reused_from is None
    assert again.outcome.manifest["data"]["fingerprint"] != _manifest(db)[0]["data"]["fingerprint"]


def _manifest(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as c:
        return [json.loads(m) for (m,) in c.execute("SELECT manifest FROM runs ORDER BY rowid")]


def test_the_same_pictures_elsewhere_are_not_the_same_run(tmp_path: Path) -> None:
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    first = _run(data, db, tmp_path / "a")
    moved = tmp_path / "moved"
    shutil.copytree(data.parent, moved)
    again = _run(moved / "rows.jsonl", db, tmp_path / "b")
    # Same content, same fingerprint; but a run records where its files are.
    assert (
        again.outcome.manifest["data"]["fingerprint"]
        == first.outcome.manifest["data"]["fingerprint"]
    )
    assert again.outcome.reused_from is None


def test_another_scorer_version_scores_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    _run(data, db, tmp_path / "a")
    monkeypatch.setattr(runner, "SCORER_VERSION", runner.SCORER_VERSION + 1)
    assert _run(data, db, tmp_path / "b").outcome.reused_from is None
    assert _run(data, db, tmp_path / "c").outcome.reused_from is not None


def test_other_settings_or_no_cache_do_not_copy(tmp_path: Path) -> None:
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    first = _run(data, db, tmp_path / "a")
    # The results folder is not an input: the same run written elsewhere copies.
    assert _run(data, db, tmp_path / "b").outcome.reused_from == first.run_id
    assert _run(data, db, tmp_path / "c", seed=7).outcome.reused_from is None
    assert _run(data, db, tmp_path / "d", repeats=2).outcome.reused_from is None
    assert _run(data, db, tmp_path / "e", limit=N - 1).outcome.reused_from is None
    assert _run(data, db, tmp_path / "f", no_cache=True).outcome.reused_from is None
    # That run asked again and replaced every answer: no earlier run's rows are theirs now.
    assert _run(data, db, tmp_path / "g").outcome.reused_from is None


def test_an_answer_replaced_since_is_scored_again(tmp_path: Path, server: FakeOpenAIServer) -> None:
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    spec = {"models": [f"openai:fake-vlm@{server.base_url}"], "data": str(data), "db": str(db)}
    first = evaluate(**spec, out=str(tmp_path / "a"))
    # A --no-cache run asks again and replaces the stored answers (its spec differs, so it
    # is no source itself); the first run's rows may no longer be what its answers score.
    evaluate(**spec, out=str(tmp_path / "b"), no_cache=True)
    again = evaluate(**spec, out=str(tmp_path / "c"))
    assert again.outcome.reused_from is None
    assert first.outcome.run_id != again.outcome.run_id
    # That plain re-run is complete and its answers untouched since: the next one copies it.
    assert evaluate(**spec, out=str(tmp_path / "d")).outcome.reused_from == again.run_id


def test_an_answer_replaced_after_the_rows_were_scored_is_scored_again(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    # A run is complete from the runner's end; its judging and results are written after.
    # A --no-cache run replacing an answer in that window wrote it before the run's last
    # update, which the answers were checked against: a later identical run copied rows
    # scored from the old answers (re-test 16 #11). The window is made here in the order it
    # happens: the first run's rows scored, the answers replaced, then its results written.
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    spec = {"models": [f"openai:fake-vlm@{server.base_url}"], "data": str(data), "db": str(db)}
    first = evaluate(**spec, out=str(tmp_path / "a"))
    server.reply_table = [(f"Which animal is item{i}?", "(C)") for i in range(N)]
    evaluate(**spec, out=str(tmp_path / "b"), no_cache=True)  # replaces every answer
    with Store(db) as store:  # the first run's last step, its results, written after that
        store.update_run(first.run_id, results=store.get_run(first.run_id)["results"])
    again = evaluate(**spec, out=str(tmp_path / "c"))
    assert again.outcome.reused_from is None
    plain = evaluate(**spec, out=str(tmp_path / "p"), reuse=False)
    assert _stored(db, again.run_id) == _stored(db, plain.run_id)
    assert {row[5] for row in _stored(db, again.run_id)[0]} == {2}  # (C): the answers now


def test_a_copy_is_a_source_as_of_its_sources_rows(tmp_path: Path) -> None:
    # A run that copied its rows holds rows scored when its source's were: it records that
    # time, so an answer replaced after the source's rows were scored is not passed on.
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    first = _run(data, db, tmp_path / "a")
    copied = _run(data, db, tmp_path / "b")
    assert copied.outcome.reused_from == first.run_id
    scored = [m["rows_scored_at"] for m in _manifest(db)]
    assert scored[0] == scored[1] == first.outcome.manifest["rows_scored_at"]
    with sqlite3.connect(db) as c:  # as recorded before the mark: never a source
        for (run_id,) in c.execute("SELECT id FROM runs").fetchall():
            manifest = json.loads(c.execute(
                "SELECT manifest FROM runs WHERE id = ?", (run_id,)
            ).fetchone()[0])  # fmt: skip
            manifest.pop("rows_scored_at")
            c.execute("UPDATE runs SET manifest = ? WHERE id = ?", (json.dumps(manifest), run_id))
    assert _run(data, db, tmp_path / "c").outcome.reused_from is None


def test_a_run_with_errors_is_never_copied(tmp_path: Path) -> None:
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    (data.parent / "img" / "q05.png").write_bytes(b"")  # unreadable: that row is refused
    spec = {"models": ["first"], "data": str(data), "db": str(db)}
    first = evaluate(**spec, out=str(tmp_path / "a"))
    assert first.results.data.invalid == 1
    assert evaluate(**spec, out=str(tmp_path / "b")).outcome.reused_from == first.run_id
    with sqlite3.connect(db) as c:
        c.execute("UPDATE runs SET status = 'complete_with_errors'")
    assert evaluate(**spec, out=str(tmp_path / "c")).outcome.reused_from is None


def test_the_console_says_the_rows_were_copied(tmp_path: Path) -> None:
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    args = ["run", "-m", "first", "-d", str(data), "--db", str(db)]
    first = lmmprobe(*args, "--out", str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr
    assert "rows copied" not in first.stderr
    again = lmmprobe(*args, "--out", str(tmp_path / "b"))
    assert again.returncode == 0, again.stderr
    assert "note: rows copied from run " in again.stderr
    assert f"first: {N} requests, {N} from the store, 0 sent, 0 errors" in again.stdout


def test_a_judged_copy_of_a_run_is_never_a_source(tmp_path: Path, server: FakeOpenAIServer) -> None:
    # `lmmprobe judge A` records A's spec plus the judges, A's manifest and A's rows as A
    # scored them. A --no-cache run since replaced A's answers; a run with the same judges
    # must score what is stored now, as its plain re-run does, not copy the judged run's rows.
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    vlm, judge = f"openai:fake-vlm@{server.base_url}", f"openai:judge-b@{server.base_url}"
    args = ["-m", vlm, "-d", str(data), "--db", str(db)]
    first = lmmprobe_with_key("run", *args, "--out", tmp_path / "a")
    assert first.returncode == 0, first.stderr
    server.reply_table = [(f"@judge-b {CHOICE_ASK}", "B"), (CHOICE_ASK, "A")] + [
        (f"Which animal is item{i}?", "(C)") for i in range(N)
    ]
    replaced = lmmprobe_with_key("run", *args, "--no-cache", "--out", tmp_path / "b")
    assert replaced.returncode == 0, replaced.stderr
    with sqlite3.connect(db) as c:
        (first_id,) = c.execute("SELECT id FROM runs ORDER BY created_at LIMIT 1").fetchone()
    judged = lmmprobe_with_key(
        "judge", first_id, "--judge", judge, "--db", db, "--out", tmp_path / "j"
    )
    assert judged.returncode == 0, judged.stderr
    again = lmmprobe_with_key("run", *args, "--judge", judge, "--out", tmp_path / "c")
    assert again.returncode == 0, again.stderr
    assert "rows copied" not in again.stderr
    plain = evaluate(models=[vlm], data=str(data), db=str(db), out=str(tmp_path / "p"),
                     judge={"judges": [judge]}, reuse=False)  # fmt: skip
    with sqlite3.connect(db) as c:
        (again_id,) = c.execute(
            "SELECT id FROM runs WHERE out_dir = ?", (str(tmp_path / "c"),)
        ).fetchone()
    assert _stored(db, again_id) == _stored(db, plain.run_id)
    assert _normalized(tmp_path / "c") == _normalized(tmp_path / "p")


@pytest.mark.parametrize("lost", ["scores", "samples"])
def test_a_run_whose_rows_were_lost_is_not_copied(tmp_path: Path, lost: str) -> None:
    # A damaged store (a row of the earlier run gone): a copy would hold fewer rows than the
    # plain re-run (or refer to a sample it does not hold); the run scores again instead.
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    first = _run(data, db, tmp_path / "a")
    with sqlite3.connect(db) as c:
        c.execute(f"DELETE FROM {lost} WHERE run_id = ? AND sample_id = 'q05'", (first.run_id,))
    again = _run(data, db, tmp_path / "b")
    assert again.outcome.reused_from is None
    plain = _run(data, db, tmp_path / "c", reuse=False)
    assert _stored(db, again.run_id) == _stored(db, plain.run_id)
    assert len(_stored(db, again.run_id)[0]) == N
    # That complete, whole re-run is a source again.
    assert _run(data, db, tmp_path / "d").outcome.reused_from == plain.run_id


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


def test_a_checkout_edited_since_is_not_the_same_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A checkout with uncommitted changes records "COMMIT+dirty" whatever the changes are: a
    # matcher edited between two runs left the manifests equal and the second run copied
    # rows the edited code would score otherwise. The changes' hash tells them apart.
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    monkeypatch.setattr(runner, "git_commit_later", lambda: _done("0" * 40 + "+dirty"))
    monkeypatch.setattr(runner, "source_changes_later", lambda: _done("edit-1"))
    first = _run(data, db, tmp_path / "a")
    assert first.outcome.manifest["source_changes"] == "edit-1"
    assert _run(data, db, tmp_path / "b").outcome.reused_from == first.run_id
    monkeypatch.setattr(runner, "source_changes_later", lambda: _done("edit-2"))
    assert _run(data, db, tmp_path / "c").outcome.reused_from is None


def test_a_module_added_untracked_and_edited_since_is_not_the_same_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Re-test 17: a matcher module added to lmmprobe/parse (discovered, so imported) and not
    # yet `git add`-ed leaves the tracked files clean: no "+dirty", and `source_changes` was
    # recorded only with it. Edited between two runs, the second copied the first's rows
    # (accuracy 1.000 where the edited matcher gives 0.000). Its hash is recorded anyway.
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    monkeypatch.setattr(runner, "git_commit_later", lambda: _done("0" * 40))
    monkeypatch.setattr(runner, "source_changes_later", lambda: _done("untracked-1"))
    first = _run(data, db, tmp_path / "a")
    assert first.outcome.manifest["source_changes"] == "untracked-1"
    assert _run(data, db, tmp_path / "b").outcome.reused_from == first.run_id
    monkeypatch.setattr(runner, "source_changes_later", lambda: _done("untracked-2"))
    assert _run(data, db, tmp_path / "c").outcome.reused_from is None
    # A clean checkout records nothing more than before.
    monkeypatch.setattr(runner, "source_changes_later", lambda: _done(None))
    assert "source_changes" not in _run(data, db, tmp_path / "d").outcome.manifest


def test_a_dirty_checkout_whose_changes_git_did_not_hash_never_reuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `source_changes` is None when git fails or times out (10 s): two runs of an edited
    # checkout then recorded "+dirty" and None alike, and the second copied the first.
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    monkeypatch.setattr(runner, "git_commit_later", lambda: _done("0" * 40 + "+dirty"))
    monkeypatch.setattr(runner, "source_changes_later", lambda: _done(None))
    _run(data, db, tmp_path / "a")
    assert _run(data, db, tmp_path / "b").outcome.reused_from is None


def test_a_checkout_dirty_only_outside_the_package_reuses_its_identical_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An edited README or test makes the checkout "+dirty" while the package is the commit's:
    # its runs recorded no hash and never reused (re-test 19, Low).
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    monkeypatch.setattr(runner, "git_commit_later", lambda: _done("0" * 40 + "+dirty"))
    monkeypatch.setattr(runner, "source_changes_later", lambda: _done(NO_SOURCE_CHANGES))
    first = _run(data, db, tmp_path / "a")
    assert first.outcome.manifest["source_changes"] == NO_SOURCE_CHANGES
    assert _run(data, db, tmp_path / "b").outcome.reused_from == first.outcome.run_id
    monkeypatch.setattr(runner, "source_changes_later", lambda: _done("edit-1"))
    assert _run(data, db, tmp_path / "c").outcome.reused_from is None  # the package edited


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_source_changes_hash_the_uncommitted_code(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "pkg" / "m.py").write_text("x = 1\n")
    (repo / ".gitignore").write_text("*.pyc\n")
    (repo / "README").write_text("read me")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    pkg = repo / "pkg"
    assert source_changes(pkg) == NO_SOURCE_CHANGES  # clean
    (repo / "README").write_text("edited")  # a change outside the package: none of its own
    assert git_commit(pkg).endswith("+dirty")  # type: ignore[union-attr]
    assert source_changes(pkg) == NO_SOURCE_CHANGES
    (pkg / "m.py").write_text("x = 2\n")
    one = source_changes(pkg)
    (pkg / "m.py").write_text("x = 3\n")
    two = source_changes(pkg)
    assert one is not None and two is not None and one != two
    (pkg / "new.py").write_text("y = 1\n")  # a new module, not yet added
    three = source_changes(pkg)
    assert three not in (None, two)
    (pkg / "new.pyc").write_bytes(b"ignored")
    assert source_changes(pkg) == three
    (pkg / "m.py").write_text("x = 1\n")  # tracked files clean again: the new module counts
    four = source_changes(pkg)
    assert four not in (None, NO_SOURCE_CHANGES, three)
    # Re-test 17: an untracked link to /dev/zero was read whole (MemoryError out of the run);
    # a FIFO (git lists none) and a link to one must not wait for a writer either.
    os.mkfifo(pkg / "fifo")
    (pkg / "zero").symlink_to("/dev/zero")
    (pkg / "to-fifo").symlink_to(pkg / "fifo")
    assert source_changes(pkg) not in (None, four)
    assert source_changes(tmp_path / "nowhere") is None  # not a checkout


def test_many_large_untracked_files_are_not_all_read_on_every_run(tmp_path: Path) -> None:
    """Re-test 18: each untracked file up to 16 MiB was read, a thousand of them: 16 GiB read
    and hashed by every run from such a checkout (1 GiB added 0.7 s to a one-row run)."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "pkg" / "m.py").write_text("x = 1\n")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    data = repo / "pkg" / "data"
    data.mkdir()
    for n in range(1_000):
        with (data / f"{n:04}.bin").open("wb") as f:
            f.truncate(1 << 24)  # sparse: 16 MiB of zeros that take no disk
    before = bounded(source_changes, repo / "pkg", seconds=5.0)
    (repo / "pkg" / "new.py").write_text("y = 1\n")  # a module after them all is still seen
    assert bounded(source_changes, repo / "pkg", seconds=5.0) not in (None, before)


_PICK = '''
from lmmprobe.parse import Extraction


def pick(output, options, marks, config):
    """Reads every answer as option {index}."""
    return Extraction({index}, "mark", "pick")
'''


def _install_pick(root: Path, version: str, index: int) -> Path:
    return install_plugin(
        root, "lmmprobe-pick-xyz", version, _PICK.format(index=index),
        {"lmmprobe.matchers": {"pick": "lmmprobe_pick_xyz:pick"}},
    )  # fmt: skip


def test_an_upgraded_plugin_matcher_scores_again(tmp_path: Path) -> None:
    # A matcher from an installed plugin package, upgraded between two identical runs (its
    # new version reads answers otherwise): the manifests were equal (only KEY_LIBRARIES'
    # versions were recorded) and the second run copied rows the new matcher would score
    # otherwise. The plugin's version is in the manifest now.
    data, db = _rows(tmp_path / "data"), tmp_path / "s.db"
    plugins = _install_pick(tmp_path / "plugins", "1.0", 0)
    args = ["run", "-m", "first", "-d", data, "--matcher", "pick", "--db", db, "-q"]

    def run(out: str) -> tuple[str, list[int], dict[str, Any]]:
        proc = lmmprobe(*args, "--out", tmp_path / out, **plugin_path(plugins))
        assert proc.returncode == 0, proc.stderr
        res = json.loads((tmp_path / out / "results.json").read_text(encoding="utf-8"))
        with sqlite3.connect(db) as c:
            picked = [p for (p,) in c.execute(
                "SELECT prediction FROM scores WHERE run_id = ?", (res["run_id"],)
            )]  # fmt: skip
        return proc.stderr, sorted(set(picked)), res["manifest"]

    said, picked, _ = run("a")
    assert "rows copied" not in said and picked == [0]
    said, picked, _ = run("b")  # the same version: its rows are copied, as without plugins
    assert "note: rows copied from run " in said and picked == [0]
    _install_pick(plugins, "1.1", 1)  # upgraded: it reads every answer as option 1
    said, picked, manifest = run("c")
    assert "rows copied" not in said
    assert picked == [1]
    assert manifest["plugins"] == {"lmmprobe-pick-xyz": "1.1"}
