"""The scored outcome of one request for one sample."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from lmmprobe.schema.benchmark import ROW_BENCHMARK, ROW_METRIC
from lmmprobe.schema.judgement import Judgement

Stage = Literal["mark", "text", "fuzzy", "likelihood", "match", "unparsed", "truncated", "error"]
"""Which step decided the prediction.

mark/text/fuzzy: the extraction pipeline's stages for generated choice answers; likelihood:
highest-scoring candidate; match: open-ended comparison; unparsed: no answer could be read
(scored incorrect); truncated: the output stopped before an answer (inside its thinking, or at
the token limit), never read for a mark and scored incorrect; error: the request failed (not
scored).
"""

FORMAT_HIT_STAGES: frozenset[str] = frozenset({"mark", "text", "likelihood"})


class Score(BaseModel):
    """One (model, sample, repeat) row of a run's results."""

    model: str = Field(description="Model spec as given by the user.")
    sample_id: str = Field(description="Sample identifier.")
    repeat: int = Field(description="Repeat index.")
    key: str = Field(description="Cache key of the request whose response was scored.")
    stage: Stage = Field(description="Which step decided the prediction.")
    prediction: int | None = Field(default=None, description="Predicted original choice index.")
    prediction_text: str | None = Field(default=None, description="Predicted option or raw text.")
    correct: bool | None = Field(
        default=None,
        description="None when the request failed, or for answers judged only as a corpus "
        "(captions).",
    )
    format_hit: bool = Field(default=False, description="Answer mapped by mark/text/likelihood.")
    gold: int | list[str] = Field(description="The sample's gold answer.")
    gold_text: str = Field(description="Text of the gold option (first reference if open-ended).")
    abstain_offered: bool = Field(default=False, description="An 'unknown' option was offered.")
    abstained: bool = Field(default=False, description="The prediction was the 'unknown' option.")
    error_type: str | None = Field(default=None, description="Error type when the request failed.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="The sample's metadata.")
    formulation: str | None = Field(
        default=None,
        description="The sample's formulation (single_choice, kie, ...); None in rows stored "
        "before lmmprobe recorded it.",
    )
    options: list[str] | None = Field(
        default=None,
        description="Option texts in the order shown, for choice questions: with `marks` and "
        "`order`, what lets an exported answer be read again by another matcher. None for "
        "open-ended questions and for rows stored before lmmprobe recorded them.",
    )
    marks: list[str] | None = Field(
        default=None, description="Option marks in display order, e.g. ['A', 'B', 'C']."
    )
    order: list[int] | None = Field(
        default=None, description="order[i] is the original choice index shown at position i."
    )
    # The scored response's usage (`Response.usage`): what the token and cost metrics read.
    # A store keeps it once, with the response; its score rows read it from there.
    prompt_tokens: int | None = Field(
        default=None, description="Prompt tokens of the scored response, when reported."
    )
    completion_tokens: int | None = Field(
        default=None,
        description="Tokens the scored response generated (thinking included), when reported.",
    )
    reasoning_tokens: int | None = Field(
        default=None,
        description="Of the completion tokens, those spent thinking, where the backend reports "
        "them.",
    )

    judgements: list[Judgement] = Field(
        default_factory=list,
        # Left out of every dump while empty, so rows no judge touched serialize as before.
        exclude_if=lambda v: not v,
        description="Verdicts of the judges (and rules) that read this answer, where a judge "
        "protocol applies; empty otherwise.",
    )

    @property
    def benchmark_name(self) -> str | None:
        """The benchmark the row's sample was loaded from (`Sample.benchmark`), or None."""
        name = self.metadata.get(ROW_BENCHMARK)
        return name if isinstance(name, str) else None

    @property
    def official_metric(self) -> str | None:
        """The run metric giving the official score of the row's benchmark, or None.

        A recorded row keeps its sample's `BenchmarkTag` as metadata keys
        (`BenchmarkTag.row_metadata`), which rows stored before the typed tag hold too.
        """
        metric = self.metadata.get(ROW_METRIC)
        return metric if isinstance(metric, str) else None
