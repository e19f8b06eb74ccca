"""The prediction readers fuzzed with malformed files: rows, or one clean line, never a traceback.

Random bytes, truncated JSON, deep nesting and damaged spreadsheets go through layout detection
and every reader, as ``lmmprobe score`` / ``import`` read them. Each must give its rows or one
`DataError` of one line naming the file, in bounded time (hypothesis' deadline, generous).
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmmprobe.data.base import DataError
from lmmprobe.predictions.imported import READERS, ReadOptions
from lmmprobe.predictions.scoring import detect_reader

SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".xlsx")
FUZZ = settings(
    max_examples=60,
    deadline=5000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)
records = st.dictionaries(
    st.sampled_from(["id", "prediction", "gold", "response", "pid", "doc_id", "resps", "index"]),
    json_values,
)


def _read(data: bytes, suffix: str, reader: str | None) -> None:
    """Detect and read `data` saved as a file of `suffix`: rows, or one line of `DataError`."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"Model_MMBench{suffix}"
        path.write_bytes(data)
        try:
            _, found = detect_reader(path, reader)
            options = ReadOptions()
            found.origin(path, options)
            for pred in found.read(path, options):
                assert isinstance(pred.prediction, str)
        except DataError as exc:
            message = str(exc)
            assert "\n" not in message, message
            assert str(path) in message or "--field" in message, message


def _xlsx(rows: list[list[Any]]) -> bytes:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


readers = st.sampled_from([None, *READERS.names()])
cell_text = st.text(st.characters(min_codepoint=32, max_codepoint=0xD7FF), max_size=10)
"""What a worksheet cell may hold (openpyxl refuses control characters)."""


@FUZZ
@given(data=st.binary(max_size=2000), suffix=st.sampled_from(SUFFIXES), reader=readers)
def test_random_bytes(data: bytes, suffix: str, reader: str | None) -> None:
    _read(data, suffix, reader)


@FUZZ
@given(
    rows=st.lists(records, max_size=5),
    cut=st.integers(min_value=0, max_value=400),
    lines=st.booleans(),
    reader=readers,
)
def test_truncated_json(
    rows: list[dict[str, Any]], cut: int, lines: bool, reader: str | None
) -> None:
    if lines:
        text, suffix = "".join(json.dumps(r) + "\n" for r in rows), ".jsonl"
    else:
        text, suffix = json.dumps(rows), ".json"
    _read(text[: max(0, len(text) - cut)].encode(), suffix, reader)


@FUZZ
@given(
    depth=st.integers(min_value=1, max_value=3000),
    pattern=st.text(alphabet="[{", min_size=1, max_size=6),
    closed=st.booleans(),
    suffix=st.sampled_from((".json", ".jsonl")),
    wrap=st.booleans(),
    reader=readers,
)
def test_deep_nesting(
    depth: int, pattern: str, closed: bool, suffix: str, wrap: bool, reader: str | None
) -> None:
    opens = (pattern * (depth // len(pattern) + 1))[:depth]
    # Objects need keys: {"k": ... }; arrays nest as they are.
    value = "".join('{"k":' if c == "{" else "[" for c in opens)
    if closed:
        value += "".join("}" if c == "{" else "]" for c in reversed(opens))
    text = f'[{{"id": "a", "prediction": {value}}}]' if wrap else value
    _read(text.encode(), suffix, reader)


@FUZZ
@given(
    cells=st.lists(
        st.lists(st.one_of(st.none(), st.integers(), cell_text), max_size=4),
        max_size=4,
    ),
    damage=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=4),
    cut=st.integers(min_value=0, max_value=3000),
    reader=st.sampled_from([None, "vlmevalkit"]),
)
def test_damaged_spreadsheets(
    cells: list[list[Any]], damage: list[tuple[int, int]], cut: int, reader: str | None
) -> None:
    data = bytearray(_xlsx([["index", "prediction", "answer"], *cells]))
    for at, byte in damage:
        data[at % len(data)] = byte
    _read(bytes(data[: max(0, len(data) - cut)]), ".xlsx", reader)


@FUZZ
@given(
    xml=st.text(alphabet='<>&;!"=/ abcsitDOCTYPENTIY[]', max_size=400),
    reader=st.sampled_from([None, "vlmevalkit"]),
)
def test_spreadsheets_with_arbitrary_shared_strings(xml: str, reader: str | None) -> None:
    # Whatever text the shared-string part holds (entities, a DOCTYPE, broken tags).
    source = zipfile.ZipFile(io.BytesIO(_xlsx([["index", "prediction"], [1, "A"]])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as book:
        for info in source.infolist():
            book.writestr(info, source.read(info.filename))
        book.writestr("xl/sharedStrings.xml", xml)
    _read(out.getvalue(), ".xlsx", reader)
