"""Every source of thinking, end to end through the console script: only the answer is read.

The fake OpenAI server answers each demo question as the plain fake does, but in one of the
ways real servers send a reasoning model's thinking (`lmmprobe.testing.openai_server._thinking`):
a separate ``reasoning_content`` or ``reasoning`` field, inline ``<think>`` tags, a block the
chat template opened (only ``</think>`` in the output), thinking kept by the server (counted in
the usage only), or cut off by the token limit inside the thinking. Its thinking names a wrong
option (a trap), so a reader that looks inside it gets a different verdict from the plain fake.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lmmprobe.testing import FakeOpenAIServer

DATA = "demo,n=24"


def _run(spec: str, tmp: Path, name: str) -> dict[str, object]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    out = tmp / name
    proc = subprocess.run(
        [exe, "run", "-m", spec, "--data", DATA, "-q", "--db", str(tmp / f"{name}.db"),
         "--out", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text())
    (metrics,) = (m["metrics"] for m in results["models"].values())
    stages = sqlite3.connect(tmp / f"{name}.db").execute("SELECT stage FROM scores").fetchall()
    return {
        "accuracy": metrics["accuracy"]["value"],
        "truncated": metrics["truncated_rate"]["value"],
        "stages": sorted({s for (s,) in stages}),
        "stdout": proc.stdout,
    }


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.mark.parametrize("mode", ["reasoning_content", "reasoning", "inline", "closing", "hidden"])
def test_the_answer_after_the_thinking_is_what_is_scored(
    server: FakeOpenAIServer, tmp_path: Path, mode: str
) -> None:
    plain = _run(f"openai:fake-vlm@{server.base_url}", tmp_path, "plain")
    thinking = _run(f"openai:fake-vlm+{mode}@{server.base_url}", tmp_path, mode)
    # The same answers after the thinking: the same verdicts, whatever the thinking said.
    assert thinking["accuracy"] == plain["accuracy"]
    assert thinking["stages"] == plain["stages"]
    assert thinking["truncated"] == 0.0


def test_thinking_cut_off_by_the_token_limit_is_truncated_never_read(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    cut = _run(f"openai:fake-vlm+open@{server.base_url}", tmp_path, "open")
    assert cut["stages"] == ["truncated"]
    assert cut["accuracy"] == 0.0 and cut["truncated"] == 1.0
    assert "truncated" in str(cut["stdout"]) and "--max-new-tokens" in str(cut["stdout"])


def test_think_off_reads_the_whole_text_and_falls_for_the_trap(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    plain = _run(f"openai:fake-vlm@{server.base_url}", tmp_path, "plain")
    raw = _run(f"openai:fake-vlm+inline@{server.base_url},think=off", tmp_path, "raw")
    # Read with the thinking, the trap's option is taken: the verdicts part from the answers'.
    assert raw["accuracy"] != plain["accuracy"]
