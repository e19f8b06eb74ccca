"""The openai: backend and reasoning models: thinking kept apart, options sent, identities.

In-process tests read the `Response` the backend returns; the console-script tests run
``lmmprobe run`` against the fake server and read back what the store keeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.console import lmmprobe

pytest.importorskip("openai")

from lmmprobe.data import load_source
from lmmprobe.formulate import formulate
from lmmprobe.models import load_model
from lmmprobe.models.openai_api import OpenAIChatModel
from lmmprobe.schema import Request, Response
from lmmprobe.store import Store
from lmmprobe.testing import FakeOpenAIServer

FAST = "max_attempts=2,backoff=0.01,max_backoff=0.05"


def _model(server: FakeOpenAIServer, name: str = "fake-vlm", extra: str = "") -> OpenAIChatModel:
    spec = f"openai:{name}@{server.base_url},{FAST}" + (f",{extra}" if extra else "")
    model = load_model(spec)
    assert isinstance(model, OpenAIChatModel)
    return model


def _requests(n: int = 2, max_new_tokens: int | None = None) -> list[Request]:
    reqs = [formulate(s) for s in load_source(f"demo,n={n}").samples]
    for r in reqs:
        r.key = r.sample_id
        if max_new_tokens is not None:
            r.gen = r.gen.model_copy(update={"max_new_tokens": max_new_tokens})
    return reqs


def _generate(model: OpenAIChatModel, reqs: list[Request]) -> list[Response]:
    async def go() -> list[Response]:
        try:
            return await model.agenerate(reqs)
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_thinking_fields_land_in_the_response() -> None:
    with FakeOpenAIServer() as server:
        plain = _generate(_model(server), _requests())
        by_mode = {
            mode: _generate(_model(server, f"fake-vlm+{mode}"), _requests())
            for mode in ("reasoning_content", "reasoning", "inline", "closing")
        }
    for p in plain:
        assert p.ok and p.reasoning is None and p.finish_reason == "stop"
        assert p.usage is not None and p.usage.reasoning_tokens is None
    for mode in ("reasoning_content", "reasoning"):
        for p, r in zip(plain, by_mode[mode], strict=True):
            assert r.ok and r.text == p.text  # the answer alone is the text
            assert r.reasoning is not None and r.reasoning.startswith("Let me look")
            assert r.finish_reason == "stop"
            assert r.usage is not None and r.usage.reasoning_tokens == len(r.reasoning.split())
            assert r.usage.completion_tokens == r.usage.reasoning_tokens + len(r.text.split())
    for p, r in zip(plain, by_mode["inline"], strict=True):
        # Inline thinking stays in the raw text; it is split when scored, never when stored.
        assert r.reasoning is None and r.text.startswith("<think>\n")
        assert r.text.endswith(f"</think>\n\n{p.text}")
    for p, r in zip(plain, by_mode["closing"], strict=True):
        assert r.text.endswith(f"\n</think>\n\n{p.text}") and "<think>" not in r.text


def test_cut_off_inside_the_thinking_is_an_output_not_an_error() -> None:
    with FakeOpenAIServer() as server:
        field = _generate(_model(server, "fake-vlm+reasoning_content"), _requests(1, 3))[0]
        inline = _generate(_model(server, "fake-vlm+open"), _requests(1))[0]
        hidden = _generate(_model(server, "fake-vlm+hidden"), _requests(1, 3))[0]
        # No thinking at all and no content at the limit stays the error it always was.
        with FakeOpenAIServer(always="empty_content") as empty:
            failed = _generate(_model(empty), _requests(1))[0]
    assert field.ok and field.text == "" and field.finish_reason == "length"
    assert field.reasoning is not None and len(field.reasoning.split()) == 3
    assert field.usage is not None and field.usage.reasoning_tokens == 3
    assert inline.ok and inline.finish_reason == "length"
    assert inline.text is not None and inline.text.startswith("<think>")
    assert "</think>" not in inline.text
    # A server that keeps its thinking to itself: only the token count says it thought.
    assert hidden.ok and hidden.text == "" and hidden.reasoning is None
    assert hidden.finish_reason == "length"
    assert hidden.usage is not None and hidden.usage.reasoning_tokens == 3
    assert failed.error is not None and failed.error.type == "empty_response"


def test_thinking_options_reach_the_server_and_key_the_answers() -> None:
    with FakeOpenAIServer() as server:
        plain = _model(server)
        effort = _model(server, extra="reasoning_effort=high")
        budget = _model(server, extra="thinking_budget=256")
        off = _model(server, extra="chat_template_kwargs=enable_thinking=false;mode=fast")
        for m in (plain, effort, budget, off):
            _generate(m, _requests(1))
        sent = server.received_params
    assert not {"reasoning_effort", "thinking_token_budget", "chat_template_kwargs"} & set(sent[0])
    assert sent[1]["reasoning_effort"] == "high"
    assert sent[2]["thinking_token_budget"] == 256
    assert sent[2]["chat_template_kwargs"] == {"thinking_budget": 256}
    assert sent[3]["chat_template_kwargs"] == {"enable_thinking": False, "mode": "fast"}
    # Unset, identities are what they were before these options existed (stored answers stay
    # found); set, each is its own model.
    assert set(plain.identity.options) == {"base_url", "max_image_pixels", "image_format"}
    ids = {m.identity.cache_id() for m in (plain, effort, budget, off)}
    assert len(ids) == 4
    assert off.identity.options["chat_template_kwargs"] == {
        "enable_thinking": False,
        "mode": "fast",
    }


@pytest.mark.parametrize(
    ("option", "wanted"),
    [
        ("reasoning_effort=extreme", "reasoning_effort='extreme': must be one of"),
        ("thinking_budget=-5", "thinking_budget must be 0 or more"),
        ("thinking_budget=lots", "thinking_budget='lots' is invalid"),
        ("chat_template_kwargs=enable_thinking", "'enable_thinking' is not key=value"),
        ("chat_template_kwargs=a=1;a=2", "key 'a' is given twice"),
    ],
)
def test_bad_thinking_option_is_one_line_from_the_console_script(
    tmp_path: Path, option: str, wanted: str
) -> None:
    proc = _lmmprobe(
        "run", "-m", f"openai:fake-vlm@http://127.0.0.1:9/v1,{option}", "--data", "demo,n=2",
        "-q", "--db", tmp_path / "db", "--out", tmp_path / "o",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert wanted in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("option", "wanted"),
    [
        # Re-test 8 #5: each passed the parse; a run then failed every request as the server's
        # fault ("no answer within the timeout ... after nan s") or sent nothing at all.
        ("timeout=nan", "option timeout='nan' must be a number of seconds above 0"),
        ("timeout=-1", "option timeout='-1' must be a number of seconds above 0"),
        ("timeout=0", "option timeout='0' must be a number of seconds above 0"),
        ("timeout=1e999", "option timeout='1e999' must be a number of seconds above 0"),
        ("timeout=1e300", "and at most 604,800"),
        ("backoff=-1", "option backoff='-1' must be a number of seconds, 0 or more"),
        ("max_backoff=nan", "option max_backoff='nan' must be a number of seconds"),
        ("max_backoff=1e999", "option max_backoff='1e999' must be a number of seconds"),
        ("max_image_pixels=0", "option max_image_pixels='0' must be a whole number, at least 1"),
        (
            "max_request_image_bytes=0",
            "option max_request_image_bytes='0' must be a whole number of bytes, at least 1",
        ),
        ("top_logprobs=-1", "option top_logprobs='-1' must be a whole number, 0 or more"),
        ("max_requests=-1", "option max_requests='-1' must be a whole number, at least 1"),
        ("max_tokens_total=0", "option max_tokens_total='0' must be a whole number, at least 1"),
        ("max_concurrency=100000000", "max_concurrency='100000000' must be a whole number"),
        # Re-test 9: counts far past any real use passed the parse.
        (
            "max_attempts=101",
            "option max_attempts='101' must be a whole number, at least 1 and at most 100",
        ),
        (
            "max_attempts=100000000000000000000",
            "option max_attempts='100000000000000000000' "
            "must be a whole number, at least 1 and at most 100",
        ),
        (
            "top_logprobs=1000000",
            "option top_logprobs='1000000' must be a whole number, 0 or more and at most 20",
        ),
        ("top_logprobs=21", "and at most 20"),
        (
            "unreachable_after=1000001",
            "option unreachable_after='1000001' must be a whole "
            "number, 0 (never give up) or more and at most 1,000,000",
        ),
        ("max_image_pixels=1000000001", "and at most 1,000,000,000"),
        (
            "max_request_image_bytes=1000000001",
            "option max_request_image_bytes='1000000001' "
            "must be a whole number of bytes, at least 1 and at most 1,000,000,000",
        ),
        ("max_requests=1000000001", "and at most 1,000,000,000"),
        ("max_tokens_total=1000000000001", "and at most 1,000,000,000,000"),
        (
            "thinking_budget=10000001",
            "option thinking_budget='10000001' must be a number of "
            "tokens, 0 or more and at most 10,000,000",
        ),
    ],
)
def test_an_option_value_that_cannot_work_is_refused_at_parse(
    tmp_path: Path, option: str, wanted: str
) -> None:
    proc = _lmmprobe(
        "run", "-m", f"openai:fake-vlm@http://127.0.0.1:9/v1,{option}", "--data", "demo,n=2",
        "--dry-run", "--db", tmp_path / "db",
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout[-2000:]
    assert "Traceback" not in proc.stderr
    assert wanted in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("option", ["batch_size=0", "max_images=-1"])
def test_an_hf_count_below_one_is_refused_at_parse(tmp_path: Path, option: str) -> None:
    # batch_size=0 became 1 and max_images=0 a model shown no picture, both silently.
    proc = _lmmprobe("run", "-m", f"hf:tiny-llava,{option}", "--data", "demo,n=2",
                     "--dry-run", "--db", tmp_path / "db")  # fmt: skip
    assert proc.returncode == 2, proc.stdout[-2000:]
    assert "hf backend: batch_size and max_images must be at least 1" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_deep_chat_template_kwargs_value_is_text_and_a_long_bad_pair_is_cut(
    tmp_path: Path,
) -> None:
    # Re-test 6: 100,000 "[" as a value went to json.loads (a RecursionError traceback, even
    # with --dry-run); a pair that is not key=value was echoed whole (a 100 KB line).
    deep = "[" * 100_000
    url = "openai:fake-vlm@http://127.0.0.1:9/v1"
    dry = _lmmprobe("run", "-m", f"{url},chat_template_kwargs=a={deep}", "--data", "demo,n=2",
                    "--dry-run", "--db", tmp_path / "db")  # fmt: skip
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert "Traceback" not in dry.stdout + dry.stderr
    assert "would be sent" in dry.stdout
    # Re-test 8 #6: the dry run's summary echoed the whole spec (a 100 KB line).
    assert len(dry.stdout) < 5_000, len(dry.stdout)
    assert f"{'[' * 20}\u2026 ({len(url) + 24 + 100_000:,} characters)" in dry.stdout
    bad = _lmmprobe("run", "-m", f"{url},chat_template_kwargs={deep}", "--data", "demo,n=2",
                    "--dry-run", "--db", tmp_path / "db")  # fmt: skip
    assert bad.returncode == 2
    line = bad.stderr.strip()
    assert len(line.splitlines()) == 1 and len(line) < 400, line[:500]
    assert "'" + "[" * 40 + "... (100,000 characters)' is not key=value" in line


def _lmmprobe(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return lmmprobe(*args, columns=132, OPENAI_API_KEY="test-key")


def _stored(db: Path) -> list[Response]:
    with Store(db) as store:
        runs = store.list_runs()
        assert len(runs) == 1
        keys = {row["key"] for row in store.iter_score_rows(runs[0]["id"])}
        return list(store.get_responses(keys).values())


def test_console_script_run_stores_the_raw_text_and_sends_the_options(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        proc = _lmmprobe(
            "run", "-m",
            f"openai:fake-vlm+inline@{server.base_url},reasoning_effort=low,"
            "chat_template_kwargs=enable_thinking=true",
            "--data", "demo,n=4", "-q", "--db", tmp_path / "db", "--out", tmp_path / "o",
        )  # fmt: skip
        sent = server.received_params
    assert proc.returncode == 0, proc.stderr
    assert len(sent) == 4
    assert all(p["reasoning_effort"] == "low" for p in sent)
    assert all(p["chat_template_kwargs"] == {"enable_thinking": True} for p in sent)
    stored = _stored(tmp_path / "db")
    assert len(stored) == 4
    for resp in stored:
        # The store keeps the text as the model sent it, thinking included.
        assert resp.text is not None and resp.text.startswith("<think>\n")
        assert "</think>\n\n" in resp.text
        assert resp.usage is not None and resp.usage.completion_tokens is not None
        assert resp.usage.completion_tokens > len(resp.text.split("</think>")[1].split())
        # Store layout 8 keeps what the server said apart from the text.
        assert resp.finish_reason == "stop"
        assert resp.usage.reasoning_tokens is not None and resp.usage.reasoning_tokens > 0
    manifest = json.loads((tmp_path / "o" / "results.json").read_text())["manifest"]
    (identity,) = manifest["models"].values()
    assert identity["options"]["reasoning_effort"] == "low"
    assert identity["options"]["chat_template_kwargs"] == {"enable_thinking": True}


def test_a_key_quoted_in_the_thinking_is_stored_nowhere(tmp_path: Path) -> None:
    secret = "ThinkingQuotesTheKey-3f9a2c"
    with FakeOpenAIServer(api_key=secret, echo_key_in_answers=True) as server:
        proc = subprocess.run(
            [
                shutil.which("lmmprobe", path=str(Path(sys.executable).parent)) or "lmmprobe",
                "run", "-m", f"openai:fake-vlm+reasoning_content@{server.base_url},max_attempts=1",
                "--data", "demo,n=3", "-q", "--db", str(tmp_path / "db"),
                "--out", str(tmp_path / "o"),
            ],
            capture_output=True, text=True, timeout=300,
            env={**os.environ, "OPENAI_API_KEY": secret},
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert secret not in proc.stdout + proc.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    stored = _stored(tmp_path / "db")
    assert len(stored) == 3 and all(r.redacted for r in stored)
    # The thinking is stored (layout 8), scrubbed like the text.
    assert all(r.reasoning and "[redacted]" in r.reasoning for r in stored)
