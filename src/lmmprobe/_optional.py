"""Optional dependencies: import them or say which extra to install.

lmmprobe's core runs on the standard library, pydantic and Pillow; torch, transformers,
diffusers and the other heavy libraries come with extras (``pip install 'lmmprobe[hf]'``).
Code that needs one calls `require` at the point of use, so a missing library fails there with
the install command, not at import time of an unrelated module. This module imports nothing of
lmmprobe's, so every layer may use it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["install_hint", "require"]


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


def _listing(names: tuple[str, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} and {names[-1]}"
