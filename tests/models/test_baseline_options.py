"""The baselines' options are read in range, each refusal one line (re-test 20 #21).

``random,seed=1e400`` and ``first,batch=inf`` raised OverflowError out of ``int()``: a
traceback. ``seed=nan`` gave int()'s own message; ``seed=1.5`` ran as seed 1 (sharing its
stored answers); ``delay=nan`` and ``delay=-1`` were taken.
"""

from __future__ import annotations

import pytest
from tests.console import lmmprobe


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("random,seed=1e400", "option seed='1e400' must be a whole number"),
        ("random,seed=nan", "option seed='nan' must be a whole number"),
        ("random,seed=1.5", "option seed='1.5' must be a whole number"),
        ("random,seed=" + "9" * 5_000, "(5,000 characters)' must be a whole number"),
        ("first,batch=inf", "option batch='inf' must be a whole number from 1 to 1,000,000"),
        ("first,delay=nan", "option delay='nan' must be a number from 0 to 3,600"),
        ("first,delay=-1", "option delay='-1' must be a number from 0 to 3,600"),
    ],
)
def test_a_baseline_option_out_of_range_is_one_line(spec: str, said: str) -> None:
    proc = lmmprobe("run", "-m", spec, "--data", "demo", "--limit", "1", "--dry-run")
    assert proc.returncode == 2, proc.stdout
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: the '{spec.split(',')[0]}' baseline: "), line
    assert said in line and len(line) < 300, line


@pytest.mark.parametrize("spec", ["random,seed=7", "random,seed=-5", "first,delay=0.05,batch=2"])
def test_options_in_range_still_run(spec: str) -> None:
    proc = lmmprobe("run", "-m", spec, "--data", "demo", "--limit", "1", "--dry-run")
    assert proc.returncode == 0, proc.stderr
