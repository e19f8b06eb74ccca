"""The fake OpenAI server, driven by the real `openai` client and by plain urllib."""

from __future__ import annotations

import base64
import io
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from PIL import Image

from lmmprobe.imaging.shapes import SHAPES, render
from lmmprobe.testing import COLORS, FakeOpenAIServer, FaultPlan, dominant_color, parse_options

BG = (128, 128, 128)


def image_bytes(color: tuple[int, int, int], fmt: str = "PNG", size: int = 48) -> bytes:
    """A gray canvas with a colored square in the middle, encoded as `fmt`."""
    im = Image.new("RGB", (size, size), BG)
    im.paste(Image.new("RGB", (size // 2, size // 2), color), (size // 4, size // 4))
    buf = io.BytesIO()
    im.save(buf, format=fmt, quality=85) if fmt == "JPEG" else im.save(buf, format=fmt)
    return buf.getvalue()


def data_url(raw: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(raw).decode()}"


def user(text: str, *images: bytes, mime: str = "image/png") -> dict[str, Any]:
    parts: list[dict[str, Any]] = [
        {"type": "image_url", "image_url": {"url": data_url(raw, mime)}} for raw in images
    ]
    parts.append({"type": "text", "text": text})
    return {"role": "user", "content": parts}


def options_prompt(question: str, options: list[str], marks: list[str]) -> str:
    body = "; ".join(f"({m}) {o}" for m, o in zip(marks, options, strict=True))
    return f"{question}\nOptions: {body}.\nAnswer with the option's mark directly."


def client_for(server: FakeOpenAIServer, **kw: Any) -> openai.OpenAI:
    kw.setdefault("api_key", "k")
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 5.0)
    return openai.OpenAI(base_url=server.base_url, **kw)


def post(
    server: FakeOpenAIServer, body: bytes, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """POST raw bytes to chat/completions; returns status, headers and body for any status."""
    req = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=body,
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: FakeOpenAIServer) -> Iterator[openai.OpenAI]:
    with client_for(server) as c:
        yield c


def ask(client: openai.OpenAI, *messages: dict[str, Any], **kw: Any) -> Any:
    return client.chat.completions.create(model="fake-vlm", messages=list(messages), **kw)


MARKS = {
    "upper": ["A", "B", "C", "D"],
    "lower": ["a", "b", "c", "d"],
    "number": ["1", "2", "3", "4"],
}


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
@pytest.mark.parametrize("color", list(COLORS))
def test_answers_the_option_of_the_image_color(client: openai.OpenAI, color: str, fmt: str) -> None:
    names = list(COLORS)
    # Rotate so the true color sits at a different position for each color.
    pos = names.index(color) % 4
    distractors = [n for n in names if n != color][:3]
    options = [*distractors[:pos], color, *distractors[pos:]]
    raw = image_bytes(COLORS[color], fmt)
    mime = "image/jpeg" if fmt == "JPEG" else "image/png"
    for marks in MARKS.values():
        prompt = options_prompt("What color is the shape?", options, marks)
        out = ask(client, user(prompt, raw, mime=mime))
        assert out.choices[0].message.content == f"({marks[pos]})"
        assert out.choices[0].finish_reason == "stop"


@pytest.mark.parametrize(
    ("asked", "options", "expected"),
    [
        ("red", ["yes", "no"], "(A)"),
        ("blue", ["yes", "no"], "(B)"),
        ("red", ["no", "yes"], "(B)"),
        ("green", ["No", "Yes"], "(A)"),
    ],
)
def test_yes_no_questions(
    client: openai.OpenAI, asked: str, options: list[str], expected: str
) -> None:
    prompt = options_prompt(f"Is the shape in the image {asked}?", options, ["A", "B"])
    out = ask(client, user(prompt, image_bytes(COLORS["red"])))
    assert out.choices[0].message.content == expected


def test_plain_color_reply_and_no_image(client: openai.OpenAI) -> None:
    out = ask(client, user("What color is the shape?", image_bytes(COLORS["purple"])))
    assert out.choices[0].message.content == "purple"
    # Options that do not include the color: the fake names the color rather than guess a mark.
    prompt = options_prompt("What color?", ["red", "blue"], ["A", "B"])
    out = ask(client, user(prompt, image_bytes(COLORS["orange"])))
    assert out.choices[0].message.content == "orange"
    out = ask(client, {"role": "user", "content": "What color is the shape?"})
    assert out.choices[0].message.content == "I cannot see an image."


def test_answers_from_the_last_user_message(client: openai.OpenAI) -> None:
    history = [
        user("What color?", image_bytes(COLORS["red"])),
        {"role": "assistant", "content": "red"},
    ]
    out = ask(client, *history, user("And this one?", image_bytes(COLORS["green"])))
    assert out.choices[0].message.content == "green"


@pytest.mark.parametrize("shape", SHAPES)
def test_reads_demo_set_images(client: openai.OpenAI, shape: str) -> None:
    # Four small shapes on the demo's gray canvas: the hardest case the demo source draws.
    spots = [[0.25, 0.25, 0.16], [0.75, 0.25, 0.16], [0.25, 0.75, 0.16], [0.75, 0.75, 0.16]]
    for color in COLORS:
        recipe = {"size": 128, "bg": 150, "color": color, "shape": shape, "spots": spots}
        assert dominant_color(render(recipe)) == color


def test_images_arrive_byte_for_byte() -> None:
    sent = [image_bytes(COLORS["blue"]), image_bytes(COLORS["white"], "JPEG", size=40)]
    with FakeOpenAIServer() as srv, client_for(srv) as c:
        ask(
            c,
            user("first", sent[0]),
            {"role": "assistant", "content": "blue"},
            user("two", sent[1]),
        )
        ask(c, user("again", sent[0]))
        assert srv.received_images == [sent[0], sent[1], sent[0]]
        assert srv.completed == 2


def test_usage_counts_words_and_images(client: openai.OpenAI) -> None:
    messages = [
        {"role": "system", "content": "Be brief please."},
        user("What color is this?", image_bytes(COLORS["red"]), image_bytes(COLORS["blue"])),
    ]
    out = ask(client, *messages)
    assert out.usage is not None
    assert out.usage.prompt_tokens == 3 + 4 + 2 * 85
    assert out.usage.completion_tokens == 1
    assert out.usage.total_tokens == out.usage.prompt_tokens + 1
    out = ask(client, {"role": "user", "content": "hello"})
    assert out.usage is not None
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (1, 5)


def test_max_tokens_truncates_with_finish_reason_length(client: openai.OpenAI) -> None:
    out = ask(client, {"role": "user", "content": "hi"}, max_tokens=2)
    assert out.choices[0].message.content == "I cannot"
    assert out.choices[0].finish_reason == "length"
    assert out.usage is not None and out.usage.completion_tokens == 2


def test_logprobs_rank_the_chosen_mark_first(client: openai.OpenAI) -> None:
    prompt = options_prompt("What color?", ["red", "blue", "green"], ["A", "B", "C"])
    out = ask(client, user(prompt, image_bytes(COLORS["green"])), logprobs=True, top_logprobs=6)
    logprobs = out.choices[0].logprobs
    assert logprobs is not None and logprobs.content
    first = logprobs.content[0]
    assert first.token == "C"
    assert first.logprob == pytest.approx(-0.05)
    assert first.bytes == [ord("C")]
    top = first.top_logprobs
    assert len(top) == 6
    assert [t.token for t in top[:3]] == ["C", "A", "B"]
    assert [t.logprob for t in top[:4]] == pytest.approx([-0.05, -2.0, -3.0, -4.0])
    assert len({t.token for t in top}) == 6  # fillers never repeat a mark


def test_logprobs_defaults_and_number_marks(client: openai.OpenAI) -> None:
    prompt = options_prompt("What color?", ["red", "blue"], ["1", "2"])
    out = ask(client, user(prompt, image_bytes(COLORS["blue"])), logprobs=True)
    first = out.choices[0].logprobs.content[0]
    assert first.token == "2"
    assert [t.token for t in first.top_logprobs][:2] == ["2", "1"]
    assert len(first.top_logprobs) == 5
    out = ask(client, user(prompt, image_bytes(COLORS["blue"])))
    assert out.choices[0].logprobs is None


def test_list_models(client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == ["fake-vlm"]


def test_api_key_is_required_when_set() -> None:
    with FakeOpenAIServer(api_key="secret") as srv:
        with client_for(srv, api_key="wrong") as c, pytest.raises(openai.AuthenticationError):
            ask(c, {"role": "user", "content": "hi"})
        with client_for(srv, api_key="secret") as c:
            assert ask(c, {"role": "user", "content": "hi"}).choices[0].message.content
        status, _, _ = post(srv, b'{"model": "m", "messages": [{"role": "user", "content": "x"}]}')
        assert status == 401
        assert srv.seen_authorization == ["Bearer wrong", "Bearer secret"]


def test_rejects_non_data_urls_and_undecodable_images(client: openai.OpenAI) -> None:
    part = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
    with pytest.raises(openai.BadRequestError) as info:
        ask(client, {"role": "user", "content": [part]})
    assert info.value.param == "messages[0].content[0].image_url.url"
    assert info.value.type == "invalid_request_error"
    garbage = {"type": "image_url", "image_url": {"url": data_url(b"not an image")}}
    with pytest.raises(openai.BadRequestError, match="could not be decoded"):
        ask(client, {"role": "user", "content": [garbage]})


@pytest.mark.parametrize(
    "body",
    [
        {"messages": [{"role": "user", "content": "hi"}]},
        {"model": "m"},
        {"model": "m", "messages": []},
        {"model": "m", "messages": [{"role": "user", "content": "hi"}], "top_logprobs": 21},
        {"model": "m", "messages": [{"role": "user", "content": [{"type": "video"}]}]},
    ],
)
def test_malformed_requests_get_openai_error_bodies(
    server: FakeOpenAIServer, body: dict[str, Any]
) -> None:
    status, _, raw = post(server, json.dumps(body).encode())
    assert status == 400
    error = json.loads(raw)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"


def test_always_bad_request_is_not_retried_by_the_client() -> None:
    with FakeOpenAIServer(always="bad_request") as srv, client_for(srv, max_retries=3) as c:
        with pytest.raises(openai.BadRequestError):
            ask(c, {"role": "user", "content": "hi"})
        assert srv.requests_total == 1
        assert srv.faults_injected == {"bad_request": 1}


def test_rate_limit_carries_retry_after() -> None:
    plan = FaultPlan(retry_after=0.25)
    with FakeOpenAIServer(always="rate_limit", faults=plan) as srv, client_for(srv) as c:
        with pytest.raises(openai.RateLimitError) as info:
            ask(c, {"role": "user", "content": "hi"})
        # The client exposes no retry_after attribute: the header is on the raw response.
        assert info.value.response.headers["retry-after"] == "0.25"
        assert info.value.type == "rate_limit_error"
        status, headers, _ = post(
            srv, b'{"model": "m", "messages": [{"role": "user", "content": "x"}]}'
        )
        assert status == 429
        assert headers["Retry-After"] == "0.25"


def test_faults_respect_max_per_request() -> None:
    plan = FaultPlan(rate=1.0, kinds=("server_error",), max_per_request=2)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode()
    other = json.dumps({"model": "m", "messages": [{"role": "user", "content": "y"}]}).encode()
    with FakeOpenAIServer(faults=plan) as srv:
        assert [post(srv, body)[0] for _ in range(4)] == [500, 500, 200, 200]
        assert post(srv, other)[0] == 500  # another body has its own budget
        assert srv.faults_injected == {"server_error": 3}
        assert (srv.requests_total, srv.completed) == (5, 2)
        srv.reset_stats()
        assert post(srv, body)[0] == 500  # the fault history is forgotten too
        assert srv.requests_total == 1


def test_openai_retries_get_past_faults() -> None:
    plan = FaultPlan(rate=1.0, kinds=("rate_limit", "server_error"), retry_after=0.01, seed=3)
    with FakeOpenAIServer(faults=plan) as srv, client_for(srv, max_retries=2) as c:
        out = ask(c, user("color?", image_bytes(COLORS["red"])))
        assert out.choices[0].message.content == "red"
        assert srv.requests_total == 3
        assert sum(srv.faults_injected.values()) == 2


def test_fault_draws_are_seeded_per_body() -> None:
    plan = FaultPlan(rate=0.5, kinds=("server_error", "bad_request"), max_per_request=5, seed=7)
    bodies = [
        json.dumps({"model": "m", "messages": [{"role": "user", "content": str(i)}]}).encode()
        for i in range(12)
    ]

    def statuses() -> list[int]:
        with FakeOpenAIServer(faults=plan) as srv:
            return [post(srv, b)[0] for b in bodies]

    first = statuses()
    assert first == statuses()
    assert {200, 400, 500} <= set(first)


def test_malformed_reply_raises_json_decode_error() -> None:
    with FakeOpenAIServer(always="malformed") as srv, client_for(srv, max_retries=2) as c:
        # The client parses the 200 body itself: a JSONDecodeError, not an openai error, and no retry.
        with pytest.raises(json.JSONDecodeError):
            ask(c, {"role": "user", "content": "hi"})
        assert srv.requests_total == 1
        status, headers, raw = post(
            srv, b'{"model": "m", "messages": [{"role": "user", "content": "x"}]}'
        )
        assert status == 200 and headers["Content-Type"] == "application/json"
        with pytest.raises(json.JSONDecodeError):
            json.loads(raw)


def test_stall_times_the_client_out() -> None:
    with FakeOpenAIServer(always="stall") as srv, client_for(srv, timeout=0.3) as c:
        with pytest.raises(openai.APITimeoutError):
            ask(c, {"role": "user", "content": "hi"})
        assert srv.faults_injected == {"stall": 1}


def test_shutdown_during_a_stall_is_prompt() -> None:
    srv = FakeOpenAIServer(always="stall", faults=FaultPlan(stall_seconds=60))
    srv.__enter__()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            post(srv, b'{"model": "m", "messages": [{"role": "user", "content": "x"}]}')
        except BaseException as exc:  # the connection is dropped: any error is fine
            errors.append(exc)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    deadline = time.monotonic() + 5
    while srv.in_flight == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert srv.in_flight == 1
    closer = threading.Thread(target=srv.__exit__, args=(None, None, None), daemon=True)
    closer.start()
    closer.join(timeout=3)
    assert not closer.is_alive()
    caller.join(timeout=3)
    assert not caller.is_alive()
    assert srv.completed == 0


def test_serves_many_requests_concurrently() -> None:
    with FakeOpenAIServer(latency=0.2) as srv, client_for(srv) as c:
        raw = image_bytes(COLORS["yellow"])
        answers: list[str | None] = []
        lock = threading.Lock()

        def call() -> None:
            out = ask(c, user("color?", raw))
            with lock:
                answers.append(out.choices[0].message.content)

        threads = [threading.Thread(target=call) for _ in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        assert answers == ["yellow"] * 32
        assert srv.max_in_flight >= 8
        assert srv.in_flight == 0
        assert srv.completed == 32


def test_records_generation_params_and_headers() -> None:
    with FakeOpenAIServer() as srv, client_for(srv) as c:
        ask(c, {"role": "user", "content": "hi"}, temperature=0.0, seed=5, max_completion_tokens=8)
        (params,) = srv.received_params
        assert params["temperature"] == 0.0
        assert params["seed"] == 5
        assert params["max_completion_tokens"] == 8
        assert "messages" not in params
        assert srv.last_headers["authorization"] == "Bearer k"


def test_dominant_color_ignores_background_and_transparency() -> None:
    im = Image.new("RGBA", (40, 40), (0, 0, 0, 0))
    im.paste(Image.new("RGBA", (6, 6), (30, 160, 50, 255)), (0, 0))
    assert dominant_color(im) == "green"
    gray = Image.new("RGB", (10, 10), (140, 140, 140))
    gray.paste(Image.new("RGB", (2, 2), COLORS["orange"]), (0, 0))
    assert dominant_color(gray) == "orange"
    assert dominant_color(Image.new("RGB", (300, 200), COLORS["black"])) == "black"


def test_parse_options() -> None:
    question, options = parse_options("Q?\nOptions: (A) red; (B) light blue; (C) 3.5.\nAnswer.")
    assert question == "Q?\n"
    assert options == [("A", "red"), ("B", "light blue"), ("C", "3.5")]
    assert parse_options("no options here") == ("no options here", [])


def test_invalid_configuration() -> None:
    with pytest.raises(ValueError, match="kinds"):
        FaultPlan(kinds=("meteor",))
    with pytest.raises(ValueError, match="rate"):
        FaultPlan(rate=1.5)
    with pytest.raises(ValueError, match="always"):
        FakeOpenAIServer(always="meteor")
    with pytest.raises(RuntimeError, match="context manager"):
        _ = FakeOpenAIServer().base_url
