"""No tracked file keeps a merge's conflict markers (one was committed in docs/architecture.md)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(rb"^(<{7} |={7}$|>{7} )", re.MULTILINE)


def test_no_tracked_text_file_holds_conflict_markers() -> None:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout ({exc})")
    found = []
    for name in listed.decode().split("\0"):
        path = ROOT / name
        if not name or path.suffix not in {".md", ".py", ".toml", ".yaml", ".yml", ".cfg", ".txt"}:
            continue
        if path.is_file() and MARKER.search(path.read_bytes()):
            found.append(name)
    assert not found, f"merge conflict markers left in: {', '.join(found)}"
