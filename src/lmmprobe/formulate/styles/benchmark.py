"""A benchmark's official wording: the template its definition cites, filled for each request.

Samples loaded by name (``--data mmbench``) carry their benchmark's prompt as `Sample.prompt`
(a `PromptTemplate`): a ``str.format`` template with ``{question}``, ``{options}`` and
``{context}``, how one option line is written (``{mark}`` and ``{text}``), what joins the
option lines, and how a non-empty context fills ``{context}``. The options are the ones this
request shows, in the order it shows them (shuffled or rotated repeats included) with the
run's marks; an open-ended sample fills ``{options}`` with ``""``. A run's own
``--instruction`` is added as a last line.

Under ``benchmark``, and under ``auto`` (the default) for samples loaded by name or whose
``metadata.prompt_style`` is ``benchmark``, `whole_prompt` words the whole user message,
context included, for choice and open-ended samples alike. A sample without a prompt is worded
as ReForm-Eval's style words it.
"""

from __future__ import annotations

from collections.abc import Sequence

from lmmprobe.formulate.styles import PROMPT_STYLES, ChoicePrompt
from lmmprobe.schema import PromptTemplate, Sample
from lmmprobe.schema.benchmark import BENCHMARK_STYLE

NAME = BENCHMARK_STYLE
FALLBACK = "reform"


def render_prompt(
    prompt: PromptTemplate,
    question: str,
    options: Sequence[str],
    marks: Sequence[str],
    context: str | None,
    instruction: str | None = None,
) -> str:
    """Fill a sample's official template.

    Args:
        prompt: The sample's prompt (`Sample.prompt`).
        question: The question text.
        options: The option texts in display order (empty for an open-ended question).
        marks: Their marks.
        context: The sample's context (a hint), or None.
        instruction: The run's own instruction, added as a last line when given.

    Raises:
        ValueError: The template names a placeholder other than ``question``, ``options``
            and ``context`` (the message says which).

    """
    lines = [
        prompt.option_format.format(mark=m, text=o) for m, o in zip(marks, options, strict=True)
    ]
    shown = prompt.option_sep.join(lines)
    filled = prompt.context_format.format(context=context) if context else ""
    try:
        text = prompt.template.format(question=question, options=shown, context=filled)
    except (KeyError, IndexError) as exc:
        raise ValueError(
            f"prompt template {prompt.template!r}: unknown placeholder {exc}; "
            "use {question}, {options} and {context}"
        ) from exc
    return f"{text}\n{instruction}" if instruction else text


def worded_by_benchmark(style: str, sample: Sample) -> bool:
    """Whether a run with prompt style `style` asks `sample` with its benchmark's template."""
    if sample.prompt is None:
        return False
    if style == NAME:
        return True
    # Under auto: samples loaded by name, and one's own that ask for it.
    return style == "auto" and (
        sample.benchmark is not None or sample.metadata.get("prompt_style") == NAME
    )


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
    if sample.prompt is None or not worded_by_benchmark(style, sample):
        return None
    text = render_prompt(
        sample.prompt, sample.question, options or (), marks or (), sample.context, instruction
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
    if prompt.sample.prompt is None:
        return PROMPT_STYLES.get(FALLBACK)(prompt)
    text = render_prompt(
        prompt.sample.prompt,
        prompt.question,
        prompt.options,
        prompt.marks,
        None,
        prompt.instruction,
    )
    return [text]
