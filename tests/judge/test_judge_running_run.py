"""`lmmprobe judge` of a run another process is running says so (re-test 19).

Its answers are scored as each chunk ends, so until then the run holds no scored answers; the
judge command said the run "stopped before they were asked" and told the user to run it again
with the command that started it, which was still running.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.console import lmmprobe_with_key

from lmmprobe.store import Store
from lmmprobe.testing.openai_server import FakeOpenAIServer

_CHUNK = 2
"""Samples a chunk of the running run (the runner's `CHUNK_SAMPLES`, lowered so that a run of
four has two: a real run meets this past 10,000 samples)."""


class _HoldsTheSecondChunk(FakeOpenAIServer):
    """A model server that answers the first chunk's requests at once and holds the rest."""

    def _sleep(self, seconds: float) -> bool:
        return super()._sleep(60 if self.requests_total > _CHUNK else seconds)


def test_judging_a_run_still_running_says_it_is_running(tmp_path: Path) -> None:
    db = tmp_path / "db"
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    with FakeOpenAIServer(latency=30) as slow, FakeOpenAIServer() as judge:
        running = subprocess.Popen(
            [exe, "run", "-m", f"openai:slow@{slow.base_url}", "--data", "demo,n=2", "-q",
             "--db", str(db), "--out", str(tmp_path / "run")],
            env={**os.environ, "OPENAI_API_KEY": "test-key"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while slow.requests_total < 2 and time.monotonic() < deadline:
                time.sleep(0.2)  # the run is recorded before its first request is sent
            assert slow.requests_total >= 1
            with Store(db, read_only=True) as store:
                (run,) = store.list_runs()
                assert run["status"] == "running"
            proc = lmmprobe_with_key("judge", "latest", "--db", db, "--judge",
                                     f"openai:judge@{judge.base_url}", "-q")  # fmt: skip
        finally:
            running.kill()
            running.wait()
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = " ".join(proc.stderr.split())
    assert "is running (in another process) and holds no scored answers of" in said, said
    assert "judge it once it has finished" in said
    assert "run it again with the command that started it" not in said
    assert judge.requests_total == 0


def test_judging_a_run_of_many_chunks_still_running_is_refused_once_a_chunk_is_scored(
    tmp_path: Path,
) -> None:
    # Re-test 19 of issue 34 (#19): once a chunk of the running run was scored, `lmmprobe
    # judge` judged that part and recorded a judged run of it.
    db = tmp_path / "db"
    start = (
        "import sys; import lmmprobe.run.runner as r; from lmmprobe.cli.main import main; "
        f"r.CHUNK_SAMPLES = {_CHUNK}; sys.argv[0] = 'lmmprobe'; main()"
    )
    with _HoldsTheSecondChunk() as model, FakeOpenAIServer() as judge:
        running = subprocess.Popen(
            [sys.executable, "-c", start, "run", "-m", f"openai:m@{model.base_url}",
             "--data", "demo,n=4", "-q", "--db", str(db), "--out", str(tmp_path / "run")],
            env={**os.environ, "OPENAI_API_KEY": "test-key"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            scored: list[str] = []
            while not scored and time.monotonic() < deadline:
                time.sleep(0.2)  # until the first chunk's answers are scored
                if model.requests_total > _CHUNK:
                    with Store(db, read_only=True) as store:
                        (run,) = store.list_runs()
                        scored = list(store.run_models(run["id"]))
            assert scored, "the first chunk was never scored"
            with Store(db, read_only=True) as store:
                (run,) = store.list_runs()
                assert run["status"] == "running"
            proc = lmmprobe_with_key("judge", "latest", "--db", db, "--judge",
                                     f"openai:judge@{judge.base_url}", "-q")  # fmt: skip
        finally:
            running.kill()
            running.wait()
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = " ".join(proc.stderr.split())
    assert "is running (in another process) and holds the scored answers of only the part" in (
        said
    ), said
    assert "judge it once it has finished" in said
    assert judge.requests_total == 0
    with Store(db, read_only=True) as store:
        assert len(store.list_runs()) == 1  # no judged run recorded
