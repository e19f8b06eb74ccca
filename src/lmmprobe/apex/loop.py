"""APEx's experiment loop: design, validate and heal, build the data, evaluate, discuss, judge.

Origin: APEx (Conti et al., "Automatic benchmarking of large multimodal models via iterative
experiment programming"). The loop initializes the report from the query, then repeats:

1. the orchestrator designs an experiment; the loop validates it (schema, registered tools,
   arguments within their bounds, no code-like text anywhere) and builds its balanced dataset
   (a tool that cannot serve a call is a validation error too). A rejected design is fed back
   with the error for the orchestrator to heal, up to 3 retries; after that it designs a new
   experiment (at most 3 times in a row, then the campaign stops with status ``no_design``);
2. every model is evaluated on the dataset through lmmprobe's runner;
3. the orchestrator discusses the results (findings, open questions) and judges whether the
   report answers the query;

until the judgment is "sufficient" or ``max_experiments`` have run; then it concludes. A hard
cap on orchestrator calls bounds the whole campaign: when it is reached, the loop stops and
writes conclusions from the numbers alone. Nothing an orchestrator writes is executed: outputs
are parsed as data and tool calls resolve only through the registry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from lmmprobe._secrets import redact_spec
from lmmprobe._version import __version__
from lmmprobe.apex.evaluation import (
    evaluate_models,
    fallback_conclusions,
    method_for,
    statistical_findings,
)
from lmmprobe.apex.experiment_data import UNKNOWN, ExperimentDataset, ImageCache, build_dataset
from lmmprobe.apex.experiments import (
    Conclusions,
    Discussion,
    Experiment,
    ExperimentRecord,
    Initialization,
    Rejection,
    Report,
    Settings,
    Sufficiency,
    TranscriptEntry,
)
from lmmprobe.apex.orchestrator_output import (
    MAX_OUTPUT_CHARS,
    UnsafeOutputError,
    output_text,
    parse_output,
)
from lmmprobe.apex.protocol import (
    Attempt,
    Orchestrator,
    OrchestratorError,
    PlanExhausted,
    PlanningEnv,
    Reply,
    load_orchestrator,
)
from lmmprobe.metrics.embedding import SentenceEmbedder
from lmmprobe.models.base import AsyncModel, Model, load_model
from lmmprobe.run import Executor, ProgressSink, git_commit, library_versions
from lmmprobe.run.scoring import UNKNOWN_OPTIONS, normalize_text
from lmmprobe.store import Store
from lmmprobe.tools.compose import catalog
from lmmprobe.tools.registry import ToolCallError
from lmmprobe.tools.select import ImageRenderer, SelectContext, drawable_classes

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

MAX_HEALS = 3
"""Retries with the error fed back before a design is abandoned (APEx: 3)."""

MAX_FRESH_DESIGNS = 3
"""Abandoned designs in a row before the campaign gives up."""


class CallCapReached(Exception):
    """The hard cap on orchestrator calls was reached."""


@dataclass
class Campaign:
    """A finished campaign: the report and where it was written."""

    report: Report
    out_dir: Path
    report_json: Path
    report_md: Path
    datasets: list[ExperimentDataset]


class _Session:
    """One campaign's mutable state: the report, the call counter and the transcript."""

    def __init__(
        self,
        report: Report,
        orchestrator: Orchestrator,
        env: PlanningEnv,
        say: Callable[[str], None],
    ) -> None:
        self.report = report
        self.orch = orchestrator
        self.env = env
        self.say = say

    def _record(self, step: str, reply: Reply) -> None:
        n = self.report.orchestrator_calls
        for role, content in reply.messages:
            if role == "assistant":  # the orchestrator's text, of any length: kept to the cap
                content = _capped_reply(content)
            self.report.transcript.append(
                TranscriptEntry(step=step, role=role, content=content, call=n)
            )

    def ask(
        self,
        step: str,
        model: type[T],
        call: Callable[[Sequence[Attempt]], Reply],
        check: Callable[[T], None] | None = None,
    ) -> tuple[T | None, list[Attempt]]:
        """One step with healing: the parsed output, or None after MAX_HEALS failed retries.

        Raises:
            CallCapReached: The cap on orchestrator calls was hit before a valid output.

        """
        attempts: list[Attempt] = []
        for _ in range(1 + MAX_HEALS):
            if self.report.orchestrator_calls >= self.report.settings.max_orchestrator_calls:
                raise CallCapReached
            self.report.orchestrator_calls += 1
            reply = call(list(attempts))
            self._record(step if not attempts else f"{step}:heal", reply)
            try:
                parsed = parse_output(reply.output, model)
                if check is not None:
                    check(parsed)
                return parsed, attempts
            except (UnsafeOutputError, ToolCallError, ValueError) as exc:
                error = str(exc)
                text = output_text(reply.output)
                attempts.append(Attempt(output=text, error=error))
                self.report.rejections.append(
                    Rejection(
                        step=step,
                        attempt=len(attempts),
                        error=error,
                        output=text[:2000],
                    )
                )
                self.say(f"  {step}: rejected ({error[:160]})")
        return None, attempts


def _capped_reply(text: str) -> str:
    """An orchestrator's reply as the transcript keeps it: its first `MAX_OUTPUT_CHARS`.

    A longer reply is rejected unread (`load_json`); kept whole, a few of them (50 MB each)
    took the report's writing past memory and no report was left. Its length is noted.
    """
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return (
        f"{text[:MAX_OUTPUT_CHARS]} ...(cut: the reply has {len(text):,} characters; the "
        f"first {MAX_OUTPUT_CHARS:,} are kept)"
    )


def _check_experiment(settings: Settings) -> Callable[[Experiment], None]:
    def check(exp: Experiment) -> None:
        for i, a in enumerate(exp.answers):
            if normalize_text(a.text) in UNKNOWN_OPTIONS | {normalize_text(UNKNOWN)}:
                raise ValueError(
                    f"answers[{i}].text={a.text!r} is an abstention option; the loop adds "
                    "'Unknown' itself when abstention is enabled"
                )

    return check


def _through(prose: Callable[[str], str], say: Callable[[str], None]) -> Callable[[str], None]:
    """`say`, each text first passed through `prose`."""
    return lambda text: say(prose(text))


def _summary_line(record: ExperimentRecord) -> str:
    parts = []
    for r in record.results.models:
        acc = r.accuracy
        ci = f" [{acc.low:.2f}, {acc.high:.2f}]" if acc.low is not None and acc.high else ""
        value = f"{acc.value:.2f}" if acc.value is not None else "-"
        parts.append(f"{redact_spec(r.model)} {value}{ci} ({r.verdict.replace('_', ' ')})")
    return f"  results (chance {record.results.chance:.2f}): " + "; ".join(parts)


def _load_models(specs: Sequence[str]) -> dict[str, Model | AsyncModel]:
    if not specs:
        raise ValueError("give at least one model to evaluate")
    if len(set(specs)) != len(specs):
        raise ValueError(f"a model is listed twice: {list(specs)}")
    return {s: load_model(s) for s in specs}


def run_campaign(
    query: str,
    models: Sequence[str],
    orchestrator: str | Orchestrator = "rules",
    *,
    out: Path | str,
    settings: Settings | None = None,
    context: SelectContext | None = None,
    renderer: ImageRenderer | None = None,
    db: Path | str | None = None,
    cache_dir: Path | str | None = None,
    executor: Executor | None = None,
    progress: ProgressSink | None = None,
    say: Callable[[str], None] | None = None,
) -> Campaign:
    """Answer a research question about models with automatically programmed experiments.

    Args:
        query: The question, e.g. "Can models identify rotated images?".
        models: Model specs (``random``, ``hf:tiny-llava``, ``openai:MODEL@URL``...).
        orchestrator: ``rules``, ``openai:MODEL@URL`` or ``replay:REPORT.json``, or an
            `Orchestrator` instance.
        out: Folder for report.json, report.md and thumbnails (created).
        settings: Seed, images per answer, caps, abstention, image size, retrieval. With a
            replay orchestrator and no settings, the saved campaign's settings are used.
        context: Renderer, collection and image size for the tools; by default the
            procedural renderer at ``settings.image_size`` with ``settings.retrieval``'s
            collection.
        renderer: Image generator for the default context (e.g. a
            `lmmprobe.synth.diffusion.DiffusionRenderer`); None: the procedural renderer.
        db: SQLite store for responses (default ``OUT/apex.db``).
        cache_dir: Content cache of composed images (default ``$LMMPROBE_CACHE/apex-images``).
        executor: Where model requests run.
        progress: Progress of model requests.
        say: Receives one line per event (the CLI prints them).

    Returns:
        The campaign, with its report written to disk.

    Raises:
        QueryError: The orchestrator cannot plan for the query.
        RegistryError: A model spec is unknown.
        ValueError: Bad settings.

    """
    from lmmprobe.apex.campaign_report import shown_specs, write_report

    say = say or (lambda line: log.info(line))
    orch = load_orchestrator(orchestrator) if isinstance(orchestrator, str) else orchestrator
    if settings is None:
        saved = getattr(orch, "saved_settings", None)
        settings = saved if isinstance(saved, Settings) else Settings()
    out_dir = Path(out)
    loaded = _load_models(models)
    if context is None:
        collection = None
        if settings.retrieval:
            from lmmprobe.tools.retrieval import imagenet_x_taxonomy, open_collection

            collection = open_collection(settings.retrieval, taxonomy=imagenet_x_taxonomy())
        # Class names are matched by meaning with MiniLM (tools take the embedder from here).
        context = SelectContext(
            size=settings.image_size,
            collection=collection,
            renderer=renderer,
            embedder=SentenceEmbedder,
        )
    env = PlanningEnv(
        models=list(models),
        methods={s: method_for(m) for s, m in loaded.items()},
        drawable=drawable_classes(),
        collection=context.collection,
        select_tool="TextToImageRetrieval" if context.collection else "TextToImageGeneration",
        catalog=catalog(),
    )
    report = Report(
        query=" ".join(query.split()),
        models=list(models),
        orchestrator=getattr(orch, "name", type(orch).__name__),
        settings=settings,
    )
    report.metadata = {
        "lmmprobe": __version__,
        "libraries": library_versions(),
        "git_commit": git_commit(),
        "renderer": context.renderer_name,
        "collection": context.collection.source if context.collection else None,
        "methods": dict(env.methods),
    }
    started = time.perf_counter()
    # What is said names models by spec (the rules' reasons): their secrets redacted, as written.
    say = _through(shown_specs(report), say)
    session = _Session(report, orch, env, say)
    cache = ImageCache(cache_dir)
    datasets: list[ExperimentDataset] = []
    say(
        f"APEx: {report.query!r} — models: {', '.join(map(redact_spec, models))}; "
        f"orchestrator: {report.orchestrator}"
    )
    # The query is read before anything is written: an unsupported query leaves no files.
    try:
        init, _ = session.ask("init", Initialization, lambda r: orch.init(report, env, r))
        if init is not None:
            report.open_questions = list(init.open_questions)
        stopped = False
    except (CallCapReached, OrchestratorError) as exc:
        _stopped(report, exc, say)
        stopped = True
    out_dir.mkdir(parents=True, exist_ok=True)
    if not stopped:
        store_path = Path(db) if db is not None else out_dir / "apex.db"
        with Store(store_path) as store:
            try:
                _experiments(session, loaded, store, context, cache, datasets, out_dir,
                             executor, progress)  # fmt: skip
            except (CallCapReached, OrchestratorError) as exc:
                _stopped(report, exc, say)
    report.metadata["wall_s"] = round(time.perf_counter() - started, 3)
    report_json, report_md = write_report(report, out_dir, datasets)
    # Where the report is, the caller says (`Campaign.report_md`): the CLI after its table.
    return Campaign(report, out_dir, report_json, report_md, datasets)


def _stopped(report: Report, exc: BaseException, say: Callable[[str], None]) -> None:
    """Record why the campaign stopped early, with conclusions from the numbers alone."""
    if isinstance(exc, CallCapReached):
        report.status = "call_cap"
        cap = report.settings.max_orchestrator_calls
        say(f"  orchestrator call cap ({cap}) reached; stopping")
        head = f"Stopped at the orchestrator call cap ({cap}); conclusions from the numbers alone:"
    else:
        report.status = "orchestrator_error"
        report.metadata["error"] = str(exc)
        say(f"  orchestrator failed: {exc}")
        head = f"Stopped: the orchestrator failed ({exc}); conclusions from the numbers alone:"
    report.conclusions = [head, *fallback_conclusions(report)]


def _experiments(
    session: _Session,
    models: dict[str, Model | AsyncModel],
    store: Store,
    context: SelectContext,
    cache: ImageCache,
    datasets: list[ExperimentDataset],
    out_dir: Path,
    executor: Executor | None,
    progress: ProgressSink | None,
) -> None:
    """Design, run, discuss and judge experiments until a stop; then conclude."""
    report, orch, env, say = session.report, session.orch, session.env, session.say
    settings = report.settings
    fresh_failures = 0
    while len(report.experiments) < settings.max_experiments:
        index = len(report.experiments) + 1
        try:
            built = _design_and_build(session, index, context, cache)
        except PlanExhausted:
            report.status = "plan_exhausted"
            say("  the orchestrator has no further experiment")
            break
        if built is None:
            fresh_failures += 1
            if fresh_failures >= MAX_FRESH_DESIGNS:
                report.status = "no_design"
                say("  no valid experiment after repeated redesigns; stopping")
                break
            continue
        fresh_failures = 0
        experiment, dataset, attempts = built
        datasets.append(dataset)
        say(
            f"experiment {index} ({experiment.difficulty}): {experiment.question} "
            f"[{' | '.join(a.text for a in experiment.answers)}], {len(dataset.samples)} images"
        )
        results, run_id = evaluate_models(
            dataset.samples,
            models,
            store=store,
            answers=[a.text for a in experiment.answers],
            seed=settings.seed,
            n_boot=settings.bootstrap,
            label=f"apex:experiment-{index}",
            out_dir=out_dir,
            data_fingerprint=dataset.info.fingerprint,
            executor=executor,
            progress=progress,
        )
        record = ExperimentRecord(
            index=index,
            experiment=experiment,
            dataset=dataset.info,
            results=results,
            attempts=attempts,
            run_id=run_id,
        )
        report.experiments.append(record)
        say(_summary_line(record))
        discussion, _ = session.ask("discuss", Discussion, lambda r: orch.discuss(report, env, r))
        if discussion is None:
            record.findings = statistical_findings(results)
        else:
            record.findings = list(discussion.findings)
            report.open_questions = list(discussion.open_questions)
        verdict, _ = session.ask("judge", Sufficiency, lambda r: orch.judge(report, env, r))
        if verdict is not None:
            report.sufficiency = verdict
            # In words, as the report writes it ("sufficient: every model is resolved"), not
            # Python's True/False.
            said = "sufficient" if verdict.sufficient else "not sufficient yet"
            say(f"  {said}: {verdict.reason}")
            if verdict.sufficient and settings.stop_when_sufficient:
                report.status = "sufficient"
                break
    else:
        report.status = "max_experiments"
    concl, _ = session.ask("conclude", Conclusions, lambda r: orch.conclude(report, env, r))
    report.conclusions = (
        list(concl.conclusions) if concl is not None else fallback_conclusions(report)
    )


def _design_and_build(
    session: _Session, index: int, context: SelectContext, cache: ImageCache
) -> tuple[Experiment, ExperimentDataset, int] | None:
    """Design, validate and build one experiment, healing up to MAX_HEALS times."""
    report, orch, env = session.report, session.orch, session.env
    settings = report.settings
    built: dict[str, ExperimentDataset] = {}
    check_text = _check_experiment(settings)

    def check(exp: Experiment) -> None:
        check_text(exp)
        # Building the data is part of validation: a class the renderer cannot draw or a
        # collection that cannot serve a call is an error the orchestrator can fix.
        built["dataset"] = build_dataset(
            exp,
            index=index,
            images_per_answer=settings.images_per_answer,
            seed=settings.seed,
            context=context,
            cache=cache,
            unknown_option=settings.unknown_option,
        )

    experiment, attempts = session.ask(
        "design", Experiment, lambda r: orch.design(report, env, r), check
    )
    if experiment is None:
        return None
    return experiment, built["dataset"], len(attempts) + 1


def replay_settings(path: Path | str) -> Settings:
    """The settings of a saved campaign (what replay uses unless told otherwise)."""
    return Report.model_validate_json(Path(path).read_text(encoding="utf-8")).settings


__all__ = [
    "MAX_FRESH_DESIGNS",
    "MAX_HEALS",
    "CallCapReached",
    "Campaign",
    "fallback_conclusions",
    "replay_settings",
    "run_campaign",
]
