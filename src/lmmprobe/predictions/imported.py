"""Predictions made by other tools, read into one typed row each (issue 27's shared interface).

A reader (one module per layout in `lmmprobe.predictions.readers`, registered in `READERS`)
turns a file or folder written by another tool (lmms-eval's ``--log_samples``, VLMEvalKit's
prediction tables, MMMU's and MathVista's output files, a mapped JSON/JSONL/CSV) into
`ImportedPrediction` rows, streamed, with the `Origin` that names the tool, the file and its
hash. lmmprobe scores the rows with its own code; the other tool's own per-item reading and
verdict ride along so an audit can say where and why the two differ.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from lmmprobe.registry import Registry
from lmmprobe.schema import Sample, lone_surrogate, safe_text

__all__ = [
    "READERS",
    "ImportedPrediction",
    "ItemReader",
    "Origin",
    "PredictionReader",
    "ReadOptions",
    "RecordedGrade",
]


@dataclass(frozen=True)
class Origin:
    """Where imported predictions came from: recorded with the run they become."""

    tool: str
    """The tool that wrote the file: ``lmms-eval``, ``vlmevalkit``, ``mmmu``, ``mathvista``,
    ``mapped``."""
    path: str
    """The file or folder read, as given."""
    sha256: str
    """Hex SHA-256 of the file's bytes (of the sorted files' bytes for a folder)."""
    detail: Mapping[str, str] = field(default_factory=dict)
    """What the file says about itself: task name, model name, tool version, judge model."""


@dataclass(frozen=True)
class RecordedGrade:
    """A grade on a scale the tool's judge gave one answer, as the tool's file records it.

    It is stored as a verdict of lmmprobe's judge protocol of the same grader (`protocol`), so
    the benchmark's official figure, which reads that protocol's verdicts, is the tool's.
    """

    protocol: str
    """lmmprobe's judge protocol whose verdict it is: ``mmvet-grade`` (a 0-1 grade),
    ``llava-wild-review`` (the model's 1-10 score, the reference's in `detail`),
    ``hallusionbench-correct`` (1.0 right, 0.0 otherwise; the verdict in `reading`)."""
    value: float | None
    """The grade; None where the file records that the judge gave none (`reason`)."""
    detail: Mapping[str, Any] = field(default_factory=dict)
    """What the protocol's verdicts carry beside the value (``reference``), and the judge model
    the file names (``eval_model``)."""
    reason: str | None = None
    """Why the file's grade is no grade (a failed request), where `value` is None."""
    problem: bool = False
    """Whether `reason` is a fault of the file (a stale record), named as the file's other
    problems are, rather than the judge's own failure the file records."""
    reading: str | None = None
    """The verdict as the protocol reads it, where it is a label rather than the value
    (``hallusionbench-correct``'s "0" wrong, "1" right, "2" unclear)."""


@dataclass(frozen=True)
class ImportedPrediction:
    """One prediction read from another tool's file, before lmmprobe scores it."""

    row: int
    """1-based row (line, table row, list position) in the file: what errors and the audit
    name."""
    sample_id: str | None
    """The benchmark's id of the item (joined to lmmprobe's local copy); None when the file
    carries no id (its gold must then be in the file)."""
    prediction: str
    """The model's raw answer text as the tool recorded it (before any extraction)."""
    gold: str | list[str] | None = None
    """The gold answer the file carries, if any (what the other tool scored against)."""
    gold_names: Literal["letter", "text"] | None = None
    """How `gold` (and a letter `tool_extraction`) names a choice item's option, where the tool's
    layout says: ``letter``, its letter in the benchmark's option order (VLMEvalKit's
    ``answer`` column); ``text``, the option's text. None: the layout does not say; a single
    capital letter is then read as a letter only where it is not itself one of the item's
    option texts (an AI2D option ``A`` is a text)."""
    tool_extraction: str | None = None
    """What the other tool read as the answer (MMMU's parsed letter, MathVista's stored
    ``extraction``, VLMEvalKit's judge-read option), or None when it recorded none."""
    tool_judged: bool = False
    """True when `tool_extraction` came from a judge model rather than rules."""
    tool_decided_by: Literal["rule", "judge", "random", "unread"] | None = None
    """How the other tool decided this row, where its file records it per row (VLMEvalKit's
    ``log``): ``rule`` (its rules read `tool_extraction`), ``judge`` (its judge's reply did),
    ``random`` (it drew a random option after its judge failed: `tool_extraction`, if set, is
    the drawn letter, not a reading), ``unread`` (its rules read nothing and it asked no judge:
    exact matching). Set, it becomes a recorded `Judgement` under the benchmark's judge
    protocol: ``random`` and ``unread`` rows are unjudged (counted apart, never scored by the
    letter), as lmmprobe's own judge protocols leave such answers. None: not recorded."""
    tool_verdict: float | None = None
    """The other tool's own per-item verdict (lmms-eval's per-sample metric, VLMEvalKit's
    ``hit``, MathVista's ``true_false``) as a number in 0..1 (1.0 correct, 0.0 wrong, a
    credit between: ANLS), or None. A number a reader gives outside 0..1 is moved to
    `tool_number`."""
    tool_number: float | None = None
    """A finite number the tool recorded where its verdict goes, outside 0..1 (``hit`` 5, an
    lmms-eval metric that counts): kept as the tool's number (score metadata
    ``tool_number``), never counted as a verdict. None otherwise."""
    fields: Mapping[str, Any] = field(default_factory=dict)
    """The row as read (JSON-safe values), shown on the sample page."""
    refused: str | None = None
    """Why the prediction was not read (``FILE:ROW: FIELD: why``: longer than
    `lmmprobe.predictions._rows.MAX_PREDICTION`), `prediction` then empty; None when read. The
    row is imported as an error with this message: counted in the error rate, never scored."""

    skipped: str | None = None
    """Where the reader left a bad entry out: the one line naming it (``FILE:#N: FIELD: why``).
    Such a row is no prediction: it is counted and named (the first few) by the import, never
    joined or scored, and the file's other entries are scored (ReForm-Eval's and Dysca's
    readers, as their tools' own code would stop on such an entry; lmms-eval's, for a row
    whose id is no id: ``doc_id`` true, null or a list). None for a read row."""

    lone_id: str | None = None
    """Where the file's id holds a lone surrogate (``U+D800 at character 2``: set from
    `sample_id` as read, before it is repaired), None when it holds none. No sample id holds
    one (`lmmprobe.schema.Sample` refuses it), so such a row is refused, never joined: two ids
    differing only there would be one."""

    tool_grade: RecordedGrade | None = None
    """The grade the tool's judge gave the answer on a scale, where the file records one
    (lmms-eval's MM-Vet ``gpt_eval_score``, LLaVA-Bench ``gpt_eval_llava_all``); None
    otherwise."""
    tool_rule_version: str | None = None
    """The version of the tool's answer-reading rules this row's recorded reading was read
    with, where the tool's rules changed and that version reads the answer otherwise than the
    tool's latest rules do (VLMEvalKit's ``can_infer``: `tool_extraction` is then the older
    rules' reading). None where the versions agree, or the tool has one."""
    tool_reading_latest: str | None = None
    """With `tool_rule_version`: what the tool's latest rules read from the same answer (an
    option letter, ``Z``), or None where they read nothing."""

    def __post_init__(self) -> None:
        # A file's text may hold lone surrogates (valid JSON, not encodable text): repaired
        # here, where every reader's rows are made, so none reaches the store or a page. An
        # id's is noted first (`lone_id`): the row is then refused rather than joined.
        verdict = self.tool_verdict
        if verdict is not None and not 0.0 <= verdict <= 1.0:
            object.__setattr__(self, "tool_number", verdict)
            object.__setattr__(self, "tool_verdict", None)
        if self.lone_id is None and isinstance(self.sample_id, str):
            object.__setattr__(self, "lone_id", lone_surrogate(self.sample_id))
        for name in ("sample_id", "prediction", "gold", "tool_extraction", "fields"):
            value = getattr(self, name)
            clean = _safe(value)
            if clean is not value:
                object.__setattr__(self, name, clean)


@dataclass(frozen=True)
class ReadOptions:
    """What the user told `lmmprobe score` / `lmmprobe import` about a file."""

    benchmark: str | None = None
    """The lmmprobe benchmark the predictions answer (``--benchmark``)."""
    field_map: Mapping[str, str] = field(default_factory=dict)
    """``--field id=qid,prediction=answer,gold=gt``: our field name → the file's column."""
    tool_version: str | None = None
    """``--tool-version``: the version of the tool whose rules wrote the file. A reader whose
    tool's rules changed reads with it (and refuses one it does not know); without it, such a
    reader tells the version from the file's own verdicts."""
    settings: Mapping[str, str] = field(default_factory=dict)
    """Options of one tool's layout (ReForm-Eval's ``formulation``, ``infer_method``,
    ``tokenizer``; Dysca's ``ground_truth``): a reader records those it takes in its `Origin`,
    where its ``--as-published`` hook reads them."""


class PredictionReader(Protocol):
    """A layout of prediction files: recognises it, and streams its rows."""

    tool: str
    """`Origin.tool` of what it reads."""

    def sniff(self, path: Path) -> bool:
        """True when `path` is in this layout (reads at most the first few rows)."""
        ...

    def origin(self, path: Path, options: ReadOptions) -> Origin:
        """The file's origin (hash and what it says about itself)."""
        ...

    def read(self, path: Path, options: ReadOptions) -> Iterator[ImportedPrediction]:
        """The rows, streamed (a 1 GB file is never loaded whole).

        Raises:
            DataError: A row does not match the layout: names the file, the row and the
                field.

        """
        ...


class ItemReader(Protocol):
    """A reader whose rows hold their items (ReForm-Eval's options and gold index).

    Without ``--benchmark``, each row's item is `item`'s (not an open answer made from its
    gold): scored as the item it is, by the formulation's own metrics.
    """

    def item(self, where: str, pred: ImportedPrediction) -> Sample:
        """The item row `pred` answers.

        Raises:
            DataError: The row does not make an item (named by file and row).

        """
        ...


READERS: Registry[PredictionReader] = Registry(
    "prediction reader",
    entry_point_group="lmmprobe.prediction_readers",
    # A reader is a module of lmmprobe.predictions.readers registering itself.
    discover=("lmmprobe.predictions.readers",),
)
"""Prediction file layouts by name; ``lmmprobe list readers`` shows them."""


def _safe(value: Any) -> Any:
    """`value` with `safe_text` applied to every string in it; the same object when unchanged."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, Mapping):
        pairs = [(_safe(k), _safe(v)) for k, v in value.items()]
        same = all(a is k and b is v for (a, b), (k, v) in zip(pairs, value.items(), strict=True))
        return value if same else dict(pairs)
    if isinstance(value, list | tuple):
        items = [_safe(v) for v in value]
        same = all(a is b for a, b in zip(items, value, strict=True))
        return value if same else type(value)(items)
    return value
