"""One bad row is that row's problem, named by file:line and field (issue 15, item 13).

Invalid UTF-8, an integer past Python's digit limit and metadata nested 100,000 deep once
aborted a whole non-strict load; ``answer: 1.0`` was read as index 1 and ``choices: []`` as an
open-ended sample. A load where every row is invalid says why (the first 10 reasons), for
JSONL and ``hf:`` sources alike.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.data import DataError, LoadResult, load_source
from lmmprobe.data.rows import MAX_NESTING

GOOD: dict[str, Any] = {
    "images": [],
    "question": "What color is it?",
    "choices": ["red", "blue"],
    "answer": 0,
}


def _lmmprobe(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run(
        [exe, *args], capture_output=True, text=True, timeout=300, cwd=cwd, check=False
    )


def _line(id: str, **fields: Any) -> bytes:
    return json.dumps({"id": id, **GOOD, **fields}).encode()


def _bad_lines() -> list[tuple[str, bytes]]:
    """One line per fault, with the field its problem must name."""
    bad_utf8 = _line("utf8", question="QQ").replace(b'"QQ"', b'"caf\xe9 \xff"')
    long_int = _line("long", answer=0).replace(b'"answer": 0', b'"answer": ' + b"7" * 5000)
    deep = _line("deep", metadata={"x": "DEEP"}).replace(b'"DEEP"', b"[" * 100_000 + b"]" * 100_000)
    return [
        ("question", bad_utf8),
        ("answer", long_int),
        ("metadata", deep),
        ("answer", _line("float", answer=1.0)),
        ("choices", _line("empty", choices=[])),
    ]


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _problems(result: LoadResult) -> dict[int, tuple[str | None, str]]:
    return {p.line or 0: (p.field, p.reason) for p in result.problems}


def test_each_bad_row_is_a_problem_and_the_others_load(tmp_path: Path) -> None:
    bad = _bad_lines()
    lines = [_line("ok-0")]
    for i, (_, text) in enumerate(bad):
        lines += [text, _line(f"ok-{i + 1}")]
    result = load_source(str(_write(tmp_path / "d.jsonl", lines)))
    assert [s.id for s in result.samples] == [f"ok-{i}" for i in range(len(bad) + 1)]
    problems = _problems(result)
    assert result.invalid == len(bad)
    assert [problems[n][0] for n in (2, 4, 6, 8, 10)] == [field for field, _ in bad]
    assert (
        "invalid UTF-8 (byte 0xe9" in problems[2][1] and "save the file as UTF-8" in problems[2][1]
    )
    assert "5000 digits is too long" in problems[4][1]
    assert f"nested more than {MAX_NESTING} levels deep" in problems[6][1]
    assert "got the float 1.0" in problems[8][1]
    assert "at least 2 options" in problems[10][1] and "open" not in problems[10][1]


def test_float_answer_is_refused_not_read_as_an_index(tmp_path: Path) -> None:
    result = load_source(str(_write(tmp_path / "d.jsonl", [_line("f", answer=1.0)])))
    assert result.samples == []
    ((field, reason),) = _problems(result).values()
    assert field == "answer" and "float" in reason


def test_metadata_nested_past_the_limit_but_readable_names_its_path(tmp_path: Path) -> None:
    value: Any = "leaf"
    for _ in range(MAX_NESTING + 5):
        value = [value]
    lines = [_line("deep", metadata={"k": value}), _line("ok")]
    result = load_source(str(_write(tmp_path / "d.jsonl", lines)))
    assert [s.id for s in result.samples] == ["ok"]
    ((field, _),) = _problems(result).values()
    assert field is not None and field.startswith("metadata.k[0]")


def test_strict_mode_stops_at_the_bad_row_with_its_place(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.jsonl", [_line("ok"), _bad_lines()[0][1]])
    with pytest.raises(DataError, match=r"d\.jsonl:2: question: invalid UTF-8"):
        load_source(str(path), strict=True)


def test_cli_skips_bad_rows_and_names_each(tmp_path: Path) -> None:
    bad = _bad_lines()
    lines = [_line("ok-a"), *(text for _, text in bad), _line("ok-b")]
    _write(tmp_path / "d.jsonl", lines)
    proc = _lmmprobe("run", "-d", "d.jsonl", "-m", "first", "--db", "db", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    err = " ".join(proc.stderr.split())  # the terminal may wrap a long problem line
    assert f"skipped {len(bad)} invalid row(s)" in err
    for n, (field, _) in enumerate(bad, start=2):
        assert f"d.jsonl:{n}: {field}: " in err
    assert " 2 " in proc.stdout  # the two good rows were evaluated


def test_cli_every_row_invalid_shows_the_first_ten_reasons(tmp_path: Path) -> None:
    lines = [_line(f"f{i}", answer=float(i % 2)) for i in range(12)]
    path = _write(tmp_path / "all.jsonl", lines)
    proc = _lmmprobe("run", "-d", str(path), "-m", "first", "--db", "db", "-q", cwd=tmp_path)
    assert proc.returncode == 2
    err = proc.stderr
    assert "Traceback" not in err
    assert "no valid samples in" in err and "all 12 row(s) are invalid; the first 10:" in err
    for n in range(1, 11):
        assert f"all.jsonl:{n}: answer: " in err
    assert "all.jsonl:11:" not in err


def test_cli_every_hf_row_invalid_shows_the_reasons(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    data = {
        "id": ["a", "b"],
        "image": ["missing-a.png", "missing-b.png"],
        "question": ["q", "q"],
        "choices": [["x", "y"], ["x", "y"]],
        "answer": [0, 1],
    }
    datasets.Dataset.from_dict(data).to_parquet(str(tmp_path / "d.parquet"))
    env_cache = tmp_path / "hf-cache"
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    proc = subprocess.run(
        [exe, "run", "-d", "hf:d.parquet", "-m", "first", "--db", "db", "-q"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "HF_DATASETS_CACHE": str(env_cache), "HF_DATASETS_OFFLINE": "1"},
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "all 2 row(s) are invalid:" in proc.stderr
    assert "d.parquet[test]:0: image: image file not found: missing-a.png" in proc.stderr
    assert "d.parquet[test]:1: image: image file not found: missing-b.png" in proc.stderr


def test_cli_a_data_url_as_an_image_is_named_as_one_not_as_a_missing_file(tmp_path: Path) -> None:
    # A data: URL was looked for as a file of that name ("image file not found: data:image/
    # png;base64,... (looked for /folder/data:image/png;base64,...)", the whole URL twice).
    import base64
    import io

    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(png, "PNG")
    url = "data:image/png;base64," + base64.b64encode(png.getvalue()).decode() + "A" * 5000
    Image.new("RGB", (4, 4), "red").save(tmp_path / "ok.png")
    _write(tmp_path / "d.jsonl", [_line("a", images=[url]), _line("b", images=["ok.png"])])
    proc = _lmmprobe("run", "-d", "d.jsonl", "-m", "first", "--db", "db", cwd=tmp_path)
    err = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert "skipped 1 invalid row(s)" in err, err
    assert (
        "d.jsonl:1: images[0]: 'data:image/png;base64,iVBORw0KGgoAAAANSU…' is a data: URL; "
        "lmmprobe does not read data: URLs as images: save the picture as a file and give its "
        "path, relative to the data file's folder"
    ) in " ".join(err.split()), err
    assert "image file not found" not in err and "A" * 100 not in err, err


def test_cli_a_url_as_an_image_says_images_are_local_files(tmp_path: Path) -> None:
    # An http(s) URL was looked for as a file of that name: "image file not found:
    # https://... (looked for /folder/https:/...)", which sent the user looking for a file.
    from PIL import Image

    Image.new("RGB", (4, 4), "red").save(tmp_path / "ok.png")
    signed = "https://bob:SecretPass123@cdn.example.com/cat.png?X-Amz-Signature=SIG4567890abc"
    urls = [signed, "http://example.com/" + "a" * 300 + ".png", "s3://bucket/img/dog.jpg"]
    rows = [_line(f"u{i}", images=[url]) for i, url in enumerate(urls)]
    _write(tmp_path / "d.jsonl", [*rows, _line("ok", images=["ok.png"])])
    proc = _lmmprobe("run", "-d", "d.jsonl", "-m", "first", "--db", "db", cwd=tmp_path)
    err = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert "skipped 3 invalid row(s)" in err, err
    advice = (
        "is a URL; lmmprobe reads images from local files only, never from the network: "
        "download the picture first and give its path, relative to the data file's folder"
    )
    assert (
        "d.jsonl:1: images[0]: 'https://bob:[redacted]@cdn.example.com/cat.png?"
        f"X-Amz-Signature=[redacted]' {advice}"
    ) in err, err
    assert f"d.jsonl:2: images[0]: 'http://example.com/{'a' * 61}…' {advice}" in err, err
    assert f"d.jsonl:3: images[0]: 's3://bucket/img/dog.jpg' {advice}" in err, err
    assert "image file not found" not in err and "a" * 100 not in err, err
    assert "SecretPass123" not in err and "SIG4567890abc" not in err, err
