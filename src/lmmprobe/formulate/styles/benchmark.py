"""A benchmark's official wording: the template its definition cites, filled for each request.

Samples loaded by name (``--data mmbench``) carry their benchmark's prompt in metadata:
``prompt_template`` (a ``str.format`` template with ``{question}``, ``{options}`` and
``{context}``), ``option_format`` (one option line, with ``{mark}`` and ``{text}``),
``option_sep`` (what joins the option lines) and ``context_format`` (how a non-empty context
fills ``{context}``). The options are the ones this request shows, in the order it shows them
(shuffled or rotated repeats included) with the run's marks; an open-ended sample fills
``{options}`` with ``""``. A run's own ``--instruction`` is added as a last line.

Under ``auto`` (the default) and ``benchmark``, `whole_prompt` words the whole user message,
context included, for choice and open-ended samples alike. A sample without a template is
worded as ReForm-Eval's style words it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lmmprobe.formulate.styles import PROMPT_STYLES, ChoicePrompt
from lmmprobe.schema import Sample

NAME = "benchmark"
FALLBACK = "reform"
DEFAULT_OPTION_FORMAT = "{mark}. {text}"
DEFAULT_OPTION_SEP = "\n"
DEFAULT_CONTEXT_FORMAT = "{context}\n"


def _text(metadata: Mapping[str, Any], key: str, default: str) -> str:
    value = metadata.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"metadata.{key} must be a string, got {type(value).__name__}")
    return value


def render_prompt(
    metadata: Mapping[str, Any],
    question: str,
    options: Sequence[str],
    marks: Sequence[str],
    context: str | None,
    instruction: str | None = None,
) -> str:
    """Fill a sample's official template.

    Args:
        metadata: The sample's metadata, holding ``prompt_template`` and optionally
            ``option_format``, ``option_sep`` and ``context_format``.
        question: The question text.
        options: The option texts in display order (empty for an open-ended question).
        marks: Their marks.
        context: The sample's context (a hint), or None.
        instruction: The run's own instruction, added as a last line when given.

    Raises:
        ValueError: The template is missing, or names a placeholder other than ``question``,
            ``options`` and ``context`` (the message says which).

    """
    template = metadata.get("prompt_template")
    if not isinstance(template, str):
        raise ValueError("the benchmark prompt style needs metadata.prompt_template (a string)")
    option_format = _text(metadata, "option_format", DEFAULT_OPTION_FORMAT)
    lines = [option_format.format(mark=m, text=o) for m, o in zip(marks, options, strict=True)]
    shown = _text(metadata, "option_sep", DEFAULT_OPTION_SEP).join(lines)
    filled = (
        _text(metadata, "context_format", DEFAULT_CONTEXT_FORMAT).format(context=context)
        if context
        else ""
    )
    try:
        text = template.format(question=question, options=shown, context=filled)
    except (KeyError, IndexError) as exc:
        raise ValueError(
            f"metadata.prompt_template {template!r}: unknown placeholder {exc}; "
            "use {question}, {options} and {context}"
        ) from exc
    return f"{text}\n{instruction}" if instruction else text


def worded_by_benchmark(style: str, sample: Sample) -> bool:
    """Whether a run with prompt style `style` asks `sample` with its benchmark's template."""
    if not isinstance(sample.metadata.get("prompt_template"), str):
        return False
    return style == NAME or (style == "auto" and sample.metadata.get("prompt_style") == NAME)


def whole_prompt(
    style: str,
    sample: Sample,
    options: Sequence[str] | None,
    marks: Sequence[str] | None,
    instruction: str | None,
) -> list[str] | None:
    """The whole user message (context included) when the benchmark's template words it.

    Args:
        style: The run's prompt style name.
        sample: The sample asked.
        options: The options shown, in display order (None for an open-ended question).
        marks: Their marks.
        instruction: The run's own instruction (None: the template's alone).

    Returns:
        The message as one line list, or None when the sample is not worded by its benchmark
        (the run chose another style, or the sample carries no template).

    """
    if not worded_by_benchmark(style, sample):
        return None
    text = render_prompt(
        sample.metadata, sample.question, options or (), marks or (), sample.context, instruction
    )
    return [text]


@PROMPT_STYLES.register(
    NAME, summary="the benchmark's official template (samples loaded by name), else reform"
)
def benchmark_style(prompt: ChoicePrompt) -> list[str]:
    """The sample's official template with the shown options; reform for other samples.

    Called as a choice style, the context is left out of ``{context}``: the formulator puts it
    before these lines (`whole_prompt` words the context itself).
    """
    if not isinstance(prompt.sample.metadata.get("prompt_template"), str):
        return PROMPT_STYLES.get(FALLBACK)(prompt)
    text = render_prompt(
        prompt.sample.metadata,
        prompt.question,
        prompt.options,
        prompt.marks,
        None,
        prompt.instruction,
    )
    return [text]
