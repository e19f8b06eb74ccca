"""What one (sample, repeat) asks, as the formulator plans it, before it becomes a `Request`.

An `Ask` holds the parts of a request as plain values: the turns before the question as
(role, text) pairs, the question text, its images, the options and the decoding settings.
`Ask.to_request` assembles the chat messages and the validated `Request` a backend receives.
The runner keys each ask by that request (`run.keys.request_key`), keeps the light ask for
scoring, and builds the request again only to send it when the store has no answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from lmmprobe.schema import GenerationParams, ImageRef, Method, Request

Turn = tuple[str, str]
"""A text-only chat turn before the question: (role, text)."""


@dataclass(slots=True, eq=False)
class Ask:
    """One request as planned: its fields, the turns before the question, and its key."""

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
    """Cache key of `to_request()`'s request, set by the runner."""

    def to_request(self) -> Request:
        """The full request: the preamble's turns, then the images and the question.

        Raises:
            pydantic.ValidationError: A planned value is not a valid request field (a
                role other than system/user/assistant, say).

        """
        turns = [_text_turn(role, text) for role, text in self.preamble]
        parts: list[dict[str, object]] = [
            {"type": "image", "image": i} for i in range(len(self.images))
        ]
        parts.append({"type": "text", "text": self.prompt})
        # One validation builds the request with its messages and parts; it copies the lists,
        # so the request shares nothing mutable with this ask.
        return Request.model_validate(
            {
                "key": self.key,
                "sample_id": self.sample_id,
                "repeat": self.repeat,
                "method": self.method,
                "messages": [*turns, {"role": "user", "content": parts}],
                "prompt": self.prompt,
                "images": self.images,
                "candidates": self.candidates,
                "options": self.options,
                "marks": self.marks,
                "order": self.order,
                "response_prefix": self.response_prefix,
                "gen": self.gen,
            }
        )


def _text_turn(role: str, text: str) -> dict[str, object]:
    return {"role": role, "content": [{"type": "text", "text": text}]}
