"""`make test` says at its start what it runs and how long that takes (issue 34, item 17).

On a loaded 2-core machine the suite took 36 minutes with nothing printed to say that was to be
expected; a new user took it for a hang. The first lines `make test` prints name what runs, the
time it takes on a quiet machine, and how to run the tests left out as slow.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_test_first_says_how_long_it_takes_and_how_to_run_the_slow_tests() -> None:
    # -n prints the recipe without running it; the stamp is made current so the install
    # recipe (which would print first on a fresh clone) is not part of what is read here.
    done = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed", "test"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = done.stdout.splitlines()
    first_check = next(i for i, line in enumerate(lines) if "ruff check" in line)
    said = " ".join(lines[:first_check])
    assert re.search(r"about \d+ minutes on a quiet 2-core machine", said), said
    assert "-m slow" in said, said


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_alone_lists_the_targets_and_installs_nothing() -> None:
    # `make` alone built the environment on a fresh clone and then said nothing, or said
    # "'.venv/.installed' is up to date": a new user typing it learnt nothing (re-test 20b).
    planned = subprocess.run(
        ["make", "-n"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert "pip install" not in planned.stdout
    done = subprocess.run(
        ["make", "-s"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    listed = done.stdout
    for target in ("demo", "test", "test-slow", "bench", "lock"):
        assert re.search(rf"^  make {re.escape(target)}\t\S", listed, re.M), listed
