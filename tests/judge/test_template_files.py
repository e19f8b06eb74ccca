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


def test_a_template_repeating_a_placeholder_is_refused_up_front_naming_it(tmp_path: Path) -> None:
    """Re-test 6 of issue 34, finding 7: a 1 MiB template repeating ``{answer}`` 130,000 times
    made each judge prompt 130,000 answers long (MemoryError with an empty message)."""
    template = tmp_path / "amp.txt"
    template.write_text("Q: {question}\n" + "{answer}" * 130_000)
    proc = lmmprobe(
        "run", "-m", "first", "--data", _rows(tmp_path), "--db", tmp_path / "db.sqlite",
        "--judge", "openai:j@http://127.0.0.1:9/v1", "--judge-prompt", template,
        "--judge-when", "always",
        timeout=60, OPENAI_API_KEY="test-key",
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert str(template) in line and "{answer} is used 130,000 times" in line
    assert "at most 8 times" in line


def test_a_template_using_a_placeholder_a_few_times_is_taken(tmp_path: Path) -> None:
    template = tmp_path / "twice.txt"
    template.write_text("Q: {question}\nA: {answer}\nAgain, the answer: {answer}\n{instruction}")
    rows = tmp_path / "open.jsonl"
    rows.write_text(json.dumps({"id": "o1", "images": [], "question": "Say?", "answer": "cat"}))
    proc = lmmprobe(
        "run", "-m", "first", "--data", rows, "--db", tmp_path / "db.sqlite",
        "--judge", "openai:j@http://127.0.0.1:9/v1", "--judge-prompt", template, "--dry-run",
        timeout=60, OPENAI_API_KEY="test-key",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_a_failure_without_a_message_is_never_a_bare_type() -> None:
    """An exception Python raises with no text (MemoryError) still says what happened."""
    from lmmprobe.api import _failure

    assert _failure(MemoryError()).startswith("MemoryError: not enough memory")
    assert _failure(KeyError()) == "KeyError"
    assert _failure(ValueError("bad")) == "ValueError: bad"
