"""Shared fixtures: a store path, small PNG and JSONL files written on the fly, and what the
tests of tiny random-weight checkpoints share (an offline hub, one build cache per session)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

PngWriter = Callable[..., Path]
JsonlWriter = Callable[[Path, Sequence[dict[str, Any] | str]], Path]


def _write_png(
    path: Path,
    size: tuple[int, int] = (8, 8),
    color: tuple[int, int, int] = (200, 30, 30),
    *,
    noise: int | None = None,
) -> Path:
    """Write an RGB PNG: one flat color, or seeded noise when `noise` is a seed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.new("RGB", size, color)
    if noise is not None:
        rng = random.Random(noise)
        im.putdata([tuple(rng.randrange(256) for _ in range(3)) for _ in range(size[0] * size[1])])
    im.save(path, format="PNG")
    return path


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any] | str]) -> Path:
    """Write one line per row: dicts as JSON, strings verbatim (blank lines, comments, junk)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def tmp_db(tmp_path: Path) -> Path:
    """A store path inside a folder that does not exist yet."""
    return tmp_path / "runs" / "lmmprobe.db"


@pytest.fixture
def write_png() -> PngWriter:
    """`write_png(path, size=(8, 8), color=(r, g, b), noise=None) -> path`."""
    return _write_png


@pytest.fixture
def write_jsonl() -> JsonlWriter:
    """`write_jsonl(path, rows) -> path`; dict rows become JSON, str rows are written as is."""
    return _write_jsonl


@pytest.fixture
def hf_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep transformers, diffusers and the hub client off the network for one test.

    Modules that load checkpoints use it for every test:
    ``pytestmark = pytest.mark.usefixtures("hf_offline")``.
    """
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def tiny_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache root for the tiny random-weight checkpoints built during the session.

    Pass it as ``cache_dir`` (`tiny_model_path`, `tiny_clip_path`, `tiny_bart_path`,
    `tiny_sdxl_path`, ...): each checkpoint is built once per session, away from the user's
    cache.
    """
    return tmp_path_factory.mktemp("tiny-cache")
