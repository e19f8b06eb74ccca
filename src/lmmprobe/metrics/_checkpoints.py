"""Shared by the model-based metrics (BARTScore, BERTScore, CLIP): checkpoints, devices, references."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def local_checkpoint(model_path: str | Path, kind: str, *, caller: str | None = None) -> str:
    """The resolved folder of a checkpoint saved with ``save_pretrained``.

    Args:
        model_path: The folder.
        kind: The model kind the message names (``"model"``, ``"CLIP"``).
        caller: The metric asking, put first in the message.

    Raises:
        FileNotFoundError: No ``config.json`` there (hub names are never fetched).

    """
    path = Path(model_path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"{caller + ': ' if caller else ''}{path} is not a local {kind} folder (no "
            "config.json); pass the folder of a checkpoint saved with save_pretrained (hub "
            "names are not fetched)"
        )
    return str(path.resolve())


def resolve_device(device: str | None) -> str:
    """`device`, else CUDA when available, else CPU (torch is imported here, lazily)."""
    if device is not None:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def reference_groups(references: Sequence[str | Sequence[str]]) -> list[list[str]]:
    """One non-empty list of references per candidate (a single string is a list of one).

    Raises:
        ValueError: A reference list is empty (names its index).

    """
    groups: list[list[str]] = []
    for i, r in enumerate(references):
        group = [r] if isinstance(r, str) else [str(x) for x in r]
        if not group:
            raise ValueError(f"references[{i}] is an empty list; give at least one reference")
        groups.append(group)
    return groups
