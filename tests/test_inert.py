"""`lmmprobe._inert`: control characters shown escaped, everything else as it was."""

from __future__ import annotations

import json

import pytest

from lmmprobe._inert import inert, inert_json


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
