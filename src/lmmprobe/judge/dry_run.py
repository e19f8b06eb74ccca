"""The judge calls a dry run would make (``run --dry-run --judge``, ``judge --dry-run``).

A judge call quotes the model's answer. Where the store holds that answer (a re-run, a run
resumed, a stored run given to ``lmmprobe judge``), the dry run reads it as the judging step
would (`lmmprobe.judge.step`: the same asks, the same requests): it applies the protocol's
rules (``--judge-when miss``: a rule that reads it needs no judge), counts answers whose
judge prompts are the same once (the step asks such a prompt once), and looks up the judge's
stored replies, so those answers are counted exactly. An answer not stored yet cannot be read
before it is asked: it counts every call its protocol could make (times the protocol's
repeats: MM-Vet grades five times; and times its stages: MathVerse extracts, then scores), a
bound; the later stages of a chained protocol are a bound for stored answers too (they quote
a reply not given yet). A protocol grading answers in groups (CharXiv's descriptive) is counted
group by group as the step forms them over the whole run (`group_asks`): exactly where every
answer is stored; where some are not, each unstored answer counts a call and each group of
the stored ones a call not looked up in the store, a bound. A served model or judge (``vllm:``) is named by
what its server serves, known only once it runs, so its store is not looked at.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.data import ChunkedLoad, LoadResult, chunks_of, close_load, load_in_chunks
from lmmprobe.formulate.ask import Ask
from lmmprobe.judge.protocol import JudgeProtocol, grouped, sample_fits, stages_of
from lmmprobe.judge.step import (
    JudgeModelStats,
    Protocols,
    RunSamples,
    _Ask,
    _asks_of,
    _judge_requests,
    _next_stage,
    _plan_asks,
    _Unit,
    _verdict,
    check_config,
    fits_none,
    group_asks,
    split_grouped,
)
from lmmprobe.judge.stored import judged_spec, stored_outcome
from lmmprobe.models.base import AsyncModel, Model, StartableModel
from lmmprobe.run import plan_requests, runner, score_response
from lmmprobe.run.dry_run import estimate_prompt_tokens
from lmmprobe.run.runner import EarlierKeys, dialogue_stages, load_unkeyed, priced
from lmmprobe.schema import JudgeConfig, Price, Request, Response, RunSpec, Sample, Score
from lmmprobe.schema.price import PER_TOKENS
from lmmprobe.store import Store
from lmmprobe.store.runs import read_run
from lmmprobe.store.sqlite import DEFAULT_DB

__all__ = ["PlannedJudge", "StoredPlan", "plan_judges", "plan_stored_judges"]


@dataclass(frozen=True)
class PlannedJudge:
    """What one judge would be asked about one model's answers.

    Attributes:
        judge: The judge's spec.
        model: The spec of the model whose answers it judges.
        calls: Judge calls to send, at most: exact for the answers `read` counts, a bound
            (every call the protocol could make) for the others.
        read: Answers found in the store and read as the judging step reads them (rules
            applied, stored judge replies looked up).
        unread: Answers not in the store yet, counted at most.
        rules_first: Some unread answers go to the rules first (``--judge-when miss``), so
            the judge will see only those the rules cannot read.
        stored_replies: Judge replies already stored for the read answers (not sent again).
        price: The judge's price, when it has one.
        completion_tokens: The completion limit summed over `calls` (each protocol's own
            ``max_new_tokens``).
        shared: Verdicts on read answers that need no call of their own: their judge prompt
            is another's (the same question and answer), which is asked once.
        store_unchecked: A served judge (``vllm:``): its replies are keyed by what its
            server serves, so the store was not looked at and stored replies are counted.
        missing_key: The environment variable of the judge's API key when it is not set: a
            dry run needs none, a real run does.
        prompt_tokens: About how many prompt tokens the calls whose prompts are known send
            (`lmmprobe.run.dry_run.estimate_prompt_tokens`: an estimate from their text, images
            left out); the server counts them.
        prompts_unknown: Calls whose prompt is not known before the model answers (it quotes
            the answer): not in `prompt_tokens`.
        images: Images the calls of `prompt_tokens` send: not in the estimate.
        unfit: Of `unread`, answers to samples their protocol judges no answer of, told from
            the sample (`sample_fits`): not counted.
        undecided: Of `unread`, answers whose protocol only their answer tells whether it
            judges them (a plugin's ``applies``): counted.
        fits_none: Why no call is made: the ``--judge-protocol`` named fits none of the
            samples (`fits_none`, a real run's words); `calls` is then 0.

    """

    judge: str
    model: str
    calls: int
    read: int
    unread: int
    rules_first: bool
    stored_replies: int
    price: Price | None
    completion_tokens: int
    shared: int = 0
    store_unchecked: bool = False
    missing_key: str | None = None
    prompt_tokens: int = 0
    prompts_unknown: int = 0
    images: int = 0
    unfit: int = 0
    undecided: int = 0
    fits_none: str | None = None

    @property
    def exact(self) -> bool:
        """Whether `calls` is exact: every answer and reply read from the store, or no call.

        No call: the ``--judge-protocol`` named fits no sample (`fits_none`).
        """
        return self.fits_none is not None or (self.unread == 0 and not self.store_unchecked)

    @property
    def completion_cost_bound(self) -> float | None:
        """Dollars the judge's completions cost at most; None without a price."""
        if self.price is None:
            return None
        return self.completion_tokens * self.price.output / PER_TOKENS

    @property
    def prompt_cost_estimate(self) -> float | None:
        """Dollars `prompt_tokens` cost at the judge's input price (an estimate); None: no price."""
        if self.price is None:
            return None
        return self.prompt_tokens * self.price.input / PER_TOKENS


def plan_judges(spec: RunSpec) -> list[PlannedJudge]:
    """Count the judge calls of `spec`, per judge and model, with the judges' prices.

    Returns an empty list when the spec has no judge.

    Raises:
        RegistryError: A protocol or a model is unknown.
        TemplateError: The ``--judge-prompt`` template is unusable.
        ValueError: ``--judge-when`` is a mode a protocol does not allow, or a ``price=``
            option is invalid, or ``max_cost`` is set and a judge has no price.
        DataError: The data cannot be read.

    """
    config = spec.judge
    if config is None:
        return []
    spec = priced(spec)
    check_config(config, spec.data)
    # Data of more than a chunk is read again a chunk at a time, as the run would read it.
    load = load_in_chunks(
        spec.data, size=runner.CHUNK_SAMPLES, strict=spec.strict, limit=spec.limit
    )
    store: Store | None = None
    try:
        protocols = _checked_protocols(config, load)
        judges = {j: load_unkeyed(j) for j in dict.fromkeys(config.judges)}
        path = Path(spec.db) if spec.db else DEFAULT_DB
        # An absent store holds nothing: it is not created just to be looked at.
        store = Store(path, read_only=True) if path.exists() and not spec.no_cache else None
        # A judge request one model's answers counted is read from the store by the next
        # model's judging (answers sharing a judge prompt across models): counted once.
        earlier = {judge_spec: EarlierKeys() for judge_spec in judges}
        return [
            planned
            for model_spec in spec.models
            for planned in _plan_model(
                model_spec,
                load_unkeyed(model_spec)[0],
                load,
                protocols,
                judges,
                spec,
                store,
                earlier,
            )
        ]
    finally:
        close_load(load)  # its spill, kept for the models' plans, goes
        if store is not None:
            store.close()


def _checked_protocols(config: JudgeConfig, load: LoadResult | ChunkedLoad) -> Protocols:
    """Every sample's protocol checked, before any plan (as `resolve_protocols` checks)."""
    protocols = Protocols(config)
    if isinstance(load, LoadResult):
        protocols.of_samples(load.samples)
        protocols.check_prompt()
    else:
        protocols.check(load.kinds)
    return protocols


def _when(config: JudgeConfig, protocol: JudgeProtocol) -> str:
    return config.when if config.when in protocol.when else protocol.when[0]


def _plan_model(
    model_spec: str,
    model: Model | AsyncModel,
    load: LoadResult | ChunkedLoad,
    protocols: Protocols,
    judges: dict[str, tuple[Model | AsyncModel, str | None]],
    spec: RunSpec,
    store: Store | None,
    earlier: dict[str, EarlierKeys],
) -> list[PlannedJudge]:
    """One model's judge calls, per judge.

    `earlier` holds each judge's requests counted before (an earlier chunk's or model's),
    which the step asks once: counted once.
    """
    config = spec.judge
    assert config is not None  # plan_judges returns early without one
    bound = bound_tokens = read = samples_seen = unfit = undecided = 0
    rules_first = fits_any = False
    counts = {judge_spec: _Count() for judge_spec in judges}
    held_back: list[tuple[int, _Ask]] = []  # a grouped protocol's asks, counted at the end
    grouped_unread = False
    for samples in chunks_of(load):
        of = protocols.of_samples(samples)
        readable = (
            store is not None
            and not isinstance(model, StartableModel)
            and dialogue_stages(samples) is None  # later rounds' prompts hold earlier answers
        )
        rows = plan_requests(samples, spec, model.identity) if readable else []
        stored = store.get_responses({a.key for _, a in rows}) if store is not None and rows else {}
        # The stored answers scored as the run scores them; a bound for the others.
        scores: list[Score] = []
        by_sample: dict[str, list[tuple[Sample, Ask | None]]] = {}
        for row_sample, row_ask in rows:
            by_sample.setdefault(row_sample.id, []).append((row_sample, row_ask))
        for sample in samples:
            protocol = of[sample.id]
            # Whether the protocol judges this sample's answers, told from the sample: one
            # it cannot judge asks no judge, whatever the answer (a named protocol that fits
            # no sample judges nothing, which the run fails on once the models answered).
            fits = sample_fits(protocol, sample)
            fits_any = fits_any or fits is not False
            asks = by_sample.get(sample.id) or [(sample, None)] * spec.repeats
            for _, ask in asks:
                response = stored.get(ask.key) if ask is not None else None
                if (ask is None or response is None) and fits is False:
                    unfit += 1
                    continue
                if ask is None or response is None:
                    undecided += fits is None
                    grouped_unread = grouped_unread or grouped(protocol) is not None
                    calls = protocol.repeats * stages_of(protocol)
                    bound += calls
                    bound_tokens += calls * protocol.gen.max_new_tokens
                    rules_first = rules_first or _when(config, protocol) == "miss"
                    continue
                scores.append(score_response(model_spec, sample, ask, response, spec.formulate))
        judge_asks, later = split_grouped(_asks(model_spec, scores, stored, samples, of, config))
        if later:
            place = {s.id: samples_seen + i for i, s in enumerate(samples)}
            held_back += [(place[a.score.sample_id], a) for a in later]
        for judge_spec, (judge, _) in judges.items():
            counts[judge_spec] += _count(
                judge, judge_asks, config, store, spec.no_cache, earlier[judge_spec], judge_spec
            )
        read += len(scores)
        samples_seen += len(samples)
        del samples, rows, stored, scores, by_sample, judge_asks  # before the next chunk
    if held_back:
        # With an answer unstored, the groups of the stored ones are not the run's: each is
        # counted a call, not looked up.
        looked = None if grouped_unread else store
        groups = group_asks(held_back)
        for judge_spec, (judge, _) in judges.items():
            counts[judge_spec] += _count(
                judge, groups, config, looked, spec.no_cache, earlier[judge_spec], judge_spec
            )
    none = (
        fits_none(config.protocol, f"{samples_seen} sample(s)")
        if config.protocol is not None and samples_seen and not fits_any
        else None
    )
    out = []
    for judge_spec, (_, missing_key) in judges.items():
        count = counts[judge_spec]
        out.append(
            PlannedJudge(
                judge=judge_spec,
                model=model_spec,
                calls=bound + count.calls,
                read=read,
                unread=samples_seen * spec.repeats - read,
                rules_first=rules_first,
                stored_replies=count.stored,
                price=spec.prices.get(judge_spec),
                completion_tokens=bound_tokens + count.tokens,
                shared=count.shared,
                store_unchecked=count.unchecked,
                missing_key=missing_key,
                prompt_tokens=count.prompt_tokens,
                prompts_unknown=bound,
                images=count.images,
                unfit=unfit,
                undecided=undecided,
                fits_none=none,
            )
        )
    return out


def _asks(
    model_spec: str,
    scores: Sequence[Score],
    answers: Mapping[str, Response],
    samples: Iterable[Sample],
    protocols: Mapping[str, JudgeProtocol],
    config: JudgeConfig,
) -> list[_Ask]:
    """The judge calls read answers need, as the judging step finds them (`_plan_asks`)."""
    by_id = {s.id: s for s in samples}
    asks, _ = _plan_asks(model_spec, scores, answers, by_id, protocols, config, JudgeModelStats())
    return asks


@dataclass(frozen=True)
class _Count:
    """One judge's calls for some asks (`_count`); a chunk's add up to the run's."""

    calls: int = 0
    stored: int = 0
    tokens: int = 0
    shared: int = 0
    unchecked: bool = False
    prompt_tokens: int = 0
    images: int = 0

    def __add__(self, other: _Count) -> _Count:
        return _Count(
            calls=self.calls + other.calls,
            stored=self.stored + other.stored,
            tokens=self.tokens + other.tokens,
            shared=self.shared + other.shared,
            unchecked=self.unchecked or other.unchecked,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            images=self.images + other.images,
        )


def _count(
    judge: Model | AsyncModel,
    asks: Sequence[_Unit],
    config: JudgeConfig,
    store: Store | None,
    no_cache: bool,
    earlier: EarlierKeys | None = None,
    judge_spec: str = "",
) -> _Count:
    """One judge's calls for `asks`: distinct requests, less the replies the store holds.

    With `earlier` (the keys earlier chunks counted), a request counted before is shared. A
    chained protocol's next stage is counted from the judge's stored reply to the stage before
    (read as the step reads it, `judge_spec`'s thinking tags), exactly; where that reply is not
    stored, each later stage counts once, a bound.
    """
    mine, unique = _judge_requests(asks, config.sees_image, judge.identity.cache_id())
    if earlier is not None:
        seen = earlier.among(list(unique))
        unique = {k: r for (k, r), was in zip(unique.items(), seen, strict=True) if not was}
        earlier.add(unique)
    unchecked = isinstance(judge, StartableModel)
    got = (
        store.get_responses(unique)
        if unique and store is not None and not unchecked and not no_cache
        else {}
    )
    unsent = [r for k, r in unique.items() if k not in got]
    later, following = _later_stages(judge_spec, mine, store, unchecked or no_cache)
    count = _Count(
        calls=len(unsent) + len(later),
        stored=len(got),
        tokens=sum(r.gen.max_new_tokens for r in unsent)
        + sum(a.protocol.gen.max_new_tokens for a in later),
        shared=sum(len(_asks_of(u)) for u, _ in mine) - len(unique),
        unchecked=unchecked and bool(unique),
        prompt_tokens=sum(estimate_prompt_tokens(r) for r in unsent),
        images=sum(len(r.images) for r in unsent),
    )
    if following:
        count += _count(judge, following, config, store, no_cache, earlier, judge_spec)
    return count


def _later_stages(
    judge_spec: str, mine: Sequence[tuple[_Unit, Request]], store: Store | None, unread: bool
) -> tuple[list[_Ask], list[_Ask]]:
    """The later stages of chained protocols' asks: (bound, next asks).

    An ask whose reply is stored gives its next stage's ask as the judging step would
    (`_next_stage`: none where the reply is unreadable or the next stage's rule decides); an
    ask whose reply is not stored (or not looked up) counts each of its later stages once.
    """
    chained = [
        (a, r) for a, r in mine if isinstance(a, _Ask) and a.item.stage + 1 < stages_of(a.protocol)
    ]
    if not chained:
        return [], []
    stored = {} if store is None or unread else store.get_responses({r.key for _, r in chained})
    bound: list[_Ask] = []
    following: list[_Ask] = []
    for a, r in chained:
        response = stored.get(r.key)
        if response is None:
            bound += [a] * (stages_of(a.protocol) - 1 - a.item.stage)
            continue
        follow = _next_stage(judge_spec, a, _verdict(judge_spec, a, r, response))
        if isinstance(follow, _Ask):
            following.append(follow)
    return bound, following


@dataclass(frozen=True)
class StoredPlan:
    """What judging a stored run would send (`plan_stored_judges`).

    Attributes:
        run: The stored run's id.
        answers: Its answers per model (every one read from the store).
        judges: The calls per judge and model.

    """

    run: str
    answers: dict[str, int]
    judges: list[PlannedJudge]


def plan_stored_judges(
    run: str,
    config: JudgeConfig,
    *,
    db: str | Path | None = None,
    prices: Mapping[str, Any] | None = None,
    max_cost: float | None = None,
) -> StoredPlan:
    """Count the judge calls `lmmprobe.api.judge_stored` would make, sending nothing.

    The stored run is read as judging reads it (`lmmprobe.judge.stored`): its recorded samples
    and answers, the data file not at all, so an imported run is counted too, and every
    count is exact (the answers are all in the store) but for a served judge's stored replies.

    Args:
        run: A run id, unique prefix or ``latest``.
        config: The judges and how to use them.
        db: The store (default: `lmmprobe.store.DEFAULT_DB`).
        prices: Price table entries added to the run's (the judges' prices).
        max_cost: A budget for the judge calls (every judge then needs a price).

    Raises:
        KeyError: The store holds no such run.
        ValueError: As `lmmprobe.api.judge_stored` (a judge option, a price, a model of the
            run with no stored answers).
        RegistryError: A judge or protocol is unknown.

    """
    with Store(db, read_only=True) as store:
        source = store.resolve_run(run)
        stored = read_run(store.conn, source)
        if stored is None:  # resolve_run found it: removed since by another process
            raise KeyError(f"no run {source} in {store.path}")
        spec = judged_spec(stored.spec, config, db=store.path, prices=prices, max_cost=max_cost)
        outcome = stored_outcome(store, source, stored.status, stored.manifest, spec)
        # Read as the judging step reads it: a large run a chunk of samples at a time.
        samples = RunSamples(outcome.load, config)
        judges = {j: load_unkeyed(j) for j in dict.fromkeys(config.judges)}
        planned = []
        read: dict[str, int] = {}
        # A request counted for one model (or chunk) is asked once: a later model whose
        # answers share its judge prompt reads its reply from the store (re-test 20b #1).
        earlier = {judge_spec: EarlierKeys() for judge_spec in judges}
        for mo in outcome.models:
            counts = {judge_spec: _Count() for judge_spec in judges}
            read[mo.spec] = 0
            held_back: list[tuple[int, _Ask]] = []
            for scores, held, protocols in samples.chunks(store, source, mo.spec):
                read[mo.spec] += len(scores)
                answers = store.get_responses([s.key for s in scores], include_errors=True)
                asks = _asks(mo.spec, scores, answers, held.values(), protocols, config)
                if config.sees_image and outcome.unusable_images:
                    # Answers whose image file changed since the run are not asked (judge_run).
                    asks = [a for a in asks if a.score.sample_id not in outcome.unusable_images]
                asks, later = split_grouped(asks)
                held_back += [(samples.place(a.score.sample_id), a) for a in later]
                for judge_spec, (judge, _) in judges.items():
                    counts[judge_spec] += _count(
                        judge, asks, config, store, spec.no_cache, earlier[judge_spec], judge_spec
                    )
                del scores, held, protocols, answers, asks  # before the next chunk
            groups = group_asks(held_back)
            for judge_spec, (judge, _) in judges.items():
                if groups:
                    counts[judge_spec] += _count(
                        judge, groups, config, store, spec.no_cache, earlier[judge_spec],
                        judge_spec,
                    )  # fmt: skip
            for judge_spec, (_, missing_key) in judges.items():
                count = counts[judge_spec]
                planned.append(
                    PlannedJudge(
                        judge=judge_spec,
                        model=mo.spec,
                        calls=count.calls,
                        read=read[mo.spec],
                        unread=0,
                        rules_first=False,
                        stored_replies=count.stored,
                        price=spec.prices.get(judge_spec),
                        completion_tokens=count.tokens,
                        shared=count.shared,
                        store_unchecked=count.unchecked,
                        missing_key=missing_key,
                        prompt_tokens=count.prompt_tokens,
                        images=count.images,
                    )
                )
    return StoredPlan(source, read, planned)
