"""Prompt styles: how a choice question, its marked options and its instruction are worded.

A prompt style is a function registered in `PROMPT_STYLES` under the name
``FormulateConfig.prompt_style`` (``--prompt-style``) selects. It gets a `ChoicePrompt` (the
sample, its question, the options in display order with their marks, and the instruction) and
returns the lines of the user message after the sample's context. Styles apply to choice
questions whose options are shown (generation and mark log-probabilities); likelihood
inference and open-ended questions are asked as question plus instruction.

Built-in styles live one per file (`reform`, `dysca`, `auto`, `benchmark`); another package adds one
through the ``lmmprobe.prompt_styles`` entry-point group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from lmmprobe.registry import Registry
from lmmprobe.schema import Sample


@dataclass(frozen=True, slots=True)
class ChoicePrompt:
    """What a prompt style words, for one request.

    Attributes:
        sample: The sample asked (its metadata may choose the wording, as ``auto`` does).
        question: The question text.
        options: Option texts in display order.
        marks: Their marks, e.g. ``["A", "B", "C"]``.
        instruction: The run's own instruction (``FormulateConfig.instruction``), or None to
            let the style choose.
        pool_instruction: lmmprobe's (ReForm-Eval's) default instruction for this sample,
            repeat and mark style, with instruction pools applied.

    """

    sample: Sample
    question: str
    options: list[str]
    marks: list[str]
    instruction: str | None
    pool_instruction: str


class PromptStyle(Protocol):
    """Words a choice question: returns the user message's lines after the context."""

    def __call__(self, prompt: ChoicePrompt) -> list[str]:
        """The lines of the prompt (question, options, instruction), joined with newlines."""
        ...


PROMPT_STYLES: Registry[PromptStyle] = Registry(
    "prompt style",
    entry_point_group="lmmprobe.prompt_styles",
    # A built-in style is one module of this package, registering itself: nothing lists it.
    discover=("lmmprobe.formulate.styles",),
)
"""Prompt styles by name; ``lmmprobe list prompt-styles`` shows them."""

__all__ = ["PROMPT_STYLES", "ChoicePrompt", "PromptStyle"]
