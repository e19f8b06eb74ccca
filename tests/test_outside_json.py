"""Whole JSON files from outside read through the one bounded reader (issue 34, re-test 11 #10).

JSON nested 100,000 deep gave a RecursionError traceback in the Dysca and ReForm-Eval local
copies and in ``report FOLDER`` (an APEx campaign's report.json, a run's results.json); a
report.json of the wrong shape printed a 19-line pydantic dump. Each is now one line naming
the file, through the console script.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe

DEEP = "[" * 100_000 + "]" * 100_000


def _one_error(result: object) -> str:
    stderr: str = result.stderr  # type: ignore[attr-defined]
    assert result.returncode == 2, stderr  # type: ignore[attr-defined]
    assert "Traceback" not in stderr
    (line,) = stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    ("data", "file", "where"),
    [
        # Dysca's list is read an entry at a time: the line names the entry too.
        ("dysca,path={root}", "Dysca.json", ":#1"),
        ("reform-eval-cifar10,path={root}", "huggingface_data/CIFAR10/cifar10_test_10p.json", ""),
    ],
)
def test_a_deep_local_copy_is_one_line(tmp_path: Path, data: str, file: str, where: str) -> None:
    root = tmp_path / "copy"
    (root / "images").mkdir(parents=True)  # Dysca: one of its image folders is there
    path = root / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DEEP, encoding="utf-8")
    line = _one_error(
        lmmprobe(
            "run",
            "-m",
            "random",
            "--data",
            data.format(root=root),
            "--dry-run",
            "--db",
            tmp_path / "db.sqlite",
            timeout=60,
        )
    )
    assert line == f"error: {path}{where}: nested more than 100 levels deep; flatten it"


@pytest.mark.parametrize("name", ["report.json", "results.json"])
def test_report_of_a_deep_folder_is_one_line(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "deep"
    folder.mkdir()
    (folder / name).write_text(DEEP, encoding="utf-8")
    line = _one_error(lmmprobe("report", folder, "--out", tmp_path / "r.html", timeout=60))
    assert f"{folder / name}: nested more than 100 levels deep; flatten it" in line
    assert not (tmp_path / "r.html").exists()


def test_report_names_a_campaign_it_cannot_read_in_one_line(tmp_path: Path) -> None:
    shape = tmp_path / "shape"
    shape.mkdir()
    (shape / "report.json").write_text(
        json.dumps({"experiments": [1, "x", None], "query": 5}), encoding="utf-8"
    )
    deep = tmp_path / "deep"
    deep.mkdir()
    (deep / "report.json").write_text(DEEP, encoding="utf-8")
    out = tmp_path / "r.html"
    done = lmmprobe("report", shape, deep, "--out", out, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "errors.pydantic.dev" not in done.stderr
    assert f"{deep / 'report.json'}: nested more than 100 levels deep" in done.stderr
    (shaped,) = [ln for ln in done.stderr.splitlines() if str(shape) in ln]
    # Named where the folder is read (re-test 11 #10): its query is what every format shows.
    assert f"{shape / 'report.json'} is not an APEx report.json: query: a text is required" in (
        shaped
    )
    assert out.exists()


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(alphabet='[]{}":,0123456789.eE-+ \\ntrufalsn\x00\xff', max_size=300),
        st.integers(0, 5_000).map(lambda n: "[" * n + "]" * n),
        st.binary(max_size=64).map(lambda b: b.decode("latin-1")),
    )
)
def test_the_bounded_reader_gives_a_value_or_one_line(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    """Whatever the bytes, the reader returns a value nested at most 100 levels or refuses in
    one line naming the file; nothing else escapes it."""
    from lmmprobe.data.base import DataError
    from lmmprobe.data.jsonl import read_json_file
    from lmmprobe.data.rows import too_deep

    path = tmp_path_factory.mktemp("fuzz") / "doc.json"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        value = read_json_file(path, what="a test document", cap=1 << 16)
    except DataError as exc:
        message = str(exc)
        assert message.startswith(f"{path}") and "\n" not in message
    else:
        assert too_deep(value) is None
