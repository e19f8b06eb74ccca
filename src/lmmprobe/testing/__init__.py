"""Test doubles that speak real protocols, for the test suite and benchmarks.

The names below load their module on first use, so importing `lmmprobe.testing` stays cheap;
``python -m lmmprobe.testing.openai_server`` (the fake server's command) runs the package's
``__main__.py``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lmmprobe.testing.openai_server import (
        COLORS,
        FAULT_KINDS,
        MODEL_ID,
        FakeOpenAIServer,
        FaultPlan,
        dominant_color,
        parse_options,
    )

__all__ = [
    "COLORS",
    "FAULT_KINDS",
    "MODEL_ID",
    "FakeOpenAIServer",
    "FaultPlan",
    "dominant_color",
    "parse_options",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("lmmprobe.testing.openai_server"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
