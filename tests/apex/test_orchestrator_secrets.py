"""An APEx orchestrator whose URL holds a password never shows it (re-test 20 of issue 34, #3).

The orchestrator named itself by its spec as written (``openai:m@http://u:PASSWORD@host/v1``),
and a failed chat request's message started with that name: the password was printed on the
terminal ("orchestrator failed" and the final error line) and written to report.md and
report.json, whose spec fields were redacted but whose stop reason was not.
"""

from __future__ import annotations

from pathlib import Path

from tests.console import lmmprobe, lmmprobe_with_key

from lmmprobe.testing.openai_server import FakeOpenAIServer

PASSWORD = "Orch3strat0rSecretPw"


def test_a_failing_orchestrators_password_is_never_shown_or_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FakeOpenAIServer(always="bad_request") as server:
        url = server.base_url.replace("://", f"://user:{PASSWORD}@", 1)
        done = lmmprobe_with_key(
            "apex", "which colour is hardest to name", "-m", "random",
            "--orchestrator", f"openai:orch@{url},max_retries=0", "--out", out,
            "--images-per-answer", "2", "--image-size", "32", "--bootstrap", "10",
            "--max-calls", "2", timeout=180,
        )  # fmt: skip
    text = done.stdout + done.stderr
    assert "Traceback" not in text, text[-3000:]
    assert "the orchestrator failed (openai:orch@http://user:[redacted]@127.0.0.1" in text, text
    assert PASSWORD not in text, text
    written = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "report.md" for p in written), written
    for path in written:
        assert PASSWORD.encode() not in path.read_bytes(), path


def test_a_key_the_orchestrator_quotes_in_its_plan_is_never_written(tmp_path: Path) -> None:
    # Re-test 22: a server echoing the request's key inside a valid plan had it written to
    # report.json (the open questions and the transcript) and report.md. One key shaped as
    # OpenAI's, one with no shape at all (only the configured key's scrubbing finds it).
    out = tmp_path / "out"
    for key in ("sk-orchEchoKey1234567890abcdef", "PlainOrchestratorSecret-5b1e0c9d7a"):
        reply = '{"open_questions": ["is it ' + key + '?", "what is Bearer ' + key + '"]}'
        with FakeOpenAIServer(replies=[reply] * 3) as server:
            done = lmmprobe(
                "apex", "which colour is hardest to name", "-m", "random",
                "--orchestrator", f"openai:orch@{server.base_url},max_retries=0", "--out", out,
                "--images-per-answer", "2", "--image-size", "32", "--bootstrap", "10",
                "--max-calls", "3", OPENAI_API_KEY=key, timeout=180,
            )  # fmt: skip
        text = done.stdout + done.stderr
        assert "Traceback" not in text, text[-3000:]
        assert key not in text, text
        written = [p for p in out.rglob("*") if p.is_file()]
        assert {"report.json", "report.md"} <= {p.name for p in written}, written
        for path in written:
            assert key.encode() not in path.read_bytes(), path
        assert "is it [redacted]?" in (out / "report.json").read_text()
