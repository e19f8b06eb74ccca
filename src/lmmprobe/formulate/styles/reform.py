"""ReForm-Eval's wording: ``question`` / ``Options: (A) x; (B) y.`` / ``instruction``."""

from __future__ import annotations

from functools import lru_cache

from lmmprobe.formulate.options import render_options
from lmmprobe.formulate.styles import PROMPT_STYLES, ChoicePrompt


@lru_cache(maxsize=64)
def _template(marks: tuple[str, ...]) -> str:
    # Marks are letters or digits, so the template holds no other braces; option texts fill
    # it as arguments of str.format, where braces are plain text. Equal to render_options.
    return render_options(["{}"] * len(marks), list(marks))


@PROMPT_STYLES.register(
    "reform", summary="ReForm-Eval: question, 'Options: (A) x; (B) y.', instruction"
)
def reform_style(prompt: ChoicePrompt) -> list[str]:
    """The question, the options on one line, and the instruction (the pool's by default)."""
    instruction = prompt.instruction
    if instruction is None:
        instruction = prompt.pool_instruction
    lines = [prompt.question, _template(tuple(prompt.marks)).format(*prompt.options)]
    if instruction:
        lines.append(instruction)
    return lines
