"""VLMEvalKit's ``log`` column read back into what its evaluation read from each answer.

VLMEvalKit (open-compass/VLMEvalKit @ e8e78f0, ``vlmeval/dataset/utils/multiple_choice.py``)
records in a judged result table's ``log`` how it matched each answer to an option, but not the
option itself:

- ``eval_vanilla`` (one row, ``mcq_vanilla_eval``) writes ``Match Log: {match_log}. ``, where
  ``match_log`` is what ``extract_answer_from_item`` read: the prediction itself (its
  ``can_infer`` rules read it), the judge's raw reply (the rules read the reply), ``Failed to
  predict, thus randomly generate one. `` (three unreadable replies: a random option) or
  ``Failed in Prefetch, no GPT-based answer matching under `exact_matching` policy.`` (no judge:
  option ``Z``). The option is found again by running the same rules (`can_infer`, lmmprobe's
  reproduction) on the logged text.
- ``eval_circular_group`` / ``prefetch_circular_group`` (``mcq_circular_eval``) write one log
  per CircularEval group, on the group's first row (``index`` below 1e6) only: ``Succeed During
  Pre-fetching`` (the rules read every copy right), ``Failed in Prefetching Rolling i: Answer is
  G, Prediction is P, Pre-fetched is R. `` (the rules read copy i wrong, R), the exact-matching
  failure above (no judge, and some copy its rules could not read: which one is not said, so
  no copy has a reading), or one line per copy in turn: ``Rolling i
  Matched.`` (rules, right), ``Rolling i: Answer is G, Prediction is P, Pre-fetched is R.`` (the
  judge read R, right) and ``Failed in Rolling i: Answer is G; Prediction is P; Pre-fetched is
  R; Match Log is L.`` (the judge read R, wrong; or L says R was drawn at random), after which
  the group stops. Copy i is the group's i-th row in ``index`` order (the evaluation sorts by
  ``index``).

G and P are text the model wrote (P) or the dataset holds (G), and L the judge's free reply, so
a log is never split on its separators: each entry is found by the exact text VLMEvalKit wrote
for its copy, built from that copy's known gold and prediction (``str`` of the cell pandas
loaded: an empty or ``N/A`` cell is ``nan``), and a failed entry's match log is what is left
after its known prefix, to the log's end. An entry that matches no such text ends the reading:
that copy and the later ones have none (never a guessed one).

A copy the log says nothing about (before a failed pre-fetch: read right or not read; after the
copy that failed: never evaluated) has no reading here. A success line keeps no match log, so
a random option that happened to be right cannot be told from a judge's reading there: it is
read as the judge's.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from lmmprobe.parse.vlmevalkit import LATEST_RULES, RULE_VERSIONS, can_infer
from lmmprobe.predictions._rows import pandas_missing

__all__ = [
    "CIRCULAR_GROUP_FIELD",
    "EXACT_MATCHING_LOG",
    "RANDOM_MATCH_LOG",
    "Copy",
    "GroupLog",
    "LogReading",
    "NotItsLog",
    "RuleChoice",
    "RuleTally",
    "circular_log",
    "is_circular_log",
    "vanilla_reading",
]

CIRCULAR_GROUP_FIELD = "circular_group_of"
"""The `ImportedPrediction.fields` key marking a row of a CircularEval result table read without
the prediction table beside it: its ``hit`` is its group's CircularEval verdict (every copy
right), not this row's. The value is the table's ``MODEL_DATASET`` stem (the prediction table's
name without its suffix)."""

DecidedBy = Literal["rule", "judge", "random", "unread"]

RANDOM_MATCH_LOG = "Failed to predict, thus randomly generate one."
"""``extract_answer_from_item``'s match log after three judge replies its rules cannot read."""

EXACT_MATCHING_LOG = (
    "Failed in Prefetch, no GPT-based answer matching under `exact_matching` policy."
)
"""Its log where the rules read nothing and no judge is configured (the option is ``Z``)."""

_VANILLA = "Match Log: "
_SUCCEED = "Succeed During Pre-fetching"
_PREFETCH = "Failed in Prefetching Rolling "
_FIRST = ("Rolling 0 Matched.", "Rolling 0: Answer is ", "Failed in Rolling 0: Answer is ")
"""How ``eval_circular_group``'s log begins: its entry for copy 0."""
_LETTERS = frozenset(string.ascii_uppercase)
_MATCH_LOG = "; Match Log is "
Copy = tuple[str, str | None]
"""One copy of a group as its prediction table holds it: (``prediction``, ``answer``)."""


_MAX_ROLLING_DIGITS = 2
"""A rolling number is a copy's (below 26, one per option): two ASCII digits at most."""


class NotItsLog(ValueError):
    """A log in the shape of ``mcq_circular_eval``'s that VLMEvalKit cannot have written."""


@dataclass(frozen=True)
class LogReading:
    """What VLMEvalKit read from one answer, as its log states it."""

    by: DecidedBy
    """``rule``: its ``can_infer`` rules read the answer; ``judge``: they read its judge's reply;
    ``random``: it drew a random option (no reading); ``unread``: nothing read and no judge
    asked (exact matching: option ``Z``, no reading)."""
    letter: str | None = None
    """The option read (or drawn, for ``random`` where the log names it); None where the log
    does not name it."""
    gold: bool = False
    """The log says only that the option read was the gold one (``Rolling i Matched.``,
    ``Succeed During Pre-fetching``): the reading is the row's gold letter."""


@dataclass(frozen=True)
class GroupLog:
    """One CircularEval group's log: what it says each copy (rolling) read."""

    readings: Mapping[int, LogReading]
    """By copy number (0 for the group's first row): the copies the log speaks of."""
    every: LogReading | None = None
    """A reading that holds for every copy of the group (pre-fetching read them all right)."""

    def reading(self, rolling: int) -> LogReading | None:
        """What copy `rolling` read, or None where the log does not say."""
        return self.every if self.every is not None else self.readings.get(rolling)


def _choices(options: Mapping[str, str]) -> dict[str, str]:
    return {k: str(v) for k, v in options.items() if k in string.ascii_uppercase}


def _vanilla_text(log: str) -> str | None:
    """The match log an ``eval_vanilla`` log holds; None if not such a log."""
    if not log.startswith(_VANILLA):
        return None
    text = log[len(_VANILLA) :]
    # eval_vanilla appends ". " after the match log (trailing spaces may be lost on the way).
    return text[:-2] if text.endswith(". ") else text[:-1] if text.endswith(".") else text


def vanilla_reading(
    log: str, prediction: str, options: Mapping[str, str], version: str = LATEST_RULES
) -> LogReading | None:
    """The reading an ``eval_vanilla`` log records for one answer; None if not such a log.

    Args:
        log: The row's ``log`` cell.
        prediction: The row's ``prediction`` (what the rules read first).
        options: Option letter to option text (the row's ``A``, ``B``... cells).
        version: The version of ``can_infer`` that wrote the log (`RuleTally`).

    """
    text = _vanilla_text(log)
    if text is None:
        return None
    if text.strip() == RANDOM_MATCH_LOG:
        return LogReading("random")
    if text == EXACT_MATCHING_LOG:
        return LogReading("unread", "Z")
    choices = _choices(options)
    if text == prediction:
        letter = can_infer(prediction, choices, version)
        if letter:
            return LogReading("rule", letter)
    letter = can_infer(text, choices, version)
    # The rules could not read the prediction, so the logged text is the judge's reply.
    return LogReading("judge", letter) if letter else None


def _reproduces(
    version: str, text: str, prediction: str, choices: Mapping[str, str], gold: str, hit: bool
) -> bool:
    """Whether `version`'s rules give the reading and hit an ``eval_vanilla`` log records."""
    own = can_infer(prediction, choices, version)
    if text == prediction:
        # The rules read the prediction: the option read decides the hit.
        return own is not None and (own == gold) == hit
    if own is not None:
        return False  # the rules read it: no judge would have been asked
    if text.strip() == RANDOM_MATCH_LOG:
        return True
    if text == EXACT_MATCHING_LOG:
        return not hit  # option Z, never a gold
    reply = can_infer(text, choices, version)
    return reply is not None and (reply == gold) == hit


def _reads_first(
    version: str, first: LogReading, prediction: str, choices: Mapping[str, str], gold: str
) -> bool:
    """Whether `version`'s rules read a CircularEval group's copy 0 as its log records.

    The result row is copy 0 (its ``prediction`` and options), so its log's entry for copy 0
    tells what the rules read there: an option (a failed pre-fetch names it, a match is the
    gold) or nothing (the judge was asked, or an option drawn). The December 2023 rules read a
    lone letter among ``A`` to ``E`` whatever the options, and a refusal as ``E`` before
    2023-12-25 (its random draw then took ``E``, not ``Z``, beside the options), so their logs
    name readings no later version gives.
    """
    own = can_infer(prediction, choices, version)
    if first.by == "rule":
        return own == (gold if first.gold else first.letter)
    if first.by == "random" and first.letter is not None and first.letter not in choices:
        # The draw's one letter beside the options is the refusal's: E before 2023-12-25,
        # Z since (the same commit changed both).
        return not own and first.letter == RULE_VERSIONS[version].refusal
    return not own  # the rules read nothing: the judge was asked (or an option drawn)


@dataclass(frozen=True)
class RuleChoice:
    """The version of ``can_infer`` a table is read with, and how it was told."""

    version: str
    told: Literal["given", "verdicts", "latest"]
    """``given``: ``--tool-version``; ``verdicts``: the one that reproduces the most of the
    table's recorded readings and hits; ``latest``: nothing in the table tells the versions
    apart (every version reproduces every row alike)."""
    telling: int = 0
    """Rows that some version reproduces and another does not."""
    contradicted: int = 0
    """Rows `version` does not reproduce (none reproduces every row)."""
    alike: tuple[str, ...] = ()
    """The other versions that reproduce as many rows (read with the latest of them)."""

    def note(self, path: str) -> str:
        """The choice in one line, as ``score`` prints it."""
        head = f"{path}: its log is read with VLMEvalKit's can_infer of {self.version}"
        if self.told == "given":
            return f"{head} (--tool-version)"
        if self.told == "latest":
            return f"{head}, the latest: no recorded reading tells its versions apart"
        line = (
            f"{head}, told from the file's own verdicts: of the {self.telling} rows whose "
            f"recorded reading and hit differ by version, it reproduces "
            f"{self.telling - self.contradicted}"
        )
        if self.alike:
            line += f" ({', '.join(self.alike)} as many)"
        return line


class RuleTally:
    """Which versions of ``can_infer`` reproduce a table's recorded readings, row by row.

    An ``eval_vanilla`` row records its reading and hit; a CircularEval row (its group's log)
    what the rules read from its own answer, copy 0 (`_reads_first`).
    """

    def __init__(self) -> None:
        self._versions = tuple(RULE_VERSIONS)
        self._kept = dict.fromkeys(self._versions, 0)
        self.telling = 0

    def add(
        self, log: str, prediction: str, options: Mapping[str, str], gold: str, hit: bool
    ) -> None:
        """Count one row with its ``log``, ``prediction``, options, gold letter and ``hit``.

        A log in neither format (or a CircularEval log that says nothing of copy 0) tells
        nothing and is not counted.
        """
        text = _vanilla_text(log)
        choices = _choices(options)
        if text is not None:
            kept = [
                v for v in self._versions if _reproduces(v, text, prediction, choices, gold, hit)
            ]
        else:
            try:
                group = circular_log(log, [(prediction, gold)])
            except NotItsLog:
                return  # the reader names it where it reads the row
            first = group.reading(0) if group is not None else None
            if first is None:
                return
            kept = [v for v in self._versions if _reads_first(v, first, prediction, choices, gold)]
        self._count(kept)

    def _count(self, kept: list[str]) -> None:
        """Count a row the versions in `kept` reproduce, where it tells versions apart."""
        if 0 < len(kept) < len(self._versions) or not kept:
            self.telling += 1
            for v in kept:
                self._kept[v] += 1

    def choose(self, given: str | None = None) -> RuleChoice:
        """The version to read the table with.

        `given`, else the one the rows tell (the latest of those that reproduce the most),
        else the latest.
        """
        if given is not None:
            return RuleChoice(given, "given")
        if not self.telling:
            return RuleChoice(LATEST_RULES, "latest")
        best = max(self._kept.values())
        tied = [v for v in self._versions if self._kept[v] == best]
        return RuleChoice(tied[-1], "verdicts", self.telling, self.telling - best, tuple(tied[:-1]))


def is_circular_log(log: str) -> bool:
    """Whether `log` is in one of ``mcq_circular_eval``'s formats (its copies unknown)."""
    text = log.strip()
    return (
        text in (_SUCCEED, EXACT_MATCHING_LOG)
        or text.startswith(_PREFETCH)
        or log.startswith(_FIRST)
    )


def _said(prediction: str) -> tuple[str, ...]:
    """How VLMEvalKit may have written a prediction: ``str(x)`` of the cell it loaded.

    Its ``load`` reads a tsv/csv/xlsx with pandas, which loads an empty cell or ``N/A`` (its
    default ``na_values``, `pandas_missing`) as NaN, written ``nan``. pandas compares the cell
    as it is, unstripped (``" NA"`` stays ``" NA"``), so this does too; only the exact text of
    an entry decides.
    """
    return (prediction, "nan") if pandas_missing(prediction) else (prediction,)


def _entry(log: str, pos: int, i: int, copy: Copy) -> tuple[int, LogReading] | None:
    """Copy `i`'s entry at `pos`, matched by its exact text: (where the next begins, reading).

    The variable parts (gold, prediction) are the copy's known texts, so text the model wrote
    is never taken for a separator; the judge's free text (``Match Log is L``) is only what is
    left after the last entry's known prefix. None where no entry of copy `i` begins at `pos`.
    """
    prediction, gold = copy
    if gold is None:
        return None
    rest = log[pos:]
    matched = f"Rolling {i} Matched.\n"
    if rest.startswith(matched) or rest.rstrip() == matched.rstrip():
        return min(pos + len(matched), len(log)), LogReading("rule", gold=True)
    for said in _said(prediction):
        # The judge read the gold (it is right): every part of the line is known.
        judged = f"Rolling {i}: Answer is {gold}, Prediction is {said}, Pre-fetched is {gold}.\n"
        if rest.startswith(judged) or rest.rstrip() == judged.rstrip():
            return min(pos + len(judged), len(log)), LogReading("judge", gold)
        failed = f"Failed in Rolling {i}: Answer is {gold}; Prediction is {said}; Pre-fetched is "
        tail = rest[len(failed) :]
        if rest.startswith(failed) and tail[:1] in _LETTERS and tail[1:].startswith(_MATCH_LOG):
            # The last entry: its match log runs to the log's end, then ".\n".
            match_log = tail[1 + len(_MATCH_LOG) :].rstrip()
            match_log = match_log[:-1] if match_log.endswith(".") else match_log
            drawn = match_log.strip() == RANDOM_MATCH_LOG
            return len(log), LogReading("random" if drawn else "judge", tail[0])
    return None


def circular_log(log: str, copies: Sequence[Copy]) -> GroupLog | None:
    """What a CircularEval group's log says each copy read; None if not such a log.

    Raises:
        NotItsLog: A failed pre-fetch whose rolling number VLMEvalKit cannot have written.

    Args:
        log: The group's ``log`` cell.
        copies: The group's copies in order (copy 0 first), as far as they are known: each
            entry is found by the exact text VLMEvalKit wrote for that copy's gold and
            prediction. An entry that matches none (a copy not known, or written otherwise)
            ends the reading: the copies from there on have none.

    """
    if not is_circular_log(log):
        return None
    text = log.strip()
    if text == _SUCCEED:
        return GroupLog({}, LogReading("rule", gold=True))
    if text == EXACT_MATCHING_LOG:
        # Some copy went unread (no judge), the log does not say which: no copy has a reading.
        return GroupLog({})
    if text.startswith(_PREFETCH):
        # The copies before it were read right or not at all: the log does not say which.
        number = text[len(_PREFETCH) :].split(":", 1)[0]
        # VLMEvalKit writes the copy's number in ASCII digits; str.isdigit alone also takes
        # "²" or other scripts' digits, which int() then refuses (as it does 5,000 digits).
        if not (number.isascii() and number.isdigit() and len(number) <= _MAX_ROLLING_DIGITS):
            raise NotItsLog(
                f"{(_PREFETCH + number)[:60]!r}: the rolling number is not VLMEvalKit's "
                f"(it writes the copy's number, at most {_MAX_ROLLING_DIGITS} ASCII digits)"
            )
        i = int(number)
        if i < len(copies) and copies[i][1] is not None:
            prediction, gold = copies[i]
            for said in _said(prediction):
                known = f"{_PREFETCH}{i}: Answer is {gold}, Prediction is {said}, Pre-fetched is "
                tail = log[len(known) :].rstrip()
                if log.startswith(known) and tail[:1] in _LETTERS and tail[1:] == ".":
                    return GroupLog({i: LogReading("rule", tail[0])})
        return GroupLog({})
    readings: dict[int, LogReading] = {}
    pos = 0
    for i, copy in enumerate(copies):
        found = _entry(log, pos, i, copy)
        if found is None:
            break
        pos, readings[i] = found
        if pos >= len(log):
            break
    return GroupLog(readings)
