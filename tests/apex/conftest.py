"""Shared pieces of the APEx tests: small, fast campaign settings and a private image cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmmprobe.apex import Settings


@pytest.fixture
def small() -> Settings:
    """Settings for campaigns that run in about a second."""
    return Settings(images_per_answer=4, image_size=32, bootstrap=100, seed=3)


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    """A composed-image cache private to the test."""
    return tmp_path / "cache"
