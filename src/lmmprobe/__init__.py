"""lmmprobe: measure what large multimodal models can and cannot do."""

__version__ = "0.1.0"

from lmmprobe.api import Evaluation, evaluate  # noqa: E402
from lmmprobe.schema import (  # noqa: E402
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
