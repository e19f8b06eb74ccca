"""lmms-eval's HallusionBench judge verdicts: ``gpt_response/hallusion_output_v?_model.json``.

lmms-eval judges HallusionBench at aggregation, not per sample (EvolvingLMMs-Lab/lmms-eval,
v0.3.0 to 75571cf, ``lmms_eval/tasks/hallusion_bench/evaluate_hb.py``
``hb_aggregation_result``): ``evaluate_by_chatgpt`` (``utils.py``) writes the visual-dependent
and visual-supplement questions' verdicts to ``OUTPUT/gpt_response/hallusion_output_vd_model.json``
and ``..._vs_model.json``, while the samples log lies in ``OUTPUT/<model>/``. Each file is a JSON
list of the docs (less ``image``) with ``model_prediction`` (the reply judged),
``gpt4v_output_gpt_check`` ("0" wrong, "1" right, "2" unclear, also what an unreadable judge
reply becomes) and ``gpt_answer`` (the prompt and the judge's reply).

A "2" whose recorded judge reply (``gpt_answer`` less the prompt) holds none of ``incorrect``,
``correct`` and ``unclear`` is the default lmms-eval gives a reply it cannot read, not a
verdict: the question is left unjudged, as lmmprobe's own ``hallusionbench-correct`` leaves such
a reply, and the official figures still read it "2" (lmms-eval's figure), while the strict ones
count it wrong. A request that failed is indistinguishable from a judge that said "unclear"
(lmms-eval records the word ``unclear`` as the reply): it stays "2".

``evaluate_by_chatgpt(load_json=True)`` resumes by count (``data[len(output):]``): a file left by
an earlier run, of another model or another answer, is reused as it stands. A record therefore
counts only where its ``model_prediction`` is the log's reply for the same question.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.judge.protocols.hallusionbench_correct import hallusion_prompt, hallusion_reading
from lmmprobe.predictions._stream import UnreadableFile, first_json_char, iter_json
from lmmprobe.predictions.imported import RecordedGrade
from lmmprobe.schema.text import shown_value

__all__ = [
    "HALLUSION_PROTOCOL",
    "SIDECAR_NAMES",
    "HallusionSidecars",
    "find_sidecars",
    "hallusion_logs",
    "log_of",
    "question_key",
]

HALLUSION_PROTOCOL = "hallusionbench-correct"
SIDECAR_NAMES = ("hallusion_output_vd_model.json", "hallusion_output_vs_model.json")
_KEY_FIELDS = ("category", "subcategory", "set_id", "figure_id", "question_id")
_VERDICTS = frozenset({"0", "1", "2"})
MAX_PROBLEMS = 20
"""Sidecar problems kept by name (each file's bad records); the rest are counted."""

Key = tuple[str, ...]


def question_key(doc: Mapping[str, Any]) -> Key | None:
    """HallusionBench's question key (category, subcategory, set, figure, question), or None."""
    if not all(k in doc for k in _KEY_FIELDS):
        return None
    return tuple(str(doc[k]) for k in _KEY_FIELDS)


def _named(key: Key) -> str:
    """A question's key as messages name it, cut where a field of it is long."""
    return shown_value("_".join(key), 120)


def find_sidecars(log: Path) -> list[Path]:
    """The verdict files of a samples log, where lmms-eval's layout puts them.

    In ``gpt_response/`` of its parent's parent (the output folder of lmms-eval 0.3 and later,
    the log being in ``OUTPUT/<model>/``), else of its own folder (a log moved beside them).
    """
    for folder in (log.parent.parent / "gpt_response", log.parent / "gpt_response"):
        found = [folder / name for name in SIDECAR_NAMES if (folder / name).is_file()]
        if found:
            return found
    return []


def hallusion_logs(path: Path) -> list[Path] | None:
    """The HallusionBench samples logs an lmms-eval output folder or verdict file stands for.

    None where `path` is neither (no ``gpt_response/`` verdict file). The folder holding
    ``gpt_response/`` with a verdict file (or that file's folder's parent) is the output
    folder; its logs are the ``*samples_hallusion_bench*.jsonl`` in a model folder under it
    (lmms-eval 0.3 on) or in it: one, or several models' runs into one folder, or none.
    """
    if path.is_file() and path.name in SIDECAR_NAMES and path.parent.name == "gpt_response":
        folder = path.parent.parent
    elif path.is_dir() and any((path / "gpt_response" / n).is_file() for n in SIDECAR_NAMES):
        folder = path
    else:
        return None
    pattern = "*samples_hallusion_bench*.jsonl"
    logs = sorted(folder.glob(f"*/{pattern}")) + sorted(folder.glob(pattern))
    return [log for log in logs if log.is_file() and not log.is_symlink()]


def log_of(path: Path) -> Path | None:
    """The HallusionBench samples log an lmms-eval output folder or verdict file stands for.

    None where `path` is neither, or the log cannot be told (`hallusion_logs`: none, or
    several, which cannot be told apart: the log is then to be given itself).
    """
    logs = hallusion_logs(path)
    return logs[0] if logs is not None and len(logs) == 1 else None


def _digest(text: str) -> bytes:
    """A reply's SHA-256, to tell whether a record judged the log's reply.

    A lone surrogate (valid JSON) is hashed as written.
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


@dataclass(frozen=True)
class _Record:
    """One question's recorded verdict: what is needed of it, never the reply it judged whole.

    Records are held for every question until the log is read; replies can be megabytes.
    """

    where: str
    prediction_sha256: bytes
    """`_digest` of the record's ``model_prediction``: compared with the log's reply's."""
    prediction_shown: str
    """The start of its ``model_prediction``'s repr, as a stale record is named."""
    verdict: str
    defaulted: bool = False
    """A "2" lmms-eval gave a judge reply holding none of its answers (`_defaulted`)."""


def _defaulted(value: Mapping[str, Any], prediction: str) -> bool:
    """Whether a record's "2" is the default of a judge reply holding no verdict.

    The reply is what ``gpt_answer`` holds after the prompt ``evaluate_by_chatgpt`` built from
    the record's question, reference and prediction; a record without them says nothing.
    """
    answer, question = value.get("gpt_answer"), value.get("question")
    reference = value.get("gt_answer_details")
    if not all(isinstance(v, str) for v in (answer, question, reference)):
        return False
    prompt = hallusion_prompt(str(question), str(reference), prediction)
    text = str(answer)
    return text.startswith(prompt) and hallusion_reading(text[len(prompt) :]) is None


@dataclass
class HallusionSidecars:
    """The verdicts of a log's sidecars, by question; what could not be read, by name."""

    records: dict[Key, _Record] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    skipped: int = 0

    @classmethod
    def read(cls, paths: list[Path]) -> HallusionSidecars:
        """Every record of `paths`; a bad record (or file) is named and left out.

        Bounded as the other readers are: a streamed JSON list, each record at most
        `lmmprobe.predictions._stream.MAX_ELEMENT` and nested at most ``MAX_NESTING``.
        """
        out = cls()
        for path in paths:
            try:
                if first_json_char(path, path.parent) != "[":
                    out._problem(f"{path}: expected a JSON list of judged questions")
                    continue
                for n, _, value in iter_json(path, path.parent):
                    out._add(f"{path}:#{n}", value)
            except (DataError, UnreadableFile) as exc:
                out._problem(f"{exc} (its verdicts read so far are kept)")
        return out

    def _problem(self, line: str) -> None:
        self.skipped += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(line)

    def _add(self, where: str, value: Any) -> None:
        if not isinstance(value, dict):
            self._problem(f"{where}: (record): expected an object, got {type(value).__name__}")
            return
        key = question_key(value)
        if key is None:
            missing = next(k for k in _KEY_FIELDS if k not in value)
            self._problem(f"{where}: {missing}: missing")
            return
        verdict = value.get("gpt4v_output_gpt_check")
        if not isinstance(verdict, str) or verdict not in _VERDICTS:
            self._problem(
                f"{where}: gpt4v_output_gpt_check: {verdict!r:.60} is not '0', '1' or '2'"
            )
            return
        prediction = value.get("model_prediction")
        if not isinstance(prediction, str):
            self._problem(f"{where}: model_prediction: {prediction!r:.60} is not text")
            return
        if key in self.records:
            self._problem(f"{where}: the question {_named(key)} is judged twice; the first kept")
            return
        defaulted = verdict == "2" and _defaulted(value, prediction)
        self.records[key] = _Record(
            where, _digest(prediction), f"{prediction!r:.60}", verdict, defaulted
        )

    def grade(self, doc: Mapping[str, Any], reply: str) -> RecordedGrade | None:
        """The recorded verdict on the question of `doc` answered `reply`, as a grade.

        Unjudged, with its reason, where no record holds the question, or its record judged
        another reply (a stale file). None where `doc` is not a HallusionBench question.
        """
        key = question_key(doc)
        if key is None:
            return None
        record = self.records.get(key)
        if record is None:
            reason = f"no record of the question {_named(key)} in the lmms-eval verdict files"
            return RecordedGrade(HALLUSION_PROTOCOL, None, {}, reason, problem=True)
        if record.prediction_sha256 != _digest(reply):
            reason = (
                f"{record.where}: model_prediction {record.prediction_shown} is not the log's "
                f"reply {reply!r:.60} (a stale verdict file): not used"
            )
            return RecordedGrade(HALLUSION_PROTOCOL, None, {}, reason, problem=True)
        if record.defaulted:
            reason = (
                f"{record.where}: the judge's reply holds none of incorrect, correct, unclear "
                "(lmms-eval read it '2')"
            )
            return RecordedGrade(HALLUSION_PROTOCOL, None, {"verdict_file": record.where}, reason)
        value = 1.0 if record.verdict == "1" else 0.0
        return RecordedGrade(
            HALLUSION_PROTOCOL, value, {"verdict_file": record.where}, reading=record.verdict
        )
