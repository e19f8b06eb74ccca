"""What a sample carries from the benchmark it was loaded from: its official prompt and its tag.

A sample loaded by name (``--data mmbench``) carries `Sample.prompt` (the benchmark's official
wording, a `PromptTemplate`) and `Sample.benchmark` (a `BenchmarkTag`: name, split and the
run metric computing its official score). A sample of one's own JSONL may carry a prompt too.

Rows a run records keep the tag as three metadata keys (`BenchmarkTag.row_metadata`), so
``--by benchmark`` breakdowns, exports and the web app's filters read what they always read.

Samples written before these fields existed held all of it as metadata strings
(``benchmark``, ``metric``, ``split``, ``prompt_style``, ``prompt_template``,
``option_format``, ``option_sep``, ``context_format``); `lift_legacy` moves them into the
fields, so old JSONL, exports and stored rows formulate and score as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BENCHMARK_STYLE",
    "ROW_BENCHMARK",
    "ROW_METRIC",
    "ROW_SPLIT",
    "BenchmarkTag",
    "PromptTemplate",
    "lift_legacy",
]

BENCHMARK_STYLE = "benchmark"
"""The prompt style that words a sample with its `PromptTemplate` (``metadata.prompt_style``
names it in a sample of one's own that asks for it under ``auto``)."""

ROW_BENCHMARK = "benchmark"
"""The metadata key of a recorded row (`Score`) naming its sample's benchmark."""
ROW_SPLIT = "split"
"""The metadata key of a recorded row naming the split its sample was read from."""
ROW_METRIC = "metric"
"""The metadata key of a recorded row naming its benchmark's official run metric."""

# The metadata keys a benchmark sample used to carry, and where each now lives.
_PROMPT_KEYS = ("option_format", "option_sep", "context_format")
_TAG_KEYS = (ROW_BENCHMARK, ROW_METRIC, ROW_SPLIT)


@dataclass(frozen=True)
class PromptTemplate:
    r"""A benchmark's official prompt, cited.

    Attributes:
        template: A ``str.format`` template with the placeholders ``{question}``,
            ``{options}`` and ``{context}``, e.g. ``"{context}{question}\n{options}\nAnswer
            with the option's letter from the given choices directly."``.
        source: Where it comes from (repository, file and commit); ``""`` for a template of
            one's own data.
        option_format: One option line, with ``{mark}`` and ``{text}``.
        option_sep: What joins the option lines.
        context_format: How a non-empty context (a hint) fills ``{context}``; a sample without
            one gets ``""``.

    """

    template: str
    source: str = ""
    option_format: str = "{mark}. {text}"
    option_sep: str = "\n"
    context_format: str = "{context}\n"


class BenchmarkTag(BaseModel):
    """Which benchmark a sample was loaded from, and the run metric giving its official score."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1, description="The benchmark's registry name (``mmbench``).")
    split: str = Field(description="The split the sample was read from.")
    metric: str | None = Field(
        default=None,
        description="The run metric (``RUN_METRICS``) computing the official score; None: none.",
    )

    def row_metadata(self) -> dict[str, str]:
        """The tag as the metadata keys a recorded row keeps (``benchmark``, ``split``, ``metric``)."""
        keys = {ROW_BENCHMARK: self.name, ROW_SPLIT: self.split}
        if self.metric is not None:
            keys[ROW_METRIC] = self.metric
        return keys


def lift_legacy(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """Move the metadata strings of a sample written before the typed fields into them.

    A prompt template in metadata (``prompt_template`` with ``option_format``, ``option_sep``,
    ``context_format``) becomes ``prompt``. The full stamp the benchmark loader used to put on
    every sample (``benchmark``, ``split`` and ``prompt_style: benchmark`` beside the template)
    also becomes ``benchmark``, and ``prompt_style`` goes (the tag now says it); a sample of
    one's own keeps its ``prompt_style`` (what ``auto`` reads) and any other key.

    Args:
        data: The sample's input fields, as given to `Sample` validation.

    Returns:
        The fields with the legacy keys lifted, or None when there is nothing to lift.

    """
    meta = data.get("metadata")
    if not isinstance(meta, Mapping) or "prompt_template" not in meta or "prompt" in data:
        return None
    rest = dict(meta)
    template = rest.pop("prompt_template")
    prompt: dict[str, Any] = {"template": template}
    for key in _PROMPT_KEYS:
        if key in rest:
            prompt[key] = rest.pop(key)
    out = {**data, "prompt": prompt}
    stamped = (
        rest.get("prompt_style") == BENCHMARK_STYLE
        and isinstance(rest.get("benchmark"), str)
        and isinstance(rest.get("split"), str)
    )
    if stamped and data.get("benchmark") is None:
        tag = {key: rest.pop(key) for key in _TAG_KEYS if key in rest}
        out["benchmark"] = {
            "name": tag[ROW_BENCHMARK],
            "split": tag[ROW_SPLIT],
            "metric": tag.get(ROW_METRIC),
        }
        del rest["prompt_style"]
    out["metadata"] = rest
    return out
