"""``lmmprobe runs``: list stored runs; ``lmmprobe compare``: two runs (or models) side by side.

``compare`` pairs the answers two runs gave to the same samples (one model each, or two models
of one run) and reports the accuracy difference with a paired cluster-bootstrap interval
(samples resampled, as the run metrics do), McNemar's exact test on the answers where exactly
one side is right (with the counts of right/wrong pairs), how often the two agree, and the
samples where they differ. Each side is labelled by what sets it apart (`sides_apart`:
``thinking off``, ``effort high``, ``blind``...), so two specs of one checkpoint with thinking
on and off read as such. Only answers both sides scored count: errors are errors, not wrong
answers, so a pair with an error on either side is left out (and counted), as are answers
judged only as a corpus (captions).

The statistics are plain functions (`list_runs`, `lmmprobe.report.compare.compare_runs`) a
Python user can call with a `Store`; the commands only print them.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from lmmprobe._secrets import redact_spec, shown_spec
from lmmprobe.cli._audit import audit_document, print_audit
from lmmprobe.cli._common import (
    EXIT_STOPPED_BUDGET,
    DbOption,
    InertConsole,
    MaxCostOption,
    PricesOption,
    err_console,
    fail,
    judge_budget_lines,
    judge_meter,
    open_store,
    stopped_text,
)
from lmmprobe.cli._view import legend, model_labels
from lmmprobe.cli.registries import one_of
from lmmprobe.cli.validity import validity
from lmmprobe.metrics.value import stored_metric_problem
from lmmprobe.report.compare import (
    Comparison,
    Difference,
    checkpoint,
    checkpoint_pair,
    compare_runs,
)
from lmmprobe.report.settings import origin_setting, run_setting, sides_apart
from lmmprobe.schema.spec import MAX_BOOTSTRAP
from lmmprobe.store import DEFAULT_DB, Store, command_for
from lmmprobe.store.queries import run_models
from lmmprobe.store.runs import StoredRun, count_runs, read_run, read_runs

if TYPE_CHECKING:
    from lmmprobe.run import CostMeter

RunsFormat = Literal["table", "json"]

__all__ = ["Comparison", "Difference", "RunSummary", "compare", "compare_runs", "list_runs", "runs"]

# Tables here are meant for a person at a terminal: rich takes the terminal's width, or
# $COLUMNS, or 80 when neither is known, so piped output reads at 80 columns as well.
_console = InertConsole(highlight=False)
# Model outputs are untrusted: control characters (escape sequences, newlines) never reach the
# terminal raw.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _plain(text: str | None, width: int = 40) -> str:
    """One line of untrusted text, control characters shown as spaces, at most `width` long."""
    if text is None:
        return ""
    line = _CONTROL.sub(" ", text).strip()
    return line if len(line) <= width else line[: width - 1] + "…"


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


# -- listing -----------------------------------------------------------------------------


@dataclass
class RunSummary:
    """One stored run as `lmmprobe runs` lists it."""

    id: str
    created: str
    """When the run started, ISO 8601 in UTC."""
    status: str
    data: str | None
    models: list[str]
    n: int | None
    """Samples evaluated (None when the run recorded no count)."""
    accuracy: dict[str, float | None] = field(default_factory=dict)
    """Headline accuracy per model; None while a run has no results or for caption-only data."""
    setting: list[str] = field(default_factory=list)
    """What the run changed from a default run (``blind``, ``likelihood``, ``repeats 3``...):
    `lmmprobe.report.settings.run_setting`, so runs of one model tell apart."""
    origin: dict[str, Any] | None = None
    """Where an imported run's predictions came from (tool, path, sha256): the manifest's
    ``origin``; None for a run lmmprobe's models answered."""
    unreadable: list[str] = field(default_factory=list)
    """What of the run's stored results is not shown, and why (a store damaged or edited by
    hand: ``results``, or ``MODEL accuracy: value: '0.99' is not a number``)."""


def _summary(run: StoredRun) -> RunSummary:
    models = run.models
    found = run.manifest.get("origin")
    origin = found if isinstance(found, dict) else None
    accuracy: dict[str, float | None] = {}
    unreadable = (
        ["results: the column does not hold a JSON object"] if "results" in run.damaged else []
    )
    for m in models:
        acc = run.metrics(m).get("accuracy")
        # The figure shown only as `show` would read it: a number inside its own interval.
        problem = stored_metric_problem(acc) if isinstance(acc, dict) else None
        if problem is not None:
            unreadable.append(f"{m} accuracy.{problem[0]}: {problem[1]}")
        value = acc.get("value") if isinstance(acc, dict) and problem is None else None
        accuracy[m] = float(value) if isinstance(value, int | float) else None
    return RunSummary(
        id=run.id,
        created=_iso(run.created_at),
        status=run.status,
        data=run.data,
        models=models,
        n=run.samples,
        accuracy=accuracy,
        setting=origin_setting(run.manifest) + run_setting(run.spec),
        origin=origin,
        unreadable=unreadable,
    )


def list_runs(store: Store, limit: int | None = None) -> tuple[list[RunSummary], int]:
    """The store's runs, newest first, and how many it holds in all.

    Args:
        store: An open store.
        limit: Return at most this many (None: all).

    """
    total = count_runs(store.conn)
    return [_summary(r) for r in read_runs(store.conn, limit)], total


_ID_WIDTH = 22  # a run id: YYYYmmdd-HHMMSS-xxxxxx
_STATUS_WIDTH = 11  # "complete with errors" wraps to two lines of at most this


def _runs_table(runs: list[RunSummary], where: str, width: int, labels: Mapping[str, str]) -> Table:
    """The listing: per run, its id over its start time and data, one line per model.

    Models appear as their `labels` (`lmmprobe.cli._view.model_labels`: a long spec's model
    name, the legend below the table gives the spec), as `lmmprobe run` shows them: a served
    model's spec folded into pieces of its URL at 80 columns. Accuracy sits before the model,
    so nothing pushes the figure off the terminal; a long data path folds under the run id.
    """
    rows: list[tuple[str, str, str, str, str]] = []
    sections: list[int] = []
    plain: list[list[str]] = []  # the cells' text, to size the columns
    for r in runs:
        created = datetime.fromisoformat(r.created).timestamp()
        local = time.strftime("%Y-%m-%d %H:%M", time.localtime(created))
        accs = ["-" if r.accuracy.get(m) is None else f"{r.accuracy[m]:.3f}" for m in r.models]
        # Each model with its run's settings: a model and its blind run are told apart.
        setting = f" [{', '.join(r.setting)}]" if r.setting else ""
        models = [f"{labels.get(m, m)}{setting}" for m in r.models] or ["-"]
        accs = accs or ["-"]
        n = "-" if r.n is None else str(r.n)
        status = r.status.replace("_", " ")
        # The run's id, start and data on its first three lines, beside its first models.
        run_lines = [
            f"[bold]{escape(r.id)}[/]",
            f"[dim]{local}[/]",
            f"[dim]{escape(r.data or '-')}[/]",
        ]
        for i in range(max(len(run_lines), len(models))):
            m, acc = (models[i], accs[i]) if i < len(models) else ("", "")
            first = i == 0
            rows.append(
                (
                    run_lines[i] if i < len(run_lines) else "",
                    escape(status) if first else "",
                    n if first else "",
                    acc,
                    escape(m),
                )
            )
            plain.append([r.data or "-", status, n, acc, m])
        sections.append(len(rows) - 1)
    table = Table(title=f"runs in {escape(where)}", box=box.SIMPLE_HEAD, padding=(0, 1))
    names = ("run / created / data", "status", "n", "acc", "model")
    natural = [max([len(names[j]), *(len(p[j]) for p in plain)]) for j in range(5)]
    natural[0] = max(natural[0], _ID_WIDTH)
    overhead = 3 * len(names) + 1  # padding, dividers and edges
    fixed: list[int | None] = [None] * 5
    if sum(natural) + overhead > width:
        # Too wide: the id and status columns take their set widths, the model the rest.
        status_w = min(natural[1], _STATUS_WIDTH)
        figures = status_w + natural[2] + natural[3]
        # The data path gets what the model column does not need, down to the id's width.
        run_w = max(_ID_WIDTH, min(natural[0], width - overhead - figures - natural[4]))
        # The model takes the rest (a short label may need less than 12, and gets no more
        # than the rest: the widths add up to the terminal's).
        model_w = max(min(12, natural[4]), width - overhead - figures - run_w)
        fixed = [run_w, status_w, None, None, model_w]
    for j, name in enumerate(names):
        figure = j in (2, 3)
        table.add_column(
            name,
            justify="right" if figure else "left",
            no_wrap=figure,
            # A figure is never cut silently: too narrow a terminal shows an ellipsis.
            overflow="ellipsis" if figure else "fold",
            width=fixed[j],
        )
    for i, row in enumerate(rows):
        table.add_row(*row, end_section=i in sections)
    return table


def runs(
    ctx: typer.Context,
    db: DbOption = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="table or json.", callback=one_of("format", RunsFormat)
        ),
    ] = "table",
    limit: Annotated[
        int, typer.Option(min=0, help="Show at most N runs, newest first (0: all).")
    ] = 20,
) -> None:
    """List stored runs, newest first: id, data, status, samples and accuracy per model.

    `lmmprobe runs compare RUN_A RUN_B` compares two of them (as `lmmprobe compare`).
    """
    if ctx.invoked_subcommand is not None:
        return
    path = db or DEFAULT_DB
    if not path.exists():  # listing never creates a store
        if fmt == "json":
            print("[]")
        else:
            _console.print(
                f"no runs: {escape(str(path))} does not exist "
                f"({escape(command_for('run', path))} makes it)"
            )
        return
    with open_store(db) as store:
        found, total = list_runs(store, limit or None)
        where = str(store.path)
    if fmt == "json":
        print(json.dumps([asdict(r) for r in found], indent=2))
        return
    if not found:
        _console.print(
            f"no runs in {escape(where)} (start one with {escape(command_for('run', where))})"
        )
        return
    labels = model_labels(list(dict.fromkeys(m for r in found for m in r.models)))
    _console.print(_runs_table(found, where, _console.width, labels))
    for line in legend(labels):
        _console.print(line, markup=False, soft_wrap=True, no_wrap=True)
    for r in found:
        for what in r.unreadable:
            _console.print(
                f"run {r.id}: not shown: {_plain(what, 200)} (damaged, or edited by hand)",
                markup=False,
                soft_wrap=True,
                highlight=False,
            )
    if total > len(found):
        _console.print(f"{total - len(found)} older run(s) not shown; --limit 0 lists all")


# -- comparing ---------------------------------------------------------------------------


def _scored_models(store: Store, run_id: str) -> list[str]:
    return run_models(store.conn, run_id)


def _pick(store: Store, run_a: str, run_b: str, asked: list[str]) -> tuple[str, str]:
    """The model of each side, from `--model` values and what the runs hold."""
    in_a = _scored_models(store, run_a)
    in_b = in_a if run_b == run_a else _scored_models(store, run_b)

    def need(model: str, run: str, have: list[str]) -> str:
        model = redact_spec(model)  # the store records specs so (and a message shows them)
        if model not in have:
            fail(
                f"run {run} has no scores for model {shown_spec(model)!r}; it has: "
                f"{', '.join(map(shown_spec, have)) or 'none'}"
            )
        return model

    if len(asked) > 2:
        fail("give --model once (the same model in both runs) or twice (model A, model B)")
    if run_a == run_b:
        if len(asked) == 2:
            return need(asked[0], run_a, in_a), need(asked[1], run_a, in_a)
        if not asked and len(in_a) == 2:
            return in_a[0], in_a[1]
        # Thinking on and off of one checkpoint among other models: that pair, when it is the
        # only one.
        pair = None if asked else checkpoint_pair(in_a, in_a)
        if pair is not None:
            return pair
        if len(in_a) == 1 and not asked:
            # `compare latest` of a one-model run (an import): "name two of its models" named
            # one, and no way on.
            fail(
                f"run {run_a} holds one model ({shown_spec(in_a[0])}), and comparing within a "
                "run needs two (name two of its models with --model A --model B): `lmmprobe "
                "compare RUN_A RUN_B` compares it with another run (`lmmprobe runs` lists them)"
            )
        fail(
            f"comparing within run {run_a}: name two of its models with --model A --model B "
            f"(it has: {', '.join(map(shown_spec, in_a)) or 'none'})"
        )
    if len(asked) == 2:
        return need(asked[0], run_a, in_a), need(asked[1], run_b, in_b)
    if len(asked) == 1:
        # One spec named, held by one run only: the other run's one spec of its checkpoint
        # (``hf:x`` against ``hf:x,chat_template_kwargs=enable_thinking:false``).
        (one,) = asked
        if (one in in_a) != (one in in_b):
            other = in_b if one in in_a else in_a
            kin = [m for m in other if checkpoint(m) == checkpoint(one)]
            if len(kin) == 1:
                return (one, kin[0]) if one in in_a else (kin[0], one)
        return need(one, run_a, in_a), need(one, run_b, in_b)
    shared = [m for m in in_a if m in in_b]
    if len(shared) == 1:
        return shared[0], shared[0]
    if not shared and len(in_a) == 1 and len(in_b) == 1:
        return in_a[0], in_b[0]
    pair = None if shared else checkpoint_pair(in_a, in_b)
    if pair is not None:
        return pair
    fail(
        f"name the model to compare with --model (run {run_a} has: {', '.join(map(shown_spec, in_a)) or 'none'}; "
        f"run {run_b} has: {', '.join(map(shown_spec, in_b)) or 'none'})"
    )


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def _judge_pairs(
    db: Any,
    side_a: tuple[str, str],
    side_b: tuple[str, str],
    spec: str,
    meter: CostMeter,
    *,
    quiet: bool,
) -> dict[str, Any]:
    """A judge compares the two sides' answers (`lmmprobe.judge.compare`); its summary.

    The store is opened for writing here (the judge's replies are stored like answers);
    unless `quiet`, the summary is printed. `meter` (`judge_meter`) counts what the calls
    cost and stops them at ``--max-cost``; a stop is said on stderr, and the command exits
    `EXIT_STOPPED_BUDGET` once its report is printed (`_stopped_by_budget`).
    """
    from lmmprobe.judge.compare import judge_pairs
    from lmmprobe.judge.step import PAIRS_AGAIN
    from lmmprobe.models.base import load_model
    from lmmprobe.parse.thinking import tags_for_model
    from lmmprobe.registry import RegistryError
    from lmmprobe.run import RunAborted

    try:
        tags_for_model(spec)  # a think= value that cannot be read: before any call
    except ValueError as exc:
        fail(f"--judge {shown_spec(spec)}: {exc}")
    try:
        judge_model = load_model(spec)
        with Store(db) as store:
            found = judge_pairs(store, side_a, side_b, spec, judge_model, meter=meter)
            summary = found.summary()
    except RunAborted as exc:
        fail(
            f"{stopped_text(exc)}; the same command asks again (stored judge replies are reused)",
            code=1,
        )
    except (RegistryError, ValueError) as exc:
        fail(exc)
    calls = summary["calls"] or {}
    spending, stop = judge_budget_lines(meter, calls.get("called", 0), found.unsent)
    if spending:  # dollars this command spent on the judge (priced, or under a budget)
        summary["spent"] = meter.spent
    if not quiet:
        for line in pairwise_lines(summary) + spending:
            _console.print(line, markup=False, soft_wrap=True)
    if stop is not None:
        err_console.print(stop, markup=False, soft_wrap=True)
    if summary.get("nothing_read"):
        # A judge that read nothing (a misspelt model, a model that cannot follow the
        # protocol) judged no pair: exit 0 would pass a check that compared nothing.
        fail(f"judge {shown_spec(spec)}: {summary['nothing_read']}; {PAIRS_AGAIN}", code=1)
    return summary


def _unjudged_why(reasons: dict[str, int]) -> str:
    """`` (2 failed calls: ...; 1 unreadable reply: ...)``: unjudged pairs by why, counted.

    A failed call is asked again by the same command; an unreadable or cut-off reply is
    stored and read again, never asked again: the two are told apart, as what to do differs.
    """
    kinds: dict[str, int] = {}
    for reason, n in reasons.items():
        if "judge error budget" in reason:
            kind = "call(s) left unsent by --max-cost: asked again by the same command"
        elif "judge error" in reason or "no reply" in reason:
            kind = "failed call(s): asked again by the same command"
        elif "truncated" in reason:
            kind = "reply(ies) cut off before the verdict: stored, not asked again"
        else:
            kind = "unreadable reply(ies): stored, not asked again"
        kinds[kind] = kinds.get(kind, 0) + n
    return f" ({'; '.join(f'{n} {kind}' for kind, n in kinds.items())})" if kinds else ""


def pairwise_lines(s: dict[str, Any]) -> list[str]:
    """What the terminal says about a pairwise judging of two sides."""
    a, b = s["a"], s["b"]
    consistency = s["position_consistency"]
    lines = [
        f"judge {shown_spec(s['judge'])} ({s['protocol']} v{s['version']}, both orders, a flip "
        f"is a tie): {s['pairs']} pairs",
        f"  A {a['model']} (run {a['run']}): {s['a_wins']} wins, {s['b_wins']} losses, "
        f"{s['ties']} ties",
        f"  B {b['model']} (run {b['run']}): {s['b_wins']} wins, {s['a_wins']} losses, "
        f"{s['ties']} ties",
        f"  unjudged: {s['unjudged']}{_unjudged_why(s.get('unjudged_reasons') or {})}",
        "  position consistency: "
        + (
            f"{consistency:.3f} ({s['flips']} flipped with the order)"
            if consistency is not None
            else "-"
        ),
    ]
    if s["left_out"]:
        lines.append(
            "  left out: " + ", ".join(f"{n} {why}" for why, n in sorted(s["left_out"].items()))
        )
    c = s["calls"]
    if c is not None:
        shared = ""
        if c["requests"] < 2 * s["pairs"]:
            # 360 pairs and 372 requests read as calls gone missing: a pair's two orders are
            # one prompt when its answers read alike, and one prompt is asked once.
            shared = (
                f" for {s['pairs']} pairs in two orders (identical judge prompts, such as a "
                "pair of answers alike, share one request and its reply)"
            )
        lines.append(
            f"  judge calls: {c['requests']} requests, {c['cached']} from the store, "
            f"{c['called']} sent, {c['errors']} errors{shared}"
        )
    return lines


def _print_comparison(c: Comparison, apart: tuple[list[str], list[str]]) -> None:
    same_run = c.run_a == c.run_b
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold", no_wrap=True)
    head.add_column(overflow="fold")
    for side, run, model, words in (
        ("A", c.run_a, c.model_a, apart[0]),
        ("B", c.run_b, c.model_b, apart[1]),
    ):
        label = model if same_run else f"{model}  (run {run})"
        if words:
            label += f"  [{', '.join(words)}]"
        head.add_row(side, escape(label))
    if same_run:
        head.add_row("run", escape(c.run_a))
    head.add_row(
        "paired",
        f"{c.n} answer{'' if c.n == 1 else 's'} on {c.samples} sample{'' if c.samples == 1 else 's'}",
    )
    head.add_row("accuracy", f"A {_fmt(c.accuracy_a)}   B {_fmt(c.accuracy_b)}")
    pct = round(c.level * 100)
    head.add_row(
        "A - B",
        f"{_fmt(c.difference, '+.3f')}  [{pct}% CI {_fmt(c.low, '+.3f')}, {_fmt(c.high, '+.3f')}]",
    )
    head.add_row("", f"[dim]paired bootstrap over samples, {c.n_boot} resamples, seed {c.seed}[/]")
    p = "-" if c.mcnemar_p is None else f"p = {c.mcnemar_p:.3g}"
    head.add_row(
        "McNemar",
        f"{p} (exact); only A right: {c.a_only_correct}, only B right: {c.b_only_correct}",
    )
    head.add_row("", f"[dim]both right: {c.both_correct}, both wrong: {c.both_wrong}[/]")
    head.add_row(
        "agreement",
        f"{_fmt(c.agreement)} same verdict, {_fmt(c.same_answer)} same answer",
    )
    if c.left_out:
        head.add_row("left out", _left_out_words(c.left_out))
    if c.same_data is False:
        head.add_row("note", "the runs used different data (fingerprints differ)")
    _console.print(head)
    if not c.differ_total:
        _console.print("\nno paired answer differs in its verdict")
        return
    shown = len(c.differ)
    title = f"{c.differ_total} answer{'' if c.differ_total == 1 else 's'} differ" + (
        f" (first {shown}; --limit N for more)" if shown < c.differ_total else ""
    )
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1), title_justify="left")
    table.add_column("sample", overflow="fold", ratio=2)
    if any(d.repeat for d in c.differ):
        table.add_column("rep", justify="right", no_wrap=True)
    table.add_column("gold", overflow="fold", ratio=2)
    table.add_column("A", overflow="fold", ratio=3)
    table.add_column("B", overflow="fold", ratio=3)
    ok, bad = "[green]✓[/]", "[red]✗[/]"
    for d in c.differ:
        rep = [str(d.repeat)] if len(table.columns) == 5 else []
        table.add_row(
            escape(_plain(d.sample_id)),
            *rep,
            escape(_plain(d.gold, 30)),
            f"{ok if d.a_correct else bad} {escape(_plain(d.a, 30))}",
            f"{bad if d.a_correct else ok} {escape(_plain(d.b, 30))}",
        )
    _console.print()
    _console.print(table)


def _audit(
    store: Store,
    side_a: tuple[str, str],
    side_b: tuple[str, str],
    n_boot: int,
    seed: int,
    limit: int,
    fmt: str,
) -> None:
    try:
        same_run = side_a[0] == side_b[0]
        # Long specs by their short labels (the legend gives them whole), as `run` shows them:
        # the spec in the column header was folded into pieces of its URL at 80 columns.
        # JSON keeps the specs whole.
        short = (
            model_labels([side_a[1], side_b[1]])
            if fmt != "json"
            else {side_a[1]: side_a[1], side_b[1]: side_b[1]}
        )
        labels = {
            i: short[model] if same_run else f"{short[model]} (run {run})"
            for i, (run, model) in enumerate((side_a, side_b))
        }
        # The predictions layer is loaded only by --audit: every command loads this module.
        from lmmprobe.predictions.verdicts import audit_runs

        result = audit_runs(store, (side_a, side_b), labels=labels, n_boot=n_boot, seed=seed)
    except (ImportError, ValueError) as exc:
        fail(exc)
    if result.n == 0:
        fail(
            f"{side_a[1]} (run {side_a[0]}) and {side_b[1]} (run {side_b[0]}) share no answer "
            "with a verdict; audit runs on the same data"
        )
    if fmt == "json":
        print(audit_document(result))
        return
    print_audit(result, limit=limit, legend=legend(short))


_LEFT_OUT = {
    "error": "with an error",
    "no_verdict": "without a right/wrong verdict",
    "gold_differs": "with a different gold answer",
    "only_a": "only in A",
    "only_b": "only in B",
}
"""Why answers were left out of a comparison, in words (the counts' keys are code's)."""


def _left_out_words(left_out: Mapping[str, int]) -> str:
    """``456 only in A, 360 only in B``: the left-out counts as the table and errors say them."""
    return ", ".join(f"{v} {_LEFT_OUT.get(k, k)}" for k, v in left_out.items())


def compare(
    run_a: Annotated[
        str,
        typer.Argument(
            metavar="RUN_A", help="Run id, unique prefix, 'latest', or the run's folder."
        ),
    ],
    run_b: Annotated[
        str | None,
        typer.Argument(
            metavar="[RUN_B]", help="Second run; leave out to compare two models of RUN_A."
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="Model to compare: once (the same model in both runs) or twice (A's, then B's).",
        ),
    ] = None,
    limit: Annotated[int, typer.Option(min=0, help="List at most N differing answers.")] = 20,
    n_boot: Annotated[
        int,
        typer.Option(
            "--bootstrap", min=1, max=MAX_BOOTSTRAP, help="Bootstrap resamples for the interval."
        ),
    ] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    fmt: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="table or json.", callback=one_of("format", RunsFormat)
        ),
    ] = "table",
    audit: Annotated[
        bool,
        typer.Option(
            "--audit",
            help="Explain the gap: every item whose official verdict differs, by cause "
            "(different answer, gold, random fallback, extraction, normalization), with each "
            "cause's share of the gap (verdicts by the benchmark's official reading).",
        ),
    ] = False,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            metavar="SPEC",
            help="A judge model compares the two sides' answers to each sample (lmmprobe-"
            "pairwise: both orders, a flip is a tie) and the wins, losses, ties and position "
            "consistency are reported; its replies are stored in --db like answers.",
        ),
    ] = None,
    db: DbOption = None,
    prices: PricesOption = None,
    max_cost: MaxCostOption = None,
) -> None:
    """Compare two runs (or two models of one run) on the samples both scored.

    Prints the accuracy difference with a paired bootstrap 95% CI, McNemar's exact test,
    agreement, and the answers where one side is right and the other wrong. With --audit, the
    items whose verdicts differ, grouped by cause, adding up to the gap. With --judge, a
    judge model compares the answers pairwise first; --prices and --max-cost price and bound
    its calls as in `lmmprobe judge`.
    """
    meter = None
    if judge is None and (prices is not None or max_cost is not None):
        fail("--prices and --max-cost price the judge's calls: give --judge SPEC")
    if judge is not None:
        try:  # before anything is read or asked, as `run` and `judge` read them
            meter = judge_meter(judge, prices, max_cost)
        except ValueError as exc:
            fail(exc)
    if not (db or DEFAULT_DB).exists():
        fail(f"no store at {db or DEFAULT_DB}: pass the --db that `lmmprobe run` used")
    with open_store(db) as store:
        try:
            a = store.resolve_run(run_a)
            b = a if run_b is None else store.resolve_run(run_b)
        except KeyError as exc:
            fail(str(exc.args[0]))
        model_a, model_b = _pick(store, a, b, list(model or []))
        if a == b and model_a == model_b:
            fail(f"both sides are model {model_a!r} of run {a}: name two different models or runs")
        if judge is not None and audit:
            fail("--judge and --audit are separate reports: give one of them")
        if audit:
            _audit(store, (a, model_a), (b, model_b), n_boot, seed, limit, fmt)
            return
        try:
            result = compare_runs(
                store, a, model_a, b, model_b, n_boot=n_boot, seed=seed, limit=limit
            )
        except ImportError as exc:
            fail(exc)
        run_spec_a, run_spec_b = read_run(store.conn, a), read_run(store.conn, b)
    apart = sides_apart(
        model_a,
        model_b,
        run_spec_a.spec if run_spec_a else None,
        run_spec_b.spec if run_spec_b else None,
    )
    judged = (
        _judge_pairs(db, (a, model_a), (b, model_b), judge, meter, quiet=fmt == "json")
        if judge is not None and meter is not None
        else None
    )
    if judged is not None and result.n == 0:
        # Open-ended answers have no right/wrong verdict to compare: the judge's is the report.
        if fmt == "json":
            print(json.dumps({"judge": judged}, indent=2))
        _stopped_by_budget(judged)
        return
    if result.n == 0:
        why = _left_out_words(result.left_out) or "no scores"
        fail(
            f"{model_a} (run {a}) and {model_b} (run {b}) share no answer scored right or wrong "
            f"({why}); compare runs on the same data"
        )
    if fmt == "json":
        doc = asdict(result)
        doc["setting_a"], doc["setting_b"] = apart
        if judged is not None:
            doc["judge"] = judged
        print(json.dumps(doc, indent=2))
    else:
        _print_comparison(result, apart)
    _stopped_by_budget(judged)


def _stopped_by_budget(judged: dict[str, Any] | None) -> None:
    """Exit `EXIT_STOPPED_BUDGET` when ``--max-cost`` left judge calls unsent, as `run` does.

    A CI job that asked for every pair judged must see that some were not; the same command
    asks them again.
    """
    if judged is not None and (judged["calls"] or {}).get("unsent"):
        raise typer.Exit(EXIT_STOPPED_BUDGET)


app = typer.Typer(
    add_completion=False,
    help="List stored runs, newest first; `lmmprobe runs compare` compares two.",
)
app.callback(invoke_without_command=True)(runs)
app.command("compare")(compare)
app.command("validity")(validity)
