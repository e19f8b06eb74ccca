"""VLMEvalKit's prediction tables: ``MODEL_DATASET.xlsx`` / ``.tsv`` / ``.csv``.

Layout from open-compass/VLMEvalKit @ e8e78f0: ``vlmeval/inference.py`` writes the dataset's
own columns (``index``, ``question``, ``A``..., ``answer``, ``category``, ``l2-category``...)
plus ``prediction`` (and ``thinking`` when ``SPLIT_THINK`` is set: ``prediction`` then holds
the answer after ``</think>`` and ``thinking`` what came before), through
``vlmeval/smp/file.py``'s ``dump`` (xlsx by default, ``PRED_FORMAT=tsv``); its evaluation
writes ``MODEL_DATASET_JUDGE_result.xlsx`` (``_openai_result`` for GPT judges, ``_exact_matching``
without one; ``_JUDGE_vanilla_all_result`` / ``_vanilla_circ0_result`` with ``PRINT_VANILLA=1``)
with ``hit`` and ``log`` columns (``vlmeval/dataset/utils/multiple_choice.py``; ``GT`` is
dropped before it is written).

``hit`` is read as the tool's verdict, the judge named in the file name as its judge, and the
``log`` as what VLMEvalKit read from each answer (`_vlmevalkit_log`): the option its rules or
its judge read (``tool_extraction``, ``tool_decided_by``), or that it drew a random option or
read nothing. A log in none of its formats leaves the row with ``hit`` alone.

A CircularEval result table (MMBench, CCBench: ``mcq_circular_eval``) holds only each group's
first row, with the group's ``hit`` and ``log``. Where the prediction table it was made from
lies beside it (``MODEL_DATASET`` with the same stem), every row of that table is read instead,
each copy with the reading its group's log states for it and, as its verdict, whether that
reading is the copy's gold (no verdict where the log does not say), so that CircularEval can be
computed again; without it, the first rows alone are read, with the group's ``hit``, each
marked (`CIRCULAR_GROUP_FIELD`) so that ``score`` names the missing table and the audit files
the difference as a group verdict. Each copy's entry in its group's log is found by the exact
text written for that copy's gold and prediction (`circular_log`), so the prediction table is
read twice and the texts of the copies of groups with a per-copy log are held meanwhile
(not the whole table). VLMEvalKit evaluates a dataset by CircularEval when its name
holds ``mmbench``, ``ccbench``, ``circular`` or ``mmcr`` (``vlmeval/dataset/image_mcq.py``
lines 269-274, ``listinstr``, case-insensitive), and writes ``_JUDGE_result`` for it
(``_vanilla_..._result`` only for ``PRINT_VANILLA``).
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lmmprobe.data.base import DataError
from lmmprobe.parse.vlmevalkit import (
    LATEST_RULES,
    RULE_VERSIONS,
    can_infer,
    known_versions,
    yorn_extraction,
)
from lmmprobe.predictions._rows import (
    as_text,
    as_verdict,
    json_safe,
    need,
    pandas_missing,
    prediction_text,
    row_error,
)
from lmmprobe.predictions._stream import UnreadableFile, iter_table, sha256_of
from lmmprobe.predictions.imported import (
    READERS,
    ImportedPrediction,
    Origin,
    ReadOptions,
)
from lmmprobe.predictions.readers._vlmevalkit_log import (
    CIRCULAR_GROUP_FIELD,
    EXACT_MATCHING_LOG,
    Copy,
    GroupLog,
    LogReading,
    NotItsLog,
    RuleChoice,
    RuleTally,
    circular_log,
    is_circular_log,
    vanilla_reading,
)
from lmmprobe.schema import safe_text
from lmmprobe.schema.text import shown_value

__all__ = ["AUXMATCH", "VLMEvalKitTable", "judged_beside", "table_for"]

AUXMATCH = "_auxmatch"
"""The stem's end of the table ``ImageYORNDataset.evaluate`` writes beside a yes/no benchmark's
predictions (MME, POPE, HallusionBench): ``extracted`` (the Yes/No/Unknown it read) and
``score`` (``answer == extracted``)."""
_YES_NO = ("Yes", "No")

_RESULT = re.compile(
    r"^(?P<stem>.+?)_(?P<judge>exact_matching|[^_]+)(?:_vanilla_(?:all|circ0))?_result$"
)
_TABLES = (".xlsx", ".tsv", ".csv")
_GROUP = 1_000_000
"""A CircularEval copy's ``index`` is its group's (its first row's) plus a multiple of 1e6."""
_OPTIONS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_MAX_COPIES = len(_OPTIONS)
"""The most copies a CircularEval group has: one per rotation of its options (at most A..Z)."""
_CIRCULAR_NAMES = ("mmbench", "ccbench", "circular", "mmcr")
"""VLMEvalKit's CircularEval datasets (image_mcq.py line 270: ``listinstr`` on the name)."""


@dataclass(frozen=True)
class _Group:
    row: int
    hit: float | None
    text: str | None
    """The group's ``log`` as written (shown with each of its copies)."""
    circular: bool
    """The log is in one of ``mcq_circular_eval``'s formats."""


def _int(value: Any) -> int | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() else None


def _options(row: Mapping[str, Any]) -> dict[str, str]:
    """The row's options (``build_choices``): its letter cells that pandas reads as present.

    VLMEvalKit reads its tables with pandas' defaults (``load``), so a cell holding "None" or
    "NA" is NaN to it, as an empty one is (`pandas_missing`): no option of the row.
    """
    out: dict[str, str] = {}
    for letter in _OPTIONS:
        value = row.get(letter)
        if pandas_missing(value):
            continue
        out[letter] = (
            str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
        )
    return out


def _predictions_beside(path: Path, stem: str) -> Path | None:
    for suffix in (path.suffix, *_TABLES):
        other = path.with_name(stem + suffix)
        if other.is_file() and other != path:
            return other
    return None


_SCORE_FILE = re.compile(r"^(?P<stem>.+?)_(?:acc|score|score_fine)$")
"""A score file ``evaluate`` writes from a table: ``_acc.csv`` (choice), ``_score.csv`` (yes/no,
MM-Vet), ``_score_fine.csv``, ``_score.json`` (OCRBench)."""
_SCORE_SUFFIXES = (".csv", ".json")
_MAX_BESIDE = 10_000
"""Entries of a folder looked at for a table's sidecars: a work folder holds a few hundred."""


def judged_beside(path: Path) -> list[Path]:
    """The judged tables VLMEvalKit's ``evaluate`` wrote beside the prediction table `path`.

    ``MODEL_DATASET_auxmatch`` (yes/no benchmarks) and ``MODEL_DATASET_JUDGE_result`` (choice
    benchmarks; ``_vanilla_`` forms, written for ``PRINT_VANILLA`` beside the main one, are left
    out), in any of the table formats, sorted by name.

    Raises:
        DataError: The folder holds more than `_MAX_BESIDE` entries named after the table.

    """
    found: list[Path] = []
    for n, entry in enumerate(path.parent.glob(f"{glob.escape(path.stem)}_*")):
        if n >= _MAX_BESIDE:
            raise DataError(f"{path.parent}: more than {_MAX_BESIDE:,} files named after "
                            f"{path.name}: not a VLMEvalKit work folder")  # fmt: skip
        if entry.suffix.lower() not in _TABLES or not entry.is_file():
            continue
        m = _RESULT.match(entry.stem)
        result = m is not None and m["stem"] == path.stem and "_vanilla_" not in entry.stem
        if result or entry.stem == path.stem + AUXMATCH:
            found.append(entry)
    return sorted(found)


def table_for(path: Path) -> tuple[Path, str] | None:
    """The VLMEvalKit table a prediction table or a score file stands for, and how it was found.

    The table ``score`` reads is the one holding the tool's recorded verdicts beside the
    predictions: for a prediction table ``MODEL_DATASET``, its one judged table
    (`judged_beside`); for a score file (``MODEL_DATASET_acc.csv``, ``_score.csv``,
    ``_score.json``), the judged table it was computed from, else its prediction table (what
    OCRBench's ``evaluate`` reads). None where `path` is read as it is: a judged table, a
    prediction table with no judged table beside it (or several: which one is meant is the
    user's to say, by giving it), or no VLMEvalKit file.
    """
    if not path.is_file():
        return None
    score = _SCORE_FILE.match(path.stem)
    if score is not None and path.suffix.lower() in _SCORE_SUFFIXES:
        # A stem may hold dots (Qwen2.5-VL_MME): the suffix is added, never swapped.
        judged = judged_beside(path.with_name(score["stem"] + ".xlsx"))
        if len(judged) == 1:
            return judged[0], f"the table {path.name} was computed from"
        for suffix in _TABLES:
            table = path.with_name(score["stem"] + suffix)
            if not judged and table.is_file():
                return table, f"the prediction table {path.name} was computed from"
        return None
    if path.suffix.lower() not in _TABLES or _RESULT.match(path.stem):
        return None
    if path.stem.endswith(AUXMATCH):
        return None
    judged = judged_beside(path)
    if len(judged) == 1:
        return judged[0], f"the judged table VLMEvalKit wrote beside {path.name}, with its verdicts"
    return None


_Identity = tuple[int, int, int, int]


def _identity(path: Path) -> _Identity:
    """What changes when a file is replaced or rewritten: device, inode, size, modified time.

    Raises:
        DataError: The file is gone.

    """
    try:
        st = path.stat()
    except OSError:
        raise _changed(path) from None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class VLMEvalKitTable:
    """A VLMEvalKit prediction (or judged result) table with ``index`` and ``prediction``.

    A table is read more than once (hashed for the origin, its groups first, the copies of
    their groups twice), so each read checks it is the file that was hashed: a table a sync
    tool or a running evaluation replaces (or rewrites) meanwhile is named, never read half
    old and half new, nor recorded under the hash of other bytes than those scored.
    """

    tool = "vlmevalkit"

    def __init__(self) -> None:
        self._hashed: dict[Path, _Identity] = {}
        """Each file `origin` hashed, as it was then."""
        self._rules: dict[tuple[Path, _Identity, str | None], RuleChoice] = {}
        """The rule version each judged table is read with (`_rule_choice`), per version told."""

    def _since_hashed(self, path: Path) -> _Identity:
        """`path`'s identity now, checked to be the one `origin` hashed (where it did)."""
        now = _identity(path)
        if self._hashed.get(path, now) != now:
            raise _changed(path)
        return now

    def sniff(self, path: Path) -> bool:
        """A table whose header has ``index`` and ``prediction``."""
        if not path.is_file() or path.suffix.lower() not in _TABLES:
            return False
        try:
            for _, row in iter_table(path):
                return "index" in row and "prediction" in row
        except UnreadableFile:
            raise  # the file itself is broken: say so, not that no layout fits
        except Exception:
            return False
        return False

    def origin(self, path: Path, options: ReadOptions) -> Origin:
        """The file's hash, its ``MODEL_DATASET`` stem and the judge its name records."""
        detail = {"file": path.name, "stem": path.stem}
        seen = {path: _identity(path)}
        m = _RESULT.match(path.stem)
        if m:
            detail["stem"] = m["stem"]
            detail["judge"] = m["judge"]
            beside = _predictions_beside(path, m["stem"])
            if beside is not None and self._groups(path):
                seen[beside] = _identity(beside)
                detail["predictions"] = beside.name
                detail["predictions_sha256"] = sha256_of(beside, within=path.parent)
            rules = self._rule_choice(path, options.tool_version)
            detail["rule_version"] = rules.version
            detail["rule_version_from"] = rules.told
            detail["rule_version_note"] = rules.note(str(path))
        sha = sha256_of(path)
        for hashed, before in seen.items():
            _unchanged(hashed, before)
        self._hashed.update(seen)
        return Origin(self.tool, str(path), sha, detail)

    def read(self, path: Path, options: ReadOptions) -> Iterator[ImportedPrediction]:
        """One prediction per row; ``index`` joins it to the benchmark (module docstring)."""
        before = self._since_hashed(path)
        m = _RESULT.match(path.stem)
        if m is None and path.stem.endswith(AUXMATCH):
            yield from _yes_no_rows(path)
        elif m is None:
            # No log to read: a version is the --as-published hook's to take or refuse.
            yield from self._rows(path, judged=False)
        else:
            rules = self._rule_choice(path, options.tool_version).version
            beside = _predictions_beside(path, m["stem"])
            groups = self._groups(path) if beside is not None else {}
            if beside is None or not groups:
                circular = "_vanilla_" not in path.stem and any(
                    name in m["stem"].lower() for name in _CIRCULAR_NAMES
                )
                yield from self._rows(
                    path, judged=True, group_of=m["stem"] if circular else None, rules=rules
                )
            else:
                yield from self._copies(path, beside, groups)
        _unchanged(path, before)

    def _rule_choice(self, path: Path, given: str | None) -> RuleChoice:
        """The version of ``can_infer`` that wrote a judged table's log.

        `given`, else the one that reproduces the most of its ``eval_vanilla`` rows' readings
        and hits and of its CircularEval rows' readings of their own answer (`RuleTally`).

        Raises:
            DataError: `given` is not a version of ``can_infer``.

        """
        _check_version(given)
        key = (path, self._since_hashed(path), given)
        if key not in self._rules:
            tally = RuleTally()
            if given is None:
                for n, row in iter_table(path):
                    log, hit = row.get("log"), row.get("hit")
                    where = f"{path}:row {n}"
                    if not isinstance(log, str) or hit is None:
                        continue
                    _, prediction, gold = _basics(where, row)
                    verdict = as_verdict(where, "hit", hit)
                    if gold and verdict is not None:
                        tally.add(log, prediction, _options(row), gold, verdict == 1.0)
            self._rules[key] = tally.choose(given)
        return self._rules[key]

    def _rows(
        self,
        path: Path,
        *,
        judged: bool,
        group_of: str | None = None,
        rules: str = LATEST_RULES,
    ) -> Iterator[ImportedPrediction]:
        """The table's own rows, each with what its log says it read.

        `group_of`: the ``MODEL_DATASET`` stem of a CircularEval result table, whose ``hit``
        is each group's (marked on every first row it holds). `rules`: the version of
        ``can_infer`` its ``eval_vanilla`` log is read with.
        """
        for n, row in iter_table(path):
            where = f"{path}:row {n}"
            index, prediction, gold = _basics(where, row)
            hit = as_verdict(where, "hit", row.get("hit")) if "hit" in row else None
            reading: LogReading | None = None
            changed: tuple[str, str | None] | None = None
            number = _int(index)
            if judged:
                log = row.get("log")
                if isinstance(log, str):
                    reading = vanilla_reading(log, prediction, _options(row), rules)
                    if reading is not None and rules != LATEST_RULES:
                        changed = _rules_changed(prediction, _options(row), rules)
                    # The group's log is on its first row: copy 0 (the lowest index), the
                    # only copy whose prediction and gold this table holds.
                    if reading is None and number is not None and number < _GROUP:
                        group = _circular(where, log, [(prediction, gold)])
                        reading = group.reading(0) if group is not None else None
            if group_of is not None and number is not None and number < _GROUP:
                row = dict(row) | {CIRCULAR_GROUP_FIELD: group_of}
            yield _prediction(where, n, index, prediction, gold, hit, reading, row, changed=changed)

    def _groups(self, path: Path) -> dict[int, _Group]:
        """A CircularEval result table's groups by first index; empty for any other table."""
        groups: dict[int, _Group] = {}
        circular = False
        for n, row in iter_table(path):
            where = f"{path}:row {n}"
            index = _int(row.get("index"))
            log = row.get("log")
            text = log if isinstance(log, str) else None
            known = text is not None and is_circular_log(text)
            circular = circular or known
            if index is not None and index < _GROUP:
                hit = as_verdict(where, "hit", row.get("hit")) if "hit" in row else None
                groups[index] = _Group(n, hit, text, known)
        return groups if circular else {}

    def _copies(
        self, path: Path, beside: Path, groups: Mapping[int, _Group]
    ) -> Iterator[ImportedPrediction]:
        """Every row of the prediction table beside a CircularEval result, read by its group."""
        before = self._since_hashed(beside)
        members: dict[int, list[int]] = {}
        # The copies' texts, for the groups whose log has an entry per copy: each entry is
        # found by the exact text written for its copy's gold and prediction.
        texts: dict[int, dict[int, Copy]] = {}
        for n, row in iter_table(beside, beside.parent):
            first = _int(row.get("index"))
            if first is None:
                continue
            seen = members.setdefault(first % _GROUP, [])
            seen.append(first)
            if len(seen) > _MAX_COPIES and first % _GROUP in groups:
                # More copies than options to rotate: not VLMEvalKit's table, and each copy
                # would carry (and match) the group's whole log.
                raise row_error(
                    f"{beside}:row {n}",
                    "index",
                    f"{first}: copy {len(seen)} of CircularEval group {first % _GROUP}; "
                    f"VLMEvalKit makes at most {_MAX_COPIES}, one per rotation of the options",
                )
            group = groups.get(first % _GROUP)
            text = group.text if group is not None and group.circular else None
            if text is not None and not _whole(text):
                _, prediction, gold = _basics(f"{beside}:row {n}", row)
                texts.setdefault(first % _GROUP, {})[first] = (prediction, gold)
        _unchanged(beside, before)  # the second pass reads what the first one did
        # Copy i is the group's i-th row in index order.
        rolling_of = {i: k for v in members.values() for k, i in enumerate(sorted(v))}
        logs: dict[int, GroupLog | None] = {}
        # Each group's log as shown, made (and cut, where long) once and shared by its copies.
        shown: dict[int, Any] = {}
        for g, group in groups.items():
            text = json_safe(group.text)
            shown[g] = safe_text(text) if isinstance(text, str) else text
            if group.circular and group.text is not None:
                known = texts.get(g, {})
                copies = [known.get(i, ("", None)) for i in sorted(members.get(g, []))]
                logs[g] = _circular(f"{path}:row {group.row}", group.text, copies)
        for n, row in iter_table(beside, beside.parent):
            where = f"{beside}:row {n}"
            index, prediction, gold = _basics(where, row)
            number = _int(index)
            group = groups.get(number % _GROUP) if number is not None else None
            if number is None or group is None:
                continue  # not evaluated by VLMEvalKit: not in its result table
            rolling = rolling_of.get(number)
            if rolling is None:
                raise _changed(beside)
            log = logs.get(number % _GROUP)
            reading = log.reading(rolling) if log is not None else None
            letter = _letter(reading, gold)
            if letter is not None and gold:
                verdict: float | None = float(letter == gold)
            else:
                # The log does not say what this copy read; an unreadable log keeps the
                # group's hit on its first row.
                verdict = group.hit if log is None and rolling == 0 else None
            fields = dict(row) | {"group_hit": group.hit, "rolling": rolling}
            shared = {"group_log": shown[number % _GROUP]}
            yield _prediction(where, n, index, prediction, gold, verdict, reading, fields, shared)
        _unchanged(beside, before)


def _circular(where: str, log: str, copies: list[Copy]) -> GroupLog | None:
    """`circular_log`, a log VLMEvalKit cannot have written named at `where`."""
    try:
        return circular_log(log, copies)
    except NotItsLog as exc:
        raise row_error(where, "log", str(exc)) from None


def _changed(path: Path) -> DataError:
    return DataError(
        f"{path}: changed while it was read (replaced or rewritten between its reads); "
        "read it again once it is written"
    )


def _unchanged(path: Path, before: _Identity) -> None:
    """Raise `_changed` unless `path` is still the file it was (`_identity`)."""
    if _identity(path) != before:
        raise _changed(path)


def _whole(log: str) -> bool:
    """A group log that speaks of the whole group at once (no copy's text needed)."""
    return log.strip() in ("Succeed During Pre-fetching", EXACT_MATCHING_LOG)


def _basics(where: str, row: Mapping[str, Any]) -> tuple[str, str, str | None]:
    index = as_text(where, "index", need(where, row, "index"))
    if not index:
        raise row_error(where, "index", "empty")
    said = need(where, row, "prediction")
    # An empty answer is an empty cell: "" in a tsv/csv, NaN through pandas, None from an xlsx
    # (VLMEvalKit writes the model's empty reply so); it is read as the empty answer, as the
    # other formats give it, not refused.
    prediction = "" if said is None else as_text(where, "prediction", said)
    gold = row.get("GT", row.get("answer"))
    return index, prediction, None if gold is None else as_text(where, "answer", gold)


def _check_version(given: str | None) -> None:
    """Refuse a ``--tool-version`` that is not a version of ``can_infer``.

    Raises:
        DataError: It is not.

    """
    if given is not None and given not in RULE_VERSIONS:
        raise DataError(
            f"--tool-version {shown_value(given)!r}: VLMEvalKit's answer-reading rules (can_infer) have "
            f"versions {known_versions()}"
        )


def _rules_changed(
    prediction: str, options: Mapping[str, str], rules: str
) -> tuple[str, str | None] | None:
    """(`rules`, the latest rules' reading) where the two read `prediction` otherwise."""
    then, now = can_infer(prediction, options, rules), can_infer(prediction, options)
    return None if then == now else (rules, now)


def _letter(reading: LogReading | None, gold: str | None) -> str | None:
    if reading is None:
        return None
    return gold if reading.gold else reading.letter


def _prediction(
    where: str,
    n: int,
    index: str,
    prediction: str,
    gold: str | None,
    verdict: float | None,
    reading: LogReading | None,
    row: Mapping[str, Any],
    shared: Mapping[str, Any] | None = None,
    *,
    changed: tuple[str, str | None] | None = None,
) -> ImportedPrediction:
    """The row's prediction.

    `shared`: fields already made safe, the same object for many rows (a group's log), added
    as they are so that no row holds its own copy. `changed`: the rule version its log was
    read with and what the latest rules read instead, where they part (`_rules_changed`).
    """
    letter = _letter(reading, gold)
    if reading is not None and reading.by in ("rule", "judge") and letter is None:
        reading = None  # "read the gold" on a row without its gold: nothing to record
    text, refused = prediction_text(where, "prediction", prediction)
    return ImportedPrediction(
        row=n,
        sample_id=index,
        prediction=text,
        gold=gold,
        # VLMEvalKit's ``answer`` is the option's letter (its datasets' convention).
        gold_names="letter",
        tool_extraction=letter if reading is not None else None,
        tool_judged=reading is not None and reading.by in ("judge", "random"),
        tool_decided_by=reading.by if reading is not None else None,
        tool_verdict=verdict,
        tool_rule_version=changed[0] if changed is not None else None,
        tool_reading_latest=changed[1] if changed is not None else None,
        # ``image`` (base64) is left out; ``image_path`` is kept: MME's and POPE's id schemes
        # read it (`lmmprobe.predictions.id_schemes`).
        fields=json_safe({k: v for k, v in row.items() if k != "image" and k}) | dict(shared or {}),
        refused=refused,
    )


def _yes_no_rows(path: Path) -> Iterator[ImportedPrediction]:
    """An ``_auxmatch`` table's rows, each with the reading and verdict VLMEvalKit recorded.

    ``score`` is the tool's verdict (``answer == extracted``, as ``evaluate`` recomputes it
    where the column is missing) and ``extracted`` its reading, made by its rule
    (``YOrN_Extraction``, `yorn_extraction`) where the rule reads the answer so, else by its
    judge (``YOrN_auxeval``: asked only where the rule read ``Unknown``); ``Unknown`` is no
    reading (the rule read none, and no judge did).

    Raises:
        DataError: An ``extracted`` that is not Yes, No or Unknown, or a ``score`` that is no
            verdict (named by file, row and field).

    """
    for n, row in iter_table(path):
        where = f"{path}:row {n}"
        index, prediction, gold = _basics(where, row)
        said = row.get("extracted")
        extracted = None if said is None else as_text(where, "extracted", said)
        if extracted not in (*_YES_NO, "Unknown"):
            shown = shown_value(extracted or "")
            raise row_error(where, "extracted", f"{shown!r} is not Yes, No or Unknown (what "
                            "VLMEvalKit's yes/no reading gives)")  # fmt: skip
        verdict = as_verdict(where, "score", row["score"]) if "score" in row else None
        if verdict is None:
            verdict = float(gold == extracted)
        elif verdict not in (0.0, 1.0):
            raise row_error(where, "score", f"expected true or false, got {row['score']!r}")
        by: Literal["rule", "judge", "unread"] = "unread"
        if extracted in _YES_NO:
            by = "rule" if yorn_extraction(prediction) == extracted else "judge"
        text, refused = prediction_text(where, "prediction", prediction)
        yield ImportedPrediction(
            row=n,
            sample_id=index,
            prediction=text,
            gold=gold,
            # Yes / No: the answer's text, not an option letter.
            gold_names="text",
            # "Unknown" is what it recorded reading: nothing (its judgement stays unjudged).
            tool_extraction=extracted,
            tool_judged=by == "judge",
            tool_decided_by=by,
            tool_verdict=verdict,
            fields=json_safe({k: v for k, v in row.items() if k != "image" and k}),
            refused=refused,
        )


READERS.register("vlmevalkit", "VLMEvalKit's prediction tables (MODEL_DATASET.xlsx/.tsv/.csv)")(
    VLMEvalKitTable()
)
