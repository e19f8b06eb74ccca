"""``lmmprobe runs validity RUN_A RUN_B``: do two runs rank the same models alike (Dysca's validity).

A thin wrapper over `lmmprobe.report.validity.run_validity`: prints each shared model's
value of a run metric and rank on both runs, Spearman's rho and Kendall's tau with their p-values, the
models (and with ``--by``, the groups) left out, and one correlation per group.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated, Any, Literal

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from lmmprobe.cli._common import DbOption, InertConsole, fail, open_store
from lmmprobe.cli.registries import one_of
from lmmprobe.metrics import metric_digits
from lmmprobe.report.validity import Validity, ValidityError, run_validity
from lmmprobe.store import DEFAULT_DB

__all__ = ["validity"]

_console = InertConsole(highlight=False)


def _ranks(scores: dict[str, float], models: list[str]) -> dict[str, int]:
    """Competition ranks (1 = best) among `models`; ties share the better rank."""
    values = sorted((scores[m] for m in models), reverse=True)
    return {m: values.index(scores[m]) + 1 for m in models}


def _value(value: float, digits: int) -> str:
    """A metric value with its metric's decimals (one format per column: 0.000, 0.500)."""
    return "-" if value != value else f"{value:.{digits}f}"


def _stat(value: Any) -> str:
    return "-" if value is None or value != value else f"{float(value):.3f}"  # NaN: '-'


def _plain(value: Any) -> Any:
    """`value` with NaN made None, so the JSON is strict."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _print(v: Validity) -> None:
    ranks_a, ranks_b = _ranks(v.scores_a, v.models), _ranks(v.scores_b, v.models)
    same = v.metric_a == v.metric_b
    title = f"{v.metric_a} and rank" if same else f"{v.metric_a} (A), {v.metric_b} (B) and rank"
    table = Table(box=box.SIMPLE_HEAD, title=escape(f"{title}: {v.run_a} vs {v.run_b}"))
    for head in ("model", f"A {v.run_a}", "rank A", f"B {v.run_b}", "rank B"):
        table.add_column(escape(head), justify="left" if head == "model" else "right")
    digits_a, digits_b = metric_digits(v.metric_a), metric_digits(v.metric_b)
    for m in v.models:
        table.add_row(
            escape(m),
            _value(v.scores_a[m], digits_a),
            str(ranks_a[m]),
            _value(v.scores_b[m], digits_b),
            str(ranks_b[m]),
        )
    _console.print(table)
    r = v.result
    _console.print(
        f"models compared: {r['n']} ({escape(', '.join(v.models))})\n"
        f"Spearman rho = {_stat(r['spearman_rho'])} (p = {_stat(r['spearman_p'])})\n"
        f"Kendall tau = {_stat(r['kendall_tau'])} (p = {_stat(r['kendall_p'])})"
    )
    for side, left in (("A", v.only_a), ("B", v.only_b)):
        if left:
            _console.print(f"left out, scored only on run {side}: {escape(', '.join(left))}")
    if v.by is None:
        return
    groups = Table(box=box.SIMPLE_HEAD, title=f"per {escape(v.by)}")
    for head in ("group", "models", "rho", "p", "tau", "p"):
        groups.add_column(head, justify="left" if head == "group" else "right")
    for g in v.groups:
        if g.result is None:
            groups.add_row(escape(g.group), str(len(g.models)), "-", "-", "-", "-")
            continue
        res = g.result
        groups.add_row(
            escape(g.group),
            str(res["n"]),
            _stat(res["spearman_rho"]),
            _stat(res["spearman_p"]),
            _stat(res["kendall_tau"]),
            _stat(res["kendall_p"]),
        )
    _console.print(groups)
    skipped = [g.group for g in v.groups if g.result is None]
    if skipped:
        _console.print(
            f"no correlation (fewer than 3 models on both runs): {escape(', '.join(skipped))}"
        )
    for side, left in (("A", v.groups_only_a), ("B", v.groups_only_b)):
        if left:
            _console.print(
                f"{escape(v.by)} values only on run {side} (left out): {escape(', '.join(left))}"
            )


def validity(
    run_a: Annotated[
        str,
        typer.Argument(
            metavar="RUN_A", help="Run id, unique prefix, 'latest', or the run's folder."
        ),
    ],
    run_b: Annotated[str, typer.Argument(metavar="RUN_B", help="The run to rank against.")],
    by: Annotated[
        str | None,
        typer.Option(help="Also correlate per value of this metadata key (e.g. subtask)."),
    ] = None,
    metric: Annotated[
        str,
        typer.Option(
            help="Run metric ranking the models (`lmmprobe list metrics`), e.g. a benchmark's "
            "official one."
        ),
    ] = "accuracy",
    metric_b: Annotated[
        str | None,
        typer.Option(help="Run metric ranking RUN_B's models, when not --metric."),
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="table or json.",
            callback=one_of("format", Literal["table", "json"]),
        ),
    ] = "table",
    db: DbOption = None,
) -> None:
    """Rank correlation of the models of two runs (Dysca's validity check).

    Each model's value of a run metric (accuracy by default) on each run; Spearman's rho and
    Kendall's tau (scipy, two-sided p-values) over the models both runs scored. Refuses with
    fewer than 3 shared models.
    """
    if not (db or DEFAULT_DB).exists():
        fail(f"no store at {db or DEFAULT_DB}: pass the --db that `lmmprobe run` used")
    with open_store(db) as store:
        try:
            a, b = store.resolve_run(run_a), store.resolve_run(run_b)
        except KeyError as exc:
            fail(str(exc.args[0]))
        if a == b:
            fail(f"both sides are run {a}: name two different runs")
        try:
            result = run_validity(store, a, b, by=by, metric_a=metric, metric_b=metric_b)
        except (ValidityError, ImportError) as exc:
            fail(exc)
    if fmt == "json":
        print(json.dumps(_plain(asdict(result)), indent=2, allow_nan=False))
        return
    _print(result)
