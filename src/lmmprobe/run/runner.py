"""The runner: samples × repeats → requests → cached or model-answered responses → scores.

Resume is the default. Every request has a content cache key (run.keys); responses already in
the store are reused, the rest are sent to the model in batches and each batch is committed to
the store as soon as it returns, before anything is scored. Stored errors are not reused, so a
re-run retries them.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lmmprobe._secrets import redact_spec, shown_spec
from lmmprobe.data import (
    ChunkedLoad,
    DataError,
    LoadResult,
    StreamedLoad,
    close_load,
    data_fingerprint,
    image_places,
    load_in_chunks,
    load_source,
    no_valid_samples,
)
from lmmprobe.data.remembered_loads import LoadCheckStore, remembered_load
from lmmprobe.data.rows import remembered_images
from lmmprobe.data.video import frame_policy
from lmmprobe.formulate.ask import Ask
from lmmprobe.formulate.prompt import Formulator
from lmmprobe.models.api_keys import keys_not_needed
from lmmprobe.models.base import (
    AsyncModel,
    MeteredModel,
    Model,
    ModelIdentity,
    StartableModel,
    UnsupportedInputError,
    load_model,
)
from lmmprobe.parse.thinking import split_answer, tags_for_model
from lmmprobe.registry import RegistryError
from lmmprobe.run.cost import CostMeter
from lmmprobe.run.executor import (
    Executor,
    LocalExecutor,
    RunAborted,
    SpecExecutor,
    StopSending,
    model_session,
)
from lmmprobe.run.keys import ask_key
from lmmprobe.run.manifest import (
    NO_SOURCE_CHANGES,
    build_manifest,
    git_commit_later,
    source_changes_later,
)
from lmmprobe.run.prices import resolve_prices
from lmmprobe.run.progress import NullProgress, ProgressSink
from lmmprobe.run.scoring import SCORER_VERSION, check_names, score_response, with_usage
from lmmprobe.schema import Price, Request, Response, RunSpec, Sample, Score, Turn
from lmmprobe.schema.record import ModelRecord, RunRecord
from lmmprobe.schema.spec import FRAME_POLICY_KEY
from lmmprobe.schema.text import shown_path
from lmmprobe.store import Store, StoreError
from lmmprobe.store.reuse import AnswerTotals

if TYPE_CHECKING:
    from lmmprobe.run.ray_executor import RayExecutor

log = logging.getLogger(__name__)

CHUNK_SAMPLES = 10_000
"""Samples a model's run plans, answers, scores and stores at a time (with their repeats).

A run of up to this many samples is one chunk: it sends the same batches, in the same order,
as a run held whole. A larger run keeps one chunk's samples, asks, responses and Scores at a
time, so its memory does not grow with its rows: its data is read once to be checked and
fingerprinted, each chunk kept on disk as it is read, then given again a chunk at a time for
each model (`StreamedLoad`: from what it kept, else read from the source again)."""

ScoreSink = Callable[[list[Score]], None]
"""Takes one chunk's Scores as they are made (`execute_run` stores them), in row order."""


@dataclass
class ModelOutcome:
    """What happened for one model of a run: counts, not its Scores (those are stored).

    `scores` holds Scores only where `run_model` was called without a sink (a caller that
    stores nothing itself); a run (`execute_run`) stores each chunk's and keeps none.
    """

    spec: str
    identity: ModelIdentity
    scores: list[Score] = field(default_factory=list)
    requests: int = 0
    cached: int = 0
    called: int = 0
    attempts: int = 0
    """Attempts the backend sent for the requests in ``called``, retries included (where it
    counts them: ``requests_sent``); 0 where it does not."""
    refused: int = 0
    """Requests the backend's own budget (``max_requests=``, ``max_tokens_total=``) refused
    before sending them: stored as ``budget`` errors, neither sent nor in ``called``."""
    not_sent: int = 0
    """Requests refused before sending for what they hold (a sample's images over what one
    request may carry or show, or more than the model takes): stored as errors
    (``unsupported_input``), neither sent nor in ``called``."""
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s_total: float = 0.0
    redacted: int = 0
    rows: int = 0
    """Score rows made (one per sample and repeat, or rotation)."""
    error_types: set[str] = field(default_factory=set)
    """The error types among its rows (what `answers_status` reads)."""

    def take(self, scores: list[Score], sink: ScoreSink | None) -> None:
        """Count a chunk's `scores` and hand them to `sink` (kept in `scores` without one)."""
        self.rows += len(scores)
        self.error_types.update(s.error_type for s in scores if s.error_type)
        if sink is None:
            self.scores.extend(scores)
        else:
            sink(scores)

    def stats(self) -> dict[str, Any]:
        """Counts and usage for results.json."""
        return {
            "requests": self.requests,
            "cached": self.cached,
            "called": self.called,
            "refused": self.refused,
            # Only when some were: results written before, and runs without any, stay as
            # they were (`lmmprobe.report.ModelStats` reads it as 0).
            **({"not_sent": self.not_sent} if self.not_sent else {}),
            # Only where retries sent more than the requests: files stay as they were otherwise.
            **({"attempts": self.attempts} if self.attempts > self.called else {}),
            "errors": self.errors,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "mean_latency_s": (self.latency_s_total / self.requests) if self.requests else None,
            "redacted": self.redacted,
        }


@dataclass
class RunOutcome:
    """A finished run: its id, inputs, manifest and per-model scores."""

    run_id: str
    spec: RunSpec
    store_path: Path
    out_dir: Path
    load: LoadResult | ChunkedLoad
    """The run's data: its samples, or, for a run of more than a chunk, their count and how
    to read them again a chunk at a time (`StreamedLoad`; a stored run's recorded samples).
    A `StreamedLoad` keeps its first read's chunks until it is closed (`close_load`, which
    `lmmprobe.api.evaluate` calls once the run is judged and its results written)."""
    manifest: dict[str, Any]
    models: list[ModelOutcome] = field(default_factory=list)
    status: str = "running"
    spent: float = 0.0
    """Dollars this invocation's model calls cost (priced models only; see `CostMeter`)."""
    meter: CostMeter | None = field(default=None, repr=False)
    """The invocation's spending meter, shared with the judging step so that judge calls
    count against the same ``max_cost``."""
    reused_from: str | None = None
    """The identical earlier run whose rows this run copied (`lmmprobe.store.reuse`); None:
    its rows were planned, answered and scored here."""
    unusable_images: dict[str, str] = field(default_factory=dict, repr=False)
    """Sample id → why its images are not the pictures the model saw (a recorded file changed
    since the run, or unreadable: `lmmprobe.store.sqlite.RecordedSamples`): a judge that sees
    images leaves its answers unjudged, never judges them on another picture."""

    def record(self, judged: Mapping[str, Mapping[str, Any]] | None = None) -> RunRecord:
        """What the run's results take from it besides its stored rows (`RunRecord`).

        Args:
            judged: Model spec → how its answers were judged, as results.json records it
                (`lmmprobe.judge.JudgeRunOutcome.results`); None: the run was not judged.

        """
        return RunRecord(
            run_id=self.run_id,
            spec=self.spec,
            status=self.status,
            store=self.store_path,
            manifest=self.manifest,
            source=self.load.source,
            samples=self.load.count,
            invalid=self.load.invalid,
            problems=tuple(str(p) for p in self.load.problems),
            models=tuple(
                ModelRecord(mo.spec, mo.stats(), (judged or {}).get(mo.spec)) for mo in self.models
            ),
        )


def answers_status(outcome: RunOutcome) -> str:
    """What a run's answers make it: complete, complete_with_errors or stopped_budget.

    ``stopped_budget`` wherever a row is a ``budget`` error (a budget ran out before it was
    asked: re-run to go on), whatever other errors there are. A run judged from the store
    (`lmmprobe.api.judge_stored`) reads its stored answers by the same rule, so judging a run
    that stopped at its budget never makes it look finished.
    """
    errors = {t for m in outcome.models for t in m.error_types}
    if "budget" in errors:
        return "stopped_budget"
    return "complete_with_errors" if errors else "complete"


class InputErrors(ValueError):
    """Several inputs of a run are wrong (a model and the data, say), all found before it starts.

    Attributes:
        problems: One error per wrong input, in the order the run reads them (models, then
            data), each as it would have been raised alone.

    """

    def __init__(self, problems: Sequence[Exception]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


@dataclass
class RunInputs:
    """What a run reads before it starts: its models (no weights loaded yet) and its data.

    Attributes:
        models: Each model spec with its model object.
        load: The data's samples and rejected rows (a run's data of more than a chunk, read
            with ``chunked=True``: counted and fingerprinted, to be read again by chunk).
        missing_keys: Per model spec, the variable of an API key that is not set, when the
            inputs were resolved for a dry run (``keys=False``): a real run needs it.

    """

    models: list[tuple[str, Model | AsyncModel]]
    load: LoadResult | StreamedLoad
    missing_keys: dict[str, str] = field(default_factory=dict)


def load_unkeyed(model_spec: str) -> tuple[Model | AsyncModel, str | None]:
    """The model of `model_spec` for a plan, which sends nothing and so needs no API key.

    Returns:
        The model, and the environment variable of its API key when that is not set.

    """
    with keys_not_needed() as missing:
        model = load_model(model_spec)
    return model, missing[0] if missing else None


def resolve_inputs(
    spec: RunSpec,
    *,
    keys: bool = True,
    chunked: bool = False,
    remember: LoadCheckStore | None = None,
) -> RunInputs:
    """Resolve every model of `spec` and read its data, reporting every wrong input at once.

    Each input is tried even when an earlier one failed, so a user fixing a run sees all of
    its problems in one go rather than one per attempt.

    Args:
        spec: The run.
        keys: Whether the models' API keys must be set; False for a dry run, which sends
            nothing (a missing key is then noted in `RunInputs.missing_keys`).
        chunked: Data of more than `CHUNK_SAMPLES` samples is read once to be checked, and
            comes back as a `StreamedLoad` (a run gets it again chunk by chunk; close it,
            `close_load`, when done); else the samples come back whole.
        remember: With `chunked`, the store where that first read is remembered and given
            from when the data is unchanged (`lmmprobe.data.remembered_loads`; call inside
            `remembered_images` of the same store).

    Raises:
        RegistryError: The one wrong input is an unknown (or not installed) backend or source.
        DataError: The one wrong input is the data, which cannot be read or has no valid row.
        ValueError: The one wrong input is a model option, a module one model needs is
            missing (torchvision for a video checkpoint), or the data has no sample.
        InputErrors: Several inputs are wrong.

    """
    problems: list[Exception] = []
    models: list[tuple[str, Model | AsyncModel]] = []
    missing_keys: dict[str, str] = {}
    for s in spec.models:
        try:
            tags_for_model(s)  # a think= value that cannot be read fails here, not at scoring
            model, missing = (load_model(s), None) if keys else load_unkeyed(s)
            models.append((s, model))
            if missing is not None:
                missing_keys[s] = missing
        except (RegistryError, ValueError) as exc:
            problems.append(exc)
        except ImportError as exc:
            # A module the backend needs for this one model, past the registry's own check
            # (torchvision for a video checkpoint, a checkpoint's remote code's): one line
            # naming the model, not a traceback.
            problems.append(ValueError(f"-m {shown_spec(s)}: {exc}"))
    problems += _recorded_alike(spec.models)
    load: LoadResult | StreamedLoad | None = None
    try:
        if chunked:
            if remember is not None:  # the same read as load_in_chunks, from the store if it can
                load = remembered_load(
                    spec.data, remember, size=CHUNK_SAMPLES, strict=spec.strict, limit=spec.limit
                )
            else:
                load = load_in_chunks(
                    spec.data, size=CHUNK_SAMPLES, strict=spec.strict, limit=spec.limit
                )
        else:
            load = load_source(spec.data, strict=spec.strict, limit=spec.limit)
        if isinstance(load, LoadResult):  # (a StreamedLoad has more samples than a chunk)
            if not load.samples and load.invalid:  # say why, not only how many
                raise DataError(no_valid_samples(load))
            if not load.samples:
                raise ValueError(f"no valid samples in {spec.data} ({load.invalid} invalid)")
    except (RegistryError, ValueError) as exc:
        problems.append(exc)
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise InputErrors(problems)
    assert load is not None  # read, or its error is among the problems
    return RunInputs(models, load, missing_keys)


def check_media(
    models: Sequence[tuple[str, Model | AsyncModel]], load: LoadResult | StreamedLoad, spec: RunSpec
) -> None:
    """Refuse, before any call, a model that cannot be shown the data's videos.

    A video reaches a model as a video (`Capabilities.video`) or as its frames, images
    (`Capabilities.images`); a model taking neither would fail every such sample after its
    first calls. A blind run shows no media and is not checked.

    Raises:
        ValueError: Naming every such model and how many samples ask about a video.

    """
    if spec.formulate.blind:
        return
    if isinstance(load, StreamedLoad):
        videos = load.videos
    else:
        videos = sum(s.video is not None for s in load.samples)
    if not videos:
        return
    refused = [s for s, m in models if not (m.capabilities.images or m.capabilities.video)]
    if refused:
        names = ", ".join(repr(s) for s in refused)
        raise ValueError(
            f"{names} take{'s' if len(refused) == 1 else ''} neither images nor video, and "
            f"{videos:,} sample(s) ask about a video: use a vision model, or --blind"
        )


def _recorded_alike(specs: Sequence[str]) -> list[Exception]:
    """Models that differ only where values that may be secrets are hidden, as errors.

    Every spec is recorded with such values replaced (`redact_spec`), and a model's rows are
    stored under its recorded spec: two such models would be stored as one, half their rows
    lost. The message shows the recorded form alone, never the values.
    """
    first: dict[str, str] = {}
    out: list[Exception] = []
    for s in specs:
        recorded = redact_spec(s)
        if first.setdefault(recorded, s) != s:
            out.append(
                ValueError(
                    f"two models are recorded alike, {recorded!r}: they differ only in values "
                    "hidden as possible secrets, and would be stored as one model; tell them "
                    "apart by a setting that is not hidden"
                )
            )
    return out


def new_run_id() -> str:
    """A sortable, unique run id: ``YYYYmmdd-HHMMSS-xxxxxx``."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def plan_requests(
    samples: Sequence[Sample], spec: RunSpec, identity: ModelIdentity
) -> list[tuple[Sample, Ask]]:
    """One keyed ask per (sample, repeat), in sample order.

    Under CircularEval a choice sample is asked once per rotation of its options instead of
    `spec.repeats` times. Each ask's key is `request_key` of its request (`Ask.to_request`),
    computed from the ask (`ask_key`); the runner keeps the asks, which hold all the scorer
    reads, and builds requests only for what it sends.
    """
    formulator = Formulator(spec.formulate, spec.gen, spec.seed, spec.repeats)
    ident = identity.cache_id()
    rows = []
    sweep = [p.label for p in spec.frame_policies()] if len(spec.frame_policies()) > 1 else []
    for sample in samples:
        if sweep:
            rows += _swept(formulator, sample, sweep, spec.repeats, ident)
            continue
        for repeat in range(_times_asked(sample, spec)):
            rows.append((sample, _keyed(formulator, sample, repeat, ident)))
    return rows


def _times_asked(sample: Sample, spec: RunSpec) -> int:
    """How many rows `plan_requests` gives `sample` outside a frame sweep (CircularEval or repeats)."""
    return (
        len(sample.choices or ()) if spec.formulate.circular and sample.is_choice else spec.repeats
    )


def planned_rows(load: LoadResult | StreamedLoad, spec: RunSpec) -> int | None:
    """How many score rows each model of a run of `spec` on `load` has (`plan_requests`' count).

    Counted without formulating anything, so an identical earlier run's rows can be checked
    whole before they are copied (`lmmprobe.store.reuse`). None where the count needs every
    sample and `load` is read in chunks (CircularEval over a streamed load).
    """
    policies = len(spec.frame_policies())
    if policies > 1:
        return load.count * policies * spec.repeats
    if not spec.formulate.circular:
        return load.count * spec.repeats
    if isinstance(load, StreamedLoad):
        return None
    return sum(_times_asked(s, spec) for s in load.samples)


def _swept(
    formulator: Formulator, sample: Sample, labels: list[str], repeats: int, identity: str
) -> list[tuple[Sample, Ask]]:
    """`sample` asked `repeats` times under each frame policy of a sweep (``--frames 8,16``).

    Row ``p * repeats + r`` is repeat r under policy p: worded and seeded as repeat r (so the
    policies differ in their frames alone), shown that policy's frames, its row's metadata
    naming the policy (`FRAME_POLICY_KEY`). A sample without a video is asked alike under
    each (one request, its answer shared), so every policy's figures cover the same samples.
    """
    rows = []
    for p, label in enumerate(labels):
        update: dict[str, object] = {"metadata": {**sample.metadata, FRAME_POLICY_KEY: label}}
        if sample.video is not None:
            update["video"] = sample.video.under(label)
        variant = sample.model_copy(update=update)
        for r in range(repeats):
            ask = formulator.ask(variant, r)
            ask.repeat = p * repeats + r
            ask.key = ask_key(identity, ask)
            rows.append((variant, ask))
    return rows


def _keyed(formulator: Formulator, sample: Sample, repeat: int, identity: str) -> Ask:
    """The ask of `sample` on `repeat`, keyed for the model whose cache id is `identity`."""
    ask = formulator.ask(sample, repeat)
    ask.key = ask_key(identity, ask)
    return ask


def _input_error(model: Model | AsyncModel, req: Request) -> Response | None:
    """Reject requests the model cannot take, without calling it."""
    cap = model.capabilities
    n = len(req.images)
    if (cap.max_images is not None and n > cap.max_images) or (n > 1 and not cap.multi_image):
        limit = cap.max_images if cap.max_images is not None else 1
        err = UnsupportedInputError(
            f"sample {req.sample_id} has {n} images; the model takes at most {limit}"
        )
        return Response(key=req.key, error=err.to_info())
    return None


def run_model(
    model_spec: str,
    model: Model | AsyncModel,
    samples: Sequence[Sample] | StreamedLoad,
    spec: RunSpec,
    store: Store,
    *,
    executor: Executor | None = None,
    progress: ProgressSink | None = None,
    meter: CostMeter | None = None,
    sink: ScoreSink | None = None,
    on_chunk: Callable[[list[Sample]], None] | None = None,
) -> ModelOutcome:
    """Answer every (sample, repeat) with one model, resuming from the store, and score it.

    The samples go in chunks of `CHUNK_SAMPLES`: each is planned, answered, scored, handed
    to `sink` and dropped. A request whose key an earlier chunk asked is read back from the
    store, not asked or counted again, so the counts and calls are those of one chunk.
    Multi-round dialogues are one chunk (a round needs the answers of the earlier rounds).
    A `StreamedLoad` is given again chunk by chunk (`StreamedLoad.chunks`: the chunks its
    first read kept, else the source read again), each chunk first handed to `on_chunk` (`execute_run` records the samples of its first model's chunks).

    Each chunk's Scores go to `sink` (`execute_run` stores them); without one they are kept
    on the outcome's `ModelOutcome.scores`. With a `meter` whose limit is reached (before or
    while this model runs), the requests not yet answered are stored as ``budget`` errors
    instead of being sent.
    """
    if spec.formulate.method == "likelihood" and not model.capabilities.likelihood:
        raise ValueError(
            f"model {model_spec!r} cannot do likelihood inference; use --method generate or a "
            "white-box backend such as hf:"
        )
    if spec.formulate.method == "mark_logprob" and not model.capabilities.mark_logprobs:
        raise ValueError(
            f"model {model_spec!r} does not expose token log-probabilities; use --method "
            "generate, or an openai: backend whose server supports logprobs"
        )
    executor = executor or LocalExecutor()
    progress = progress or NullProgress()
    outcome = ModelOutcome(spec=model_spec, identity=model.identity)
    stages = None if isinstance(samples, StreamedLoad) else dialogue_stages(samples)
    if stages is not None and len(spec.frame_policies()) > 1:
        # A dialogue's rounds are planned round by round (`_run_dialogues`), one policy each.
        raise ValueError(
            "--frames with several policies asks each sample again under each; multi-round "
            "dialogues cannot be asked so: give one policy"
        )
    # What the executor starts for this model (Ray: its replicas, an hf model's weights) serves
    # every chunk, and ends with the model's run however that ends (an error, a Ctrl-C).
    with model_session(executor, model_spec, model):
        if stages is None:
            chunks, total = _chunks_of(samples)
            _run_chunks(
                model_spec, model, chunks, total, spec, store, executor, progress, outcome,
                meter, sink, on_chunk,
            )  # fmt: skip
        else:
            _run_dialogues(
                model_spec, model, stages, spec, store, executor, progress, outcome, meter, sink
            )
    return outcome


def _chunks_of(samples: Sequence[Sample] | StreamedLoad) -> tuple[Iterable[list[Sample]], int]:
    """`samples` a chunk at a time (of `CHUNK_SAMPLES`, or read again), and how many in all."""
    if isinstance(samples, StreamedLoad):
        return samples.chunks(), samples.count
    return (
        list(samples[start : start + CHUNK_SAMPLES])
        for start in range(0, len(samples), CHUNK_SAMPLES)
    ), len(samples)


def _run_chunks(
    model_spec: str,
    model: Model | AsyncModel,
    chunks: Iterable[list[Sample]],
    total: int,
    spec: RunSpec,
    store: Store,
    executor: Executor,
    progress: ProgressSink,
    outcome: ModelOutcome,
    meter: CostMeter | None,
    sink: ScoreSink | None,
    on_chunk: Callable[[list[Sample]], None] | None,
) -> None:
    """`run_model`'s samples without dialogues, a chunk at a time (`total` in all)."""
    earlier = EarlierKeys()
    start = 0
    for chunk in chunks:
        if on_chunk is not None:
            on_chunk(chunk)
        rows = plan_requests(chunk, spec, model.identity)
        stored = earlier.stored([ask.key for _, ask in rows], store)
        fresh = [r for r in rows if r[1].key not in stored] if stored else rows
        # A run of several chunks has a bar per chunk, saying which samples it asks.
        shown: ProgressSink = (
            progress if len(chunk) == total else _ChunkProgress(progress, start, len(chunk), total)
        )
        responses = _answer(model_spec, model, fresh, spec, store, executor, shown, outcome, meter)
        earlier.add(responses)
        responses.update(stored)
        scores = [
            with_usage(
                score_response(model_spec, sample, req, responses[req.key], spec.formulate),
                responses[req.key],
            )
            for sample, req in rows
        ]
        start += len(chunk)
        del chunk, rows, fresh, responses, stored  # dropped before the next chunk is read
        outcome.take(scores, sink)


def _run_dialogues(
    model_spec: str,
    model: Model | AsyncModel,
    stages: list[list[Sample]],
    spec: RunSpec,
    store: Store,
    executor: Executor,
    progress: ProgressSink,
    outcome: ModelOutcome,
    meter: CostMeter | None,
    sink: ScoreSink | None,
) -> None:
    """`run_model`'s samples with multi-round dialogues, round by round, as one chunk."""
    # Multi-round dialogues run round by round: each round's prompt carries the earlier
    # questions with the model's own answers, so it can only be built once those exist.
    turns: dict[tuple[str, int], list[Turn]] = {}
    made: list[Score] = []
    for stage in stages:
        rows = _plan_dialogue_round(stage, spec, model.identity, turns)
        responses = _answer(
            model_spec, model, rows, spec, store, executor, progress, outcome, meter
        )
        for sample, req in rows:
            score = score_response(model_spec, sample, req, responses[req.key], spec.formulate)
            with_usage(score, responses[req.key])
            made.append(score)
            if "dialogue_id" not in sample.metadata:
                continue  # an ordinary row in a file with dialogues: no later round needs it
            # The model's own answer goes into the next round, its thinking does not (as
            # thinking models' chat templates drop earlier thinking).
            said: str | None = (
                _answer_text(model_spec, responses[req.key])
                if req.method == "generate"
                else score.prediction_text
            )
            turns.setdefault(_dialogue_key(sample, req.repeat), []).extend(
                [Turn(role="user", content=req.prompt), Turn(role="assistant", content=said or "")]
            )
    outcome.take(made, sink)


class _ChunkProgress:
    """A progress sink whose bars name the chunk of samples they are for."""

    def __init__(self, sink: ProgressSink, start: int, size: int, total: int) -> None:
        self._sink = sink
        self._part = f"samples {start + 1:,}-{start + size:,} of {total:,}"

    def start(self, model: str, total: int, cached: int) -> None:
        """Open the bar, its label the model's and the chunk's."""
        self._sink.start(f"{model} ({self._part})", total, cached)

    def advance(self, done: int, errors: int) -> None:
        """Move the bar."""
        self._sink.advance(done, errors)

    def finish(self) -> None:
        """Close the bar."""
        self._sink.finish()


class EarlierKeys:
    """The request keys earlier chunks of one model's run answered (as 64-bit digests).

    A request asked in an earlier chunk (two samples asking the same thing) is read back from
    the store rather than asked and counted again, as a run held whole asks it once. Kept as
    a sorted array (8 bytes a key), not a set of strings; a digest that matches by chance is
    told apart by the store, which answers only for the whole key.
    """

    def __init__(self) -> None:
        self._prefixes = np.empty(0, dtype=np.uint64)

    @staticmethod
    def _of(keys: Iterable[str]) -> np.ndarray[Any, np.dtype[np.uint64]]:
        digest = hashlib.blake2b  # any key text, hex or not, to 8 bytes
        return np.fromiter(
            (int.from_bytes(digest(k.encode(), digest_size=8).digest()) for k in keys),
            dtype=np.uint64,
        )

    def add(self, keys: Iterable[str]) -> None:
        """Note `keys` as answered (and stored)."""
        self._prefixes = np.union1d(self._prefixes, self._of(keys))

    def among(self, keys: Sequence[str]) -> list[bool]:
        """For each of `keys`, whether it was added (or only its digest: rare, see `stored`)."""
        if not self._prefixes.size:
            return [False] * len(keys)
        hit: list[bool] = np.isin(self._of(keys), self._prefixes).tolist()
        return hit

    def stored(self, keys: Sequence[str], store: Store) -> dict[str, Response]:
        """Key → stored response (errors too), for those of `keys` an earlier chunk answered."""
        if not self._prefixes.size:
            return {}
        maybe = [k for k, h in zip(keys, self.among(keys), strict=True) if h]
        return store.get_responses(dict.fromkeys(maybe), include_errors=True) if maybe else {}


def _answer_text(model_spec: str, response: Response) -> str:
    thought = split_answer(
        response.text,
        reasoning=response.reasoning,
        finish_reason=response.finish_reason,
        tags=tags_for_model(model_spec),
    )
    return thought.answer


def _dialogue_key(sample: Sample, repeat: int) -> tuple[str, int]:
    return str(sample.metadata["dialogue_id"]), repeat


def dialogue_stages(samples: Sequence[Sample]) -> list[list[Sample]] | None:
    """Samples grouped by dialogue round, or None when no sample belongs to a dialogue.

    A dialogue is the samples sharing ``metadata["dialogue_id"]``, ordered by
    ``metadata["round"]`` (default 0); samples outside any dialogue run in the first stage.

    Raises:
        ValueError: A round is not an integer, or a dialogue repeats a round.

    """
    if not any("dialogue_id" in s.metadata for s in samples):
        return None
    by_round: dict[int, list[Sample]] = {}
    seen: set[tuple[str, int]] = set()
    for s in samples:
        if "dialogue_id" not in s.metadata:
            by_round.setdefault(0, []).append(s)
            continue
        rnd = s.metadata.get("round", 0)
        if not isinstance(rnd, int) or isinstance(rnd, bool):
            raise ValueError(f"sample {s.id}: metadata.round must be an integer, got {rnd!r}")
        key = (str(s.metadata["dialogue_id"]), rnd)
        if key in seen:
            raise ValueError(f"sample {s.id}: dialogue {key[0]!r} has round {rnd} twice")
        seen.add(key)
        by_round.setdefault(rnd, []).append(s)
    return [by_round[r] for r in sorted(by_round)]


def _plan_dialogue_round(
    stage: Sequence[Sample],
    spec: RunSpec,
    identity: ModelIdentity,
    turns: dict[tuple[str, int], list[Turn]],
) -> list[tuple[Sample, Ask]]:
    rows = []
    formulator = Formulator(spec.formulate, spec.gen, spec.seed, spec.repeats)
    ident = identity.cache_id()
    for sample in stage:
        if "dialogue_id" not in sample.metadata:
            rows.extend(plan_requests([sample], spec, identity))
            continue
        for repeat in range(spec.repeats):
            earlier = turns.get(_dialogue_key(sample, repeat), [])
            # The sample's own history (if any) comes first, then the rounds asked so far.
            online = Sample.model_validate({**dict(sample), "history": [*sample.history, *earlier]})
            rows.append((sample, _keyed(formulator, online, repeat, ident)))
    return rows


def _answer(
    model_spec: str,
    model: Model | AsyncModel,
    rows: Sequence[tuple[Sample, Ask]],
    spec: RunSpec,
    store: Store,
    executor: Executor,
    progress: ProgressSink,
    outcome: ModelOutcome,
    meter: CostMeter | None = None,
) -> dict[str, Response]:
    """Responses for every row's request: from the store, or from the model (stored first)."""
    unique: dict[str, Ask] = {}
    for _, ask in rows:
        unique.setdefault(ask.key, ask)
    return answer_requests(
        model_spec,
        model,
        unique,
        store,
        executor=executor,
        progress=progress,
        outcome=outcome,
        meter=meter,
        no_cache=spec.no_cache,
    )


def answer_requests(
    model_spec: str,
    model: Model | AsyncModel,
    unique: Mapping[str, Ask | Request],
    store: Store,
    *,
    executor: Executor,
    progress: ProgressSink,
    outcome: ModelOutcome,
    meter: CostMeter | None = None,
    no_cache: bool = False,
) -> dict[str, Response]:
    """Responses for keyed requests: from the store, or from the model (stored first).

    The one path every model call takes, a judge's included: stored successes are reused
    (errors are asked again), requests the model cannot take are stored as errors without a
    call, the rest go to `executor` (or, for a `SpecExecutor`, to replicas building their
    own model) and each batch is stored the moment it returns. Counts and usage are added to
    `outcome`.

    Args:
        model_spec: The model's spec as given (stored with each response).
        model: The loaded model (its identity and capabilities).
        unique: Key → the ask or request with that key (one per key).
        store: Where responses are read and written.
        executor: Where requests run.
        progress: Progress sink.
        outcome: Counts to add to (requests, cached, called, refused, not_sent, errors,
            tokens).
        meter: Spending limit; once reached, what is left is stored as ``budget`` errors.
        no_cache: Ignore stored responses.

    Returns:
        Key → response, for every key of `unique`.

    """
    responses = {} if no_cache else store.get_responses(unique)
    outcome.requests += len(unique)
    outcome.cached += len(responses)
    pending = [
        a if isinstance(a, Request) else a.to_request()
        for k, a in unique.items()
        if k not in responses
    ]
    rejected = [(r, e) for r in pending if (e := _input_error(model, r)) is not None]
    if rejected:
        store.put_responses(model_spec, [r for r, _ in rejected], [e for _, e in rejected])
        responses.update((e.key, e) for _, e in rejected)
        outcome.not_sent += len(rejected)
        pending = [r for r in pending if r.key not in responses]

    def on_batch(batch: Sequence[Request], got: list[Response]) -> None:
        # Stored before anything else happens to it: a crash after this line loses nothing.
        store.put_responses(model_spec, batch, got)
        for resp in got:
            responses[resp.key] = resp
        # A backend's own budget answers a budget error without sending the request, and a
        # sample whose images a request cannot carry is refused before it is sent: each
        # counted apart, so that "sent" says what reached the server.
        refused = sum(1 for r in got if r.error is not None and r.error.type == "budget")
        held = sum(
            1 for r in got if r.error is not None and r.error.type != "budget" and not r.error.sent
        )
        outcome.refused += refused
        outcome.not_sent += held
        outcome.called += len(batch) - refused - held
        progress.advance(len(batch), sum(1 for r in got if r.error is not None))
        if meter is not None:
            meter.add(model_spec, got, batch)
            if meter.exhausted:
                # The executor sends nothing more; what is in flight still comes back here
                # (stored and counted: it is paid for); what is left unsent is stored below.
                raise StopSending

    progress.start(model_spec, len(unique), len(unique) - len(pending))
    spent = meter is not None and meter.exhausted  # on an earlier model: nothing more is sent
    if meter is not None and isinstance(model, MeteredModel):
        # Its own retries ask the meter first: a paid reply it cannot use is counted at once.
        model.spend_guard = meter.guard(model_spec)
    sent_before = getattr(model, "requests_sent", None)
    try:
        # StopSending, raised by on_batch once the money is spent, stops the executor once
        # the batches in flight are back; what is left unsent is stored below as budget errors.
        with contextlib.suppress(StopSending):
            if pending and not spent and isinstance(executor, SpecExecutor):
                # Replicas elsewhere build their own model from the spec (the Ray executor).
                executor.execute_spec(model_spec, model, pending, on_batch)
            elif pending and not spent:
                executor.execute(model, pending, on_batch)
    finally:
        progress.finish()
        if isinstance(model, MeteredModel):
            model.spend_guard = None
        sent_after = getattr(model, "requests_sent", None)
        if isinstance(sent_before, int) and isinstance(sent_after, int):
            outcome.attempts += sent_after - sent_before
    unsent = [r for r in pending if r.key not in responses]
    if unsent and meter is not None and meter.exhausted:
        # As a backend's request budget does: stored as budget errors, which a re-run asks again.
        info = meter.budget_error()
        errors = [Response(key=r.key, error=info) for r in unsent]
        store.put_responses(model_spec, unsent, errors)
        responses.update((e.key, e) for e in errors)
    for resp in (responses[k] for k in unique):
        outcome.latency_s_total += resp.latency_s
        if resp.error is not None:
            outcome.errors += 1
        outcome.redacted += resp.redacted
        if resp.usage is not None:
            outcome.prompt_tokens += resp.usage.prompt_tokens or 0
            outcome.completion_tokens += resp.usage.completion_tokens or 0
    return responses


def priced(spec: RunSpec) -> RunSpec:
    """`spec` with each model's price (`RunSpec.prices` by model spec), checked for ``max_cost``.

    The spec's `RunSpec.prices` are read as a price table (`load_price_table` reads a file of
    them); each model, and each judge of ``spec.judge``, gets its ``price=`` option or its
    table entry (`resolve_prices`). A spec priced already comes back the same.

    Raises:
        ValueError: A ``price=`` option is invalid, or ``max_cost`` is set and a model or a
            judge has no price.

    """
    judges = list(spec.judge.judges) if spec.judge is not None else []
    prices = checked_prices(spec.models, judges, spec.prices, spec.max_cost)
    return spec.model_copy(update={"prices": prices})


def checked_prices(
    models: Sequence[str],
    judges: Sequence[str],
    table: Mapping[str, Price],
    max_cost: float | None,
) -> dict[str, Price]:
    """The price of each model and judge that has one, every one of them priced under a budget.

    What `priced` checks of a run, for any command that pays for calls (``compare --judge``
    and ``arena judge`` price their judge alone).

    Args:
        models: The model specs (none where only judges are paid for).
        judges: The judge specs.
        table: A price table (`load_price_table`); a spec's ``price=`` option wins.
        max_cost: The budget (``--max-cost``), or None.

    Raises:
        ValueError: A ``price=`` option is invalid, or ``max_cost`` is set and a model or a
            judge has no price.

    """
    prices = resolve_prices(dict.fromkeys([*models, *judges]), dict(table))
    if max_cost is not None:
        unpriced = [m for m in dict.fromkeys([*models, *judges]) if m not in prices]
        if unpriced:
            # A spec without models is a stored run's judging: only its judges are paid for.
            what = " and ".join(w for w, some in (("model", models), ("judge", judges)) if some)
            one = len(unpriced) == 1
            raise ValueError(
                f"--max-cost needs a price for every {what}; "
                f"{_listed([shown_spec(m) for m in unpriced])} "
                f"{'has' if one else 'have'} none: add price=IN:OUT to "
                f"{'its spec' if one else 'their specs'} (dollars per million prompt and "
                "completion tokens) or an entry in a --prices file"
            )
    return prices


def _listed(names: Sequence[str]) -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b' and 'c'``: names quoted, for a sentence."""
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def connect_ray_executor(spec: RunSpec) -> RayExecutor:
    """The Ray executor `spec` asks for, connected to its cluster (Ray is an extra).

    The caller closes it (which shuts down a Ray instance it started).

    Raises:
        ValueError: The cluster cannot be reached.
        RegistryError: Ray is not installed.

    """
    from lmmprobe.run.ray_executor import RayExecutor

    executor = RayExecutor.from_spec(spec)
    executor.connect()
    return executor


def execute_run(
    spec: RunSpec,
    *,
    store: Store | None = None,
    progress: ProgressSink | None = None,
    executor: Executor | None = None,
    run_id: str | None = None,
    reuse: bool = True,
    check_load: Callable[[LoadResult | StreamedLoad], None] | None = None,
) -> RunOutcome:
    """Run a spec end to end (`_execute_run`), its videos sampled with its frame policy.

    The policy holds for every read of the data, the first and each chunk read again, so
    both sample the same frames. With `reuse` (the default), a run identical to an earlier
    complete run of the store copies its rows (`lmmprobe.store.reuse`); False plans, answers
    and scores every row, the path the copy is held to. `check_load` is called with the data
    once it is read, before the run is recorded or any model asked: what it raises fails the
    run there (a layer above checks its judging of that data: `lmmprobe.api.evaluate`).
    """
    with frame_policy(spec.frame_policies()):
        return _execute_run(
            spec,
            store=store,
            progress=progress,
            executor=executor,
            run_id=run_id,
            reuse=reuse,
            check_load=check_load,
        )


def _execute_run(
    spec: RunSpec,
    *,
    store: Store | None = None,
    progress: ProgressSink | None = None,
    executor: Executor | None = None,
    run_id: str | None = None,
    reuse: bool = True,
    check_load: Callable[[LoadResult | StreamedLoad], None] | None = None,
) -> RunOutcome:
    """Run a spec end to end: load data, resolve models, answer, score, record in the store.

    Requests run on `executor` when given, else where ``spec.executor`` says: in this process,
    or on Ray replicas (`RayExecutor`, started here and shut down at the end). The driver
    loads each model only for its identity and capabilities; an ``hf`` model's weights load
    on its first request, which under Ray is sent to the replicas alone.

    Raises:
        RegistryError: A model, data source, matcher or prompt style is unknown or not
            installed.
        DataError: The data cannot be read, or is invalid in strict mode.
        InputErrors: Several of the models and the data are wrong: each is named, none started.
        ValueError: The spec asks for something a model cannot do, or gives replica settings
            without the Ray executor.
        RunAborted: The run stopped early (server unreachable or unhealthy, key refused, a
            broken backend); the run is recorded with the exception's `status` and a re-run
            resumes it.

    """
    check_names(spec.formulate)  # before the store or any model is touched
    spec.check_executor_settings()
    spec = priced(spec)
    own_store = store is None
    store = store or Store(spec.db)
    own_executor: RayExecutor | None = None
    servers: list[StartableModel] = []  # models that run a server of their own: stopped below
    load: LoadResult | StreamedLoad | None = None
    try:
        commit = git_commit_later()  # a subprocess: it runs while the data loads
        changes = source_changes_later()
        # Resolve everything that can fail on bad input before any model work starts.
        with remembered_images(store):  # an image file checked by an earlier run is not again
            inputs = resolve_inputs(spec, chunked=True, remember=store)
        models, load = inputs.models, inputs.load
        check_media(models, load, spec)
        if check_load is not None:
            check_load(load)
        servers = [m for _, m in models if isinstance(m, StartableModel)]
        if servers and spec.executor != "local":
            raise ValueError(
                "a served model (vllm:, sglang:) runs its server on this machine and is asked "
                "from here: use --executor local (the default) with it"
            )
        _check_results_folder(Path(spec.out) if spec.out else store.path.parent)
        if executor is None and spec.executor != "local":
            # Ray is joined (or started) now: a wrong address fails before the run is recorded.
            own_executor = executor = connect_ray_executor(spec)
        run_id = run_id or new_run_id()
        out_dir = Path(spec.out) if spec.out else store.path.parent / run_id
        for server in servers:
            # Its log goes to the run folder; its identity names the server it started.
            server.start(out_dir)
        identities = {s: m.identity for s, m in models}
        streamed = isinstance(load, StreamedLoad)
        fingerprint = (
            load.fingerprint if isinstance(load, StreamedLoad) else data_fingerprint(load.samples)
        )
        places = load.places if isinstance(load, StreamedLoad) else image_places(load.samples)
        manifest = build_manifest(
            spec, identities, fingerprint, load.count, commit=commit, places=places
        )
        manifest["scorer_version"] = SCORER_VERSION
        changed = changes.result()
        dirty = str(manifest.get("git_commit") or "").endswith("+dirty")
        if dirty or changed not in (None, NO_SOURCE_CHANGES):
            # The uncommitted code itself: a checkout edited since an identical run is not
            # that run's code (`lmmprobe.store.reuse` compares the manifests). Untracked
            # modules count with no tracked file changed (no "+dirty"): a matcher or benchmark
            # module added to a discovered package is imported all the same (re-test 17). A
            # checkout dirty only outside the package records that its code is the commit's.
            manifest["source_changes"] = changed
        recorded_spec = spec.model_dump(mode="json")
        store.create_run(run_id, recorded_spec, str(out_dir))
        # An identical earlier run (same data, spec, manifest, scorer; its answers untouched
        # since: `lmmprobe.store.reuse`) gives its rows, copied in SQL, instead of this run
        # planning, scoring and writing the same rows one by one.
        reused = (
            None
            if spec.no_cache or not reuse
            else store.reuse_identical_run(
                run_id, recorded_spec, manifest, spec.models, rows=planned_rows(load, spec)
            )
        )
        if reused is None and not isinstance(load, StreamedLoad):
            store.put_samples(run_id, load.samples)
        store.update_run(run_id, manifest=manifest)
        meter = CostMeter(spec.max_cost, spec.prices)
        outcome = RunOutcome(run_id, spec, store.path, out_dir, load, manifest, meter=meter)
        if reused is not None:
            outcome.reused_from = reused.source
            outcome.models = [_reused_outcome(s, m.identity, reused.totals[s]) for s, m in models]
            outcome.status = answers_status(outcome)
            # Its rows are the source's, scored from the answers as they were at its mark
            # (checked unchanged since, in the copy's transaction): that is their time.
            store.mark_rows_scored(run_id, outcome.status, manifest, at=reused.rows_scored_at)
            return outcome
        # Data read again chunk by chunk reuses the image checks of its first read.
        reading = remembered_images(store) if streamed else contextlib.nullcontext()
        try:
            with reading:
                for i, (model_spec, model) in enumerate(models):
                    mo = run_model(
                        model_spec,
                        model,
                        load if isinstance(load, StreamedLoad) else load.samples,
                        spec,
                        store,
                        executor=executor,
                        progress=progress,
                        meter=meter,
                        # Each chunk's Scores are stored as it is scored and dropped: results
                        # are built from the stored rows (`Store.rows`).
                        sink=functools.partial(store.put_scores, run_id),
                        # The first model records each chunk's samples (written with its
                        # answers, as `put_samples` says) before it asks them.
                        on_chunk=functools.partial(store.put_samples, run_id)
                        if streamed and i == 0
                        else None,
                    )
                    outcome.models.append(mo)
                    outcome.spent = meter.spent
        except KeyboardInterrupt as exc:
            store.update_run(run_id, status="interrupted")
            exc.run_id = run_id  # type: ignore[attr-defined]  # for the command's last line
            raise
        except RunAborted as exc:
            # stopped_unreachable / stopped_auth / stopped_unhealthy: everything answered is
            # stored; a re-run resumes.
            exc.run_id = run_id
            store.update_run(run_id, status=exc.status)
            raise
        except BaseException as exc:
            try:
                store.update_run(run_id, status="failed")
            except StoreError as also:
                # The store itself failed (a full disk): marking the run fails the same way.
                # The first fault is the one to report; the run, whose process is gone, is
                # marked when the store is next opened.
                log.debug("could not mark run %s failed: %s", run_id, also)
                raise exc from None
            raise
        outcome.status = answers_status(outcome)
        # Every row is stored: the run is complete from here, its judging and results still to
        # come. The mark's time is what a later identical run checks its answers against
        # (`lmmprobe.store.reuse`), not the run's last update, which those steps move on.
        store.mark_rows_scored(run_id, outcome.status, manifest)
        return outcome
    except BaseException:
        close_load(load)  # a run that failed hands back no load: the spill of its data goes
        raise
    finally:
        for server in servers:
            server.stop()  # on success, error and Ctrl-C alike (a reaper covers a SIGKILL)
        if own_executor is not None:
            own_executor.close()  # shuts down a Ray instance it started
        if own_store:
            store.close()


def _reused_outcome(model_spec: str, identity: ModelIdentity, totals: AnswerTotals) -> ModelOutcome:
    """A model's counts where its rows were copied: those of a re-run answered from the store.

    Every request was answered from the store (the earlier run was complete and its answers
    are still stored), none sent; tokens, latency and redactions are its answers' totals.
    """
    return ModelOutcome(
        spec=model_spec,
        identity=identity,
        requests=totals.requests,
        cached=totals.requests,
        prompt_tokens=totals.prompt_tokens,
        completion_tokens=totals.completion_tokens,
        latency_s_total=totals.latency_s_total,
        redacted=totals.redacted,
        rows=totals.rows,
    )


def _check_results_folder(folder: Path) -> None:
    """Refuse a results folder whose name is not UTF-8, before anything is started or recorded.

    The store records where a run's results are as text, which such a name (bytes Python
    reads as lone surrogates) cannot be; the folder would be named wrongly or not at all.

    Raises:
        ValueError: One line naming the folder, its bytes escaped (`shown_path`).

    """
    try:
        str(folder).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"the results folder '{shown_path(folder)}' has a name that is not UTF-8, which the "
            "store cannot record; give --out (or the store's folder) a UTF-8 name"
        ) from None
