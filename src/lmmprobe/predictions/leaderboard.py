"""A folder of another tool's prediction files, scored as a leaderboard set: its columns, its average.

``lmmprobe score FOLDER --benchmark openvlm`` looks in FOLDER for one prediction file per member
benchmark of the set, scores each with `score_file` (the benchmark's official metric, as a run
of the same answers would be scored), and reduces the figures to the leaderboard's columns and
average exactly as a run of ``--data openvlm`` does (`lmmprobe.metrics.leaderboard`).

A member's file is found by name, in FOLDER itself (not below): ``MEMBER.EXT`` (lmmprobe's
name, ``mmstar.jsonl``) or ``ANYTHING_DATASET.EXT`` with DATASET VLMEvalKit's name of it
(``Qwen2-VL-7B_MMStar.xlsx``, as VLMEvalKit names its predictions), EXT one of `SUFFIXES`.
VLMEvalKit's own score sidecars (``..._acc.csv``, ``..._gpt-4-turbo.xlsx``) end otherwise and are
not taken. Two files for one member are refused, naming both; a member without a file, or
whose file cannot be scored, is a missing column, said with why, and the others are scored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lmmprobe._file_kind import not_regular_file
from lmmprobe.data.base import DataError, parse_source_spec
from lmmprobe.metrics.builtin.leaderboard import LEADERBOARD_SETS, column_metric_name
from lmmprobe.metrics.leaderboard import (
    OPENVLM_COLUMNS,
    LeaderboardAverage,
    column_figure,
    leaderboard_average,
)
from lmmprobe.predictions.importing import score_file

__all__ = ["SUFFIXES", "FolderScores", "find_member_files", "score_leaderboard_folder"]

SUFFIXES = (".xlsx", ".tsv", ".csv", ".json", ".jsonl")
"""The prediction files a folder's member may be: the layouts the readers take."""

_MAX_FILES = 10_000
"""Entries of FOLDER looked at: a folder of predictions holds a few dozen."""


@dataclass
class FolderScores:
    """A leaderboard set's columns and average from a folder of prediction files.

    Attributes:
        board: The set (``openvlm``).
        files: Member benchmark → the file scored for it.
        problems: Member benchmark → why it has no figure (no file, or the file's error).
        judges: Member benchmark → the judge specs recorded in its file, where it had any.
        average: The columns and the average (`LeaderboardAverage`; partial with a column
            missing).

    """

    board: str
    files: dict[str, Path] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    judges: dict[str, list[str]] = field(default_factory=dict)
    average: LeaderboardAverage | None = None

    def metrics(self) -> dict[str, float]:
        """The figures as a run of the set names them (``openvlm_<column>``, ``openvlm_avg``)."""
        assert self.average is not None
        out = {column_metric_name(f): v for f, v in self.average.columns.items() if v is not None}
        if self.average.value is not None:
            name = "openvlm_avg_partial" if self.average.partial else "openvlm_avg"
            out[name] = self.average.value
        return out


def _members(board: str) -> dict[str, str]:
    """Member benchmark → VLMEvalKit's dataset name, in the set's column order."""
    out: dict[str, str] = {}
    for f in LEADERBOARD_SETS[board]:
        column = OPENVLM_COLUMNS[f]
        out.update(zip(column.benchmarks, column.vlmevalkit, strict=True))
    return out


def find_member_files(folder: Path, board: str) -> tuple[dict[str, Path], dict[str, str]]:
    """Each member's prediction file in `folder`, and why a member has none.

    Raises:
        DataError: `folder` is not a folder, holds too many entries, or two files for one
            member (both named).

    """
    if not folder.is_dir():
        raise DataError(f"{folder}: not a folder")
    entries: list[Path] = []
    odd: list[
        Path
    ] = []  # named as a member's file but no regular file (a FIFO, a link to a device)
    for i, entry in enumerate(folder.iterdir()):
        if i >= _MAX_FILES:
            raise DataError(f"{folder}: more than {_MAX_FILES:,} entries: not a predictions folder")
        if entry.suffix.lower() in SUFFIXES:
            (entries if entry.is_file() else odd).append(entry)
    found: dict[str, Path] = {}
    problems: dict[str, str] = {}
    for member, dataset in _members(board).items():
        matches = sorted(e for e in entries if e.stem == member or e.stem.endswith(f"_{dataset}"))
        if len(matches) > 1:
            names = ", ".join(m.name for m in matches)
            raise DataError(
                f"{folder}: {len(matches)} files for {member} ({dataset}): {names}; keep one"
            )
        unread = sorted(e for e in odd if e.stem == member or e.stem.endswith(f"_{dataset}"))
        if matches:
            found[member] = matches[0]
        elif unread:
            # Said as what it is: "no file" sent a user looking for a file that is there.
            problems[member] = not_regular_file(unread[0], "predictions") or (
                f"{unread[0]}: not a regular file (a broken link?)"
            )
        else:
            problems[member] = f"no file {member}.EXT or *_{dataset}.EXT in {folder}"
    return found, problems


def score_leaderboard_folder(folder: Path, spec: str) -> FolderScores:
    """Score every member's file in `folder` and reduce them to the set's columns and average.

    Args:
        folder: The folder of prediction files.
        spec: The set as a data spec: ``openvlm``, or ``openvlm,path=COPIES`` where COPIES
            holds each member's local copy as ``COPIES/MEMBER`` (else ``$LMMPROBE_DATA_DIR``).

    Raises:
        DataError: `spec` names no leaderboard set, or the folder cannot be read
            (`find_member_files`).

    """
    try:
        name, target, options = parse_source_spec(spec)
    except ValueError as exc:  # the spec's grammar: one line saying what is wrong
        raise DataError(f"--benchmark {spec!r}: {exc}") from None
    if name not in LEADERBOARD_SETS:
        raise DataError(f"{spec!r} is not a leaderboard set ({', '.join(LEADERBOARD_SETS)})")
    copies = options.get("path") or target
    out = FolderScores(board=name)
    out.files, out.problems = find_member_files(folder, name)
    figures: dict[tuple[str, str], float] = {}
    for member, file in out.files.items():
        data = member if copies is None else f"{member},path={Path(copies) / member}"
        try:
            run = score_file(file, data, bootstrap=0)
        except DataError as exc:
            # One member's file that cannot be scored is that column missing, said as such.
            out.problems[member] = f"{file.name}: {exc}"
            continue
        (results,) = run.results.models.values()
        if results.judge is not None:
            out.judges[member] = list(results.judge.judges)
        figures.update(_member_figures(member, results.metrics))
    fields = LEADERBOARD_SETS[name]
    columns = {f: column_figure(OPENVLM_COLUMNS[f], figures) for f in fields}
    out.average = leaderboard_average(fields, columns)
    return out


def _member_figures(member: str, metrics: Mapping[str, object]) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for column in OPENVLM_COLUMNS.values():
        for benchmark, metric in column.inputs:
            value = getattr(metrics.get(metric), "value", None) if benchmark == member else None
            if isinstance(value, (int, float)):
                out[(benchmark, metric)] = column.unit(float(value))
    return out
