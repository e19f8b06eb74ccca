"""Hostile local copies of HEMM datasets: each is refused in one line naming the file, in bounded time.

A copy's files are outside text: a workbook of millions of empty cells, a pickle nested 200,000
lists deep or declaring a string of 2**40 bytes, JSON nested 100,000 deep, a VCR line of
200,000 minus signs, a FIFO or a link to ``/dev/zero`` in place of a file. Each case is what
the hostile re-test of issue 34 found (retest 5, items 2 to 4), made small.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import pickle
import random
import struct
import time
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe
from tests.data.benchmarks.test_hemm_fixtures import build

from lmmprobe.data import DataError, load_source
from lmmprobe.data.benchmarks.hemm_common import read_plain_pickle
from lmmprobe.data.rows import MAX_NESTING

NESTING = f"nested more than {MAX_NESTING} levels deep"


def _one_line_error(folder: Path, data: str, *why: str) -> None:
    """``run --data DATA,path=FOLDER`` exits 2 with one line naming a file of `folder`."""
    res = lmmprobe("run", "-m", "first", "--data", f"{data},path={folder}", "--db", folder / "db")
    out = res.stdout + res.stderr
    assert res.returncode == 2, out
    assert "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    assert lines[0].startswith(f"error: {folder}/"), out
    for words in why:
        assert words in lines[0], out


# --------------------------------------------------------------------------- Memotion's xlsx

_MEMOTION = "memotion-dataset-7k/memotion_dataset_7k"
_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PARTS = {
    "[Content_Types].xml": (
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="rels" ContentType="application/'
        'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType='
        '"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>'
    ),
    "_rels/.rels": (
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
        'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" '
        f'Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
    ),
    "xl/workbook.xml": (
        f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{_NS}" xmlns:r="{_REL}">'
        '<sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>'
    ),
    "xl/_rels/workbook.xml.rels": (
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
        'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" '
        f'Type="{_REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>'
    ),
}


def _labels(folder: Path, rows: str, *, drop: str | None = None) -> Path:
    """A Memotion copy (the fixture's images) whose labels.xlsx has sheet rows `rows`."""
    build("hemm-memotion", folder)
    sheet = (
        f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{_NS}"><sheetData>'
        f"{rows}</sheetData></worksheet>"
    )
    path = folder / _MEMOTION / "labels.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, text in {**_PARTS, "xl/worksheets/sheet1.xml": sheet}.items():
            if name != drop:
                z.writestr(name, text)
    return path


def _header() -> str:
    names = ("image_name", "text_corrected", "humour")
    cells = "".join(f'<c t="inlineStr"><is><t>{n}</t></is></c>' for n in names)
    return f"<row>{cells}</row>"


def test_a_workbook_row_of_a_million_cells_is_refused_by_the_xlsx_limits(tmp_path: Path) -> None:
    # Two rows of 1,000,000 empty cells, spaced at random so the sheet compresses as a sheet
    # a tool wrote would (under the zip-bomb ratio): pandas took over a minute and 1.4 GB on
    # 2,000,000 before the check; the row's width is now refused from a streamed count.
    rng = random.Random(2)
    empty = "".join("<c/>" + rng.choice(" \n\t") for _ in range(1_000_000))
    _labels(tmp_path / "cells", _header() + f"<row>{empty}</row>" * 2)
    start = time.monotonic()
    _one_line_error(tmp_path / "cells", "hemm-memotion", "labels.xlsx", "more than 16,384 cells")
    assert time.monotonic() - start < 60


def test_a_workbook_without_its_workbook_part_is_one_line(tmp_path: Path) -> None:
    row = '<row><c t="inlineStr"><is><t>image_1.jpg</t></is></c></row>'
    _labels(tmp_path / "m", _header() + row, drop="xl/workbook.xml")
    _one_line_error(tmp_path / "m", "hemm-memotion", "labels.xlsx", "not a readable .xlsx")


def test_a_fifo_or_a_device_in_place_of_labels_xlsx_is_named_as_what_it_is(
    tmp_path: Path,
) -> None:
    build("hemm-memotion", tmp_path / "f")
    os.mkfifo(tmp_path / "f" / _MEMOTION / "labels.xlsx")
    with pytest.raises(DataError, match=r"labels\.xlsx: a FIFO, not a regular file"):
        load_source(f"hemm-memotion,path={tmp_path / 'f'}", strict=True)
    build("hemm-memotion", tmp_path / "z")
    (tmp_path / "z" / _MEMOTION / "labels.xlsx").symlink_to("/dev/zero")
    with pytest.raises(DataError, match=r"labels\.xlsx: a character device, not a regular"):
        load_source(f"hemm-memotion,path={tmp_path / 'z'}", strict=True)


def test_a_memotion_workbook_that_passes_the_checks_still_reads_as_before(tmp_path: Path) -> None:
    row = (
        '<row><c t="inlineStr"><is><t>image_1.jpg</t></is></c>'
        '<c t="inlineStr"><is><t>a caption</t></is></c>'
        '<c t="inlineStr"><is><t>hilarious</t></is></c></row>'
    )
    _labels(tmp_path / "ok", _header() + row)
    samples = load_source(f"hemm-memotion,path={tmp_path / 'ok'}", strict=True).samples
    assert [(s.id, s.question, s.answer) for s in samples] == [
        ("hemm-memotion/image_1.jpg", "a caption", ["hilarious"])
    ]


# --------------------------------------------------------------------------- PathVQA's pickle

_PKL = "pathvqa_images/pvqa/qas/test/test_qa.pkl"


def _s(text: bytes) -> bytes:
    return b"X" + struct.pack("<I", len(text)) + text  # BINUNICODE


def _row(question: bytes) -> bytes:
    """A protocol-4 pickle of ``[{"question": <question's opcodes>, "image": ..., ...}]``."""
    return (
        b"\x80\x04]}"
        + _s(b"question")
        + question
        + b"s"
        + _s(b"image")
        + _s(b"test_0000")
        + b"s"
        + _s(b"answer")
        + _s(b"yes")
        + b"sa."
    )


_DEEP = 200_000
PICKLES = {
    # A question nested 200,000 lists deep: str() of it stopped at the recursion limit.
    "deep": (_row(b"]" * _DEEP + b"a" * (_DEEP - 1)), NESTING),
    # A string declaring 2**40 bytes: the file was read with that size reserved.
    "huge": (_row(b"\x8d" + struct.pack("<Q", 1 << 40) + b"abc"), "expected 1099511627776 bytes"),
    # A dict key set on a list, an item appended to a string.
    "setitem_on_list": (b"\x80\x04]" + _s(b"k") + _s(b"v") + b"s.", "TypeError"),
    "append_on_str": (b"\x80\x04" + _s(b"k") + _s(b"v") + b"a.", "AttributeError"),
    # A dict key that is a tuple nested 1,000,000 deep: hashing it overflowed the C stack.
    "deep_key": (b"\x80\x04}K\x01" + b"\x85" * 1_000_000 + b"K\x02s.", NESTING),
    # A list holding itself (memo GET): refused, as a value shared between places.
    "self": (_row(b"]\x94h\x00a"), "in two places"),
}


def _pathvqa(folder: Path, data: bytes) -> Path:
    build("hemm-pathvqa", folder)
    (folder / _PKL).write_bytes(data)
    return folder


def test_a_pathvqa_pickle_nested_200000_deep_is_one_line(tmp_path: Path) -> None:
    folder = _pathvqa(tmp_path / "deep", PICKLES["deep"][0])
    _one_line_error(folder, "hemm-pathvqa", "test_qa.pkl", NESTING)


@pytest.mark.parametrize("case", sorted(PICKLES))
def test_a_hostile_pathvqa_pickle_is_one_error_naming_the_file(case: str, tmp_path: Path) -> None:
    data, why = PICKLES[case]
    folder = _pathvqa(tmp_path / case, data)
    with pytest.raises(DataError, match=r"test_qa\.pkl: ") as err:
        load_source(f"hemm-pathvqa,path={folder}", strict=True)
    assert why in str(err.value)
    assert "\n" not in str(err.value)


def test_a_plain_pickle_with_shared_strings_still_reads(tmp_path: Path) -> None:
    word = "fibrosis" * 3  # one string object in two places: a memo GET of a scalar
    rows = [{"image": "a", "question": word, "answer": word}, {"image": "b", "question": (1, 2)}]
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        path = tmp_path / f"p{protocol}.pkl"
        path.write_bytes(pickle.dumps(rows, protocol=protocol))
        assert read_plain_pickle(path) == rows


def test_a_pickle_nested_just_within_the_limit_reads(tmp_path: Path) -> None:
    value: list[object] = []
    for _ in range(MAX_NESTING):  # the top level and 100 below it
        value = [value]
    path = tmp_path / "edge.pkl"
    path.write_bytes(pickle.dumps(value))
    assert read_plain_pickle(path) == value
    path.write_bytes(pickle.dumps([value]))
    with pytest.raises(DataError, match=NESTING):
        read_plain_pickle(path)


# --------------------------------------------------------------------------- JSON and VCR's lines

_DEEP_JSON = "[" * 100_000 + "]" * 100_000
JSON_COPIES = {
    # json_lines (NLVR, Hateful Memes, LNCOCO, NLVR2): the line is named.
    "nlvr_array": ("hemm-nlvr", "nlvr/nlvr/dev/dev.json", _DEEP_JSON + "\n", "dev.json:1: "),
    "nlvr_field": (
        "hemm-nlvr",
        "nlvr/nlvr/dev/dev.json",
        '{"directory": ' + _DEEP_JSON + "}\n",
        "dev.json:1: directory: ",
    ),
    # A value deep enough for the 100-level rule but not for the decoder's recursion limit.
    "nlvr_200": ("hemm-nlvr", "nlvr/nlvr/dev/dev.json", "[" * 200 + "]" * 200, "dev.json:1: "),
    # read_json (SLAKE, GQA, OK-VQA, MemeCap, MagicBrush, MM-IMDb, ...): the file is named.
    "slake": ("hemm-slake", "Slake1.0/test.json", _DEEP_JSON, "test.json: "),
    # hemm-vcr reads each line as a Python literal (ast.literal_eval, as HEMM does).
    "vcr_minus": ("hemm-vcr", "vcr_annotations/val.jsonl", "-" * 200_000 + "1\n", "val.jsonl:1: "),
    "vcr_plus": ("hemm-vcr", "vcr_annotations/val.jsonl", "1+" * 100_000 + "1\n", "val.jsonl:1: "),
    "vcr_tuple": ("hemm-vcr", "vcr_annotations/val.jsonl", "(" * 150 + ")" * 150, "val.jsonl:1: "),
}


def _copy(folder: Path, relative: str, text: str) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("case", ["nlvr_array", "vcr_minus"])
def test_json_and_vcr_lines_nested_too_deep_are_one_line_naming_file_and_line(
    case: str, tmp_path: Path
) -> None:
    name, relative, text, where = JSON_COPIES[case]
    _one_line_error(_copy(tmp_path / case, relative, text), name, where + NESTING)


@pytest.mark.parametrize("case", sorted(JSON_COPIES))
def test_hemm_json_readers_apply_the_100_level_rule(case: str, tmp_path: Path) -> None:
    name, relative, text, where = JSON_COPIES[case]
    folder = _copy(tmp_path / case, relative, text)
    start = time.monotonic()
    with pytest.raises(DataError, match=NESTING) as err:
        load_source(f"{name},path={folder}", strict=True)
    assert str(err.value).startswith(str(folder / relative))
    assert where in str(err.value)
    assert time.monotonic() - start < 30


def test_a_vcr_line_that_is_a_python_literal_still_reads_as_hemm_reads_it(tmp_path: Path) -> None:
    from lmmprobe.data.benchmarks.hemm_common import python_literal

    assert python_literal("x:1", "{'a': (1, -2), 'b': [1+2j, None]}") == {
        "a": (1, -2),
        "b": [1 + 2j, None],
    }
    with pytest.raises(DataError, match=r"x:1: not a Python/JSON literal"):
        python_literal("x:1", '{"a": true}')  # JSON, but not a Python literal: as in HEMM


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_fifo_or_dev_zero_in_place_of_a_json_file_is_named_as_what_it_is(
    kind: str, tmp_path: Path
) -> None:
    path = tmp_path / "slake" / "Slake1.0" / "test.json"
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)
        _one_line_error(tmp_path / "slake", "hemm-slake", "test.json: a FIFO, not a regular file")
    else:
        path.symlink_to("/dev/zero")
        with pytest.raises(DataError, match=r"test\.json: a character device, not a regular"):
            load_source(f"hemm-slake,path={tmp_path / 'slake'}", strict=True)


def test_a_missing_file_is_still_not_found(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"test\.json not found: the local copy lacks"):
        load_source(f"hemm-slake,path={tmp_path / 'empty'}", strict=True)


# --------------------------------------------------------------------------- fuzz


@settings(max_examples=300, deadline=None)
@given(
    base=st.lists(
        st.dictionaries(st.sampled_from(["image", "question", "answer"]), st.text(max_size=5)),
        max_size=3,
    ),
    cut=st.integers(min_value=0, max_value=200),
    noise=st.binary(max_size=40),
)
def test_any_mangled_pickle_is_a_value_or_one_data_error(
    base: list[dict[str, str]], cut: int, noise: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    good = pickle.dumps(base)
    path = tmp_path_factory.mktemp("fuzz") / "test_qa.pkl"
    path.write_bytes(good[:cut] + noise + good[cut:])
    try:
        read_plain_pickle(path)
    except DataError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="([{}])-+~*1,:'\"aj. ", max_size=400))
def test_any_line_of_brackets_and_operators_is_a_value_or_one_data_error(line: str) -> None:
    from lmmprobe.data.benchmarks.hemm_common import python_literal

    try:
        python_literal("x:1", line)
    except DataError as exc:
        assert str(exc).startswith("x:1: ") and "\n" not in str(exc)


# --------------------------------------------------------------------------- re-test 6: 8 to 12


def _refused(folder: Path, data: str, *why: str) -> str:
    """``run --data DATA,path=FOLDER --dry-run --strict`` stops at one line holding each of `why`.

    A row's problem is what ``--strict`` stops at: one line naming the file and line it came
    from, with no traceback. Returns that line.
    """
    res = lmmprobe(
        "run", "-m", "first", "--data", f"{data},path={folder}", "--db", folder / "db",
        "--dry-run", "--strict",
    )  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2, out
    assert "Traceback" not in out and "MemoryError" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    assert lines[0].startswith(f"error: {folder}/"), out
    for words in why:
        assert words in lines[0], out
    return lines[0]


def _png_header(path: Path, width: int, height: int) -> None:
    """A PNG whose header says `width` × `height` (a few dozen bytes; its pixels never come)."""
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0"))
    )


def _nlvr2_pair(folder: Path, left: tuple[int, int], right: tuple[int, int]) -> Path:
    """An NLVR2 copy of one row whose two images are plain PNGs of sizes `left` and `right`."""
    from PIL import Image

    images = folder / "nlvr2_images"
    images.mkdir(parents=True)
    Image.new("RGB", left, "red").save(images / "L.png")
    Image.new("RGB", right, "blue").save(images / "R.png")
    row = {"identifier": "x0", "left_url": "http://a/L.png", "right_url": "http://a/R.png",
           "sentence": "s", "label": "True"}  # fmt: skip
    _copy(folder, "nlvr/nlvr2/data/dev.json", json.dumps(row) + "\n")
    return folder


def test_nlvr2s_side_by_side_picture_is_held_to_the_pixel_cap(tmp_path: Path) -> None:
    # Re-test 6 #8: a 1×20,000 and a 20,000×1 PNG (300 bytes) made a 20,000×10,000 picture
    # (1.6 GB); at 60,000 a MemoryError traceback. Refused before anything is resized.
    folder = _nlvr2_pair(tmp_path / "bomb", (1, 20_000), (20_000, 1))
    _refused(
        folder,
        "hemm-nlvr2",
        "dev.json:1: left_url: ",
        f"{folder}/nlvr2_images/L.png (1×20000) and {folder}/nlvr2_images/R.png (20000×1)",
        "is 20000×10000 (200 MP), over the 40 MP decoding limit",
    )


def test_nlvr2s_inputs_are_opened_under_the_pixel_cap(tmp_path: Path) -> None:
    folder = _nlvr2_pair(tmp_path / "big", (1, 1), (1, 1))
    _png_header(folder / "nlvr2_images" / "L.png", 10_000, 5_000)  # 50 MP, a 60-byte file
    _refused(
        folder, "hemm-nlvr2", "left_url: image ", "L.png is 10000×5000 (50 MP), over the 40 MP"
    )


def test_an_nlvr2_pair_within_the_cap_still_makes_hemms_picture(tmp_path: Path) -> None:
    folder = _nlvr2_pair(tmp_path / "ok", (30, 10), (10, 30))
    [sample] = load_source(f"hemm-nlvr2,path={folder}", strict=True).samples
    assert sample.images[0].load().size == (40, 20)  # both resized to 20×20, side by side


@pytest.mark.parametrize("size", [9_000, 14_000])
def test_a_visual_genome_image_over_the_cap_is_its_rows_problem(size: int, tmp_path: Path) -> None:
    # Re-test 6 #9: 14,000² passed Pillow's own limit (a DecompressionBombError traceback for
    # the whole load); 9,000² (81 MP) was decoded whole, past lmmprobe's 40 MP cap.
    folder = tmp_path / "vg"
    _png_header(folder / "visual_genome/VG_100K/1.jpg", size, size)
    _copy(folder, "visual_genome/question_answers.json",
          json.dumps([{"id": 1, "qas": [{"question": "q?", "answer": "a"}]}]))  # fmt: skip
    _refused(
        folder,
        "hemm-visualgenome",
        "question_answers.json:[0]: image: image ",
        "VG_100K/1.jpg is ",
        "over the 40 MP decoding limit",
    )


def test_one_broken_visual_genome_image_leaves_the_others(tmp_path: Path) -> None:
    folder = tmp_path / "vg"
    build("hemm-visualgenome", folder)
    _png_header(folder / "visual_genome/VG_100K/1.jpg", 14_000, 14_000)
    loaded = load_source(f"hemm-visualgenome,path={folder}")
    assert [s.id for s in loaded.samples] == ["hemm-visualgenome/2#0"]
    [problem] = loaded.problems
    assert "VG_100K/1.jpg is 196 MP, over the 40 MP decoding limit" in problem.reason


_VCR_META = {
    "inf": ('{"boxes": [[1e999, 0, 5, 5, 0.9]], "segms": []}', "boxes[0][0]: inf is not a finite"),
    "huge": (
        '{"boxes": [[-1e18, -1e18, 1e18, 1e18, 0.9]], "segms": []}',
        "boxes[0][0]: -1e+18 lies outside the 12×10 image",
    ),
    "text": ('{"boxes": [["a", 0, 5, 5, 0.9]], "segms": []}', "boxes[0][0]: expected a number"),
    "short": ('{"boxes": [[1, 2]], "segms": []}', "boxes[0]: expected 5 numbers (x1, y1, x2, y2"),
    "box_int": ('{"boxes": [7], "segms": []}', "boxes[0]: expected 5 numbers"),
    "point": ('{"boxes": [], "segms": [[[1, 2, 3]]]}', "segms[0][0][0]: expected a point [x, y]"),
    "point_nan": ('{"boxes": [], "segms": [[[[1, NaN]]]]}', "segms[0][0][0][1]: nan is not a"),
    "polygon": ('{"boxes": [], "segms": [[5]]}', "segms[0][0]: expected a list of points"),
    "no_boxes": ('{"segms": []}', "boxes: missing"),
    "array": ("[1, 2]", "expected a JSON object, got a list of 2"),
    "many_points": (
        json.dumps({"boxes": [], "segms": [[[[1, 1]] * 60_000], [[[2, 2]] * 60_000]]}),
        "segms[1][0]: more than 100,000 points",
    ),
}


@pytest.mark.parametrize("case", sorted(_VCR_META))
def test_vcr_metadata_is_checked_before_opencv_draws_it(case: str, tmp_path: Path) -> None:
    # Re-test 6 #10: inf and ±1e18 ended the whole load in tracebacks (OverflowError, cv2.error);
    # other shapes named Python internals ("not enough values to unpack"); 2,000,000 points
    # were drawn one by one.
    text, why = _VCR_META[case]
    folder = tmp_path / case
    build("hemm-vcr", folder)
    (folder / "vcr1images/lsmdc_1054/frame.json").write_text(text)
    _refused(
        folder,
        "hemm-vcr",
        f"val.jsonl:1: metadata_fn: {folder}/vcr1images/lsmdc_1054/frame.json: {why}",
    )


def test_a_vcr_metadata_file_over_its_cap_is_refused_unread(tmp_path: Path) -> None:
    folder = tmp_path / "vcr"
    build("hemm-vcr", folder)
    meta = folder / "vcr1images/lsmdc_1054/frame.json"
    meta.write_text('{"boxes": [], "segms": [' + "[]," * (3 << 20) + "[]]}")
    _refused(folder, "hemm-vcr", f"metadata_fn: {meta}: larger than 8,388,608 bytes")


def test_vcr_boxes_within_the_image_are_still_drawn(tmp_path: Path) -> None:
    folder = tmp_path / "vcr"
    build("hemm-vcr", folder)
    # Coordinates a little past the edge (rounding) and floats, as a detector writes them.
    (folder / "vcr1images/lsmdc_1054/frame.json").write_text(
        '{"boxes": [[-0.5, 1.5, 12.4, 10.2, 0.9]], "segms": [[[[0.5, 0.5], [11.9, 9.9]]]]}'
    )
    [sample] = load_source(f"hemm-vcr,path={folder}", strict=True).samples
    assert sample.images[0].load().size == (12, 10)


def _vcr_drawing(folder: Path, size: tuple[int, int], metadata: object) -> Path:
    """A VCR copy whose one image is a blank `size` picture with `metadata` drawn on it."""
    from PIL import Image

    build("hemm-vcr", folder)
    Image.new("RGB", size, "white").save(folder / "vcr1images/lsmdc_1054/frame.jpg", "PNG")
    meta = folder / "vcr1images/lsmdc_1054/frame.json"
    meta.write_text(json.dumps(metadata))
    return meta


def _diagonals(count: int, size: tuple[int, int]) -> list[object]:
    """`count` outlines, each one line across the whole image."""
    return [[[[0, 0], [size[0] - 1, size[1] - 1]]]] * count


def test_vcr_outlines_longer_than_the_image_has_pixels_are_the_rows_problem(
    tmp_path: Path,
) -> None:
    # Re-test 7 #11: 99,999 points spread over a 6000×6000 image (36 MP, under the decoding
    # cap) were drawn for 44 s and 600 MB a row. A drawing is now at most as many pixels of
    # line as the image holds: here 1,000 lines of 1,562 pixels on a 1200×1000 image.
    size = (1200, 1000)
    meta = _vcr_drawing(tmp_path / "vcr", size, {"boxes": [], "segms": _diagonals(1_000, size)})
    _refused(
        tmp_path / "vcr",
        "hemm-vcr",
        f"val.jsonl:1: metadata_fn: {meta}: segms[768]: the boxes, names and outlines up to here "
        "are more than 1,200,000 pixels of line: a 1200×1000 image",
    )


def test_vcr_boxes_past_the_drawing_budget_are_named(tmp_path: Path) -> None:
    size = (1200, 1000)
    boxes = [[0, 0, size[0] - 1, size[1] - 1, 0.9]] * 400  # 4,396 pixels of edge each
    folder = tmp_path / "vcr"
    meta = _vcr_drawing(folder, size, {"boxes": boxes, "segms": []})
    val = folder / "vcr_annotations/val.jsonl"
    val.write_text(val.read_text().replace('"objects": [', '"objects": [' + '"car", ' * 400, 1))
    _refused(folder, "hemm-vcr", f"metadata_fn: {meta}: boxes[2", "pixels of line")


def test_vcr_outlines_within_the_drawing_budget_are_drawn(tmp_path: Path) -> None:
    size = (1200, 1000)
    _vcr_drawing(tmp_path / "vcr", size, {"boxes": [], "segms": _diagonals(700, size)})
    [sample] = load_source(f"hemm-vcr,path={tmp_path / 'vcr'}", strict=True).samples
    image = sample.images[0].load()
    assert image.size == size and image.getpixel((600, 500)) != (255, 255, 255)


def test_a_vcr_object_name_too_long_to_draw_is_the_rows_problem(tmp_path: Path) -> None:
    # Re-test 7 #11: 30 names of a million characters were drawn glyph by glyph (11.6 s).
    folder = tmp_path / "vcr"
    build("hemm-vcr", folder)
    val = folder / "vcr_annotations/val.jsonl"
    val.write_text(val.read_text().replace('"objects": [', '"objects": ["' + "x" * 300 + '", ', 1))
    line = _refused(
        folder, "hemm-vcr", "val.jsonl:1: objects: objects[0]: a name of 301 characters; HEMM"
    )
    assert "at most 256 characters" in line, line


def test_vcr_rows_of_one_image_share_its_drawing_until_a_file_changes(tmp_path: Path) -> None:
    folder = tmp_path / "vcr"
    build("hemm-vcr", folder)
    val = folder / "vcr_annotations/val.jsonl"
    row = json.loads(val.read_text())
    val.write_text("".join(json.dumps(dict(row, annot_id=f"val-{i}")) + "\n" for i in range(3)))
    samples = load_source(f"hemm-vcr,path={folder}", strict=True).samples
    assert len({s.images[0].content_hash() for s in samples}) == 1
    meta = folder / "vcr1images/lsmdc_1054/frame.json"
    meta.write_text('{"boxes": [], "segms": [[[[0, 0], [11, 9]]]]}')
    again = load_source(f"hemm-vcr,path={folder}", strict=True).samples
    assert again[0].images[0].content_hash() != samples[0].images[0].content_hash()


def test_a_hemm_json_file_over_1_gib_is_refused_unread(tmp_path: Path) -> None:
    # Issue 34: read_json read a copy's JSON document whole whatever its size. A sparse file
    # of 1 GiB and a byte takes no disk; it is refused from its size, before any byte is read.
    path = _copy(tmp_path / "slake", "Slake1.0/test.json", "") / "Slake1.0/test.json"
    with path.open("r+b") as fh:
        fh.truncate((1 << 30) + 1)
    _one_line_error(
        tmp_path / "slake", "hemm-slake", f"{path}: larger than 1,073,741,824 bytes, the most"
    )


def _winoground_image_at(folder: Path, image: str, *, good_rows: int = 0) -> None:
    """A Winoground hub snapshot whose first image value holds no bytes, only the path `image`
    (as the row writes it), followed by `good_rows` rows holding their images' bytes.

    The file is made first: `datasets` sizes a path-only value from its file, in the folder.
    """
    from datasets import Dataset, Features, Image, Value
    from tests.data.benchmarks.conftest import write_hub_snapshot

    names = ("tag", "secondary_tag", "collapsed_tag", "caption_0", "caption_1")
    features = Features(
        {
            "id": Value("int32"),
            "image_0": Image(),
            "image_1": Image(),
            "num_main_preds": Value("int32"),
        }
        | {n: Value("string") for n in names}
    )
    png = folder.parent / "ok.png"
    from PIL import Image as PILImage

    PILImage.new("RGB", (4, 4)).save(png)
    held = {"bytes": png.read_bytes(), "path": None}
    count = 1 + good_rows
    row = {"id": list(range(count)), "num_main_preds": [1] * count}
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.chdir(folder):
        ds = Dataset.from_dict(
            {
                **row,
                **{n: ["a"] * count for n in names},
                "image_0": [{"bytes": None, "path": image}] + [held] * good_rows,
                "image_1": [held] * count,
            },
            features=features,
        )
        write_hub_snapshot(folder, {"test": ds})


def _hub_row_refused(folder: Path, *why: str) -> str:
    """``run --data hemm-winoground,path=FOLDER --dry-run --strict``: one line for row 0."""
    res = lmmprobe(
        "run", "-m", "first", "--data", f"hemm-winoground,path={folder}", "--db", folder / "db",
        "--dry-run", "--strict",
    )  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in out, out
    assert lines[0].startswith(f"error: {folder}[test]:0: image_0: "), out
    for words in why:
        assert words in lines[0], out
    return lines[0]


def test_a_hub_image_file_larger_than_an_image_may_be_is_the_rows_problem(tmp_path: Path) -> None:
    # Issue 34: a hub row's Image value naming a file was read whole (Path.read_bytes); it is
    # now held to the image file cap (4 bytes a pixel at the 40 MP cap, and 16 MiB), unread.
    folder = tmp_path / "wino"
    (folder / "images").mkdir(parents=True)
    with (folder / "images/big.png").open("wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n")  # a picture's signature: the folder's check leaves it
        fh.truncate(300 << 20)
    _winoground_image_at(folder, "images/big.png")
    _hub_row_refused(folder, f"{folder}/images/big.png: larger than ", "the most lmmprobe reads")


def test_a_hub_image_path_naming_a_fifo_is_the_rows_problem(tmp_path: Path) -> None:
    folder = tmp_path / "wino"
    folder.mkdir()
    os.mkfifo(folder / "pipe.png")
    _winoground_image_at(folder, "pipe.png")
    _hub_row_refused(folder, f"{folder}/pipe.png: a FIFO, not a regular file")


def _secret(tmp_path: Path) -> Path:
    """A picture outside the copy's folder, which no row of the copy may have a run read."""
    from PIL import Image as PILImage

    secret = tmp_path / "secret.png"
    PILImage.new("RGB", (4, 4), "red").save(secret)
    return secret


@pytest.mark.parametrize("shape", ["absolute", "climbing"])
def test_a_hub_image_path_leaving_the_copys_folder_is_that_rows_problem(
    tmp_path: Path, shape: str
) -> None:
    # Re-test 7 #12, for HEMM: a copy's Winoground (ScienceQA, VQA-RAD) row naming
    # /tmp/…/secret.png or ../secret.png had the run read that file and send it to the model.
    # As for hf: folders, the row's path must stay inside the copy's folder; the other rows go on.
    folder = tmp_path / "wino"
    secret = _secret(tmp_path)
    written = str(secret) if shape == "absolute" else "../secret.png"
    _winoground_image_at(folder, written, good_rows=1)
    res = lmmprobe(
        "run", "-m", "first", "--data", f"hemm-winoground,path={folder}", "--db", tmp_path / "db"
    )  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 0 and "Traceback" not in out, out
    assert "(4 rows:" in out, out  # the other row's four pairs were asked
    problems = [line for line in out.splitlines() if f"{folder}[test]:0" in line]
    assert len(problems) == 1, out
    assert (
        f"{folder}[test]:0: image_0: image path {written!r} is outside the copy's folder "
        f"{folder}; lmmprobe reads a dataset's images only from inside its own folder"
    ) in problems[0], out
    loaded = load_source(f"hemm-winoground,path={folder}")
    assert [s.id for s in loaded.samples] == [
        f"hemm-winoground/1#i{i}c{j}" for i in (0, 1) for j in (0, 1)
    ]
    assert [(p.field, p.line) for p in loaded.problems] == [("image_0", 0)]


def test_a_hub_image_path_inside_the_copys_folder_is_read(tmp_path: Path) -> None:
    # A relative path resolves in the copy's folder (not the working directory); a link inside
    # the folder is the folder's own, as for hf: folders.
    folder = tmp_path / "wino"
    (folder / "images").mkdir(parents=True)
    (folder / "images/link.png").symlink_to(_secret(tmp_path))
    _winoground_image_at(folder, "images/link.png")
    loaded = load_source(f"hemm-winoground,path={folder}", strict=True)
    assert len(loaded.samples) == 4
    assert loaded.samples[0].images[0].load().getpixel((0, 0))[0] > 200  # red, as JPEG


def test_a_hemm_csv_of_too_many_columns_is_refused_before_pandas_reads_it(tmp_path: Path) -> None:
    # Re-test 6 #11: 1,000,000 columns (9.9 MB) ran 15 s into a MemoryError traceback.
    folder = tmp_path / "ucm"
    header = "Filename,ClassName," + ",".join(f"c{i}" for i in range(20_000))
    _copy(folder, "ucmercedimages/validation.csv", header + "\na.jpg,x" + ",1" * 20_000 + "\n")
    _one_line_error(
        folder, "hemm-ucmerced", "validation.csv:row 1: 20,002 columns; a table has at most 16,384"
    )


def test_a_hemm_csv_pandas_cannot_read_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "s2w"
    build("hemm-screen2words", folder)
    (folder / "screen2words/screen_summaries.csv").write_text("screenId,summary\n1,a\n2,b,c\n")
    _one_line_error(
        folder,
        "hemm-screen2words",
        "screen_summaries.csv: not a readable CSV table (Error tokenizing",
    )


def test_a_cartoons_bad_summary_table_is_that_cartoons_problem(tmp_path: Path) -> None:
    folder = tmp_path / "nyc"
    build("hemm-nycartoon", folder)
    table = folder / "caption-contest-data/summaries/510.csv"
    table.write_text(",".join(f"c{i}" for i in range(17_000)) + "\n")
    loaded = load_source(f"hemm-nycartoon,path={folder}")
    assert [s.id for s in loaded.samples] == [f"hemm-nycartoon/511#{k}" for k in range(5)]
    [problem] = loaded.problems
    assert problem.field == "summaries"
    assert problem.reason.startswith(f"{table}:row 1: 17,000 columns")


def test_the_csv_check_bounds_cells_and_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lmmprobe.data import files
    from lmmprobe.data.files import check_csv

    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    with path.open("rb") as fh:
        check_csv(path, fh)
        assert fh.read() == b"a,b\n1,2\n3,4\n"  # left at its start, for pandas
        fh.seek(0)
        with pytest.raises(DataError, match=r"t\.csv:row 3: more than 5 cells"):
            check_csv(path, fh, cells=5)
    monkeypatch.setattr(files, "MAX_ELEMENT", 3)
    limit = csv.field_size_limit()  # process-wide: check_csv sets it from MAX_ELEMENT
    try:
        with path.open("rb") as fh, pytest.raises(DataError, match=r"t\.csv:1: a line longer"):
            check_csv(path, fh)
    finally:
        csv.field_size_limit(limit)


def test_a_hemm_json_lines_line_over_64_mib_is_refused_unread(tmp_path: Path) -> None:
    # Re-test 6 #12: a 300 MB line was read whole (the JSONL loader stops at 64 MiB).
    folder = tmp_path / "nlvr"
    _copy(folder, "nlvr/nlvr/dev/dev.json", '{"directory": "' + "x" * (64 << 20) + '"}\n')
    _one_line_error(folder, "hemm-nlvr", "dev.json:1: a line longer than 64 MiB (at most 64 MiB")


def test_a_json_integer_too_long_names_its_field_not_python_advice(tmp_path: Path) -> None:
    folder = _copy(tmp_path / "slake", "Slake1.0/test.json", '[{"img_id": ' + "9" * 5000 + "}]")
    line = _one_line_error  # the whole file is refused (read_json), naming the value's place
    line(folder, "hemm-slake", "test.json: [0].img_id: an integer of 5000 digits is too long")
    res = lmmprobe(
        "run", "-m", "first", "--data", f"hemm-slake,path={folder}", "--db", folder / "d"
    )
    assert "set_int_max_str_digits" not in res.stdout + res.stderr


def test_a_screen2words_screen_id_that_is_no_number_names_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "s2w"
    build("hemm-screen2words", folder)
    (folder / "screen2words/screen_summaries.csv").write_text("screenId,summary\nx,a\n")
    _one_line_error(folder, "hemm-screen2words", "screen_summaries.csv:2: screenId: 'x' is not")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(
    boxes=_JSON | st.lists(st.lists(_JSON, max_size=6), max_size=3),
    segms=_JSON | st.lists(st.lists(st.lists(st.lists(_JSON, max_size=3), max_size=3))),
)
def test_any_vcr_metadata_is_drawn_or_one_row_error_naming_the_file(
    boxes: object, segms: object, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from PIL import Image

    from lmmprobe.data.benchmarks.base import RowError
    from lmmprobe.data.benchmarks.hemm.vcr import _vcr_image

    folder = tmp_path_factory.mktemp("vcr")
    Image.new("RGB", (12, 10)).save(folder / "a.jpg")
    meta = folder / "a.json"
    meta.write_text(json.dumps({"boxes": boxes, "segms": segms}))
    try:
        assert _vcr_image(folder / "a.jpg", meta, ["person", "dog"]).size == (12, 10)
    except RowError as exc:
        assert exc.field == "metadata_fn"
        assert exc.reason.startswith(f"{meta}: ") and "\n" not in exc.reason


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=200) | st.text(alphabet=',"\r\n\0ab', max_size=200).map(str.encode))
def test_any_csv_is_read_by_pandas_or_one_data_error(
    raw: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from lmmprobe.data.benchmarks.hemm_common import read_table

    path = tmp_path_factory.mktemp("csv") / "t.csv"
    path.write_bytes(raw)
    try:
        read_table(path)
    except DataError as exc:
        assert str(exc).startswith(f"{path}") and "\n" not in str(exc)


@pytest.mark.parametrize("label", ["7", "-1", '"two"'])
def test_a_vcr_answer_label_naming_no_choice_is_the_rows_problem(
    label: str, tmp_path: Path
) -> None:
    # Re-test 7 #20: 7 said "cannot read this row: IndexError: list index out of range"; -1
    # silently took the last choice as the answer.
    folder = tmp_path / "vcr"
    build("hemm-vcr", folder)
    val = folder / "vcr_annotations/val.jsonl"
    val.write_text(val.read_text().replace('"answer_label": 1', f'"answer_label": {label}', 1))
    line = _refused(folder, "hemm-vcr", "val.jsonl:1: answer_label: ", "is not a choice's number")
    assert "Error" not in line, line
