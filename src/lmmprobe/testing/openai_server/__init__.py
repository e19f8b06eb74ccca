"""A loopback fake of an OpenAI-compatible chat-completions server, for tests and benchmarks.

Origin: written for lmmprobe (no external code or data). It speaks the real wire protocol, so the
real `openai` client (and any other HTTP client) can exercise lmmprobe's `openai:` backend without
a network: images travel as base64 data URLs, errors come back in OpenAI's error shape, and faults
(429 with ``Retry-After``, 500, stalls past the client's timeout, truncated JSON, 400, a completion
with empty or null content, a connection closed without an answer, a request never answered) can
be injected at a seeded rate, or forced on every request (``always``). A server that quotes the
caller's key in its error messages (``echo_key``), as some real ones do, or even in its answers
(``echo_key_in_answers``), can be imitated too. A reasoning model's ways of returning its
thinking (``reasoning_content`` or ``reasoning`` fields, inline ``<think>`` tags, a block cut off
by the token limit, a block the template opened) are chosen per request (`_thinking`).

The fake "looks" at the first image of the last user message and answers from its dominant color,
so a test can prove that images arrive intact and that options and marks survive the round trip.
Serving uses only the standard library (one thread per connection); Pillow decodes images.

Example:
    >>> with FakeOpenAIServer(latency=0.01) as server:  # doctest: +SKIP
    ...     client = openai.OpenAI(base_url=server.base_url, api_key="k")
    ...     client.chat.completions.create(model="fake-vlm", messages=[...])

"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import hashlib
import io
import json
import random
import re
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final, cast

from PIL import Image

from lmmprobe.imaging.colors import COLORS as DEMO_COLORS
from lmmprobe.testing.openai_server._thinking import (
    THINKING_HEADER,
    THINKING_MODES,
    thinking_mode,
    thinking_off,
    thinking_reply,
    thinking_text,
)

MODEL_ID: Final = "fake-vlm"
"""The one model `GET /v1/models` lists (any model name is accepted and echoed back)."""

FAKE_VERSION: Final = "fake-1"
"""What `GET /version` reports (vLLM reports its own version there)."""

COLORS: Final[dict[str, tuple[int, int, int]]] = dict(DEMO_COLORS)
"""The colors the fake can name (the demo source's palette), matched by nearest RGB."""

FAULT_KINDS: Final = (
    "rate_limit",
    "server_error",
    "stall",
    "malformed",
    "bad_request",
    "empty_content",
    "null_content",
    "no_choices",
    "disconnect",
    "hang",
)
"""Every fault kind the server knows how to inject: ``empty_content`` and ``null_content`` answer
200 with a message whose content is ``""`` or ``null``, ``no_choices`` 200 with ``"choices": []``,
each with its usage (a reply billed, though unusable); ``disconnect`` closes the connection
without answering (the client sees a connection error); ``hang`` accepts the request and never
answers (until the server stops), as a wedged server does: only the client's timeout ends it."""

NO_IMAGE_REPLY: Final = "I cannot see an image."
TOKENS_PER_IMAGE: Final = 85
MAX_BODY_BYTES: Final = 64 * 1024 * 1024
_CHOSEN_LOGPROB: Final = -0.05
_FILLER_TOKENS: Final = (
    "The", "Answer", "answer", "I", " ", "the", "It", "This", "Option", "A", "is", ":",
    "\n", "(", "My", "Based", "In", "Looking", "Sure", "Yes",
)  # fmt: skip
_REASONING_EFFORTS: Final = ("none", "minimal", "low", "medium", "high", "xhigh")
_THUMB: Final = 64  # images are judged on at most 64x64 pixels: plenty for a dominant color
_OPTION_RE: Final = re.compile(r"^\(([A-Za-z]|\d+)\)\s*(.*?)\s*$", re.DOTALL)
_DATA_URL_RE: Final = re.compile(r"^data:image/[\w.+-]+;base64,(.*)$", re.DOTALL)
_COLOR_WORD_RE: Final = re.compile(r"\b(" + "|".join(COLORS) + r")\b", re.IGNORECASE)


@dataclass
class FaultPlan:
    """Which faults the server injects, how often, and how much retrying it takes to get past them.

    Whether an attempt faults is drawn from `random.Random` seeded with the plan's seed, the
    request body's hash and the attempt number, so the same body sees the same faults in every
    run regardless of how concurrent requests interleave.
    """

    rate: float = 0.0
    """Probability that an attempt gets a fault (until the body has had `max_per_request`)."""
    kinds: tuple[str, ...] = ("rate_limit", "server_error", "stall", "malformed")
    """Fault kinds to draw from, uniformly; any of `FAULT_KINDS`."""
    max_per_request: int = 2
    """Most faults one distinct request body gets, so a client that retries always finishes."""
    retry_after: float = 0.05
    """Seconds sent in the ``Retry-After`` header of 429 answers."""
    stall_seconds: float = 5.0
    """How long a stall sleeps before answering (meant to exceed the client's timeout)."""
    seed: int = 0
    """Seed of the fault draws."""

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in FAULT_KINDS]
        if unknown or not self.kinds:
            raise ValueError(
                f"FaultPlan.kinds must be a non-empty subset of {FAULT_KINDS}, got {self.kinds}"
            )
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"FaultPlan.rate must lie in [0, 1], got {self.rate}")
        if self.max_per_request < 0:
            raise ValueError(f"FaultPlan.max_per_request must be >= 0, got {self.max_per_request}")


class _RequestError(Exception):
    """A request the fake refuses, carried to the handler as an OpenAI-style error."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        kind: str = "invalid_request_error",
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.kind = kind
        self.code = code

    def body(self) -> dict[str, Any]:
        """The JSON body OpenAI sends with an error."""
        return {
            "error": {
                "message": self.message,
                "type": self.kind,
                "param": self.param,
                "code": self.code,
            }
        }


@dataclass
class _Chat:
    """What the fake needs from a validated chat-completions body."""

    model: str
    text_words: int  # whitespace-split words of every text part, for prompt_tokens
    images: list[bytes]  # every image in the request, in message order
    last_user_text: str
    last_user_images: list[Image.Image]
    max_tokens: int | None
    logprobs: bool
    top_logprobs: int
    params: dict[str, Any] = field(default_factory=dict)
    videos: list[str] = field(default_factory=list)  # every video_url part's URL, in order
    # The last user turn's parts in order: "image", "video", or a text part's text.
    last_user_layout: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- request parsing


def _bad(message: str, param: str | None = None) -> _RequestError:
    return _RequestError(400, message, param=param)


def _decode_image(url: object, param: str) -> tuple[bytes, Image.Image]:
    if not isinstance(url, str):
        raise _bad("image_url.url must be a string", param)
    match = _DATA_URL_RE.match(url)
    if match is None:
        raise _bad(
            f"image URL must be a base64 data URL (data:image/...;base64,...), got {url[:40]!r}",
            param,
        )
    try:
        raw = base64.b64decode(match.group(1), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _bad(f"image data URL is not valid base64: {exc}", param) from exc
    try:
        image = Image.open(io.BytesIO(raw))
        image.load()
    # Pillow raises many types on hostile bytes (OSError, SyntaxError, DecompressionBombError...);
    # every one of them means "not an image we can read", which is a 400, never a server crash.
    except Exception as exc:
        raise _bad(f"image could not be decoded: {type(exc).__name__}: {exc}", param) from exc
    return raw, image


def _parse_part(part: object, param: str) -> tuple[str | None, tuple[bytes, Image.Image] | None]:
    if not isinstance(part, dict):
        raise _bad("content parts must be objects", param)
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        if not isinstance(text, str):
            raise _bad("text parts need a string 'text'", f"{param}.text")
        return text, None
    if kind == "image_url":
        image_url = part.get("image_url")
        if not isinstance(image_url, dict):
            raise _bad(
                "image_url parts need an object 'image_url' with a 'url'", f"{param}.image_url"
            )
        return None, _decode_image(image_url.get("url"), f"{param}.image_url.url")
    raise _bad(f"unsupported content part type {kind!r}", f"{param}.type")


def _video_part(part: object, param: str) -> str | None:
    """A ``video_url`` part's URL (vLLM's and SGLang's video input), None for other parts."""
    if not isinstance(part, dict) or part.get("type") != "video_url":
        return None
    video_url = part.get("video_url")
    url = video_url.get("url") if isinstance(video_url, dict) else None
    if not isinstance(url, str) or not url:
        raise _bad("video_url parts need an object 'video_url' with a 'url'", f"{param}.video_url")
    return url


def _parse_message(
    message: object, param: str, videos: list[str] | None = None, layout: list[str] | None = None
) -> tuple[str, list[str], list[tuple[bytes, Image.Image]]]:
    if not isinstance(message, dict):
        raise _bad("each message must be an object", param)
    role = message.get("role")
    if role not in ("system", "developer", "user", "assistant", "tool"):
        raise _bad(f"invalid role {role!r}", f"{param}.role")
    content = message.get("content")
    if isinstance(content, str):
        return role, [content], []
    if content is None and role == "assistant":
        return role, [], []
    if not isinstance(content, list):
        raise _bad("content must be a string or a list of parts", f"{param}.content")
    texts: list[str] = []
    images: list[tuple[bytes, Image.Image]] = []
    for j, part in enumerate(content):
        # A server that takes video (`FakeOpenAIServer(video=True)`) lists its URLs in
        # `videos`; to one that does not, a video part is unsupported, as to OpenAI's API.
        url = None if videos is None else _video_part(part, f"{param}.content[{j}]")
        if url is not None:
            assert videos is not None
            videos.append(url)
            if layout is not None:
                layout.append("video")
            continue
        text, image = _parse_part(part, f"{param}.content[{j}]")
        if text is not None:
            texts.append(text)
        if image is not None:
            images.append(image)
        if layout is not None:
            layout.append("image" if text is None else text)
    return role, texts, images


def _int_param(body: dict[str, Any], name: str, low: int, high: int | None = None) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    # bool is an int subclass, but `true` is not a count.
    if (
        not isinstance(value, int)
        or isinstance(value, bool)
        or value < low
        or (high is not None and value > high)
    ):
        bounds = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise _bad(f"{name} must be an integer {bounds}, got {value!r}", name)
    return value


def _check_number(body: dict[str, Any], name: str, low: float, high: float) -> None:
    value = body.get(name)
    if value is None:
        return
    if not isinstance(value, int | float) or isinstance(value, bool) or not low <= value <= high:
        raise _bad(f"{name} must be a number in [{low}, {high}], got {value!r}", name)


def _parse_chat(body: object, *, video: bool = False) -> _Chat:
    """Validate a chat-completions body the way the real API would, keeping what the fake uses.

    Args:
        body: The decoded JSON body.
        video: Whether ``video_url`` parts are taken (vLLM, SGLang) or refused (OpenAI).

    """
    if not isinstance(body, dict):
        raise _bad("request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("you must provide a model parameter", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("messages must be a non-empty list", "messages")
    _check_number(body, "temperature", 0.0, 2.0)
    _check_number(body, "top_p", 0.0, 1.0)
    _int_param(body, "seed", -(2**63))
    max_tokens = _int_param(body, "max_completion_tokens", 1)
    if max_tokens is None:
        max_tokens = _int_param(body, "max_tokens", 1)
    top = _int_param(body, "top_logprobs", 0, 20)
    _int_param(body, "thinking_token_budget", 0)
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in _REASONING_EFFORTS:
        raise _bad(
            f"reasoning_effort must be one of {', '.join(_REASONING_EFFORTS)}, got {effort!r}",
            "reasoning_effort",
        )
    kwargs = body.get("chat_template_kwargs")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise _bad("chat_template_kwargs must be an object", "chat_template_kwargs")
    logprobs = body.get("logprobs")
    if logprobs is not None and not isinstance(logprobs, bool):
        raise _bad("logprobs must be a boolean", "logprobs")
    words = 0
    images: list[bytes] = []
    last_text, last_images = "", []
    videos: list[str] | None = [] if video else None
    last_layout: list[str] = []
    for i, message in enumerate(messages):
        layout: list[str] = []
        role, texts, parsed = _parse_message(message, f"messages[{i}]", videos, layout)
        words += sum(len(t.split()) for t in texts)
        images.extend(raw for raw, _ in parsed)
        if role == "user":
            last_text, last_images = "\n".join(texts), [im for _, im in parsed]
            last_layout = layout
    return _Chat(
        model=model,
        text_words=words,
        images=images,
        last_user_text=last_text,
        last_user_images=last_images,
        max_tokens=max_tokens,
        logprobs=bool(logprobs),
        top_logprobs=5 if top is None else top,
        params={k: v for k, v in body.items() if k != "messages"},
        videos=videos or [],
        last_user_layout=last_layout,
    )


# --------------------------------------------------------------------------- answering


def _is_background(r: int, g: int, b: int) -> bool:
    # Mid-gray canvases (the demo set draws on 110-150 gray) must not outvote a small shape.
    return abs(r - g) < 20 and abs(g - b) < 20 and abs(r - b) < 20 and 60 < (r + g + b) / 3 < 200


def _nearest_color(rgb: tuple[int, int, int]) -> str:
    return min(
        COLORS, key=lambda name: sum((a - b) ** 2 for a, b in zip(rgb, COLORS[name], strict=True))
    )


def dominant_color(image: Image.Image) -> str:
    """The named color (a key of `COLORS`) covering most non-background pixels of `image`.

    Each pixel is quantized to its nearest named color, which keeps JPEG noise and anti-aliased
    edges voting for the color they came from. Mid-gray background pixels and transparent ones
    are ignored; an image with nothing else is named after its most common pixel.
    """
    thumb = image.convert("RGBA")
    if thumb.width > _THUMB or thumb.height > _THUMB:
        # NEAREST keeps real pixel values: averaging would invent colors between shape and canvas.
        thumb = thumb.resize(
            (min(thumb.width, _THUMB), min(thumb.height, _THUMB)), Image.Resampling.NEAREST
        )
    # An RGBA image yields (count, (r, g, b, a)) pairs; Pillow's stubs allow any pixel type.
    colors = cast(
        list[tuple[int, tuple[int, int, int, int]]],
        thumb.getcolors(thumb.width * thumb.height) or [],
    )
    votes: Counter[str] = Counter()
    for count, (r, g, b, a) in colors:
        if a >= 128 and not _is_background(r, g, b):
            votes[_nearest_color((r, g, b))] += count
    if votes:
        return votes.most_common(1)[0][0]
    if not colors:
        return "black"
    _, (r, g, b, _a) = max(colors, key=lambda c: c[0])
    return _nearest_color((r, g, b))


def parse_options(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Split a prompt into the question before ``Options:`` and its ``(mark, text)`` pairs.

    Understands lmmprobe's rendering, ``Options: (A) red; (B) blue; (C) green.``, with upper,
    lower or number marks. Without an options line the whole text is the question.
    """
    head, sep, tail = text.partition("Options:")
    if not sep:
        return text, []
    line = tail.strip().splitlines()[0] if tail.strip() else ""
    line = line.strip().removesuffix(".")
    options = []
    for chunk in re.split(r";\s*(?=\()", line):
        match = _OPTION_RE.match(chunk.strip())
        if match:
            options.append((match.group(1), match.group(2)))
    return head, options


def _choose(question: str, options: list[tuple[str, str]], color: str) -> str | None:
    """The mark the fake picks, or None when no option fits."""
    texts = {text.strip().lower(): mark for mark, text in options}
    if set(texts) == {"yes", "no"}:
        asked = _COLOR_WORD_RE.search(question)
        if asked is None:
            return None
        return texts["yes" if asked.group(1).lower() == color else "no"]
    return texts.get(color)


@dataclass
class _Answer:
    text: str
    chosen: str  # the token the fake "decided" on: a mark, a color name, or the first word
    alternatives: list[str]  # other tokens worth ranking (the prompt's other marks, other colors)


def _answer(chat_text: str, images: list[Image.Image]) -> _Answer:
    """The fake's reply to the last user turn: an option mark, a color name, or a refusal."""
    if not images:
        return _Answer(NO_IMAGE_REPLY, NO_IMAGE_REPLY.split()[0], [])
    color = dominant_color(images[0])
    question, options = parse_options(chat_text)
    marks = [mark for mark, _ in options]
    mark = _choose(question, options, color) if options else None
    if mark is not None:
        return _Answer(f"({mark})", mark, [m for m in marks if m != mark])
    others = marks or [c for c in COLORS if c != color]
    return _Answer(color, color, others)


def _token(text: str, logprob: float) -> dict[str, Any]:
    return {"token": text, "logprob": logprob, "bytes": list(text.encode("utf-8"))}


def _logprobs(ans: _Answer, words: list[str], top: int) -> dict[str, Any]:
    """OpenAI-shaped logprobs whose first entry ranks the decision against its alternatives."""
    ranked = [ans.chosen, *ans.alternatives]
    ranked += [f for f in _FILLER_TOKENS if f not in ranked][: max(0, top - len(ranked))]
    first = _token(ans.chosen, _CHOSEN_LOGPROB)
    first["top_logprobs"] = [
        _token(t, _CHOSEN_LOGPROB if i == 0 else -1.0 - i) for i, t in enumerate(ranked[:top])
    ]
    # The decision is the first token (for "(B)" the mark, as a model told to answer with the
    # letter would emit it); the rest of the reply follows word by word with no alternatives.
    rest = words[1:] if ans.text != f"({ans.chosen})" else [")"]
    entries = [first]
    for word in rest:
        entry = _token(word, _CHOSEN_LOGPROB)
        entry["top_logprobs"] = [_token(word, _CHOSEN_LOGPROB)][:top]
        entries.append(entry)
    return {"content": entries, "refusal": None}


def _completion_body(chat: _Chat, echoed: str = "", thinking: str | None = None) -> dict[str, Any]:
    """The `chat.completion` object answering a validated request.

    `echoed` (a key an echoing server quotes) is appended to the answer's text (and to the
    thinking, in a thinking mode); `thinking` is
    the request's thinking mode (one of `THINKING_MODES`), None to answer without thinking.
    """
    ans = _answer(chat.last_user_text, chat.last_user_images)
    if echoed:
        ans = dataclasses.replace(ans, text=f"{ans.text} (request by {echoed}; key: {echoed})")
    words = ans.text.split()
    if thinking is not None:
        return _thinking_body(chat, ans, words, thinking, echoed)
    finish = "stop"
    if chat.max_tokens is not None and len(words) > chat.max_tokens:
        words, finish = words[: chat.max_tokens], "length"
    text = " ".join(words)
    prompt_tokens = chat.text_words + TOKENS_PER_IMAGE * len(chat.images)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": chat.model,
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "finish_reason": finish,
                "logprobs": _logprobs(ans, words, chat.top_logprobs) if chat.logprobs else None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(words),
            "total_tokens": prompt_tokens + len(words),
        },
    }


def _thinking_body(
    chat: _Chat, ans: _Answer, words: list[str], mode: str, echoed: str = ""
) -> dict[str, Any]:
    """The `chat.completion` of a model that thinks before it answers, in `mode`."""
    trap = ans.alternatives[0] if ans.alternatives else None
    marked = words[0] == f"({ans.chosen})" if words else False
    thinking = thinking_text(trap, marked=marked)
    if echoed:
        thinking += f" The request came with key {echoed}."
    reply = thinking_reply(mode, thinking, words, chat.max_tokens)
    logprobs = None
    if chat.logprobs and reply.answer_words:
        logprobs = _logprobs(ans, reply.answer_words, chat.top_logprobs)
    prompt_tokens = chat.text_words + TOKENS_PER_IMAGE * len(chat.images)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": chat.model,
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": 0,
                "message": reply.message,
                "finish_reason": reply.finish_reason,
                "logprobs": logprobs,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": prompt_tokens + reply.completion_tokens,
            "completion_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
        },
    }


def _scripted_body(chat: _Chat, reply: str | dict[str, Any]) -> dict[str, Any]:
    """A `chat.completion` whose message is a scripted reply (text, or a message object)."""
    finish: object = None
    if isinstance(reply, str):
        message: dict[str, Any] = {"role": "assistant", "content": reply, "refusal": None}
    else:
        # A mapping's ``finish_reason`` belongs to the choice, not the message.
        reply = dict(reply)
        finish = reply.pop("finish_reason", None)
        message = {"role": "assistant", "content": None, "refusal": None, **reply}
    words = len(str(message.get("content") or "").split())
    prompt_tokens = chat.text_words + TOKENS_PER_IMAGE * len(chat.images)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": chat.model,
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish or ("tool_calls" if message.get("tool_calls") else "stop"),
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": words,
            "total_tokens": prompt_tokens + words,
        },
    }


# --------------------------------------------------------------------------- faults and statistics


class _FaultState:
    """Per-body fault bookkeeping: attempts seen and faults given, behind one lock."""

    def __init__(self, plan: FaultPlan | None, always: str | None) -> None:
        self.plan = plan
        self.always = always
        self._lock = threading.Lock()
        self._attempts: Counter[str] = Counter()
        self._faults: Counter[str] = Counter()

    def decide(self, body: bytes) -> str | None:
        """The fault kind for this attempt at `body`, or None to answer normally."""
        if self.always is not None:
            return self.always
        plan = self.plan
        if plan is None or plan.rate <= 0.0:
            return None
        key = hashlib.sha256(body).hexdigest()
        with self._lock:
            attempt = self._attempts[key]
            self._attempts[key] += 1
            if self._faults[key] >= plan.max_per_request:
                return None
            # Seeded by body and attempt, not by a shared stream, so concurrency cannot reorder draws.
            rng = random.Random(f"{plan.seed}:{key}:{attempt}")
            if rng.random() >= plan.rate:
                return None
            self._faults[key] += 1
            return rng.choice(plan.kinds)

    def reset(self) -> None:
        with self._lock:
            self._attempts.clear()
            self._faults.clear()


class _Stats:
    """Counters shared by handler threads; every read and write holds the lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.requests_total = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.completed = 0
        self.faults: Counter[str] = Counter()
        self.images: list[bytes] = []
        self.videos: list[str] = []
        self.params: list[dict[str, Any]] = []
        self.layouts: list[list[str]] = []
        self.authorization: list[str] = []
        self.last_headers: dict[str, str] = {}


# --------------------------------------------------------------------------- HTTP plumbing


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # 64+ clients connect at once; the default backlog of 5 would refuse some of them.
    request_queue_size = 256
    fake: FakeOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: a client that gave up (timeout, retry) closed its socket mid-answer."""
        return


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, the body waits ~40 ms for a delayed ACK.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging: tests and benchmarks print their own summaries."""

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.fake._track(self.connection, add=False)

    def _send_json(
        self, status: int, payload: bytes, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("x-request-id", f"req_{uuid.uuid4().hex[:16]}")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self._done()
        self.wfile.write(payload)
        self.wfile.flush()

    def _send_error(self, err: _RequestError, headers: dict[str, str] | None = None) -> None:
        self._send_json(err.status, json.dumps(err.body()).encode(), headers)

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            # Without a length the rest of the stream cannot be delimited, so keep-alive must end.
            self.close_connection = True
            raise _RequestError(411, "a Content-Length header is required", code="length_required")
        if int(length) > MAX_BODY_BYTES:
            self.close_connection = True
            raise _RequestError(
                413, f"request body exceeds {MAX_BODY_BYTES} bytes", code="too_large"
            )
        return self.rfile.read(int(length))

    def _echo(self, *, answers: bool = False) -> str:
        """The Authorization header as received, where the server echoes it (errors or answers)."""
        fake = self.server.fake
        if not (fake.echo_key_in_answers if answers else fake.echo_key):
            return ""
        return str(self.headers.get("Authorization") or "")

    def _check_auth(self) -> None:
        key = self.server.fake.api_key
        if key is not None and self.headers.get("Authorization") != f"Bearer {key}":
            echoed = self._echo()
            raise _RequestError(
                401,
                f"Incorrect API key provided: {echoed}"
                if echoed
                else "Incorrect API key provided.",
                kind="invalid_request_error",
                code="invalid_api_key",
            )

    def do_GET(self) -> None:
        """Serve `GET /v1/models`, and `GET /version` as vLLM does (the fake's version)."""
        try:
            self._check_auth()
            if self.path.rstrip("/") == "/version":
                self._send_json(200, json.dumps({"version": FAKE_VERSION}).encode())
                return
            if self.path.rstrip("/") != "/v1/models":
                raise _RequestError(404, f"unknown route GET {self.path}", code="not_found")
        except _RequestError as err:
            self._send_error(err)
            return
        model = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "lmmprobe"}
        self._send_json(200, json.dumps({"object": "list", "data": [model]}).encode())

    def do_POST(self) -> None:
        """Serve `POST /v1/chat/completions`, counting it as in flight until answered."""
        fake = self.server.fake
        fake._arrive(self.headers)
        self._in_flight = True
        try:
            self._chat(fake)
        except OSError:
            pass  # the client hung up (timeout or retry); nothing left to answer
        finally:
            self._done()

    def _done(self) -> None:
        # Leave before the reply's bytes go out: once the client has them it may send its next
        # request at once, and counting both would overstate the concurrency it used.
        if getattr(self, "_in_flight", False):
            self._in_flight = False
            self.server.fake._leave()

    def _chat(self, fake: FakeOpenAIServer) -> None:
        try:
            body = self._read_body()
            self._check_auth()
            if self.path.rstrip("/") != "/v1/chat/completions":
                raise _RequestError(404, f"unknown route POST {self.path}", code="not_found")
            try:
                payload = json.loads(body)
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise _bad(f"request body is not valid JSON: {exc}") from exc
            chat = _parse_chat(payload, video=fake.video)
            try:
                mode = thinking_mode(chat.model, self.headers.get(THINKING_HEADER), fake.thinking)
            except ValueError as exc:
                raise _bad(str(exc)) from exc
            if thinking_off(chat.params):
                mode = None
        except _RequestError as err:
            self._send_error(err)
            return
        fault = fake._faults.decide(body)
        if fault is not None:
            fake._count_fault(fault)
            if fault in ("empty_content", "null_content", "no_choices"):
                content = {"content": "" if fault == "empty_content" else None}
                billed = _scripted_body(chat, content)
                if fault == "no_choices":
                    billed["choices"] = []
                self._send_json(200, fake._encode(billed))  # its usage, as scripted
                return
            if fault == "disconnect":
                self.close_connection = True  # the client sees the socket close, no answer
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault == "hang":
                fake._stop.wait()  # until the server stops; the client gives up long before
                self.close_connection = True
                return
            if fault != "stall":
                self._send_fault(fault)
                return
            if not fake._sleep(fake._stall_seconds):
                self.close_connection = True  # shutting down: drop the request unanswered
                return
        fake._accept(chat)
        if not fake._sleep(fake.latency):
            self.close_connection = True
            return
        scripted = fake._reply_for(chat.last_user_text, chat.model)
        if scripted is not None:
            if scripted == "!missing":  # a misspelt model name, as OpenAI answers it
                self._send_error(
                    _RequestError(
                        404,
                        f"The model `{chat.model}` does not exist or you do not have access to it.",
                        code="model_not_found",
                    )
                )
                return
            if scripted.startswith("!fail"):
                self._send_error(_bad("Invalid request (scripted failure)."))
                return
            if scripted.startswith("!slow="):
                seconds, _, scripted = scripted.removeprefix("!slow=").partition(":")
                if not fake._sleep(float(seconds)):
                    self.close_connection = True
                    return
            body = fake._encode(_scripted_body(chat, scripted))
            fake._complete()
            self._send_json(200, body)
            return
        if fake._replies is not None:
            reply = fake._next_reply()
            if reply is None:
                self._send_error(_bad("the fake server has no scripted reply left"))
                return
            body = fake._encode(_scripted_body(chat, reply))
            fake._complete()
            self._send_json(200, body)
            return
        if not fake.logprobs:  # like servers that silently ignore the logprobs parameter
            chat = dataclasses.replace(chat, logprobs=False)
        if fake.token_limit is not None:  # the server's own limit stops the reply first
            limit = fake.token_limit
            chat = dataclasses.replace(chat, max_tokens=min(chat.max_tokens or limit, limit))
        echoed = self._echo(answers=True).removeprefix("Bearer ")
        body = fake._encode(_completion_body(chat, echoed, mode))
        fake._complete()  # counted before the reply leaves, so a client never sees it uncounted
        self._send_json(200, body)

    def _send_fault(self, fault: str) -> None:
        # An echoing server quotes the raw key (no "Bearer ") in its other errors, so only the
        # configured-key scrubbing, not a pattern, can catch it.
        echoed = self._echo().removeprefix("Bearer ")
        if echoed and fault in ("server_error", "bad_request"):
            self._send_error(
                _RequestError(
                    500 if fault == "server_error" else 400,
                    f"The request failed (injected {fault}) for key {echoed}.",
                    kind="server_error" if fault == "server_error" else "invalid_request_error",
                )
            )
            return
        if fault == "rate_limit":
            retry_after = self.server.fake._retry_after
            err = _RequestError(
                429,
                "Rate limit reached (injected).",
                kind="rate_limit_error",
                code="rate_limit_exceeded",
            )
            self._send_error(err, {"Retry-After": f"{retry_after:g}"})
        elif fault == "server_error":
            self._send_error(
                _RequestError(500, "The server had an error (injected).", kind="server_error")
            )
        elif fault == "bad_request":
            self._send_error(_bad("Invalid request (injected)."))
        else:  # malformed: a 200 that claims JSON but is cut off mid-object
            whole = json.dumps(
                {"id": "chatcmpl-malformed", "object": "chat.completion", "choices": []}
            )
            self._send_json(200, whole[: len(whole) // 2].encode())


class FakeOpenAIServer:
    """A local OpenAI-compatible chat-completions server running in a background thread.

    Use it as a context manager; `base_url` is ready inside the block. Statistics are
    thread-safe snapshots: lists and dicts are copies.

    Args:
        latency: Seconds each chat completion sleeps before answering (concurrently).
        faults: Faults to inject at a seeded rate; None injects none.
        api_key: When set, requests must carry ``Authorization: Bearer <api_key>`` or get 401.
        always: A fault kind forced on every chat completion (e.g. ``"bad_request"``), ignoring
            `faults` rate and `max_per_request`.
        logprobs: Whether log-probabilities are returned when asked for; False imitates a
            server that ignores the parameter.
        echo_key: Quote the request's key in error messages, as some servers do: a 401 says
            ``Incorrect API key provided: Bearer <key>``, and injected ``server_error`` and
            ``bad_request`` faults name the raw key (without ``Bearer``).
        echo_key_in_answers: Quote the request's raw key (without ``Bearer``) in the text of
            every chat completion answered normally, after the answer itself, as a server or
            model that leaks its request headers would.
        port: The loopback port to bind; 0 (the default) picks a free one. A fixed port lets a
            test stop a server and start another at the same URL (same cache keys).
        replies: Scripted replies, for testing a client that reads what a chat model writes
            (an orchestrator): each valid chat completion is answered with the next one, a
            string as the message content or a mapping merged into the assistant message
            (e.g. ``{"tool_calls": [...]}``; its ``finish_reason``, if any, is the choice's);
            once they run out, requests get a 400.
        reply_table: Replies by prompt, for scripting a judge: (text, reply) pairs; a request
            whose last user turn contains a pair's text (the first such pair wins) gets its
            reply as the message content; a text ``@MODEL rest`` matches only requests for
            that model name (a judge of its own). A reply ``!fail`` answers 400 (a failing judge),
            ``!missing`` answers 404 ``model_not_found`` as OpenAI does for a misspelt model;
            ``!slow=S:TEXT`` answers TEXT after S more seconds. Requests no pair matches are
            answered as usual.
        thinking: The thinking mode of requests that pick none themselves (one of
            `THINKING_MODES`; a request picks one with a model name ending in ``+MODE`` or the
            ``X-Fake-Thinking`` header); None answers without thinking.
        usage: The ``usage`` of every completion answered (scripted replies included),
            sent as given instead of the fake's own counts, for testing how a client reads a
            server's account: e.g. ``{"prompt_tokens": -1000}``, a count of ``float("nan")``
            (sent as ``NaN``, as Python's JSON writes it) or ``"12"``, or any other JSON value
            in place of the object; an empty mapping sends no ``usage`` at all. None: the
            fake's own counts.
        token_limit: The server's own limit on a reply's tokens (words here), as a context
            length leaves room for: a reply stops there with ``finish_reason=length`` even
            when the request's ``max_tokens`` is higher. None: only the request's limit.
        padding: Bytes of padding every completion's body starts with (0: none), for testing
            a client's bound on what it reads of a reply: that many bytes of a string field
            ``x_padding`` placed before every other field (``padding_as="field"``) or of JSON
            whitespace before the body (``padding_as="blanks"``). Either way the body stays
            valid JSON and its answer comes after the padding.
        padding_as: ``"field"`` or ``"blanks"``: what `padding` is made of.
        video: Take ``video_url`` content parts, as vLLM and SGLang do (their URLs are kept,
            `received_videos`); False refuses them with a 400, as OpenAI's API does.

    Raises:
        ValueError: `always` is not one of `FAULT_KINDS`, `thinking` not one of
            `THINKING_MODES`, or `padding_as` neither ``"field"`` nor ``"blanks"``.

    """

    def __init__(
        self,
        *,
        latency: float = 0.0,
        faults: FaultPlan | None = None,
        api_key: str | None = None,
        always: str | None = None,
        logprobs: bool = True,
        replies: Sequence[str | Mapping[str, Any]] | None = None,
        echo_key: bool = False,
        echo_key_in_answers: bool = False,
        port: int = 0,
        thinking: str | None = None,
        reply_table: Sequence[tuple[str, str]] = (),
        usage: object = None,
        token_limit: int | None = None,
        padding: int = 0,
        padding_as: str = "field",
        video: bool = False,
    ) -> None:
        if padding_as not in ("field", "blanks"):
            raise ValueError(f"padding_as must be 'field' or 'blanks', got {padding_as!r}")
        if always is not None and always not in FAULT_KINDS:
            raise ValueError(f"always must be one of {FAULT_KINDS}, got {always!r}")
        if thinking is not None and thinking not in THINKING_MODES:
            raise ValueError(f"thinking must be one of {THINKING_MODES}, got {thinking!r}")
        self.thinking = thinking
        self.latency = latency
        self.faults = faults
        self.api_key = api_key
        self.always = always
        self.logprobs = logprobs
        self.echo_key = echo_key
        self.echo_key_in_answers = echo_key_in_answers
        self.port = port
        self._replies = (
            None if replies is None else [r if isinstance(r, str) else dict(r) for r in replies]
        )
        self._replies_lock = threading.Lock()
        self.reply_table = [(str(k), str(v)) for k, v in reply_table]
        self.usage = dict(usage) if isinstance(usage, Mapping) else usage
        self.token_limit = token_limit
        self.padding = padding
        self.padding_as = padding_as
        self.video = video
        self._faults = _FaultState(faults, always)
        self._retry_after = (faults or FaultPlan()).retry_after
        self._stall_seconds = (faults or FaultPlan()).stall_seconds
        self._stats = _Stats()
        self._stop = threading.Event()
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._base_url: str | None = None

    # ---- lifecycle

    def __enter__(self) -> FakeOpenAIServer:
        """Bind 127.0.0.1 on a free port and start serving."""
        self._stop.clear()
        server = _Server(("127.0.0.1", self.port), _Handler)
        server.fake = self
        self._server = server
        host, port = server.server_address[:2]
        self._base_url = f"http://{host!s}:{port}/v1"
        # A short poll interval lets shutdown() return quickly instead of after up to 0.5 s.
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop serving, wake stalled handlers, close open connections and join the thread."""
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        with self._conns_lock:
            conns = list(self._conns)
        # Idle keep-alive handlers block reading the next request; shutting their sockets ends them.
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join()
        self._server, self._thread = None, None

    @property
    def base_url(self) -> str:
        """The API root to give a client, ``http://127.0.0.1:PORT/v1``.

        It stays readable after the server stops, so results keyed by it can be looked up then.

        Raises:
            RuntimeError: The server was never started (use it as a context manager).

        """
        if self._base_url is None:
            raise RuntimeError("FakeOpenAIServer is not running; use it as a context manager")
        return self._base_url

    # ---- statistics (thread-safe snapshots)

    @property
    def requests_total(self) -> int:
        """Chat-completion attempts received, faulted or not."""
        with self._stats.lock:
            return self._stats.requests_total

    @property
    def in_flight(self) -> int:
        """Chat completions received and not yet answered."""
        with self._stats.lock:
            return self._stats.in_flight

    @property
    def max_in_flight(self) -> int:
        """Most chat completions in flight at once."""
        with self._stats.lock:
            return self._stats.max_in_flight

    @property
    def completed(self) -> int:
        """Chat completions answered normally (status 200 with a valid body)."""
        with self._stats.lock:
            return self._stats.completed

    @property
    def faults_injected(self) -> dict[str, int]:
        """How many faults of each kind were injected."""
        with self._stats.lock:
            return dict(self._stats.faults)

    @property
    def received_images(self) -> list[bytes]:
        """Raw decoded bytes of every image of every accepted request, in arrival order.

        A request is accepted when it is valid and not faulted (a stall counts: it is answered
        late); a request's images are listed in message order.
        """
        with self._stats.lock:
            return list(self._stats.images)

    @property
    def received_videos(self) -> list[str]:
        """The URL of every ``video_url`` part of every accepted request, in arrival order."""
        with self._stats.lock:
            return list(self._stats.videos)

    @property
    def received_params(self) -> list[dict[str, Any]]:
        """Every accepted request body without its messages (model, temperature, seed...)."""
        with self._stats.lock:
            return [dict(p) for p in self._stats.params]

    @property
    def received_layouts(self) -> list[list[str]]:
        """Each accepted request's last user turn as sent, part by part, in arrival order.

        An image part is ``"image"``, a ``video_url`` part ``"video"``, a text part its text.
        """
        with self._stats.lock:
            return [list(x) for x in self._stats.layouts]

    @property
    def seen_authorization(self) -> list[str]:
        """The Authorization header of every chat-completion attempt that carried one."""
        with self._stats.lock:
            return list(self._stats.authorization)

    @property
    def last_headers(self) -> dict[str, str]:
        """The headers of the latest chat-completion attempt (names lower-cased)."""
        with self._stats.lock:
            return dict(self._stats.last_headers)

    def reset_stats(self) -> None:
        """Zero every statistic and forget per-body fault history, so a rerun sees the same faults."""
        with self._stats.lock:
            self._stats.reset()
        self._faults.reset()

    # ---- hooks for the handler

    def _reply_for(self, text: str, model: str) -> str | None:
        for needle, reply in self.reply_table:
            if needle.startswith("@"):  # "@MODEL text": only requests to that model name
                only, _, needle = needle[1:].partition(" ")
                if only != model:
                    continue
            if needle in text:
                return reply
        return None

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._conns_lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    def _arrive(self, headers: Any) -> None:
        s = self._stats
        with s.lock:
            s.requests_total += 1
            s.in_flight += 1
            s.max_in_flight = max(s.max_in_flight, s.in_flight)
            s.last_headers = {k.lower(): v for k, v in headers.items()}
            auth = headers.get("Authorization")
            if auth is not None:
                s.authorization.append(auth)

    def _leave(self) -> None:
        with self._stats.lock:
            self._stats.in_flight -= 1

    def _count_fault(self, kind: str) -> None:
        with self._stats.lock:
            self._stats.faults[kind] += 1

    def _accept(self, chat: _Chat) -> None:
        with self._stats.lock:
            self._stats.images.extend(chat.images)
            self._stats.videos.extend(chat.videos)
            self._stats.params.append(chat.params)
            self._stats.layouts.append(chat.last_user_layout)

    def _complete(self) -> None:
        with self._stats.lock:
            self._stats.completed += 1

    def _encode(self, body: dict[str, Any]) -> bytes:
        """A completion's JSON bytes after any `padding`, its ``usage`` replaced by `usage`."""
        if self.usage is not None:
            body = {k: v for k, v in body.items() if k != "usage"}
            if self.usage != {}:
                body["usage"] = self.usage
        if self.padding and self.padding_as == "field":
            body = {"x_padding": "x" * self.padding, **body}  # first: read before the answer
        encoded = json.dumps(body).encode()
        if self.padding and self.padding_as == "blanks":
            encoded = b" " * self.padding + encoded
        return encoded

    def _next_reply(self) -> str | dict[str, Any] | None:
        with self._replies_lock:
            assert self._replies is not None
            return self._replies.pop(0) if self._replies else None

    @property
    def replies_left(self) -> int:
        """Scripted replies not yet sent (0 without a script)."""
        with self._replies_lock:
            return len(self._replies or [])

    def _sleep(self, seconds: float) -> bool:
        """Sleep up to `seconds`; False when shutdown cut it short."""
        if seconds <= 0:
            return not self._stop.is_set()
        return not self._stop.wait(seconds)
