"""A file option given a FIFO or a link to ``/dev/zero`` says what it is (re-test 6, item 21).

``--prices``, ``--cards``, ``--data FILE.jsonl``, ``elo FILE``, ``apex --orchestrator
replay:FILE`` and a benchmark row's image called such a path missing ("file does not exist",
"data file not found", "no report file", "image file not found"), where ``score`` and
``import`` said "a character device, not a regular file": every one says that now, in the one
wording of `lmmprobe._file_kind`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.console import lmmprobe

from lmmprobe._file_kind import kernel_file, not_regular_file
from lmmprobe.data.files import UnreadableFile, open_regular

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _zero(path: Path) -> tuple[Path, str]:
    path.symlink_to("/dev/zero")
    return path, "a character device"


def _fifo(path: Path) -> tuple[Path, str]:
    os.mkfifo(path)
    return path, "a FIFO"


def _kmsg(path: Path) -> tuple[Path, str]:
    # Re-test 7 #8: /proc/kmsg says it is a regular file (size 0) and, read as root, blocks
    # forever: every reader hung on it.
    if not os.access("/proc/kmsg", os.R_OK):
        pytest.skip("/proc/kmsg is not readable here (it blocks only for a reader allowed to)")
    path.symlink_to("/proc/kmsg")
    return path, "a kernel file"


def _rows(tmp_path: Path) -> Path:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        '{"id": "c0", "question": "Which?", "options": ["a", "b"], "answer": "A"}\n',
        encoding="utf-8",
    )
    return rows


COMMANDS: dict[str, Callable[[Path, Path], list[str | Path]]] = {
    "--prices": lambda tmp, f: ["run", "-m", "first", "--data", _rows(tmp), "--prices", f,
                                "--dry-run", "--db", tmp / "db"],
    "--cards": lambda tmp, f: ["report", "latest", "--db", tmp / "db", "--cards", f,
                               "-o", tmp / "r.html"],
    "--data": lambda tmp, f: ["run", "-m", "first", "--data", f, "--dry-run", "--db", tmp / "db"],
    "elo": lambda tmp, f: ["elo", f],
    "apex replay": lambda tmp, f: ["apex", "Which colour is hardest?", "-m", "first",
                                   "--orchestrator", f"replay:{f}", "--db", tmp / "db"],
}  # fmt: skip


@pytest.mark.parametrize("make", [_zero, _fifo, _kmsg])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_file_option_names_what_its_path_is(
    tmp_path: Path, command: str, make: Callable[[Path], tuple[Path, str]]
) -> None:
    path, kind = make(tmp_path / ("special.jsonl" if command != "--prices" else "special.yaml"))
    proc = lmmprobe(*COMMANDS[command](tmp_path, path), timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "Traceback" not in out, out
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out
    assert f"{path}: {kind}, not a regular file; lmmprobe reads " in errors[0], errors[0]
    assert "not found" not in out and "does not exist" not in out, out


@pytest.mark.parametrize("make", [_zero, _fifo, _kmsg])
def test_a_benchmark_image_that_is_no_regular_file_is_named_so(
    tmp_path: Path, make: Callable[[Path], tuple[Path, str]]
) -> None:
    # A FER-2013 copy whose one image is a link to /dev/zero: "image file not found ...
    # (looked for /dev/zero)" before.
    folder = tmp_path / "fer" / "face_emotion" / "happy"
    folder.mkdir(parents=True)
    _, kind = make(folder / "x.jpg")
    proc = lmmprobe("run", "-m", "first", "--data", f"hemm-fer2013,path={tmp_path / 'fer'}",
                    "--dry-run", "--db", tmp_path / "db", timeout=120)  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in out, out
    assert f"face_emotion/happy/x.jpg: {kind}, not a regular file" in out, out
    assert "not found" not in out, out


def test_a_rows_image_on_a_kernel_filesystem_is_that_rows_problem(tmp_path: Path) -> None:
    _, kind = _kmsg(tmp_path / "km.png")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        '{"id": "k0", "images": ["km.png"], "question": "Pick?", "choices": ["a", "b"], '
        '"answer": 0}\n',
        encoding="utf-8",
    )
    proc = lmmprobe("run", "-m", "first", "--data", rows, "--dry-run", "--db", tmp_path / "db",
                    timeout=120)  # fmt: skip
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    assert f"rows.jsonl:1: images[0]: km.png: {kind}, not a regular file" in out, out


def test_a_file_on_a_kernel_filesystem_is_no_regular_file(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    assert not kernel_file(os.stat(plain)) and not_regular_file(plain, "rows") is None
    if not Path("/proc/self/status").exists():
        pytest.skip("no procfs here")
    assert kernel_file(os.stat("/proc/self/status"))
    assert not_regular_file("/proc/self/status", "rows") == (
        "/proc/self/status: a kernel file, not a regular file; lmmprobe reads rows from regular "
        "files only (copy the data into one)"
    )
    with pytest.raises(UnreadableFile, match="a kernel file, not a regular file"):
        open_regular(Path("/proc/self/status"), what="rows")


@pytest.mark.parametrize("make", [_fifo, _zero])
def test_an_out_folder_that_is_a_special_file_says_what_it_is(
    tmp_path: Path, make: Callable[[Path], tuple[Path, str]]
) -> None:
    # `--out FIFO` said "File exists" (mkdir's words), which names no problem a user can see.
    path, kind = make(tmp_path / "out")
    proc = lmmprobe("run", "-m", "first", "--data", _rows(tmp_path), "--out", path,
                    "--db", tmp_path / "db", timeout=120)  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in out, out
    assert f"cannot write to output folder {path}: it is {kind}, not a folder" in out, out
    assert "File exists" not in out, out


def _null(path: Path) -> tuple[Path, str]:
    path.symlink_to("/dev/null")
    return path, "a character device"


@pytest.mark.parametrize("make", [_fifo, _null])
@pytest.mark.parametrize("name", ["results.json", "results.md"])
def test_a_special_file_where_the_run_writes_its_results_is_refused_before_it_runs(
    tmp_path: Path, name: str, make: Callable[[Path], tuple[Path, str]]
) -> None:
    # Re-test 15 #9: a FIFO named results.json in the --out folder hung the run's end for ever
    # (read, then written, with nothing at the other end); a link to /dev/null took the
    # results and the run said it wrote them (a link to /dev/zero: read until memory ran out).
    out = tmp_path / "out"
    out.mkdir()
    path, kind = make(out / name)
    proc = lmmprobe("run", "-m", "first", "--data", "demo,n=2", "--out", out,
                    "--db", tmp_path / "db", timeout=120)  # fmt: skip
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "Traceback" not in said, said
    assert f"{path} is {kind}, not a regular file" in said and "(nothing was run)" in said, said


@pytest.mark.parametrize("make", [_fifo, _zero])
def test_a_run_folder_whose_results_json_is_no_regular_file_says_so_to_report(
    tmp_path: Path, make: Callable[[Path], tuple[Path, str]]
) -> None:
    # Re-test 15 #7: report said the folder "holds neither results.json ..." though it held one.
    folder = tmp_path / "run"
    folder.mkdir()
    path, kind = make(folder / "results.json")
    proc = lmmprobe("report", folder, "-o", tmp_path / "r.html", "--db", tmp_path / "db")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "Traceback" not in said, said
    assert f"{path}: {kind}, not a regular file" in said and "holds neither" not in said, said
