"""`--temperature inf` is refused by the dry run as by the run (re-test 20 #23).

``GenerationParams`` took an infinite temperature: ``--dry-run`` planned the run (exit 0), and
the real run then failed when it recorded its spec ("--temperature: Input should be a valid
number"): a dry run that passes must mean the run starts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.console import lmmprobe


@pytest.mark.parametrize("value", ["inf", "1e400"])
@pytest.mark.parametrize("dry_run", [True, False])
def test_an_infinite_temperature_is_refused_before_anything(
    tmp_path: Path, value: str, dry_run: bool
) -> None:
    proc = lmmprobe("run", "-m", "random", "--data", "demo", "--limit", "1",
                    "--temperature", value, "--db", tmp_path / "db",
                    *(["--dry-run"] if dry_run else []))  # fmt: skip
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.strip() == "error: --temperature: Input should be a finite number (got inf)"
