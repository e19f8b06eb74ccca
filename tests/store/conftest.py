"""Fixtures shared by the store tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lmmprobe.store import Store


@pytest.fixture
def store(tmp_db: Path) -> Iterator[Store]:
    """An empty store in a fresh database file, closed after the test."""
    with Store(tmp_db) as s:
        yield s
