"""A data source's whole-number option is read as it looks (re-test 20 #22).

``--data demo,n=<5,000 digits>`` echoed the value whole (a 5 KB line); ``demo,n=٣`` and
``imagefolder:DIR,choices=٣`` were read as 3 and ``demo,n=1_000`` as 1000 (int() takes other
scripts' digits and underscores; a price does not, README says).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.console import lmmprobe


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ("demo,n=" + "9" * 5_000, "demo source: option n='99999"),
        ("demo,n=٣", "demo source: option n='٣'"),
        ("demo,n=1_000", "demo source: option n='1_000'"),
        ("synth,n=²", "synth source: option n='²'"),
    ],
)
def test_a_whole_number_option_in_other_digits_is_one_short_line(data: str, said: str) -> None:
    proc = lmmprobe("run", "-m", "random", "--data", data, "--dry-run")
    assert proc.returncode == 2, proc.stdout
    (line,) = proc.stderr.strip().splitlines()
    assert said in line and line.endswith("is not an integer") and len(line) < 200, line


def test_an_imagefolder_option_in_other_digits_is_refused(tmp_path: Path) -> None:
    proc = lmmprobe("run", "-m", "random", "--data", f"imagefolder:{tmp_path},choices=٣",
                    "--dry-run")  # fmt: skip
    assert proc.returncode == 2
    assert "imagefolder: option choices='٣' is not an integer" in proc.stderr


@pytest.mark.parametrize("data", ["demo,n=3", "demo,seed=-2", "synth,n=2"])
def test_ascii_whole_numbers_still_read(data: str) -> None:
    assert lmmprobe("run", "-m", "random", "--data", data, "--dry-run").returncode == 0
