"""The judging step: judge a run's answers with judge models, through the runner and the store.

After a run's answers are scored (`lmmprobe.run.execute_run`), each answer a judge protocol
applies to is decided by the protocol's rules (``--judge-when miss``, where they read it) or
by every judge (``--judge A --judge B``; each of the protocol's repeats is its own call). A
judge call is a request like a model's: it goes through `lmmprobe.run.answer_requests` (stored
responses reused, the rest sent concurrently through the local or Ray executor and stored batch
by batch), keyed by `lmmprobe.run.judge_key` (judge identity, protocol name and version, the
rendered prompt that quotes the answer, any image sent, decoding settings).

A judge that fails (an error response) or replies unreadably leaves its verdict ``unjudged``
with the reason; never a guess. On resume an error is asked again (errors are never reused, as
for models); an unreadable reply is stored like any reply and read again, not asked again: the
same request to the same judge would give the same reply, and a changed reading comes with a
new protocol version, whose key asks anew.

A protocol that grades several answers in one prompt (`lmmprobe.judge.protocol.grouped`:
CharXiv's descriptive questions, five of one template a prompt) has its groups fixed by the
reference's rule over the whole run: its answers are held until every chunk of the model's rows
is read (a group's last answer can be in the run's last chunk), put in the data's order, split by
the protocol's group, repeat and attempt, and cut `batch` at a time (`group_asks`); each group
is one request keyed by its whole prompt, its reply read once into a verdict per answer.

Verdicts are stored (`Store.put_judgements`) and put on each `Score.judgements`; the judged
figures (`judge_score`, `judge_coverage`) are computed from them by the run metrics, and the
per-model counts and agreement figures (`JudgeModelStats`) go to results.json.
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import Any

from lmmprobe.data.base import (
    ChunkedLoad,
    LoadResult,
    SampleKind,
    parse_source_spec,
    sample_kind,
)
from lmmprobe.data.benchmarks.base import BENCHMARKS
from lmmprobe.judge.agreement_figures import AgreementRow, agreement_rows, figures_of
from lmmprobe.judge.pairwise import PairwiseJudgement
from lmmprobe.judge.protocol import (
    JUDGE_PROTOCOLS,
    JudgeItem,
    JudgePrompt,
    JudgeProtocol,
    JudgeWhen,
    Reading,
    grouped,
    reply_answer,
    settled,
    stages_of,
)
from lmmprobe.judge.protocols.lmmprobe_open import OpenProtocol
from lmmprobe.judge.template import load_template
from lmmprobe.models.base import AsyncModel, Model, StartableModel, load_model
from lmmprobe.parse.thinking import split_answer, tags_for_model
from lmmprobe.registry import RegistryError
from lmmprobe.run import (
    CostMeter,
    Executor,
    LocalExecutor,
    ModelOutcome,
    NullProgress,
    ProgressSink,
    RunAborted,
    RunOutcome,
    answer_requests,
    judge_key,
    model_session,
)
from lmmprobe.run.runner import CHUNK_SAMPLES, EarlierKeys
from lmmprobe.schema import (
    ContentPart,
    DecidedBy,
    JudgeConfig,
    Judgement,
    Message,
    Price,
    Request,
    Response,
    Sample,
    Score,
)
from lmmprobe.store import Store
from lmmprobe.store.sqlite import score_from_row

__all__ = [
    "UNJUDGED_WHY",
    "JudgeModelStats",
    "JudgeRunOutcome",
    "JudgingFailed",
    "Protocols",
    "check_config",
    "judge_run",
    "nothing_read_why",
    "resolve_protocols",
    "score_chunks",
]

log = logging.getLogger(__name__)

DEFAULT_CHOICE = "lmmprobe-choice"
DEFAULT_OPEN = "lmmprobe-open"


@dataclass
class JudgeModelStats:
    """How one model's answers were judged."""

    decided: Counter[str] = field(default_factory=Counter)
    """Answers by the path that decided them: rule, judge, unjudged."""
    protocols: dict[str, str] = field(default_factory=dict)
    """Protocol name → version, of the protocols applied."""
    calls: dict[str, ModelOutcome] = field(default_factory=dict)
    """Judge spec → its requests (cached, called, errors, tokens)."""
    agreement: dict[str, Any] = field(default_factory=dict)
    """Agreement figures between judges and with the rules (`agreement_figures`)."""
    cost: dict[str, float] = field(default_factory=dict)
    """Judge spec → dollars its responses about this model's answers cost at its price (each
    response once, those from the store too, as the model's ``cost`` metric counts); priced
    judges only."""
    budget: int = 0
    """Judge requests left unsent because ``max_cost`` was reached (stored as ``budget``
    errors: their answers are unjudged and a re-run asks them)."""
    unjudged: Counter[str] = field(default_factory=Counter)
    """Unjudged verdicts (one per judge call about an answer) by why (`UNJUDGED_WHY`): a
    failed call is asked again by the same command, an unreadable or cut-off reply is not."""
    unjudged_by: dict[str, Counter[str]] = field(default_factory=dict)
    """Judge spec → its unjudged verdicts by why: `unjudged` judge by judge, so that each
    judge's verdicts read and unjudged add up to those asked of it."""
    failed_calls: Counter[str] = field(default_factory=Counter)
    """Judge spec → its requests that ended in an error other than ``budget``."""
    first_error: dict[str, str] = field(default_factory=dict)
    """Judge spec → the first such error, ``TYPE: message`` (what a failing judge says)."""
    read: Counter[str] = field(default_factory=Counter)
    """Judge spec → its verdicts that were read (decided by it)."""
    unsent: Counter[str] = field(default_factory=Counter)
    """Judge spec → its requests left unsent by ``max_cost`` (``budget`` errors)."""
    first_unreadable: dict[str, str] = field(default_factory=dict)
    """Judge spec → the start of its first reply that could not be read."""
    asked: Counter[str] = field(default_factory=Counter)
    """Judge spec → its verdicts asked for (one per answer and protocol repeat); more than
    its requests where answers share a judge prompt (such a prompt is asked once)."""
    answered: int = 0
    """Rows of the model whose request returned an answer, not cut off: what a named
    ``--judge-protocol`` that applied to none of them could have judged."""
    settled: int = 0
    """Answers decided without a judge call whatever the mode (`settled`: an empty answer is
    wrong); counted under ``decided["rule"]`` too."""

    def count_decided(self, judgements: Sequence[Judgement]) -> None:
        """Count one answer under the path that decided it: a rule, else a judge, else none.

        An answer no protocol applied to (no verdicts) is not counted.
        """
        if judgements:
            by = {j.decided_by for j in judgements}
            self.decided["rule" if "rule" in by else "judge" if "judge" in by else "unjudged"] += 1

    def results(self, judges: Sequence[str]) -> dict[str, Any]:
        """How this model's answers were judged, as results.json records it (``judge``).

        Args:
            judges: The run's judge specs, in order.

        """
        return {
            "judges": list(judges),
            "protocols": dict(self.protocols),
            "decided": {k: self.decided.get(k, 0) for k in ("rule", "judge", "unjudged")},
            "settled": self.settled,
            "calls": {
                j: {
                    "requests": c.requests,
                    "verdicts": self.asked.get(j),
                    "cached": c.cached,
                    "called": c.called,
                    "errors": c.errors,
                    "read": self.read.get(j, 0),
                    "unjudged": _by_why(self.unjudged_by.get(j, {})),
                    "cost": self.cost.get(j),
                }
                for j, c in self.calls.items()
            },
            "unjudged": _by_why(self.unjudged),
            "agreement": self.agreement,
        }


@dataclass
class JudgeRunOutcome:
    """What the judging step did to a run: per model, and what it ran with."""

    config: JudgeConfig
    models: dict[str, JudgeModelStats] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)
    """What the manifest records under ``judge`` (judges' identities, protocols, versions)."""
    failed: dict[str, str] = field(default_factory=dict)
    """Judge spec → why it judged nothing: it was asked and no verdict of it could be read
    (every call failed: a misspelt model, a refused key; or every reply was unreadable or cut
    off: a model that cannot follow the protocol); the run is then ``judging_failed``, never
    ``complete``."""
    not_applied: str | None = None
    """Why nothing was judged although the run has answers: the ``--judge-protocol`` named
    applies to none of them (CharXiv's grader on other data, ``lmmprobe-choice`` on open
    rows); the run is then ``judging_failed`` too. None otherwise."""

    def results(self) -> dict[str, dict[str, Any]]:
        """Model spec → how its answers were judged, as results.json records it (``judge``)."""
        judges = list(self.config.judges)
        return {model: stats.results(judges) for model, stats in self.models.items()}


JUDGING_FAILED = "judging_failed"
"""The status of a run whose judging step failed: it raised, or a judge read nothing (every
call failed, or every reply was unreadable or cut off). Its answers are stored; the same
command (or ``lmmprobe judge``) judges it again."""

IMAGE_CHANGED = "image changed"
"""Why a verdict is unjudged when the sample's recorded image file changed since the run or
cannot be read (`RunOutcome.unusable_images`): the judge is not asked."""

UNJUDGED_WHY = (
    "failed call", "not sent (budget)", "unreadable reply", "truncated", "not asked",
    IMAGE_CHANGED,
)  # fmt: skip
"""Why a judge's verdict is unjudged, in the order the terminal lists them."""


def _by_why(counts: Mapping[str, int]) -> dict[str, int]:
    """Unjudged verdicts by why, in `UNJUDGED_WHY`'s order, the reasons with none left out."""
    return {why: counts[why] for why in UNJUDGED_WHY if counts.get(why)}


class JudgingFailed(RunAborted):
    """The judging step raised after the answers were stored.

    A judge server that would not start, a protocol's bug: the run is recorded
    ``judging_failed`` and the same command judges it again, its answers from the store.
    """

    status = JUDGING_FAILED


@dataclass(frozen=True)
class _Ask:
    """One judge call about one answer (its request is built per judge)."""

    score: Score
    item: JudgeItem
    protocol: JudgeProtocol
    attempt: int
    when: JudgeWhen = "always"
    """The mode the answer is judged in: a later stage of a chained protocol applies its rule
    first under ``miss`` (`_next_stage`)."""


@dataclass(frozen=True)
class _Batch:
    """One judge call about a group of answers of a grouped protocol (`group_asks`)."""

    asks: tuple[_Ask, ...]
    """The group's answers in the order its prompt quotes them (one protocol and attempt)."""

    @property
    def protocol(self) -> JudgeProtocol:
        return self.asks[0].protocol

    @property
    def attempt(self) -> int:
        return self.asks[0].attempt


_Unit = _Ask | _Batch
"""What one judge request is about: one answer, or a group of answers."""


def group_asks(placed: Iterable[tuple[int, _Ask]]) -> list[_Batch]:
    """The groups a grouped protocol's judge is asked about, by the reference's rule.

    Each ask comes with its sample's place in the run's data. The asks are put in the data's
    order (a sample's repeats and attempts kept apart), split by protocol, the protocol's group
    (`GroupedProtocol.group`), repeat and attempt, and each such list is cut ``batch`` at a
    time, the last piece taking what is left: CharXiv's ``build_descriptive_grading_queries``
    over the answers ``preprocess_descriptive_grading_queries`` grouped by template.

    Args:
        placed: (place in the data, ask) for each ask of a grouped protocol.

    Returns:
        The groups, stream by stream in the order each stream's first answer comes.

    """
    streams: dict[tuple[str, str, int, int], list[_Ask]] = {}
    ordered = sorted(placed, key=lambda p: (p[0], p[1].score.repeat, p[1].attempt))
    for _, ask in ordered:
        protocol = grouped(ask.protocol)
        assert protocol is not None  # only a grouped protocol's asks are deferred here
        key = (protocol.name, protocol.group(ask.item), ask.score.repeat, ask.attempt)
        streams.setdefault(key, []).append(ask)
    out: list[_Batch] = []
    for asks in streams.values():
        protocol = grouped(asks[0].protocol)
        assert protocol is not None
        size = protocol.batch
        out += [_Batch(tuple(asks[i : i + size])) for i in range(0, len(asks), size)]
    return out


def split_grouped(asks: Sequence[_Ask]) -> tuple[list[_Ask], list[_Ask]]:
    """`asks` as (those asked one answer a prompt, those of grouped protocols)."""
    single = [a for a in asks if grouped(a.protocol) is None]
    return single, [a for a in asks if grouped(a.protocol) is not None]


def _asks_of(unit: _Unit) -> tuple[_Ask, ...]:
    return unit.asks if isinstance(unit, _Batch) else (unit,)


def _applies(protocol: JudgeProtocol, item: JudgeItem) -> bool:
    # `applies` is an optional member of a protocol; without it, every answered row that was
    # not cut off.
    check = getattr(protocol, "applies", None)
    if callable(check):
        return bool(check(item))
    return item.score.error_type is None and item.score.stage not in ("error", "truncated")


def _configured(name: str, config: JudgeConfig) -> JudgeProtocol:
    """The protocol named `name`, with the run's scale and template where it takes them."""
    protocol = JUDGE_PROTOCOLS.get(name)
    if isinstance(protocol, OpenProtocol):
        template = load_template(config.prompt) if config.prompt else None
        return replace(protocol, scale=config.scale, template=template)
    return protocol


def check_config(config: JudgeConfig, data: str | None = None) -> None:
    """Check what can be checked before a run: the protocol's name, the template, the mode.

    With `data` (the run's data spec) naming a benchmark and no ``--judge-protocol``, the
    mode is checked against the benchmark's official protocol too, so ``--judge-when miss``
    on MM-Vet (graded by its judge only) fails here, before any model is asked.

    Raises:
        RegistryError: The protocol is not registered.
        TemplateError: The ``--judge-prompt`` template is unusable (the message names the
            file and the placeholder).
        ValueError: ``config.when`` is a mode the named protocol, or the official protocol
            of the benchmark `data` names, does not allow.

    """
    if config.prompt is not None:
        load_template(config.prompt)
    if config.protocol is not None:
        protocol = _configured(config.protocol, config)
        if config.when is not None and config.when not in protocol.when:
            raise ValueError(
                f"--judge-when {config.when}: protocol {protocol.name} allows only "
                + " or ".join(protocol.when)
            )
        return
    benchmark = _benchmark_of(data) if data is not None else None
    if benchmark is not None:
        _check_official_when(config, benchmark)


def _benchmark_of(data: str) -> str | None:
    """The benchmark a data spec names (``mmvet``, ``mmvet,path=...``), or None."""
    try:
        name, _, _ = parse_source_spec(data)
    except ValueError:
        return None  # not a spec this can read; loading the data says why
    return name if name in BENCHMARKS else None


def _check_official_when(config: JudgeConfig, benchmark: str) -> None:
    """Refuse a ``--judge-when`` the benchmark's official judge protocol does not allow.

    Raises:
        ValueError: It does not (one line: benchmark, protocol, the modes it allows).

    """
    name = BENCHMARKS.get(benchmark).judge
    if name is None or config.when is None:
        return
    protocol = _configured(name, config)
    if config.when not in protocol.when:
        raise ValueError(
            f"--judge-when {config.when}: benchmark {benchmark} is judged by its official "
            f"protocol {protocol.name}, which allows only --judge-when "
            + " or ".join(protocol.when)
        )


def resolve_protocols(config: JudgeConfig, samples: Sequence[Sample]) -> dict[str, JudgeProtocol]:
    """The protocol of each sample a protocol may apply to (sample id → protocol).

    ``config.protocol`` for every sample when given; else a benchmark sample's official judge
    (`Benchmark.judge`), single-choice samples ``lmmprobe-choice`` and the other samples
    ``lmmprobe-open``. Checked before any call.

    Raises:
        RegistryError: A protocol is not registered.
        TemplateError: ``config.prompt`` cannot be used.
        ValueError: ``--judge-prompt`` is given for no ``lmmprobe-open`` row, or
            ``config.when`` is a mode a benchmark row's official protocol does not allow.

    """
    protocols = Protocols(config)
    out = {sample.id: protocols.of(sample_kind(sample)) for sample in samples}
    protocols.check_prompt()
    return out


class Protocols:
    """The protocol of each kind of sample (`sample_kind`), each configured once.

    What `resolve_protocols` decides sample by sample, decided by kind: data read a chunk at
    a time is checked once by its kinds (`check`, before any call), then each chunk's samples
    get their protocols (`of_samples`).
    """

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self._configured: dict[str, JudgeProtocol] = {}
        self._by_kind: dict[SampleKind, JudgeProtocol] = {}

    def of(self, kind: SampleKind) -> JudgeProtocol:
        """The protocol of samples of `kind`.

        Raises:
            RegistryError: The protocol is not registered.
            ValueError: ``config.when`` is a mode the benchmark's official protocol does not
                allow.

        """
        found = self._by_kind.get(kind)
        if found is not None:
            return found
        benchmark, choice = kind
        name = self.config.protocol
        if name is None and benchmark is not None:
            with contextlib.suppress(RegistryError):
                name = BENCHMARKS.get(benchmark).judge
            if name is not None:
                _check_official_when(self.config, benchmark)
        if name is None:
            name = DEFAULT_CHOICE if choice else DEFAULT_OPEN
        if name not in self._configured:
            self._configured[name] = _configured(name, self.config)
        self._by_kind[kind] = self._configured[name]
        return self._by_kind[kind]

    def check_prompt(self) -> None:
        """Refuse a ``--judge-prompt`` (or ``--judge-scale``) that no protocol met so far uses.

        Raises:
            ValueError: No sample met is judged by ``lmmprobe-open``, the template's (and the
                scale's) only user.

        """
        used = self._configured
        if any(isinstance(p, OpenProtocol) for p in used.values()):
            return
        protocols = ", ".join(sorted(used))
        if self.config.prompt is not None:
            raise ValueError(
                f"--judge-prompt {self.config.prompt}: a template is used by lmmprobe-open "
                f"only, and no row here is judged by it (protocols: {protocols})"
            )
        if self.config.scale != "binary":
            # Else the figures are the protocol's own 0/1 verdicts, the scale asked for unsaid.
            raise ValueError(
                f"--judge-scale {self.config.scale}: a scale is used by lmmprobe-open only, and "
                f"no row here is judged by it (protocols: {protocols})"
            )

    def check(self, kinds: Iterable[SampleKind]) -> None:
        """Check every kind of sample of the data before any call (as `resolve_protocols`).

        Raises:
            RegistryError: A protocol is not registered.
            TemplateError: ``config.prompt`` cannot be used.
            ValueError: As `resolve_protocols`.

        """
        for kind in kinds:
            self.of(kind)
        self.check_prompt()

    def of_samples(self, samples: Iterable[Sample]) -> dict[str, JudgeProtocol]:
        """Sample id → protocol, for kinds `check` saw (no check is made again)."""
        return {s.id: self.of(sample_kind(s)) for s in samples}

    def used(self) -> list[JudgeProtocol]:
        """The protocols of the kinds met so far."""
        return list(self._by_kind.values())


class RunSamples:
    """A run's samples as the judging step reads them: held whole, or again chunk by chunk.

    A run of up to one chunk (a `LoadResult`) is judged as ever: its samples held, its rows
    read `CHUNK_SAMPLES` at a time. A run of more (a `ChunkedLoad`: a run's `StreamedLoad`, a
    stored run's recorded samples) is read again a chunk of samples at a time (a run's data
    from the chunks its first read kept, or read again with each chunk checked against that
    first read: the samples the run asked either way), with that
    chunk's rows of the model: at most one chunk of samples is held. Either way every
    protocol is checked before any call (`Protocols.check`).
    """

    def __init__(self, load: LoadResult | ChunkedLoad, config: JudgeConfig) -> None:
        self.protocols = Protocols(config)
        self._load = load
        self._offset = 0
        self._chunk: list[str] = []
        self._index: dict[str, int] = {}
        self._whole: dict[str, Sample] = {}
        self._whole_protocols: dict[str, JudgeProtocol] = {}
        if isinstance(load, LoadResult):
            self._whole = {s.id: s for s in load.samples}
            self._whole_protocols = self.protocols.of_samples(load.samples)
            self.protocols.check_prompt()
        else:
            self.protocols.check(load.kinds)

    def chunks(
        self, store: Store, run_id: str, model: str
    ) -> Iterator[tuple[list[Score], Mapping[str, Sample], Mapping[str, JudgeProtocol]]]:
        """Model `model`'s rows of run `run_id`, a chunk at a time, with their samples.

        Each chunk comes with the samples and protocols its rows read (sample id → each).
        `model` is the spec as the store records it (`Store.recorded_spec`).

        Raises:
            DataError: The data no longer gives the samples the run asked (`StreamedLoad`).

        """
        self._offset, self._chunk, self._index = 0, list(self._whole), {}
        if isinstance(self._load, LoadResult):
            for scores in score_chunks(store, run_id, model, CHUNK_SAMPLES):
                yield scores, self._whole, self._whole_protocols
            return
        for chunk in self._load.chunks():
            self._offset += len(self._chunk)
            self._chunk, self._index = [s.id for s in chunk], {}
            rows = store.iter_score_rows(run_id, model=model, sample_ids=self._chunk)
            scores = [score_from_row(rec) for rec in rows]
            yield scores, {s.id: s for s in chunk}, self.protocols.of_samples(chunk)
            del chunk, scores  # not held while the next chunk is read

    def place(self, sample_id: str) -> int:
        """The place in the run's data (0 first) of a sample of the chunk `chunks` last gave.

        The order a grouped protocol's groups are formed in (`group_asks`); the stored rows
        come in the order of their sample ids, not of the data.
        """
        if not self._index:
            self._index = {sid: i for i, sid in enumerate(self._chunk)}
        return self._offset + self._index[sample_id]


def _unit_request(unit: _Unit, sees_image: bool, ident: str) -> Request:
    """The request of one judge call: about one answer, or about a group in one prompt."""
    if isinstance(unit, _Ask):
        return _request(unit.protocol, unit.item, unit.attempt, sees_image, ident)
    protocol = grouped(unit.protocol)
    assert protocol is not None  # a batch is made of a grouped protocol's asks only
    items = [a.item for a in unit.asks]
    # A judge that sees images gets the group's charts in the order the prompt quotes them.
    images = [i for item in items for i in item.sample.images] if sees_image else []
    return _request(protocol, items[0], unit.attempt, sees_image, ident,
                    prompt=protocol.prompt_group(items), images=images)  # fmt: skip


def _request(
    protocol: JudgeProtocol,
    item: JudgeItem,
    attempt: int,
    sees_image: bool,
    ident: str,
    *,
    prompt: JudgePrompt | None = None,
    images: list[Any] | None = None,
) -> Request:
    """The request about `item` (or, with `prompt` and `images`, about the group it leads)."""
    prompt = protocol.prompt(item) if prompt is None else prompt
    if images is None:
        images = list(item.sample.images) if sees_image else []
    parts = [ContentPart(type="image", image=i) for i in range(len(images))]
    parts.append(ContentPart(type="text", text=prompt.user))
    messages = [Message(role="user", content=parts)]
    if prompt.system is not None:
        messages.insert(
            0, Message(role="system", content=[ContentPart(type="text", text=prompt.system)])
        )
    req = Request(
        sample_id=item.sample.id,
        repeat=item.score.repeat,
        method="generate",
        messages=messages,
        prompt=prompt.user,
        images=images,
        gen=protocol.gen,
    )
    req.key = judge_key(ident, protocol.name, protocol.version, req, attempt)
    return req


def _why_unjudged(verdict: Judgement, response: Response | None) -> str | None:
    """Which of `UNJUDGED_WHY` left `verdict` unjudged (None: it is not unjudged)."""
    if verdict.decided_by != "unjudged":
        return None
    if response is None:
        return "not asked"
    if response.error is not None:
        return "not sent (budget)" if response.error.type == "budget" else "failed call"
    return "truncated" if verdict.reason == "truncated" else "unreadable reply"


def _verdict(
    judge: str,
    ask: _Ask,
    request: Request,
    response: Response | None,
    given: tuple[Reading | None] | None = None,
) -> Judgement:
    """A judge's verdict on one answer, from its response (unjudged where none is readable).

    `given`, where given, holds what the protocol read about this answer from the reply
    (a group's reply is read once for all its answers), in place of reading the reply again.
    """
    base = {
        "judge": judge,
        "protocol": ask.protocol.name,
        "version": ask.protocol.version,
        "key": request.key,
        "attempt": ask.attempt,
    }
    if response is None:
        return Judgement(**base, decided_by="unjudged", reason="not asked (the run stopped)")
    if response.error is not None:
        return Judgement(
            **base,
            decided_by="unjudged",
            reason=f"judge error {response.error.type}: {response.error.message}"[:300],
        )
    answer = reply_answer(judge, response)
    if answer is None:
        return Judgement(**base, decided_by="unjudged", reason="truncated")
    reading = ask.protocol.read(answer, ask.item) if given is None else given[0]
    if reading is None:
        return Judgement(
            **base,
            decided_by="unjudged",
            reason=f"unreadable reply: {answer[:200]!r}",
        )
    if reading.refused is not None:  # read, but no verdict the protocol takes
        return Judgement(
            **base, decided_by="unjudged", reason=f"unreadable reply: {reading.refused}"[:300]
        )
    return _from_reading(base, "judge", reading, ask.protocol, ask.item)


def _from_reading(
    base: dict[str, Any], by: DecidedBy, reading: Reading, protocol: JudgeProtocol, item: JudgeItem
) -> Judgement:
    """The verdict of a rule's or a judge's reading.

    A reading without a figure (an option letter, MathVista's extraction) gets the figure the
    protocol gives it (`JudgeProtocol.correct`: 1.0 right, 0.0 wrong), so ``judge_score`` and
    ``judge_coverage`` count it like any verdict.
    """
    verdict = Judgement(
        **base,
        decided_by=by,
        value=reading.value,
        reading=reading.reading,
        detail=dict(reading.detail or {}),
    )
    if verdict.value is None and verdict.reading is not None:
        right = protocol.correct(item, [verdict])
        if right is not None:
            verdict.value = 1.0 if right else 0.0
    return verdict


def _answer_of(model_spec: str, response: Response | None) -> str:
    if response is None:
        return ""
    thought = split_answer(
        response.text,
        reasoning=response.reasoning,
        finish_reason=response.finish_reason,
        tags=tags_for_model(model_spec),
    )
    return thought.answer.strip()


def _load_judges(specs: Sequence[str]) -> dict[str, Model | AsyncModel]:
    return {s: load_model(s) for s in dict.fromkeys(specs)}


def judge_run(
    outcome: RunOutcome,
    config: JudgeConfig,
    store: Store,
    *,
    executor: Executor | None = None,
    progress: ProgressSink | None = None,
) -> JudgeRunOutcome:
    """Judge every answer of `outcome` a protocol applies to, and store the verdicts.

    Each model's stored rows are read a chunk at a time (`CHUNK_SAMPLES` rows), judged, their
    verdicts stored, and dropped, so a run of any size is never held whole; a run of up to one
    chunk sends the same judge requests in the same batches as ever. The manifest gains a
    ``judge`` entry naming the judges, their identities and the protocols with their versions.

    Args:
        outcome: A finished run (its score rows in the store).
        config: The judges and how to use them.
        store: The run's store.
        executor: Where judge calls run (the run's executor; local by default).
        progress: Progress sink (one bar per judge and model).

    Returns:
        Per model: the answers each path decided, the judges' call counts, agreement figures.

    Raises:
        RegistryError: A judge model or protocol is unknown or not installed.
        TemplateError: The ``--judge-prompt`` template is unusable.
        ValueError: A setting does not fit the data (see `resolve_protocols`).

    """
    executor = executor or LocalExecutor()
    progress = progress or NullProgress()
    # The run's own meter: judge calls count against the same --max-cost as the answers.
    meter = outcome.meter
    # A run of many chunks is read again a chunk at a time, as the run read it.
    samples = RunSamples(outcome.load, config)
    unusable = outcome.unusable_images if config.sees_image else {}
    judges = _load_judges(config.judges)
    result = JudgeRunOutcome(config)
    servers = [m for m in judges.values() if isinstance(m, StartableModel)]
    try:
        for server in servers:
            server.start(Path(outcome.out_dir))
        with contextlib.ExitStack() as sessions:
            for spec in _held_judges(judges):
                sessions.enter_context(model_session(executor, spec, judges[spec]))
            for mo in outcome.models:
                result.models[mo.spec] = _judge_model(
                    outcome.run_id,
                    mo.spec,
                    samples,
                    config,
                    judges,
                    store,
                    executor,
                    progress,
                    outcome.spec.no_cache,
                    _Spending(meter, outcome.spec.prices),
                    unusable,
                )
    finally:
        for server in servers:
            server.stop()
        if meter is not None:
            outcome.spent = meter.spent
    result.failed = _failed_judges(result, list(judges))
    result.not_applied = _not_applied(result, config)
    if any(stats.budget for stats in result.models.values()):
        # The money ran out while judging: the run stops as when it runs out on the answers,
        # and the same command asks the unsent judge requests (stored as budget errors).
        outcome.status = "stopped_budget"
        store.update_run(outcome.run_id, status=outcome.status)
    elif result.failed or result.not_applied:
        # A judge that read nothing (every call refused: a misspelt model, a wrong key; every
        # reply unreadable) judged nothing: the run is not complete, whatever its answers.
        # Nor is one whose named protocol fits none of its answers: no judge was even asked.
        outcome.status = JUDGING_FAILED
        store.update_run(outcome.run_id, status=outcome.status)
    used = {p.name: p for p in samples.protocols.used()}
    result.manifest = {
        "judges": {s: m.identity.recorded() for s, m in judges.items()},
        "protocols": {
            name: {"version": p.version, "source": p.source, "repeats": p.repeats}
            for name, p in sorted(used.items())
        },
        "when": config.when,
        "sees_image": config.sees_image,
        "scale": config.scale,
        "prompt": config.prompt,
    }
    outcome.manifest["judge"] = result.manifest
    store.update_run(outcome.run_id, manifest=outcome.manifest)
    return result


def _held_judges(judges: Mapping[str, Model | AsyncModel]) -> list[str]:
    """The judges whose executor sessions (Ray replicas) last the whole judging step.

    A sole judge, and any judge behind an API (an async backend: replicas that hold no
    device), keeps its replicas from its first chunk to the step's end, as a run's model does
    (`model_session`): an ``hf`` judge loads its weights once, not once per chunk. Several
    local judges alternate within each chunk, so each of them starts and ends its replicas
    per chunk: they may not fit on the devices together.
    """
    return [s for s, m in judges.items() if len(judges) == 1 or isinstance(m, AsyncModel)]


def _failed_judges(result: JudgeRunOutcome, judges: Sequence[str]) -> dict[str, str]:
    """Judge spec → why, for each judge that was asked and gave no verdict that could be read.

    Its calls all failed, or its replies were all unreadable or cut off (or some of each);
    calls left unsent by the budget are not counted (the run stops for the budget instead).
    A judge with some verdict read keeps today's reading: its failed calls and unreadable
    replies leave their answers unjudged, counted apart.
    """
    failed: dict[str, str] = {}
    models = list(result.models.values())
    for judge in judges:
        requests = sum(s.calls[judge].requests for s in models if judge in s.calls)
        made = requests - sum(s.unsent[judge] for s in models)
        if made <= 0 or any(s.read[judge] for s in models):
            continue
        failed[judge] = nothing_read_why(
            made,
            sum(s.failed_calls[judge] for s in models),
            next((s.first_error[judge] for s in models if judge in s.first_error), ""),
            next((s.first_unreadable[judge] for s in models if judge in s.first_unreadable), None),
        )
    return failed


def _not_applied(result: JudgeRunOutcome, config: JudgeConfig) -> str | None:
    """Why the ``--judge-protocol`` named judged nothing, when it applied to no answer; else None.

    A protocol named for every row applies only to the rows it can judge (CharXiv's grader
    to CharXiv's questions, ``lmmprobe-choice`` to single-choice rows): named for data it does
    not fit, no judge is asked and every figure is the rules' alone, which exit status 0 would
    pass off as a judged run.
    """
    name = config.protocol
    models = list(result.models.values())
    answered = sum(s.answered for s in models)
    if name is None or not answered or any(name in s.protocols for s in models):
        return None
    return fits_none(name, f"{answered} answer(s)")


def fits_none(name: str, what: str) -> str:
    """``--judge-protocol NAME applies to none of the run's WHAT (it judges: ...)``.

    The words of a run whose named protocol judged nothing (`_not_applied`) and of a dry run
    that finds no sample it could judge (`lmmprobe.judge.dry_run`); what the protocol judges
    is the first line of its ``applies`` docstring.
    """
    check = getattr(JUDGE_PROTOCOLS.get(name), "applies", None)
    doc = (getattr(check, "__doc__", None) or "").strip().splitlines()
    judges = f" (it judges: {doc[0].rstrip('.')})" if doc else ""
    return f"--judge-protocol {name} applies to none of the run's {what}{judges}"


def nothing_read_why(made: int, errors: int, first_error: str, first_unreadable: str | None) -> str:
    """Why a judge that was asked `made` times gave no verdict, in one line.

    Args:
        made: Its calls (requests sent or read from the store; budget-unsent ones aside).
        errors: How many of them failed.
        first_error: The first failure, ``TYPE: message``.
        first_unreadable: The start of its first unreadable reply, quoted; None when every
            reply it gave was cut off before its verdict.

    """
    shown = (
        f"first: {first_unreadable}"
        if first_unreadable is not None
        else "each cut off before its verdict"
    )
    if errors >= made:
        why = f"every one of {made} call(s) failed: {first_error}"
    elif errors == 0:
        why = f"none of its {made} replies could be read ({shown})"
    else:
        why = (
            f"none of its {made} calls gave a reply that could be read ({errors} failed, first: "
            f"{first_error}; {made - errors} unreadable, {shown})"
        )
    return why[:400]


PAIRS_AGAIN = (
    "fix the judge and run the same command again (its failed calls are asked again; a reply "
    "it gave is stored and read again, not asked again: a judge that cannot follow the "
    "protocol needs another model)"
)
"""What to do when a pairwise judge read nothing (`pairs_nothing_read`): the end of the line."""


def pairs_nothing_read(
    judge: str, judgements: Iterable[PairwiseJudgement | None], responses: Iterable[Response]
) -> str | None:
    """Why `judge`, asked about pairs in both orders, gave no reply that could be read; or None.

    The one rule of ``compare --judge`` and ``arena judge``: when not one reply of any pair
    was read (every call failed, or every reply was unreadable or cut off), the command judged
    nothing and fails with this line (`nothing_read_why`); a reply read in either order is a
    reply read (a pair it flipped on is a tie, a verdict), and the command goes on.

    Args:
        judge: The judge's spec as given (its ``think=`` tags).
        judgements: Each pair's judgement; None for a pair never asked.
        responses: The judge's responses to the pairs' requests (from the store or sent).

    """
    if any(j is not None and (j.first is not None or j.swapped is not None) for j in judgements):
        return None
    made = [r for r in responses if r.error is None or r.error.type != "budget"]
    if not made:
        return None
    errors = [r.error for r in made if r.error is not None]
    texts = [reply_answer(judge, r) for r in made if r.error is None]
    unreadable = next((t for t in texts if t is not None), None)
    return nothing_read_why(
        len(made),
        len(errors),
        f"{errors[0].type}: {errors[0].message}" if errors else "",
        None if unreadable is None else repr(unreadable[:60] + ("..." if unreadable[60:] else "")),
    )


@dataclass(frozen=True)
class _Spending:
    """The run's meter and its prices by spec (a judge's included)."""

    meter: CostMeter | None
    prices: Mapping[str, Price]


def _plan_asks(
    model_spec: str,
    scores: Sequence[Score],
    answers: Mapping[str, Response],
    samples: Mapping[str, Sample],
    protocols: Mapping[str, JudgeProtocol],
    config: JudgeConfig,
    stats: JudgeModelStats,
) -> tuple[list[_Ask], dict[tuple[str, int], Reading]]:
    """The judge calls one model's answers need, and the rules' readings of them.

    Each score's verdicts are reset, a rule's verdict added where the rules decide
    (``--judge-when miss``); the protocols applied are noted in `stats`. The judging step
    and the dry runs (`lmmprobe.judge.dry_run`) count the calls the same way.
    """
    asks: list[_Ask] = []
    rules: dict[tuple[str, int], Reading] = {}
    for score in scores:
        score.judgements = []
        sample = samples.get(score.sample_id)
        protocol = protocols.get(score.sample_id)
        if sample is None or protocol is None:
            continue
        if score.error_type is None and score.stage not in ("error", "truncated"):
            stats.answered += 1  # an answer a protocol may read (not failed, not cut off)
        item = JudgeItem(sample, _answer_of(model_spec, answers.get(score.key)), score)
        if not _applies(protocol, item):
            continue
        stats.protocols[protocol.name] = protocol.version
        # --judge-when applies where the protocol allows it; lmmprobe's own default protocol
        # for open rows (always) keeps its mode. A named protocol and a benchmark's official
        # one were checked before (`check_config`, `resolve_protocols`).
        when = config.when if config.when in protocol.when else protocol.when[0]
        settle = settled(protocol, item)
        if settle is not None:
            # Nothing for a judge to read (an empty answer): decided here, no call paid for.
            base = {"judge": None, "protocol": protocol.name, "version": protocol.version}
            verdict = _from_reading(base, "rule", settle, protocol, item)
            verdict.reason = "empty answer: settled without a judge"
            score.judgements.append(verdict)
            stats.settled += 1
            continue
        rule = protocol.rule(item)
        if rule is not None:
            rules[(score.sample_id, score.repeat)] = rule
        if when == "miss" and rule is not None:
            base = {"judge": None, "protocol": protocol.name, "version": protocol.version}
            score.judgements.append(_from_reading(base, "rule", rule, protocol, item))
            continue
        for attempt in range(protocol.repeats):
            asks.append(_Ask(score, item, protocol, attempt, when))
    return asks, rules


def _judge_requests(
    asks: Sequence[_Unit], sees_image: bool, ident: str
) -> tuple[list[tuple[_Unit, Request]], dict[str, Request]]:
    """Each ask (or group) with its request to the judge of cache id `ident`; requests by key.

    Answers whose judge prompts are the same (the same question and answer; a sample asked
    again with the same prompt; two groups quoting the same answers) make one request: it is
    asked once and read for each.
    """
    mine = [(a, _unit_request(a, sees_image, ident)) for a in asks]
    unique: dict[str, Request] = {}
    for _, r in mine:
        unique.setdefault(r.key, r)
    return mine, unique


def score_chunks(
    store: Store, run_id: str, model: str, rows: int = CHUNK_SAMPLES
) -> Iterator[list[Score]]:
    """Model `model`'s rows of run `run_id` as Scores, `rows` at a time, in stored row order.

    `model` is the spec as the store records it (`Store.recorded_spec`). A chunk's Scores
    carry their stored verdicts; the caller drops each chunk before reading the next, so a
    run of any size is never held whole.
    """
    recs = store.iter_score_rows(run_id, model=model)
    while chunk := [score_from_row(rec) for rec in islice(recs, rows)]:
        yield chunk


def _judge_model(
    run_id: str,
    model_spec: str,
    samples: RunSamples,
    config: JudgeConfig,
    judges: dict[str, Model | AsyncModel],
    store: Store,
    executor: Executor,
    progress: ProgressSink,
    no_cache: bool,
    spending: _Spending,
    unusable: Mapping[str, str],
) -> JudgeModelStats:
    """Judge one model's stored answers chunk by chunk (read, judge, store verdicts, drop).

    A judge request an earlier chunk asked (answers sharing a judge prompt) is read back from
    the store, not asked or counted again, so the counts are those of one pass over the run.
    An answer whose sample is `unusable` (sample id → why: its image is not the one the model
    saw) gets each judge's unjudged verdict saying why; no judge is asked about it. A grouped
    protocol's answers are held back until the last chunk is read, then asked group by group
    (`group_asks`) and their verdicts stored.
    """
    stats = JudgeModelStats()
    for judge, model in judges.items():
        stats.calls[judge] = ModelOutcome(spec=judge, identity=model.identity)
    earlier = {judge: EarlierKeys() for judge in judges}
    agreement: list[AgreementRow] = []
    # A grouped protocol's asks, with their places in the data, held until every chunk is read.
    held_back: list[tuple[int, _Ask]] = []
    held_rules: dict[tuple[str, int], Reading] = {}
    asking = _Asking(stats, judges, config, store, executor, progress, no_cache, spending, earlier)
    for scores, held, protocols in samples.chunks(store, run_id, store.recorded_spec(model_spec)):
        answers = store.get_responses([s.key for s in scores], include_errors=True)
        asks, rules = _plan_asks(model_spec, scores, answers, held, protocols, config, stats)
        del answers
        kept = [a for a in asks if a.score.sample_id not in unusable] if unusable else asks
        blocked = [a for a in asks if a.score.sample_id in unusable] if unusable else []
        asks, later = split_grouped(kept)
        held_back += [(samples.place(a.score.sample_id), a) for a in later]
        waiting = {id(a.score) for a in later}
        held_rules.update(
            {
                k: rules[k]
                for k in {(a.score.sample_id, a.score.repeat) for a in later}
                if k in rules
            }
        )
        for judge in judges:
            _leave_unjudged(stats, judge, blocked, unusable)
            asking.units(judge, asks)
        done = [s for s in scores if id(s) not in waiting]
        agreement += _finish(run_id, model_spec, done, list(judges), rules, stats, store)
        # Dropped before the next chunk is read: a chunk's samples are all that is held.
        del scores, held, protocols, asks, kept, blocked, later, done
    if held_back:
        groups = group_asks(held_back)
        for judge in judges:
            asking.units(judge, groups)
        scores = list({id(a.score): a.score for _, a in held_back}.values())
        agreement += _finish(run_id, model_spec, scores, list(judges), held_rules, stats, store)
        del groups, scores, held_back
    for judge, calls in stats.calls.items():
        price = spending.prices.get(judge)
        if price is not None:
            stats.cost[judge] = price.cost(calls.prompt_tokens, calls.completion_tokens)
    stats.agreement = figures_of(agreement, list(judges))
    return stats


@dataclass
class _Asking:
    """What asking a judge about one model's answers needs (`_judge_model`'s context)."""

    stats: JudgeModelStats
    judges: dict[str, Model | AsyncModel]
    config: JudgeConfig
    store: Store
    executor: Executor
    progress: ProgressSink
    no_cache: bool
    spending: _Spending
    earlier: dict[str, EarlierKeys]

    def units(self, judge: str, units: Sequence[_Unit]) -> None:
        """Ask `judge` about `units` (answers, or groups of them) and put its verdicts on them.

        A request an earlier chunk asked is read back from the store, not asked or counted
        again. A chained protocol's next stage is asked once the judge's reply to the one
        before is read (MathVerse: the scoring prompt quotes the extraction).
        """
        model = self.judges[judge]
        pending: Sequence[_Unit] = units
        while pending:
            mine, unique = _judge_requests(
                pending, self.config.sees_image, model.identity.cache_id()
            )
            stored = self.earlier[judge].stored(list(unique), self.store)
            fresh = {k: r for k, r in unique.items() if k not in stored} if stored else unique
            responses = answer_requests(
                judge,
                model,
                fresh,
                self.store,
                executor=self.executor,
                progress=self.progress,
                outcome=self.stats.calls[judge],
                meter=self.spending.meter,
                no_cache=self.no_cache,
            )
            self.earlier[judge].add(responses)
            _count_calls(self.stats, judge, list(responses.values()))
            responses.update(stored)
            self.stats.asked[judge] += sum(
                len(_asks_of(u)) for u, _ in mine if _asks_of(u)[0].item.stage == 0
            )
            pending = _read_verdicts(self.stats, judge, mine, responses)
            del mine, unique, stored, fresh, responses


def _finish(
    run_id: str,
    model_spec: str,
    scores: Sequence[Score],
    judges: Sequence[str],
    rules: Mapping[tuple[str, int], Reading],
    stats: JudgeModelStats,
    store: Store,
) -> list[AgreementRow]:
    """Count and store the verdicts of `scores`, whose asks are all answered.

    Returns:
        What the agreement figures read of them (two judges, or a rule).

    """
    judged = [s for s in scores if s.judgements]
    for score in judged:
        stats.count_decided(score.judgements)
    verdicts = [(s.sample_id, s.repeat, j) for s in judged for j in s.judgements]
    store.put_judgements(run_id, model_spec, verdicts)
    return [
        row
        for row in agreement_rows(judged, list(judges), rules)
        if len(judges) >= 2 or row[1] is not None
    ]


def _leave_unjudged(
    stats: JudgeModelStats, judge: str, asks: Sequence[_Ask], unusable: Mapping[str, str]
) -> None:
    """A judge's unjudged verdict on each of `asks`, whose sample's image is `unusable`."""
    for a in asks:
        a.score.judgements.append(
            Judgement(
                judge=judge, protocol=a.protocol.name, version=a.protocol.version,
                attempt=a.attempt, decided_by="unjudged", reason=unusable[a.score.sample_id],
            )
        )  # fmt: skip
        stats.asked[judge] += 1
        stats.unjudged[IMAGE_CHANGED] += 1
        stats.unjudged_by.setdefault(judge, Counter())[IMAGE_CHANGED] += 1


def _count_calls(stats: JudgeModelStats, judge: str, responses: Sequence[Response]) -> None:
    """Count a judge's responses to one chunk's requests: unsent by budget, failed."""
    unsent = sum(1 for r in responses if r.error is not None and r.error.type == "budget")
    stats.unsent[judge] += unsent
    stats.budget += unsent
    failed = [r for r in responses if r.error is not None and r.error.type != "budget"]
    stats.failed_calls[judge] += len(failed)
    if failed and failed[0].error is not None and judge not in stats.first_error:
        stats.first_error[judge] = f"{failed[0].error.type}: {failed[0].error.message}"


def _next_stage(judge: str, ask: _Ask, verdict: Judgement) -> _Ask | Judgement | None:
    """What follows a chained protocol's stage: the next stage's ask, or its rule's verdict.

    None where `verdict` is final: the protocol's last stage, or a stage the judge left
    unjudged (the answer is then unjudged: no later stage is asked about a reading it lacks).
    Under ``--judge-when miss`` the next stage's rule decides where it reads the answer; the
    verdict still rests on the judge's earlier reading, so it is the judge's.
    """
    stage = ask.item.stage + 1
    if verdict.decided_by != "judge" or stage >= stages_of(ask.protocol):
        return None
    item = replace(ask.item, stage=stage, earlier=(*ask.item.earlier, verdict.reading or ""))
    if ask.when == "miss":
        rule = ask.protocol.rule(item)
        if rule is not None:
            base = {
                "judge": judge,
                "protocol": ask.protocol.name,
                "version": ask.protocol.version,
                "key": verdict.key,
                "attempt": ask.attempt,
            }
            return _from_reading(base, "judge", rule, ask.protocol, item)
    return replace(ask, item=item)


def _unit_verdicts(
    judge: str, unit: _Unit, request: Request, response: Response | None
) -> list[tuple[_Ask, Judgement]]:
    """A judge's verdict on each answer of `unit`, from its one response.

    A group's reply is read once (`GroupedProtocol.read_group`); an answer it gives no verdict
    on is unjudged as an unreadable reply, as is every answer of a reply refused whole.
    """
    if isinstance(unit, _Ask):
        return [(unit, _verdict(judge, unit, request, response))]
    protocol = grouped(unit.protocol)
    assert protocol is not None
    text = None if response is None or response.error is not None else reply_answer(judge, response)
    readings = (
        protocol.read_group(text, [a.item for a in unit.asks])
        if text is not None
        else [None] * len(unit.asks)
    )
    if len(readings) != len(unit.asks):  # a protocol's bug, never a guessed verdict
        raise ValueError(
            f"judge protocol {protocol.name} read {len(readings)} verdicts from a reply about "
            f"{len(unit.asks)} answers"
        )
    return [
        (a, _verdict(judge, a, request, response, given=(reading,)))
        for a, reading in zip(unit.asks, readings, strict=True)
    ]


def _read_verdicts(
    stats: JudgeModelStats,
    judge: str,
    mine: Sequence[tuple[_Unit, Request]],
    responses: Mapping[str, Response],
) -> list[_Ask]:
    """Put a judge's verdict on each answer it was asked about, counting why any is unjudged.

    Returns:
        The asks of chained protocols' next stages (their answers get a verdict once those
        are read).

    """
    later: list[_Ask] = []
    for a, verdict, response in (
        (a, verdict, responses.get(r.key))
        for unit, r in mine
        for a, verdict in _unit_verdicts(judge, unit, r, responses.get(r.key))
    ):
        follow = _next_stage(judge, a, verdict)
        if isinstance(follow, _Ask):
            later.append(follow)
            continue
        if follow is not None:
            verdict = follow
        why = _why_unjudged(verdict, response)
        if why is not None:
            stats.unjudged[why] += 1
            stats.unjudged_by.setdefault(judge, Counter())[why] += 1
        if why == "unreadable reply" and judge not in stats.first_unreadable:
            assert response is not None  # an unreadable reply is a reply
            text = reply_answer(judge, response) or ""
            stats.first_unreadable[judge] = repr(text[:60] + ("..." if text[60:] else ""))
        if verdict.decided_by == "judge":
            stats.read[judge] += 1
        a.score.judgements.append(verdict)
    return later
