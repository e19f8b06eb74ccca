"""Prompt building: formulations, option marks, instructions and chat messages."""

from lmmprobe.formulate.options import option_marks, render_options
from lmmprobe.formulate.pools import CHOICE_POOL, OPEN_POOL
from lmmprobe.formulate.prompt import (
    CHOICE_INSTRUCTION,
    OPEN_INSTRUCTION,
    default_instruction,
    formulate,
    mark_style,
    option_order,
)

__all__ = [
    "CHOICE_INSTRUCTION",
    "CHOICE_POOL",
    "OPEN_INSTRUCTION",
    "OPEN_POOL",
    "default_instruction",
    "formulate",
    "mark_style",
    "option_marks",
    "option_order",
    "render_options",
]
