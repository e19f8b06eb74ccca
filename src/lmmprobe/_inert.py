r"""Untrusted text made inert for terminals, text files and spreadsheets.

Text from servers, data sets, models and orchestrators reaches the terminal (error messages,
``--by`` groups, sample ids, model names, APEx queries) and files people open in one (results.md,
report.md). Left raw, an ESC or C1 byte starts a terminal control sequence: a server's error text
can clear the screen and print a fake verdict, move the cursor over a number, set the clipboard
(OSC 52) or hide a link (OSC 8); a carriage return overwrites the line it is on; a bidi override
(U+202E) shows text in another order than it is read. `inert` shows each such character as a
Python-style escape (``\x1b``, ``\u202e``), so nothing is lost and nothing is obeyed.

Newline, tab and a CRLF line end stay: they lay text out and cannot rewrite what is already on
screen.

CSV files go to spreadsheets, which run a cell that starts with ``=`` (or ``+``, ``-``, ``@``) as
a formula, often after trimming spaces and invisible characters: an answer or an imported file
could make a link that sends data away or, through DDE, a command. `inert_csv` writes such text
cells with a leading quote, so they are shown as text.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

_BIDI: Final = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# A carriage return right before a newline (CRLF, as CSV writes lines) ends a line: kept.
_UNSAFE_RE: Final = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_BIDI}]|\r(?!\n)")
_JSON_UNSAFE_RE: Final = re.compile(f"[\x7f-\x9f{_BIDI}]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def inert(text: str) -> str:
    r"""`text` with every terminal control character shown as an escape, not sent raw.

    C0 controls other than newline and tab, DEL, C1 controls (U+0080-U+009F, e.g. the one-byte
    CSI U+009B) and the bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E,
    U+2066-U+2069) become ``\xNN`` or ``\uNNNN``; so does a carriage return, unless a newline
    follows it (a CRLF line end). Printable text, newline and tab are unchanged, so text without
    controls comes back as it was.

    Args:
        text: Untrusted text, about to be shown in a terminal or written to a text file.

    Returns:
        The text with each control character replaced by its escape.

    Example:
        >>> inert("\x1b[2Jok\u202e")
        '\\x1b[2Jok\\u202e'

    """
    return _UNSAFE_RE.sub(_escaped, text)


def inert_json(text: str) -> str:
    r"""JSON text with the controls JSON leaves raw written as ``\uNNNN`` escapes.

    `json.dumps` escapes C0 controls always, but with ``ensure_ascii=False`` it writes DEL, the
    C1 controls and the bidi controls raw. They can only occur inside JSON strings, where
    ``\uNNNN`` means the same character: the document parses to the same value.

    Args:
        text: A JSON document (``json.dumps(..., ensure_ascii=False)``).

    Returns:
        The same document, safe to print to a terminal.

    """
    return _JSON_UNSAFE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# CSV: a cell a spreadsheet would read as a formula (OWASP, "CSV Injection"). The fullwidth
# forms are included because spreadsheets that normalise width on import (Excel in East Asian
# locales) read U+FF1D as "=".
_FORMULA_START: Final = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
# A cell starting with one of these is quoted whatever follows: each can be stripped or
# skipped by an import before the character after it is read (tab, CR and NUL are OWASP's; line
# feed joins them).
_CONTROL_START: Final = frozenset("\t\r\n\x00")
# Characters an import may trim or a spreadsheet not show before a formula's "=", by Unicode
# category: spaces of every width (Zs: NBSP, U+3000), line and paragraph separators, controls
# (Cc: NUL), format characters (Cf: zero-width space, soft hyphen, the BOM U+FEFF, U+180E),
# combining marks with nothing to combine with (Mn, Me: U+034F, the variation selectors) and
# code points with no glyph of their own (Cn unassigned, Co private use, Cs surrogates). Skipped
# to find the first character that counts.
_INVISIBLE_CATEGORIES: Final = frozenset(
    {"Zs", "Zl", "Zp", "Cc", "Cf", "Mn", "Me", "Cn", "Co", "Cs"}
)
# Letters and symbols drawn blank, which no category above holds: the Hangul fillers (U+115F,
# U+1160, U+3164, U+FFA0; Unicode lists them as default-ignorable, so a renderer shows nothing)
# and the blank Braille pattern U+2800.
_BLANK_GLYPHS: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# Plain decimal numbers are data, not formulas: a spreadsheet reads "-1.32" or "+3e-5" as the
# number, never as code (ASCII digits only, no separators, nothing after the number).
_PLAIN_NUMBER_RE: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _first_visible(text: str) -> int:
    """Index of the first character of `text` that is not a space, control or format character."""
    for index, char in enumerate(text):
        if char not in _BLANK_GLYPHS and unicodedata.category(char) not in _INVISIBLE_CATEGORIES:
            return index
    return len(text)


def _starts_formula(char: str) -> bool:
    """Whether `char` is a formula's first sign, as such or after NFKC normalisation.

    NFKC is what an import that normalises width and compatibility forms applies: it makes the
    small forms U+FE66, U+FE62, U+FE63 and U+FE6B (and superscript or subscript signs) the
    ASCII ``= + - @``, as it makes the fullwidth forms.
    """
    return char in _FORMULA_START or unicodedata.normalize("NFKC", char)[:1] in _FORMULA_START


def inert_csv(value: object) -> object:
    r"""`value` as a CSV cell a spreadsheet cannot run as a formula.

    Text whose first visible character is ``=``, ``+``, ``-`` or ``@`` (or one NFKC makes one
    of them: the fullwidth ``＝ ＋ － ＠``, the small forms ``﹦ ﹢ ﹣ ﹫``), after any spaces, controls, invisible format characters and other code points drawn
    blank (Unicode categories Zs, Zl, Zp, Cc, Cf, Mn, Me, Cn, Co and Cs, the Hangul fillers and
    the blank Braille pattern: a no-break space, U+3000, a zero-width space, a BOM, NUL, U+034F,
    U+3164, U+2800), and text that
    starts with a tab, a carriage return, a line feed or NUL, gets a single quote in front
    (OWASP's advice for CSV injection): the spreadsheet shows it as text, and the quote tells a
    reader it was added. Text that is a plain decimal number (``-1.32``, ``+3``, ``-2e-5``,
    also after spaces, but not after a tab or an invisible character) is left alone, as a spreadsheet reads it as that number. Values that are
    not text (numbers written by lmmprobe, such as a gap of -1.32, booleans, None) are returned
    unchanged, so they stay numbers. Every CSV writer of lmmprobe passes its cells through this
    function; `csv` quotes any cell that holds a comma, a quote or a line break, so no cell's
    text can close its cell and open another.

    Args:
        value: A cell about to be written by `csv.writer` or `csv.DictWriter`.

    Returns:
        The cell, with a leading ``'`` where the text would start a formula.

    Example:
        >>> inert_csv("=1+1"), inert_csv("\xa0=1+1"), inert_csv("-1.32"), inert_csv(-1.32)
        ("'=1+1", "'\xa0=1+1", '-1.32', -1.32)

    """
    if not isinstance(value, str) or not value:
        return value
    if value[0] in _CONTROL_START:
        return "'" + value
    first = _first_visible(value)
    if first == len(value) or not _starts_formula(value[first]):
        return value
    # A number is left alone only after spaces (Zs) at most: behind a BOM, a tab or a filler
    # (``\ufeff\t+1``) it is what an import that trims them would read as the cell's start.
    if _PLAIN_NUMBER_RE.fullmatch(value, first) and all(
        unicodedata.category(char) == "Zs" for char in value[:first]
    ):
        return value
    return "'" + value
