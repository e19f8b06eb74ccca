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

import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BENCHMARK_STYLE",
    "CONTEXT_FIELDS",
    "MAX_PLACEHOLDER_USES",
    "MAX_TAG_CHARS",
    "MAX_TEMPLATE_CHARS",
    "OPTION_FIELDS",
    "REFERENCE_METRICS",
    "ROW_BENCHMARK",
    "ROW_METRIC",
    "ROW_SPLIT",
    "TEMPLATE_FIELDS",
    "BenchmarkTag",
    "PromptTemplate",
    "check_prompt_fields",
    "lift_legacy",
    "placeholder_uses",
    "tag_problem",
    "template_uses",
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

REFERENCE_METRICS = frozenset(
    {
        "vqa_accuracy",
        "vqa_accuracy_evalai",
        "anls",
        "relaxed_accuracy",
        "gqa_exact_match",
        "ocrbench_score",
        "coco_cider",
    }
)
"""The official run metrics that score an answer against reference texts
(`lmmprobe.metrics.builtin.benchmark_open`): a sample tagged with one must be open-ended, with
reference texts for its answer. Checked when the sample is read, before any model is asked."""
MAX_TAG_CHARS = 200
"""The longest benchmark name, split or metric a tag may hold (registry names are a few words)."""
_SHOWN_TAG = 60
"""The characters of a tag's value an error shows."""

TEMPLATE_FIELDS = ("question", "options", "context")
"""The placeholders of a prompt template (`PromptTemplate.template`)."""
OPTION_FIELDS = ("mark", "text")
"""The placeholders of one option line (`PromptTemplate.option_format`)."""
CONTEXT_FIELDS = ("context",)
"""The placeholder of a context line (`PromptTemplate.context_format`)."""
MAX_PLACEHOLDER_USES = 8
"""The most times a template may use one placeholder. A prompt repeats a value each time it is
used, and the values are outside text (a data file's question, a model's answer): the bound
keeps a prompt within a few times its values' length. Judge templates keep the same rule."""
MAX_TEMPLATE_CHARS = 65_536
"""The longest template a data row may give (each of ``prompt_template``, ``option_format``,
``option_sep``, ``context_format``): official prompts are a few hundred characters."""

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


_SHOWN_NAME = 60
"""The characters of an unknown placeholder's name an error shows."""


def placeholder_uses(text: str, fields: tuple[str, ...]) -> dict[str, int]:
    """How often `text` (a ``str.format`` template) uses each of its placeholders.

    The one rule for templates from outside (a data row's prompt, a judge prompt of one's
    own): parsed with `string.Formatter.parse`, never filled to find out. Only bare fields of
    `fields` are allowed: no attribute or index access (``{question.__class__}``,
    ``{question[0]}``), no format spec (``{question:>600000000}`` would pad a prompt to 600
    MB), no conversion, no positional field.

    Raises:
        ValueError: The template is malformed or a placeholder breaks the rule (the message
            says which, without naming where the template came from).

    """
    used: dict[str, int] = {}
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"not a valid template: {exc} (write {{{{ for a brace)") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in fields:
            # Shortened: the name is outside text, as long as the template.
            shown = name if len(name) <= _SHOWN_NAME else name[:_SHOWN_NAME] + "..."
            raise ValueError(
                f"unknown placeholder {{{shown}}}; the placeholders are "
                + ", ".join(f"{{{f}}}" for f in fields)
            )
        if spec or conversion:
            raise ValueError(f"placeholder {{{name}}} takes no format spec or conversion")
        used[name] = used.get(name, 0) + 1
    return used


@lru_cache(maxsize=256)
def _data_template_uses(text: str, fields: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    # Cached: a million rows of one file usually share one template, parsed once.
    used = placeholder_uses(text, fields)
    for name, count in used.items():
        if count > MAX_PLACEHOLDER_USES:
            raise ValueError(
                f"placeholder {{{name}}} is used {count:,} times; a template may use each "
                f"placeholder at most {MAX_PLACEHOLDER_USES} times"
            )
    return tuple(used.items())


def template_uses(text: str, fields: tuple[str, ...]) -> dict[str, int]:
    """`placeholder_uses` of a data row's template, also held to its length and repeat bounds.

    Raises:
        ValueError: The template is longer than `MAX_TEMPLATE_CHARS`, breaks the placeholder
            rule, or uses a placeholder more than `MAX_PLACEHOLDER_USES` times.

    """
    if len(text) > MAX_TEMPLATE_CHARS:
        raise ValueError(
            f"a template of {len(text):,} characters, more than the {MAX_TEMPLATE_CHARS:,} a "
            "prompt template may hold"
        )
    return dict(_data_template_uses(text, fields))


# option_sep is joined, never filled: held to the length bound alone (None).
_PROMPT_PARTS: tuple[tuple[str, str, tuple[str, ...] | None], ...] = (
    ("template", "prompt_template", TEMPLATE_FIELDS),
    ("option_format", "option_format", OPTION_FIELDS),
    ("option_sep", "option_sep", None),
    ("context_format", "context_format", CONTEXT_FIELDS),
)


def check_prompt_fields(prompt: Mapping[str, Any], *, legacy: bool) -> None:
    """Check a data row's prompt (`PromptTemplate` fields) before anything fills it.

    Args:
        prompt: The prompt's fields as the row gives them.
        legacy: They came from ``metadata`` (``prompt_template``, ``option_format``...), so
            the error names those keys; else ``prompt.template``, ``prompt.option_format``...

    Raises:
        ValueError: ``FIELD: reason`` for the first part that breaks `template_uses`' rule.

    """
    for key, legacy_key, fields in _PROMPT_PARTS:
        value = prompt.get(key)
        if not isinstance(value, str):
            continue  # not text: the field's own validation says so
        try:
            if fields is not None:
                template_uses(value, fields)
            elif len(value) > MAX_TEMPLATE_CHARS:
                raise ValueError(
                    f"{len(value):,} characters, more than the {MAX_TEMPLATE_CHARS:,} it may hold"
                )
        except ValueError as exc:
            where = f"metadata.{legacy_key}" if legacy else f"prompt.{key}"
            raise ValueError(f"{where}: {exc}") from None


def _shown(value: str) -> str:
    return repr(value if len(value) <= _SHOWN_TAG else value[:_SHOWN_TAG] + "...")


def tag_problem(tag: Mapping[str, Any], answer: Any, formulation: Any) -> tuple[str, str] | None:
    """What is wrong with a sample's benchmark tag, as ``(key, reason)``, or None.

    A tag string longer than `MAX_TAG_CHARS` is refused; so is a metric of `REFERENCE_METRICS`
    on a sample whose answer is a choice index (it could only fail at scoring, after every
    request was paid for).

    Args:
        tag: The tag's fields (``name``, ``split``, ``metric``).
        answer: The sample's answer as given.
        formulation: The sample's formulation as given (None: not given).

    """
    for key in ("name", "split", "metric"):
        value = tag.get(key)
        if isinstance(value, str) and len(value) > MAX_TAG_CHARS:
            return key, (
                f"{len(value):,} characters ({_shown(value)}), more than the {MAX_TAG_CHARS} a "
                "benchmark tag may hold"
            )
    metric = tag.get("metric")
    choice = (isinstance(answer, int) and not isinstance(answer, bool)) or formulation in (
        "single_choice",
        "true_false",
    )
    if metric in REFERENCE_METRICS and choice:
        return "metric", (
            f"{metric!r} scores open-ended answers against reference texts, but this sample "
            f"is a choice question (answer {_shown(str(answer))}); give reference text(s) as "
            "its answer or tag it with a choice metric"
        )
    return None


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

    Raises:
        ValueError: The template breaks the data template rule (`check_prompt_fields`), or
            the tag its answer cannot be scored by (`tag_problem`).

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
    check_prompt_fields(prompt, legacy=True)
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
        problem = tag_problem(out["benchmark"], data.get("answer"), data.get("formulation"))
        if problem is not None:  # named by the metadata key the row wrote
            key = ROW_BENCHMARK if problem[0] == "name" else problem[0]
            raise ValueError(f"metadata.{key}: {problem[1]}")
        del rest["prompt_style"]
    out["metadata"] = rest
    return out
