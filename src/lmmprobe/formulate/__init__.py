"""Prompt building: formulations, option marks, instructions and chat messages."""

from lmmprobe.formulate.options import option_marks, render_options
from lmmprobe.formulate.prompt import (
    CHOICE_INSTRUCTION,
    OPEN_INSTRUCTION,
    default_instruction,
    formulate,
    option_order,
)

__all__ = [
    "CHOICE_INSTRUCTION",
    "OPEN_INSTRUCTION",
    "default_instruction",
    "formulate",
    "option_marks",
    "option_order",
    "render_options",
]
