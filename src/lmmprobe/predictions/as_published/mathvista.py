"""MathVista's figures as ``calculate_score.py`` writes them, from a file's recorded ``true_false``.

MathVista's ``evaluation/calculate_score.py`` (lupantech/MathVista) stores each problem's
``true_false`` in the output file and then aggregates it: the ``average`` (correct over every
problem in the file) and, per key of ``question_type``, ``answer_type`` and the metadata's
``language``, ``source``, ``category``, ``task``, ``context``, ``grade`` and ``skills`` (a
problem counts under each of its skills), each value's accuracy, sorted by accuracy, highest
first (a stable sort: ties keep the order the values first appear in). The recorded
``true_false`` is replayed as it is: the released outputs' came from an earlier normalization
than today's script, and replaying them gives the figures the authors published.

Two versions wrote the score file differently (`MATHVISTA_VERSIONS`):

- ``2023-10-03`` (@ ed0d56d, the version that wrote the released ``results/*/scores_*.json``):
  the average as ``str(round(correct / total * 100, 2))`` (``"34.8"``), each breakdown as
  ``"{:.2f}"`` of its percentage (``"48.70"``), sorted by that rounded text's value.
- ``2024-02-12`` (@ 2a249bb, unchanged in this respect to 53d5258): every accuracy as the
  fraction itself (``0.348``), sorted by it.

The script's own failures are kept: a key missing from a record, or a key whose value is
null (``calculate_score.py`` then divides by zero), is refused with the record named. The
script lists ``skills`` values from a ``set`` (an order Python's string hashing varies from run
to run); here ties among them keep their order of first appearance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.predictions._rows import as_verdict, row_error
from lmmprobe.predictions._stream import first_json_char, iter_json
from lmmprobe.predictions.as_published.base import (
    PUBLISHED_FIGURES,
    Cell,
    Published,
    PublishedSource,
    PublishedTable,
)
from lmmprobe.schema.text import shown_value

__all__ = [
    "MATHVISTA_KEYS",
    "MATHVISTA_VERSIONS",
    "LmmsEvalMathVista",
    "MathVistaScores",
    "mathvista_published",
]

MATHVISTA_KEYS = (
    "question_type", "answer_type", "language", "source", "category", "task", "context",
    "grade", "skills",
)  # fmt: skip
"""``target_keys`` of ``calculate_score.py``, in its order."""

MATHVISTA_VERSIONS = {
    "2023-10-03": "lupantech/MathVista @ ed0d56d, evaluation/calculate_score.py",
    "2024-02-12": "lupantech/MathVista @ 53d5258 (since 2a249bb), evaluation/calculate_score.py",
}
"""The score file's writers, by the date their format began (``--tool-version``)."""

_DEFAULT = "2024-02-12"


@dataclass(frozen=True)
class _Problem:
    correct: bool
    keys: Mapping[str, Any]
    """Each target key's value (``skills``: the list)."""


def _problems(path: Path) -> list[_Problem]:
    """Each record's recorded ``true_false`` and target keys, in file order."""
    out: list[_Problem] = []
    for n, pid, record in iter_json(path):
        where = f"{path}:#{n} (pid {shown_value(str(pid))!r})"
        if not isinstance(record, dict):
            raise row_error(where, "(record)", f"expected an object, got {type(record).__name__}")
        if "true_false" not in record:
            raise row_error(
                where,
                "true_false",
                "missing: --as-published replays the verdicts calculate_score.py stored",
            )
        verdict = as_verdict(where, "true_false", record["true_false"])
        if verdict is None or verdict not in (0.0, 1.0):
            raise row_error(where, "true_false", f"expected true or false, got {verdict!r}")
        meta = record.get("metadata")
        if not isinstance(meta, dict):
            raise row_error(where, "metadata", "missing: calculate_score.py merges it in")
        # results[pid].update(results[pid].pop('metadata')): the metadata's keys win.
        merged = {k: v for k, v in record.items() if k != "metadata"} | meta
        keys: dict[str, Any] = {}
        for key in MATHVISTA_KEYS:
            if key not in merged:
                raise row_error(where, key, "missing (calculate_score.py stops on it)")
            value = merged[key]
            if key == "skills" and not isinstance(value, list):
                raise row_error(where, key, f"expected a list, got {type(value).__name__}")
            if value is None:
                raise row_error(
                    where, key, "null (calculate_score.py divides by zero on it: no figure)"
                )
            if key != "skills" and not isinstance(value, str | int | float | bool):
                raise row_error(
                    where, key, f"expected one value, got {type(value).__name__} (no group)"
                )
            keys[key] = [str(s) for s in value] if key == "skills" else value
        out.append(_Problem(verdict == 1.0, keys))
    return out


def _accuracy(correct: int, total: int, version: str, *, average: bool = False) -> Cell:
    if version == "2023-10-03":
        percent = correct / total * 100
        return str(round(percent, 2)) if average else f"{percent:.2f}"
    return correct / total


def mathvista_published(path: Path, version: str | None = None) -> Published:
    """MathVista's score file for the output file `path`, as `version`'s script writes it.

    Raises:
        DataError: An unknown version, an empty file, or a record the script cannot score.

    """
    version = version or _DEFAULT
    if version not in MATHVISTA_VERSIONS:
        raise DataError(
            f"--tool-version {shown_value(version)!r}: MathVista's calculate_score.py is known as "
            + " or ".join(MATHVISTA_VERSIONS)
        )
    problems = _problems(path)
    if not problems:
        raise DataError(f"{path}: no problems (calculate_score.py divides by zero)")
    total = len(problems)
    correct = sum(p.correct for p in problems)
    tables = [
        PublishedTable(
            "average",
            ("key", "accuracy", "correct", "total"),
            (("average", _accuracy(correct, total, version, average=True), correct, total),),
        )
    ]
    for key in MATHVISTA_KEYS:
        counts: dict[Any, list[int]] = {}
        for p in problems:
            values = p.keys[key] if key == "skills" else [p.keys[key]]
            for value in dict.fromkeys(values):  # "value in x": once per problem
                hit = counts.setdefault(value, [0, 0])
                hit[0] += p.correct
                hit[1] += 1
        rows = [(str(v), _accuracy(c, t, version), c, t) for v, (c, t) in counts.items()]
        rows.sort(key=lambda r: float(r[1]), reverse=True)
        tables.append(PublishedTable(key, (key, "accuracy", "correct", "total"), tuple(rows)))
    return Published(
        definition="MathVista's calculate_score.py over the file's recorded true_false",
        source=MATHVISTA_VERSIONS[version],
        tables=tuple(tables),
        notes=(
            f"MathVista's score file as its {version} version writes it"
            + (
                " (--tool-version 2023-10-03: as the released results/*/scores_*.json)"
                if version != "2023-10-03"
                else ""
            ),
        ),
    )


class MathVistaScores:
    """MathVista's ``calculate_score.py`` figures of an ``output_*.json``."""

    tool = "mathvista"
    benchmark = "mathvista"
    files = "MathVista's output_*.json with true_false"
    versions = tuple(MATHVISTA_VERSIONS)

    def recognises(self, path: Path) -> bool:
        """Every MathVista output file is MathVista's."""
        return path.is_file() and first_json_char(path) == "{"

    def figure(self, source: PublishedSource) -> Published:
        """The file's score file (`mathvista_published`)."""
        return mathvista_published(source.path, source.tool_version)


PUBLISHED_FIGURES.register("mathvista/mathvista", "MathVista's calculate_score.py")(
    MathVistaScores()
)


_LMMS_EVAL = (
    "EvolvingLMMs-Lab/lmms-eval @ 75571cf, lmms_eval/tasks/mathvista/utils.py "
    "mathvista_aggregate_results"
)
_LMMS_METRICS = ("llm_as_judge_eval", "submission")


class LmmsEvalMathVista:
    """lmms-eval's MathVista figure of a ``--log_samples`` log: its ``llm_as_judge_eval``.

    ``mathvista_aggregate_results`` (`_LMMS_EVAL`) counts each logged ``true_false`` (the
    task's own verdict, which is replayed as it is: lmms-eval rounds a float answer to the
    doc's ``precision``, a float in the dataset, and ``round`` refuses a float as its digits,
    so each float question is logged false) and returns ``round(correct / total * 100, 2)``;
    a figure of 0 it returns as None (no figure; shown here as 0.0, with a note).
    """

    tool = "lmms-eval"
    benchmark = "mathvista"
    files = "lmms-eval's MathVista samples logs (llm_as_judge_eval with true_false)"
    versions: tuple[str, ...] = ()

    def recognises(self, path: Path) -> bool:
        """A ``samples_mathvista...`` log."""
        return "_samples_mathvista" in path.name

    def figure(self, source: PublishedSource) -> Published:
        """The task's figure over the joined rows' logged ``true_false``.

        Raises:
            DataError: A row without its logged ``true_false``, or with one not true or false
                (named by file, row and field), or no rows.

        """
        correct = 0
        for _, pred in source.rows:
            where = f"{source.path}:{pred.row}"
            logged = next((pred.fields[m] for m in _LMMS_METRICS if m in pred.fields), None)
            if not isinstance(logged, dict) or "true_false" not in logged:
                raise row_error(where, "llm_as_judge_eval.true_false",
                                "missing: --as-published replays the verdicts lmms-eval logged")  # fmt: skip
            verdict = as_verdict(where, "llm_as_judge_eval.true_false", logged["true_false"])
            if verdict not in (0.0, 1.0):
                raise row_error(where, "llm_as_judge_eval.true_false",
                                f"expected true or false, got {logged['true_false']!r}")  # fmt: skip
            correct += verdict == 1.0
        total = len(source.rows)
        if not total:
            raise DataError(f"{source.path}: no rows (mathvista_aggregate_results divides by zero)")
        accuracy = round(correct / total * 100, 2)
        return Published(
            definition="lmms-eval's mathvista_aggregate_results over the log's true_false",
            source=_LMMS_EVAL,
            tables=(
                PublishedTable(
                    "llm_as_judge_eval",
                    ("key", "accuracy", "correct", "total"),
                    (("average", accuracy, correct, total),),
                ),
            ),
            notes=("lmms-eval returns an accuracy of 0 as None: its results file holds no figure",)
            if not accuracy
            else (),
        )


PUBLISHED_FIGURES.register("lmms-eval/mathvista", "lmms-eval's mathvista_aggregate_results")(
    LmmsEvalMathVista()
)
