"""What the runner sends to a model backend."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lmmprobe.schema.image import ImageRef
from lmmprobe.schema.video import VideoRef

Method = Literal["generate", "likelihood", "mark_logprob"]
"""Black-box generation; white-box scoring of candidate continuations; or, for APIs that expose
token log-probabilities, the log-probability of each option mark as the first answer token."""


class ContentPart(BaseModel):
    """A piece of a chat message: text, or a pointer to one of the request's images."""

    model_config = ConfigDict(frozen=True)

    type: Literal["text", "image"] = Field(description="Kind of part.")
    text: str | None = Field(default=None, description="The text, for a text part.")
    image: int | None = Field(
        default=None, description="Index into `Request.images`, for an image part."
    )


class Message(BaseModel):
    """One chat turn as a backend should render it (chat template or API message)."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"] = Field(description="Speaker.")
    content: list[ContentPart] = Field(description="Ordered text and image parts.")

    @property
    def text(self) -> str:
        """The message's text parts joined, images left out."""
        return "".join(p.text or "" for p in self.content if p.type == "text")


class GenerationParams(BaseModel):
    """Decoding settings; part of the cache key because they change the output."""

    model_config = ConfigDict(frozen=True)

    max_new_tokens: int = Field(default=32, ge=1, description="Upper bound on generated tokens.")
    # Finite: inf passed the dry run, then a real run failed on it when the spec was recorded.
    temperature: float = Field(
        default=0.0, ge=0.0, allow_inf_nan=False, description="0 means greedy decoding."
    )
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    seed: int | None = Field(
        default=None, description="Sampling seed, set per repeat only when temperature > 0."
    )


class Request(BaseModel):
    """One model call for one sample and repeat; independent of every other request."""

    key: str = Field(default="", description="Cache key, set by the runner (see run.keys).")
    sample_id: str = Field(description="The sample this request asks.")
    repeat: int = Field(default=0, ge=0, description="Repeat index, 0-based.")
    method: Method = Field(description="generate, likelihood or mark_logprob.")
    messages: list[Message] = Field(description="Chat-style prompt: system, history, question.")
    prompt: str = Field(description="Plain text of the final user message (for display and logs).")
    images: list[ImageRef] = Field(
        default_factory=list, description="Images the messages point to."
    )
    candidates: list[str] | None = Field(
        default=None,
        description="Continuations to score (likelihood) or option marks to rank (mark_logprob).",
    )
    options: list[str] | None = Field(
        default=None, description="Option texts in the order shown (or scored) for this request."
    )
    marks: list[str] | None = Field(
        default=None, description="Option marks in display order, e.g. ['A', 'B', 'C']."
    )
    order: list[int] | None = Field(
        default=None, description="order[i] is the original choice index shown at position i."
    )
    response_prefix: str | None = Field(
        default=None, description="Text the model's answer is made to start with (prefill)."
    )
    gen: GenerationParams = Field(default_factory=GenerationParams, description="Decoding.")
    video: VideoRef | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The video whose sampled frames are the first ``len(video.frames)`` "
        "`images`: a backend may give them to the model as a video rather than as images.",
    )

    @property
    def video_frames(self) -> int:
        """How many of `images`, from the first, are the video's frames (0: no video)."""
        if self.video is None or self.video.frames is None:
            return 0
        return len(self.video.frames)

    @property
    def frames_interleaved(self) -> bool:
        """Whether a text part stands between two of the video's frames (subtitles among them).

        The backends then give those frames as images in place, never as one video.
        """
        frames = self.video_frames
        if frames < 2:
            return False
        for m in self.messages:
            seen = 0
            text_after_frame = False
            for p in m.content:
                if p.type == "image" and p.image is not None and p.image < frames:
                    if text_after_frame:
                        return True
                    seen += 1
                elif p.type == "text" and seen:
                    text_after_frame = True
        return False
