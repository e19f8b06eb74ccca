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
from lmmprobe.schema.video import VideoRef

Turn = tuple[str, str]
"""A text-only chat turn before the question: (role, text)."""

Part = str | int
"""One part of a chat turn as laid out: a text, or the index of an image in `Ask.images`."""


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
    video: VideoRef | None = None
    """The sample's resolved video, whose frames are the first images (None: no video)."""
    between: tuple[tuple[int, str], ...] = ()
    """Texts shown among the video's frames (`lmmprobe.formulate.frame_texts.place`): each
    with how many frames come before it, in order."""

    def layout(self) -> list[tuple[str, list[Part]]]:
        """The chat turns the request sends, each as (role, parts): the one place they are laid out.

        The preamble's text turns, then the user turn: its images (by index), then the prompt.
        Texts placed among the video's frames (`between`) stand before the frame they precede,
        those at one place one text part (one a line); the texts after the last frame begin
        the prompt's part, one a line. `to_request` builds the request's messages from it and
        `lmmprobe.run.keys.ask_key` keys it, so what is keyed is what is sent.
        """
        turns: list[tuple[str, list[Part]]] = [(role, [text]) for role, text in self.preamble]
        if not self.between:
            turns.append(("user", [*range(len(self.images)), self.prompt]))
            return turns
        frames = 0 if self.video is None or self.video.frames is None else len(self.video.frames)
        at: dict[int, list[str]] = {}
        for place, text in self.between:
            at.setdefault(min(place, frames), []).append(text)
        user: list[Part] = []
        for i in range(len(self.images)):
            if i in at:
                user.append("\n".join(at[i]))
            user.append(i)
        last = at.get(len(self.images)) if frames == len(self.images) else None
        user.append(self.prompt if last is None else "\n".join([*last, self.prompt]))
        turns.append(("user", user))
        return turns

    def to_request(self) -> Request:
        """The full request: the preamble's turns, then the images and the question.

        Raises:
            pydantic.ValidationError: A planned value is not a valid request field (a
                role other than system/user/assistant, say).

        """
        messages = [
            {"role": role, "content": [_part(p) for p in parts]} for role, parts in self.layout()
        ]
        # One validation builds the request with its messages and parts; it copies the lists,
        # so the request shares nothing mutable with this ask.
        return Request.model_validate(
            {
                "key": self.key,
                "sample_id": self.sample_id,
                "repeat": self.repeat,
                "method": self.method,
                "messages": messages,
                "prompt": self.prompt,
                "images": self.images,
                "candidates": self.candidates,
                "options": self.options,
                "marks": self.marks,
                "order": self.order,
                "response_prefix": self.response_prefix,
                "gen": self.gen,
                **({} if self.video is None else {"video": self.video}),
            }
        )


def _part(part: Part) -> dict[str, object]:
    if isinstance(part, int):
        return {"type": "image", "image": part}
    return {"type": "text", "text": part}
