"""What ``lmmprobe run`` and ``show`` print: result tables that fit the terminal, and why rows failed.

A run's terminal summary shows what the run was asked for: the headline metrics (with
circular accuracy under ``--circular``, instability under ``--repeats``, caption scores for
caption data: every headline metric that has a value), a table per ``--by`` key, and for models
with failed requests the most common error types with one message each.

Tables are laid out for the console's width: long model specs get short labels with a legend
(the full spec once, below the table), and columns that do not fit move to a further table
that repeats the model column, so nothing wraps a few letters per line or is cut off. A short
label carries what the spec's options say about thinking (``fake-vlm thinking off``), so two
variants of one model are told apart in the rows themselves, not only in the legend.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lmmprobe._secrets import redact_spec, shown_spec
from lmmprobe.metrics import MetricValue, headline_metrics
from lmmprobe.metrics.outcome import ACCURACY_N, COUNT_HELP
from lmmprobe.models.base import parse_model_spec
from lmmprobe.report import Results, format_metric
from lmmprobe.report._format import SMALL_N_MARK, SMALL_N_NOTE, n_cell
from lmmprobe.report.leaderboard import leaderboard_notes
from lmmprobe.report.results import no_text_to_score, row_counts
from lmmprobe.report.settings import (
    judged_budget_message,
    model_setting,
    run_notes,
    sides_apart,
)
from lmmprobe.store import Store
from lmmprobe.store.reuse import JUDGED_FROM

LABEL_MAX = 20


WITH_CI = ("accuracy", "frame_sensitivity")
"""The metrics the terminal's tables show with their interval (results.md has every one):
accuracy, and the frame spread, a difference between policies that means little without it."""


def has_small_n(tables: Iterable[Table]) -> bool:
    """Whether any of `tables` marks a small n (`n_cell`): its footnote is then printed."""
    return any(
        str(cell).endswith(SMALL_N_MARK)
        for table in tables
        for column in table.columns
        for cell in column.cells
    )


"""Model specs longer than this get a short label in tables (the legend gives the spec)."""

ERROR_TYPES_SHOWN = 3
"""Error types listed per model (the most common first)."""

_MESSAGE_MAX = 200


@dataclass(frozen=True)
class Column:
    """One table column: header and one cell per row."""

    header: str
    cells: list[str]
    no_wrap: bool = True


def _short(spec: str) -> str:
    """A readable short name: the checkpoint or model name without URL, path or options."""
    try:
        backend, target, _ = parse_model_spec(spec)
    except ValueError:
        return spec
    if not target:
        return backend
    name = target.split("@", 1)[0].rstrip("/")  # openai:MODEL@URL; hf:org/name or a folder
    return name.rsplit("/", 1)[-1] or backend


def _sibling_setting(spec: str, specs: Sequence[str]) -> list[str]:
    """What sets `spec` apart from another spec of its checkpoint that names a thinking setting.

    ``hf:tiny-llava-think`` beside ``hf:tiny-llava-think,chat_template_kwargs=enable_thinking=
    false``: the second was labelled "thinking off" and the first nothing, so its row did not
    say it is the thinking one (re-test 20b #3); it is "thinking default" (the template's).
    """
    try:
        mine = parse_model_spec(spec)[:2]
    except ValueError:
        return []
    for other in specs:
        if other == spec or not model_setting(other):
            continue
        try:
            same = parse_model_spec(other)[:2] == mine
        except ValueError:
            continue
        if same:
            words = sides_apart(spec, other)[0]
            return [w for w in words if w.endswith(" default") and "=" not in w]
    return []


def model_labels(specs: Sequence[str], max_len: int = LABEL_MAX) -> dict[str, str]:
    """A unique table label per spec: the spec itself when short, else a short name.

    Short names are the model or checkpoint name (``openai:gpt-4o@http://...`` → ``gpt-4o``),
    cut to `max_len`, followed by what the options say about thinking (``gpt-4o effort
    high``, `lmmprobe.report.settings.model_setting`); clashes get ``#2``, ``#3`` in order, so
    labels are stable for a given list of specs.
    """
    labels: dict[str, str] = {}
    told = {spec: model_setting(spec) or _sibling_setting(spec, specs) for spec in specs}
    plain = [s for s in specs if len(s) <= max_len and not told[s]]
    taken: set[str] = {redact_spec(s) for s in plain}
    for spec in specs:
        if spec in plain:
            labels[spec] = redact_spec(spec)  # shown: its secrets redacted, as recorded
            continue
        base = _short(spec)
        if len(base) > max_len:
            base = base[: max_len - 3] + "..."
        base = " ".join([base, *told[spec]])
        label, k = base, 1
        while label in taken:
            k += 1
            label = f"{base}#{k}"
        taken.add(label)
        labels[spec] = label
    return labels


def legend(labels: dict[str, str]) -> list[str]:
    """``label = spec`` for each shortened spec (empty when every spec is its own label).

    The spec as recorded, its secrets redacted, and cut as every printed spec is
    (`lmmprobe._secrets.shown_spec`): a 100 KB option value is never printed whole.
    """
    return [
        f"  {label} = {shown_spec(spec)}"
        for spec, label in labels.items()
        if label != redact_spec(spec)
    ]


def _natural_width(console: Console, table: Table) -> int:
    return console.measure(table, options=console.options.update(max_width=10_000)).maximum


def fit_tables(
    console: Console,
    title: str,
    first: Column,
    columns: Sequence[Column],
    *,
    lead: Sequence[Column] = (),
) -> list[Table]:
    """Tables for `columns`, as few as fit the console's width, each starting with `first`.

    `lead` columns (the row count) go in the first table only, alone there when the first
    column does not fit beside them (rich would cut the model's label). A column too wide to
    share a table gets one of its own (rich then folds it as little as it can).
    """
    width = console.width
    tables: list[Table] = []
    chunk: list[Column] = []

    def build(cols: Sequence[Column], with_lead: bool) -> Table:
        table = Table(
            title=escape(title) if not tables else None,
            box=box.SIMPLE_HEAD,
            padding=(0, 1),
            title_justify="left",
            show_edge=False,
        )
        table.add_column(escape(first.header), style="bold", no_wrap=True)
        for c in [*(lead if with_lead else ()), *cols]:
            table.add_column(
                escape(c.header), justify="right", no_wrap=c.no_wrap, min_width=len(c.header)
            )
        for i, label in enumerate(first.cells):
            cells = [c.cells[i] for c in [*(lead if with_lead else ()), *cols]]
            table.add_row(escape(label), *(escape(x) for x in cells))
        return table

    for col in columns:
        trial = build([*chunk, col], not tables)
        if (chunk or (lead and not tables)) and _natural_width(console, trial) > width:
            tables.append(build(chunk, not tables))
            chunk = [col]
        else:
            chunk.append(col)
    if chunk or not tables:
        tables.append(build(chunk, not tables))
    return tables


def _value(m: MetricValue | None) -> float | None:
    return None if m is None else m.value


def headline_tables(console: Console, results: Results, labels: dict[str, str]) -> list[Table]:
    """The headline metrics, one row per model, split over as many tables as the width needs.

    Columns no model has a value for are left out; the terminal keeps the interval for
    accuracy and the frame spread only (`WITH_CI`; results.md and results.json have them
    all), and marks a small accuracy n (`n_cell`).
    """
    models = list(results.models)
    shown = [
        m
        for m in headline_metrics()
        if any(_value(r.metrics.get(m.name)) is not None for r in results.models.values())
    ]
    counts = [row_counts(results.models[s].metrics, results.models[s].counts) for s in models]
    lead = [Column("rows", [str(c[0]) for c in counts])]
    if any(c[1] for c in counts):  # captions only: no right/wrong, no accuracy to count for
        # Named for what it is, accuracy's n: "judged" read as a judge's work beside a
        # judge's coverage, and appeared in runs that had no judge.
        lead.append(Column(ACCURACY_N, [n_cell(c[1]) for c in counts]))
    columns = [
        Column(
            f"{m.column} [95% CI]" if m.name in WITH_CI else m.column,
            [
                "-"
                if no_text_to_score(m.name, results.models[s].counts)
                else format_metric(
                    results.models[s].metrics.get(m.name),
                    ci=m.name in WITH_CI,
                    digits=m.digits,
                )
                for s in models
            ],
        )
        for m in shown
    ]
    title = f"run {results.run_id} ({results.status})"
    return fit_tables(
        console, title, Column("model", [labels[s] for s in models]), columns, lead=lead
    )


def breakdown_tables(
    console: Console, results: Results, labels: dict[str, str], key: str
) -> list[Table]:
    """One `--by` key: a row per group, a column per model with the main metric of the groups.

    The main metric is accuracy (with its interval) when any group has it, else the first
    headline metric any group has (e.g. the free-form score); results.md has every metric.
    """
    groups: list[str] = []
    for r in results.models.values():
        groups += [g for g in r.breakdown.get(key, {}) if g not in groups]
    if not groups:
        return []
    by_model = {s: r.breakdown.get(key, {}) for s, r in results.models.items()}
    main = next(
        (
            m
            for m in headline_metrics()
            if any(
                _value(metrics.get(m.name)) is not None
                for per_group in by_model.values()
                for metrics in per_group.values()
            )
        ),
        None,
    )
    if main is None:
        return []

    # The count beside the main metric is its own n: rows scored right or wrong for accuracy
    # (captions and free-form rows are neither), every row for a metric of every row.
    judged = main.name in ("accuracy", "balanced_accuracy", "unparsed_rate", "truncated_rate")

    def n_of(group: str) -> str:
        counts = [
            row_counts(metrics, r.breakdown_counts.get(key, {}).get(group))[1 if judged else 0]
            for r in results.models.values()
            if (metrics := r.breakdown.get(key, {}).get(group)) is not None
        ]
        return n_cell(max(counts, default=0))

    ci = main.name == "accuracy"
    columns = [
        Column(
            labels[s],
            [
                format_metric(by_model[s].get(g, {}).get(main.name), ci=ci, digits=main.digits)
                for g in groups
            ],
        )
        for s in results.models
    ]
    title = f"{main.column} by {key}" + (" [95% CI]" if ci else "")
    n = Column(ACCURACY_N if judged else "rows", [n_of(g) for g in groups])
    return fit_tables(console, title, Column(key, groups), columns, lead=[n])


def failures(store: Store, results: Results) -> dict[str, list[tuple[str, str]]]:
    """(error type, message) of each failed row, per model, for models with failed rows.

    Read from the store (scores joined with their stored responses), so ``show`` gives the same
    account as the run that wrote them; nothing is read when no model has an error.
    """
    failing = {
        m
        for m, r in results.models.items()
        if (rate := r.metrics.get("error_rate")) is not None and rate.value
    }
    out: dict[str, list[tuple[str, str]]] = {}
    if not failing:
        return out
    source = (results.manifest.model_extra or {}).get(JUDGED_FROM)
    for row in store.iter_score_rows(results.run_id):
        if row["model"] in failing and row["error_type"] is not None:
            etype, message = str(row["error_type"]), str(row["error_message"] or "")
            if etype == "budget" and isinstance(source, str):
                message = judged_budget_message(message, source)
            out.setdefault(row["model"], []).append((etype, message))
    return out


def budget_requests(store: Store, results: Results) -> int:
    """Requests of the run stored as ``budget`` errors: a budget left them unsent.

    Counted by request, not by row: rows whose prompts are the same (repeats, duplicate
    samples) share one request, as the requests the run sent are counted.
    """
    keys = {
        (row["model"], row["key"])
        for row in store.iter_score_rows(results.run_id)
        if row["error_type"] == "budget"
    }
    return len(keys)


def error_lines(failed: Sequence[tuple[str, str]]) -> list[str]:
    """The most common error types of one model's failed rows, each with a count and one message."""
    if not failed:
        return []
    counts = Counter(etype for etype, _ in failed)
    lines = []
    for etype, count in counts.most_common(ERROR_TYPES_SHOWN):
        message = next((msg for t, msg in failed if t == etype and msg), "")
        message = " ".join(message.split())
        if len(message) > _MESSAGE_MAX:
            message = message[: _MESSAGE_MAX - 3] + "..."
        lines.append(f"  {etype} x{count}: {message}" if message else f"  {etype} x{count}")
    if len(counts) > ERROR_TYPES_SHOWN:
        rest = sum(c for _, c in counts.most_common()[ERROR_TYPES_SHOWN:])
        lines.append(f"  ... and {rest} more of {len(counts) - ERROR_TYPES_SHOWN} other type(s)")
    return lines


_BACKEND_LIMIT = re.compile(r"\((max_requests|max_tokens_total)=(\d+)\)")
"""How a backend's own budget error names its option (`lmmprobe.models.openai_api`)."""


def budget_limits(failed: Sequence[tuple[str, str]]) -> list[str]:
    """The limits whose budget errors `failed` holds, first met first, each once.

    A backend's own budget is named by its option (``max_requests=3``), the run's spending
    limit as ``--max-cost``; a budget error that names neither (stored by an older lmmprobe)
    adds nothing.
    """
    out: list[str] = []
    for etype, message in failed:
        if etype != "budget":
            continue
        found = _BACKEND_LIMIT.search(message)
        name = (
            f"{found[1]}={found[2]}"
            if found
            else "--max-cost"
            if message.startswith("cost budget")
            else None
        )
        if name is not None and name not in out:
            out.append(name)
    return out


def all_failed(results: Results) -> list[str]:
    """The models every row of which failed (no answer at all)."""
    return [
        m
        for m, r in results.models.items()
        if (rate := r.metrics.get("error_rate")) is not None and rate.n and rate.value == 1.0
    ]


def missing_by_keys(
    results: Results, metadata: Iterable[Mapping[str, Any]]
) -> list[tuple[str, list[str]]]:
    """``--by`` keys no row has in its metadata, each with the metadata keys rows do have.

    Args:
        results: The run's results (its ``--by`` keys).
        metadata: Each row's metadata (read as it goes: a run's rows are never held whole).

    """
    if not results.spec.by:
        return []
    present: set[str] = set()
    for m in metadata:
        present.update(m)
    return [(key, sorted(present)) for key in results.spec.by if key not in present]


def count_notes(results: Results, labels: dict[str, str]) -> list[str]:
    """What ``rows`` and ``accuracy n`` count, when they differ for some model (else nothing).

    Rows a model has that are not in accuracy are errors or answers scored neither right nor
    wrong (captions and free-form descriptions); a line per such model says how many of each,
    so the two counts and the free-form score's n can be told apart. Judges are not meant:
    the words are those of a run without one too.
    """
    lines: list[str] = []
    if not any(r.counts is not None and r.counts.judged for r in results.models.values()):
        return lines  # no verdicts at all (captions only): no accuracy whose n to explain
    for spec, r in results.models.items():
        c = r.counts
        if c is None or c.rows == c.judged:
            continue
        parts = [f"{c.free_text} free-form/caption with text"] if c.free_text else []
        parts += [f"{c.empty} free-form/caption with no text"] if c.empty else []
        parts += [f"{c.error} errors"] if c.error else []
        silent = "freeform_score" in r.metrics and no_text_to_score("freeform_score", c)
        lines.append(
            f"  {labels.get(spec, spec)}: {c.rows - c.judged} rows not in accuracy "
            f"({', '.join(parts)})" + ("; free-form score -: no text to score" if silent else "")
        )
    if not lines:
        return []
    head = f"rows: {COUNT_HELP['rows']}; {ACCURACY_N}: {COUNT_HELP['judged']}"
    return [head, *lines, ""]


def truncated_tokens(store: Store, results: Results) -> dict[str, int]:
    """The most completion tokens a truncated output of each model used, read from the store.

    Only models with truncated rows, each of which reports its completion tokens (a backend
    without usage says nothing); nothing is read when no model has a truncated row. Below the
    run's ``--max-new-tokens``, something else stopped them (`truncation_notes`).
    """
    out: dict[str, int] = {}
    for m, r in results.models.items():
        if r.counts is None or not r.counts.truncated:
            continue
        most: int | None = None
        for row in store.iter_score_rows(results.run_id, model=m):  # streamed, one at a time
            if row["stage"] != "truncated":
                continue
            if row["completion_tokens"] is None:  # unknown for one: nothing said for any
                most = None
                break
            most = max(most or 0, int(row["completion_tokens"]))
        if most is not None:
            out[m] = most
    return out


def truncation_notes(
    results: Results, labels: dict[str, str], stopped: Mapping[str, int] | None = None
) -> list[str]:
    """How many answers each model left cut off, and the option that gives them room.

    A truncated output stopped inside its thinking or at the token limit before an answer; it
    is counted wrong and never read, so a reader needs to know it happened and what to raise.
    `stopped` holds the most tokens a model's truncated outputs used (`truncated_tokens`):
    where that is below ``--max-new-tokens`` the run's limit did not stop them (the server's
    own limit did, or the model ended inside its thinking), and raising it is not advised.
    Nothing when no model has a truncated row.
    """
    limit = results.spec.gen.max_new_tokens
    lines: list[str] = []
    short = 0  # models whose truncated outputs all stopped below the limit
    for spec, r in results.models.items():
        c = r.counts
        if c is None or not c.truncated:
            continue
        line = f"  {labels.get(spec, spec)}: {c.truncated} of {c.judged} answers truncated"
        most = (stopped or {}).get(spec)
        if most is not None and most < limit:
            short += 1
            line += (
                f", each stopped at {most} token{'s' * (most != 1)} or fewer, below --max-new-tokens (this run: "
                f"{limit}): the server's own limit (its max tokens or context length) or the "
                "model stopped them, so raising --max-new-tokens will not help"
            )
        lines.append(line)
    if not lines:
        return []
    if short == len(lines):
        head = (
            "truncated: outputs cut off before their answer (inside their thinking, or at a "
            "token limit), counted wrong and never read"
        )
    else:
        head = (
            "truncated: outputs cut off before their answer (inside their thinking, or at the "
            "token limit), counted wrong and never read; raise --max-new-tokens (this run: "
            f"{limit}) to give the model room to answer"
        )
    return [head, *lines, ""]


def likelihood_notes(results: Results, labels: dict[str, str]) -> list[str]:
    """The run's notes, each followed by a blank line; none for most runs.

    `lmmprobe.report.settings.run_notes` writes them: a baseline run with ``--method
    likelihood``, whose scores are made up.
    """
    out: list[str] = []
    notes = run_notes(results.spec, results.models, labels)
    for note in notes + leaderboard_notes(results.spec, results.models, labels):
        out += [f"note: {note}", ""]
    return out


def cost_lines(
    results: Results, spent: float, max_cost: float | None, unsent: int = 0
) -> list[str]:
    """What this invocation spent, beside what the table's answers cost.

    The table's ``answers' cost $`` prices every answer of the run, those read from the store
    (paid for by an earlier run) included; ``--max-cost`` counts only what this invocation
    sends. One line says both, so the two figures are never read as one; it counts answers
    (rows with an error have none and cost nothing) and the requests a budget left unsent.
    Nothing for a run without a priced model.

    Args:
        results: The run's results.
        spent: Dollars this invocation's calls cost (`lmmprobe.run.RunOutcome.spent`).
        max_cost: The run's ``--max-cost``, if any.
        unsent: Requests stored as ``budget`` errors: a budget stopped them before they were
            sent.

    """
    priced = [r for r in results.models.values() if r.metrics.get("cost") is not None]
    if not priced and not spent and max_cost is None:
        return []
    sent = sum(r.stats.called for r in results.models.values())
    judged = any(r.judge is not None for r in results.models.values())
    line = f"spent by this run: ${spent:.4f}"
    line += f" of --max-cost ${max_cost:g}" if max_cost is not None else ""
    line += f", on the {sent} request(s) it sent"
    attempts = sum(r.stats.attempts or r.stats.called for r in results.models.values())
    if attempts > sent:
        # Each retry of a reply that came malformed or empty was paid as well.
        line += f" ({attempts} attempt{'' if attempts == 1 else 's'}, retries included)"
    line += " and its judges' calls" if judged else ""
    if unsent:
        line += f"; {unsent} request(s) left unsent by the budget (no answer, no cost)"
    if priced:
        total = sum(r.metrics["cost"].value or 0.0 for r in priced)
        # Answers read from the store: a run asks every stored error again, so what it reads
        # back is answers; a run judged from the store reads its errors back too, and those
        # are no answers.
        stored = sum(min(r.stats.cached, r.stats.requests - r.stats.errors) for r in priced)
        answers = sum(r.stats.requests - r.stats.errors for r in priced)
        line += f"; answers' cost $ above: all {answers} answers, ${total:.4f}"
        if stored:
            line += f", {stored} of them read from the store (paid for by earlier runs)"
        elif answers:
            line += ", every one sent by this run"
    return [line]


def print_results(
    console: Console, results: Results, stopped: Mapping[str, int] | None = None
) -> dict[str, str]:
    """Print the headline tables, the legend and one table per ``--by`` key; return the labels.

    `stopped`: the most tokens each model's truncated outputs used (`truncated_tokens`), so the
    truncation note advises what would help.
    """
    labels = model_labels(list(results.models))
    headline = headline_tables(console, results, labels)
    for table in headline:
        console.print(table)
        console.print()
    small = has_small_n(headline)
    notes = count_notes(results, labels)
    if notes:
        # The legend is prose, wrapped to the terminal; each model's line stays whole.
        console.print(notes[0], highlight=False, markup=False)
    for line in notes[1:]:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    for line in truncation_notes(results, labels, stopped):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    for line in likelihood_notes(results, labels):  # prose: wrapped to the terminal
        console.print(line, highlight=False, markup=False)
    for line in legend(labels):
        # ``label = spec`` is one definition: read and copied whole, never wrapped.
        console.print(line, highlight=False, markup=False, soft_wrap=True, no_wrap=True)
    if legend(labels):
        console.print()
    for key in results.spec.by:
        tables = breakdown_tables(console, results, labels, key)
        for table in tables:
            console.print(table)
            console.print()
        small = small or has_small_n(tables)
    if small:  # once, under the last table: each marked table would repeat it
        console.print(SMALL_N_NOTE, highlight=False, markup=False)
        console.print()
    return labels
