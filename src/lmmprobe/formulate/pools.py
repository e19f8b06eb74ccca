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

CAPTION_POOL: tuple[str, ...] = (
    "Describe the image in one sentence.",
    "Write a short caption for the image.",
    "Summarize what the image shows in a single sentence.",
    "Give a brief description of the image.",
    "What does the image show? Answer in one sentence.",
)
"""Instructions for captioning (generation) questions."""

OCR_POOL: tuple[str, ...] = (
    "Read the text in the image and answer with the text only.",
    "Answer with the exact words written in the image.",
    "Transcribe the requested text from the image.",
    "Reply with the text shown in the image, nothing else.",
    "What is written? Answer with the words only.",
)
"""Instructions for OCR questions (the answer is text read from the image)."""

KIE_POOL: tuple[str, ...] = (
    "Answer with the requested value from the image only.",
    "Extract the requested information from the image and reply with it alone.",
    "Give only the value asked for, as it appears in the image.",
    "Reply with the key information asked for, without explanation.",
    "Find the requested field in the image and answer with its value.",
)
"""Instructions for key-information-extraction questions (e.g. a total on a receipt)."""

POOLS: dict[str, tuple[str, ...]] = {
    "open_ended": OPEN_POOL,
    "caption": CAPTION_POOL,
    "ocr": OCR_POOL,
    "kie": KIE_POOL,
}
"""The instruction pool of each open-ended formulation."""

DYSCA_CHOICE_HINT = (
    "Hint: Please answer the question and provide the correct option letter, e.g., "
    "(A), (B), (C), (D), at the end. Do not contain the analysis progress.\nYour answer is:"
)
"""Dysca's multiple-choice instruction (REFERENCE.md), used with ``prompt_style="dysca"``."""

EXAMPLE_QUESTION = "can you see the image?"
EXAMPLE_OPTIONS: tuple[str, ...] = ("yes", "no", "not sure", "maybe")
"""ReForm-Eval's in-context example: a question every model can answer, shown before the real one."""
