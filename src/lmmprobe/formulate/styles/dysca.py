"""Dysca's wording: ``Question: ...``, one ``(A) option`` per line, its hint, ``Your answer is:``.

Origin: Dysca (Zhang et al., 2024), the multiple-choice template in REFERENCE.md.
"""

from __future__ import annotations

from lmmprobe.formulate.pools import DYSCA_CHOICE_HINT
from lmmprobe.formulate.styles import PROMPT_STYLES, ChoicePrompt


@PROMPT_STYLES.register(
    "dysca", summary="Dysca: 'Question: ...', one option per line, its hint, 'Your answer is:'"
)
def dysca_style(prompt: ChoicePrompt) -> list[str]:
    """Dysca's question line, one option per line, and its hint (unless the run gives one)."""
    lines = [f"Question: {prompt.question}"]
    lines += [f"({m}) {o}" for m, o in zip(prompt.marks, prompt.options, strict=True)]
    instruction = DYSCA_CHOICE_HINT if prompt.instruction is None else prompt.instruction
    if instruction:
        lines.append(instruction)
    return lines
