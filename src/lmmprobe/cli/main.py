"""The ``lmmprobe`` command: thin typer wrappers over the Python API."""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape

from lmmprobe._inert import inert
from lmmprobe._secrets import shown_spec
from lmmprobe.cli._common import (
    EXIT_STOPPED_BUDGET,
    DbOption,
    DryRunOption,
    HelpStyleGroup,
    MaxCostOption,
    ModelsOption,
    PricesOption,
    StdoutDocument,
    console,
    err_console,
    error_text,
    fail_each,
    open_store,
    parse_max_cost,
    price_table,
    stopped_text,
    store_faults_exit,
    write_out_file,
)
from lmmprobe.cli._common import fail as _fail
from lmmprobe.cli.judge import (
    JudgeOption,
    JudgePromptOption,
    JudgeProtocolOption,
    JudgeScaleOption,
    JudgeSeesImageOption,
    JudgeWhenOption,
    judge_config,
)
from lmmprobe.cli.registries import choices, names, one_of, registered
from lmmprobe.formulate import PROMPT_STYLES
from lmmprobe.parse import MATCHERS
from lmmprobe.registry import RegistryError
from lmmprobe.schema.spec import MAX_BOOTSTRAP, InferenceMethod, MarkChoice, check_executor

# What only a command's body uses is imported there, not here: `lmmprobe --help`, `lmmprobe
# data list` and every other command start without the runner, the report, the store's export
# or the data loaders (tests/cli/test_startup_imports.py).
if TYPE_CHECKING:
    from lmmprobe.api import Evaluation
    from lmmprobe.judge.dry_run import PlannedJudge
    from lmmprobe.report import Results
    from lmmprobe.run import ProgressSink
    from lmmprobe.schema import JudgeConfig, RunSpec


class _Lmmprobe(HelpStyleGroup):
    """The ``lmmprobe`` group: the commands of this module, then those of their own modules."""

    # Sub-commands that live in their own modules (one owner each), imported and built only
    # when used, so that `lmmprobe run` does not pay for modules it never uses; in the order
    # `lmmprobe --help` lists them.
    lazy = {
        "report": "lmmprobe.cli.report:report",
        "apex": "lmmprobe.cli.apex:apex",
        "elo": "lmmprobe.cli.holistic:elo",
        "score": "lmmprobe.cli.score:score",
        "import": "lmmprobe.cli.imports:import_predictions",
        "list": "lmmprobe.cli.registries:list_entries",
        "compare": "lmmprobe.cli.runs:compare",
        "serve": "lmmprobe.cli.serve:serve",
        "synth": "lmmprobe.cli.synth:app",
        "runs": "lmmprobe.cli.runs:app",
        "data": "lmmprobe.cli.data:app",
        "arena": "lmmprobe.cli.arena:app",
    }


app = typer.Typer(
    # One help style for every command (`lmmprobe.cli._common.style_help`): click's plain
    # layout, which wraps under a long option name where rich's panels cropped at 80 columns.
    # `_load` in `HelpStyleGroup` builds the lazy commands with the same settings.
    rich_markup_mode=None,
    cls=_Lmmprobe,
    add_completion=False,
    no_args_is_help=True,
    help="Measure what large multimodal models can and cannot do.",
)


def _print_version(value: bool) -> None:
    if value:
        from lmmprobe._version import __version__

        console.print(f"lmmprobe {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _app(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Measure what large multimodal models can and cannot do (``--version``: the version)."""


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for item in values or [] for v in item.split(",") if v.strip()]


def _executor_option(value: str) -> str:
    try:
        return check_executor(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc


@app.command()
def run(
    model: ModelsOption = None,
    data: Annotated[
        str,
        typer.Option(
            "--data",
            "-d",
            help="Data: PATH.jsonl, demo, demo,n=500, or a benchmark by name: mmbench, textvqa,split=validation, hemm (lmmprobe data list).",
        ),
    ] = "demo",
    limit: Annotated[int | None, typer.Option(min=1, help="Use at most N samples.")] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Ask each sample K times.")] = 1,
    frames: Annotated[
        str | None,
        typer.Option(
            help="Frame policy for videos: N (N frames, evenly spread), fps=F or "
            "fps=F,max_frames=M; over each video's own [default: its own, else 8 frames]. "
            "Several (8,16,32 or fps=1;fps=2; at most 16): each sample asked under each, "
            "accuracy per policy and frame_sensitivity reported.",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for every random choice.")] = 0,
    by: Annotated[
        list[str] | None, typer.Option(help="Break down by metadata keys: --by subtask,scenario.")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Folder for results.json and results.md [default: RUN_ID beside the store: "
            "./lmmprobe-runs/RUN_ID, or DIR/RUN_ID with --db DIR/NAME.db]."
        ),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail on the first invalid sample.")
    ] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Call the model even for stored responses.")
    ] = False,
    method: Annotated[
        str,
        typer.Option(
            help=f"Inference method: {choices(InferenceMethod)}. likelihood needs a white-box "
            "backend, mark_logprob an API with logprobs.",
            callback=one_of("inference method", InferenceMethod),
        ),
    ] = "generate",
    marks: Annotated[
        str,
        typer.Option(
            help=f"Option marks: {choices(MarkChoice)} (random: a seeded style per request).",
            callback=one_of("mark style", MarkChoice),
        ),
    ] = "upper",
    instruction_pool: Annotated[
        bool,
        typer.Option(
            "--instruction-pool", help="Rotate through the instruction pool across repeats."
        ),
    ] = False,
    in_context_example: Annotated[
        bool, typer.Option("--in-context-example", help="Prepend ReForm-Eval's example turn.")
    ] = False,
    response_prefix: Annotated[
        str | None, typer.Option(help="Text the answer starts with, e.g. 'The answer is'.")
    ] = None,
    matcher: Annotated[
        str | None,
        typer.Option(
            help=f"Answer reading: {names(MATCHERS)} (see `lmmprobe list matchers`) "
            "[default: the benchmark's official reading where it has one (dysca), else lmmprobe].",
            callback=registered(MATCHERS, optional=True),
        ),
    ] = None,
    prompt_style: Annotated[
        str,
        typer.Option(
            help=f"Prompt wording for choice questions: {names(PROMPT_STYLES)} (see `lmmprobe "
            "list prompt-styles`; auto: each sample's own, dysca for synthetic samples).",
            callback=registered(PROMPT_STYLES),
        ),
    ] = "auto",
    blind: Annotated[
        bool, typer.Option("--blind", help="Ask without the images (Dysca's blind setting).")
    ] = False,
    circular: Annotated[
        bool,
        typer.Option("--circular", help="CircularEval: ask once per rotation of the options."),
    ] = False,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Generation length limit.")] = 32,
    temperature: Annotated[float, typer.Option(min=0.0, help="0 = greedy.")] = 0.0,
    bootstrap: Annotated[
        int, typer.Option(min=0, max=MAX_BOOTSTRAP, help="Bootstrap resamples for CIs.")
    ] = 1000,
    db: DbOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    executor: Annotated[
        str,
        typer.Option(
            help="Where requests run: local, or ray[:ADDRESS] for model replicas on Ray (ray: a "
            "local instance or $RAY_ADDRESS; ray:auto: this machine's cluster; ray:HOST:PORT; "
            "ray://HOST:PORT). See docs/distributed.md.",
            callback=_executor_option,
        ),
    ] = "local",
    replicas: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Ray: replicas per model [default: one per GPU when replicas use GPUs, else 1].",
        ),
    ] = None,
    # No min=0 on the two resources: typer's range check said NaN was not "greater than or
    # equal to 0"; the run spec refuses NaN, infinity and a negative value in one rule
    # (`check_ray_resource`: "a finite number, 0 or more"), naming the option.
    gpus_per_replica: Annotated[
        float | None,
        typer.Option(
            help="Ray: GPUs per replica [default: 1 for hf: when there are GPUs, else 0]."
        ),
    ] = None,
    cpus_per_replica: Annotated[
        float | None, typer.Option(help="Ray: CPUs per replica [default: 1].")
    ] = None,
    prices: PricesOption = None,
    max_cost: MaxCostOption = None,
    judge: JudgeOption = None,
    judge_protocol: JudgeProtocolOption = None,
    judge_when: JudgeWhenOption = None,
    judge_sees_image: JudgeSeesImageOption = False,
    judge_prompt: JudgePromptOption = None,
    judge_scale: JudgeScaleOption = "binary",
    dry_run: DryRunOption = False,
) -> None:
    """Evaluate models on a data source; with no options, the baselines on the demo data."""
    from lmmprobe.data.benchmarks._describe import benchmark_matchers, official_matcher
    from lmmprobe.models.base import split_model_specs
    from lmmprobe.schema import FormulateConfig, GenerationParams, RunSpec

    # A benchmark whose official figures rest on its own reading of the answers (Dysca's) is
    # read that way unless --matcher says otherwise; a set's rows each by their own benchmark's.
    reading = matcher or official_matcher(data) or "lmmprobe"
    try:
        spec = RunSpec(
            models=split_model_specs(model or []) or ["random", "first"],
            data=data,
            limit=limit,
            repeats=repeats,
            frames=frames,
            seed=seed,
            by=_split(by),
            out=str(out) if out else None,
            strict=strict,
            no_cache=no_cache,
            db=str(db) if db else None,
            bootstrap=bootstrap,
            formulate=FormulateConfig.model_validate(
                {
                    "method": method,
                    "option_marks": marks,
                    "instruction_pool": instruction_pool,
                    "in_context_example": in_context_example,
                    "response_prefix": response_prefix,
                    "circular": circular,
                    "matcher": reading,
                    "matchers": benchmark_matchers(data) if reading == "benchmark" else {},
                    "blind": blind,
                    "prompt_style": prompt_style,
                }
            ),
            gen=GenerationParams(max_new_tokens=max_new_tokens, temperature=temperature),
            executor=executor,
            replicas=replicas,
            gpus_per_replica=gpus_per_replica,
            cpus_per_replica=cpus_per_replica,
            prices=price_table(prices),
            max_cost=parse_max_cost(max_cost),
            judge=judge_config(
                judge,
                judge_protocol,
                judge_when,
                judge_sees_image,
                judge_prompt,
                judge_scale,
                keys=not dry_run,
            ),
        )
    except ValueError as exc:  # a pydantic ValidationError among them: one line per option
        _fail(exc)
    if dry_run:
        _dry_run(spec)
        return
    _evaluate_and_show(spec, quiet=quiet)


@app.command("judge")
def judge_command(
    run_ref: Annotated[
        str,
        typer.Argument(
            metavar="RUN", help="The run to judge: run id, unique prefix, 'latest', or its folder."
        ),
    ],
    judge: JudgeOption = None,
    judge_protocol: JudgeProtocolOption = None,
    judge_when: JudgeWhenOption = None,
    judge_sees_image: JudgeSeesImageOption = False,
    judge_prompt: JudgePromptOption = None,
    judge_scale: JudgeScaleOption = "binary",
    db: DbOption = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Output folder [default: beside the store, the new run's id]."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    prices: PricesOption = None,
    max_cost: MaxCostOption = None,
    dry_run: DryRunOption = False,
) -> None:
    """Judge a stored run's answers (no model is asked again): the run's spec plus --judge.

    --prices adds to the run's price table, --max-cost replaces its budget.
    """
    if not judge:
        _fail("lmmprobe judge: give at least one --judge SPEC")
    with open_store(Path(db) if db else None) as store:
        try:
            run_id = store.resolve_run(run_ref)
            stored = store.get_run(run_id)
        except KeyError as exc:
            _fail(str(exc.args[0]) if exc.args else str(exc))
        where = store.path
    try:
        config = judge_config(
            judge,
            judge_protocol,
            judge_when,
            judge_sees_image,
            judge_prompt,
            judge_scale,
            keys=not dry_run,
        )
        assert config is not None  # --judge is required above
        # A --max-cost given here replaces the run's budget ('none' switches it off); it
        # bounds the judges' calls alone, as the stored answers cost nothing now.
        budget = stored["spec"].get("max_cost") if max_cost is None else parse_max_cost(max_cost)
        table = price_table(prices)
        # The run is judged from the store as it was recorded (`judge_stored`): its samples and
        # answers, never its data file again (rewritten or moved since, it changes nothing).
        from lmmprobe.judge.stored import judged_spec

        spec = judged_spec(stored["spec"], config, db=where, out=out, prices=table, max_cost=budget)
    except (RegistryError, ValueError) as exc:  # a protocol, a template, a price
        kept = stored["spec"].get("max_cost")
        if max_cost is None and kept is not None and "--max-cost" in str(exc):
            # The budget is the run's own, not typed here: say where it comes from.
            _fail(
                f"{exc} (this --max-cost, ${kept:g}, is run {run_id}'s, which judging it "
                "keeps unless given one: --max-cost none switches it off)"
            )
        _fail(exc)
    if dry_run:
        _judge_dry_run(run_id, config, where, table, budget)
        return
    console.print(
        f"judging run {run_id}: its answers come from the store; the judged results are "
        "recorded as a new run",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    from lmmprobe.api import judge_stored

    def stored_run(progress: ProgressSink | None) -> Evaluation:
        return judge_stored(
            run_id, config, db=where, out=out, prices=table, max_cost=budget,
            progress=progress,
        )  # fmt: skip

    _evaluate_and_show(spec, quiet=quiet, evaluation=stored_run, judged_from=run_id)


def _judge_dry_run(
    run_id: str, config: JudgeConfig, db: Path, prices: dict[str, Any], budget: float | None
) -> None:
    """Print what judging stored run `run_id` would send, and send nothing."""
    from lmmprobe.data import DataError
    from lmmprobe.judge.dry_run import plan_stored_judges

    try:
        plan = plan_stored_judges(run_id, config, db=db, prices=prices, max_cost=budget)
    except (RegistryError, DataError, ValueError) as exc:
        _fail(exc)
    read = ", ".join(f"{n} of {m}" for m, n in plan.answers.items())
    console.print(
        f"run {plan.run}: its answers are read from the store ({read}); no model is asked",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    calls, most = _print_judge_plan(plan.judges)
    bounds = [j.completion_cost_bound for j in plan.judges]
    priced = [b for b in bounds if b is not None]
    cost = ""
    if priced:
        whose = "" if len(priced) == len(bounds) else " of the priced judges"
        cost = (
            f" (completions{whose} cost at most ${sum(priced):.4f}"
            f"{_judge_prompts_note(plan.judges, sum(priced))})"
        )
    console.print(
        f"dry run: {most}{calls} judge call(s) would be sent{cost}; nothing was sent and no "
        "run was recorded",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def _evaluate_and_show(
    spec: RunSpec,
    *,
    quiet: bool,
    evaluation: Callable[[ProgressSink | None], Evaluation] | None = None,
    judged_from: str | None = None,
) -> None:
    """Run `spec` (answers the store holds are not asked again) and print its results.

    `evaluation` replaces ``evaluate(spec)``: stored run `judged_from` judged from the store.
    """
    # Imported here: the runner and the report load only for the commands that use them.
    from lmmprobe.api import evaluate
    from lmmprobe.cli._view import (
        all_failed,
        budget_limits,
        budget_requests,
        cost_lines,
        error_lines,
        failures,
        missing_by_keys,
        print_results,
        truncated_tokens,
    )
    from lmmprobe.cli.judge import judge_lines, judged_headline_lines
    from lmmprobe.data import DataError
    from lmmprobe.report.results import row_counts
    from lmmprobe.run import InputErrors, RichProgress, RunAborted

    progress = None if quiet or not sys.stderr.isatty() else RichProgress(err_console)
    try:
        ev = evaluate(spec, progress=progress) if evaluation is None else evaluation(progress)
    except InputErrors as exc:  # a wrong model and wrong data, say: each on its own line
        fail_each(exc.problems)
    except RunAborted as exc:
        # Not bad input: the run stopped on the way (a dead server, a refused key, a backend
        # failing again and again). Everything answered is stored; say how to go on.
        where = f" (run {exc.run_id}, status {exc.status})" if exc.run_id else ""
        _fail(f"{stopped_text(exc)}{where}; the same command resumes it", code=1)
    except KeyboardInterrupt as exc:
        # Ctrl-C: typer would end with status 130 and not a word, leaving a user to wonder
        # whether the answers paid for are lost. They are stored; say so and how to go on.
        run_id = getattr(exc, "run_id", None)
        where = f"run {run_id} is marked interrupted; " if run_id else ""
        err_console.print(
            f"interrupted: {escape(where)}every answer received is stored, and the same "
            "command resumes (stored answers are not asked again)",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    except (RegistryError, DataError, ValueError) as exc:
        _fail(exc)
    res = ev.results
    if res.data.invalid:
        err_console.print(
            f"[yellow]skipped {res.data.invalid} invalid row(s); first {len(res.data.problems)}:[/]"
        )
        for p in res.data.problems:
            # Soft wrap keeps each file:line: field message on one searchable line.
            err_console.print(f"  {p}", highlight=False, markup=False, soft_wrap=True)
    for key, present in missing_by_keys(res, _row_metadata(res)):
        have = ", ".join(present) if present else "none (the rows carry no metadata)"
        err_console.print(
            f"[yellow]warning:[/] --by {escape(key)}: no row has the metadata key "
            f'{escape(repr(key))}, so every row is under "(missing)"; metadata keys here: '
            f"{escape(have)}",
            highlight=False,
            soft_wrap=True,
        )
    with open_store(Path(res.store)) as store:
        failed = failures(store, res)
        stopped = truncated_tokens(store, res)
    labels = print_results(console, res, stopped)
    for m, r in res.models.items():
        s = r.stats
        # Rows that share a prompt (repeats at temperature 0, duplicate samples) share one
        # request: said, so that the table's rows and the requests sent add up.
        n_rows = row_counts(r.metrics, r.counts)[0]
        # Said after the counts, so the line still reads ``N requests, N from the store, ...``
        # for a script or a search.
        shared = (
            f" ({n_rows} rows: rows with the same prompt are asked once and share its answer)"
            if s.requests < n_rows
            else ""
        )
        # Requests a backend's own budget refused never reached its server: counted apart
        # from those sent, naming the option that refused them.
        refused = ""
        if s.refused:
            by = [n for n in budget_limits(failed.get(m, [])) if n != "--max-cost"]
            refused = f", {s.refused} refused by {' or '.join(by) or 'its budget'} (not sent)"
        if s.not_sent:
            # Refused for what they hold (images over what a request may carry), unsent too.
            refused += f", {s.not_sent} refused before sending (unsupported_input)"
        console.print(
            f"{labels[m]}: {s.requests} requests, {s.cached} from the store, "
            f"{s.called} sent{refused}, {s.errors} errors{shared}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        for line in judge_lines(r.judge) + judged_headline_lines(r):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        for line in error_lines(failed.get(m, [])):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    if ev.outcome.reused_from is not None:
        err_console.print(
            f"note: rows copied from run {ev.outcome.reused_from}, identical (same data, spec, "
            "models and scorer; its answers unchanged): nothing was planned or scored again",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    # Requests, not rows: rows whose prompts are the same (repeats, duplicates) share one
    # request, and the line beside it counts the requests sent.
    unsent = 0
    if any(etype == "budget" for rows in failed.values() for etype, _ in rows):
        with open_store(Path(res.store)) as store:
            unsent = budget_requests(store, res)
    for line in cost_lines(res, ev.outcome.spent, spec.max_cost, unsent):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    if ev.replaced_run is not None:
        err_console.print(
            f"note: {ev.results_json.parent} held the results of run {ev.replaced_run}; they are "
            f"replaced here and stay in the store (`lmmprobe show {ev.replaced_run}`)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    console.print(
        f"run id: {ev.run_id}\nresults: {ev.results_json}\n         {ev.results_md}",
        highlight=False,
        markup=False,
        soft_wrap=True,
        no_wrap=True,
    )
    if res.status == "stopped_budget":
        meter = ev.outcome.meter
        spent = f" (${ev.outcome.spent:.4f} spent by this run)" if spec.max_cost is not None else ""
        # The advice names the limit that was hit (a backend's max_tokens_total, say), not
        # every limit there is.
        hit = budget_limits([row for rows in failed.values() for row in rows])
        higher = " or ".join(n.split("=")[0] for n in hit) or "--max-cost or max_requests"
        stop = (
            f"run stopped: a budget ran out{spent}; the requests it left are stored as budget "
            "errors: run the same command again to continue (stored answers are not asked "
            f"again), with a higher {higher} to go further at once"
        )
        if judged_from is not None and unsent:
            # The answers judged stop where the judged run's budget stopped them: judging
            # again asks no model, so only resuming that run answers the rest.
            stop = _judged_short_of_budget(judged_from, unsent, res)
        elif meter is not None and meter.unmetered is not None and spec.max_cost is not None:
            stop = (
                f"run stopped: --max-cost cannot be kept: {meter.unmetered} (${meter.spent:.4f} "
                "counted); the requests it left are stored as budget errors: run again with "
                "--max-cost none to continue without a limit, or with the backend's "
                "max_requests=N to limit the calls"
            )
        console.print(stop, highlight=False, markup=False, soft_wrap=True)
    if ev.judging is not None and ev.judging.failed:
        # A judge that read nothing (a misspelt model, a refused key, a model that cannot
        # follow the protocol) fails the command: coverage 0 with exit 0 would pass a CI
        # check that judged nothing.
        whys = "; ".join(
            f"judge {shown_spec(spec)}: {why}" for spec, why in ev.judging.failed.items()
        )
        _fail(
            f"{whys} (run {ev.run_id} is {res.status}); fix the judge and run the same command "
            "again: stored answers are not asked again, nor are a judge's stored replies (an "
            "unreadable one is read again: a judge that cannot follow the protocol needs "
            "another model)",
            code=1,
        )
    if ev.judging is not None and ev.judging.not_applied:
        _fail(
            f"{ev.judging.not_applied}, so no judge was asked (run {ev.run_id} is "
            f"{res.status}); name a protocol that fits the data (lmmprobe list "
            "judge-protocols), or leave --judge-protocol out: each benchmark's own, else "
            "lmmprobe-choice and lmmprobe-open",
            code=1,
        )
    # A model whose requests a spent budget left unsent has only budget errors: the stop above
    # says so and how to continue; "every request failed" would send its reader the wrong way.
    dead = [] if res.status == "stopped_budget" else all_failed(res)
    if dead:
        _fail(
            f"every request of {', '.join(map(shown_spec, dead))} failed (see the error types above); "
            "the results hold no answers from it",
            code=1,
        )
    if res.status == "stopped_budget":
        # Not a success: a CI job that asked for the whole run must see that part of it was
        # left unsent. A status of its own, as the same command resumes the run.
        raise typer.Exit(EXIT_STOPPED_BUDGET)


def _row_metadata(res: Results) -> Iterator[Mapping[str, Any]]:
    """Each stored row's metadata of `res`'s run, read from the store as it goes."""
    with open_store(Path(res.store)) as store:
        for rec in store.iter_score_rows(res.run_id):
            yield rec["metadata"]


def _judged_short_of_budget(source: str, unsent: int, res: Results) -> str:
    """The stop line of run `source` judged from the store when its answers stopped at a budget.

    `unsent` requests of its models were never answered (stored as ``budget`` errors); judge
    calls that the judging's own ``--max-cost`` left unsent are named apart, as the same
    ``judge`` command asks those.
    """
    judge_unsent = sum(
        r.judge.unjudged.get("not sent (budget)", 0) for r in res.models.values() if r.judge
    )
    also = (
        f"; {judge_unsent} judge call(s) were left unsent by --max-cost: this command run "
        "again (with a higher --max-cost) asks them"
        if judge_unsent
        else ""
    )
    return (
        f"run stopped: the answers judged are those of run {source}, which stopped when its "
        f"budget ran out: {unsent} of its requests were never answered (budget errors, counted "
        f"in the error rate), so run {res.run_id} is stopped_budget too{also}; to judge every "
        f"answer, resume run {source} with the command that started it (a higher --max-cost "
        f"or max_requests; stored answers are not asked again), then judge its new run"
    )


def _key_note(variable: str | None) -> str:
    """The note for a dry-run line whose model's API key is not set ("" when it is)."""
    if variable is None:
        return ""
    return f"; its API key is not set: a dry run needs none, a real run needs ${variable}"


def _print_judge_plan(judges: list[PlannedJudge]) -> tuple[int, str]:
    """Print a line per judge and model of a dry run; the calls in all, and "at most " or ""."""
    for j in judges:
        line = f"judge {shown_spec(j.judge)} on {shown_spec(j.model)}: "
        if j.fits_none is not None:
            # Told from the samples: no answer could be judged, so no call is counted.
            line += f"no call: {j.fits_none}"
            console.print(line, highlight=False, markup=False, soft_wrap=True)
            continue
        line += f"{j.calls} call(s)" if j.exact else f"at most {j.calls} call(s)"
        if j.read:
            line += (
                f"; {j.read} answer(s) read from the store (rules applied, "
                f"{j.stored_replies} judge reply(ies) stored)"
            )
        if j.shared:
            line += f"; {j.shared} share(s) another answer's judge prompt (asked once)"
        if j.store_unchecked:
            line += "; a served judge: its stored replies are not looked up for a dry run"
        if j.unread and j.rules_first:
            line += f"; {j.unread} not answered yet (rules first: only those the rules "
            line += "cannot read will be sent; how many is known once they are answered)"
        elif j.unread:
            line += f"; {j.unread} not answered yet (counted in full)"
        if j.unfit:
            line += f" ({j.unfit} of them to samples their protocol does not judge: not counted)"
        if j.undecided:
            line += (
                f"; whether their protocol judges {j.undecided} of them only their answers "
                "will tell (counted)"
            )
        bound = j.completion_cost_bound
        if bound is not None:
            line += f"; its completions cost at most ${bound:.4f}"
        estimate = j.prompt_cost_estimate
        if estimate:
            line += f"; its prompts about ${estimate:.4f} (~{j.prompt_tokens} tokens, estimated)"
        line += _key_note(j.missing_key)
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    calls = sum(j.calls for j in judges)
    most = "" if all(j.exact for j in judges) else "at most "
    if judges:
        console.print(
            f"judges: {most}{calls} call(s); stored judge replies are not sent again",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    return calls, most


def _judge_prompts_note(judges: list[PlannedJudge], completions: float) -> str:
    """What the judges' prompts add to a dry run's cost, or "" when no judge pays for them.

    A judge prompt quotes a stored answer, so its text is known before it is sent and its
    tokens can be estimated (`lmmprobe.run.dry_run.estimate_prompt_tokens`); the server's
    tokenizer decides the real count, and images are left out of the estimate.
    """
    from lmmprobe.run.dry_run import CHARS_PER_TOKEN

    paying = [j for j in judges if j.prompt_cost_estimate]
    if not paying:
        return ""
    dollars = sum(j.prompt_cost_estimate or 0.0 for j in paying)
    tokens = sum(j.prompt_tokens for j in paying)
    why = f"~{tokens} tokens estimated at {CHARS_PER_TOKEN} characters a token; the server counts them"
    if images := sum(j.images for j in paying):
        why += f"; {images} image(s) not counted"
    if unknown := sum(j.prompts_unknown for j in paying):
        why += f"; {unknown} call(s) quoting answers not given yet not counted"
    return (
        f"; judge prompts about ${dollars:.4f} more ({why}), so about "
        f"${completions + dollars:.4f} in all"
    )


def _dry_run(spec: RunSpec) -> None:
    """Print what `spec` would send per model, and exit without sending anything."""
    from lmmprobe.data import DataError
    from lmmprobe.judge.dry_run import plan_judges
    from lmmprobe.run import InputErrors
    from lmmprobe.run.dry_run import plan_run

    try:
        planned = plan_run(spec)
    except InputErrors as exc:
        fail_each(exc.problems)
    except (RegistryError, DataError, ValueError) as exc:
        _fail(exc)
    if planned and planned[0].invalid:
        # Said as a run says it: the rows a run would skip are known before anything is sent.
        err_console.print(
            f"[yellow]skipped {planned[0].invalid} invalid row(s); "
            f"first {len(planned[0].problems)}:[/]"
        )
        for problem in planned[0].problems:
            err_console.print(f"  {problem}", highlight=False, markup=False, soft_wrap=True)
    for p in planned:
        line = (
            f"{shown_spec(p.spec)}: {p.to_send} request(s) to send of {p.requests + p.later_rounds}; "
            f"{p.stored} answered in the store"
        )
        if p.store_unchecked:
            line += " (a served model: its server is not started for a dry run, so the store "
            line += "was not checked and every request is counted)"
        if p.rejected:
            line += f", {p.rejected} the model cannot take"
        if p.later_rounds:
            line += f", {p.later_rounds} of later dialogue rounds (counted as sent)"
        bound = p.completion_cost_bound
        if bound is not None:
            line += (
                f"; completions cost at most ${bound:.4f} ({p.to_send} x {p.max_new_tokens} "
                "tokens); prompt tokens are counted only when sent"
            )
        line += _key_note(p.missing_key)
        console.print(line, highlight=False, markup=False, soft_wrap=True, no_wrap=True, crop=False)
    total = sum(p.to_send for p in planned)
    try:
        judges = plan_judges(spec)
    except (RegistryError, DataError, ValueError) as exc:
        _fail(exc)
    calls, most = _print_judge_plan(judges)
    # The summary counts the judges' calls with the models' requests: both are paid for.
    sent = f"{total} request(s)"
    if judges:
        sent = f"{total} model request(s) and {most}{calls} judge call(s)"
    bounds = [p.completion_cost_bound for p in planned] + [j.completion_cost_bound for j in judges]
    priced = [b for b in bounds if b is not None]
    cost = ""
    if priced:
        whose = "" if len(priced) == len(bounds) else " of the priced models and judges"
        cost = (
            f" (completions{whose} cost at most ${sum(priced):.4f}"
            f"{_judge_prompts_note(judges, sum(priced))})"
        )
    console.print(
        f"dry run: {sent} would be sent{cost}; nothing was sent and no run was recorded",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    if spec.max_cost is not None and priced and sum(priced) > spec.max_cost:
        # The preview of a paid run said what it may cost and not that its own budget is
        # less: the run would then stop part-way with exit 3, unforeseen.
        console.print(
            f"--max-cost ${spec.max_cost:g} is less than these completions may cost: a real "
            f"run stops sending once it has spent ${spec.max_cost:g} (status stopped_budget, "
            "exit 3), and the same command resumes it",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    none = next((j.fits_none for j in judges if j.fits_none is not None), None)
    if none is not None:
        # What the real run would end in (exit 1, judging_failed) once it had asked and paid
        # for every model: said now, as the run would say it.
        _fail(
            f"{none}, so a real run would ask the models, then no judge, and fail "
            "(judging_failed); name a protocol that fits the data (lmmprobe list "
            "judge-protocols), or leave --judge-protocol out: each benchmark's own, else "
            "lmmprobe-choice and lmmprobe-open",
            code=1,
        )


@app.command()
def models() -> None:
    """List model backends and whether they are ready to use."""
    from rich import box
    from rich.table import Table

    from lmmprobe.models import list_models

    table = Table(title="model backends", box=box.SIMPLE_HEAD)
    table.add_column("name", style="bold")
    table.add_column("status")
    table.add_column("spec and options")
    for name, status, summary in list_models():
        table.add_row(escape(name), escape(status), escape(summary))
    console.print(table)


@app.command()
def show(
    run_ref: Annotated[
        str,
        typer.Argument(metavar="RUN", help="Run id, unique prefix, 'latest', or the run's folder."),
    ] = "latest",
    db: DbOption = None,
) -> None:
    """Show a stored run's metrics: headline table, --by breakdowns, error types."""
    from lmmprobe.cli._view import error_lines, failures, print_results, truncated_tokens
    from lmmprobe.report import ResultsFormatError, results_from_dict
    from lmmprobe.report.settings import origin_setting

    with open_store(db) as store:
        try:
            run_id = store.resolve_run(run_ref)
        except KeyError as exc:
            _fail(str(exc.args[0]))
        row = store.get_run(run_id)
        where = f"run {run_id} in {store.path}"
        if not row["results"]:
            console.print(
                f"run {run_id}: status {row['status']}, no results yet "
                "(interrupted runs resume on re-run)"
            )
            raise typer.Exit(1)
        try:
            results = results_from_dict(row["results"], where)
        except ResultsFormatError as exc:
            _fail(str(exc))
        failed = failures(store, results)
        stopped = truncated_tokens(store, results)
    labels = print_results(console, results, stopped)
    for m in results.models:
        lines = error_lines(failed.get(m, []))
        if lines:
            console.print(f"{labels[m]}: errors", highlight=False, markup=False, soft_wrap=True)
        for line in lines:
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    # An imported run says so, as `lmmprobe runs` marks it, and names the file it came from.
    manifest = row.get("manifest") or {}
    origin = manifest.get("origin") if isinstance(manifest, dict) else None
    source = origin.get("path") if isinstance(origin, dict) else None
    for word in origin_setting(manifest):
        console.print(
            f"{word}" + (f": {source}" if source else ""),
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    # The files themselves (as `run` names them), not only their folder.
    out_dir = Path(str(row["out_dir"]))
    gone = (
        ""
        if (out_dir / "results.json").is_file()
        else " (not there now: moved or removed; this store still holds the results shown)"
    )
    console.print(
        f"results: {out_dir / 'results.json'}{gone}\n         {out_dir / 'results.md'}",
        highlight=False,
        markup=False,
        soft_wrap=True,
        no_wrap=True,
    )


def _export_columns(row: dict[str, Any]) -> dict[str, Any]:
    """The columns `export` adds to a stored row: the thinking split, and the row's outcome.

    ``stage`` alone misleads a spreadsheet: an empty free-form answer is stored ``unparsed``
    while the run counts it ``empty`` (``show``: unparsed 0.000), so a filter on the stage
    counted 304 unparsed rows in the demo; ``outcome`` is the count each row is in.
    """
    from lmmprobe.metrics.outcome import outcome_of
    from lmmprobe.parse.thinking import thinking_columns

    outcome = outcome_of(row.get("error_type"), str(row.get("stage")), row.get("correct"))
    return {**thinking_columns(row), "outcome": outcome}


@app.command()
def export(
    run_ref: Annotated[
        str,
        typer.Argument(metavar="RUN", help="Run id, unique prefix, 'latest', or the run's folder."),
    ],
    fmt: Annotated[str, typer.Option("--format", "-f", help="jsonl or csv.")] = "jsonl",
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="File to write [default: stdout].")
    ] = None,
    db: DbOption = None,
) -> None:
    """Export one row per model × sample × repeat: prompt, raw output, prediction, score, error.

    Each row has the raw output (`text`) and, read from it as scoring reads it, the thinking
    (`reasoning`), the `answer` and whether it was `truncated`, with the `finish_reason`; its
    `outcome` is what the run's counts count it as (correct, wrong, unparsed, truncated,
    free_text, empty, error).
    """
    from lmmprobe.store import export_run

    if fmt not in ("jsonl", "csv"):
        _fail(f"--format must be jsonl or csv, not {fmt!r}")
    with open_store(db) as store:
        try:
            run_id = store.resolve_run(run_ref)
        except KeyError as exc:
            _fail(str(exc.args[0]))
        if out is None:
            stdout = StdoutDocument(json_text=fmt == "jsonl")
            n = export_run(store, run_id, fmt, stdout, _export_columns)  # type: ignore[arg-type]
        else:
            n = write_out_file(
                out,
                lambda f: export_run(store, run_id, fmt, f, _export_columns),  # type: ignore[arg-type]
                db=db,
            )
        status = store.get_run(run_id)["status"] if not n else None
    if out is not None:
        err_console.print(f"wrote {n} row{'' if n == 1 else 's'} to {out}", highlight=False)
    if not n:
        # An interrupted run's answers are scored when it finishes: its export was empty, and
        # to stdout said nothing at all.
        unfinished = status in ("running", "interrupted", "failed") or str(status).startswith(
            "stopped"
        )
        err_console.print(
            f"note: run {run_id} ({status}) holds no scored rows to export"
            + (
                ": a run scores its answers as it finishes (each 10,000 samples); run its "
                "command again to finish it (stored answers are not asked again)"
                if unfinished
                else ""
            ),
            highlight=False,
            soft_wrap=True,
        )


_CLICK_EXCEPTION: Any = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)
"""Click's base of usage errors (typer runs on click or on its own copy of it)."""


class _InertFormatter(logging.Formatter):
    """Log lines with control characters escaped: they quote servers' and data's text too."""

    def format(self, record: logging.LogRecord) -> str:
        return inert(super().format(record))


def _not_printed_yet(record: logging.LogRecord) -> bool:
    """False for a record a library's own handler on its loggers has printed already.

    huggingface_hub puts a handler on its logger and still lets records reach the root one,
    so each of its warnings (the hub client's retries) was printed twice.
    """
    logger: logging.Logger | None = logging.getLogger(record.name)
    while logger is not None and logger is not logging.root:
        if logger.handlers:
            return False
        if not logger.propagate:
            break
        logger = logger.parent
    return True


GC_THRESHOLDS = (50_000, 20, 20)
"""The collector's thresholds for a command (Python's are 700, 10, 10)."""


def _fewer_collections() -> None:
    """Have the cyclic garbage collector run less often during a command.

    A run makes several objects a row (its sample, ask, response, score) that live until
    their chunk is done: with Python's thresholds the collector ran hundreds of times over
    them, a tenth to a sixth of the CPU time of a 10,000-row run with images. Objects that
    cycles hold are still freed, in fewer, larger passes. The modules imported so far (the
    CLI's; a command imports the rest of what it uses as it starts) are moved out of the
    collector's sight: they live as long as the process.
    """
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def main() -> None:
    """Console-script entry point.

    Logging goes to stderr through `_InertFormatter`. Usage errors, a `pydantic.ValidationError`
    that an option value causes anywhere in a command, and a file the system refuses end the
    command with the one line `error_text` makes (exit 2), not a dump, a box or a traceback.
    """
    _fewer_collections()
    handler = logging.StreamHandler()
    handler.setFormatter(_InertFormatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_not_printed_yet)
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    try:
        with store_faults_exit():  # a damaged or unreadable store: its one line, exit 2
            code = app(standalone_mode=False)
    except ValidationError as exc:
        # A schema refused an option value where no command caught it: one line, exit 2.
        err_console.print(f"[bold red]error:[/] {escape(error_text(exc))}", soft_wrap=True)
        sys.exit(2)
    except OSError as exc:
        if exc.filename is None:
            raise
        # A path given as an option that cannot be read or written (--out in a missing folder).
        err_console.print(f"[bold red]error:[/] {escape(error_text(exc))}", soft_wrap=True)
        sys.exit(2)
    except _CLICK_EXCEPTION as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `lmmprobe` alone: the help
            exc.show()
            sys.exit(exc.exit_code)
        # A bad or missing option or argument: one line naming it and what is allowed (click
        # writes what is allowed into the message), and where the command's help is.
        ctx = getattr(exc, "ctx", None)
        where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        if ctx is not None and ctx.command.name == "compare" and "extra argument" in str(exc):
            # `compare A B C` said only "unexpected extra argument": name the command that
            # takes more runs.
            where = (
                "; compare takes one or two runs: `lmmprobe report RUN...` puts any number "
                f"side by side{where}"
            )
        err_console.print(
            f"[bold red]error:[/] {escape(exc.format_message())}{escape(where)}",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted", highlight=False)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
