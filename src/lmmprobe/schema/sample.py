"""The one sample schema every source produces and every formulation consumes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lmmprobe.schema.benchmark import (
    CONTEXT_FIELDS,
    OPTION_FIELDS,
    TEMPLATE_FIELDS,
    BenchmarkTag,
    PromptTemplate,
    check_prompt_fields,
    lift_legacy,
    tag_problem,
    template_uses,
)
from lmmprobe.schema.frame_texts import FRAME_TEXTS, frame_texts
from lmmprobe.schema.image import ImageRef
from lmmprobe.schema.text import lone_surrogate, safe_data
from lmmprobe.schema.video import VideoRef

Formulation = Literal[
    "single_choice", "true_false", "open_ended", "caption", "ocr", "kie", "free_form"
]
"""How a sample is asked: pick one option, answer yes/no, or answer in free text: a short
answer (open_ended, normalized exact match), a caption (corpus BLEU/ROUGE-L/CIDEr/METEOR), text
read from the image (ocr), key information extracted from it (kie), or a free-form description
(free_form, Dysca's third question type: scored by sentence-embedding similarity to the
reference, never right or wrong)."""

CHOICE_FORMULATIONS: frozenset[str] = frozenset({"single_choice", "true_false"})
DEFAULT_TRUE_FALSE_CHOICES: tuple[str, str] = ("yes", "no")


MAX_OPTIONS = 256
"""The most options one question may have. Benchmarks have at most tens; letter marks stop at
26 anyway, but number marks do not, and ``--circular`` asks a question once per option with
every option shown: N options are N prompts of N options each."""
MAX_TURNS = 256
"""The most earlier dialogue turns (`Sample.history`) one sample may carry. Visual dialogue
benchmarks (VisDial) have tens of rounds; every turn is sent with the question."""
MAX_PROMPT_CHARS = 1 << 21
"""The most characters one request's text may hold (2,097,152: about half a million tokens,
past any model's context): question, context, options and history together, as the sample's
template words them (each use of a placeholder counted). A longer sample is refused at load,
as images past their bounds are: otherwise every repeat and rotation (``--circular``) of it is
planned, sent and stored whole."""


_MEDIA = frozenset({"images", "video"})
"""Fields naming media files, whose undecodable bytes name a real file: left as given."""


YES_NO_READING = "yes_no_reading"
"""Sample metadata key: ``True`` on an open-ended sample whose gold is ``yes`` or ``no`` (HEMM's
IRFL, Winoground, Hateful Memes, NY Cartoon). Its ``accuracy`` then reads what the answer says
(lmmprobe's yes/no reading, `lmmprobe.parse.open_ended.read_yes_no`: "Yes, it is." is yes)
instead of comparing the whole text with the gold (`lmmprobe.run.scoring`); the row keeps the
answer's text, so a metric of the text (HEMM's BARTScore) reads the model's own sentence. Kept
in each row's metadata, so an exported row is read again the same way."""


PROMPT_ONLY_METADATA = frozenset({"reform_wordings", FRAME_TEXTS})
"""Sample metadata that words requests and is not copied into every scored row: ReForm-Eval's
per-duplicate wording lists (`lmmprobe.formulate.duplicates`) and the timed texts shown between
a video's frames (`lmmprobe.schema.frame_texts`), recorded once with the sample."""


class Turn(BaseModel):
    """One earlier round of a dialogue, given to the model before the question."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"] = Field(description="Who spoke.")
    content: str = Field(description="What was said, as plain text.")


class Sample(BaseModel):
    """A question about one or more images, with its gold answer.

    For `single_choice` and `true_false` the answer is the index of the correct entry in
    `choices`; for `open_ended` it is one or more reference texts.
    """

    id: str = Field(min_length=1, description="Identifier, unique within its source.")
    images: list[ImageRef] = Field(
        default_factory=list, description="Images the question is about."
    )
    question: str = Field(min_length=1, description="The question, without options or instruction.")
    choices: list[str] | None = Field(
        default=None, description="Option texts in their original order; None for open-ended."
    )
    answer: int | list[str] = Field(
        description="Gold answer: index into `choices`, or reference texts for open-ended."
    )
    formulation: Formulation = Field(
        default="single_choice",
        description="single_choice, true_false, open_ended, caption, ocr or kie.",
    )
    context: str | None = Field(default=None, description="Text shown before the question.")
    history: list[Turn] = Field(default_factory=list, description="Earlier dialogue rounds.")
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Free annotations: task, subtask, style, scenario, question_type...",
    )
    # Left out of every dump when None, so a sample without them serializes (and so hashes
    # and is stored) exactly as before these fields existed.
    prompt: PromptTemplate | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The official wording the `benchmark` prompt style fills (a benchmark's "
        "cited template, or one of one's own); None: the run's prompt style words it.",
    )
    benchmark: BenchmarkTag | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The benchmark the sample was loaded from: name, split and official "
        "metric; None for other data.",
    )
    video: VideoRef | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="A video clip the question is about; once resolved, its sampled frames "
        "(shown to the model before `images`), their times and pixel hashes.",
    )

    @model_validator(mode="before")
    @classmethod
    def _lift_legacy(cls, data: Any) -> Any:
        # Samples written before the typed fields (JSONL, exports, stored rows) held the
        # benchmark's prompt and tag as metadata strings: read them into the fields.
        if isinstance(data, dict):
            _check_counts(data)
            # Text from a data file may hold a lone surrogate (JSON's "\\ud800"), which the
            # store, results and a request cannot encode: every string of every field is
            # repaired here, where every source's sample passes (`safe_data`). Not an id:
            # repaired, "x\\ud800" and "x\\udfff" would both be "x\\ufffd", two items made
            # one, so such a row is refused (its loader names its line). Image references are
            # left alone: a path's undecodable bytes name a real file.
            sample_id = data.get("id")
            lone = lone_surrogate(sample_id) if isinstance(sample_id, str) else None
            if lone is not None:
                raise ValueError(
                    f"id: holds a lone surrogate ({lone}), which no id may hold (ids differing "
                    "only there could not be told apart)"
                )
            data = {k: v if k in _MEDIA else safe_data(v) for k, v in data.items()}
            prompt = data.get("prompt")
            if isinstance(prompt, dict):  # a prompt a data row gives as it is
                check_prompt_fields(prompt, legacy=False)
            meta = data.get("metadata")
            # Checked here first: every sample of every source passes this way.
            if isinstance(meta, dict) and "prompt_template" in meta:
                return lift_legacy(data) or data
        return data

    @field_validator("answer", mode="before")
    @classmethod
    def _wrap_reference(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("answer must be a choice index or reference text(s), not a boolean")
        # Lax validation would read 1.0 as index 1: a float is a mistake (a number column
        # read as floats, say) the file's author should see, not guess about.
        if isinstance(value, float):
            raise ValueError(
                f"expected an integer choice index or reference text(s), got the float {value!r}"
            )
        if isinstance(value, str):
            return [value]
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Sample:
        if self.formulation == "true_false" and self.choices is None:
            self.choices = list(DEFAULT_TRUE_FALSE_CHOICES)
        if self.formulation in CHOICE_FORMULATIONS:
            if not self.choices or len(self.choices) < 2:
                raise ValueError(
                    f"choices: must hold at least 2 options for a {self.formulation} sample "
                    f"(got {len(self.choices or [])})"
                )
            if not isinstance(self.answer, int):
                raise ValueError(
                    f"answer: a {self.formulation} sample needs an integer choice index"
                )
            if not 0 <= self.answer < len(self.choices):
                raise ValueError(
                    f"answer: index {self.answer} is out of range for {len(self.choices)} choices"
                )
        else:
            if isinstance(self.answer, int):
                raise ValueError(
                    f"answer: a {self.formulation} sample needs reference text(s), not an index"
                )
            if not self.answer:
                raise ValueError(
                    f"answer: a {self.formulation} sample needs at least one reference text"
                )
        if FRAME_TEXTS in self.metadata:
            frame_texts(self.metadata)  # a bad value is the row's one line (metadata.frame_texts)
        if self.benchmark is not None:
            problem = tag_problem(dict(self.benchmark), self.answer, self.formulation)
            if problem is not None:
                raise ValueError(f"benchmark.{problem[0]}: {problem[1]}")
        chars = self.prompt_chars()
        if chars > MAX_PROMPT_CHARS:
            raise ValueError(
                f"its prompt is {chars:,} characters (question, context, options and history "
                f"as worded), more than the {MAX_PROMPT_CHARS:,} one request may hold"
            )
        return self

    def prompt_chars(self) -> int:
        """At most how many characters a request asking this sample holds.

        The run's own instruction and option marks aside; each use of a template's placeholder
        is counted.
        """
        options = self.choices if self.is_choice and self.choices else []
        history = sum(len(turn.content) for turn in self.history)
        context = len(self.context) if self.context else 0
        question = len(self.question)
        if self.prompt is None:
            return question + context + sum(len(o) + 2 for o in options) + history
        p = self.prompt
        try:
            uses = template_uses(p.template, TEMPLATE_FIELDS)
            line = template_uses(p.option_format, OPTION_FIELDS)
            ctx = template_uses(p.context_format, CONTEXT_FIELDS)
        except ValueError:
            return 0  # an official template, not held to the data rule (never a row's)
        shown = sum(
            len(p.option_format) + line.get("text", 0) * len(o) + line.get("mark", 0) * 4
            for o in options
        ) + len(p.option_sep) * max(len(options) - 1, 0)
        filled = len(p.context_format) + ctx.get("context", 0) * context if context else 0
        return (
            len(p.template)
            + uses.get("question", 0) * question
            + uses.get("options", 0) * shown
            + uses.get("context", 0) * filled
            + history
        )

    @property
    def row_metadata(self) -> dict[str, Any]:
        """The metadata a recorded row (`Score`) keeps: `metadata` and the benchmark tag's keys.

        Keys only the formulator reads (`PROMPT_ONLY_METADATA`) stay with the sample.

        The tag adds ``benchmark``, ``split`` and ``metric`` where the metadata lacks them, so
        breakdowns (``--by benchmark``), exports and the official metrics read them there.
        """
        meta = self.metadata
        if not PROMPT_ONLY_METADATA.isdisjoint(meta):
            meta = {k: v for k, v in meta.items() if k not in PROMPT_ONLY_METADATA}
        if self.benchmark is None:
            return meta
        meta = dict(meta)
        for key, value in self.benchmark.row_metadata().items():
            meta.setdefault(key, value)
        return meta

    @property
    def media(self) -> list[ImageRef]:
        """What the model is shown: the video's sampled frames in time order, then `images`.

        Raises:
            ValueError: The sample has a video whose frames were not sampled (`VideoRef.resolved`).

        """
        if self.video is None:
            return list(self.images)
        return [*self.video.frame_images(), *self.images]

    @property
    def is_choice(self) -> bool:
        """Whether the sample is answered by picking one of `choices`."""
        return self.formulation in CHOICE_FORMULATIONS

    @property
    def gold_text(self) -> str:
        """The correct option text, or the first reference for open-ended samples."""
        if isinstance(self.answer, int):
            assert self.choices is not None
            return self.choices[self.answer]
        return self.answer[0]


def _check_counts(data: dict[str, Any]) -> None:
    """Refuse more options or history turns than a sample may have, before either is read.

    Raises:
        ValueError: ``choices: ...`` or ``history: ...`` (counted before any entry is
            validated: a million turns would take gigabytes as models).

    """
    choices = data.get("choices")
    if isinstance(choices, list) and len(choices) > MAX_OPTIONS:
        raise ValueError(
            f"choices: {len(choices):,} options, more than the {MAX_OPTIONS:,} lmmprobe asks "
            "about in one question"
        )
    history = data.get("history")
    if isinstance(history, list) and len(history) > MAX_TURNS:
        raise ValueError(
            f"history: {len(history):,} turns, more than the {MAX_TURNS:,} one sample may "
            "carry before its question"
        )
