"""``lmmprobe apex "QUERY"``: answer a research question with automatically programmed experiments.

A thin wrapper over `lmmprobe.apex.run_campaign` (APEx, Conti et al.): it reads the options into
campaign settings, prints the campaign's progress and a results table, and exits with status 2
on bad input (an unsupported query, an unknown model, a missing replay file) and 1 when the
campaign ran no experiment (the orchestrator failed or designed nothing valid: the report, still
written, says why).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from lmmprobe._secrets import redact_spec
from lmmprobe.cli._common import ModelsOption, console, fail, said_when_interrupted
from lmmprobe.schema.spec import MAX_BOOTSTRAP

if TYPE_CHECKING:
    from lmmprobe.apex import Report


def apex(
    query: Annotated[
        str,
        typer.Argument(help='The research question, e.g. "Can models identify rotated images?".'),
    ],
    model: ModelsOption = None,
    orchestrator: Annotated[
        str,
        typer.Option(
            help="rules, openai:MODEL@URL (optionally with ,mode=tools), or replay:REPORT.json."
        ),
    ] = "rules",
    max_experiments: Annotated[
        int | None,
        typer.Option(min=1, max=50, help="Stop after this many experiments [default: 5]."),
    ] = None,
    images_per_answer: Annotated[
        int | None, typer.Option(min=1, max=1000, help="Images made per answer [default: 20].")
    ] = None,
    retrieval: Annotated[
        str | None,
        typer.Option(
            help="Labelled image collection for TextToImageRetrieval: a folder or hf:PATH."
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Output folder [default: apex-runs/<time>].")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of every dataset [default: 0].")] = None,
    unknown: Annotated[
        bool | None,
        typer.Option("--unknown/--no-unknown", help="Offer an 'Unknown' option (abstention)."),
    ] = None,
    max_calls: Annotated[
        int | None,
        typer.Option(min=1, max=1000, help="Hard cap on orchestrator calls [default: 40]."),
    ] = None,
    image_size: Annotated[
        int | None, typer.Option(min=16, max=2048, help="Image side in pixels [default: 256].")
    ] = None,
    bootstrap: Annotated[
        int | None,
        typer.Option(
            min=0, max=MAX_BOOTSTRAP, help="Bootstrap resamples for the 95% CIs [default: 1000]."
        ),
    ] = None,
    run_all: Annotated[
        bool,
        typer.Option("--run-all", help="Run max-experiments even when the report is sufficient."),
    ] = False,
    diffusion_model: Annotated[
        str | None,
        typer.Option(
            help="Generate images with this diffusers pipeline (SDXL / SDXL-Turbo path or id) "
            "instead of the procedural renderer."
        ),
    ] = None,
    db: Annotated[Path | None, typer.Option(help="SQLite store [default: OUT/apex.db].")] = None,
    cache_dir: Annotated[
        Path | None,
        typer.Option(help="Composed-image cache [default: $LMMPROBE_CACHE/apex-images]."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the results.")] = False,
) -> None:
    """Design VQA experiments from image tools, run them on the models, write a report."""
    from lmmprobe.apex import Settings, run_campaign
    from lmmprobe.apex.campaign_report import shown_specs
    from lmmprobe.apex.orchestrators import OrchestratorError, load_orchestrator
    from lmmprobe.registry import RegistryError
    from lmmprobe.tools.retrieval import CollectionError

    # One spec per --model: specs carry their own commas (hf:PATH,dtype=float32).
    models = [m.strip() for m in model or [] if m.strip()]
    if not models:
        fail("give at least one --model (e.g. --model random --model hf:tiny-llava)")
    try:
        orch = load_orchestrator(orchestrator)
    except (ValueError, OrchestratorError) as exc:
        fail(exc)
    saved = getattr(orch, "saved_settings", None)
    base = saved if isinstance(saved, Settings) else Settings()
    given = {
        "max_experiments": max_experiments,
        "images_per_answer": images_per_answer,
        "retrieval": retrieval,
        "seed": seed,
        "unknown_option": unknown,
        "max_orchestrator_calls": max_calls,
        "image_size": image_size,
        "bootstrap": bootstrap,
    }
    updates: dict[str, object] = {k: v for k, v in given.items() if v is not None}
    if run_all:
        updates["stop_when_sufficient"] = False
    try:
        settings = Settings.model_validate({**base.model_dump(), **updates})
    except ValueError as exc:  # pydantic's ValidationError: one line naming the option
        fail(exc)
    out_dir = out or Path("apex-runs") / time.strftime("%Y%m%d-%H%M%S")

    def say(line: str) -> None:
        if not quiet:
            # Prose: wrapped between words, an interval ("[0.35, 0.65]") kept whole.
            console.print(escape(line), highlight=False, soft_wrap=True)

    renderer = None
    if diffusion_model:
        from lmmprobe.synth.diffusion import DiffusionRenderer

        try:
            renderer = DiffusionRenderer(diffusion_model)
        except (ImportError, OSError, ValueError) as exc:
            fail(exc)
    # A campaign's report is the only record of its experiments (a replay reads it): one
    # written to the same --out by an earlier campaign was replaced without a word, with
    # other models, say. It is kept beside the new one, as report.previous.json / .md.
    kept = _keep_earlier_report(out_dir)
    earlier = f"; the earlier campaign's report there is kept as {', '.join(kept)}" if kept else ""
    stopped = (
        f"the campaign stopped before its report was written to {out_dir}{earlier}; the "
        "answers its experiments received are in the store (their runs marked interrupted), "
        "and the same command runs the campaign again"
    )
    with said_when_interrupted(stopped):
        try:
            campaign = run_campaign(
                query,
                models,
                orch,
                out=out_dir,
                settings=settings,
                renderer=renderer,
                db=db,
                cache_dir=cache_dir,
                say=say,
            )
        except (RegistryError, CollectionError, ValueError) as exc:  # QueryError is a ValueError
            fail(exc)
    report = campaign.report
    table = Table(
        title=f"APEx: {escape(report.query)} ({report.status}, {report.calls_text()})",
        # The marks were never explained on the terminal ("0.47 [0.33, 0.65] =").
        caption="accuracy [95% CI]; + above chance, = at chance, - below chance",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("experiment", overflow="fold")
    table.add_column("chance", justify="right")
    for m in report.models:
        table.add_column(escape(redact_spec(m)), justify="right", no_wrap=True)
    for rec in report.experiments:
        cells = []
        for m in report.models:
            r = next((x for x in rec.results.models if x.model == m), None)
            if r is None or r.accuracy.value is None:
                cells.append("-")
                continue
            ci = (
                f" [{r.accuracy.low:.2f}, {r.accuracy.high:.2f}]"
                if r.accuracy.low is not None and r.accuracy.high is not None
                else ""
            )
            mark = {"above_chance": "+", "below_chance": "-", "at_chance": "="}.get(r.verdict, "?")
            cells.append(f"{r.accuracy.value:.2f}{ci} {mark}")
        table.add_row(
            escape(f"E{rec.index} {rec.experiment.difficulty}: {rec.experiment.question}"),
            f"{rec.results.chance:.2f}",
            *cells,
        )
    console.print(table)
    prose = shown_specs(report)  # as report.md writes them: no spec's secret
    for line in report.conclusions:
        console.print(f"- {escape(prose(line))}", highlight=False, soft_wrap=True)
    # Whole on its line, as `run`'s results line: a script or a person copies the path.
    console.print(
        f"report: {escape(str(campaign.report_md))}", highlight=False, soft_wrap=True, no_wrap=True
    )
    if kept:
        console.print(
            f"note: {escape(str(out_dir))} held an earlier campaign's report; it is kept as "
            f"{escape(', '.join(kept))} (until the next campaign there)",
            highlight=False,
            soft_wrap=True,
        )
    if not report.experiments:
        # The report is written all the same (it says why); the exit status says nothing ran.
        fail(f"no experiment ran: {_why_none(report)}; see {campaign.report_md}", code=1)


def _keep_earlier_report(out_dir: Path) -> list[str]:
    """Copy an earlier campaign's report.json / report.md in `out_dir` to report.previous.*.

    Copied, not moved: a replay of that very report (``--orchestrator replay:OUT/report.json``
    with the same ``--out``) still reads it. Returns the names of the copies made.
    """
    kept = []
    for name in ("report.json", "report.md"):
        earlier = out_dir / name
        try:
            if not earlier.is_file() or earlier.is_symlink():
                continue
            copy = out_dir / name.replace("report.", "report.previous.")
            shutil.copyfile(earlier, copy)
        except OSError as exc:
            fail(
                f"{earlier}: an earlier campaign's report could not be kept ({exc}); choose another --out"
            )
        kept.append(copy.name)
    return kept


def _why_none(report: Report) -> str:
    """Why a campaign ran no experiment, from its status, in a few words."""
    status = report.status
    if status == "orchestrator_error":
        return f"the orchestrator failed ({report.metadata.get('error', 'no detail')})"
    if status == "no_design":
        last = report.rejections[-1].error if report.rejections else "no detail"
        return (
            f"the orchestrator designed no valid experiment in {len(report.rejections)} "
            f"attempts (last: {last[:200]})"
        )
    if status == "call_cap":
        return (
            f"the orchestrator call cap ({report.settings.max_orchestrator_calls}) was reached "
            "before an experiment was designed (--max-calls raises it)"
        )
    if status == "plan_exhausted":
        return "the orchestrator had no experiment to run (a replayed report without experiments?)"
    return f"campaign status {status}"
