"""``lmmprobe score PATH --benchmark`` and ``lmmprobe import``: other tools' files as runs.

`score_file` reads a file with its reader, joins and scores it (`lmmprobe.predictions.scoring`)
and builds the same `Results` a run of the benchmark builds (its official metric, the
breakdowns asked for), without storing anything. `import_file` stores the same as a run: the
answered samples, each answer as the response of the request a run would have sent (no model is
called), the scores, a manifest whose ``origin`` names the tool, the file and its SHA-256, and
results.json / results.md in the run's folder, so ``report``, ``compare``, ``serve`` and ``elo``
read it like any run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.data import data_fingerprint
from lmmprobe.data.base import LoadResult
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.judge.step import JudgeModelStats, JudgeRunOutcome
from lmmprobe.metrics import compute_metrics
from lmmprobe.metrics.answer_cache import scoring_scope
from lmmprobe.predictions.imported import Origin, ReadOptions
from lmmprobe.predictions.scoring import (
    ImportPlan,
    PlannedRow,
    detect_reader,
    imported_identity,
    plan_import,
    score_plan,
    score_rows,
)
from lmmprobe.report import Results, build_results, write_results
from lmmprobe.run import RunOutcome
from lmmprobe.run.manifest import build_manifest
from lmmprobe.run.runner import ModelOutcome, new_run_id
from lmmprobe.schema import JudgeConfig, RunSpec, Score
from lmmprobe.store import Store
from lmmprobe.store.answer_scores import AnswerScores

__all__ = [
    "DEFAULT_BREAKDOWNS",
    "ImportedRun",
    "import_file",
    "read_file",
    "recorded_judging",
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


def read_file(
    path: str | Path,
    benchmark: str | None,
    *,
    model: str,
    reader: str | None = None,
    field_map: Mapping[str, str] | None = None,
    strict: bool = False,
) -> tuple[str, Origin, ImportPlan, list[Score], RunSpec]:
    """Read, join and score one file: the reader's name, the origin, the plan and the scores."""
    path = Path(path)
    name, found = detect_reader(path, reader)
    options = ReadOptions(benchmark=benchmark, field_map=dict(field_map or {}))
    origin = found.origin(path, options)
    plan = plan_import(
        found.read(path, options), benchmark, model=model, origin=origin, strict=strict
    )
    scores = score_plan(plan, model, origin=origin, judge_protocol=_protocol(benchmark))
    spec = RunSpec(models=[model], data=benchmark or str(path), bootstrap=1000)
    return name, origin, plan, scores, spec


def recorded_judging(scores: Sequence[Score], model: str, origin: Origin) -> JudgeRunOutcome | None:
    """How a file's recorded judge readings decided its answers, as a judged run reports it.

    MathVista's stored ``extraction`` (and the like) are verdicts of the tool's judge, recorded
    in the file (`lmmprobe.predictions.scoring.recorded_judgement`): the results and the
    report's judges section count them by the path that decided each answer (rule, judge,
    unjudged) as for a run judged with ``--judge``, name the judge ``TOOL:MODEL (recorded)``
    with protocol version ``recorded``, and list no calls, since none was made. None when the
    file recorded no judge reading.
    """
    judged = [s for s in scores if s.judgements]
    if not judged:
        return None
    stats = JudgeModelStats()
    judges: dict[str, None] = {}
    for score in judged:
        stats.count_decided(score.judgements)
        for j in score.judgements:
            stats.protocols[j.protocol] = j.version
            if j.judge is not None:
                judges[j.judge] = None
    names = list(judges) or [f"{origin.tool} (recorded)"]
    manifest = {
        "judges": {
            name: {"backend": "recorded", "tool": origin.tool, "sha256": origin.sha256}
            for name in names
        },
        "protocols": {
            name: {"version": version, "source": f"recorded in {origin.path}"}
            for name, version in sorted(stats.protocols.items())
        },
        "recorded": True,
    }
    config = JudgeConfig(judges=names)
    return JudgeRunOutcome(config=config, models={model: stats}, manifest=manifest)


def _official(benchmark: str | None) -> str | None:
    name = _benchmark_name(benchmark)
    return BENCHMARKS.get(name).metric if name is not None else None


def _with_groups(
    results: Results, benchmark: str | None, scores: list[Score], spec: RunSpec
) -> Results:
    """`results` with the benchmark's own breakdowns added (MMMU's subjects and disciplines)."""
    if _benchmark_name(benchmark) == "mmmu" and not spec.by:
        for model in results.models.values():
            model.breakdown.update(mmmu_groups(scores, spec))
    return results


def _outcome(
    run_id: str,
    spec: RunSpec,
    store_path: Path,
    out_dir: Path,
    plan: ImportPlan,
    scores: list[Score],
    manifest: dict[str, Any],
) -> RunOutcome:
    load = LoadResult(
        samples=plan.samples,
        source=plan.load.source if plan.load is not None else plan.source,
        invalid=(plan.load.invalid if plan.load is not None else 0) + plan.unjoined,
        problems=list(plan.load.problems) if plan.load is not None else [],
    )
    model = spec.models[0]
    identity = imported_identity(model, None)
    mo = ModelOutcome(spec=model, identity=identity, scores=scores, requests=len(scores))
    outcome = RunOutcome(run_id, spec, store_path, out_dir, load, manifest, models=[mo])
    outcome.status = "complete"
    return outcome


def _spec(spec: RunSpec, benchmark: str | None, by: Sequence[str] | None, **more: Any) -> RunSpec:
    keys = (
        list(by)
        if by is not None
        else list(DEFAULT_BREAKDOWNS.get(_benchmark_name(benchmark) or "", ()))
    )
    return spec.model_copy(update={"by": keys, **more})


def _manifest(
    spec: RunSpec, model: str, origin: Origin, reader: str, plan: ImportPlan
) -> dict[str, Any]:
    manifest = build_manifest(
        spec,
        {model: imported_identity(model, origin)},
        data_fingerprint(plan.samples),
        len(plan.samples),
    )
    manifest["origin"] = origin_record(origin, reader) | plan.counts()
    return manifest


def score_file(
    path: str | Path,
    benchmark: str | None,
    *,
    reader: str | None = None,
    field_map: Mapping[str, str] | None = None,
    by: Sequence[str] | None = None,
    model: str = "imported",
    bootstrap: int = 1000,
) -> ImportedRun:
    """Score a file with `benchmark`'s official metric and breakdowns; nothing is stored.

    Raises:
        DataError: The file or the benchmark cannot be read, or no row joins.
        RegistryError: `reader` is not a registered reader.

    """
    name, origin, plan, scores, spec = read_file(
        path, benchmark, model=model, reader=reader, field_map=field_map
    )
    spec = _spec(spec, benchmark, by, bootstrap=bootstrap)
    manifest = _manifest(spec, model, origin, name, plan)
    judging = recorded_judging(scores, model, origin)
    if judging is not None:
        manifest["judge"] = judging.manifest
    outcome = _outcome("(not stored)", spec, Path("(none)"), Path("(none)"), plan, scores, manifest)
    results = _with_groups(build_results(outcome, judging), benchmark, scores, spec)
    return ImportedRun(name, origin, plan, scores, results, metric=_official(benchmark))


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
) -> ImportedRun:
    """Store a file's predictions as a run of `model` on `benchmark`, with its origin.

    Raises:
        DataError: The file or the benchmark cannot be read, or no row joins.
        RegistryError: `reader` is not a registered reader.
        StoreError: The store cannot be written.

    """
    path = Path(path)
    name, found = detect_reader(path, reader)
    options = ReadOptions(benchmark=benchmark, field_map=dict(field_map or {}))
    origin = found.origin(path, options)
    protocol = _protocol(benchmark)
    spec = RunSpec(models=[model], data=benchmark or str(path), bootstrap=1000)
    spec = _spec(spec, benchmark, by, bootstrap=bootstrap, db=db, out=out)
    scores: list[Score] = []
    with Store(spec.db) as store:
        run_id = new_run_id()
        out_dir = Path(spec.out) if spec.out else store.path.parent / run_id
        store.create_run(run_id, spec.model_dump(mode="json"), str(out_dir))

        def store_chunk(rows: list[PlannedRow]) -> None:
            # Stored as joined, a chunk at a time; only the scores stay in memory (the run
            # metrics read them). The imported text is stored as the response to the request
            # a run would have sent: scoring can be redone from the store like any run's.
            chunk = score_rows(rows, model, origin=origin, judge_protocol=protocol)
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
            scores.extend(chunk)

        try:
            plan = plan_import(
                found.read(path, options), benchmark, model=model, origin=origin,
                on_chunk=store_chunk,
            )  # fmt: skip
        except BaseException:
            # A file that breaks off half-way (a duplicate id, a bad row) leaves no half run.
            store.update_run(run_id, status="failed")
            raise
        manifest = _manifest(spec, model, origin, name, plan)
        judging = recorded_judging(scores, model, origin)
        if judging is not None:
            # The file's recorded judge, named as a judged run names its judges (serve's run
            # page and the HTML report read the manifest's ``judge`` entry).
            manifest["judge"] = judging.manifest
        store.update_run(run_id, manifest=manifest)
        outcome = _outcome(run_id, spec, store.path, out_dir, plan, scores, manifest)
        with scoring_scope(AnswerScores(store), None, read=True):
            results = _with_groups(build_results(outcome, judging), benchmark, scores, spec)
        store.update_run(run_id, results=results.model_dump(mode="json"))
        try:
            write_results(results, out_dir)
        except Exception:
            # No results written, so the run is not complete (the error raised says why).
            store.update_run(run_id, status="failed")
            raise
        store.update_run(run_id, status=outcome.status)
    return ImportedRun(
        name, origin, plan, scores, results, run_id, out_dir, metric=_official(benchmark)
    )
