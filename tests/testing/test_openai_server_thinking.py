"""The fake OpenAI server's thinking modes, read back through the real openai client."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest

pytest.importorskip("openai")

import openai
from PIL import Image

from lmmprobe.testing.openai_server import THINKING_MODES, FakeOpenAIServer

QUESTION = "What color is it? Options: (A) blue; (B) red."


def _messages() -> list[dict[str, Any]]:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (220, 30, 30)).save(buf, format="PNG")
    url = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
    return [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": url}},
                {"type": "text", "text": QUESTION},
            ],
        }
    ]


def _ask(server: FakeOpenAIServer, model: str = "fake-vlm", **kw: Any) -> Any:
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    return client.chat.completions.create(model=model, messages=_messages(), **kw)


def test_each_mode_speaks_the_protocol_the_client_parses() -> None:
    with FakeOpenAIServer() as server:
        plain = _ask(server).choices[0]
        assert plain.message.content == "(B)" and plain.finish_reason == "stop"
        got = {mode: _ask(server, f"fake-vlm+{mode}") for mode in THINKING_MODES}
    for mode in ("reasoning_content", "reasoning"):
        choice = got[mode].choices[0]
        assert choice.message.content == "(B)" and choice.finish_reason == "stop"
        thinking = choice.message.model_extra[mode]
        assert "(A)" in thinking and "(B)" not in thinking  # a trap, never the answer
    inline = got["inline"].choices[0].message.content
    assert inline.startswith("<think>\n") and inline.endswith("</think>\n\n(B)")
    closing = got["closing"].choices[0].message.content
    assert "<think>" not in closing and closing.endswith("\n</think>\n\n(B)")
    hidden = got["hidden"].choices[0]
    assert hidden.message.content == "(B)" and not hidden.message.model_extra
    cut = got["open"].choices[0]
    assert cut.finish_reason == "length"
    assert cut.message.content.startswith("<think>\n") and "</think>" not in cut.message.content
    for mode, reply in got.items():
        usage = reply.usage
        assert usage.completion_tokens_details.reasoning_tokens > 0, mode
        answered = 0 if mode == "open" else 1
        assert (
            usage.completion_tokens == usage.completion_tokens_details.reasoning_tokens + answered
        )


def test_token_limit_cuts_inside_the_thinking() -> None:
    with FakeOpenAIServer() as server:
        inline = _ask(server, "fake-vlm+inline", max_tokens=4).choices[0]
        field = _ask(server, "fake-vlm+reasoning", max_tokens=4)
    assert inline.finish_reason == "length" and "</think>" not in inline.message.content
    choice = field.choices[0]
    assert choice.finish_reason == "length" and choice.message.content is None
    assert len(choice.message.model_extra["reasoning"].split()) == 4
    assert field.usage.completion_tokens_details.reasoning_tokens == 4


def test_mode_by_header_or_default_and_thinking_off() -> None:
    with FakeOpenAIServer(thinking="inline") as server:
        by_default = _ask(server).choices[0].message.content
        by_header = _ask(server, extra_headers={"X-Fake-Thinking": "reasoning_content"})
        off = _ask(server, extra_body={"chat_template_kwargs": {"enable_thinking": False}})
        none = _ask(server, reasoning_effort="none")
        with pytest.raises(openai.BadRequestError, match="not a thinking mode"):
            _ask(server, extra_headers={"X-Fake-Thinking": "loud"})
    assert by_default.startswith("<think>")
    assert by_header.choices[0].message.model_extra["reasoning_content"]
    assert off.choices[0].message.content == "(B)" and none.choices[0].message.content == "(B)"
    with pytest.raises(ValueError, match="thinking must be one of"):
        FakeOpenAIServer(thinking="loud")


def test_thinking_parameters_are_validated_and_recorded() -> None:
    with FakeOpenAIServer() as server:
        _ask(
            server,
            reasoning_effort="high",
            extra_body={"thinking_token_budget": 64, "chat_template_kwargs": {"x": 1}},
        )
        with pytest.raises(openai.BadRequestError, match="reasoning_effort"):
            _ask(server, extra_body={"reasoning_effort": "extreme"})
        with pytest.raises(openai.BadRequestError, match="chat_template_kwargs"):
            _ask(server, extra_body={"chat_template_kwargs": "enable_thinking=false"})
        with pytest.raises(openai.BadRequestError, match="thinking_token_budget"):
            _ask(server, extra_body={"thinking_token_budget": -1})
        params = server.received_params
    assert len(params) == 1
    assert params[0]["reasoning_effort"] == "high"
    assert params[0]["thinking_token_budget"] == 64
    assert params[0]["chat_template_kwargs"] == {"x": 1}
