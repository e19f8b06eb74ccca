"""A served model's whole-number option takes ASCII digits only (re-test 20 #11).

``vllm:m,tensor_parallel_size=²`` printed Python's "invalid literal for int() with base 10",
naming neither the option nor the backend; 5,000 digits printed the interpreter's
integer-string limit and advice to call ``sys.set_int_max_str_digits()``; ``٣`` passed the
check and would have been handed to the server's command line as written.
"""

from __future__ import annotations

import pytest
from tests.console import lmmprobe


@pytest.mark.parametrize("kind", ["vllm", "sglang"])
@pytest.mark.parametrize("value", ["²", "9" * 5_000, "٣", "0", "-1"])
def test_a_whole_number_option_of_other_digits_is_named_in_one_line(kind: str, value: str) -> None:
    proc = lmmprobe("run", "-m", f"{kind}:m,max_model_len={value}", "--data", "demo",
                    "--limit", "1", "--dry-run")  # fmt: skip
    assert proc.returncode == 2, proc.stdout
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: {kind} backend: option max_model_len="), line
    assert line.endswith("must be a whole number, at least 1"), line
    assert "int()" not in line and len(line) < 300, line


def test_a_whole_number_in_ascii_digits_passes_the_check() -> None:
    proc = lmmprobe("run", "-m", "vllm:m,max_model_len=4096", "--data", "demo", "--limit", "1",
                    "--dry-run")  # fmt: skip
    assert "max_model_len" not in proc.stderr, proc.stderr
