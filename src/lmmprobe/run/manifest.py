"""Reproducibility manifest: versions, model identities, data fingerprint, prompts, seeds, commit."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import lmmprobe
from lmmprobe.formulate import CHOICE_INSTRUCTION, OPEN_INSTRUCTION
from lmmprobe.models.base import ModelIdentity
from lmmprobe.schema import RunSpec

KEY_LIBRARIES = (
    "pydantic", "numpy", "pillow", "rapidfuzz", "typer", "rich", "torch", "transformers",
    "openai", "datasets", "scipy",
)  # fmt: skip


def library_versions() -> dict[str, str | None]:
    """Installed versions of the libraries that can change results (None when absent)."""
    out: dict[str, str | None] = {}
    for name in KEY_LIBRARIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def git_commit(path: Path | None = None) -> str | None:
    """Commit of the git checkout holding lmmprobe's source (None outside a checkout)."""
    where = path or Path(lmmprobe.__file__).resolve().parent
    try:
        res = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where, capture_output=True, text=True, timeout=5, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    if res.returncode != 0:
        return None
    return res.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def build_manifest(
    spec: RunSpec,
    identities: dict[str, ModelIdentity],
    data_fingerprint: str,
    n_samples: int,
) -> dict[str, Any]:
    """Everything needed to repeat a run: same manifest + same seed gives the same requests."""
    return {
        "lmmprobe": lmmprobe.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "libraries": library_versions(),
        "git_commit": git_commit(),
        "models": {spec_: ident.model_dump() for spec_, ident in identities.items()},
        "data": {"spec": spec.data, "fingerprint": data_fingerprint, "samples": n_samples},
        "prompts": {
            "formulate": spec.formulate.model_dump(),
            "default_choice_instruction": CHOICE_INSTRUCTION,
            "default_open_instruction": OPEN_INSTRUCTION,
        },
        "generation": spec.gen.model_dump(),
        "seed": spec.seed,
        "repeats": spec.repeats,
    }
