"""APEx's data model: an experiment, its results and findings, and the report of a campaign.

Origin: APEx (Conti et al., "Automatic benchmarking of large multimodal models via iterative
experiment programming"). An experiment is a VQA question with at least two answers; each answer
carries the select call that makes a starting image and the transform calls applied to it, so
the ground truth of an image is the answer whose tools made it. The report grows as the loop
runs: experiments with their results and findings, open questions, a sufficiency decision with
its reason, and conclusions.

These pydantic models are also the orchestrator's contract: `Experiment`, `Discussion`,
`Sufficiency` and `Conclusions` are what it is asked to produce, and their JSON schemas are what
an LLM orchestrator is given as structured-output format.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lmmprobe.tools.compose import ToolCall

REPORT_FORMAT = "lmmprobe-apex/1"
"""Version tag of report.json."""

Difficulty = Literal["easy", "medium", "hard"]
Verdict = Literal["above_chance", "at_chance", "below_chance", "undetermined"]
Status = Literal[
    "running",
    "sufficient",
    "max_experiments",
    "plan_exhausted",
    "call_cap",
    "no_design",
    "orchestrator_error",
]

MAX_ANSWERS = 8
MAX_TRANSFORMS = 6


class _Strict(BaseModel):
    # Orchestrator output is untrusted: unknown fields are an error to heal, not silently dropped.
    model_config = ConfigDict(extra="forbid")


class Answer(_Strict):
    """One answer of an experiment and the tools that make images for which it is correct."""

    text: str = Field(
        min_length=1, max_length=80, description="The answer option as shown to the model."
    )
    select: ToolCall = Field(
        description="The select tool call making the starting image "
        "(TextToImageGeneration or TextToImageRetrieval)."
    )
    transforms: list[ToolCall] = Field(
        default_factory=list,
        max_length=MAX_TRANSFORMS,
        description="Transform tool calls applied in order (may be empty, or [Identity]).",
    )


class Experiment(_Strict):
    """A VQA experiment: one question, at least two answers, each with its image recipe."""

    question: str = Field(
        min_length=3, max_length=300, description="The question asked about every image."
    )
    answers: list[Answer] = Field(
        min_length=2,
        max_length=MAX_ANSWERS,
        description="At least two answers with distinct texts; images are balanced across them.",
    )
    difficulty: Difficulty = Field(description="easy, medium or hard (plan easy → hard).")
    rationale: str = Field(
        default="", max_length=1000, description="Why this experiment, given the report so far."
    )

    @field_validator("question", "rationale")
    @classmethod
    def _collapse(cls, value: str) -> str:
        return " ".join(value.split())

    @model_validator(mode="after")
    def _distinct_answers(self) -> Experiment:
        seen: set[str] = set()
        for a in self.answers:
            key = " ".join(a.text.lower().split())
            if key in seen:
                raise ValueError(f"answers: {a.text!r} appears twice; answer texts must differ")
            seen.add(key)
        return self


class Interval(BaseModel):
    """A metric with its 95% cluster-bootstrap confidence interval."""

    value: float | None = Field(description="Point estimate; None when undefined.")
    low: float | None = Field(default=None, description="2.5th percentile.")
    high: float | None = Field(default=None, description="97.5th percentile.")
    n: int = Field(default=0, description="Rows the metric is computed over.")


class ModelResult(BaseModel):
    """One model's results on one experiment."""

    model: str = Field(description="Model spec.")
    method: Literal["likelihood", "generate"] = Field(
        description="likelihood: answers ranked by mean token log-probability; generate: "
        "free generation with the answer extracted from the text."
    )
    accuracy: Interval = Field(description="Correct / answered images.")
    balanced_accuracy: Interval = Field(description="Mean of per-answer accuracies.")
    per_answer: dict[str, Interval] = Field(description="Accuracy on the images of each answer.")
    abstention_rate: Interval | None = Field(
        default=None, description="Share of 'Unknown' answers, when that option was offered."
    )
    error_rate: Interval = Field(description="Failed requests / all requests.")
    chance: float = Field(description="Accuracy of a uniform guess over the options shown.")
    verdict: Verdict = Field(description="Where the accuracy interval lies relative to chance.")


class Results(BaseModel):
    """Every model's results on one experiment."""

    models: list[ModelResult] = Field(default_factory=list)
    n_images: int = Field(default=0, description="Images in the dataset.")
    chance: float = Field(default=0.0, description="Chance accuracy.")


class DatasetInfo(BaseModel):
    """How an experiment's dataset was made (enough to recognize an identical one)."""

    images_per_answer: int
    seed: int
    fingerprint: str = Field(description="Hash of the samples (questions, options, image hashes).")
    image_hashes: list[str] = Field(
        default_factory=list, description="Content hash of each image, in sample order."
    )
    answers: list[str] = Field(default_factory=list, description="Answer texts, in order.")
    unknown_option: bool = Field(default=False, description="An 'Unknown' option was offered.")
    cached: int = Field(default=0, description="Images read from the content cache.")
    made: int = Field(default=0, description="Images composed for this campaign.")
    notes: list[str] = Field(
        default_factory=list,
        description="Distinct notes from the tools (fallbacks, near class matches).",
    )
    thumbnails: dict[str, list[str]] = Field(
        default_factory=dict, description="Thumbnail files per answer, relative to the report."
    )


class Finding(_Strict):
    """One thing learned from an experiment."""

    statement: str = Field(min_length=1, max_length=600, description="The finding, one sentence.")
    model: str | None = Field(default=None, description="The model it is about, if one.")


class Discussion(_Strict):
    """The orchestrator's reading of an experiment's results."""

    findings: list[Finding] = Field(default_factory=list, max_length=20)
    open_questions: list[str] = Field(
        default_factory=list, max_length=10, description="What is still unknown."
    )


class Sufficiency(_Strict):
    """Whether the report answers the query well enough to stop, and why."""

    sufficient: bool
    reason: str = Field(min_length=1, max_length=1000)


class Conclusions(_Strict):
    """The campaign's answer to the query."""

    conclusions: list[str] = Field(min_length=1, max_length=20)


class Initialization(_Strict):
    """The report's opening: what must be found out to answer the query."""

    open_questions: list[str] = Field(default_factory=list, max_length=10)


class Rejection(BaseModel):
    """An orchestrator output that failed validation and was fed back."""

    step: str = Field(description="Which step produced it (design, heal).")
    attempt: int = Field(description="1 for a design, 2-4 for its healing retries.")
    error: str = Field(description="The validation error fed back.")
    output: str = Field(description="What the orchestrator wrote (truncated).")


class ExperimentRecord(BaseModel):
    """A run experiment with its dataset, results and findings."""

    index: int = Field(description="1-based position in the campaign.")
    experiment: Experiment
    dataset: DatasetInfo
    results: Results
    findings: list[Finding] = Field(default_factory=list)
    attempts: int = Field(default=1, description="Design attempts this experiment took.")
    run_id: str | None = Field(default=None, description="Run id in the store.")


class TranscriptEntry(BaseModel):
    """One message exchanged with the orchestrator."""

    step: str = Field(description="init, design, heal, discuss, judge or conclude.")
    role: Literal["system", "user", "assistant", "planner"] = Field(
        description="Chat roles for an LLM; 'planner' for the rules orchestrator's decisions."
    )
    content: str
    call: int = Field(description="Orchestrator call number this message belongs to.")


class Settings(BaseModel):
    """Campaign settings; with the orchestrator's experiments they fix every dataset."""

    seed: int = 0
    images_per_answer: int = Field(default=20, ge=1, le=1000)
    max_experiments: int = Field(default=5, ge=1, le=50)
    max_orchestrator_calls: int = Field(default=40, ge=1, le=1000)
    unknown_option: bool = False
    image_size: int = Field(default=256, ge=16, le=2048)
    retrieval: str | None = None
    bootstrap: int = Field(default=1000, ge=0)
    stop_when_sufficient: bool = True


class Report(BaseModel):
    """Everything a campaign produced: report.json holds this."""

    format: str = REPORT_FORMAT
    query: str
    models: list[str]
    orchestrator: str
    settings: Settings = Field(default_factory=Settings)
    experiments: list[ExperimentRecord] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    sufficiency: Sufficiency | None = None
    conclusions: list[str] = Field(default_factory=list)
    rejections: list[Rejection] = Field(default_factory=list)
    transcript: list[TranscriptEntry] = Field(default_factory=list)
    orchestrator_calls: int = 0
    status: Status = "running"
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Manifest: versions, timings, plan notes."
    )

    def state_for_orchestrator(self) -> dict[str, Any]:
        """The report as an orchestrator sees it: everything but the transcript."""
        data = self.model_dump(mode="json", exclude={"transcript", "metadata"})
        data["rejections"] = data["rejections"][-10:]  # the latest are what healing needs
        for rec in data["experiments"]:
            rec["dataset"].pop("image_hashes", None)
            rec["dataset"].pop("thumbnails", None)
        return data

    def calls_text(self) -> str:
        """The orchestrator's steps in words: ``17 orchestrator calls``, or ``8 steps replayed``.

        A replay (``replay:REPORT.json``) asks no orchestrator: its steps play back a saved
        campaign, and calling them orchestrator calls read as if one had been asked.
        """
        n = self.orchestrator_calls
        if self.orchestrator.startswith("replay:"):
            return f"{n} step{'' if n == 1 else 's'} replayed"
        return f"{n} orchestrator call{'' if n == 1 else 's'}"
