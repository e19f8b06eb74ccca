"""Map a generated single-choice answer to a displayed option.

The pipeline tries, in order: the option mark ("B", "(b)", "the answer is C"), the option text
("blue"), a refusal check, and a fuzzy match of the whole output against the option texts
("gren" -> "green"). Whatever cannot be mapped is `unparsed`; no option is ever guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz, process

from lmmprobe.parse.matcher import MATCHERS, Extraction, ExtractionStage, unparsed
from lmmprobe.parse.refusal import is_refusal
from lmmprobe.schema import FormulateConfig

# Whitespace, markdown emphasis and quotes that may wrap a mark ("**B**", '"B"').
_DECOR = "[\\s*_\"'`\u201c\u201d\u2018\u2019]*"
_TIGHT_DECOR = "[*_\"'`\u201c\u201d\u2018\u2019]*"
_OPEN = "[(\uff08]"
_CLOSE = "[)\uff09]"
# What may follow a bare mark at the start of the output. A full stop or colon followed by more
# characters of a word or number ("A.I.", "2.5", "2:30") is not a delimiter.
_LEAD_END = (
    f"(?={_TIGHT_DECOR}(?:\\s*\\Z|[ \\t]*\\n|\\.(?!\\w)|{_CLOSE}"
    "|[:\uff1a,\uff0c\u3002\u3001](?!\\d)))"
)
# Phrases that announce the model's final answer.
_STRONG_PHRASES = (
    r"\banswer\b(?:\s+(?:is|would\s+be|should\s+be|will\s+be))?"
    r"|\b(?:correct|right|best|final)\s+(?:option|choice)\b(?:\s+(?:is|would\s+be|should\s+be))?"
    r"|\bI\s+(?:would\s+|will\s+|'d\s+)?(?:choose|pick|select|go\s+with)\b"
    "|\u7b54\u6848(?:\u5e94\u8be5|\u61c9\u8a72)?(?:\u662f|\u4e3a|\u70ba)?"  # 答案(应该)(是|为)
    "|\u9009(?:\u62e9|\u64c7|\u9879|\u9805)?"  # 选(择|项)
)
# Phrases that merely name an option; they may also introduce options the model rejects.
_WEAK_PHRASES = r"\b(?:option|choice)\b(?:\s+is)?"
# Every phrase above contains one of these; a substring test is far cheaper than the regex scan.
_STRONG_HINTS: tuple[str, ...] = ("answer", "option", "choice", "choos", "pick", "select", "go")
_STRONG_HINTS += ("\u7b54\u6848", "\u9009")  # 答案, 选
_WEAK_HINTS = ("option", "choice")
# Scripts written without spaces between words have no word boundary to test against.
_UNSPACED = re.compile(
    "[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]"
)
_NON_WORD = re.compile(r"[\W_]+")
_SPACE_RUN = re.compile(r"\s*")
_NOTE_LEN = 40


@dataclass(frozen=True, slots=True)
class _MarkPatterns:
    lookup: dict[str, int]
    leading: re.Pattern[str]
    strong: re.Pattern[str]
    weak: re.Pattern[str]
    paren: re.Pattern[str]
    # What extract_choice returns for outputs that are exactly a mark in a common form ("B",
    # "(B)", "b."), which is how most models answer; filled once per mark set.
    exact: dict[str, Extraction]


@dataclass(frozen=True, slots=True)
class _OptionTable:
    patterns: tuple[re.Pattern[str] | None, ...]
    # Lowercased first word of each ASCII option: an option absent from the lowercased output
    # cannot match, which spares most regex scans. None where lowercasing is not exact.
    hints: tuple[str | None, ...]
    fuzzy_keys: tuple[str | None, ...]


def extract_choice(
    output: str,
    options: Sequence[str],
    marks: Sequence[str],
    *,
    fuzzy_threshold: float = 80.0,
) -> Extraction:
    """Read which displayed option a generated answer chose.

    Stages, in order: empty output; option mark (a leading mark such as "B." or "(b)", an answer
    phrase such as "the answer is C" or "答案是B", or a single distinct parenthesized mark);
    option text (exactly one option named as whole words, longer options shadowing the ones they
    contain); refusal; fuzzy similarity of the whole output to one option. Letter marks compare
    case-insensitively.

    Args:
        output: Raw model output.
        options: Option texts in display order.
        marks: Displayed marks in the same order, e.g. ["A", "B", "C"] or ["1", "2", "3"].
        fuzzy_threshold: Minimum rapidfuzz ratio (0-100) for the fuzzy stage.

    Returns:
        The chosen display position and the stage that decided it, or an unparsed result whose
        reason is "empty", "refusal", "no_match" or "ambiguous".

    Raises:
        ValueError: `options` and `marks` differ in length, or a mark is blank or repeated
            (ignoring case).

    """
    if len(options) != len(marks):
        raise ValueError(
            f"extract_choice got {len(options)} options but {len(marks)} marks; "
            "pass one mark per displayed option"
        )
    if not output.strip():
        return unparsed("empty")
    mark_key = tuple(marks)
    pats = _mark_patterns(mark_key) if mark_key else None
    if pats is not None:
        # Extractions are frozen, so the tabulated one can be handed out as it is.
        known = pats.exact.get(output)
        if known is not None:
            return known
    option_key = tuple(options)
    by_mark, marks_ambiguous = _mark_stage(output, pats, option_key)
    if by_mark is not None:
        return by_mark
    table = _option_table(option_key)
    named = _named_options(output, table)
    if len(named) == 1:
        return Extraction(named[0], "text", _note(options[named[0]]))
    if is_refusal(output):
        return unparsed("refusal")
    # An output naming several options cannot be settled by overall similarity either.
    if marks_ambiguous or named:
        return unparsed("ambiguous")
    return _fuzzy_stage(output, table.fuzzy_keys, fuzzy_threshold)


def _note(span: str) -> str:
    return " ".join(span.split()).strip("*_\"'`")[:_NOTE_LEN]


def _mark_stage(
    output: str, pats: _MarkPatterns | None, options: tuple[str, ...]
) -> tuple[Extraction | None, bool]:
    """Return the mark-decided extraction, if any, and whether distinct marks competed."""
    if pats is None:
        return None, False
    leading = _leading_mark(output, pats)
    if leading is not None:
        return leading, False
    low = output.lower()
    strong = _phrase_marks(pats.strong, _STRONG_HINTS, output, low, pats.lookup, options)
    if strong:
        # Answer phrases naming different marks conflict; no weaker mark rule may settle that.
        return (_single(strong), False) if len(strong) == 1 else (None, True)
    # "Option A: red, option B: blue" merely lists options; a parenthesized mark may still decide.
    weak = _phrase_marks(pats.weak, _WEAK_HINTS, output, low, pats.lookup, options)
    if len(weak) == 1:
        return _single(weak), False
    paren = _paren_marks(output, pats)
    if len(paren) == 1:
        return _single(paren), False
    return None, len(weak) > 1 or len(paren) > 1


def _leading_mark(output: str, pats: _MarkPatterns) -> Extraction | None:
    """Read a mark that opens the output: "B", "B.", "(b) blue", "**B**"."""
    stripped = output.strip()
    exact = pats.lookup.get(stripped.lower())
    if exact is not None:
        return Extraction(exact, "mark", stripped)
    lead = pats.leading.match(output)
    if lead is None:
        return None
    return Extraction(pats.lookup[_captured(lead).lower()], "mark", _note(lead[0]))


def _paren_marks(output: str, pats: _MarkPatterns) -> dict[int, str]:
    """Map each parenthesized valid mark in the output to its first occurrence."""
    found: dict[int, str] = {}
    if "(" in output or "\uff08" in output:
        for m in pats.paren.finditer(output):
            found.setdefault(pats.lookup[m[1].lower()], m[0])
    return found


def _single(found: dict[int, str]) -> Extraction:
    ((index, span),) = found.items()
    return Extraction(index, "mark", _note(span))


def _captured(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g is not None)


def _phrase_marks(
    phrase: re.Pattern[str],
    hints: tuple[str, ...],
    output: str,
    low: str,
    lookup: dict[str, int],
    options: tuple[str, ...],
) -> dict[int, str]:
    """Map each option index announced by an answer phrase to the first span announcing it."""
    found: dict[int, str] = {}
    if not any(h in low for h in hints):
        return found
    for m in phrase.finditer(output):
        bare = m["b"]
        index = lookup[(bare if bare is not None else m["p"]).lower()]
        if bare is not None and not _bare_mark_fits(output, m.end(), index, options):
            continue
        found.setdefault(index, m[0])
    return found


def _bare_mark_fits(output: str, end: int, index: int, options: tuple[str, ...]) -> bool:
    """Tell whether a bare mark is a mark rather than a word ("the answer is a cat").

    It is when followed by the end, by punctuation, or by whitespace and then the option's own
    text ("the answer is b blue").
    """
    # Positions, not copies: copying the rest of the output for every match took time
    # quadratic in the output ("option A " repeated over 1M characters took 8 s). The space run
    # after a match ends before the next match starts, so the runs skipped add up to one pass.
    if end >= len(output) or not output[end].isspace():
        return True
    # In a str pattern `\s` is exactly what str.isspace (and so str.lstrip) takes.
    run = _SPACE_RUN.match(output, end)
    start = run.end() if run is not None else end
    if start >= len(output) or not output[start].isalnum():
        return True
    pattern = _option_table(options).patterns[index]
    return pattern is not None and pattern.match(output, start) is not None


def _named_options(output: str, table: _OptionTable) -> list[int]:
    """List the options named in the output, dropping those only named inside longer ones."""
    # Unicode case folding under IGNORECASE differs from str.lower() outside ASCII (U+017F ~ "s").
    low = output.lower() if output.isascii() else None
    spans: dict[int, list[tuple[int, int]]] = {}
    for index, (pattern, hint) in enumerate(zip(table.patterns, table.hints, strict=True)):
        if low is not None and hint is not None and hint not in low:
            continue
        if pattern is not None:
            hits = [m.span() for m in pattern.finditer(output)]
            if hits:
                spans[index] = hits
    return _unshadowed(spans)


def _unshadowed(spans: dict[int, list[tuple[int, int]]]) -> list[int]:
    """List the options (in `spans` order) with a span inside no longer span of another option.

    A span lies inside a longer one ("red" in "dark red") when the other starts no later, ends
    no earlier and is not the same span. One sweep over all spans, by start and then longest
    first: comparing each span with every span of the other options took time quadratic in the
    answer ("cat dog " repeated over 256 KB with options "cat" and "cat dog" took 56 s).
    """
    events = sorted((start, -end, index) for index, own in spans.items() for start, end in own)
    free: set[int] = set()
    # The latest end among the spans swept so far (of option `first`), and the latest end of
    # any other option: with both, the latest end of every option but one is known.
    first, first_end, second_end = -1, -1, -1
    pos = 0
    while pos < len(events) and len(free) < len(spans):
        start, neg_end, _ = events[pos]
        stop = pos
        # Identical spans of two options do not shadow each other: they are swept together,
        # after the spans that start here and end later.
        while stop < len(events) and events[stop][:2] == (start, neg_end):
            index = events[stop][2]
            if (second_end if index == first else first_end) < -neg_end:
                free.add(index)
            stop += 1
        for _, _, index in events[pos:stop]:
            if index == first:
                first_end = max(first_end, -neg_end)
            elif -neg_end > first_end:
                first, first_end, second_end = index, -neg_end, first_end
            else:
                second_end = max(second_end, -neg_end)
        pos = stop
    return [i for i in spans if i in free]


def _fuzzy_stage(output: str, keys: tuple[str | None, ...], threshold: float) -> Extraction:
    query = _normalize(output)
    if not query:
        return unparsed("no_match")
    # process.extract skips None keys (blank options) and keeps their positions.
    top = process.extract(query, keys, scorer=fuzz.ratio, limit=2)
    if not top:
        return unparsed("no_match")
    key, best, index = top[0]
    # A tie means two options are equally close, and picking either would be a guess.
    if best < threshold or (len(top) > 1 and top[1][1] >= best):
        return unparsed("no_match")
    return Extraction(int(index), "fuzzy", f"{key} ({best:.0f})")


def _normalize(text: str) -> str:
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


@lru_cache(maxsize=256)
def _mark_patterns(marks: tuple[str, ...]) -> _MarkPatterns:
    lookup: dict[str, int] = {}
    for index, mark in enumerate(marks):
        key = mark.strip().lower()
        if not key or key != mark.lower():
            raise ValueError(
                f"option mark {mark!r} (position {index}) must be non-blank text without padding"
            )
        if key in lookup:
            raise ValueError(f"option marks repeat {mark!r} ignoring case: {list(marks)}")
        lookup[key] = index
    # Longest first, so that mark "10" is not read as mark "1".
    alt = "|".join(re.escape(m) for m in sorted(marks, key=len, reverse=True))
    paren = f"{_OPEN}\\s*({alt})\\s*{_CLOSE}"
    # A bare mark glued to a following letter or digit is part of a word ("answer is Blue").
    # The spaces before the colon are taken possessively: left to give some back to _DECOR,
    # which takes spaces too, every split of a long run of spaces was tried (quadratic time
    # on "the answer is" and 100,000 spaces); no match changes, since a mark never starts
    # with a space.
    announced = f"\\s*+[:\uff1a]?{_DECOR}(?:{_OPEN}\\s*(?P<p>{alt})\\s*{_CLOSE}|(?P<b>{alt})(?![A-Za-z0-9]))"
    flags = re.IGNORECASE
    pats = _MarkPatterns(
        lookup=lookup,
        leading=re.compile(
            f"{_DECOR}(?:{_OPEN}\\s*({alt})\\s*{_CLOSE}|({alt}){_LEAD_END}|\\*\\*\\s*({alt})\\s*\\*\\*)",
            flags,
        ),
        strong=re.compile(f"(?:{_STRONG_PHRASES}){announced}", flags),
        weak=re.compile(f"(?:{_WEAK_PHRASES}){announced}", flags),
        paren=re.compile(paren, flags),
        exact={},
    )
    # Each tabulated result is the one the full pipeline gives for that exact output: a
    # non-blank output whose leading mark is read never reaches the later stages.
    for mark in marks:
        for form in _common_forms(mark):
            try:
                found = _leading_mark(form, pats)
            except KeyError:
                # Case folding can pair text with a mark it does not lowercase to (U+017F
                # and "S"); such an output keeps failing in the full pipeline as it did.
                continue
            if found is not None:
                pats.exact.setdefault(form, found)
    return pats


def _common_forms(mark: str) -> list[str]:
    """Ways a model commonly writes a bare answer mark: "B", "b", "(B)", "B.", "B)", "(B)."."""
    key = mark.lower()
    forms = []
    for case in dict.fromkeys((mark, mark.upper(), key)):
        if case.lower() == key:  # "ß".upper() is "SS", which is not that mark
            forms += [case, f"({case})", f"{case}.", f"{case})", f"({case})."]
    return forms


@lru_cache(maxsize=4096)
def _option_table(options: tuple[str, ...]) -> _OptionTable:
    return _OptionTable(
        patterns=tuple(_option_pattern(o) for o in options),
        hints=tuple(_hint(o) for o in options),
        fuzzy_keys=tuple(_normalize(o) or None for o in options),
    )


@lru_cache(maxsize=8192)
def _option_pattern(option: str) -> re.Pattern[str] | None:
    """Compile a case-insensitive whole-word pattern for an option text (None if blank)."""
    words = option.split()
    if not words:
        return None
    body = r"\s+".join(re.escape(w) for w in words)
    left = r"(?<!\w)" if _bounded(words[0][0]) else ""
    right = r"(?!\w)" if _bounded(words[-1][-1]) else ""
    return re.compile(left + body + right, re.IGNORECASE)


def _hint(option: str) -> str | None:
    words = option.split()
    return words[0].lower() if words and option.isascii() else None


def _bounded(char: str) -> bool:
    return (char.isalnum() or char == "_") and _UNSPACED.match(char) is None


@MATCHERS.register(
    "lmmprobe", summary="lmmprobe's pipeline: option mark, option text, refusal, fuzzy (default)"
)
def lmmprobe_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """Read the answer with `extract_choice` and the config's fuzzy threshold."""
    return extract_choice(output, options, marks, fuzzy_threshold=config.fuzzy_threshold)


__all__ = ["Extraction", "ExtractionStage", "extract_choice", "lmmprobe_matcher"]
