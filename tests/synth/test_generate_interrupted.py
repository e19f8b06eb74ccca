"""``synth generate`` stopped by SIGTERM, or killed outright, leaves no work folder (walk2 #3).

``timeout 175 lmmprobe synth generate --n 1000 --out bench/ --workers 2`` ended with a
"leaked semaphore" warning and a hidden 164 MB ``.bench.partial-PID-HEX`` folder that the next
successful generate to ``bench/`` left where it was.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.console import lmmprobe


def _console_script() -> str:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    return exe


def _partials(folder: Path) -> list[Path]:
    return sorted(folder.glob(".bench.partial-*"))


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_sigterm_removes_the_work_folder_and_stops_the_workers(tmp_path: Path) -> None:
    cmd = [_console_script(), "synth", "generate", "--n", "5000", "--size", "64"]
    cmd += ["--workers", "2", "--out", str(tmp_path / "bench")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120  # a bound on the wait, not a timing assertion
        while not any(p.joinpath("samples.jsonl").exists() for p in _partials(tmp_path)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the work folder never appeared"
            time.sleep(0.05)
        time.sleep(1)  # let the workers get going
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    assert _partials(tmp_path) == [], err
    assert not (tmp_path / "bench").exists()
    assert "leaked semaphore" not in err, err


def test_the_next_generate_removes_a_dead_generations_work_folder(tmp_path: Path) -> None:
    stale = tmp_path / f".bench.partial-{_dead_pid()}-54d4ab52"
    (stale / "images").mkdir(parents=True)
    (stale / "samples.jsonl").write_text("{}\n", encoding="utf-8")
    live = tmp_path / f".bench.partial-{os.getpid()}-0badcafe"  # a generation still running
    live.mkdir()
    other = tmp_path / ".other.partial-1-00000000"  # another --out's: not ours to judge
    other.mkdir()
    made = lmmprobe("synth", "generate", "--n", "2", "--size", "32", "--out", tmp_path / "bench")
    assert made.returncode == 0, made.stderr
    assert _partials(tmp_path) == [live]
    assert other.is_dir()
    assert (tmp_path / "bench" / "samples.jsonl").is_file()
