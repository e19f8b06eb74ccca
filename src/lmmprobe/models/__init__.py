"""Model backends behind one protocol; optional ones are imported lazily."""

from lmmprobe.models.base import (
    MODELS,
    AsyncModel,
    BadRequestError,
    Capabilities,
    Model,
    ModelError,
    ModelIdentity,
    ModelTimeoutError,
    PermanentError,
    RateLimitError,
    RetryableError,
    TransientError,
    UnsupportedInputError,
    list_models,
    load_model,
    parse_model_spec,
)

__all__ = [
    "MODELS",
    "AsyncModel",
    "BadRequestError",
    "Capabilities",
    "Model",
    "ModelError",
    "ModelIdentity",
    "ModelTimeoutError",
    "PermanentError",
    "RateLimitError",
    "RetryableError",
    "TransientError",
    "UnsupportedInputError",
    "list_models",
    "load_model",
    "parse_model_spec",
]
