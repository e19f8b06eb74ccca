"""The built-in model backends, registered when `MODELS` is first used.

The baselines (``random``, ``first``) are registered by importing their module; the optional
backends (``hf``, ``openai``) are registered lazily, so their dependencies are imported only when
a spec names them, and a missing one fails with the ``pip install`` to run.
"""

from __future__ import annotations

import lmmprobe.models.baselines  # noqa: F401  (registers random and first)
from lmmprobe.models.base import MODELS

MODELS.register_lazy(
    "hf",
    "lmmprobe.models.hf:load",
    requires=("torch", "transformers"),
    extra="hf",
    summary="hf:PATH_OR_ID  Hugging Face transformers checkpoint (local path or hub id)",
)
MODELS.register_lazy(
    "openai",
    "lmmprobe.models.openai_api:load",
    requires=("openai",),
    extra="api",
    summary="openai:MODEL[@BASE_URL]  any OpenAI-compatible chat server",
)
