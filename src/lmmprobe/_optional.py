"""Optional dependencies: import them or say which extra to install.

lmmprobe's core runs on the standard library, pydantic and Pillow; torch, transformers,
diffusers and the other heavy libraries come with extras (``pip install 'lmmprobe[hf]'``).
Code that needs one calls `require` at the point of use, so a missing library fails there with
the install command, not at import time of an unrelated module. `quiet_loading` keeps those
libraries' own noise (progress bars, notices about their optional parts) off lmmprobe's output
while a model is built or loaded. This module imports nothing of lmmprobe's, so every layer may
use it.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import re
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import Any

__all__ = ["install_hint", "quiet_loading", "require"]

# transformers' notice, once per image-processor class, when torchvision is missing and it falls
# back to the PIL processor: the fallback is what lmmprobe uses anyway, so it says nothing to
# the user (three lines before `synth generate --renderer diffusion` started).
_TORCHVISION_NOTICE = re.compile(r"requires torchvision \(not installed\); falling back to")
_TRANSFORMERS_IMPORTS = "transformers.utils.import_utils"


def install_hint(extra: str) -> str:
    """The command that installs lmmprobe's optional dependency group `extra`.

    Args:
        extra: An extra named in pyproject's ``[project.optional-dependencies]``, e.g. ``"hf"``.

    Returns:
        ``pip install 'lmmprobe[<extra>]'``.

    """
    return f"pip install 'lmmprobe[{extra}]'"


def require(*modules: str, extra: str, purpose: str) -> tuple[ModuleType, ...]:
    """Import optional modules, or fail with the command that installs them.

    Args:
        *modules: Importable module names, e.g. ``"torch"``, ``"transformers"``.
        extra: The lmmprobe extra that provides them, e.g. ``"hf"``.
        purpose: What needs them, as the subject of the error sentence, e.g.
            ``"the tiny CLIP model"``.

    Returns:
        The imported modules, in the order asked.

    Raises:
        ImportError: A module is missing; the message names what needs it, every module
            asked for, the import failure, and the install command, e.g. ``the tiny CLIP model
            needs torch, transformers and tokenizers (No module named 'torch'); run: pip install
            'lmmprobe[hf]'``.

    """
    if not modules:
        raise ValueError("require() needs at least one module name")
    try:
        return tuple(importlib.import_module(name) for name in modules)
    except ImportError as exc:
        raise ImportError(
            f"{purpose} needs {_listing(modules)} ({exc}); run: {install_hint(extra)}"
        ) from exc


class _NoTorchvisionNotice(logging.Filter):
    """Drops transformers' "requires torchvision (not installed)" notices, nothing else."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _TORCHVISION_NOTICE.search(record.getMessage())


@contextlib.contextmanager
def quiet_loading(*, diffusers: bool = False) -> Iterator[None]:
    """Without the heavy libraries' own noise inside; the caller's settings after.

    Inside, transformers' progress bars (and with them huggingface_hub's) are off: "Writing
    model shards" while a tiny checkpoint is built, "Loading weights" while one loads, drawn
    in the middle of lmmprobe's own output and naming neither the model nor why. So are
    transformers' notices that torchvision is missing (it falls back to the PIL image
    processors, which work), and the warnings torchvision itself issues where it is installed
    but does not match torch. lmmprobe's own warnings and every other library message pass.

    Args:
        diffusers: Turn diffusers' progress bars off too (import diffusers first: this does
            not import it for you, as loading diffusers takes seconds).

    """
    bars: list[Any] = []  # the logging modules whose bars were on
    with contextlib.suppress(ImportError):
        bars.append(importlib.import_module("transformers.utils.logging"))
    if diffusers:
        with contextlib.suppress(ImportError):
            bars.append(importlib.import_module("diffusers.utils.logging"))
    bars = [module for module in bars if module.is_progress_bar_enabled()]
    for module in bars:
        module.disable_progress_bar()
    notices = _NoTorchvisionNotice()
    # The notice is logged on this logger itself, so a filter here sees it (and only there).
    logging.getLogger(_TRANSFORMERS_IMPORTS).addFilter(notices)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=r"torchvision(\.|$)")
            yield
    finally:
        logging.getLogger(_TRANSFORMERS_IMPORTS).removeFilter(notices)
        for module in bars:
            module.enable_progress_bar()


def _listing(names: tuple[str, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} and {names[-1]}"
