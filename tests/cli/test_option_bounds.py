"""Numbers a command takes have an upper bound at parse, refused in one line (re-test 11 #12).

``compare --bootstrap 100000000`` was a MemoryError traceback after 30 s, ``elo --k 100000``
an OverflowError traceback, and ``LMMPROBE_MAX_IMAGE_PIXELS=²`` (``'²'.isdigit()`` is true)
"invalid literal for int()", naming neither the variable nor a fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.console import lmmprobe

BOOTSTRAP = {
    "compare": ("compare", "latest"),
    "run": ("run", "-m", "random", "-d", "demo,n=3", "--dry-run"),
    "apex": ("apex", "Can models identify rotated images?", "-m", "random", "--max-calls", "1"),
}


def _one_line(proc: object) -> str:
    stderr = str(getattr(proc, "stderr", ""))
    assert getattr(proc, "returncode", None) == 2, stderr[-2000:]
    assert "Traceback" not in stderr
    (line,) = stderr.strip().splitlines()
    return line


@pytest.mark.parametrize("name", list(BOOTSTRAP))
def test_bootstrap_past_100000_is_refused_at_parse(tmp_path: Path, name: str) -> None:
    db = tmp_path / "db.sqlite"
    line = _one_line(lmmprobe(*BOOTSTRAP[name], "--bootstrap", "100000000", "--db", db)
                     if name != "apex" else
                     lmmprobe(*BOOTSTRAP[name], "--bootstrap", "100000000",
                              "--out", tmp_path / "a"))  # fmt: skip
    assert line.startswith("error: Invalid value for '--bootstrap'"), line
    assert "less than or equal to 100000" in line, line
    assert not db.exists() and not (tmp_path / "a").exists()


def test_elo_k_past_1000_is_one_line(tmp_path: Path) -> None:
    votes = tmp_path / "v.jsonl"
    votes.write_text(
        "".join(
            json.dumps({"model_a": a, "model_b": b, "winner": w}) + "\n"
            for a, b, w in [("a", "b", "a"), ("a", "c", "b"), ("b", "c", "tie")]
        )
    )
    line = _one_line(lmmprobe("elo", votes, "--k", "100000"))
    assert line == "error: --k must be a positive number of at most 1,000 (HEMM: 4), got 100000"
    done = lmmprobe("elo", votes, "--k", "1000", "--format", "json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["k"] == 1000


@pytest.mark.parametrize("value", ["²", "٣"])  # a superscript, an Arabic-Indic digit
def test_a_pixel_cap_of_non_ascii_digits_names_the_variable(
    tmp_path: Path, write_png, value: str
) -> None:
    png = write_png(tmp_path / "red.png")
    data = tmp_path / "rows.jsonl"
    row = {"id": "c0", "images": [str(png)], "question": "Pick?", "choices": ["red", "blue"],
           "answer": 0}  # fmt: skip
    data.write_text(json.dumps(row) + "\n")
    proc = lmmprobe("run", "-m", "random", "--data", data, "--db", tmp_path / "db.sqlite",
                    "--dry-run", LMMPROBE_MAX_IMAGE_PIXELS=value)  # fmt: skip
    line = _one_line(proc)
    assert line == (
        f"error: LMMPROBE_MAX_IMAGE_PIXELS={value!r} is not a positive number of pixels: "
        "set it to e.g. 40000000, or unset it."
    ), line
