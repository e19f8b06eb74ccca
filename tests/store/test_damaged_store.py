"""A store damaged past its first pages: every command that opens it says so in one line.

The store is made the way a real one is (``lmmprobe run``, then arena votes through the store's
API), and damaged the way a bad disk or a half-copied file damages one: bytes overwritten in
every page after the tables' root pages, so that opening the file (header, schema, meta) still
works and the damage is met only while reading rows. Each command runs through the real
``lmmprobe`` console script; ``serve`` runs as its real app on loopback.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from tests.console import as_from_a_shell

from lmmprobe.store import Store, StoreDamagedError
from lmmprobe.store.battles import record_vote
from lmmprobe.store.queries import Readers, is_time_limit, list_runs

LMMPROBE = shutil.which("lmmprobe", path=str(Path(sys.executable).parent)) or "lmmprobe"
PAGE_NOISE = bytes(range(256)) * 4


def _lmmprobe(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LMMPROBE, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def _damage(src: Path, dst: Path) -> bytes:
    """Copy `src` to `dst` with bytes overwritten in each page after the tables' root pages."""
    with sqlite3.connect(src) as conn:
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
        first = 1 + int(conn.execute("SELECT MAX(rootpage) FROM sqlite_master").fetchone()[0])
    data = bytearray(src.read_bytes())
    pages = len(data) // page
    assert pages > first + 20, "the store should span many pages past its root pages"
    for number in range(first, pages + 1):  # pages are numbered from 1
        start = (number - 1) * page + 100
        data[start : start + len(PAGE_NOISE)] = PAGE_NOISE
    dst.write_bytes(bytes(data))
    return bytes(data)


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, bytes]:
    """A damaged copy of a real store (a run of two models, arena votes): path, run id, bytes."""
    root = tmp_path_factory.mktemp("damaged")
    good = root / "good.db"
    proc = _lmmprobe(
        "run", "-q", "-m", "random", "-m", "first", "-d", "demo,n=300", "--db", str(good),
        "--out", str(root / "out"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with Store(good) as store:
        run_id = store.resolve_run("latest")
        rows = store.conn.execute(
            "SELECT sample_id, repeat, key FROM scores WHERE run_id = ? AND model = ? "
            "ORDER BY sample_id LIMIT 150",
            (run_id, "random"),
        ).fetchall()
        keys = dict(
            store.conn.execute(
                "SELECT sample_id, key FROM scores WHERE run_id = ? AND model = 'first'", (run_id,)
            ).fetchall()
        )
        for i, (sample_id, repeat, key) in enumerate(rows):
            record_vote(
                store, rater=f"rater-{i % 3}", run_id=run_id, sample_id=sample_id, repeat=repeat,
                model_a="random", model_b="first", key_a=key, key_b=keys[sample_id],
                vote=("a", "b", "tie")[i % 3],
            )  # fmt: skip
    assert not Path(f"{good}-wal").exists()  # closed: every page is in the file
    bad = root / "bad.db"
    return bad, run_id, _damage(good, bad)


def _synth_folder(root: Path) -> Path:
    folder = root / "synth"
    if not folder.is_dir():
        proc = _lmmprobe("synth", "generate", "-o", str(folder), "--n", "1", "--size", "64")
        assert proc.returncode == 0, proc.stderr
    return folder


COMMANDS = {
    "run": ["run", "-q", "-m", "random", "-d", "demo,n=3"],
    "show": ["show", "RUN"],
    "runs": ["runs"],
    "compare": ["compare", "latest", "-m", "random", "-m", "first"],
    "export": ["export", "latest"],
    "report": ["report", "latest", "-o", "OUT/report.html"],
    "arena export": ["arena", "export", "-o", "OUT/votes.jsonl"],
    "synth filter": ["synth", "filter", "SYNTH", "--run", "RUN"],
    "apex": ["apex", "Can models recognize shapes?", "-m", "random", "--max-experiments", "1",
             "-q", "--out", "OUT/apex"],
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_says_the_store_is_damaged_in_one_line(
    damaged: tuple[Path, str, bytes], tmp_path: Path, command: str
) -> None:
    db, run_id, data = damaged
    args = [a.replace("RUN", run_id).replace("OUT", str(tmp_path)) for a in COMMANDS[command]]
    if "SYNTH" in args:
        args[args.index("SYNTH")] = str(_synth_folder(db.parent))
    proc = _lmmprobe(*args, "--db", str(db), cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr and "─" not in proc.stderr  # no (rich) traceback
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith(f"error: {db} is damaged"), line
    assert "left it as it is" in line and ".recover" in line and "--db" in line
    assert len(line) < 400, line  # one readable line, not SQLite's whole report
    assert db.read_bytes() == data  # nothing written to it
    assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()


@contextmanager
def _serving(db: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``lmmprobe serve --db DB`` on a free loopback port: its URL and process."""
    proc = subprocess.Popen(
        [LMMPROBE, "serve", "--db", str(db), "--port", "0"],
        preexec_fn=as_from_a_shell,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert " at http://" in line, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield line.rsplit(" at ", 1)[1].strip().rstrip("/"), proc
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_serve_answers_an_error_page_with_the_one_line_message(
    damaged: tuple[Path, str, bytes], tmp_path: Path
) -> None:
    _, run_id, data = damaged
    db = tmp_path / "bad.db"  # a copy: serve keeps its search index beside the store
    db.write_bytes(data)
    pages = [
        "/", f"/runs/{run_id}", f"/runs/{run_id}/samples", f"/runs/{run_id}/samples/demo-0-000000",
        f"/compare?a={run_id}&b={run_id}&model_a=random&model_b=first",
    ]  # fmt: skip
    with _serving(db) as (url, proc), httpx.Client(timeout=30) as client:
        for path in pages:
            page = client.get(url + path)
            assert page.status_code in (500, 503), (path, page.status_code)
            assert page.headers["content-type"].startswith("text/html"), path
            found = re.search(r"<h1>(.*?)</h1>\s*<p>(.*?)</p>", page.text, re.S)
            assert found is not None, (path, page.text[:500])
            title, message = found.groups()
            assert title == "The store cannot be read", (path, title)
            assert "damaged" in message and "\n" not in message, (path, message)
            assert "Traceback" not in page.text and 'href="/"' in page.text
        listing = client.get(url + "/api/runs")
        assert listing.status_code == 500
        assert "damaged" in listing.json()["detail"]
    assert proc.stderr is not None
    log = proc.stderr.read()
    assert "Traceback" not in log, log[-3000:]
    assert db.read_bytes() == data


def test_the_viewers_reads_raise_the_typed_error(
    damaged: tuple[Path, str, bytes], tmp_path: Path
) -> None:
    readers = Readers(damaged[0])
    try:
        with pytest.raises(StoreDamagedError, match="is damaged"), readers.connection() as conn:
            list_runs(conn)
    finally:
        readers.close()
    # A query the viewer stops on purpose (its time limit) is not a fault of the file.
    Store(tmp_path / "s.db").close()
    stopping = Readers(tmp_path / "s.db", time_limit_s=0.0)
    count = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) "
        "SELECT COUNT(*) FROM n"
    )
    try:
        with pytest.raises(sqlite3.OperationalError) as info, stopping.connection() as conn:
            conn.execute(count).fetchone()
        assert is_time_limit(info.value)
    finally:
        stopping.close()
