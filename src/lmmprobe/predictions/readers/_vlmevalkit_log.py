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

A copy the log says nothing about (before a failed pre-fetch: read right or not read; after the
copy that failed: never evaluated) has no reading here. A success line keeps no match log, so
a random option that happened to be right cannot be told from a judge's reading there: it is
read as the judge's.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from lmmprobe.judge.protocols.mmbench_choice import can_infer

__all__ = [
    "CIRCULAR_GROUP_FIELD",
    "EXACT_MATCHING_LOG",
    "RANDOM_MATCH_LOG",
    "GroupLog",
    "LogReading",
    "circular_log",
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
_ENTRY = re.compile(
    r"(?m)^(?:Rolling (?P<matched>\d+) Matched\."
    r"|Rolling (?P<judged>\d+): Answer is "
    r"|Failed in Rolling (?P<failed>\d+): Answer is )"
)
_PREFETCH_FAILED = re.compile(
    r"^Failed in Prefetching Rolling (?P<i>\d+): Answer is .*, Pre-fetched is (?P<r>[A-Z])\.\s*$",
    re.DOTALL,
)
_JUDGED = re.compile(r", Pre-fetched is (?P<r>[A-Z])\.\s*$")
_FAILED = re.compile(r"; Pre-fetched is (?P<r>[A-Z]); Match Log is (?P<log>.*?)\.?\s*$", re.DOTALL)


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


def vanilla_reading(log: str, prediction: str, options: Mapping[str, str]) -> LogReading | None:
    """The reading an ``eval_vanilla`` log records for one answer; None if not such a log.

    Args:
        log: The row's ``log`` cell.
        prediction: The row's ``prediction`` (what the rules read first).
        options: Option letter to option text (the row's ``A``, ``B``... cells).

    """
    if not log.startswith(_VANILLA):
        return None
    text = log[len(_VANILLA) :]
    # eval_vanilla appends ". " after the match log (trailing spaces may be lost on the way).
    text = text[:-2] if text.endswith(". ") else text[:-1] if text.endswith(".") else text
    if text.strip() == RANDOM_MATCH_LOG:
        return LogReading("random")
    if text == EXACT_MATCHING_LOG:
        return LogReading("unread", "Z")
    choices = _choices(options)
    if text == prediction:
        letter = can_infer(prediction, choices)
        if letter:
            return LogReading("rule", letter)
    letter = can_infer(text, choices)
    # The rules could not read the prediction, so the logged text is the judge's reply.
    return LogReading("judge", letter) if letter else None


def circular_log(log: str) -> GroupLog | None:
    """What a CircularEval group's log says each copy read; None if not such a log."""
    text = log.strip()
    if text == "Succeed During Pre-fetching":
        return GroupLog({}, LogReading("rule", gold=True))
    if text == EXACT_MATCHING_LOG:
        # Some copy went unread (no judge), the log does not say which: no copy has a reading.
        return GroupLog({})
    m = _PREFETCH_FAILED.match(text)
    if m is not None:
        # The copies before it were read right or not at all: the log does not say which.
        return GroupLog({int(m["i"]): LogReading("rule", m["r"])})
    starts = list(_ENTRY.finditer(log))
    if not starts or starts[0].start() != 0:
        return None
    readings: dict[int, LogReading] = {}
    for n, start in enumerate(starts):
        end = starts[n + 1].start() if n + 1 < len(starts) else len(log)
        entry = log[start.start() : end]
        if start["matched"] is not None:
            readings[int(start["matched"])] = LogReading("rule", gold=True)
        elif start["judged"] is not None:
            j = _JUDGED.search(entry)
            if j is not None:
                readings[int(start["judged"])] = LogReading("judge", j["r"])
        else:
            f = _FAILED.search(entry)
            if f is not None:
                drawn = f["log"].strip().rstrip(".").strip() == RANDOM_MATCH_LOG.rstrip(".")
                readings[int(start["failed"])] = LogReading("random" if drawn else "judge", f["r"])
    return GroupLog(readings)
