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
