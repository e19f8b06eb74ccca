"""Imported predictions joined to a benchmark's local copy and scored by the run's own code.

Each `ImportedPrediction` is joined by id to a sample of the benchmark (``--benchmark``, a data
spec: ``mmmu`` or ``mmmu,path=FOLDER``), asked exactly as a run would ask it (the same
`Formulator`, seed and options, so a choice question gets the same marks), and its text becomes
that ask's `Response`: `lmmprobe.run.scoring.score_response` then scores it, so an imported
answer and the same answer from a lmmprobe run get the same verdict, and the benchmark's run
metrics (MMMU's, MathVista's, MMBench's CircularEval...) read them the same way.

Rules of the join (documented in docs/predictions.md):

- An id joins a sample of that id, or of that id after the benchmark's prefix (``34602`` joins
  ``textvqa/34602``) where only one sample has it.
- A row whose id is not in the benchmark is left out and listed as a problem (a file for
  another split or version); the rest are scored.
- Two rows with one id are an error naming both rows: which one the other tool scored cannot
  be told.
- Samples of the benchmark without a prediction are not scored (counted as ``missing``); the
  figures are over the answered samples, as the other tools' own scorers compute them.
- Without a benchmark, every row must carry its gold: each becomes an open-ended sample
  (exact match after lmmprobe's normalization, the ``accuracy`` metric).

The other tool's own reading and verdict ride along on each score's metadata
(``tool_extraction``, ``tool_verdict``, ``tool_judged``, ``imported_row``) for the sample page
and the audit; a reading a judge made (MathVista's stored ``extraction``) is also a
`Judgement` with ``decided_by="judge"``, so no judge is called for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lmmprobe.data.base import (
    DataError,
    LoadResult,
    SampleStream,
    iter_source,
    load_source,
    parse_source_spec,
)
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.formulate.ask import Ask
from lmmprobe.formulate.prompt import Formulator
from lmmprobe.metrics.benchmark_judged import mmbench_letter_correct
from lmmprobe.models.base import ModelIdentity
from lmmprobe.predictions._join import SampleIndex
from lmmprobe.predictions._rows import sample_refusal
from lmmprobe.predictions._stream import open_regular
from lmmprobe.predictions.file_items import item_maker
from lmmprobe.predictions.id_schemes import (
    IdScheme,
    MissingField,
    row_values,
    scheme_for,
)
from lmmprobe.predictions.id_schemes import sample_key as scheme_key
from lmmprobe.predictions.imported import (
    READERS,
    ImportedPrediction,
    Origin,
    PredictionReader,
    RecordedGrade,
)
from lmmprobe.predictions.readers._hallusion_sidecar import hallusion_logs
from lmmprobe.run.keys import ask_key, sample_key
from lmmprobe.run.scoring import score_response
from lmmprobe.schema import ErrorInfo, FormulateConfig, Response, RunSpec, Sample, Score
from lmmprobe.schema.judgement import Judgement

__all__ = [
    "ImportPlan",
    "detect_reader",
    "imported_identity",
    "plan_import",
    "score_imported",
]

MAX_PROBLEMS = 20
"""Unjoined rows named one by one; the rest are counted."""

CHUNK_ROWS = 10_000
"""Joined rows handed on at a time when a plan streams (`plan_import`'s ``on_chunk``): a file
of up to this many rows is one chunk."""

PlannedRow = tuple[Sample, Ask, Response, ImportedPrediction]
"""One joined prediction: its sample, the ask a run would send, the response, the row."""


def detect_reader(path: Path, name: str | None = None) -> tuple[str, PredictionReader]:
    """The reader named `name`, or the first whose `sniff` recognises `path` (``mapped`` last).

    Raises:
        DataError: `path` does not exist, or no reader recognises it.
        RegistryError: `name` is not a registered reader.

    """
    if not path.exists():
        raise DataError(f"{path}: no such file or folder")
    if not path.is_dir():
        # A FIFO or a device is refused as what it is (reading it would hang or never end).
        open_regular(path).close()
    if name is not None:
        return name, READERS.get(name)
    logs = hallusion_logs(path)
    if logs is not None and len(logs) != 1:
        # An lmms-eval output folder (or its verdict file) stands for its one HallusionBench
        # log; with none or several, which log is meant is said, not "no reader".
        found = ", ".join(str(log) for log in logs[:3]) + (" ..." if len(logs) > 3 else "")
        what = (
            "an lmms-eval output folder with HallusionBench verdict files"
            if path.is_dir()
            else "a HallusionBench verdict file of an lmms-eval output folder"
        )
        raise DataError(
            f"{path}: {what} "
            + (
                f"and {len(logs)} samples logs ({found}): give the log to score itself"
                if logs
                else "and no samples log (*samples_hallusion_bench*.jsonl) in it or in a "
                "model folder under it"
            )
        )
    names = [n for n in READERS.names() if n != "mapped"] + ["mapped"]
    for candidate in names:
        reader = READERS.get(candidate)
        if reader.sniff(path):
            return candidate, reader
    raise DataError(
        f"{path}: no reader recognises this layout (readers: {', '.join(names)}); name one with "
        "--reader NAME, or map its fields with --reader mapped --field id=...,prediction=..."
    )


def imported_identity(model: str, origin: Origin | None) -> ModelIdentity:
    """The identity an imported model's answers are keyed under: its label and the file's hash."""
    options = {} if origin is None else {"tool": origin.tool, "sha256": origin.sha256}
    return ModelIdentity(backend="imported", name=model, options=options)


@dataclass
class ImportPlan:
    """Predictions joined to samples, each with the ask a run would send and its response."""

    rows: list[PlannedRow]
    """One per joined prediction, in file order (empty when the plan streamed its rows)."""
    samples: list[Sample]
    """The answered samples, in benchmark order (file order without a benchmark); empty when
    the plan streamed its rows (then `answered` and `fingerprint` say what they would)."""
    source: str
    """The benchmark's data spec, or the file for golds read from it."""
    total: int = 0
    """Samples in the benchmark's local copy (rows, without one)."""
    missing: int = 0
    """Samples of the benchmark with no prediction."""
    unjoined: int = 0
    """Rows whose id is not in the benchmark."""
    problems: list[str] = field(default_factory=list)
    """The first unjoined rows and load problems, as sentences."""
    load: LoadResult | None = None
    """The benchmark's load result (None without a benchmark)."""
    joined: int = 0
    """Predictions joined to a sample (``len(rows)`` unless the plan streamed them)."""
    answered: int = 0
    """The answered samples (``len(samples)`` unless the plan streamed them)."""
    fingerprint: str | None = None
    """`data_fingerprint` of the answered samples when the plan streamed (`samples` empty)."""
    items_from_file: bool = False
    """The benchmark had no local copy and the items were read from the file
    (`lmmprobe.predictions.file_items`): the benchmark gave their definition only."""
    skipped: int = 0
    """Bad entries the reader left out (`ImportedPrediction.skipped`), each named in `problems`
    while there is room there."""

    def counts(self) -> dict[str, Any]:
        """The plan's counts for a record or a document: the join's only with a benchmark.

        ``golds`` says what the predictions were scored against: ``benchmark`` (its local
        copy, joined by id: then ``benchmark_samples``, ``missing`` and ``unjoined`` too) or
        ``file`` (the golds the file gives: nothing was joined, so those counts would mean
        nothing and are left out).
        """
        skipped = {"skipped": self.skipped} if self.skipped else {}
        if self.load is None:
            if self.items_from_file:
                return {"golds": "file", "items": "file", "rows": self.joined, **skipped}
            return {"golds": "file", "rows": self.joined, **skipped}
        return {
            "golds": "benchmark",
            "rows": self.joined,
            "benchmark_samples": self.total,
            "missing": self.missing,
            "unjoined": self.unjoined,
            **skipped,
        }


def _index(samples: Sequence[Sample]) -> dict[str, Sample]:
    """Samples by id, and by the id without its benchmark prefix where that is unambiguous.

    lmmprobe names some benchmarks' items ``textvqa/34602``; the other tools write ``34602``.
    """
    by_id = {s.id: s for s in samples}
    short: dict[str, list[Sample]] = {}
    for s in samples:
        _, sep, rest = s.id.partition("/")
        if sep and rest and rest not in by_id:
            short.setdefault(rest, []).append(s)
    by_id.update({k: v[0] for k, v in short.items() if len(v) == 1})
    return by_id


def _samples_from_gold(where: str, pred: ImportedPrediction) -> Sample:
    """The open-ended sample a row's own gold makes (no benchmark).

    Raises:
        DataError: The gold is an empty list, or does not make a sample (named by file and
            row, as a benchmark's rows are).

    """
    gold = pred.gold
    refs = gold if isinstance(gold, list) else [str(gold)]
    if not refs:
        raise DataError(
            f"{where}: row {pred.row}: gold: an empty list; without --benchmark each row needs "
            "at least one reference answer"
        )
    try:
        return Sample(
            id=pred.sample_id or f"row-{pred.row}",
            question=f"(imported row {pred.row})",
            answer=refs,
            formulation="open_ended",
            metadata={},
        )
    except ValidationError as exc:
        raise DataError(f"{where}: row {pred.row}: {sample_refusal(exc)}") from None


def _items_of(
    make: Callable[[str, ImportedPrediction], list[Sample]], where: str, pred: ImportedPrediction
) -> list[Sample]:
    """The items a row makes (a reader's or the file's), a sample's checks failing named.

    An item the row's fields describe but `Sample` refuses (ReForm-Eval's 300 options, more
    than lmmprobe asks about) is the row's problem: named by file and row, not a message
    naming neither.
    """
    try:
        return make(where, pred)
    except ValidationError as exc:
        raise RowRefused(f"{where}: row {pred.row}: {sample_refusal(exc)}") from None


class RowRefused(DataError):
    """A row whose item `Sample` refuses: that row is left out (named), the others go on."""


def plan_import(
    predictions: Iterable[ImportedPrediction],
    benchmark: str | Sequence[Sample] | None,
    *,
    model: str,
    origin: Origin | None = None,
    formulate: FormulateConfig | None = None,
    seed: int = 0,
    strict: bool = False,
    on_chunk: Callable[[list[PlannedRow]], None] | None = None,
    on_sample: Callable[[Sample], None] | None = None,
    items: Callable[[str, ImportedPrediction], Sample] | None = None,
) -> ImportPlan:
    """Join `predictions` to `benchmark` and build each one's ask and response.

    With `on_chunk`, the joined rows are handed to it `CHUNK_ROWS` at a time, in file order,
    and not kept (`ImportPlan.rows` and `ImportPlan.samples` stay empty): the join goes
    through a SQLite index of the benchmark's samples (`SampleIndex`), not a dict, filled as
    the benchmark's source yields them (`iter_source`), so memory holds one chunk of rows and
    no list of the benchmark, whatever the number of rows; an import stores each chunk and
    drops it.

    Args:
        predictions: Rows of a reader (streamed; read once).
        benchmark: A data spec (``mmmu,path=...``), loaded samples, or None (golds in the file).
        model: The label the answers go under.
        origin: The file's origin (keys the answers apart from another file's).
        formulate: The formulation settings a run of the benchmark uses (defaults).
        seed: The run seed (options shuffled, where the settings shuffle, as a run does).
        strict: Fail on the first row whose id is not in the benchmark.
        on_chunk: Called with each chunk of joined rows (see above).
        on_sample: Called with each sample of the benchmark's local copy as it is indexed,
            in its order (what ``score`` hashes the copy's answer key from, holding no sample).
        items: Without a benchmark, the item each row holds (its reader's `ItemReader.item`:
            ReForm-Eval's options and gold), in place of an open answer made from its gold.

    Raises:
        DataError: A duplicate id (both rows named), a row without an id for a benchmark, a
            row without gold and no benchmark, an unknown id under `strict`, or no row joined.

    """
    config = formulate or FormulateConfig()
    formulator = Formulator(config, RunSpec().gen, seed)
    ident = imported_identity(model, origin).cache_id()
    where = origin.path if origin is not None else "predictions"
    load: LoadResult | None = None
    source = where
    ordered: Sequence[Sample] | None = None  # the benchmark's samples, in its order
    stream: SampleStream | None = None  # the benchmark's samples, streamed into the index
    # No copy of the benchmark, and a file whose rows hold their items: the items come from
    # the file, the definition (metric, prompt, breakdowns) from the benchmark by name.
    make = (
        item_maker(benchmark, origin.tool if origin is not None else None)
        if isinstance(benchmark, str)
        else None
    )
    if benchmark is None and items is not None:
        # The reader's own items (ReForm-Eval's entries hold their options): one a row.
        own = items
        make = lambda where, pred: [own(where, pred)]  # noqa: E731
    elif make is not None:
        assert isinstance(benchmark, str)
        source = benchmark
    elif isinstance(benchmark, str):
        source = benchmark
        if on_chunk is None:
            load = load_source(benchmark)
            ordered = load.samples
        else:
            stream = iter_source(benchmark)
    elif benchmark is not None:
        ordered = [s for s in benchmark if isinstance(s, Sample)]
        source = "samples"
    # Streamed, the join goes through SQLite (`SampleIndex`) and keeps no sample in memory:
    # the benchmark's samples go into it as its source yields them (`iter_source`), never
    # all held. Else a dict, and the answered samples kept.
    join: _MemoryJoin | SampleIndex = _MemoryJoin() if on_chunk is None else SampleIndex()
    scheme = _scheme(benchmark, origin) if make is None else None
    if scheme is not None and isinstance(benchmark, str):
        _check_split(scheme, benchmark, where)
    positional = scheme if scheme is not None and scheme.kind == "position" else None
    key: Callable[[Sample], str | None] | None = None
    if scheme is not None and scheme.kind == "key":
        key = lambda s: scheme_key(scheme, s)  # noqa: E731
    with join:
        if stream is not None:
            join.add_benchmark(_seen(stream, on_sample), key)
            # The load's report, without its samples: what the results name and count.
            load = LoadResult(
                samples=[], source=stream.source, invalid=stream.invalid, problems=stream.problems
            )
        elif ordered is not None:
            join.add_benchmark(_seen(ordered, on_sample), key)
            ordered = None if on_chunk is not None else ordered
        if positional is not None and load is not None and load.invalid:
            # Every position after a skipped row would name the next item.
            raise DataError(
                f"{where}: its ids are positions in the split ({positional.source}), and the "
                f"local copy skipped {load.invalid} invalid row(s), so every later position "
                "would name the wrong item: repair the copy, or map ids with --field id=..."
            )
        plan = _join_rows(
            predictions, join, formulator, ident, where=where, source=source, strict=strict,
            golds=benchmark is None or make is not None, on_chunk=on_chunk, scheme=scheme,
            make=make,
        )  # fmt: skip
        plan.load = load
        plan.items_from_file = make is not None
        plan.answered = join.answered_count()
        plan.total = plan.answered if benchmark is None or make is not None else join.total
        plan.missing = plan.total - plan.answered
        if isinstance(join, _MemoryJoin):
            plan.samples = list(join.answered())
        else:
            plan.fingerprint = join.fingerprint()
    return plan


def _seen(
    samples: Iterable[Sample], on_sample: Callable[[Sample], None] | None
) -> Iterable[Sample]:
    """`samples`, each shown to `on_sample` as it passes (unchanged without one)."""
    if on_sample is None:
        return samples
    return _tap(samples, on_sample)


def _tap(samples: Iterable[Sample], on_sample: Callable[[Sample], None]) -> Iterator[Sample]:
    for sample in samples:
        on_sample(sample)
        yield sample


def _scheme(benchmark: str | Sequence[Sample] | None, origin: Origin | None) -> IdScheme | None:
    """The id scheme of the file's tool for the benchmark named by the data spec, if any."""
    if not isinstance(benchmark, str) or origin is None:
        return None
    try:
        name = parse_source_spec(benchmark)[0]
    except ValueError:
        return None  # the load names a malformed spec itself
    return scheme_for(origin.tool, name)


def _check_split(scheme: IdScheme, benchmark: str, where: str) -> None:
    """Refuse ids counted as positions in another split than the copy's.

    Raises:
        DataError: The data spec names another split than the tool's positions count in.

    """
    name, _, options = parse_source_spec(benchmark)
    split = options.get("split") or (BENCHMARKS.get(name).split if name in BENCHMARKS else None)
    if scheme.split is not None and split != scheme.split:
        raise DataError(
            f"{where}: its ids are positions in the {scheme.split!r} split ({scheme.source}); "
            f"{benchmark} is the {split!r} split: score it against {name},split={scheme.split}"
        )


class _MemoryJoin:
    """The join in memory (`SampleIndex`'s methods over a dict): a plan that keeps its rows."""

    def __init__(self) -> None:
        self.by_id: dict[str, Sample] = {}
        self.ordered: list[Sample] = []
        self.rows: dict[str, int] = {}
        self.total = 0

    def __enter__(self) -> _MemoryJoin:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_benchmark(
        self, samples: Iterable[Sample], key: Callable[[Sample], str | None] | None = None
    ) -> None:
        self.ordered = list(samples)
        self.by_id = _index(self.ordered)
        self.total = len(self.ordered)
        self.by_key: dict[str, list[Sample]] = {}
        if key is not None:
            for s in self.ordered:
                k = key(s)
                if k is not None:
                    self.by_key.setdefault(k, []).append(s)

    def find(self, sample_id: str) -> Sample | None:
        return self.by_id.get(sample_id)

    def find_key(self, key: str) -> list[Sample]:
        return self.by_key.get(key, [])[:2]

    def find_position(self, position: int) -> Sample | None:
        return self.ordered[position] if 0 <= position < len(self.ordered) else None

    def claim(self, sample: Sample, row: int, *, add: bool = False) -> int | None:
        first = self.rows.get(sample.id)
        if first is not None:
            return first
        if add:
            self.ordered.append(sample)
            self.total += 1
        self.rows[sample.id] = row
        return None

    def answered_count(self) -> int:
        return sum(1 for s in self.ordered if s.id in self.rows)

    def answered(self) -> Iterator[Sample]:
        return (s for s in self.ordered if s.id in self.rows)


def _join_rows(
    predictions: Iterable[ImportedPrediction],
    join: _MemoryJoin | SampleIndex,
    formulator: Formulator,
    ident: str,
    *,
    where: str,
    source: str,
    strict: bool,
    golds: bool,
    on_chunk: Callable[[list[PlannedRow]], None] | None,
    scheme: IdScheme | None = None,
    make: Callable[[str, ImportedPrediction], list[Sample]] | None = None,
) -> ImportPlan:
    """`plan_import`'s loop: each prediction joined (`join`), asked and answered, in file order."""
    plan = ImportPlan(rows=[], samples=[], source=source)
    for pred in predictions:
        if pred.skipped is not None:
            # A bad entry the reader left out: counted, named while there is room, not joined.
            plan.skipped += 1
            if len(plan.problems) < MAX_PROBLEMS:
                plan.problems.append(f"{pred.skipped} (left out)")
            continue
        if pred.lone_id is not None:
            # Refused, not joined: repaired, two ids differing only there would be one.
            plan.unjoined += 1
            message = (
                f"{where}: row {pred.row}: id: {pred.sample_id!r} holds a lone surrogate "
                f"({pred.lone_id}), which no sample id may hold"
            )
            if strict:
                raise DataError(message)
            if len(plan.problems) < MAX_PROBLEMS:
                plan.problems.append(message)
            continue
        if golds:
            if pred.gold is None and make is None:
                raise DataError(
                    f"{where}: row {pred.row}: gold: missing; without --benchmark every row "
                    "must carry its gold answer (map it with --field gold=...)"
                )
            try:
                samples = (
                    _items_of(make, where, pred)
                    if make is not None
                    else [_samples_from_gold(where, pred)]
                )
            except RowRefused as exc:
                # As a bad entry the reader left out: one row, not the whole file.
                if strict:
                    raise
                plan.skipped += 1
                if len(plan.problems) < MAX_PROBLEMS:
                    plan.problems.append(f"{exc} (left out)")
                continue
        else:
            if pred.sample_id is None and scheme is None:
                raise DataError(
                    f"{where}: row {pred.row}: id: missing; joining to {source} needs each row's "
                    "id (map it with --field id=...)"
                )
            samples, unjoined = _targets(pred, join, scheme, where=where, source=source)
            if unjoined:
                plan.unjoined += 1
                if strict:
                    raise DataError(unjoined[0])
                for message in unjoined:
                    if len(plan.problems) < MAX_PROBLEMS:
                        plan.problems.append(message)
            if not samples:
                continue
        for sample in samples:
            _plan_row(plan, join, formulator, ident, sample, pred, golds=golds, where=where)
            if on_chunk is not None and len(plan.rows) >= CHUNK_ROWS:
                on_chunk(plan.rows)
                plan.rows = []
    if on_chunk is not None and plan.rows:
        on_chunk(plan.rows)
        plan.rows = []
    if not plan.joined and plan.skipped:
        raise DataError(
            f"{where}: no entry of the file could be read ({plan.skipped} left out; the first: "
            f"{plan.problems[0]})"
        )
    if not plan.joined:
        raise DataError(
            f"{where}: no prediction joined to {source}"
            + (f" (first problem: {plan.problems[0]})" if plan.problems else " (the file is empty)")
        )
    return plan


def _targets(
    pred: ImportedPrediction,
    join: _MemoryJoin | SampleIndex,
    scheme: IdScheme | None,
    *,
    where: str,
    source: str,
) -> tuple[list[Sample], list[str]]:
    """The samples a row answers, and a line for each item of it that joins none.

    Without a scheme, the row's id (or its short form) names one sample. With one, the scheme
    says what the row's id (or content) is in lmmprobe's terms (`lmmprobe.predictions.id_schemes`):
    a row the scheme cannot read, a position past the copy's end, a key naming no sample or
    more than one, are each named with the row and its id.
    """
    at = f"{where}: row {pred.row}: id: {pred.sample_id!r}"
    if scheme is None:
        assert pred.sample_id is not None
        found = join.find(pred.sample_id)
        if found is None:
            return [], [f"{at} is not a sample of {source}"]
        return [found], []
    # An id the log names itself (a logged doc's, a metric's) joins before a position: it
    # says which item, where a position only says where in the split.
    logged = pred.sample_id is not None and pred.sample_id != str(pred.fields.get("doc_id"))
    if scheme.kind == "position" and logged:
        assert pred.sample_id is not None
        found = join.find(pred.sample_id)
        if found is not None:
            return [found], []
    try:
        values = list(row_values(scheme, pred.sample_id, pred.fields))
    except MissingField as exc:
        return [], [
            f"{at}: not joined: the row has no {exc.field} (its id scheme reads it: "
            f"{scheme.source})"
        ]
    samples: list[Sample] = []
    problems: list[str] = []
    for value in values:
        if scheme.kind == "id":
            found = join.find(value)
            if found is None:
                problems.append(f"{at} (as {value!r}: {scheme.source}) is not a sample of {source}")
            else:
                samples.append(found)
        elif scheme.kind == "position":
            # ASCII digits only: int() refuses "²" (which isdigit accepts) and 4,300+ digits,
            # and reads "٣" as 3.
            position = (
                int(value) if value.isascii() and value.isdigit() and len(value) <= 18 else -1
            )
            found = join.find_position(position)
            if found is None:
                problems.append(
                    f"{at}: position {value!r} ({scheme.source}) is not in {source} "
                    f"({join.total} sample{'' if join.total == 1 else 's'})"
                )
            else:
                samples.append(found)
        else:
            named = join.find_key(value)
            if len(named) == 1:
                samples.append(named[0])
            elif not named:
                problems.append(f"{at}: no sample of {source} has its content {value!r}")
            else:
                problems.append(
                    f"{at}: its content {value!r} names more than one sample of {source} "
                    f"({named[0].id}, {named[1].id}): not joined"
                )
    return samples, problems


def _plan_row(
    plan: ImportPlan,
    join: _MemoryJoin | SampleIndex,
    formulator: Formulator,
    ident: str,
    sample: Sample,
    pred: ImportedPrediction,
    *,
    golds: bool,
    where: str,
) -> None:
    """One joined row's ask and response, added to `plan`.

    Raises:
        DataError: The sample was answered by an earlier row.

    """
    first = join.claim(sample, pred.row, add=golds)
    if first is not None:
        raise DataError(
            f"{where}: row {pred.row}: id: {sample.id!r} again (first at row {first}); "
            "one prediction per item: which one the other tool scored cannot be told"
        )
    ask = formulator.ask(sample, 0)
    # Each row was answered on its own: two samples asking the same question keep
    # their own answers (a run's rows sharing a prompt share one).
    ask.key = sample_key(ask_key(ident, ask), sample.id)
    # A tool that split the thinking off (VLMEvalKit's SPLIT_THINK) keeps it apart: stored
    # and shown as the response's reasoning, never read for the answer.
    thinking = pred.fields.get("thinking")
    reasoning = thinking if isinstance(thinking, str) and thinking else None
    if pred.refused is not None:
        # An answer that was not read is an error, as a failed request is: stored with its
        # reason, counted in the error rate, never scored as a wrong answer; and named.
        if len(plan.problems) < MAX_PROBLEMS:
            plan.problems.append(f"{pred.refused} (kept as an error row)")
        response = Response(
            key=ask.key,
            error=ErrorInfo(type="unsupported_input", message=pred.refused, retryable=False),
        )
    else:
        response = Response(key=ask.key, text=pred.prediction, reasoning=reasoning)
    grade = pred.tool_grade
    if grade is not None and grade.problem and len(plan.problems) < MAX_PROBLEMS:
        # A recorded verdict the file itself spoils (a stale record): the row stays unjudged.
        plan.problems.append(f"{grade.reason} (left unjudged)")
    plan.rows.append((sample, ask, response, pred))
    plan.joined += 1


def recorded_judge(origin: Origin | None) -> str:
    """The judge of a reading recorded in a file: ``TOOL:MODEL (recorded)``.

    ``mathvista:gpt-4 (recorded)`` names MathVista's extraction as its file holds it; the
    ``(recorded)`` says lmmprobe called no judge for it.
    """
    if origin is None:
        return "file (recorded)"
    model = origin.detail.get("judge")
    return f"{origin.tool}:{model} (recorded)" if model else f"{origin.tool} (recorded)"


def recorded_protocol(origin: Origin | None, judge_protocol: str | None) -> str:
    """The protocol a recorded reading is filed under.

    The benchmark's judge protocol, else the tool's own reading (``vlmevalkit-reading``: a
    file scored without a benchmark, whose tool read the answers by rules of its own).
    """
    if judge_protocol:
        return judge_protocol
    return f"{origin.tool}-reading" if origin is not None else "file-reading"


def with_tool_reading(
    score: Score, pred: ImportedPrediction, origin: Origin | None, judge_protocol: str | None
) -> Score:
    """`score` carrying the other tool's reading and verdict of the same answer (in place)."""
    score.metadata["imported_row"] = pred.row
    if pred.tool_verdict is not None:
        score.metadata["tool_verdict"] = pred.tool_verdict
    if pred.tool_number is not None:
        score.metadata["tool_number"] = pred.tool_number
    if pred.tool_extraction is not None:
        score.metadata["tool_extraction"] = pred.tool_extraction
        score.metadata["tool_judged"] = pred.tool_judged
    if pred.tool_rule_version is not None:
        # The tool's reading came from an older version of its rules; today's read otherwise.
        score.metadata["tool_rule_version"] = pred.tool_rule_version
        score.metadata["tool_reading_latest"] = pred.tool_reading_latest
    if pred.tool_grade is not None:
        score.judgements.append(recorded_grade(pred.tool_grade, origin))
    if pred.tool_decided_by is not None:
        score.metadata["tool_decided_by"] = pred.tool_decided_by
        score.judgements.append(logged_judgement(score, pred, origin, judge_protocol))
    elif pred.tool_judged:
        score.judgements.append(recorded_judgement(pred, origin, judge_protocol))
    return score


def recorded_grade(grade: RecordedGrade, origin: Origin | None) -> Judgement:
    """The grade a file recorded for one answer, as a verdict of its grader's protocol.

    A grade the file says the judge never gave (lmms-eval's ``[-1, -1]`` review of a failed
    request) is ``unjudged`` with its reason: the official metric counts it as its benchmark's
    script does (LLaVA-Bench's [-1, -1] pair), and the coverage counts it apart.
    """
    base = {
        "judge": recorded_judge(origin),
        "protocol": grade.protocol,
        "version": "recorded",
        "detail": {"recorded_by": origin.tool if origin is not None else "file"}
        | dict(grade.detail),
    }
    if grade.value is None:
        return Judgement(**base, decided_by="unjudged", reason=grade.reason or "no grade recorded")
    return Judgement(**base, decided_by="judge", value=grade.value, reading=grade.reading)


RECORDED_EMPTY = "recorded extraction empty"
"""The reason of an unjudged recorded reading: the file's judge extraction is empty or null."""


def recorded_judgement(
    pred: ImportedPrediction, origin: Origin | None, judge_protocol: str | None
) -> Judgement:
    """The judge's reading a file recorded for one answer, as a stored verdict.

    An empty or null extraction is the judge's call that failed (MathVista's
    ``extract_answer`` returns ``""`` when its GPT call raises; lmms-eval's
    ``llm_as_judge_eval`` logs the same), not a reading: it is ``unjudged``, as a live judge's
    empty reply is (`lmmprobe.judge.protocols.mathvista_extract`), so it is counted apart in
    the coverage rather than wrong. The file's own verdict (which counts it wrong) stays in
    ``tool_verdict`` for ``score --audit``, which puts the item under the cause ``judge``.
    """
    base = {
        "judge": recorded_judge(origin),
        "protocol": recorded_protocol(origin, judge_protocol),
        "version": "recorded",
        "detail": {"recorded_by": origin.tool if origin is not None else "file"},
    }
    if pred.tool_extraction is None or not pred.tool_extraction.strip():
        return Judgement(**base, decided_by="unjudged", reason=RECORDED_EMPTY)
    return Judgement(
        **base, decided_by="judge", value=pred.tool_verdict, reading=pred.tool_extraction
    )


RECORDED_RANDOM = "recorded random option"
"""The reason of an unjudged recorded reading: the tool drew a random option (VLMEvalKit after
three judge replies its rules could not read); lmmprobe never scores a guess."""

RECORDED_UNREAD = "recorded no reading (no judge)"
"""The reason of an unjudged recorded reading: the tool's rules read nothing and it asked no
judge (VLMEvalKit's exact matching, which scores option Z)."""


def _shown_letter(letter: str, order: Sequence[int] | None) -> str:
    """The letter an option of the benchmark's order `letter` was shown under (`order`)."""
    at = ord(letter) - ord("A")
    if order is None or len(letter) != 1 or at not in order:
        return letter
    return chr(ord("A") + list(order).index(at))


def logged_judgement(
    score: Score, pred: ImportedPrediction, origin: Origin | None, judge_protocol: str | None
) -> Judgement:
    """How the tool decided one answer (`ImportedPrediction.tool_decided_by`), as a verdict.

    A reading its rules made is ``decided_by="rule"``, one its judge made ``"judge"``, each
    with the letter (or, where the reader names options by text, the option's text: a yes/no
    benchmark's Yes / No) as ``reading`` and its correctness (1.0/0.0, `mmbench_letter_correct` on
    the row as asked) as ``value``, as a live ``mmbench-choice`` judgement has them. A random
    option or no reading at all is ``unjudged`` with its reason: counted apart, never scored.
    """
    # A reading that names options by their text (VLMEvalKit's yes/no Yes / No) is the tool's
    # own reading, not the benchmark's judge protocol (HallusionBench's correctness judge).
    by_text = pred.gold_names == "text"
    base = {
        "protocol": recorded_protocol(origin, None if by_text else judge_protocol),
        "version": "recorded",
        "detail": {"recorded_by": origin.tool if origin is not None else "file"},
    }
    by = pred.tool_decided_by
    letter = pred.tool_extraction
    if by in ("random", "unread") or letter is None:
        reason = RECORDED_UNREAD if by == "unread" else RECORDED_RANDOM
        if by in ("rule", "judge"):
            reason = RECORDED_EMPTY
        return Judgement(**base, judge=recorded_judge(origin), decided_by="unjudged", reason=reason)
    if isinstance(score.gold, int) and by_text:
        # The tool's reading names the option by its text (VLMEvalKit's yes/no Yes / No).
        right = letter.strip().casefold() == score.gold_text.strip().casefold()
    elif isinstance(score.gold, int):
        # The tool's letter names the option in the benchmark's order; a reading names it as
        # shown (what `mmbench_letter_correct` and the official metric map back by `order`).
        letter = _shown_letter(letter, score.order)
        right = mmbench_letter_correct(letter, score.order, score.gold)
    else:
        right = pred.gold is not None and letter == pred.gold
    return Judgement(
        **base,
        # A rule's reading names no judge, as a live protocol's rule reading does.
        judge=recorded_judge(origin) if by == "judge" else None,
        decided_by="judge" if by == "judge" else "rule",
        value=1.0 if right else 0.0,
        reading=letter,
    )


def score_rows(
    rows: Iterable[PlannedRow],
    model: str,
    *,
    origin: Origin | None = None,
    formulate: FormulateConfig | None = None,
    judge_protocol: str | None = None,
) -> list[Score]:
    """Planned rows scored by `score_response`, with the tool's reading beside each."""
    config = formulate or FormulateConfig()
    return [
        with_tool_reading(
            score_response(model, sample, ask, response, config), pred, origin, judge_protocol
        )
        for sample, ask, response, pred in rows
    ]


def score_plan(
    plan: ImportPlan,
    model: str,
    *,
    origin: Origin | None = None,
    formulate: FormulateConfig | None = None,
    judge_protocol: str | None = None,
) -> list[Score]:
    """Every planned row scored by `score_response`, with the tool's reading beside it."""
    return score_rows(
        plan.rows, model, origin=origin, formulate=formulate, judge_protocol=judge_protocol
    )


def score_imported(
    predictions: Iterable[ImportedPrediction],
    benchmark: str | Sequence[Sample] | None,
    *,
    model: str = "imported",
    origin: Origin | None = None,
    formulate: FormulateConfig | None = None,
    seed: int = 0,
) -> list[Score]:
    """Scores of imported predictions, joined to `benchmark` by id (see `plan_import`).

    The same code scores a lmmprobe run's answers (`lmmprobe.run.scoring.score_response`):
    feed the result to `lmmprobe.metrics.compute_metrics` for the benchmark's figures.

    Raises:
        DataError: See `plan_import`.

    """
    plan = plan_import(
        predictions, benchmark, model=model, origin=origin, formulate=formulate, seed=seed
    )
    return score_plan(plan, model, origin=origin, formulate=formulate)
