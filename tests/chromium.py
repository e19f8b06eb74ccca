"""Headless Chromium for the tests that look at pages as a browser lays them out.

One way to start it (playwright driving the Debian `chromium`), shared by the page tests of
the report, the web app and the new user's path: a missing playwright or Chromium, or one
that cannot start here, skips the test with the reason; it is the environment, not lmmprobe.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
"""The Chromium executable (``apt-get install chromium``)."""


@contextlib.contextmanager
def chromium_browser() -> Iterator[Any]:
    """A launched headless Chromium (playwright's `Browser`), closed on exit; else a skip."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium executable at {CHROMIUM}")
    with sync_api.sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        except Exception as exc:  # a Chromium that cannot start here is an environment issue
            pytest.skip(f"Chromium did not start: {exc}")
        try:
            yield browser
        finally:
            browser.close()
