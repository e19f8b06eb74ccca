"""A key a server echoes inside a 200 answer is never stored; the redaction is (issue 23, 10).

The answer is scrubbed of the configured key at the executor, the one place every backend's
output passes, so the key reaches neither the store, nor an export, nor results.json/md, nor the
HTML report, and the response says that something was taken out. Short keys are scrubbed too:
as whole words where a word could be an answer, and not at all from answers when they are one
to three characters long (they cannot be told from "A" or "no").
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openai")

from lmmprobe.models.api_keys import (
    REDACTED,
    remember_secret,
    scrub_answer,
    scrub_secrets,
)
from lmmprobe.testing import FakeOpenAIServer, FaultPlan

N = 8


def _lmmprobe(*args: str | Path, key: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run(
        [exe, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OPENAI_API_KEY": key},
    )


def _run(tmp_path: Path, server: FakeOpenAIServer, key: str) -> subprocess.CompletedProcess[str]:
    return _lmmprobe(
        "run", "-m", f"openai:fake-vlm@{server.base_url},max_attempts=1", "--data", f"demo,n={N}",
        "--by", "subtask", "--db", tmp_path / "store.db", "--out", tmp_path / "out", "-q",
        key=key,
    )  # fmt: skip


def _color_accuracy(results: dict, model: str) -> dict[str, float]:
    """Accuracy on the demo subtasks the fake answers right (by colour): 1.0 when readable."""
    groups = results["models"][model]["breakdown"]["subtask"]
    return {g: groups[g]["accuracy"]["value"] for g in ("color", "color_tf")}


def _answers(tmp_path: Path) -> list[tuple[str | None, str | None, int | None]]:
    with sqlite3.connect(tmp_path / "store.db") as c:
        return list(c.execute("SELECT text, error_message, redacted FROM responses"))


def _assert_nowhere(secret: str, tmp_path: Path, *texts: str) -> None:
    for text in texts:
        assert secret not in text
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "store.db" for p in files)
    for path in files:  # the store with its WAL, exports, results.json/md, the HTML report
        assert secret.encode() not in path.read_bytes(), path


def test_key_echoed_in_answers_is_nowhere_and_the_redaction_is_recorded(tmp_path):
    # Not shaped like a key and quoted without "Bearer": only the configured key's own
    # scrubbing can catch it.
    secret = "PlainAnswerSecret-5b1e0c9d7a"
    with FakeOpenAIServer(api_key=secret, echo_key_in_answers=True) as server:
        run = _run(tmp_path, server, secret)
        assert any(secret in a for a in server.seen_authorization)  # it was sent and echoed
        model = f"openai:fake-vlm@{server.base_url},max_attempts=1"
    assert run.returncode == 0, run.stderr
    db = tmp_path / "store.db"
    jsonl = _lmmprobe("export", "latest", "--db", db, key="")
    csv = _lmmprobe("export", "latest", "--db", db, "--format", "csv", key="")
    md = _lmmprobe("report", "latest", "--db", db, "-f", "md", "-o", tmp_path / "r.md", key="")
    html = _lmmprobe("report", "latest", "--db", db, "-o", tmp_path / "r.html", key="")
    for done in (jsonl, csv, md, html):
        assert done.returncode == 0, done.stderr
    _assert_nowhere(secret, tmp_path, run.stdout, run.stderr, jsonl.stdout, csv.stdout)

    # The answers are kept, minus the key, and each says it lost something.
    stored = _answers(tmp_path)
    assert len(stored) == N
    assert all(text and f"key: {REDACTED}" in text and flag == 1 for text, _, flag in stored)
    rows = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert len(rows) == N and all(r["redacted"] is True for r in rows)
    assert "redacted" in csv.stdout.splitlines()[0].split(",")
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["models"][model]["stats"]["redacted"] == N
    assert f"{N} answer(s) quoted the API key" in (tmp_path / "out" / "results.md").read_text()
    # Taking the key out left the answers readable.
    assert _color_accuracy(results, model) == {"color": 1.0, "color_tf": 1.0}


def test_a_short_key_is_scrubbed_from_answers_and_errors(tmp_path):
    short = "k3Y9q"  # five characters: once only its Bearer form was scrubbed
    faults = FaultPlan(rate=0.5, kinds=("bad_request",), max_per_request=100, seed=2)
    with FakeOpenAIServer(
        api_key=short, echo_key=True, echo_key_in_answers=True, faults=faults
    ) as server:
        run = _run(tmp_path, server, short)
        assert server.faults_injected.get("bad_request", 0) > 0  # some errors quoted it too
        assert server.completed > 0  # and some answers
    assert "Traceback" not in run.stderr
    _assert_nowhere(short, tmp_path, run.stdout, run.stderr)
    stored = _answers(tmp_path)
    answered = [text for text, _, _ in stored if text]
    failed = [msg for text, msg, _ in stored if not text]
    assert answered and all(REDACTED in t for t in answered)
    assert failed and all(REDACTED in (m or "") for m in failed)


def test_a_key_of_a_few_characters_leaves_answers_intact_and_is_warned_about(tmp_path):
    # The fake answers "(A) (request by A; key: A)" where A is right, and "A" is the answer
    # "(A)" too: scrubbing a one-letter key from answers would make right answers unreadable.
    with FakeOpenAIServer(api_key="A", echo_key_in_answers=True) as server:
        run = _run(tmp_path, server, "A")
        model = f"openai:fake-vlm@{server.base_url},max_attempts=1"
    assert run.returncode == 0, run.stderr
    warning = [line for line in run.stderr.splitlines() if "too short" in line]
    assert len(warning) == 1 and "OPENAI_API_KEY" in warning[0]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert _color_accuracy(results, model) == {"color": 1.0, "color_tf": 1.0}
    assert results["models"][model]["stats"]["redacted"] == 0
    assert all(flag == 0 and REDACTED not in (text or "") for text, _, flag in _answers(tmp_path))


def test_which_text_each_key_length_is_scrubbed_from():
    # Distinctive keys: remembered for the rest of this process.
    long, mid, tiny = "LongKey-7c1d2e3f", "w0rdK", "Zq7"
    for key in (long, mid, tiny):
        remember_secret(key)
    # Eight characters or more: anywhere, in answers and errors alike.
    assert scrub_answer(f"x{long}y") == f"x{REDACTED}y"
    assert scrub_secrets(f"x{long}y") == f"x{REDACTED}y"
    # Four to seven: anywhere in errors, as a whole word in answers.
    assert scrub_secrets(f"bad key x{mid}y") == f"bad key x{REDACTED}y"
    assert scrub_answer(f"key: {mid}; see {mid}s") == f"key: {REDACTED}; see {mid}s"
    # One to three: as a whole word in errors, never in answers.
    assert scrub_secrets(f"bad key {tiny}, not {tiny}x") == f"bad key {REDACTED}, not {tiny}x"
    assert scrub_answer(f"key {tiny}") == f"key {tiny}"
    # Key-shaped words are taken out of errors only: an answer may mention them.
    words = "the bearer bonds, sk-abcdefghijkl"
    assert scrub_answer(words) == words
    assert scrub_secrets(words) != words


def test_a_key_or_megabytes_in_the_finish_reason_are_not_stored(tmp_path):
    # Re-test 21: a server writing the request's key into ``finish_reason`` had it stored,
    # exported (csv, jsonl) and shown on the sample page: the field was read as it came, past
    # the scrubbing of answers and errors; and 5 MB there were stored whole.
    secret = "FinishReasonSecret-7c2d9e41b0"
    replies = [{"content": "A", "finish_reason": f"stop {secret}"},
               {"content": "yes", "finish_reason": "x" * 5_000_000}] * (N // 2)  # fmt: skip
    with FakeOpenAIServer(replies=replies) as server:
        run = _run(tmp_path, server, secret)
    assert run.returncode == 0, run.stderr
    db = tmp_path / "store.db"
    csv = _lmmprobe("export", "latest", "--db", db, "--format", "csv", key="")
    assert csv.returncode == 0, csv.stderr
    _assert_nowhere(secret, tmp_path, run.stdout, run.stderr, csv.stdout)
    with sqlite3.connect(db) as c:
        finishes = [f for (f,) in c.execute("SELECT finish_reason FROM responses")]
    assert f"stop {REDACTED}" in finishes
    assert max(len(f) for f in finishes) < 100 and "(5,000,000 characters)" in str(finishes)
