"""``lmmprobe score PATH --benchmark`` and ``lmmprobe import``: other tools' files as runs.

`score_file` reads a file with its reader, joins and scores it (`lmmprobe.predictions.scoring`)
and builds the same `Results` a run of the benchmark builds (its official metric, the
breakdowns asked for), keeping nothing: it goes the import's way into a temporary store, so
both hold one chunk of rows and compute their figures from the stored rows by one path
(`_stream_into`). `import_file` stores the same as a run: the
answered samples, each answer as the response of the request a run would have sent (no model is
called), the scores, a manifest whose ``origin`` names the tool, the file and its SHA-256, and
results.json / results.md in the run's folder, so ``report``, ``compare``, ``serve`` and ``elo``
read it like any run.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmmprobe.data import data_fingerprint
from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.data.rows import remembered_images
from lmmprobe.judge.step import JudgeModelStats
from lmmprobe.metrics import compute_metrics
from lmmprobe.metrics.answer_cache import scoring_scope
from lmmprobe.predictions._join import FileOrderRows
from lmmprobe.predictions.as_published import PUBLISHED_FIGURES, find_published
from lmmprobe.predictions.imported import Origin, ReadOptions
from lmmprobe.predictions.readers.vlmevalkit import AUXMATCH, table_for
from lmmprobe.predictions.scoring import (
    ImportPlan,
    PlannedRow,
    detect_reader,
    imported_identity,
    plan_import,
    score_rows,
)
from lmmprobe.report import Results, write_results
from lmmprobe.report.model import DataSummary, JudgeResults, Manifest, ModelStats
from lmmprobe.report.results import model_results
from lmmprobe.run.manifest import build_manifest
from lmmprobe.run.runner import new_run_id
from lmmprobe.schema import RowSource, RunSpec, Sample, Score
from lmmprobe.store import Store
from lmmprobe.store.answer_scores import AnswerScores

__all__ = [
    "DEFAULT_BREAKDOWNS",
    "FileToScore",
    "ImportedRun",
    "RecordedJudging",
    "RowsSeen",
    "file_to_score",
    "import_file",
    "imported_results",
    "score_file",
]

DEFAULT_BREAKDOWNS: Mapping[str, tuple[str, ...]] = {
    # MMMU's subjects and disciplines come from `mmmu_groups` (its ids name the subject).
    "mmmu": (),
    # MathVista's skills: an item counts in every skill it lists (its calculate_score.py).
    "mathvista": ("task", "category", "skills"),
    "mmbench": ("category",),
}
"""The breakdowns `score` and `import` give by default, per benchmark (``--by`` replaces)."""


MMMU_DISCIPLINES: Mapping[str, tuple[str, ...]] = {
    "Art and Design": ("Art", "Art_Theory", "Design", "Music"),
    "Business": ("Accounting", "Economics", "Finance", "Manage", "Marketing"),
    "Science": ("Biology", "Chemistry", "Geography", "Math", "Physics"),
    "Health and Medicine": ("Basic_Medical_Science", "Clinical_Medicine",
                            "Diagnostics_and_Laboratory_Medicine", "Pharmacy", "Public_Health"),
    "Humanities and Social Science": ("History", "Literature", "Sociology", "Psychology"),
    "Tech and Engineering": ("Agriculture", "Architecture_and_Engineering", "Computer_Science",
                             "Electronics", "Energy_and_Power", "Materials",
                             "Mechanical_Engineering"),
}  # fmt: skip
"""MMMU's disciplines and their subjects, in its order (MMMU-Benchmark/MMMU @ bb0b95a,
``mmmu/utils/data_utils.py`` ``DOMAIN_CAT2SUB_CAT``, as ``main_eval_only.py`` prints them)."""


def _mmmu_subject(sample_id: str) -> str:
    """``validation_Art_Theory_12`` → ``Art_Theory`` (the id names split, subject, number)."""
    bare = sample_id.rsplit("/", 1)[-1]
    return bare.split("_", 1)[-1].rsplit("_", 1)[0]


def mmmu_groups(scores: Sequence[Score], spec: RunSpec) -> dict[str, dict[str, Any]]:
    """MMMU's breakdowns: metrics per subject (``mmmu_subject``) and per ``discipline``.

    Each group's figures are the run metrics over its rows: a discipline's accuracy is the
    item-level mean over its subjects, which is what ``calculate_ins_level_acc`` gives.
    """
    by_subject: dict[str, list[Score]] = {}
    for s in scores:
        by_subject.setdefault(_mmmu_subject(s.sample_id), []).append(s)
    subjects: dict[str, Any] = {}
    disciplines: dict[str, Any] = {}
    for discipline, names in MMMU_DISCIPLINES.items():
        rows = [s for n in names for s in by_subject.get(n, [])]
        if rows:
            disciplines[discipline] = compute_metrics(rows, spec, group=f"discipline={discipline}")
        for n in names:
            if n in by_subject:
                subjects[n] = compute_metrics(by_subject[n], spec, group=f"mmmu_subject={n}")
    return {"mmmu_subject": subjects, "discipline": disciplines}


@dataclass
class ImportedRun:
    """What `score_file` / `import_file` made."""

    reader: str
    origin: Origin
    plan: ImportPlan
    scores: list[Score]
    """Empty: the rows went through a store (the import's, or ``score``'s temporary one);
    a caller wanting each row takes it from `score_file`'s ``on_rows``."""
    results: Results
    run_id: str | None = None
    out_dir: Path | None = None
    metric: str | None = None
    """The benchmark's official metric (``RUN_METRICS`` name), shown first."""


def _benchmark_name(spec: str | None) -> str | None:
    if spec is None:
        return None
    name = spec.split(",", 1)[0].strip()
    return name if name in BENCHMARKS.names() else None


def origin_record(origin: Origin, reader: str) -> dict[str, Any]:
    """The manifest's ``origin``: tool, reader, file, hash and what the file says of itself."""
    return {
        "tool": origin.tool,
        "reader": reader,
        "path": origin.path,
        "sha256": origin.sha256,
        "detail": dict(origin.detail),
    }


def _protocol(benchmark: str | None) -> str | None:
    """The judge protocol of the benchmark's official evaluation (recorded readings go under it)."""
    bench = _benchmark_name(benchmark)
    return BENCHMARKS.get(bench).judge if bench is not None else None


@dataclass
class RecordedJudging:
    """How a file's recorded judge readings decided its answers, counted chunk by chunk.

    MathVista's stored ``extraction`` (and the like) are verdicts of the tool's judge, recorded
    in the file (`lmmprobe.predictions.scoring.recorded_judgement`): the results and the
    report's judges section count them by the path that decided each answer (rule, judge,
    unjudged) as for a run judged with ``--judge``, name the judge ``TOOL:MODEL (recorded)``
    with protocol version ``recorded``, and list no calls, since none was made.
    """

    origin: Origin
    stats: JudgeModelStats = field(default_factory=JudgeModelStats)
    judges: dict[str, None] = field(default_factory=dict)
    """The judges named by the readings, in the order first met."""
    judged: int = 0
    """Answers with a recorded reading."""

    def add(self, scores: Iterable[Score]) -> None:
        """Count the readings of one chunk's scores."""
        for score in scores:
            if not score.judgements:
                continue
            self.judged += 1
            self.stats.count_decided(score.judgements)
            for j in score.judgements:
                self.stats.protocols[j.protocol] = j.version
                if j.judge is not None:
                    self.judges[j.judge] = None

    def names(self) -> list[str]:
        """The judges, or the tool's own when no reading named one."""
        return list(self.judges) or [f"{self.origin.tool} (recorded)"]

    def manifest(self) -> dict[str, Any] | None:
        """The manifest's ``judge`` entry (as a judged run's names its judges); None if unjudged."""
        if not self.judged:
            return None
        origin = self.origin
        return {
            "judges": {
                name: {"backend": "recorded", "tool": origin.tool, "sha256": origin.sha256}
                for name in self.names()
            },
            "protocols": {
                name: {"version": version, "source": f"recorded in {origin.path}"}
                for name, version in sorted(self.stats.protocols.items())
            },
            "recorded": True,
        }

    def results(self) -> JudgeResults | None:
        """What the results say of the judging (no calls: none was made); None if unjudged."""
        if not self.judged:
            return None
        stats = self.stats
        return JudgeResults(
            judges=self.names(),
            protocols=dict(stats.protocols),
            decided={k: stats.decided.get(k, 0) for k in ("rule", "judge", "unjudged")},
            calls={},
            unjudged={},
            agreement=dict(stats.agreement),
        )


def _official(benchmark: str | None) -> str | None:
    name = _benchmark_name(benchmark)
    return BENCHMARKS.get(name).metric if name is not None else None


def _spec(spec: RunSpec, benchmark: str | None, by: Sequence[str] | None, **more: Any) -> RunSpec:
    name = _benchmark_name(benchmark)
    keys = list(by) if by is not None else list(DEFAULT_BREAKDOWNS.get(name or "", ()))
    matcher = BENCHMARKS.get(name).matcher if name is not None else None
    if matcher is not None:
        # The answers are read as a run of the benchmark reads them: by its official
        # matcher (HallusionBench's yes/no, VLMEvalKit's can_infer), not lmmprobe's default.
        more["formulate"] = spec.formulate.model_copy(update={"matcher": matcher})
    return spec.model_copy(update={"by": keys, **more})


def _manifest(
    spec: RunSpec, model: str, origin: Origin, reader: str, plan: ImportPlan
) -> dict[str, Any]:
    fingerprint = plan.fingerprint
    if fingerprint is None:
        fingerprint = data_fingerprint(plan.samples)
    manifest = build_manifest(
        spec, {model: imported_identity(model, origin)}, fingerprint, plan.answered
    )
    manifest["origin"] = origin_record(origin, reader) | plan.counts()
    return manifest


def imported_results(
    rows: RowSource,
    spec: RunSpec,
    plan: ImportPlan,
    manifest: dict[str, Any],
    *,
    run_id: str,
    store: str,
    judge: JudgeResults | None,
    scores: Callable[[], Sequence[Score]],
) -> Results:
    """An imported file's results, computed from its rows as a run's are (`model_results`).

    Everything a run's results hold: the data summary is the join's (the answered samples;
    rows not in the benchmark counted invalid beside the benchmark's own), each answer one
    request, none called; the benchmark's own breakdowns (MMMU's subjects and disciplines,
    `mmmu_groups`) are added, from `scores` (asked for only then: MMMU has 11,500 items).

    Args:
        rows: The model's rows (the stored run's: `Store.rows`; or Scores in memory).
        spec: The import's spec (one model).
        plan: The join.
        manifest: The import's manifest.
        run_id: The run (``(not stored)`` for ``score``).
        store: The store's path (``(none)`` for ``score``).
        judge: How the file's recorded readings judged its answers (`RecordedJudging`).
        scores: The rows as Scores, for the benchmark's own breakdowns.

    """
    model = spec.models[0]
    load = plan.load
    stats = ModelStats(requests=plan.joined, cached=0, called=0, errors=0, prompt_tokens=0,
                       completion_tokens=0, mean_latency_s=0.0 if plan.joined else None,
                       redacted=0)  # fmt: skip
    results = Results(
        run_id=run_id,
        status="complete",
        finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        store=store,
        data=DataSummary(
            source=load.source if load is not None else plan.source,
            samples=plan.answered,
            invalid=(load.invalid if load is not None else 0) + plan.unjoined,
            problems=[str(p) for p in load.problems] if load is not None else [],
        ),
        models={
            model: model_results(
                rows,
                spec,
                identity=manifest.get("models", {}).get(model),
                stats=stats,
                judge=judge,
            )
        },
        spec=spec,
        manifest=Manifest.model_validate(manifest),
    )
    if _benchmark_name(spec.data) == "mmmu" and not spec.by:
        results.models[model].breakdown.update(mmmu_groups(scores(), spec))
    return results


RowsSeen = Callable[[list[PlannedRow], list[Score]], None]
"""Called with each chunk of joined rows and their scores as they are stored (``score``'s
explanation keeps what it needs of them: `lmmprobe.predictions.explain.FileFacts`)."""


def _stream_into(
    store: Store,
    run_id: str,
    path: Path,
    benchmark: str | None,
    spec: RunSpec,
    read: tuple[str, Any, ReadOptions, Origin],
    *,
    shown_run: str,
    shown_store: str,
    on_rows: RowsSeen | None = None,
    on_sample: Callable[[Sample], None] | None = None,
    before_rows: Callable[[], None] | None = None,
) -> tuple[ImportPlan, Results]:
    """Read, join, score and store a file a chunk at a time; its results from the stored rows.

    The one path of `import_file` and `score_file`: memory holds one chunk of rows, not the
    file's; the figures are reductions over the stored rows (`Store.rows`), read back in the
    file's order (`FileOrderRows`). `read` is the reader's name, the reader, its options and
    the file's origin; `shown_run` and `shown_store` are what the results name.
    `before_rows` is called once, before the first chunk's rows are stored (where the caller
    records the run, so that a file refused before any row joins leaves none).
    """
    name, found, options, origin = read
    started: list[bool] = []
    model = spec.models[0]
    protocol = _protocol(benchmark)
    judging = RecordedJudging(origin)

    def store_chunk(rows: list[PlannedRow]) -> None:
        # Stored as joined, a chunk at a time, and dropped: the results read the stored
        # rows. The imported text is stored as the response to the request a run would
        # have sent: scoring can be redone from the store like any run's.
        chunk = score_rows(
            rows, model, origin=origin, formulate=spec.formulate, judge_protocol=protocol
        )
        if before_rows is not None and not started:
            before_rows()
            started.append(True)
        store.put_samples(run_id, [sample for sample, _, _, _ in rows])
        store.put_responses(
            model, [ask.to_request() for _, ask, _, _ in rows], [r for _, _, r, _ in rows]
        )
        store.put_scores(run_id, chunk)
        # A reading the file recorded from its judge (MathVista's extraction) is stored as
        # a verdict, as a judged run's: serve's sample page and a rebuilt report show it.
        store.put_judgements(
            run_id, model, [(s.sample_id, s.repeat, j) for s in chunk for j in s.judgements]
        )
        judging.add(chunk)
        if on_rows is not None:
            on_rows(rows, chunk)

    # An image file the store remembers checking (a run's, an earlier import's) is not
    # decoded or hashed again while unchanged; this import's checks are added.
    with remembered_images(store):
        plan = plan_import(
            found.read(path, options), benchmark, model=model, origin=origin,
            on_chunk=store_chunk, on_sample=on_sample,
            items=getattr(found, "item", None) if benchmark is None else None,
        )  # fmt: skip
    if before_rows is not None and not started:  # no chunk came, yet nothing was refused
        before_rows()
    manifest = _manifest(spec, model, origin, name, plan)
    recorded = judging.manifest()
    if recorded is not None:
        # The file's recorded judge, named as a judged run names its judges (serve's run
        # page and the HTML report read the manifest's ``judge`` entry).
        manifest["judge"] = recorded
    store.update_run(run_id, manifest=manifest)
    with scoring_scope(AnswerScores(store), None, read=True):
        # The stored rows, in the file's order: the order the figures were computed in.
        rows = FileOrderRows(store.rows(run_id, model))
        results = imported_results(
            rows, spec, plan, manifest, run_id=shown_run, store=shown_store,
            judge=judging.results(), scores=rows.scores,
        )  # fmt: skip
    return plan, results


def _reader(
    path: Path,
    benchmark: str | None,
    reader: str | None,
    field_map: Mapping[str, str] | None,
    tool_version: str | None = None,
    settings: Mapping[str, str] | None = None,
) -> tuple[str, Any, ReadOptions, Origin]:
    """The file's reader (named or sniffed), its options and the file's origin."""
    name, found = detect_reader(path, reader)
    options = ReadOptions(
        benchmark=benchmark,
        field_map=dict(field_map or {}),
        tool_version=tool_version,
        settings=dict(settings or {}),
    )
    return name, found, options, found.origin(path, options)


_VLMEVALKIT = "vlmevalkit"
_MAX_ENTRIES = 10_000
"""Entries of a folder looked at for VLMEvalKit's tables: a work folder holds a few hundred."""


@dataclass(frozen=True)
class FileToScore:
    """What ``score`` and ``import`` read for the path they were given, and how it was found."""

    path: Path
    """The file read: the one given, or the table it stands for (`file_to_score`)."""
    benchmark: str | None
    """The benchmark given, or told by the file's name; None where neither says one."""
    notes: tuple[str, ...] = ()
    """How the file and the benchmark were found, one line each, where not as given."""


_TOLD_BY_NAME = (AUXMATCH, "_openai_result")
"""The VLMEvalKit judged tables whose name tells their benchmark when none is given."""


def file_to_score(path: Path, benchmark: str | None, reader: str | None = None) -> FileToScore:
    """The file to read for `path`, and its benchmark where the file's name tells it.

    VLMEvalKit writes a dataset's prediction table, the judged table holding its recorded
    verdicts beside it (``_auxmatch``, ``_JUDGE_result``) and score files from that (``_acc.csv``,
    ``_score.csv``, ``_score.json``), all in one work folder. Given any of them, or the folder
    (with ``--benchmark`` where it holds several benchmarks' tables), the table that holds the
    predictions with their verdicts is read (`table_for`, the reader's own sidecar finding). An
    ``_auxmatch`` or ``_openai_result`` table read without a benchmark tells it by its name, as
    VLMEvalKit's own rating does (the ``--as-published`` hook that recognises it): its answers
    are then read by that benchmark's own matcher (an ``_auxmatch`` table's not as an exact
    match of the whole answer, an ``_openai_result`` table's by VLMEvalKit's reading).

    Raises:
        DataError: A VLMEvalKit work folder holding tables of several benchmarks and no
            ``--benchmark``, or several tables of the benchmark (each named).

    """
    notes: list[str] = []
    if reader not in (None, _VLMEVALKIT):
        return FileToScore(path, benchmark)
    if path.is_dir():
        chosen = _work_folder_table(path, benchmark)
        if chosen is not None:
            notes.append(f"read {chosen.name}: the VLMEvalKit table in {path} that holds "
                         "the predictions and their recorded verdicts")  # fmt: skip
            path = chosen
    found = table_for(path)
    if found is not None:
        path, why = found
        notes.append(f"read {path.name}: {why}")
    if benchmark is None and path.is_file() and path.stem.endswith(_TOLD_BY_NAME):
        try:
            hook = find_published(_VLMEVALKIT, None, path)
        except DataError:
            if not path.stem.endswith(AUXMATCH):
                # A choice table of no known benchmark: its items are choices, read as such.
                return FileToScore(path, benchmark, tuple(notes))
            notes.append(f"{path.name} names no benchmark lmmprobe knows: its answers are read "
                         "as an exact match of the whole answer with the file's gold "
                         "(--benchmark NAME reads them as the benchmark does)")  # fmt: skip
        else:
            benchmark = hook.benchmark
            notes.append(f"benchmark {benchmark}: told by the file's name ({hook.files}); "
                         "--benchmark says otherwise")  # fmt: skip
    return FileToScore(path, benchmark, tuple(notes))


def _work_folder_table(folder: Path, benchmark: str | None) -> Path | None:
    """The one VLMEvalKit judged table of `benchmark` (or of the one benchmark) in `folder`.

    The tables are those a VLMEvalKit ``--as-published`` hook recognises by name; None where
    the folder holds none (another tool's folder: its reader reads it).

    Raises:
        DataError: Several benchmarks' tables and no `benchmark`, or several of one (named).

    """
    name = _benchmark_name(benchmark)
    if benchmark is not None and name is None:
        return None
    hooks = [PUBLISHED_FIGURES.get(n) for n in PUBLISHED_FIGURES.names()]
    hooks = [h for h in hooks if h.tool == _VLMEVALKIT and name in (None, h.benchmark)]
    tables: dict[Path, str] = {}
    for n, entry in enumerate(folder.iterdir()):
        if n >= _MAX_ENTRIES:
            raise DataError(f"{folder}: more than {_MAX_ENTRIES:,} entries: not a work folder")
        fits = {h.benchmark for h in hooks if h.recognises(entry)} if entry.is_file() else set()
        if len(fits) == 1:
            tables[entry] = fits.pop()
    if not tables:
        return None
    benchmarks = sorted(set(tables.values()))
    if len(benchmarks) > 1:
        raise DataError(f"{folder}: a VLMEvalKit work folder with tables of {len(benchmarks)} "
                        f"benchmarks ({', '.join(benchmarks)}): say which with --benchmark")  # fmt: skip
    # The main judged table, not the _vanilla_ ones PRINT_VANILLA writes beside it.
    found = sorted(t for t in tables if "_vanilla_" not in t.stem) or sorted(tables)
    if len(found) > 1:
        names = ", ".join(t.name for t in found[:5]) + (" ..." if len(found) > 5 else "")
        raise DataError(f"{folder}: {len(found)} VLMEvalKit tables of {benchmarks[0]} ({names}): "
                        "give the one to score")  # fmt: skip
    return found[0]


def score_file(
    path: str | Path,
    benchmark: str | None,
    *,
    reader: str | None = None,
    field_map: Mapping[str, str] | None = None,
    by: Sequence[str] | None = None,
    model: str = "imported",
    bootstrap: int = 1000,
    on_rows: RowsSeen | None = None,
    on_sample: Callable[[Sample], None] | None = None,
    tool_version: str | None = None,
    settings: Mapping[str, str] | None = None,
) -> ImportedRun:
    """Score a file with `benchmark`'s official metric and breakdowns; nothing is kept.

    `tool_version` (``--tool-version``) is the version whose rules wrote the file, for a reader
    whose tool's rules changed (`ReadOptions.tool_version`); `settings` are a layout's own
    options (`ReadOptions.settings`: ReForm-Eval's formulation, Dysca's ground truth).

    The file goes the import's way (`import_file`), into a temporary store deleted on return:
    read, joined, scored and stored a chunk at a time, its figures computed from the stored
    rows, so memory holds one chunk of rows whatever the file's size, and ``score`` and
    ``import`` of one file give the same figures by the same code. `ImportedRun.scores` is
    empty; what a caller wants of each row it takes from `on_rows` (each chunk's joined rows
    and their scores) and `on_sample` (each sample of the benchmark's local copy, in its order).

    Raises:
        DataError: The file or the benchmark cannot be read, or no row joins.
        RegistryError: `reader` is not a registered reader.
        StoreError: The temporary store cannot be written (a full disk).

    """
    path = Path(path)
    read = _reader(path, benchmark, reader, field_map, tool_version, settings)
    spec = RunSpec(models=[model], data=benchmark or str(path), bootstrap=1000)
    spec = _spec(spec, benchmark, by, bootstrap=bootstrap)
    with (
        tempfile.TemporaryDirectory(prefix="lmmprobe-score-") as tmp,
        Store(Path(tmp) / "score.db") as store,
    ):
        run_id = new_run_id()
        store.create_run(run_id, spec.model_dump(mode="json"), tmp)
        plan, results = _stream_into(
            store, run_id, path, benchmark, spec, read, shown_run="(not stored)",
            shown_store="(none)", on_rows=on_rows, on_sample=on_sample,
        )  # fmt: skip
    return ImportedRun(read[0], read[3], plan, [], results, metric=_official(benchmark))


def import_file(
    path: str | Path,
    benchmark: str | None,
    *,
    model: str,
    db: str | None = None,
    out: str | None = None,
    reader: str | None = None,
    field_map: Mapping[str, str] | None = None,
    by: Sequence[str] | None = None,
    bootstrap: int = 1000,
    settings: Mapping[str, str] | None = None,
) -> ImportedRun:
    """Store a file's predictions as a run of `model` on `benchmark`, with its origin.

    `settings` are a layout's own options (`ReadOptions.settings`).

    The file is read, joined, scored and stored a chunk at a time (`plan_import`'s
    ``on_chunk``: the join through a SQLite index of the benchmark's samples), and its results
    are computed from the stored rows (`Store.rows`): memory holds one chunk of rows, not the
    file's. `ImportedRun.scores` is therefore empty: the scores are in the store. The
    benchmark's image files are checked inside `remembered_images`, as a run's are.

    Raises:
        DataError: The file or the benchmark cannot be read, or no row joins.
        RegistryError: `reader` is not a registered reader.
        StoreError: The store cannot be written.

    """
    path = Path(path)
    read = _reader(path, benchmark, reader, field_map, settings=settings)
    spec = RunSpec(models=[model], data=benchmark or str(path), bootstrap=1000)
    spec = _spec(spec, benchmark, by, bootstrap=bootstrap, db=db, out=out)
    with Store(spec.db) as store:
        run_id = new_run_id()
        out_dir = Path(spec.out) if spec.out else store.path.parent / run_id
        created: list[bool] = []

        def create() -> None:
            # Recorded with its first rows: a file refused before any row joins (an unknown
            # benchmark, an empty file, nothing joined) is bad input and records no run, as
            # `run` records none; before, it left a failed run that `latest` then named.
            store.create_run(run_id, spec.model_dump(mode="json"), str(out_dir))
            created.append(True)

        try:
            plan, results = _stream_into(
                store, run_id, path, benchmark, spec, read, shown_run=run_id,
                shown_store=str(store.path), before_rows=create,
            )  # fmt: skip
        except KeyboardInterrupt as exc:
            # Ctrl-C: the rows stored so far are in a run marked interrupted, which the
            # command names (`run_id` on the interrupt, as a run's is).
            if created:
                store.update_run(run_id, status="interrupted")
                exc.run_id = run_id  # type: ignore[attr-defined]
            raise
        except BaseException:
            # A file that breaks off half-way (a duplicate id, a bad row) leaves no half run:
            # the rows it stored are in a run marked failed.
            if created:
                store.update_run(run_id, status="failed")
            raise
        store.update_run(run_id, results=results.model_dump(mode="json"))
        try:
            write_results(results, out_dir)
        except Exception:
            # No results written, so the run is not complete (the error raised says why).
            store.update_run(run_id, status="failed")
            raise
        store.update_run(run_id, status=results.status)
    return ImportedRun(
        read[0], read[3], plan, [], results, run_id, out_dir, metric=_official(benchmark)
    )
