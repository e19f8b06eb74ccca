"""lmmprobe: measure what large multimodal models can and cannot do."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lmmprobe._version import __version__
from lmmprobe.schema import (
    FormulateConfig,
    GenerationParams,
    ImageRef,
    Request,
    Response,
    RunSpec,
    Sample,
    Score,
    Turn,
)

if TYPE_CHECKING:
    from lmmprobe.api import Evaluation, evaluate

__all__ = [
    "Evaluation",
    "FormulateConfig",
    "GenerationParams",
    "ImageRef",
    "Request",
    "Response",
    "RunSpec",
    "Sample",
    "Score",
    "Turn",
    "__version__",
    "evaluate",
]


def __getattr__(name: str) -> Any:
    """`evaluate` and `Evaluation` load the runner and the report on first use (PEP 562).

    So commands that need neither (``lmmprobe serve``, ``lmmprobe data list``) start fast.
    """
    if name in ("evaluate", "Evaluation"):
        from lmmprobe import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
