"""`lmmprobe._inert`: control characters shown escaped, everything else as it was."""

from __future__ import annotations

import csv
import io
import json
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmmprobe._inert import inert, inert_csv, inert_json


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2J\x1b[HFAKE: all answers correct", r"\x1b[2J\x1b[HFAKE: all answers correct"),
        ("\x1b]52;c;cHdu\x07", r"\x1b]52;c;cHdu\x07"),  # OSC 52 clipboard write
        ("\x1b]8;;http://e/\x1b\\x\x1b]8;;\x1b\\", "\\x1b]8;;http://e/\\x1b\\x\\x1b]8;;\\x1b\\"),
        ("\x9b31mred", r"\x9b31mred"),  # one-byte C1 CSI
        ("\x1b[5A\x1b[2K", r"\x1b[5A\x1b[2K"),  # cursor up, erase line
        ("0.31\rFAKE", r"0.31\x0dFAKE"),  # carriage return overwriting the line
        ("abc\u202edef", r"abc\u202edef"),
        (
            "\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
            r"\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
        ),
        ("del\x7f nul\x00 bell\x07", r"del\x7f nul\x00 bell\x07"),
    ],
)
def test_controls_are_shown_escaped(raw: str, shown: str) -> None:
    assert inert(raw) == shown


def test_plain_text_newlines_tabs_and_crlf_are_unchanged() -> None:
    text = "naïve café – 東京 😀 [bold]x[/]\tcol\nnext line\r\n"
    assert inert(text) == text


def test_json_escapes_mean_the_same_document() -> None:
    value = {"id": "s\x1b[2J\x9b\u202e\x7f", "k": ["\r", "é"]}
    text = inert_json(json.dumps(value, ensure_ascii=False))
    assert all(c not in text for c in "\x1b\x9b\u202e\x7f\r")
    assert json.loads(text) == value


@pytest.mark.parametrize(
    "text",
    ["=1+1", "+1+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1", "\n=1", "\uff1d1", "\uff0b1", "\uff0d1",
     # Before: the small forms, which NFKC makes = + - @, were left as they were.
     "\ufe661", "\ufe62 1", "\ufe631", "\ufe6bx", "\u00a0\ufe66SUM(A1)", "\u207a1",
     "\uff201", "-", "+", "-x", "-1.32 points", "-1,5",
     # After what an import trims or a spreadsheet does not show (issue 34 re-test, finding 9).
     "\x00=1+1", " =1+1", "\xa0=1+1", "\u3000=1+1", "\u200b=1+1", "\ufeff=1+1", "\u00ad=1",
     "\u2060@SUM(A1)", " \t =1", "\u2028-x", "\x00", "\x00abc", "\tabc", "\x1f+cmd", " \uff1d1",
     # A number behind a BOM and a tab; blank fillers and marks (issue 34 re-test 3, item 10).
     "\ufeff\t+1", "\x0b+1", "\ufeff-1", "\u3164=1", "\u115f=1", "\u1160=1", "\uffa0=1",
     "\u2800=1", "\u034f=1", "\ufe0f=1", "\U000e0041=1", "\ue000=1", "\u0378=1", "\u20dd=1"],
)  # fmt: skip
def test_csv_text_that_starts_a_formula_gets_a_quote(text: str) -> None:
    assert inert_csv(text) == "'" + text


@pytest.mark.parametrize(
    "value",
    ["-1.32", "+3", "-2e-5", "-.5", "1-1", "a=b", "", " ", "\u200b", " -1.32", "\xa0+3", "'=1",
     " a=b", "\u3000x", -1.32, -7, 0.0, None, True],
)  # fmt: skip
def test_csv_numbers_and_other_text_are_unchanged(value: object) -> None:
    assert inert_csv(value) == value and type(inert_csv(value)) is type(value)


def test_a_negative_number_lmmprobe_writes_stays_a_number_in_the_file() -> None:
    buf = io.StringIO()
    csv.writer(buf).writerow([inert_csv(v) for v in (-1.32, "-1.32", "=1+1")])
    assert buf.getvalue() == "-1.32,-1.32,'=1+1\r\n"


TRIGGERS = "=+-@\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b"
INVISIBLE = " \t\r\n\x00\x1f\x85\xa0\u2028\u3000\u200b\u200d\u2060\u00ad\ufeff\u202e\u3164\u115f\u1160\uffa0\u2800\u034f\ufe0f"


@given(st.text(max_size=50) | st.text(alphabet=TRIGGERS + INVISIBLE + "1.eAx'", max_size=12))
def test_no_csv_text_cell_starts_a_formula(text: str) -> None:
    cell = inert_csv(text)
    assert isinstance(cell, str)
    assert cell in (text, "'" + text)  # nothing lost
    if cell == text:
        # Unquoted: no control start, and what shows first is no trigger or starts a number.
        assert not cell.startswith(tuple("\t\r\n\x00"))
        hidden = [
            c in "\u115f\u1160\u3164\uffa0\u2800"
            or unicodedata.category(c) in {"Zs", "Zl", "Zp", "Cc", "Cf", "Mn", "Me", "Cn", "Co"}
            for c in cell
        ]
        first = hidden.index(False) if False in hidden else len(cell)
        shown = cell[first:]
        if shown.startswith(tuple(TRIGGERS)):
            float(shown)  # only a plain number (perhaps after spaces) may start so
            assert all(unicodedata.category(c) == "Zs" for c in cell[:first])
