"""VLMEvalKit's multiple-choice answer reading, reproduced exactly, and the ``vlmevalkit`` matcher.

VLMEvalKit (open-compass/VLMEvalKit @ e8e78f0, ``vlmeval/utils/matching_util.py`` ``can_infer``,
called by ``vlmeval/dataset/utils/multiple_choice.py`` ``prefetch_answer``) reads an option
letter from an answer by rules; only where they read nothing does its judge get a matching
prompt (lmmprobe's ``mmbench-choice`` judge protocol). `can_infer` is that rule. The
``vlmevalkit`` matcher is the rule alone: what VLMEvalKit scores under its ``exact_matching``
policy (no judge), where an answer the rules cannot read, or read as ``Z`` (a refusal or no
option), is wrong. The VLMEvalKit-style choice benchmarks (MMBench v1.1, CCBench,
SEEDBench2-Plus, MMT-Bench...) read their answers with it, so a run without a judge gives
VLMEvalKit's exact-matching figures.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from lmmprobe.parse.matcher import MATCHERS, Extraction, unparsed
from lmmprobe.schema import FormulateConfig

__all__ = [
    "LATEST_RULES",
    "RULE_VERSIONS",
    "RuleVersion",
    "can_infer",
    "known_versions",
    "vlmevalkit_matcher",
    "yorn_extraction",
]

_API_FAILED = "Failed to obtain answer via API"
_REJECTS_2024_01 = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
)
_REJECTS = (
    *_REJECTS_2024_01,
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
_PUNCTUATION = ".()[],:;!*#{}"
# "The correct answer is **B**." / "The answer is C." (matching_util._VERBOSE_ANSWER_RE).
_VERBOSE = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")


@dataclass(frozen=True)
class RuleVersion:
    """One version of ``can_infer``'s rules: what changed, by the date of the commit."""

    name: str
    """The date of the commit that made it (``2025-08-04``), with ``+verbose`` for its reading
    under the ``VERBOSE`` environment variable: what ``--tool-version`` takes."""
    commit: str
    """The VLMEvalKit commit that made it."""
    rejects: tuple[str, ...]
    """Refusals read as `refusal`."""
    near_end: bool
    """A lone letter counts only among the last five words; an option text only in an
    answer at most twice as long as the options' texts together (#1175)."""
    verbose: bool
    """``answer is X`` is read where no lone letter is (#1552)."""
    letters: str | None = None
    """The letters a lone letter is looked for among: None, the item's own option letters
    (since 2024-01-08); ``ABCDE`` before, whatever the item's options (``can_infer_option``'s
    ``num_choice=5``, the item's options unseen)."""
    refusal: str = "Z"
    """What a refusal reads as: ``E`` before 2023-12-25 (a letter like any other)."""
    lone_z: bool = True
    """A lone ``Z`` (no option letter) reads as ``Z`` (since 2024-01-08)."""
    verbose_env: bool = False
    """The run had the ``VERBOSE`` environment variable set (to any non-empty text, ``0``
    included: ``os.environ.get('VERBOSE', 0)`` is tested for truth): a lone letter is then not
    read where ``A`` stands alone among more than three words (taken for the article), and the
    answer goes on to the option-text rule. Every version has this check."""


def _versions() -> Iterator[RuleVersion]:
    """Each version, oldest first, its ``+verbose`` reading just before it.

    Twin first: where two versions reproduce a table alike, the later one in this order is chosen
    (`lmmprobe.predictions.readers._vlmevalkit_log.RuleTally`), so a run without ``VERBOSE``,
    the default, wins a tie with its ``+verbose`` twin.
    """
    # December 2023: can_infer_option(answer, num_choice=5) never saw the item's options.
    december = RuleVersion(
        "2023-12-25",
        "a310245",
        _REJECTS_2024_01,
        near_end=False,
        verbose=False,
        letters="ABCDE",
        lone_z=False,
    )
    plain = (
        replace(december, name="2023-11-25", commit="9ac258c", refusal="E"),
        december,
        RuleVersion("2024-01-08", "bc4b28b", _REJECTS_2024_01, near_end=False, verbose=False),
        RuleVersion("2024-02-04", "98e3733", _REJECTS, near_end=False, verbose=False),
        RuleVersion("2025-08-04", "c337155", _REJECTS, near_end=True, verbose=False),
        RuleVersion("2026-06-17", "a67ace5", _REJECTS, near_end=True, verbose=True),
    )  # fmt: skip
    for version in plain:
        yield replace(version, name=f"{version.name}+verbose", verbose_env=True)
        yield version


RULE_VERSIONS: Mapping[str, RuleVersion] = {v.name: v for v in _versions()}
"""Every version of ``can_infer`` since VLMEvalKit's first commit, oldest first, each with its
reading under ``VERBOSE`` (``+verbose``); the commits between two of them read every answer as
the earlier one (tests/parity/data/vlmevalkit_rule_versions.json.gz). The versions before
2024-01-08 (``vlmeval/utils/matching_util.py`` too, ``mmcompass/utils/`` for two days of
November 2023) look for a lone letter among ``A`` to ``E`` whatever the item's options."""
LATEST_RULES = "2026-06-17"
"""The version lmmprobe's matcher and judge protocol read with (VLMEvalKit @ e8e78f0's)."""


def _infer_option(answer: str, choices: Mapping[str, str], rules: RuleVersion) -> str | None:
    """``can_infer_option``: a letter standing alone (near the end), `refusal` for a refusal."""
    if _API_FAILED in answer:
        return None
    if any(reject in answer for reject in rules.rejects):
        return rules.refusal
    spaced = answer
    for ch in _PUNCTUATION:
        spaced = spaced.replace(ch, " ")
    splits = [x.strip() for x in spaced.split()]
    letters = choices if rules.letters is None else rules.letters
    count = sum(1 for c in letters if c in splits)
    if count == 1:
        # The VERBOSE check stands first in the loop's body: it decides before any letter.
        if rules.verbose_env and "A" in splits and len(splits) > 3:
            return None
        for c in letters:
            # Since 2025-08-04 the reference checks the position against the last five words.
            if c in splits and (not rules.near_end or splits.index(c) > len(splits) - 5):
                return c
    elif count == 0 and rules.lone_z and "Z" in splits:
        return "Z"
    found = _VERBOSE.search(answer) if rules.verbose else None
    if found and found.group(1).upper() in choices:
        return found.group(1).upper()
    return None


def _infer_text(answer: str, choices: Mapping[str, str], rules: RuleVersion) -> str | None:
    """``can_infer_text``: the one option whose text the (short enough) answer contains."""
    answer = answer.lower()
    if rules.near_end and len(answer) > 2 * sum(len(str(v)) for v in choices.values()):
        return None
    found = [k for k, v in choices.items() if str(v).lower() in answer]
    return found[0] if len(found) == 1 else None


def known_versions() -> str:
    """The versions of `RULE_VERSIONS` in one phrase, as an error that refuses one names them."""
    plain = [name for name, rules in RULE_VERSIONS.items() if not rules.verbose_env]
    return f"{', '.join(plain)} (each also NAME+verbose: its reading with VERBOSE set)"


def _rules(version: str) -> RuleVersion:
    try:
        return RULE_VERSIONS[version]
    except KeyError:
        raise ValueError(
            f"VLMEvalKit rule version {version!r}: not one of {known_versions()}"
        ) from None


def can_infer(answer: str, choices: Mapping[str, str], version: str = LATEST_RULES) -> str | None:
    """VLMEvalKit's ``can_infer``: the option letter the rules read, ``Z`` or None.

    Args:
        answer: The text to read (a model's answer or a judge's reply).
        choices: Option letter to option text, in the order shown.
        version: Whose rules (`RULE_VERSIONS`): the file's writer's, for a recorded log.

    Returns:
        A letter of `choices` (before 2024-01-08: of ``A`` to ``E``, whatever the choices),
        ``Z`` (the answer matches no option or refuses; ``E`` for a refusal before
        2023-12-25), or None where the rules cannot read it.

    Raises:
        ValueError: `version` is not one of `RULE_VERSIONS`.

    """
    rules = _rules(version)
    text = str(answer)
    return _infer_option(text, choices, rules) or _infer_text(text, choices, rules)


@MATCHERS.register(
    "vlmevalkit",
    summary="VLMEvalKit's rule (can_infer): a lone option letter near the end, else the one "
    "option text the answer holds; else unread (its exact_matching policy)",
)
def vlmevalkit_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`can_infer` as a matcher: the options keyed by the marks shown, in display order.

    A letter is stage ``mark``, an option text ``text`` (VLMEvalKit's two rules); ``Z`` (a
    refusal, or no option) and no reading are unparsed, as VLMEvalKit scores them wrong.
    """
    if not options:
        return unparsed("no options")
    choices = dict(zip(marks, options, strict=True))
    rules = RULE_VERSIONS[LATEST_RULES]
    letter = _infer_option(output, choices, rules)
    if letter is not None and letter != "Z":
        return Extraction(list(marks).index(letter), "mark", "option letter")
    if letter is None:
        letter = _infer_text(output, choices, rules)
        if letter is not None:
            return Extraction(list(marks).index(letter), "text", "option text")
    return unparsed("refusal" if letter == "Z" else "no_match")


_YORN_PUNCT = (
    ";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`",
    ",", "?", "!",
)  # fmt: skip
_COMMA_STRIP = re.compile(r"(\d)(,)(\d)")
# As written until 928a95b (2025-05-13): "(?!<=" is a lookahead (a lookbehind was meant), so
# a period after a digit goes too; since then "(?<!\d)" keeps it. Whether a period stays or
# goes only joins or parts the characters of one word that holds a digit, never a "yes" or
# "no": the two read every answer alike (the released VILA tables of July 2024 and the
# generated ones of e8e78f0 are both reproduced, tests/parse/test_vlmevalkit_yorn.py).
_PERIOD_STRIP = re.compile(r"(?!<=\d)(\.)(?!\d)")
_PERIODS_STRIPPED = int(re.UNICODE)
"""``periodStrip.sub('', outText, re.UNICODE)`` passes the flag as ``count``: 32 periods."""


def _process_punctuation(text: str) -> str:
    """VLMEvalKit's ``process_punctuation`` (``vlmeval/smp/misc.py``), its quirks kept."""
    out = text
    # Whether a digit-comma-digit stands anywhere in the text decides for every mark.
    comma = _COMMA_STRIP.search(text) is not None
    for p in _YORN_PUNCT:
        if (p + " " in text or " " + p in text) or comma:
            out = out.replace(p, "")
        else:
            out = out.replace(p, " ")
    return _PERIOD_STRIP.sub("", out, count=_PERIODS_STRIPPED)


def yorn_extraction(output: str) -> str:
    """VLMEvalKit's ``YOrN_Extraction``: ``Yes``, ``No`` or ``Unknown``.

    open-compass/VLMEvalKit ``vlmeval/dataset/utils/yorn.py`` (unchanged in what it reads from
    595eb5f, July 2024, to e8e78f0): the answer lower-cased, its punctuation handled as
    ``process_punctuation`` does, split at white space; ``Yes`` where the word "yes" stands and
    "no" does not, ``No`` the other way round, else ``Unknown`` (where its judge, if any, was
    asked: ``YOrN_auxeval``). What an ``_auxmatch`` table's ``extracted`` holds wherever the
    rule read the answer.
    """
    words = _process_punctuation(str(output).lower()).split()
    yes, no = "yes" in words, "no" in words
    if yes and not no:
        return "Yes"
    if no and not yes:
        return "No"
    return "Unknown"
