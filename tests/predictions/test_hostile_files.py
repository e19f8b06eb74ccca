"""Hostile prediction files (issue 34, items 6 and 7), through the ``lmmprobe`` console script.

Each file of the issue is built here (zip bombs are a few kilobytes of deflated repetition):
spreadsheets too large once unpacked, broken or carrying XML entities; JSON nested 1,000 deep;
a lmms-eval ``*_results.json`` that is not an object; an MMMU folder whose ``output.json`` is a
link to ``/dev/zero``, a FIFO or a link out of the folder; an over-long JSON Lines line; an
over-long prediction. Each ends in one line naming the file and what is wrong (or, for the
over-long prediction, an error row while the other rows are read), within a generous time
bound, never a traceback or a hang.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe
from tests.fresh_python import run_fresh

from lmmprobe.data.files import (
    XLSX_LIMITS,
    UnreadableFile,
    XlsxLimits,
    _TagBound,
    _XlsxOverLimit,
    check_xlsx,
)
from lmmprobe.data.rows import MAX_NESTING
from lmmprobe.predictions._stream import iter_table

NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006"
SHEET = (
    f'<worksheet xmlns="{NS}"><sheetData>'
    '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c>'
    '<c r="C1" t="inlineStr"><is><t>answer</t></is></c></row>'
    '<row r="2"><c r="A2"><v>1</v></c><c r="B2" t="s"><v>2</v></c>'
    '<c r="C2" t="inlineStr"><is><t>A</t></is></c></row>'
    "</sheetData></worksheet>"
)
"""A VLMEvalKit table of one row: ``index`` 1, ``prediction`` the third shared string."""
SST = f'<sst xmlns="{NS}"><si><t>index</t></si><si><t>prediction</t></si>'.encode()


def _parts() -> dict[str, str]:
    """The parts of a minimal workbook with a shared-string table (Excel's own layout)."""
    ct = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    return {
        "[Content_Types].xml": (
            f'<Types xmlns="{PKG}/content-types">'
            f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/xl/workbook.xml" ContentType="{ct}.sheet.main+xml"/>'
            f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{ct}.worksheet+xml"/>'
            f'<Override PartName="/xl/sharedStrings.xml" ContentType="{ct}.sharedStrings+xml"/>'
            "</Types>"
        ),
        "_rels/.rels": (
            f'<Relationships xmlns="{PKG}/relationships"><Relationship Id="rId1" '
            f'Type="{REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ),
        "xl/workbook.xml": (
            f'<workbook xmlns="{NS}" xmlns:r="{REL}"><sheets>'
            '<sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>'
        ),
        "xl/_rels/workbook.xml.rels": (
            f'<Relationships xmlns="{PKG}/relationships">'
            f'<Relationship Id="rId1" Type="{REL}/worksheet" Target="worksheets/sheet1.xml"/>'
            f'<Relationship Id="rId2" Type="{REL}/sharedStrings" Target="sharedStrings.xml"/>'
            "</Relationships>"
        ),
        "xl/worksheets/sheet1.xml": SHEET,
    }


def xlsx(path: Path, shared: Iterator[bytes], sheet: str = SHEET) -> Path:
    """A workbook at `path` whose shared-string table is the concatenated `shared` blocks.

    Written as a stream, so a table of a gigabyte costs the test no memory.
    """
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as book:
        for name, text in (_parts() | {"xl/worksheets/sheet1.xml": sheet}).items():
            book.writestr(name, text)
        with book.open("xl/sharedStrings.xml", "w", force_zip64=True) as part:
            for block in shared:
                part.write(block)
    return path


def _one_string(size: int) -> Iterator[bytes]:
    yield SST + b"<si><t>"
    for _ in range(size >> 20):
        yield b"A" * (1 << 20)
    yield b"</t></si></sst>"


def _tiny_strings(count: int, *, unique: bool) -> Iterator[bytes]:
    yield SST + b"<si><t>A</t></si>"
    step = 100_000
    for start in range(0, count, step):
        if unique:
            yield b"".join(b"<si><t>%d</t></si>" % i for i in range(start, start + step))
        else:
            yield b"<si><t/></si>" * step
    yield b"</sst>"


def _entities(dtd: str, text: str) -> Iterator[bytes]:
    yield f'<?xml version="1.0"?><!DOCTYPE sst [{dtd}]>'.encode() + SST
    yield f"<si><t>{text}</t></si></sst>".encode()


def _laughs() -> str:
    """The billion laughs: ten entities each ten times the one before."""
    defs = ['<!ENTITY a0 "lol">']
    defs += [f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10)]
    return "".join(defs)


def _import(path: Path, tmp_path: Path, *more: str, timeout: float = 120) -> tuple[int, str]:
    done = lmmprobe(
        "import", path, "--model", "m", "--db", tmp_path / "runs.db", *more, timeout=timeout
    )
    return done.returncode, done.stdout + done.stderr


def _one_line_error(code: int, out: str, path: Path, *why: str) -> None:
    assert code == 2, out
    assert "Traceback" not in out, out
    assert "no reader recognises" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    assert lines[0].startswith(f"error: {path}"), out
    for words in why:
        assert words in lines[0], out


# --------------------------------------------------------------------------- spreadsheets


def _peak_rss_mib(*args: str | Path) -> tuple[int, str, float]:
    """Run the console script in a child of a child and report the grandchild's peak RSS."""
    exe = Path(sys.executable).parent / "lmmprobe"
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(done.returncode, peak)\n"
        "sys.stderr.write(done.stdout + done.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(exe), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=320,
        check=False,
    )
    code, peak = done.stdout.split()
    return int(code), done.stderr, float(peak)


@pytest.mark.parametrize("reader", [(), ("--reader", "vlmevalkit")])
def test_a_64_mib_shared_string_in_70_kb_is_refused_from_the_zip_directory(
    tmp_path: Path, reader: tuple[str, ...]
) -> None:
    # The file: 70 KB holding one 64 MiB shared string took 2.5 GB to read.
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", _one_string(64 << 20))
    assert book.stat().st_size < 100_000
    code, out, peak = _peak_rss_mib(
        "import", book, "--model", "m", "--db", tmp_path / "runs.db", *reader
    )
    _one_line_error(code, out, book, "xl/sharedStrings.xml", "zip bomb")
    assert peak < 1024, f"peak RSS {peak:.0f} MiB"


def test_a_gigabyte_in_a_megabyte_is_refused_before_openpyxl_reads_it(tmp_path: Path) -> None:
    # 1 MB holding 1 GiB ran four minutes into a MemoryError.
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", _one_string(1 << 30))
    assert book.stat().st_size < 2_000_000
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit", timeout=60)
    _one_line_error(code, out, book, "unpacks to 1,073,741,", "at most 256 MiB per part")


def test_thirty_million_tiny_shared_strings_are_refused_at_once(tmp_path: Path) -> None:
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", _tiny_strings(30_000_000, unique=False))
    code, out = _import(book, tmp_path, timeout=60)
    _one_line_error(code, out, book, "xl/sharedStrings.xml")


def test_more_shared_strings_than_the_limit_are_refused_even_when_they_compress_plainly(
    tmp_path: Path,
) -> None:
    # Distinct strings compress as a tool's text does: the count itself is what is refused.
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", _tiny_strings(1_000_000, unique=True))
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit", timeout=60)
    _one_line_error(code, out, book, "more than 1,000,000 shared strings")


_PICK = random.Random(34)
"""Random whitespace between elements, so they compress as a tool's text does (not 1,000 times:
the zip-bomb check would refuse them first)."""


def _gap() -> str:
    return _PICK.choice(" \n\t")


def _prefixed_strings(count: int) -> Iterator[bytes]:
    """`count` empty shared strings under namespace prefixes, non-ASCII ones among them."""
    prefixes = ["é", "ж", "x", "_中"]
    declared = " ".join(f'xmlns:{p}="{NS}"' for p in prefixes).encode()
    yield f'<sst xmlns="{NS}" '.encode() + declared + b"><si><t>index</t></si>"
    yield b"<si><t>prediction</t></si><si><t>A</t></si>"
    step = 100_000
    for _ in range(0, count, step):
        yield "".join(f"<{_PICK.choice(prefixes)}:si/>{_gap()}" for _ in range(step)).encode()
    yield b"</sst>"


@pytest.mark.parametrize("reader", [(), ("--reader", "vlmevalkit")])
def test_shared_strings_are_counted_whatever_their_namespace_prefix(
    tmp_path: Path, reader: tuple[str, ...]
) -> None:
    # The re-test's file: 10M ``<é:si/>`` ran 68 s into 1.0 GB past a count of ``<si`` only.
    most = XLSX_LIMITS.shared_strings
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", _prefixed_strings(most))
    code, out = _import(book, tmp_path, *reader, timeout=60)
    _one_line_error(code, out, book, f"more than {most:,} shared strings", "sharedStrings.xml")


def _sheet(rows: Iterator[str]) -> str:
    head, _, _ = SHEET.partition('<row r="2">')
    return head + "".join(rows) + "</sheetData></worksheet>"


def _cells(row: int, count: int) -> str:
    empty = "".join(f"<c/>{_gap()}" for _ in range(count - 1))
    return f'<row r="{row}"><c r="A{row}"><v>{row}</v></c>{empty}</row>'


def _fine_strings() -> Iterator[bytes]:
    return iter([SST + b"<si><t>A</t></si></sst>"])


def test_a_row_wider_than_the_limit_is_refused_naming_the_row(tmp_path: Path) -> None:
    wide = XLSX_LIMITS.row_cells + 1
    sheet = _sheet(iter([_cells(2, 3), _cells(3, wide), _cells(4, 3)]))
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", _fine_strings(), sheet)
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit", timeout=60)
    _one_line_error(code, out, book, "row 3 of xl/worksheets/sheet1.xml", "16,384 cells")


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_a_csv_wider_than_a_spreadsheet_is_refused_at_its_header(
    tmp_path: Path, suffix: str
) -> None:
    # 2,000,000 columns (8 MB) took 46 s and 415 MB before "row 2: id: missing"; an .xlsx
    # row stops at 16,384 cells.
    sep = "\t" if suffix == ".tsv" else ","
    wide = 200_000
    table = tmp_path / f"answers{suffix}"
    table.write_text(
        sep.join(f"c{i}" for i in range(wide)) + "\n" + sep.join("1" for _ in range(wide)) + "\n"
    )
    code, out = _import(table, tmp_path, "--field", "id=c0,prediction=c1,gold=c2", timeout=60)
    _one_line_error(code, out, table, ":1: 200,000 columns", "at most 16,384")


def test_a_csv_column_named_twice_is_refused_at_its_header(tmp_path: Path) -> None:
    # Re-test 6: `id,prediction,prediction` was imported with the last column's answer, while
    # a JSON key given twice is refused.
    table = tmp_path / "answers.csv"
    table.write_text("id,prediction,prediction,gold\nq1,A,B,A\n")
    code, out = _import(table, tmp_path, "--field", "id=id,prediction=prediction,gold=gold")
    _one_line_error(code, out, table, ":1: column 'prediction' is given twice (columns 2 and 3)")


def test_an_xlsx_column_named_twice_is_refused_at_its_header_as_a_csv_is(tmp_path: Path) -> None:
    # The .csv check (re-test 6) missed the workbook: its row dict kept the last column too.
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["index", "question", "A", "B", "answer", "prediction", "prediction"])
    book.active.append([1, "q", "x", "y", "A", "A", "B"])
    table = tmp_path / "Model_MMBench_DEV_EN.xlsx"
    book.save(table)
    code, out = _import(table, tmp_path, "--reader", "vlmevalkit")
    _one_line_error(code, out, table, ":1: column 'prediction' is given twice (columns 6 and 7)")


def test_three_million_empty_cells_in_one_row_are_refused_in_bounded_memory(
    tmp_path: Path,
) -> None:
    # The re-test's file: 1.8 MB, a 30 MB sheet inside every size limit; 38 s and 1.7 GB.
    sheet = _sheet(iter([_cells(2, 3_000_000)]))
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", _fine_strings(), sheet)
    started = time.monotonic()
    code, out, peak = _peak_rss_mib(
        "import", book, "--model", "m", "--db", tmp_path / "runs.db", "--reader", "vlmevalkit"
    )
    assert time.monotonic() - started < 60  # a generous bound: about 3 s
    _one_line_error(code, out, book, "row 2 of xl/worksheets/sheet1.xml", "16,384 cells")
    assert peak < 400, f"peak RSS {peak:.0f} MiB"


def test_more_cells_than_the_limit_are_refused(tmp_path: Path) -> None:
    width = 20
    rows = (_cells(r, width) for r in range(2, XLSX_LIMITS.cells // width + 3))
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", _fine_strings(), _sheet(rows))
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit", timeout=120)
    _one_line_error(code, out, book, f"more than {XLSX_LIMITS.cells:,} cells")


def test_elements_nested_past_the_limit_are_refused(tmp_path: Path) -> None:
    deep = MAX_NESTING + 1
    sheet = _sheet(iter(['<row r="2"><c r="A2">' + "<is>" * deep + "</is>" * deep + "</c></row>"]))
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", _fine_strings(), sheet)
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit", timeout=60)
    _one_line_error(code, out, book, f"more than {MAX_NESTING} deep")


def _wide_tag(attributes: int, value: str) -> str:
    """A sheet whose one cell's tag has `attributes` attributes, each holding `value`."""
    many = " ".join(f'a{i}="{value}"' for i in range(attributes))
    cells = (
        f'<c r="A2" {many}><v>2</v></c><c r="B2" t="s"><v>2</v></c>'
        '<c r="C2" t="inlineStr"><is><t>A</t></is></c>'
    )
    return _sheet(iter([f'<row r="2">{cells}</row>']))


def _noise(size: int) -> str:
    """`size` hexadecimal digits that compress about twice (not a zip bomb)."""
    return random.Random(size).randbytes(size // 2).hex()


WIDE_TAGS: dict[str, tuple[Callable[[], str], str]] = {
    # 500,000 attributes in one tag (6 MB, 1 MB zipped): expat took 15 s over it, and 100 s
    # over 2,000,000 (expat 2.5: it parses a tag again each time more of it is fed, and slows
    # with each attribute; a 256 MiB part would take hours); refused in 0.2 s. A ">" in each
    # value does not end the tag.
    "attributes": (lambda: _wide_tag(500_000, ">"), "more than 10,000 attributes"),
    "bytes": (
        lambda: _sheet(iter([f'<row r="2"><c r="A2" x="{_noise(3 << 20)}"/></row>'])),
        f"a tag of more than {XLSX_LIMITS.tag:,} bytes",
    ),
}


@pytest.mark.parametrize("kind", sorted(WIDE_TAGS))
def test_a_tag_too_long_or_with_too_many_attributes_is_refused_before_expat_reads_it(
    tmp_path: Path, kind: str
) -> None:
    make, why = WIDE_TAGS[kind]
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", _fine_strings(), make())
    started = time.monotonic()
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit", timeout=120)
    assert time.monotonic() - started < 60  # a generous bound: about 2 s
    _one_line_error(code, out, book, "xl/worksheets/sheet1.xml", why)


def test_long_texts_and_tags_within_the_limits_still_import(tmp_path: Path) -> None:
    # A 2 MiB text (quotes and ">" in it) makes a long gap between two "<": the tag before it
    # is measured and passes; so does a tag of 1,000 attributes.
    text = '"> '.join(_noise(1_000) for _ in range(2_000)).encode()
    shared = iter([SST + b"<si><t>A</t></si><si><t>" + text + b"</t></si></sst>"])
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", shared, _wide_tag(1_000, "x"))
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit")
    assert code == 0, out
    assert "Traceback" not in out, out


_SMALL = XlsxLimits(tag=60, attributes=4)
_VALUE = st.text(alphabet="ab>' ", max_size=12)
_TAGS = st.builds(
    lambda name, values: f"<{name}" + "".join(f' a{i}="{v}"' for i, v in enumerate(values)),
    st.sampled_from(["c", "x:si", "row"]),
    st.lists(_VALUE, max_size=7),
)
_PIECES = st.lists(st.one_of(_TAGS, st.text(alphabet="ab >'\"", max_size=80)), max_size=12)


@settings(max_examples=300, deadline=None)
@given(_PIECES, st.lists(st.integers(min_value=0), max_size=6))
def test_the_tag_bound_judges_the_tags_wherever_the_blocks_are_cut(
    pieces: list[str], cuts: list[int]
) -> None:
    # A text is a piece without "<"; a tag ends with ">" (a ">" inside its quotes does not).
    doc = "".join(p + ">" if p.startswith("<") else p for p in pieces).encode()
    tags = [p for p in pieces if p.startswith("<")]
    over = any(len(t) > _SMALL.tag or t.count("=") > _SMALL.attributes for t in tags)
    points = sorted({0, len(doc), *(c % (len(doc) + 1) for c in cuts)})
    bound = _TagBound(Path("M_D.xlsx"), "xl/sharedStrings.xml", _SMALL)
    try:
        for start, end in itertools.pairwise(points):
            bound.feed(doc[start:end])
    except _XlsxOverLimit:
        assert over, doc
    else:
        assert not over, doc


# Re-test 2 (issue 34): sheets the scan skipped by their first bytes, rich-text runs, and many
# small parts each under the per-part ratio check.


def _workbook(path: Path, parts: dict[str, str | bytes]) -> Path:
    """A workbook at `path`: `_parts()` and a fine shared-string table, with `parts` over them.

    A part named ``*.png`` is stored, not deflated (random bytes, like a real image).
    """
    every: dict[str, str | bytes] = {
        **_parts(),
        "xl/sharedStrings.xml": SST + b"<si><t>A</t></si></sst>",
        **parts,
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as book:
        for name, data in every.items():
            stored = zipfile.ZIP_STORED if name.endswith(".png") else None
            book.writestr(name, data, compress_type=stored)
    return path


HIDDEN_SHEETS: dict[str, Callable[[str], bytes]] = {
    # The re-test's files: a 3,000,000-cell row read by openpyxl in 104 s and 1.7 GB (UTF-16),
    # more than 120 s and 1.0 GB (spaces), where the same row in plain UTF-8 was refused.
    "utf-16-be without a byte-order mark": lambda sheet: sheet.encode("utf-16-be"),
    "utf-16-be after spaces": lambda sheet: (" " * 1_000 + sheet).encode("utf-16-be"),
    "after a megabyte of spaces": lambda sheet: (" " * (1 << 20) + "\n" + sheet).encode(),
}


@pytest.mark.parametrize("kind", sorted(HIDDEN_SHEETS))
def test_a_sheet_is_counted_whatever_its_first_bytes(tmp_path: Path, kind: str) -> None:
    sheet = HIDDEN_SHEETS[kind](_sheet(iter([_cells(2, XLSX_LIMITS.row_cells + 1)])))
    book = _workbook(tmp_path / "Model_MMBench_DEV_EN.xlsx", {"xl/worksheets/sheet1.xml": sheet})
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit", timeout=60)
    _one_line_error(code, out, book, "row 2 of xl/worksheets/sheet1.xml", "16,384 cells")


def _runs(count: int) -> str:
    """One string of `count` rich-text runs of a letter each (the re-test's mkruns.py)."""
    letters = random.Random(count).choices("abcdefghij", k=count)
    return "".join(f"<r><t>{letter}</t></r>" for letter in letters)


RICH_TEXT: dict[str, Callable[[int], dict[str, str | bytes]]] = {
    # One shared string of 1,000,000 runs (1.5 MB): 98 s and 531 MB in openpyxl.
    "shared": lambda n: {"xl/sharedStrings.xml": SST + f"<si>{_runs(n)}</si></sst>".encode()},
    "inline": lambda n: {
        "xl/worksheets/sheet1.xml": _sheet(
            iter(
                [f'<row r="2"><c r="A2"><v>1</v></c><c t="inlineStr"><is>{_runs(n)}</is></c></row>']
            )
        )
    },
}


@pytest.mark.parametrize("where", sorted(RICH_TEXT))
def test_a_string_of_too_many_rich_text_runs_is_refused(tmp_path: Path, where: str) -> None:
    parts = RICH_TEXT[where](XLSX_LIMITS.rich_text)  # each run is two elements: <r>, <t>
    book = _workbook(tmp_path / "Model_MMBench_DEV_EN.xlsx", parts)
    started = time.monotonic()
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit", timeout=120)
    assert time.monotonic() - started < 60  # a generous bound: about 3 s
    _one_line_error(code, out, book, f"more than {XLSX_LIMITS.rich_text:,} rich-text elements")


def test_rich_text_a_tool_writes_still_imports(tmp_path: Path) -> None:
    formatted = (
        '<si><r><rPr><b/><sz val="11"/><color rgb="FFFF0000"/><rFont val="Calibri"/></rPr>'
        '<t>A</t></r><r><t xml:space="preserve"> or B</t></r></si>'
    )
    strings = SST + formatted.encode() + b"</sst>"
    book = _workbook(tmp_path / "Model_MMBench_DEV_EN.xlsx", {"xl/sharedStrings.xml": strings})
    assert [row["prediction"] for _, row in iter_table(book)] == ["A or B"]
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit")
    assert code == 0, out
    assert "Traceback" not in out, out


def _dense_part() -> bytes:
    """1 MiB of empty elements: under the per-part ratio check, compressed about 1,000 times."""
    inner = (1 << 20) - len("<a></a>")
    return b"<a>" + b"<x/>" * (inner // 4) + b" " * (inner % 4) + b"</a>"


def test_many_small_parts_compressed_like_a_bomb_are_refused(tmp_path: Path) -> None:
    # The re-test's mkparts.py: 500 extra parts (579 KB) took over 150 s in the scan; 20, 16 s.
    dense = _dense_part()
    parts: dict[str, str | bytes] = {f"xl/junk/p{i}.xml": dense for i in range(20)}
    book = _workbook(tmp_path / "Model_MMBench_DEV_EN.xlsx", parts)
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit", timeout=60)
    _one_line_error(code, out, book, "parts unpack to", "(more than 200 times): a zip bomb")


def test_the_elements_of_all_parts_together_are_bounded(tmp_path: Path) -> None:
    # Random bytes stored beside them bring the archive's ratio down; the count still stops it
    # (at 20,000,000 elements with the real limits: a 400 KB image and 80 MB of parts).
    parts: dict[str, str | bytes] = {
        f"xl/junk/p{i}.xml": "<a>" + "<x/>" * 600 + "</a>" for i in range(2)
    }
    parts["xl/media/image1.png"] = random.Random(1).randbytes(100_000)
    book = _workbook(tmp_path / "Model_MMBench_DEV_EN.xlsx", parts)
    with zipfile.ZipFile(book) as archive, pytest.raises(UnreadableFile) as refused:
        check_xlsx(book, archive, XlsxLimits(elements=1_000))
    assert "more than 1,000 XML elements (the last in xl/junk/p1.xml)" in str(refused.value)


def test_a_part_that_is_not_xml_is_left_to_openpyxl(tmp_path: Path) -> None:
    # An image (declared by its extension, or not at all) is parsed too, and stops expat at
    # once: the workbook imports. A part declared XML that does not parse is refused.
    noise = random.Random(2).randbytes(200_000)
    types = _parts()["[Content_Types].xml"].replace(
        "<Default ", '<Default Extension="png" ContentType="image/png"/><Default ', 1
    )
    images = {"[Content_Types].xml": types, "xl/media/image1.png": noise, "docProps/t.bin": noise}
    book = _workbook(tmp_path / "Model_MMBench_DEV_EN.xlsx", images)
    code, out = _import(book, tmp_path, "--reader", "vlmevalkit")
    assert code == 0, out
    broken = _workbook(tmp_path / "M_D.xlsx", {"xl/styles.xml": noise})
    code, out = _import(broken, tmp_path, "--reader", "vlmevalkit")
    _one_line_error(code, out, broken, "its XML does not parse (xl/styles.xml")


BROKEN: dict[str, tuple[Callable[[Path], object], str]] = {
    "empty": (lambda p: p.write_bytes(b""), "an empty file"),
    "not-a-zip": (lambda p: p.write_text("index\tprediction\n1\tA\n"), "not a zip archive"),
    "entity-bomb": (
        lambda p: xlsx(p, _entities(_laughs(), "&a9;")),
        "amplification",
    ),
    "undefined-entity": (
        lambda p: xlsx(p, _entities("", "&nowhere;")),
        "undefined entity",
    ),
}


@pytest.mark.parametrize("reader", [(), ("--reader", "vlmevalkit")])
@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_spreadsheet_is_one_line_naming_the_file(
    tmp_path: Path, kind: str, reader: tuple[str, ...]
) -> None:
    make, why = BROKEN[kind]
    book = tmp_path / "Model_MMBench_DEV_EN.xlsx"
    make(book)
    code, out = _import(book, tmp_path, *reader, timeout=60)
    _one_line_error(code, out, book, why)


def test_a_spreadsheet_that_is_fine_still_imports(tmp_path: Path) -> None:
    book = xlsx(tmp_path / "Model_MMBench_DEV_EN.xlsx", iter([SST + b"<si><t>A</t></si></sst>"]))
    code, out = _import(book, tmp_path)
    assert code == 0, out
    assert "Traceback" not in out, out
    # Joined to a local copy where there is one, else scored against the golds the file gives.
    assert "1 predictions joined" in out or "1 predictions scored" in out, out


def test_a_stated_sheet_size_is_not_trusted(tmp_path: Path) -> None:
    # A sheet claiming A1:XFD1048576 made openpyxl pad every row to 16,384 cells: 20,000 rows
    # took about 18 s here (a million, a quarter of an hour), and each row had a phantom column.
    rows = "".join(
        f'<row r="{i}"><c r="A{i}"><v>{i}</v></c><c r="B{i}" t="s"><v>2</v></c>'
        f'<c r="C{i}" t="inlineStr"><is><t>A</t></is></c></row>'
        for i in range(2, 20_002)
    )
    head, _, _ = SHEET.partition('<row r="2">')
    claimed = head.replace("<sheetData>", '<dimension ref="A1:XFD1048576"/><sheetData>')
    shared = iter([SST + b"<si><t>A</t></si></sst>"])
    book = xlsx(tmp_path / "M_D.xlsx", shared, claimed + rows + "</sheetData></worksheet>")
    started = time.monotonic()
    read = [row for _, row in iter_table(book)]
    assert time.monotonic() - started < 10  # a generous bound: about 1.5 s
    assert len(read) == 20_000
    assert all(list(row) == ["index", "prediction", "answer"] for row in read)


# --------------------------------------------------------------------------- prediction files


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [150, 1000, 100_000])
@pytest.mark.parametrize("layout", ["jsonl", "json-array", "mathvista", "mmmu-folder"])
def test_json_nested_too_deep_is_one_line_in_every_reader(
    tmp_path: Path, layout: str, depth: int
) -> None:
    # 1,000 levels gave a RecursionError traceback; the data loader refuses past 100 levels,
    # and so does every reader now, with the same words.
    deep = json.loads(_nested(depth)) if depth < 900 else None
    text = json.dumps(deep) if deep is not None else _nested(depth)
    if layout == "jsonl":
        path = tmp_path / "answers.jsonl"
        path.write_text(f'{{"id": "a", "prediction": {text}, "gold": "x"}}\n')
    elif layout == "json-array":
        path = tmp_path / "answers.json"
        path.write_text(f'[{{"id": "a", "prediction": "x", "gold": "x", "meta": {text}}}]')
    elif layout == "mathvista":
        path = tmp_path / "output_m.json"
        path.write_text(f'{{"1": {{"pid": "1", "response": "2", "query": {text}}}}}')
    else:
        path = tmp_path / "llava"
        (path / "Art").mkdir(parents=True)
        (path / "Art" / "output.json").write_text(
            '[{"id": "validation_Art_1", "question_type": "open", "answer": "x", '
            f'"response": "x", "more": {text}}}]'
        )
    code, out = _import(path, tmp_path, timeout=60)
    assert code == 2, out
    assert "Traceback" not in out and "RecursionError" not in out, out
    assert "nested more than 100 levels deep" in out, out
    assert len([line for line in out.splitlines() if line.strip()]) == 1, out


def _lmms_eval_log(folder: Path) -> Path:
    log = folder / "20250101_samples_mmmu_val.jsonl"
    row = {"doc_id": 0, "target": "A", "resps": [["A"]], "filtered_resps": ["A"]}
    log.write_text(json.dumps(row) + "\n")
    return log


@pytest.mark.parametrize("results", ["[1, 2, 3]", '"text"', "null", _nested(1000)])
def test_a_lmms_eval_results_file_that_is_not_an_object_is_named_not_a_traceback(
    tmp_path: Path, results: str
) -> None:
    log = _lmms_eval_log(tmp_path)
    (tmp_path / "20250101_results.json").write_text(results)
    done = lmmprobe(
        "import", log, "--model", "m", "--db", tmp_path / "runs.db", "--format", "json",
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    detail = json.loads(done.stdout)["origin"]["detail"]
    assert detail["results_file"] == "20250101_results.json"
    assert "20250101_results.json" in detail["results_file_problem"]


def _mmmu_folder(root: Path) -> Path:
    folder = root / "llava"
    (folder / "Art").mkdir(parents=True)
    record = {"id": "validation_Art_1", "question_type": "open", "answer": "x", "response": "x"}
    (folder / "Art" / "output.json").write_text(json.dumps([record]))
    (folder / "Music").mkdir()
    return folder


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "link-out"])
@pytest.mark.parametrize("reader", [(), ("--reader", "mmmu")])
def test_an_mmmu_folder_reads_regular_files_inside_it_only(
    tmp_path: Path, kind: str, reader: tuple[str, ...]
) -> None:
    # A link to /dev/zero or a FIFO as a subject's output.json hung forever.
    folder = _mmmu_folder(tmp_path)
    bad = folder / "Music" / "output.json"
    if kind == "dev-zero":
        bad.symlink_to("/dev/zero")
        why = "outside"
    elif kind == "fifo":
        os.mkfifo(bad)
        why = "a FIFO, not a regular file"
    else:
        outside = tmp_path / "elsewhere.json"
        outside.write_text("[]")
        bad.symlink_to(outside)
        why = "outside"
    code, out = _import(folder, tmp_path, *reader, timeout=60)
    assert code == 2, out
    assert "Traceback" not in out, out
    assert f"{bad}: " in out and why in out, out


@pytest.mark.parametrize("target", ["output.json", "../Music/output.json"])
@pytest.mark.parametrize("reader", [(), ("--reader", "mmmu")])
def test_an_mmmu_subject_whose_file_is_a_looping_link_is_named_not_left_out(
    tmp_path: Path, target: str, reader: tuple[str, ...]
) -> None:
    # Re-test 22: glob("*/output.json") skipped a link that loops (Music/output.json ->
    # output.json): the other subjects were scored without a word about Music; read, its check
    # of links raised RuntimeError (a traceback).
    folder = _mmmu_folder(tmp_path)
    bad = folder / "Music" / "output.json"
    bad.symlink_to(target)
    code, out = _import(folder, tmp_path, *reader, timeout=60)
    assert code == 2, out
    assert "Traceback" not in out, out
    assert f"{bad}: a link that loops back on itself" in out, out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("name", ["answers.jsonl", "output_m.json", "M_D.xlsx"])
def test_a_fifo_given_as_the_file_is_refused_at_once(tmp_path: Path, name: str) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    code, out = _import(fifo, tmp_path, timeout=60)
    _one_line_error(code, out, fifo, "a FIFO, not a regular file")


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_line_over_the_element_limit_is_refused_like_a_json_element(
    tmp_path: Path, suffix: str
) -> None:
    # JSON elements were capped at 64 MiB, JSON Lines lines and CSV fields not at all: one
    # rule now.
    path = tmp_path / f"answers{suffix}"
    with path.open("w") as fh:
        if suffix == ".jsonl":
            fh.write('{"id": "a", "prediction": "x", "gold": "x"}\n{"id": "b", "prediction": "')
        else:
            fh.write("id,prediction,gold\nb,")
        for _ in range(65):
            fh.write("y" * (1 << 20))
        fh.write('", "gold": "x"}\n' if suffix == ".jsonl" else ",x\n")
    code, out = _import(path, tmp_path, timeout=120)
    _one_line_error(code, out, path, f"{path}:2:", "longer than 64 MiB")


@pytest.mark.parametrize(
    ("layout", "pad"),
    [("jsonl", 0), ("json-array", 0), ("json-array", 1), ("json-array", -1)],
    ids=["jsonl", "json-array", "json-array-element-cut-by-a-read", "json-array-nested"],
)
def test_an_integer_too_long_is_named_by_its_field_in_the_data_loaders_words(
    tmp_path: Path, layout: str, pad: int
) -> None:
    # A JSON array said Python's words ("not valid JSON: Exceeds the limit (4300 digits) for
    # integer string conversion: value has 5000 digits"), JSON Lines the same with Python's
    # advice to call sys.set_int_max_str_digits() (re-test 21 #20); the data loader says
    # which field holds an integer of how many digits. One wording for all three. `pad` 1
    # ends the integer just before the reader's first 1 MiB read does, the rest of its row
    # not read yet; -1 nests it in the row.
    first = {"id": "a", "prediction": "x", "gold": "x"}
    if pad > 0:  # "[", the first row, ', {"id": ', the digits, then 10 characters to 1 MiB
        first["prediction"] = "x" * ((1 << 20) - 10 - 5000 - len(json.dumps(first)) - 10)
    long = "9" * 5000
    second = f'{{"id": {long}, "prediction": "x", "gold": "x"}}'
    field = "id"
    if pad < 0:
        second = f'{{"id": "b", "prediction": "x", "gold": "x", "meta": {{"n": [1, {long}]}}}}'
        field = "meta.n[1]"
    if layout == "jsonl":
        path, where = tmp_path / "answers.jsonl", "2"
        path.write_text(json.dumps(first) + "\n" + second + "\n")
    else:
        path, where = tmp_path / "answers.json", "#2"
        path.write_text("[" + json.dumps(first) + ", " + second + "]")
    code, out = _import(path, tmp_path, timeout=60)
    said = f"{path}:{where}: {field}: an integer of 5000 digits is too long (at most 4300)"
    _one_line_error(code, out, path, said)
    assert "Exceeds the limit" not in out and "set_int_max_str_digits" not in out, out


def test_an_over_long_prediction_is_an_error_row_and_the_other_rows_are_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "answers.jsonl"
    rows = [
        {"id": "a", "prediction": "cat", "gold": "cat"},
        {"id": "b", "prediction": "dog " * 300_000, "gold": "dog"},
        {"id": "c", "prediction": "cow", "gold": "cow"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = lmmprobe(
        "import", path, "--model", "m", "--db", tmp_path / "runs.db", "--format", "json",
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["rows"] == 3
    assert doc["metrics"]["error_rate"]["value"] == pytest.approx(1 / 3)
    assert doc["metrics"]["accuracy"]["value"] == 1.0  # the two read rows, both right
    (note,) = doc["problems"]
    assert note.startswith(f"{path}:2: prediction: an answer of 1,200,000 characters")


def _mmmu_record(sid: str, response: str | None) -> str:
    record = {"id": sid, "question_type": "multiple-choice", "answer": "A",
              "all_choices": ["A", "B"], "index2ans": {"A": "x", "B": "y"}}  # fmt: skip
    if response is not None:
        record["response"] = response
    return json.dumps([record])


def test_an_mmmu_subject_folder_whose_name_is_not_utf8_is_read(tmp_path: Path) -> None:
    # The issue 34 re-test's folder: a subject named b"Art\xff" gave a traceback and exit 1 (its
    # name went into the file's hash as text). The name names a folder, not a sample: read.
    folder = tmp_path / "model1"
    art, math = folder / os.fsdecode(b"Art\xff"), folder / "Math"
    art.mkdir(parents=True)
    math.mkdir()
    (art / "output.json").write_text(_mmmu_record("validation_Art_1", "A"))
    (math / "output.json").write_text(_mmmu_record("validation_Math_1", "B"))
    code, out = _import(folder, tmp_path)
    assert code == 0, out
    assert "Traceback" not in out, out
    assert "2 predictions scored" in out, out
    # A bad record in it is one line naming the file, its byte shown escaped.
    (art / "output.json").write_text(_mmmu_record("validation_Art_1", None))
    code, out = _import(folder, tmp_path)
    assert code == 2 and "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    assert f"{folder}/Art\\xff/output.json:#1 (id validation_Art_1): response: missing" in out


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_small_file_under_a_large_cap_asks_only_its_own_size_of_memory(tmp_path: Path) -> None:
    # Re-test 6 of issue 34, finding 17: read_regular asked for its whole cap before reading
    # (`read(cap + 1)`), so 12 serve requests for any image asked for 12 x 176 MB and ran out
    # under a memory limit. Now a file costs its size (and a file that grows, the cap).
    small = tmp_path / "small.png"
    small.write_bytes(b"x" * 10)
    script = f"""
import re, resource
from pathlib import Path
from lmmprobe.data.files import FileTooLarge, read_regular
size = int(re.search(r"VmSize:\\s+(\\d+)", Path("/proc/self/status").read_text())[1]) << 10
resource.setrlimit(resource.RLIMIT_AS, (size + (256 << 20), resource.RLIM_INFINITY))
print(len(read_regular(Path({str(small)!r}), 8 << 30, what="an image")))
try:
    read_regular(Path({str(small)!r}), 9, what="an image")
except FileTooLarge as exc:
    print(exc)
"""
    assert run_fresh(script) == [
        "10",
        f"{small}: larger than 9 bytes, the most lmmprobe reads for an image",
    ]


LONG_KEY = "k" * 2_000_000


@pytest.mark.parametrize(
    ("reader", "layout"),
    [
        ("mathvista", {LONG_KEY: "not an object"}),
        ("mathvista", {"1": {"pid": LONG_KEY, "response": "5", "answer": "5"}}),
        ("mmmu", {LONG_KEY: [{"x": 1}]}),
        ("mmmu", [{"id": LONG_KEY, "response": {"x": 1}}]),
    ],
    ids=["mathvista-key", "mathvista-pid", "mmmu-key", "mmmu-id"],
)
@pytest.mark.parametrize("command", ["score", "import"])
def test_a_huge_id_is_named_cut_in_a_rows_error(
    tmp_path: Path, reader: str, layout: object, command: str
) -> None:
    # Re-test 19: MathVista's pid (key or field) and MMMU's id were put whole into the line
    # naming a bad row: a 2 MB id was a 2 MB error line.
    if reader == "mmmu":
        (tmp_path / "M" / "Art").mkdir(parents=True)
        path = tmp_path / "M" / "Art" / "output.json"
        given = tmp_path / "M"
    else:
        path = given = tmp_path / "output_bard.json"
    path.write_text(json.dumps(layout), encoding="utf-8")
    more = ("--db", tmp_path / "db") if command == "import" else ()
    proc = lmmprobe(command, given, "--reader", reader, *more)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "kkkkkkkkkk... (2,000,000 characters)" in proc.stderr, proc.stderr[:2000]
    assert len(proc.stderr) < 2_000, proc.stderr[:2000]
    assert "Traceback" not in proc.stderr


def test_an_exported_row_whose_gold_is_no_option_is_one_line(tmp_path: Path) -> None:
    # Re-test 19: an `lmmprobe export` row edited so that its gold is no option's index, read
    # again with --matcher, gave pydantic's three-line error with its web link.
    made = lmmprobe("run", "-m", "first", "--data", "demo,n=2", "-q", "--db", tmp_path / "db")
    assert made.returncode == 0, made.stderr
    exported = tmp_path / "run.jsonl"
    assert lmmprobe("export", "latest", "--db", tmp_path / "db", "-o", exported).returncode == 0
    rows = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    rows[0]["gold"] = 99
    exported.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    proc = lmmprobe("score", exported, "--matcher", "reform")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "not a scorable row: answer: index 99 is out of range for 4 choices" in proc.stderr
    assert "pydantic" not in proc.stderr
