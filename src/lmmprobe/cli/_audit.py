"""Printing an audit (`lmmprobe.predictions.audit.Audit`): the gap, its causes, the items.

Shared by ``lmmprobe compare --audit`` (two runs) and ``lmmprobe score --audit`` (a file
against its tool's own verdicts).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich import box
from rich.markup import escape
from rich.table import Table

from lmmprobe.cli._common import InertConsole
from lmmprobe.data.base import DataError
from lmmprobe.registry import RegistryError
from lmmprobe.schema.text import shown_value

# The predictions layer is imported where it is used: every command loads this module (through
# `runs` and `imports`), and most never print an audit or explain a file.
if TYPE_CHECKING:
    from lmmprobe.predictions.as_published import Published
    from lmmprobe.predictions.audit import Audit, AuditItem
    from lmmprobe.predictions.explain import FileExplanation, FileFacts
    from lmmprobe.predictions.importing import ImportedRun

__all__ = [
    "Explained",
    "audit_data",
    "audit_document",
    "explain_imported",
    "file_facts",
    "print_audit",
]

_console = InertConsole(highlight=False)


def _short(text: str | None, width: int = 32) -> str:
    if text is None:
        return "-"
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def _side(v: Any) -> str:
    mark = "✓" if v.credit == 1.0 else ("✗" if v.credit == 0.0 else f"{v.credit:.2f}")
    read = "(nothing)" if v.recorded and v.reading is None else v.reading
    if not v.recorded:
        read = "(not recorded)"
    extra = " [judge]" if v.judged else (" [guess]" if v.guessed else "")
    return f"{mark} {_short(read)}{extra}"


def print_audit(result: Audit, *, limit: int = 20, legend: Sequence[str] = ()) -> None:
    """The summary lines, the paired statistics, then up to `limit` items per cause.

    `legend` (``label = spec`` lines, `lmmprobe.cli._view.legend`) follows the statistics,
    before the tables whose headers carry the labels.
    """
    from lmmprobe.predictions.audit import CAUSE_TEXT

    for line in result.summary():
        _console.print(escape(line))
    if result.n:
        pct = round(result.level * 100)
        ci = (
            "-"
            if result.low is None or result.high is None
            else f"[{result.low * 100:+.2f}, {result.high * 100:+.2f}]"
        )
        _console.print(
            f"paired: {pct}% CI of the gap {ci} points (bootstrap over {result.samples} samples, "
            f"{result.n_boot} resamples, seed {result.seed}); McNemar "
            + ("-" if result.mcnemar_p is None else f"p = {result.mcnemar_p:.3g}")
        )
    if result.left_out:
        words = {"only_a": f"only {result.label_a}", "only_b": f"only {result.label_b}"}
        _console.print(
            "left out: "
            + ", ".join(
                f"{v} with a verdict from {words.get(k, k)}" for k, v in result.left_out.items()
            )
        )
    for line in legend:
        _console.print(line, markup=False, soft_wrap=True, no_wrap=True)
    for cause in result.by_cause:
        items = [it for it in result.items if it.cause == cause]
        shown = items[:limit]
        title = f"{CAUSE_TEXT[cause]}: {len(items)} item{'' if len(items) == 1 else 's'}" + (
            f" (first {len(shown)})" if len(shown) < len(items) else ""
        )
        table = Table(title=escape(title), box=box.SIMPLE_HEAD, title_justify="left")
        table.add_column("item", overflow="fold")
        table.add_column("gold", overflow="fold")
        table.add_column(escape(result.label_a), overflow="fold")
        table.add_column(escape(result.label_b), overflow="fold")
        if cause == "answer":
            table.add_column("answers", overflow="fold")
        for it in shown:
            row = [
                escape(_item(it)),
                escape(_gold(it)),
                escape(_side(it.a)),
                escape(_side(it.b)),
            ]
            if cause == "answer":
                row.append(escape(f"{_short(it.a.raw, 24)} | {_short(it.b.raw, 24)}"))
            table.add_row(*row)
        _console.print()
        _console.print(table)


def _item(it: AuditItem) -> str:
    where = f" (row {it.b.row})" if it.b.row is not None else ""
    rep = f" #{it.a.repeat}" if it.a.repeat else ""
    return f"{it.a.sample_id}{rep}{where}"


def _gold(it: AuditItem) -> str:
    a = "/".join(it.a.gold or ())
    b = "/".join(it.b.gold or ())
    return a if not b or a == b else f"{a} vs {b}"


def audit_document(result: Audit) -> str:
    """The audit as one JSON object: ``gap_items`` (credit A - credit B) and ``gap_points``."""
    return json.dumps(audit_data(result), ensure_ascii=False, indent=2)


def audit_data(result: Audit) -> dict[str, Any]:
    """The audit as a JSON-ready dict (`audit_document`)."""

    def side(v: Any) -> dict[str, Any]:
        return {
            "credit": v.credit,
            "raw": v.raw,
            "reading": v.reading,
            "recorded": v.recorded,
            "gold": list(v.gold) if v.gold is not None else None,
            "judged": v.judged,
            "guessed": v.guessed,
            "row": v.row,
        }

    doc = {
        "label_a": result.label_a,
        "label_b": result.label_b,
        "n": result.n,
        "samples": result.samples,
        "accuracy_a": result.accuracy_a,
        "accuracy_b": result.accuracy_b,
        "difference": result.difference,
        # Items and points are both "the gap" in the terminal: each field says its unit.
        "gap_items": float(result.gap),
        "gap_points": float(result.gap) * 100 / result.n if result.n else None,
        "low": result.low,
        "high": result.high,
        "level": result.level,
        "n_boot": result.n_boot,
        "seed": result.seed,
        "mcnemar_p": result.mcnemar_p,
        "guessed": result.guessed,
        "left_out": dict(result.left_out),
        "left_out_detail": {
            k: {"items": v.items, "credit": float(v.credit), "guessed": v.guessed}
            for k, v in result.left_out_detail.items()
        },
        "causes": {
            cause: {
                "items": c.items,
                "b_higher": c.b_higher,
                "a_higher": c.a_higher,
                "net_items": float(c.net),
                "net_points": float(c.net) * 100 / result.n if result.n else None,
            }
            for cause, c in result.by_cause.items()
        },
        "items": [
            {"sample_id": it.a.sample_id, "repeat": it.a.repeat, "cause": it.cause}
            | {"a": side(it.a), "b": side(it.b)}
            for it in result.items
        ],
        "summary": result.summary(),
    }
    return doc


def print_published(published: Published) -> None:
    """The tool's figures as it writes them: each table, then its notes."""
    from lmmprobe.predictions.as_published.base import printed

    for t in published.tables:
        table = Table(
            title=escape(f"as published: {t.title}"),
            box=box.SIMPLE_HEAD,
            title_justify="left",
        )
        for i, column in enumerate(t.columns):
            table.add_column(
                escape(column),
                style="bold" if i == 0 else None,
                justify="left" if i == 0 else "right",
            )
        for row in t.rows:
            table.add_row(*(escape(printed(c)) for c in row))
        _console.print(table)
    _console.print(
        f"as published: {escape(published.definition)} ({escape(published.source)})",
        soft_wrap=True,
    )
    for note in published.notes:
        _console.print(escape(note), soft_wrap=True)


class Explained:
    """A scored file's explanation (`lmmprobe.predictions.explain`), printed or as JSON."""

    def __init__(self, explanation: FileExplanation) -> None:
        self.explanation = explanation

    def document(self) -> dict[str, Any]:
        """The keys ``score --format json`` adds: notes, the published figure, the audit."""
        e = self.explanation
        doc: dict[str, Any] = {"notes": e.notes()}
        if e.benchmark == "mmmu":
            doc["mmmu_guessed"] = len(e.guessed)
        if e.published is not None:
            doc["as_published"] = e.published.document()
        if e.audit is not None:
            doc["audit"] = audit_data(e.audit)
        return doc

    def print(self, *, limit: int = 20) -> None:
        """Notes, then the tool's published figures, then the audit."""
        e = self.explanation
        for note in e.notes():
            _console.print(f"note: {escape(note)}", soft_wrap=True)
        if e.published is not None:
            print_published(e.published)
        if e.audit is not None:
            _console.print()
            print_audit(e.audit, limit=limit)


def _name(benchmark: str | None) -> str | None:
    """The benchmark's registry name in a data spec (``mmmu,path=...`` → ``mmmu``), if any."""
    from lmmprobe.data.benchmarks import BENCHMARKS

    name = None if benchmark is None else benchmark.split(",", 1)[0].strip()
    return name if name is not None and name in BENCHMARKS.names() else None


def file_facts(
    benchmark: str | None, *, audit: bool, as_published: bool, hook_reads_rows: bool = True
) -> FileFacts:
    """What `explain_imported` will need of a file's rows, gathered as `score_file` streams.

    Every row and its score are kept only where they are read whole: the audit, the
    ``--as-published`` hooks that replay the rows (not one that reads the file again itself,
    `hook_reads_rows` False: ReForm-Eval's, Dysca's), MMMU's guesses (11,500 items at most).
    """
    from lmmprobe.predictions.explain import FileFacts

    name = _name(benchmark)
    keep = audit or (as_published and hook_reads_rows) or name in ("mmmu", "cmmmu")
    return FileFacts(name, keep=keep)


def hook_reads_rows(path: Path, benchmark: str | None, reader: str | None) -> bool:
    """Whether the ``--as-published`` hook of `path`'s reader replays its joined rows.

    False for a hook that reads the file again an entry at a time (``reads_rows = False``:
    ReForm-Eval's, Dysca's), so ``score --as-published`` holds no row of a large file. True
    where the hook cannot be told yet (`explain_imported` then names why none fits).
    """
    from lmmprobe.predictions.as_published import find_published
    from lmmprobe.predictions.scoring import detect_reader

    try:
        _, found = detect_reader(path, reader)
        hook = find_published(found.tool, _name(benchmark), path)
    except (DataError, OSError, RegistryError):  # the scoring that follows names it
        return True
    return bool(getattr(hook, "reads_rows", True))


def published_hook_exists(path: Path, benchmark: str | None, reader: str | None) -> bool:
    """Whether `path`'s reader has an ``--as-published`` hook for it (True when untold).

    A plain ``lmmprobe score FILE`` gives the tool's own figure beside lmmprobe's where there
    is one; a file of a reader without one (a mapped file carrying its golds) is scored all
    the same, not refused for an ``--as-published`` that was never given. True where the
    reader cannot be told: the scoring that follows names what is wrong with the file.
    """
    from lmmprobe.predictions.as_published.base import fitting_hooks
    from lmmprobe.predictions.scoring import detect_reader

    try:
        _, found = detect_reader(path, reader)
        return bool(fitting_hooks(found.tool, _name(benchmark), path))
    except (DataError, OSError, RegistryError):
        return True


def explain_imported(
    run: ImportedRun,
    facts: FileFacts,
    *,
    audit: bool,
    as_published: bool,
    tool_version: str | None = None,
) -> Explained:
    """Explain a scored file: its answer key, MMMU's guesses, its audit and the tool's figure.

    `facts` is what `file_facts` gathered while `score_file` read the file.

    Raises:
        DataError: ``--as-published`` where the file's reader has no hook for its benchmark;
            ``--tool-version`` where nothing in the file is read by versioned rules.

    """
    from lmmprobe.predictions.explain import explain_facts

    detail = run.origin.detail
    # A reader that reads by versioned rules took --tool-version itself (and checked it); the
    # tool's figure replays the verdicts the file recorded, whichever rules made them.
    read_with = detail.get("rule_version_from")
    if tool_version is not None and read_with is None and not as_published:
        raise DataError(
            f"--tool-version {shown_value(tool_version)!r}: {run.origin.path} holds nothing read by a "
            "tool's versioned rules (a VLMEvalKit result table's log; with --as-published, "
            "MathVista's score file)"
        )
    facts.items_from_file = run.plan.items_from_file
    explanation = explain_facts(
        facts,
        path=run.origin.path,
        audit=audit,
        as_published=as_published,
        label=run.origin.tool,
        tool=run.origin.tool,
        tool_version=None if read_with == "given" else tool_version,
        detail=detail,
    )
    if read_with is not None and read_with != "latest":
        explanation.rule_version = detail.get("rule_version_note")
    return Explained(explanation)
