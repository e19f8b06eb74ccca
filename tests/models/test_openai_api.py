"""The openai: backend against a loopback server speaking the real chat-completions protocol."""

from __future__ import annotations

import asyncio
import json
import logging
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("openai")

from PIL import Image

from lmmprobe import RunSpec, evaluate
from lmmprobe.data import load_source
from lmmprobe.models import load_model
from lmmprobe.models.openai_api import (
    AdaptiveLimit,
    aiohttp_installed,
    mark_scores,
    parse_options,
    parse_target,
    retry_after_seconds,
    uses_aiohttp,
)
from lmmprobe.report import Results
from lmmprobe.run import run_model
from lmmprobe.store import Store, export_run_to_file
from lmmprobe.testing import FakeOpenAIServer, FaultPlan

FAST = "max_attempts=4,backoff=0.01,max_backoff=0.05"


def spec_for(server: FakeOpenAIServer, extra: str = "") -> str:
    return f"openai:fake-vlm@{server.base_url},{FAST}" + (f",{extra}" if extra else "")


def color_accuracy(results: Results, model: str) -> dict[str, float | None]:
    groups = results.models[model].breakdown["subtask"]
    return {k: groups[k]["accuracy"].value for k in ("color", "color_tf")}


def test_target_parsing():
    assert parse_target("gpt-4o") == ("gpt-4o", None)
    assert parse_target("qwen@http://localhost:8000/v1/") == ("qwen", "http://localhost:8000/v1")
    assert parse_target("m@https://user@host/v1") == ("m", "https://user@host/v1")
    with pytest.raises(ValueError):
        parse_target(None)
    with pytest.raises(ValueError, match="unknown option"):
        parse_options("m", {"max_concurency": "3"})
    with pytest.raises(ValueError, match="invalid"):
        parse_options("m", {"timeout": "soon"})


def test_hosted_without_key_fails_clearly(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        load_model("openai:gpt-4o")


def test_retry_after_parsing():
    def exc(headers):
        return SimpleNamespace(response=SimpleNamespace(headers=headers))

    assert retry_after_seconds(exc({"retry-after": "2"})) == 2.0
    assert retry_after_seconds(exc({"retry-after-ms": "250"})) == 0.25
    assert retry_after_seconds(exc({})) is None
    assert retry_after_seconds(ValueError()) is None


def test_adaptive_limit_halves_and_grows_back():
    lim = AdaptiveLimit(16)
    lim.rate_limited()
    assert lim.limit == 8
    lim.rate_limited()
    assert lim.limit == 4
    for _ in range(4):
        lim.succeeded()
    assert lim.limit == 5  # one step per `limit` successes: slow growth
    for _ in range(1000):
        lim.succeeded()
    assert lim.limit == 16


def test_mark_scores_reads_first_answer_token():
    def tok(t, lp, top=()):
        return {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": list(top)}

    lp = {
        "content": [
            tok("(", -0.01, [tok("(", -0.01)]),
            tok("B", -0.1, [tok("B", -0.1), tok("A", -2.5), tok(" c", -4.0)]),
            tok(")", -0.01),
        ]
    }
    assert mark_scores(lp, ["A", "B", "C", "D"]) == [-2.5, -0.1, -4.0, -math.inf]
    assert mark_scores(None, ["A", "B"]) == [-math.inf, -math.inf]


def test_images_arrive_intact_and_answers_follow_them(tmp_path):
    rows = []
    for i, (color, fmt) in enumerate([("red", "PNG"), ("blue", "JPEG"), ("green", "PNG")]):
        path = tmp_path / f"{i}.{fmt.lower()}"
        Image.new(
            "RGB",
            (32, 24),
            {"red": (220, 30, 30), "blue": (30, 70, 220), "green": (30, 160, 50)}[color],
        ).save(path, format=fmt)
        rows.append({"id": str(i), "images": [path.name], "question": "What color is it?",
                     "choices": ["red", "blue", "green"], "answer": ["red", "blue", "green"].index(color)})  # fmt: skip
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with FakeOpenAIServer() as server:
        ev = evaluate(
            models=[spec_for(server)],
            data=str(data),
            db=str(tmp_path / "db"),
            out=str(tmp_path / "o"),
        )
        sent = sorted(server.received_images)
    assert sent == sorted(
        (tmp_path / f"{i}.{f}").read_bytes() for i, f in enumerate(["png", "jpeg", "png"])
    )
    m = ev.results.models[spec_for(server)].metrics
    assert m["accuracy"].value == 1.0 and m["error_rate"].value == 0.0


def test_demo_answers_from_image_content(tmp_path):
    with FakeOpenAIServer() as server:
        model = spec_for(server)
        ev = evaluate(
            models=[model],
            data="demo,n=40",
            by=["subtask"],
            db=str(tmp_path / "db"),
            out=str(tmp_path / "o"),
        )
    assert color_accuracy(ev.results, model) == {"color": 1.0, "color_tf": 1.0}
    stats = ev.results.models[model].stats
    assert stats.prompt_tokens > 0 and stats.completion_tokens > 0


def test_transient_faults_all_recover_with_right_answers(tmp_path):
    faults = FaultPlan(rate=0.3, kinds=("rate_limit", "server_error", "malformed", "stall"),
                       max_per_request=2, retry_after=0.01, stall_seconds=3.0)  # fmt: skip
    with FakeOpenAIServer(faults=faults) as server:
        model = spec_for(server, "timeout=0.5")
        ev = evaluate(
            models=[model],
            data="demo,n=40",
            by=["subtask"],
            db=str(tmp_path / "db"),
            out=str(tmp_path / "o"),
        )
        injected = sum(server.faults_injected.values())
    assert injected > 0
    assert ev.results.models[model].metrics["error_rate"].value == 0.0
    assert color_accuracy(ev.results, model) == {"color": 1.0, "color_tf": 1.0}


def test_bad_request_is_not_retried_and_is_reported(tmp_path):
    with FakeOpenAIServer(always="bad_request") as server:
        model = spec_for(server)
        ev = evaluate(
            models=[model], data="demo,n=6", db=str(tmp_path / "db"), out=str(tmp_path / "o")
        )
        assert server.requests_total == 6  # one attempt each
    m = ev.results.models[model].metrics
    assert m["error_rate"].value == 1.0 and m["accuracy"].value is None
    with Store(tmp_path / "db") as store:
        rows = list(store.iter_score_rows(ev.run_id))
    assert {r["error_type"] for r in rows} == {"bad_request"}
    assert all(r["text"] is None and r["correct"] is None for r in rows)
    assert "HTTP 400" in rows[0]["error_message"]


def test_in_flight_requests_never_exceed_the_limit(tmp_path):
    with FakeOpenAIServer(latency=0.05) as server:
        model = load_model(spec_for(server, "max_concurrency=4"))
        samples = load_source("demo,n=30").samples
        with Store(tmp_path / "db") as store:
            run_model("m", model, samples, RunSpec(models=["m"]), store)
        assert 2 <= server.max_in_flight <= 4


def test_rate_limits_halve_concurrency_and_honour_retry_after(tmp_path):
    faults = FaultPlan(rate=1.0, kinds=("rate_limit",), max_per_request=1, retry_after=0.02)
    with FakeOpenAIServer(faults=faults) as server:
        model = load_model(spec_for(server, "max_concurrency=8"))
        samples = load_source("demo,n=12").samples
        with Store(tmp_path / "db") as store:
            out = run_model("m", model, samples, RunSpec(models=["m"]), store)
    assert out.errors == 0 and server.faults_injected.get("rate_limit") == 12
    assert model.limit.limit < 8


def test_timeout_is_a_typed_retryable_error(tmp_path):
    faults = FaultPlan(rate=1.0, kinds=("stall",), max_per_request=5, stall_seconds=3.0)
    with FakeOpenAIServer(faults=faults) as server:
        model = load_model(
            spec_for(server, "timeout=0.2").replace("max_attempts=4", "max_attempts=2")
        )
        samples = load_source("demo,n=2").samples
        with Store(tmp_path / "db") as store:
            out = run_model("m", model, samples, RunSpec(models=["m"]), store)
            stored = store.get_responses([s.key for s in out.scores], include_errors=True)
    assert {s.error_type for s in out.scores} == {"timeout"}
    assert all(r.error.retryable and "after 2 attempts" in r.error.message for r in stored.values())


def test_budget_stops_cleanly_and_resume_completes(tmp_path):
    db, n = str(tmp_path / "db"), 20
    with FakeOpenAIServer() as server:
        first = evaluate(
            models=[spec_for(server, "max_requests=5")],
            data=f"demo,n={n}",
            db=db,
            out=str(tmp_path / "a"),
        )
        assert server.requests_total == 5
        server.reset_stats()
        model = spec_for(server)
        second = evaluate(models=[model], data=f"demo,n={n}", db=db, out=str(tmp_path / "b"))
        assert server.requests_total == n - 5  # only what the budget left undone
    assert first.results.status == "stopped_budget"
    stats = first.results.models[spec_for(server, "max_requests=5")].stats
    assert stats.errors == n - 5
    assert second.results.status == "complete"
    assert second.results.models[model].stats.cached == 5


def test_mark_logprob_method_ranks_options(tmp_path):
    with FakeOpenAIServer() as server:
        model = spec_for(server)
        ev = evaluate(
            models=[model], data="demo,n=24", by=["subtask"], db=str(tmp_path / "db"), out=str(tmp_path / "o"),
            formulate={"method": "mark_logprob"},
        )  # fmt: skip
    assert color_accuracy(ev.results, model) == {"color": 1.0, "color_tf": 1.0}
    assert ev.results.models[model].metrics["format_hit_rate"].value > 0.4


def test_api_key_never_written_anywhere(tmp_path, monkeypatch, caplog):
    secret = "sk-test-NEVER-STORE-4f1d9c"
    monkeypatch.setenv("LMMPROBE_TEST_KEY", secret)
    caplog.set_level(logging.DEBUG)
    with FakeOpenAIServer(api_key=secret) as server:
        model = spec_for(server, "key_env=LMMPROBE_TEST_KEY")
        ev = evaluate(
            models=[model], data="demo,n=8", db=str(tmp_path / "db"), out=str(tmp_path / "o")
        )
        assert any(secret in h for h in server.seen_authorization)  # it was used...
    assert ev.results.models[model].metrics["error_rate"].value == 0.0
    with Store(tmp_path / "db") as store:
        export_run_to_file(store, ev.run_id, "jsonl", tmp_path / "export.jsonl")
    for path in Path(tmp_path).rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path  # ...but never written
    assert secret not in caplog.text
    assert secret not in repr(load_model(model))


def test_unreadable_image_is_an_input_error_not_a_crash(tmp_path):
    from lmmprobe.schema import ImageRef, Sample

    bad = tmp_path / "x.png"
    bad.write_bytes(b"not an image")
    sample = Sample(
        id="s", images=[ImageRef.from_path(bad)], question="q?", choices=["a", "b"], answer=0
    )
    with FakeOpenAIServer() as server:
        model = load_model(spec_for(server))
        with Store(tmp_path / "db") as store:
            out = run_model("m", model, [sample], RunSpec(models=["m"]), store)
        assert server.requests_total == 0
    assert out.scores[0].error_type == "unsupported_input"


def test_event_loops_do_not_leak_clients():
    with FakeOpenAIServer() as server:
        model = load_model(spec_for(server))
        samples = load_source("demo,n=2").samples
        from lmmprobe.formulate import formulate

        reqs = [formulate(s) for s in samples]
        for r in reqs:
            r.key = r.sample_id

        async def go():
            out = await model.agenerate(reqs)
            await model.aclose()
            return out

        for _ in range(2):  # a fresh loop each time, as the runner does per model run
            assert all(r.ok for r in asyncio.run(go()))
        assert model._clients == {}


def test_mark_logprob_without_server_support_is_a_clear_error(tmp_path):
    with FakeOpenAIServer(logprobs=False) as server:
        model = spec_for(server)
        ev = evaluate(
            models=[model], data="demo,n=4", db=str(tmp_path / "db"), out=str(tmp_path / "o"),
            formulate={"method": "mark_logprob"},
        )  # fmt: skip
        assert server.requests_total == 4  # a capability error is not retried
    with Store(tmp_path / "db") as store:
        rows = list(store.iter_score_rows(ev.run_id))
    assert {r["error_type"] for r in rows} == {"unsupported_input"}
    assert "no logprobs" in rows[0]["error_message"]


def test_baselines_refuse_mark_logprob_up_front(tmp_path):
    with pytest.raises(ValueError, match="log-probabilities"):
        evaluate(
            models=["first"],
            data="demo,n=4",
            db=str(tmp_path / "db"),
            formulate={"method": "mark_logprob"},
        )


def test_transport_option_is_checked():
    with pytest.raises(ValueError, match="transport must be auto, aiohttp, httpx"):
        parse_options("m", {"transport": "curl"})
    assert parse_options("m", {"transport": "httpx"}).transport == "httpx"
    if aiohttp_installed():
        assert parse_options("m", {"transport": "aiohttp"}).transport == "aiohttp"
    else:  # asked for by name without the package: one line saying what to install
        with pytest.raises(ValueError, match=r"pip install 'openai\[aiohttp\]'"):
            parse_options("m", {"transport": "aiohttp"})


def test_a_server_url_with_credentials_is_asked_through_httpx():
    # aiohttp refuses a user or password in the URL beside the client's Authorization header
    # ("Cannot combine AUTHORIZATION header with ... credentials encoded in URL"): every
    # request failed. httpx sends them as Basic authentication, so auto takes httpx there.
    url = "m@http://user:pw@127.0.0.1:9/v1"
    assert not uses_aiohttp(parse_options(url, {}).transport, parse_options(url, {}).base_url)
    assert uses_aiohttp("auto", "http://127.0.0.1:9/v1") == aiohttp_installed()
    if aiohttp_installed():  # asked for by name: one line, no secret in it
        with pytest.raises(ValueError, match="transport=aiohttp cannot send a user") as err:
            parse_options(url, {"transport": "aiohttp"})
        assert "pw" not in str(err.value)


def test_both_transports_send_the_same_requests_and_store_the_same_answers(tmp_path):
    pytest.importorskip("aiohttp")
    samples = load_source("demo,n=12").samples
    answers, sent, identities = {}, {}, {}
    port = 0  # the second server at the first's URL: the same model identity if it is the same
    plan = FaultPlan(rate=0.3, kinds=("rate_limit", "server_error", "malformed"), seed=5)
    for transport in ("httpx", "aiohttp"):
        with FakeOpenAIServer(faults=plan, port=port) as server:
            port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
            spec = spec_for(server, f"max_concurrency=4,transport={transport}")
            model = load_model(spec)
            with Store(tmp_path / f"{transport}.db") as store:
                out = run_model(spec, model, samples, RunSpec(models=[spec]), store)
            answers[transport] = sorted(
                (s.sample_id, s.prediction, s.correct, s.error_type) for s in out.scores
            )
            sent[transport] = sorted(json.dumps(p, sort_keys=True) for p in server.received_params)
            identities[transport] = model.identity
    assert answers["httpx"] == answers["aiohttp"]
    assert sent["httpx"] == sent["aiohttp"]
    # Not part of the identity: answers stored through one transport are reused through the other.
    assert identities["httpx"] == identities["aiohttp"]
