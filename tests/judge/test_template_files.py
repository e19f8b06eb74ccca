"""``--judge-prompt FILE`` reads a regular file of bounded size, or fails naming the file.

Re-test 5 of issue 34, finding 7: the template was read whole with `Path.read_text`, so a FIFO
held the run forever (with ``--dry-run`` too) and a link to ``/dev/zero`` grew until memory ran
out, ending in a traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.console import lmmprobe

MAX_TEMPLATE_BYTES = 1024 * 1024  # lmmprobe.judge.template.MAX_TEMPLATE_BYTES, as the docs say


def _rows(tmp_path: Path) -> Path:
    row = {"id": "q1", "images": [], "question": "Cat?", "choices": ["cat", "dog"], "answer": 0}
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _large(path: Path) -> None:
    with path.open("wb") as f:
        f.truncate(MAX_TEMPLATE_BYTES + 1)  # sparse: no disk used


def _folder(path: Path) -> None:
    path.mkdir()


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (_fifo, "not a regular file"),
        (_zero, "not a regular file"),
        (_large, "larger than 1024 KiB"),
        (_folder, "not a regular file"),
    ],
    ids=["fifo", "dev-zero", "large", "folder"],
)
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "run"])
def test_a_judge_prompt_that_is_no_regular_small_file_fails_naming_it(
    tmp_path: Path, make: object, reason: str, dry_run: bool
) -> None:
    template = tmp_path / "prompt.txt"
    assert callable(make)
    make(template)
    proc = lmmprobe(
        "run", "-m", "first", "--data", _rows(tmp_path), "--db", tmp_path / "db.sqlite",
        "--judge", "openai:j@http://127.0.0.1:9/v1", "--judge-prompt", template,
        *(["--dry-run"] if dry_run else []),
        timeout=60, OPENAI_API_KEY="test-key",
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert str(template) in line and reason in line
