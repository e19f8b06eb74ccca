"""Issue 34's second walk-through, through the console script: prose folded mid-word at 80
columns, a pasted hint that broke on a space, rows and requests that did not add up.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.console import lmmprobe

# A word of the output: what the terminal must not cut (paths and specs are words too).
_WORD = re.compile(r"\S+")


def _fits(out: str, width: int = 80) -> None:
    """Every line fits `width` columns unless it is one word too long to break.

    ``results: PATH`` is kept whole on purpose: its label and the path copied together.
    """
    for line in out.splitlines():
        if len(line.rstrip()) > width:
            words = _WORD.findall(line)
            assert len(words) == 1 or words[0] == "results:", (line, out)


def test_a_synth_run_wraps_prose_between_words_at_80_columns(tmp_path: Path) -> None:
    # Captions with no text: the note "N rows not in accuracy (...); free-form score -: no
    # text to score" ran to 108 columns and the terminal cut it mid-word.
    made = lmmprobe(
        "run", "-m", "random", "--data", "demo,n=40,seed=1", "--repeats", "3",
        "--db", tmp_path / "db", "--out", tmp_path / "o", "-q", columns=80,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    _fits(made.stdout)
    # The line it was on, whole again when joined: no word cut, none lost.
    flat = " ".join(made.stdout.split())
    assert re.search(r"random: \d+ requests, .* 0 errors \(120 rows: rows with the", flat), flat
    # A continuation line starts with a whole word of the sentence, never its tail.
    lines = made.stdout.splitlines()
    i = next(n for n, line in enumerate(lines) if re.match(r"random: \d+ requests,", line))
    assert lines[i + 1].split()[0] in flat.split(), lines[i : i + 2]
    assert "share its answer)" in flat
    # The results' paths and the run id stay on lines of their own, unbroken.
    assert any(line == f"results: {tmp_path / 'o' / 'results.json'}" for line in lines), lines


def test_a_long_path_is_never_cut(tmp_path: Path) -> None:
    deep = tmp_path / ("a-very-long-folder-name-" * 4) / "out"
    made = lmmprobe(
        "run", "-m", "random", "--data", "demo,n=6", "--db", tmp_path / "db", "--out", deep,
        "-q", columns=80,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    _fits(made.stdout)
    assert str(deep / "results.md") in made.stdout.splitlines()[-1]


def test_rows_and_requests_add_up_when_identical_prompts_are_asked_once(tmp_path: Path) -> None:
    # The walk-through's data: 3000 rows, 2605 requests, no word of why.
    made = lmmprobe(
        "run", "-m", "random", "--data", "demo,n=1000,seed=3", "--repeats", "3",
        "--db", tmp_path / "db", "--out", tmp_path / "o", "-q",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert (
        "random: 2605 requests, 0 from the store, 2605 sent, 0 errors (3000 rows: rows with the "
        "same prompt are asked once and share its answer)"
    ) in made.stdout
    # Without repeats or duplicates nothing is added.
    once = lmmprobe(
        "run", "-m", "random", "--data", "demo,n=5", "--db", tmp_path / "db2",
        "--out", tmp_path / "o2", "-q",
    )  # fmt: skip
    assert "random: 5 requests, 0 from the store" in once.stdout


def test_the_synth_hint_quotes_a_folder_with_a_space_and_runs_pasted(tmp_path: Path) -> None:
    out = tmp_path / "my bench"
    made = lmmprobe("synth", "generate", "--out", f"{out}/", columns=200)
    assert made.returncode == 0, made.stderr
    hint = re.search(r"evaluate with:\n(.+)\n", made.stdout)
    assert hint is not None, made.stdout
    assert shlex.quote(f"synth:{out}") in hint.group(1)
    # Pasted into a shell, it is the command it says: split as the shell splits it.
    argv = shlex.split(hint.group(1))
    assert argv[argv.index("--data") + 1] == f"synth:{out}"
    # The line pasted whole runs lmmprobe: no backticks for the shell to run as a command
    # substitution (it printed "evaluate with: `lmmprobe run ...`").
    line = hint.group(1) + " -m random --db " + shlex.quote(str(tmp_path / "db"))
    line += " --out " + shlex.quote(str(tmp_path / "o")) + " -q"
    ran = subprocess.run(
        ["bash", "-c", line],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "80"},
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    # The captions' note (108 columns, cut mid-word by the terminal) wrapped between words.
    _fits(ran.stdout)
    lines = ran.stdout.splitlines()
    i = next(n for n, line in enumerate(lines) if "rows not in accuracy" in line)
    assert lines[i].startswith("  random: 100 rows not in accuracy"), lines
    assert lines[i + 1].startswith("  "), lines  # continued under its indent
    joined = " ".join(" ".join(lines[i : i + 2]).split())
    assert joined == (
        "random: 100 rows not in accuracy (100 free-form/caption with no text); "
        "free-form score -: no text to score"
    ), lines[i : i + 2]


def test_a_hint_in_prose_is_wrapped_around_never_cut() -> None:
    # The `data list` footer ran to 150 columns, folded by the terminal mid-word.
    listed = lmmprobe("data", "list", columns=80, LMMPROBE_DATA_DIR="")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    # The footer's sentence, from its first line to the one that ends it.
    (first,) = [n for n, line in enumerate(lines) if line.startswith("LMMPROBE_DATA_DIR is not")]
    last = next(n for n in range(first, len(lines)) if lines[n].endswith("fetch command."))
    block = lines[first : last + 1]
    hint = re.search(r"`[^`]*lmmprobe data show NAME`", listed.stdout)
    assert hint is not None, block
    # The command whole on one line, to copy; the prose wrapped between words around it.
    assert any(hint.group() in line for line in block), block
    for line in block:
        assert len(line) <= 80 or hint.group() in line, line
    assert " ".join(" ".join(block).split()) == (
        "LMMPROBE_DATA_DIR is not set: local copies are looked for in $LMMPROBE_DATA_DIR/NAME "
        f"(or give path=FOLDER); {hint.group()} prints the fetch command."
    )


def test_piped_output_without_columns_keeps_each_message_on_one_line(tmp_path: Path) -> None:
    # Captured with no $COLUMNS (a log, `| grep`, a script): nothing is laid out for a screen,
    # so a message a search looks for is one line, however long (this one: 150 columns).
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    listed = subprocess.run(
        [exe, "data", "list"], capture_output=True, text=True, timeout=300,
        env={**env, "LMMPROBE_DATA_DIR": ""}, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert re.search(
        r"^LMMPROBE_DATA_DIR is not set: local copies are looked for in \$LMMPROBE_DATA_DIR/NAME "
        r"\(or give path=FOLDER\); `[^`]*lmmprobe data show NAME` prints the fetch command\.$",
        listed.stdout,
        re.MULTILINE,
    ), listed.stdout
    made = subprocess.run(
        [exe, "run", "-m", "random", "--data", "demo,n=40,seed=1", "--repeats", "3",
         "--db", str(tmp_path / "db"), "--out", str(tmp_path / "o"), "-q"],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert re.search(
        r"^random: \d+ requests, \d+ from the store, \d+ sent, 0 errors \(120 rows: rows with the "
        r"same prompt are asked once and share its answer\)$",
        made.stdout,
        re.MULTILINE,
    ), made.stdout


def test_nonsense_columns_are_ignored_and_never_hide_an_error(tmp_path: Path) -> None:
    # COLUMNS=0 printed nothing at all, the error included (exit 2 and no word of why);
    # COLUMNS=1 or 5 printed a character a line. A width below 20 is taken as unset.
    for columns in (0, 1, 5):
        failed = lmmprobe("run", "-m", "first", "--data", tmp_path / "none.jsonl", columns=columns)
        assert failed.returncode == 2
        assert failed.stderr.startswith("error: data file not found: "), (columns, failed)
        made = lmmprobe(
            "run", "-m", "first", "--data", "demo,n=6", "--db", tmp_path / "db",
            "--out", tmp_path / f"o{columns}", "-q", columns=columns,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
        assert "first: 6 requests" in made.stdout, (columns, made.stdout)
        listed = lmmprobe("runs", "--db", tmp_path / "db", columns=columns)
        assert listed.returncode == 0, listed.stderr
        assert max(map(len, listed.stdout.splitlines())) >= 40, (columns, listed.stdout)


def test_apex_prose_keeps_an_interval_on_one_line_at_80_columns(tmp_path: Path) -> None:
    # At 80 columns "first 0.50 [0.38," ended a line and "0.68] (at chance)" began the next.
    made = lmmprobe(
        "apex", "Can models identify rotated images?", "-m", "random", "-m", "first",
        "--images-per-answer", "20", "--image-size", "32", "--bootstrap", "200",
        "--cache-dir", tmp_path / "cache", "--out", tmp_path / "o", columns=80,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    prose = made.stdout.split("  APEx:", 1)[0]  # the lines said before the table
    intervals = re.findall(r"\[\d\.\d\d, \d\.\d\d\]", " ".join(prose.split()))
    assert len(intervals) >= 4, prose
    lines = prose.splitlines()
    for interval in intervals:
        assert any(interval in line for line in lines), (interval, prose)
    _fits(prose)
    # A result line continued is continued under its indent.
    i = next(n for n, line in enumerate(lines) if line.startswith("  results (chance 0.50)"))
    assert lines[i + 1].startswith("  "), lines[i : i + 2]
