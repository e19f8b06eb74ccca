"""Instruction pools and the in-context example turn (ReForm-Eval's prompt construction).

Each pool holds instructions that ask for the same thing in different words; asking a sample
several times with different instructions (and reshuffled options) exposes prompt instability.
The first entry of each pool is the default instruction. Wording is lmmprobe's own.
"""

from __future__ import annotations

CHOICE_POOL: tuple[str, ...] = (
    "Answer with the option's mark from the given choices directly, e.g. ({mark}).",
    "Pick the correct option and reply with its mark only, such as ({mark}).",
    "Select the best answer from the options above and respond with its mark, e.g. ({mark}).",
    "Which option is right? Give just its mark, for example ({mark}).",
    "Choose one of the options and answer with its mark, like ({mark}).",
)
"""Instructions for single-choice and true/false questions shown with their options."""

OPEN_POOL: tuple[str, ...] = (
    "Answer the question briefly.",
    "Give a short answer to the question.",
    "Reply with a few words.",
    "Answer concisely.",
    "Respond briefly and precisely.",
)
"""Instructions for open-ended questions."""

EXAMPLE_QUESTION = "can you see the image?"
EXAMPLE_OPTIONS: tuple[str, ...] = ("yes", "no", "not sure", "maybe")
"""ReForm-Eval's in-context example: a question every model can answer, shown before the real one."""
