"""``lmmprobe import`` and ``lmmprobe score PATH --benchmark``: other tools' prediction files.

Both read a file with a registered reader (found by sniffing, or ``--reader``), join it by id
to the benchmark's local copy and score it with the run's code (`lmmprobe.predictions`);
``import`` stores it as a run with its origin, ``score`` prints the figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from lmmprobe._secrets import redact_spec, shown_spec
from lmmprobe.cli._audit import (
    explain_imported,
    file_facts,
    hook_reads_rows,
    published_hook_exists,
)
from lmmprobe.cli._common import (
    DbOption,
    console,
    fail,
    said_when_interrupted,
    write_document,
)
from lmmprobe.cli.judge import judge_lines, judged_headline_lines
from lmmprobe.cli.registries import one_of
from lmmprobe.data import DataError
from lmmprobe.metrics import RUN_METRICS
from lmmprobe.registry import RegistryError
from lmmprobe.report import format_metric, json_ready
from lmmprobe.store import StoreError

# The import path is loaded by the commands that use it (`import`, `score --benchmark`): every
# command loads this module.
if TYPE_CHECKING:
    from lmmprobe.predictions.importing import ImportedRun

__all__ = ["import_predictions", "parse_fields", "print_imported", "score_with_benchmark"]

ImportFormat = Literal["table", "json"]


FieldOption = Annotated[
    list[str] | None,
    typer.Option(
        "--field", help="Field mapping for the mapped reader: id=qid,prediction=answer,gold=gt."
    ),
]
"""``--field`` of ``score`` and ``import``: the mapped reader's field mapping (`parse_fields`)."""


def parse_fields(values: list[str] | None) -> dict[str, str]:
    """``--field id=qid,prediction=answer`` (repeatable, comma-separated) as a dict.

    Raises:
        typer.Exit: An item without ``=``, or one of our names mapped to two fields (the
            message names it).

    """
    out: dict[str, str] = {}
    for value in values or []:
        for item in value.split(","):
            if not item.strip():
                continue
            ours, sep, theirs = item.partition("=")
            if not sep or not ours.strip() or not theirs.strip():
                fail(f"--field {item!r}: write OURS=THEIRS, e.g. id=qid,prediction=answer")
            name = ours.strip()
            if name in out and out[name] != theirs.strip():
                # Which one was meant cannot be told; keeping the last would be a guess.
                fail(f"--field {name}: mapped twice ({name}={out[name]}, {item.strip()})")
            out[name] = theirs.strip()
    return out


def _label(name: str) -> str:
    try:
        return RUN_METRICS.get(name).label or name
    except RegistryError:
        return name


def print_imported(
    run: ImportedRun, title: str, fmt: str, extra: dict[str, Any] | None = None
) -> None:
    """The figures of an imported file: official metric first, then breakdowns and counts.

    `extra` is added to the JSON document (``score --audit``'s audit, notes, published figure).
    """
    (spec, results), *_ = run.results.models.items()
    model = redact_spec(spec)  # shown as the store records it: a key in --model never printed
    origin = run.origin
    plan = run.plan
    # Golds read from the file itself: no benchmark was joined, so no join counts.
    counts = plan.counts()
    if fmt == "json":
        dumped = results.model_dump(mode="json")
        doc = {
            "reader": run.reader,
            "origin": {
                "tool": origin.tool,
                "path": origin.path,
                "sha256": origin.sha256,
                "detail": dict(origin.detail),
            },
            **counts,
            "run_id": run.run_id,
            "model": model,
            "metrics": dumped["metrics"],
            "breakdown": dumped["breakdown"],
            # The file's recorded judge readings by the path that decided each answer.
            "judge": dumped.get("judge"),
            # Where those readings decide answers the rules could not read in the headline.
            **(
                {"judged_headline": dumped["judged_headline"]}
                if "judged_headline" in dumped
                else {}
            ),
            "problems": plan.problems,
        } | (extra or {})
        write_document(
            json.dumps(json_ready(doc), ensure_ascii=False, indent=2) + "\n", json_text=True
        )
        return
    first = [run.metric] if run.metric else []
    order = first + [n for n in results.metrics if n not in first]
    table = Table(title=title, box=box.SIMPLE_HEAD)
    table.add_column("metric", style="bold")
    table.add_column("value [95% CI]", justify="right")
    for name in order:
        value = results.metrics.get(name)
        if value is not None and value.value is not None:
            table.add_row(escape(_label(name)), format_metric(value))
    console.print(table)
    for key, groups in results.breakdown.items():
        # The official metric first, then plain accuracy: columns some group has a value for.
        names = [
            n
            for n in dict.fromkeys([*first, "accuracy"])
            if any((m.get(n) is not None and m[n].value is not None) for m in groups.values())
        ]
        by = Table(title=f"by {escape(key)}", box=box.SIMPLE_HEAD)
        by.add_column(escape(key), style="bold", overflow="fold")
        by.add_column("n", justify="right")
        for name in names:
            by.add_column(escape(_label(name)), justify="right")
        for label, metrics in groups.items():
            n = next((m.n for m in metrics.values() if m is not None and m.n is not None), None)
            by.add_row(
                escape(label),
                "-" if n is None else str(n),
                *(format_metric(metrics.get(name), ci=False) for name in names),
            )
        console.print(by)
    line = f"{origin.tool} ({run.reader} reader), sha256 {origin.sha256[:12]}: "
    if counts.get("items") == "file" and run.metric is None:
        # No benchmark: the reader made each row's item (ReForm-Eval's entries, Dysca's truth).
        line += f"{counts['rows']} items read from the file (each row's own, no benchmark)"
    elif counts.get("items") == "file":
        line += (
            f"{counts['rows']} items read from the file (no local copy of the benchmark: its "
            "definition by name, the questions, options and golds the file gives)"
        )
    elif counts["golds"] == "file":
        line += f"{counts['rows']} predictions scored against the golds the file gives"
    else:
        line += (
            f"{counts['rows']} predictions joined of {counts['benchmark_samples']} samples; "
            f"{counts['missing']} samples without a prediction, {counts['unjoined']} rows not "
            "in the benchmark"
        )
    console.print(escape(line), highlight=False, soft_wrap=True)
    for judged in judge_lines(results.judge) + judged_headline_lines(results):
        console.print(escape(judged.strip()), highlight=False, soft_wrap=True)
    if plan.skipped:
        entries = "1 entry" if plan.skipped == 1 else f"{plan.skipped} entries"
        named = min(plan.skipped, sum(p.endswith("(left out)") for p in plan.problems))
        console.print(
            f"skipped {entries} for bad input (the others scored); the first {named} named below",
            highlight=False,
            soft_wrap=True,
        )
    for problem in plan.problems:
        console.print(f"note: {escape(problem)}", highlight=False, soft_wrap=True)
    if run.run_id is not None:
        console.print(
            f"stored as run {escape(run.run_id)} (model {escape(model)}) in {escape(str(run.out_dir))}",
            highlight=False,
            soft_wrap=True,
            no_wrap=True,
        )


def score_with_benchmark(
    file: Path,
    benchmark: str | None,
    reader: str | None,
    fields: list[str] | None,
    by: list[str] | None,
    fmt: str,
    *,
    audit: bool = False,
    as_published: bool = False,
    limit: int = 20,
    tool_version: str | None = None,
    settings: dict[str, str] | None = None,
    published_if_any: bool = False,
) -> None:
    """``lmmprobe score FILE --benchmark NAME``: print the official figures of `file`.

    `settings` are the layout's own options (ReForm-Eval's ``formulation``...).

    Beside them, the answer key's version and MMMU's guesses (`lmmprobe.cli._audit`); with
    `audit` the items whose official verdict differs, by cause; with `as_published` the tool's
    own figure to its last printed digit (the file's reader's hook, read with the rules of
    `tool_version` where they changed); with `published_if_any` (a plain ``score FILE``) only
    where the file's reader has a hook for it.
    """
    from lmmprobe.predictions.importing import file_to_score, score_file

    try:
        # A VLMEvalKit work folder, prediction table or score file stands for the table
        # holding the predictions and their verdicts; an _auxmatch table tells its benchmark.
        found = file_to_score(file, benchmark, reader)
        file, benchmark = found.path, found.benchmark
        if published_if_any:  # a plain `score FILE`: the tool's figure where it has one
            as_published = published_hook_exists(file, benchmark, reader)
        # The file streams through a temporary store (`score_file`); what the notes, the
        # audit and the published figure read of its rows is gathered as it passes.
        facts = file_facts(
            benchmark,
            audit=audit,
            as_published=as_published,
            hook_reads_rows=as_published and hook_reads_rows(file, benchmark, reader),
        )
        run = score_file(
            file, benchmark, reader=reader, field_map=parse_fields(fields), by=by,
            on_rows=facts.add_planned, on_sample=facts.add_local, tool_version=tool_version,
            settings=settings,
        )  # fmt: skip
        explained = explain_imported(
            run, facts, audit=audit, as_published=as_published, tool_version=tool_version
        )
    except (DataError, OSError, RegistryError, StoreError) as exc:
        fail(exc)
    extra = explained.document() if fmt == "json" else None
    if extra is not None:
        extra["notes"] = [*found.notes, *extra.get("notes", [])]
    print_imported(
        run,
        f"{escape(str(file))} ({run.origin.tool}) on {escape(benchmark or 'its golds')}",
        fmt,
        extra=extra,
    )
    if fmt != "json":
        for note in found.notes:
            console.print(f"note: {escape(note)}", highlight=False, soft_wrap=True)
        explained.print(limit=limit)


def _is_export(file: Path) -> bool:
    """Whether `file` is an ``lmmprobe export`` (told by its first entry; never raises)."""
    from lmmprobe.predictions import export_rows

    try:
        return export_rows(file) is not None
    except (DataError, OSError):
        return False


def _is_csv_export(file: Path) -> bool:
    """Whether `file` is an ``lmmprobe export --format csv`` (told by its header)."""
    from lmmprobe.predictions import is_csv_export

    return is_csv_export(file)


def store_refusal(file: Path) -> str | None:
    """The line refusing an lmmprobe store given as a prediction file; None for another file.

    `score lmmprobe-runs/lmmprobe.db` said "no reader recognises this layout ... map its
    fields with --reader mapped": a newcomer's store is read with `runs`, `show`, `export`.
    """
    try:
        if not file.is_file():
            return None
        with file.open("rb") as f:
            head = f.read(16)
    except OSError:
        return None
    if head != b"SQLite format 3\x00":
        return None
    return (
        f"{file} is a SQLite file, such as an lmmprobe store, not predictions: `lmmprobe runs "
        f"--db {file}` lists its runs, `lmmprobe show RUN --db {file}` gives a run's figures"
    )


def csv_export_refusal(file: Path, why: str) -> str:
    """The line refusing the CSV of ``lmmprobe export`` where the JSON lines one is read."""
    return (
        f"{file} is a CSV written by `lmmprobe export --format csv` (a spreadsheet's copy of a "
        f"run, every model's rows together, every value text); {why}; for the run's figures "
        "per model: `lmmprobe export RUN -o run.jsonl`, then `lmmprobe score run.jsonl`"
    )


def _import_interrupted(exc: KeyboardInterrupt) -> str:
    """What an import stopped by Ctrl-C keeps, and how to go on."""
    run_id = getattr(exc, "run_id", None)
    if run_id is None:
        return "no row was stored and no run recorded; the same command imports the file"
    return (
        f"run {run_id} is marked interrupted: it holds the rows stored so far, not the whole "
        "file; the same command imports the file again as a new run"
    )


def import_predictions(
    file: Annotated[Path, typer.Argument(help="Predictions written by another tool.")],
    benchmark: Annotated[
        str | None,
        typer.Option(
            help="The benchmark the predictions answer (a data spec: mmmu, "
            "mathvista,path=FOLDER); leave out when every row carries its gold.",
        ),
    ] = None,
    model: Annotated[str, typer.Option(help="The model's label in the run.")] = "imported",
    reader: Annotated[
        str | None,
        typer.Option(help="The file's layout (`lmmprobe list readers`); found by sniffing."),
    ] = None,
    field: FieldOption = None,
    by: Annotated[
        list[str] | None,
        typer.Option(help="Break results down by this metadata key (repeatable)."),
    ] = None,
    db: DbOption = None,
    out: Annotated[
        Path | None, typer.Option(help="Output folder [default: beside the store].")
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="table or json.", callback=one_of("format", ImportFormat)
        ),
    ] = "table",
    ground_truth: Annotated[
        Path | None,
        typer.Option(
            "--ground-truth",
            help="Dysca's ground-truth JSON (Dysca.json): FILE is Dysca model output aligned "
            "with it (--reader dysca).",
        ),
    ] = None,
) -> None:
    """Store another tool's predictions as a run (no model is called), with their origin.

    The answers are joined by id to the benchmark's local copy and scored by the same code as a
    lmmprobe run; the manifest records the tool, the file and its SHA-256, so report, compare,
    serve and elo show the run beside lmmprobe's own.
    """
    from lmmprobe.predictions.importing import file_to_score, import_file

    settings: dict[str, str] = {}
    if ground_truth is not None:
        # As `score` refuses it: Dysca's rows take their items from the ground truth, so a
        # benchmark would join them to items they are not.
        if reader not in (None, "dysca") or benchmark is not None:
            fail("--ground-truth applies to Dysca's outputs (--reader dysca), not --benchmark")
        reader = "dysca"
        settings["ground_truth"] = str(ground_truth)
    if reader is None and ground_truth is None and field is None and _is_export(file):
        # An `lmmprobe export` was sniffed as the generic mapped reader: its option indices
        # read as answer texts, every model's rows merged under one label, ids made up
        # (row-1...): a wrong figure, stored as a complete run (re-test 20b).
        fail(
            f"{file} holds rows of `lmmprobe export` (a run's answers, still in the store it "
            "came from): `lmmprobe score FILE` gives their figures per model (--matcher to "
            "re-read them); import stores another tool's predictions"
        )
    if (stored := store_refusal(file)) is not None:
        fail(stored)
    if reader is None and field is None and _is_csv_export(file):
        # The CSV of `lmmprobe export --format csv` was sniffed as a mapped file: every model's
        # rows stored under one name, a figure of no model (the README walk-through).
        fail(csv_export_refusal(file, "import stores another tool's predictions"))
    try:
        with said_when_interrupted(_import_interrupted):
            found = file_to_score(file, benchmark, reader)
            file, benchmark = found.path, found.benchmark
            run = import_file(
                file,
                benchmark,
                model=model,
                db=str(db) if db is not None else None,
                out=str(out) if out is not None else None,
                reader=reader,
                field_map=parse_fields(field),
                by=by,
                settings=settings,
            )
    except (DataError, OSError, RegistryError, StoreError) as exc:
        fail(exc)
    shown = shown_spec(model)
    print_imported(
        run,
        f"{escape(Path(file).name)} imported as {escape(shown)}",
        fmt,
        extra={"notes": list(found.notes)} if found.notes else None,
    )
    if fmt != "json":
        for note in found.notes:
            console.print(f"note: {escape(note)}", highlight=False, soft_wrap=True)
