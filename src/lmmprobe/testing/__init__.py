"""Test doubles that speak real protocols, for the test suite and benchmarks."""

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
