"""lmmprobe: measure what large multimodal models can and cannot do."""

__version__ = "0.1.0"

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
