"""lmmprobe: measure what large multimodal models can and cannot do."""

from lmmprobe._version import __version__
from lmmprobe.api import Evaluation, evaluate
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
