"""``lmmprobe arena export`` and ``lmmprobe arena judge``: the arena's votes, and a judge's.

``lmmprobe arena export -o battles.jsonl`` writes the arena's votes as a battle file.

The file is JSONL that ``lmmprobe elo`` reads: one vote per line in the order stored, with
``model_a``/``model_b`` in the order shown and ``winner`` ``a``, ``b`` or ``tie`` (a ``both_bad``
vote is a tie, as HEMM and FastChat count ``tie (bothbad)``), plus ``vote`` (the vote cast),
``rater``, ``created_at``, ``run_id``, ``sample_id``, ``repeat``, ``key_a``, ``key_b`` and ``id``.
``lmmprobe elo battles.jsonl`` then prints the numbers of the live leaderboard of
``lmmprobe serve``; ``--run ID`` (repeatable) keeps the votes on those runs' answers, as the
leaderboard scoped to them (``/arena/leaderboard?run=ID``) counts them.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer

from lmmprobe._secrets import shown_spec
from lmmprobe.cli._common import (
    EXIT_STOPPED_BUDGET,
    DbOption,
    MaxCostOption,
    PricesOption,
    console,
    err_console,
    fail,
    judge_budget_lines,
    judge_meter,
    open_store,
    refuse_store_out,
    store_faults_exit,
    write_document,
    write_out_file,
)

app = typer.Typer(
    help="The arena of `lmmprobe serve`: human battles between models' answers.",
    no_args_is_help=True,
)


@app.command("export")
def export(
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="The JSONL file to write (replaced if it exists)."),
    ],
    db: DbOption = None,
    run: Annotated[
        list[str] | None,
        typer.Option(
            "--run",
            "-r",
            help="Only the votes on this run's answers (repeat for several), as the "
            "leaderboard scoped to these runs counts them [default: every vote].",
        ),
    ] = None,
) -> None:
    """Write the arena's votes as JSONL that `lmmprobe elo` reads (tie and both_bad -> tie)."""
    from lmmprobe.store.battles import write_jsonl

    if out.is_dir():
        fail(f"--out {out} is a folder: give a file name such as {out / 'battles.jsonl'}")
    if not out.parent.is_dir():
        fail(f"--out {out}: the folder {out.parent} does not exist")
    runs = sorted(set(run)) if run else None
    with open_store(db) as store:
        if runs is not None:
            known = {r for (r,) in store.conn.execute("SELECT id FROM runs")}
            missing = [r for r in runs if r not in known]
            if missing:
                fail(
                    f"--run {missing[0]}: no such run in {store.path} "
                    f"(`lmmprobe runs --db {shlex.quote(str(store.path))}` lists them)"
                )
        n = write_out_file(out, lambda f: write_jsonl(store, f, runs), db=store.path)
    of = "" if runs is None else f" on run(s) {', '.join(runs)}"
    if n == 0:
        console.print(
            f"No votes{of} in {store.path} yet: wrote 0 votes to {out}; "
            f"vote in `lmmprobe serve`'s arena first, then export again."
        )
        return
    console.print(
        f"Wrote {n} vote(s){of} to {out}; rank them with `lmmprobe elo {shlex.quote(str(out))}`."
    )


def _figure(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


@app.command("judge")
def judge(
    judge_spec: Annotated[
        str,
        typer.Option(
            "--judge",
            metavar="SPEC",
            help="The judge: any model spec lmmprobe runs (openai:MODEL@URL, hf:PATH, vllm:...).",
        ),
    ],
    db: DbOption = None,
    sees_image: Annotated[
        bool,
        typer.Option(
            "--judge-sees-image",
            help="Send each battle's image(s) to the judge with the prompt (the judge must "
            "take images).",
        ),
    ] = False,
    run: Annotated[
        list[str] | None,
        typer.Option("--run", "-r", help="Only the votes on this run's answers (repeatable)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write the judge's verdicts on the judged battles as JSONL that `lmmprobe "
            "elo` reads (winner = the judge's; human, vote, both orders beside it).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the Elo shuffles.")] = 0,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json.")] = "table",
    executor: Annotated[
        str,
        typer.Option(
            help="Where judge calls run: local, or ray / ray:ADDRESS (replicas as Ray actors)."
        ),
    ] = "local",
    replicas: Annotated[
        int | None, typer.Option(min=1, help="Ray: judge replicas [default: 1].")
    ] = None,
    cpus_per_replica: Annotated[  # refused by the executor's rule (NaN too), not min=0
        float | None, typer.Option(help="Ray: CPUs per replica [default: 1].")
    ] = None,
    prices: PricesOption = None,
    max_cost: MaxCostOption = None,
) -> None:
    """A judge votes on the arena's battles (both orders); agreement with the human votes.

    Reports percent agreement and Cohen's kappa between judge and people (tie and both_bad
    are ties, as HEMM counts them), the judge's position consistency, and Spearman's and
    Kendall's rank correlation of the models' judge Elo and human Elo (HEMM's Elo settings).
    Judge replies are stored in the store, so running it again asks only what is missing.
    --prices and --max-cost price and bound the judge's calls as in `lmmprobe judge`.
    """
    import json

    from lmmprobe.judge.arena import judge_battles
    from lmmprobe.judge.step import PAIRS_AGAIN
    from lmmprobe.metrics.elo import EloTooLargeError
    from lmmprobe.models.base import load_model
    from lmmprobe.parse.thinking import tags_for_model
    from lmmprobe.registry import RegistryError
    from lmmprobe.run import RunAborted
    from lmmprobe.store import Store

    if fmt not in ("table", "json"):
        fail(f"--format must be table or json, not {fmt!r}")
    if out is not None:
        if out.is_dir() or not out.parent.is_dir():
            fail(f"--out {out}: give a file in an existing folder")
        refuse_store_out(out, db)  # before the judge is paid, not after
    try:
        tags_for_model(judge_spec)  # a think= value that cannot be read: before any call
        model = load_model(judge_spec)
    except (RegistryError, ValueError, ImportError) as exc:
        fail(f"--judge {shown_spec(judge_spec)}: {exc}")
    try:  # read as `run` and `judge` read them, before any call
        meter = judge_meter(judge_spec, prices, max_cost)
    except ValueError as exc:
        fail(exc)
    from lmmprobe.run.executor import Executor
    from lmmprobe.schema.spec import check_executor, ray_address

    try:
        executor = check_executor(executor)
    except ValueError as exc:
        fail(f"--executor: {exc}")
    ray = None
    if executor != "local":
        from lmmprobe.run.ray_executor import RayExecutor

        try:
            ray = RayExecutor(
                address=ray_address(executor), replicas=replicas, cpus_per_replica=cpus_per_replica
            )
        except ValueError as exc:  # --cpus-per-replica Ray cannot reserve (re-test 13 #4)
            fail(f"--cpus-per-replica: {exc}")
        try:
            ray.connect()
        except (RegistryError, ValueError) as exc:
            fail(f"--executor {executor}: {exc}")
    runner: Executor | None = ray
    try:
        with store_faults_exit(), Store(db) as store:
            runs = sorted(set(run)) if run else None
            if runs is not None:
                known = {r for (r,) in store.conn.execute("SELECT id FROM runs")}
                missing = [r for r in runs if r not in known]
                if missing:
                    fail(f"--run {missing[0]}: no such run in {store.path}")
            try:
                result = judge_battles(
                    store,
                    judge_spec,
                    model,
                    sees_image=sees_image,
                    runs=runs,
                    seed=seed,
                    executor=runner,
                    meter=meter,
                )
            except RunAborted as exc:
                # What was answered is stored: the next `arena judge` asks only the rest.
                fail(f"judge {shown_spec(judge_spec)}: {exc}", code=1)
            except EloTooLargeError as exc:
                fail(f"{store.path}: {exc}; judge the votes of some runs only (--run ID)")
            except ValueError as exc:
                fail(exc)
    finally:
        if ray is not None:
            ray.close()  # a Ray instance it started is shut down
    if not result.battles:
        fail(f"no human votes in {store.path}: vote in `lmmprobe serve`'s arena first")
    if result.nothing_read:
        # A judge that read nothing (a misspelt model, a server not there, a model that cannot
        # follow the protocol) judged no battle: exit 0 would pass a check that compared
        # nothing. Its votes are stored (unjudged), and --out is left as it was.
        fail(f"judge {shown_spec(judge_spec)}: {result.nothing_read}; {PAIRS_AGAIN}", code=1)
    if out is not None:
        judged = result.judged

        def verdicts(f: TextIO) -> int:
            for battle in judged:
                f.write(json.dumps(battle.row(), ensure_ascii=False) + "\n")
            return len(judged)

        write_out_file(out, verdicts, db=store.path)
    summary = result.summary()
    spending, stop = judge_budget_lines(meter, result.called, result.unsent)
    if spending:  # dollars this command spent on the judge (priced, or under a budget)
        summary["spent"] = meter.spent
    if fmt == "json":
        write_document(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", json_text=True)
    else:
        _print_judge_table(result, summary)
        for line in spending:
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    if stop is not None:
        # Not a success: some battles were left unjudged for the budget; the same command
        # asks their calls (stored as budget errors), as `run` and `judge` exit.
        err_console.print(stop, highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(EXIT_STOPPED_BUDGET)


def _print_judge_table(result: Any, summary: dict[str, Any]) -> None:
    from rich import box
    from rich.table import Table

    calls = summary["judge_calls"]
    console.print(
        f"Judge {shown_spec(result.judge)} ({result.protocol} v{result.version}, both orders"
        f"{', with images' if result.sees_image else ''}): {len(result.judged)} of "
        f"{len(result.battles)} battles judged, {result.unjudged} unjudged; "
        f"{calls['called']} judge call(s), {calls['cached']} from the store, "
        f"{calls['errors'] - calls['unsent']} failed"
        + (f", {calls['unsent']} left unsent by --max-cost." if calls["unsent"] else "."),
        highlight=False,
        markup=False,  # the spec's "[redacted]" is text, not a style
        soft_wrap=True,
    )
    table = Table(
        title="Judge vs human votes (tie and both_bad are ties, as HEMM counts them)",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("n", justify="right")
    n = str(len(result.judged))
    table.add_row("percent agreement", _figure(result.percent_agreement), n)
    table.add_row("Cohen's kappa", _figure(result.cohen_kappa), n)
    table.add_row(
        "agreement, decided battles", _figure(result.decided_agreement), str(result.decided)
    )
    table.add_row(
        "position consistency", _figure(result.position_consistency), str(result.consistency_n)
    )
    corr = result.correlation
    models = str(corr["n"]) if corr else "-"
    table.add_row(
        "Spearman rho (judge Elo, human Elo)", _figure(corr and corr["spearman_rho"]), models
    )
    table.add_row(
        "Kendall tau (judge Elo, human Elo)", _figure(corr and corr["kendall_tau"]), models
    )
    console.print(table)
    if result.correlation_note:
        console.print(f"Rank correlation: {result.correlation_note}", highlight=False)
    elo = Table(
        title="Elo (HEMM: K=4, start 1000, median of 1,000 shuffles), same battles",
        box=box.SIMPLE_HEAD,
    )
    for column in ("model", "human Elo", "judge Elo"):
        elo.add_column(column, justify="left" if column == "model" else "right")
    for model, pair in summary["elo"].items():
        elo.add_row(model, _figure(pair["human"], 1), _figure(pair["judge"], 1))
    console.print(elo)
