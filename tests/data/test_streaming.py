"""Sources that yield their samples (issue 35, item 3): `iter_source` beside `load_source`.

A streaming source (jsonl, hf, reform, every benchmark) yields its samples as it reads its rows;
`load_source` is the list of the same stream. Here every one of them gives, streamed, the
samples and the problems (count, first ten, wording, file:line) it gives loaded; duplicate ids
are found the same once their set has moved to SQLite; a source that only loads (demo) is
streamed from its list; and the JSONL reader keeps its bounds streamed: a line of at most
`MAX_LINE` characters (a longer one is that line's problem, skipped in bounded memory) and
``MAX_NESTING`` levels, named by file and line.
"""

from __future__ import annotations

import base64
import io
import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from lmmprobe.data import DataError, load_source
from lmmprobe.data import jsonl as jsonl_source
from lmmprobe.data import rows as rows_module
from lmmprobe.data.base import SampleStream, iter_source
from lmmprobe.data.rows import MAX_NESTING

GOOD: dict[str, Any] = {"images": [], "question": "Which?", "choices": ["a", "b"], "answer": 0}


def _row(id: str, **fields: Any) -> str:
    return json.dumps({"id": id, **GOOD, **fields})


def _jsonl(path: Path, lines: list[str | bytes]) -> Path:
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return path


def _messy_jsonl(path: Path, n: int = 30) -> Path:
    """Valid rows with every kind of problem among them: more than ten, and duplicates."""
    lines: list[str | bytes] = ["# a comment", ""]
    for i in range(n):
        lines.append(_row(f"q{i % 17}", metadata={"i": i}))  # ids 0..16 repeat
        if i % 5 == 0:
            lines.append(_row(f"bad{i}", answer=7))
    lines += ["{not json", b'{"id": "x\xff"}', _row("deep", metadata={"x": [[[[1]]]]})]
    return _jsonl(path, lines)


def _png_b64() -> str:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _assert_same(spec: str, **kw: Any) -> SampleStream:
    loaded = load_source(spec, **kw)
    stream = iter_source(spec, **kw)
    streamed = list(stream)
    assert streamed == loaded.samples
    assert [s.id for s in streamed] == [s.id for s in loaded.samples]
    assert stream.source == loaded.source
    assert stream.invalid == loaded.invalid
    assert stream.problems == loaded.problems
    return stream


@pytest.mark.parametrize("kw", [{}, {"limit": 5}, {"limit": 1000}])
def test_a_jsonl_file_streamed_gives_load_sources_samples_and_problems(
    tmp_path: Path, kw: dict[str, Any]
) -> None:
    path = _messy_jsonl(tmp_path / "d.jsonl")
    stream = _assert_same(str(path), **kw)
    if not kw:
        assert stream.invalid > 10 and len(stream.problems) == 10
        assert str(stream.problems[0]).startswith(f"{path}:4: answer: ")
        assert any("duplicate id 'q0' (first at line 3)" in str(p) for p in stream.problems)


def test_duplicate_ids_past_the_in_memory_set_are_found_in_sqlite_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines: list[str | bytes] = [_row(f"q{i % 40}") for i in range(100)]
    path = _jsonl(tmp_path / "d.jsonl", lines)
    in_memory = load_source(str(path))
    monkeypatch.setattr(rows_module, "IDS_IN_MEMORY", 3)
    stream = iter_source(str(path))
    streamed = list(stream)
    assert streamed == in_memory.samples and len(streamed) == 40
    assert stream.invalid == in_memory.invalid == 60
    assert stream.problems == in_memory.problems
    assert str(stream.problems[0]) == f"{path}:41: id: duplicate id 'q0' (first at line 1)"
    with pytest.raises(DataError, match=r"d\.jsonl:41: id: duplicate id 'q0' \(first at line 1\)"):
        list(iter_source(str(path), strict=True))


def test_a_strict_stream_raises_at_the_bad_row_naming_it(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "d.jsonl", [_row("a"), _row("b"), _row("c", answer=9), _row("d")])
    stream = iter_source(str(path), strict=True)
    got = []
    with pytest.raises(DataError, match=r"d\.jsonl:3: answer: "):
        for sample in stream:
            got.append(sample.id)
    assert got == ["a", "b"]  # the rows before it were given as they were read


def test_errors_known_before_any_row_are_raised_when_the_stream_is_opened(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="data file not found"):
        iter_source(f"jsonl:{tmp_path / 'missing.jsonl'}")
    with pytest.raises(DataError, match="takes no options"):
        iter_source(f"jsonl:{_jsonl(tmp_path / 'd.jsonl', [_row('a')])},x=1")


def test_a_stream_is_read_once(tmp_path: Path) -> None:
    stream = iter_source(str(_jsonl(tmp_path / "d.jsonl", [_row("a")])))
    assert [s.id for s in stream] == ["a"]
    with pytest.raises(RuntimeError, match="already read"):
        list(stream)


def test_a_source_that_only_loads_is_streamed_from_its_list() -> None:
    stream = _assert_same("demo,n=20,seed=3")
    assert stream.invalid == 0


def test_an_hf_dataset_streamed_gives_load_sources_samples_and_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets = pytest.importorskip("datasets")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(buf, format="PNG")
    n = 6
    ds = datasets.Dataset.from_dict(
        {
            "id": ["a", "b", "a", "c", "d", "e"],
            "image": [{"bytes": buf.getvalue(), "path": None}] * n,
            "question": [f"q{i}" for i in range(n)],
            "choices": [["x", "y"]] * n,
            "answer": [0, 1, 0, 5, 1, 0],
        }
    ).cast_column("image", datasets.Image())
    path = tmp_path / "d.parquet"
    ds.to_parquet(str(path))
    stream = _assert_same(f"hf:{path}")
    assert stream.invalid == 2  # the duplicate "a" and the answer out of range
    _assert_same(f"hf:{path}", limit=2)


def test_a_reform_file_streamed_gives_load_sources_samples_and_problems(tmp_path: Path) -> None:
    img = _png_b64()
    entries = [
        {"sample_id": i % 3, "image": img, "question": "Which?", "answer": i % 2,
         "answer_options": ["yes", "no"]}
        for i in range(6)
    ]  # fmt: skip
    entries.append({"sample_id": 9, "image": img, "question": "Which?", "answer": 5,
                    "answer_options": ["yes", "no"]})  # fmt: skip
    path = tmp_path / "r.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    stream = _assert_same(f"reform:{path}")
    assert stream.invalid == 4


def _reform_clone(root: Path) -> Path:
    """A ReForm-Eval-Data clone holding two members' files (the rest of the suite missing)."""
    img = _png_b64()

    def write(relative: str, doc: object) -> None:
        path = root / "huggingface_data" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc), encoding="utf-8")

    medic = [{"img": img, "options": ["flood", "fire", "none"], "gt": i % 4} for i in range(5)]
    write("MEDIC/disaster-type-selection-sampled.json", {"dataset_name": "MEDIC", "data": medic})
    clevr = [{"question_id": f"c{i % 2}", "image": img, "question": "Is the cube left?",
              "answer": 0, "answer_options": ["yes", "no"]} for i in range(3)]  # fmt: skip
    write("CLEVR/clevr_core_multiple_choice.json",
          {"dataset_name": "CLEVR", "instructs": ["x"], "data": clevr})  # fmt: skip
    return root


@pytest.mark.parametrize("kw", [{}, {"limit": 3}])
def test_benchmarks_and_a_suite_streamed_give_load_sources_samples_and_problems(
    tmp_path: Path, kw: dict[str, Any]
) -> None:
    clone = _reform_clone(tmp_path / "ReForm-Eval-Data")
    member = _assert_same(f"reform-eval-medic,path={clone}", **kw)
    _assert_same(f"reform-eval-clevr,path={clone}", **kw)
    if not kw:
        assert member.invalid == 1  # gt 3 of three options
    suite = _assert_same(f"reform-eval,path={clone}", **kw)
    # The members without a copy are the suite's problems, as when it is loaded whole.
    assert suite.invalid > (10 if not kw else 0) and len(suite.problems) == min(10, suite.invalid)


def test_dysca_released_json_streamed_gives_load_sources_samples(tmp_path: Path) -> None:
    fixture = Path(__file__).parent / "benchmarks" / "fixtures" / "dysca" / "Dysca.json"
    entries = json.loads(fixture.read_text(encoding="utf-8"))
    root = tmp_path / "dysca"
    root.mkdir()
    (root / "Dysca.json").write_text(json.dumps(entries), encoding="utf-8")
    for folder in ("Dysca", "Dysca_corruption", "Dysca_print_attack"):
        (root / folder).mkdir()
    for e in entries:
        Image.new("RGB", (8, 8), "red").save(root / "Dysca" / Path(e["images"][0]).name)
    assert list(_assert_same(f"dysca,path={root},split=clean").problems) is not None
    assert load_source(f"dysca,path={root},split=clean").samples


def test_a_streamed_jsonl_file_holds_one_sample_at_a_time(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "big.jsonl",
        [_row(f"q{i}", metadata={"note": "x" * 500, "i": i}) for i in range(20_000)],
    )
    list(iter_source(str(_jsonl(tmp_path / "warm.jsonl", [_row("w")]))))  # registry imported
    tracemalloc.start()
    try:
        count = sum(1 for _ in iter_source(str(path)))
        streamed = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        loaded = len(load_source(str(path)).samples)
        whole = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == loaded == 20_000
    # Loaded, 20,000 samples of ~1 KiB are held at once; streamed, only the set of their ids.
    assert whole > 20 * 2**20
    assert streamed < whole / 5


# --- the JSONL reader's bounds, streamed -----------------------------------------------------


def test_a_line_longer_than_the_cap_is_that_lines_problem_and_the_rest_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl_source, "MAX_LINE", 200)
    monkeypatch.setattr(jsonl_source, "_SKIP", 7)
    long = _row("long", question="x" * 1000)
    path = _jsonl(tmp_path / "d.jsonl", [_row("a"), long, _row("b"), "[" * 5000, _row("c")])
    stream = _assert_same(str(path))
    assert stream.invalid == 2
    assert str(stream.problems[0]) == (
        f"{path}:2: a line longer than 0 MiB (at most 0 MiB a row)"
    )  # the cap patched to 200 characters reads as 0 MiB
    with pytest.raises(DataError, match=r"d\.jsonl:2: a line longer than"):
        list(iter_source(str(path), strict=True))


def test_a_file_with_no_newline_in_sight_is_read_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl_source, "MAX_LINE", 1 << 16)
    path = tmp_path / "one.jsonl"
    path.write_text(_row("a") + "\n" + "7" * (16 << 20), encoding="utf-8")  # no newline
    tracemalloc.start()
    try:
        stream = iter_source(str(path))
        ids = [s.id for s in stream]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ids == ["a"] and stream.invalid == 1
    assert str(stream.problems[0]).startswith(f"{path}:2: a line longer than")
    assert peak < 6 << 20  # the 16 MiB line was never held (a 1 MiB piece at a time)


def test_a_real_line_over_64_mib_is_refused_by_run_naming_file_and_line(tmp_path: Path) -> None:
    from tests.console import lmmprobe

    assert jsonl_source.MAX_LINE == 64 << 20
    big = _row("huge", question="x" * (jsonl_source.MAX_LINE + 10))
    path = _jsonl(tmp_path / "d.jsonl", [_row("a"), big, _row("b")])
    proc = lmmprobe("run", "-d", path, "-m", "first", "--db", tmp_path / "db", "-q")
    assert proc.returncode == 0, proc.stderr
    err = " ".join(proc.stderr.split())
    assert "skipped 1 invalid row(s)" in err
    assert "d.jsonl:2: a line longer than 64 MiB (at most 64 MiB a row)" in err


def test_nesting_past_the_cap_is_named_by_file_line_and_field_when_streamed(
    tmp_path: Path,
) -> None:
    deep = _row("deep", metadata={"x": "D"}).replace('"D"', "[" * (MAX_NESTING + 5) + "]" * (
        MAX_NESTING + 5))  # fmt: skip
    very = _row("very", metadata={"x": "D"}).replace('"D"', "[" * 100_000 + "]" * 100_000)
    path = _jsonl(tmp_path / "d.jsonl", [deep, very, _row("ok")])
    stream = _assert_same(str(path))
    assert [(p.line, p.field) for p in stream.problems] == [
        (1, "metadata.x[0]..."),
        (2, "metadata"),
    ]
    assert all(f"{MAX_NESTING} levels" in p.reason for p in stream.problems)


_PIECES = st.sampled_from(
    [
        _row("a"),
        _row("b", answer=1),
        _row("a", answer=1),  # a duplicate of "a"
        _row("c", answer=3),
        _row("d", metadata={"k": [1, {"z": None}]}),
        "{",
        "[]",
        "null",
        "# comment",
        "",
        "   ",
        '{"id": 1e999}',
        '{"id": "\\ud800"}',
        "[" * 300,
        _row("deep", metadata={"x": 0}).replace("0}", "[" * 150 + "]" * 150 + "}"),
        _row("long", question="y" * 400),
        '"' + "z" * 700,
    ]
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.one_of(_PIECES, st.text(max_size=40)), max_size=25),
    cap=st.sampled_from([64, 300, 1 << 20]),
    junk=st.binary(max_size=30),
)
def test_fuzz_the_streaming_reader_keeps_its_bounds_and_names_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[str], cap: int, junk: bytes
) -> None:
    monkeypatch.setattr(jsonl_source, "MAX_LINE", cap)
    monkeypatch.setattr(rows_module, "IDS_IN_MEMORY", 2)
    path = tmp_path / "f.jsonl"
    path.write_bytes(
        "\n".join(x.replace("\n", " ").replace("\r", " ") for x in lines).encode(
            "utf-8", "surrogatepass"
        )
        + b"\n"
        + junk
    )
    stream = _assert_same(str(path))
    n_lines = len(path.read_bytes().splitlines()) + 1
    for problem in stream.problems:
        assert problem.source == str(path)
        assert problem.line is not None and 1 <= problem.line <= n_lines
        assert str(problem).startswith(f"{path}:{problem.line}: ")
    try:
        list(iter_source(str(path), strict=True))
    except DataError as exc:
        assert str(exc).startswith(f"{path}:")
    else:
        assert stream.invalid == 0


def _change(path: Path, how: str) -> None:
    if how == "truncated":  # cut inside a line, behind what the reader has buffered
        with path.open("r+b") as f:
            f.truncate(path.stat().st_size // 2)
    elif how == "appended":
        with path.open("ab") as f:
            f.write((_row("late") + "\n").encode())
    elif how == "rewritten in place":  # same size, mtime set back (``cp -p``, ``rsync -t``)
        before = path.stat()
        data = path.read_bytes()
        with path.open("r+b") as f:
            f.seek(data.index(b'"s9500"'))
            f.write(b'"Z9500"')
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    else:  # replaced under its name by another file (an editor's save, a copy)
        other = path.with_suffix(".new")
        _jsonl(other, [_row(f"n{i}") for i in range(10)])
        other.replace(path)


@pytest.mark.parametrize("how", ["truncated", "appended", "replaced", "rewritten in place"])
def test_a_file_changed_while_it_is_streamed_is_refused_not_read_shorter(
    tmp_path: Path, how: str
) -> None:
    # Re-test 6 #15: cut to 300 KB after 5,000 of 10,001 rows, the stream ended at row 5,053
    # with one "invalid JSON" problem: a run would be recorded complete on half the data.
    path = _jsonl(tmp_path / "chg.jsonl", [_row(f"s{i}") for i in range(10_001)])
    stream = iter_source(str(path))
    with pytest.raises(DataError) as caught:
        for n, _ in enumerate(stream, start=1):
            if n == 5000:
                _change(path, how)
    assert str(caught.value) == f"{path} changed while it was read; run again"


def test_a_file_left_alone_is_streamed_whole(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "same.jsonl", [_row(f"s{i}") for i in range(10_001)])
    assert sum(1 for _ in iter_source(str(path))) == 10_001
