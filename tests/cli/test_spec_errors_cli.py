"""``--model`` and ``--data`` specs that break the grammar: one line, the same shape (issue 24).

Both options are read by `lmmprobe.spec.parse_spec`, so a broken spec is refused before
anything runs with ``error: <kind> spec '<spec>': <what is wrong>`` and exit status 2,
through the installed console script as a user runs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _refused(*args: str, db: Path) -> str:
    """The single error line ``lmmprobe run`` prints for these options (nothing else)."""
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {k: v for k, v in os.environ.items() if k != "LMMPROBE_DB"}
    proc = subprocess.run(
        [exe, "run", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=db.parent,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and proc.stdout == "", proc.stdout + proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--model", "random,seed=1,seed=2", "--data", "demo"],
            "error: model spec 'random,seed=1,seed=2': option 'seed=2' repeats key 'seed'; "
            "each option is given once",
        ),
        (
            ["--model", "random", "--data", "demo,n=1,n=2"],
            "error: data spec 'demo,n=1,n=2': option 'n=2' repeats key 'n'; "
            "each option is given once",
        ),
        (
            ["--model", "random", "--data", "demo,n"],
            "error: data spec 'demo,n': option 'n' has no '='; options are key=value",
        ),
        (
            ["--model", "random", "--data", "demo,=3"],
            "error: data spec 'demo,=3': option '=3' has no key before '='; options are key=value",
        ),
    ],
)
def test_a_broken_spec_is_refused_in_one_line(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    assert _refused(*args, db=tmp_path / "store.db") == expected
    assert not list(tmp_path.rglob("results.json"))  # refused before anything ran
