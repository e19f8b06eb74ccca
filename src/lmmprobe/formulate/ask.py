"""What one (sample, repeat) asks, before it becomes a full `Request`.

A run plans every (sample, repeat) of every model, but on a re-run most of them are answered
from the store and never sent. An `Ask` holds everything a request is made of (and all the
scorer reads) without the chat messages, which only a backend needs: the runner keys every
ask, and builds the `Request` (`Ask.to_request`) only for those the store cannot answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from lmmprobe.schema import ContentPart, GenerationParams, ImageRef, Message, Method, Request
from lmmprobe.schema._trusted import trusted

T = TypeVar("T")

Turn = tuple[str, str]
"""A text-only chat turn before the question: (role, text)."""


@dataclass(slots=True, eq=False)
class Ask:
    """One request as planned: its fields, the turns before the question, and its key.

    `to_request` gives the equivalent `Request`; the runner's keys (`run.keys.ask_key`) equal
    `request_key` of that request, so a stored response is found either way.
    """

    sample_id: str
    repeat: int
    method: Method
    prompt: str
    images: list[ImageRef]
    candidates: list[str] | None
    options: list[str] | None
    marks: list[str] | None
    order: list[int] | None
    response_prefix: str | None
    gen: GenerationParams
    preamble: tuple[Turn, ...]
    """System prompt, in-context example and dialogue history, in order, as text turns."""
    key: str = ""

    def to_request(self) -> Request:
        """The full request: the preamble's turns, then the images and the question."""
        messages = [text_message(role, text) for role, text in self.preamble]
        user = [image_part(i) for i in range(len(self.images))]
        user.append(trusted(ContentPart, {"type": "text", "text": self.prompt, "image": None}))
        messages.append(trusted(Message, {"role": "user", "content": user}))
        # Every value is valid by construction (validated samples, configs and decoding
        # settings; lists built by the formulator), so the request is not validated again.
        # Lists are copied so the request shares nothing mutable with this ask.
        return trusted(
            Request,
            {
                "key": self.key,
                "sample_id": self.sample_id,
                "repeat": self.repeat,
                "method": self.method,
                "messages": messages,
                "prompt": self.prompt,
                "images": list(self.images),
                "candidates": _copy(self.candidates),
                "options": _copy(self.options),
                "marks": _copy(self.marks),
                "order": _copy(self.order),
                "response_prefix": self.response_prefix,
                "gen": self.gen,
            },
        )


def _copy(values: list[T] | None) -> list[T] | None:
    return None if values is None else list(values)


def text_message(role: str, text: str) -> Message:
    """A message holding one text part (roles and texts come from validated inputs)."""
    part = trusted(ContentPart, {"type": "text", "text": text, "image": None})
    return trusted(Message, {"role": role, "content": [part]})


@lru_cache(maxsize=64)
def image_part(index: int) -> ContentPart:
    """The part pointing at image `index`; parts are frozen, so one instance serves all."""
    return ContentPart(type="image", image=index)
