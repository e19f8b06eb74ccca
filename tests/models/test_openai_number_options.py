"""An openai spec's number options take ASCII digits only (re-test 20, left by h16b).

``int()`` and ``float()`` read other scripts' digits (``max_attempts=٣`` was 3) and
underscores (``timeout=1_0`` was 10 seconds): an option is read as it looks, or refused in
one line naming it, its value cut when long.
"""

from __future__ import annotations

import pytest
from tests.console import lmmprobe

_SPEC = "openai:m@http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("max_attempts", "٣"),
        ("max_attempts", "²"),
        ("max_attempts", "1_0"),
        ("max_concurrency", "9" * 5_000),
        ("top_logprobs", " ٢ "),
        ("timeout", "1_0"),
        ("backoff", "٣"),
        ("max_backoff", "٣" * 20_000),
    ],
)
def test_a_number_option_in_other_digits_is_refused_in_one_line(option: str, value: str) -> None:
    proc = lmmprobe("run", "-m", f"{_SPEC},{option}={value}", "--data", "demo", "--limit", "1",
                    "--dry-run")  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: openai backend: option {option}="), line
    assert line.endswith("is invalid"), line
    assert len(line) < 300, line


def test_number_options_in_ascii_digits_pass() -> None:
    spec = f"{_SPEC},max_attempts=3,timeout=2.5,backoff=0,top_logprobs=5,max_concurrency=8"
    proc = lmmprobe("run", "-m", spec, "--data", "demo", "--limit", "1", "--dry-run")
    assert proc.returncode == 0, proc.stderr
