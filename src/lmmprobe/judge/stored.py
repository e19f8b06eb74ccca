"""A stored run as judging reads it: its spec with the judges added, its samples and answers.

Judging needs only what a run recorded: its samples (`Store.recorded_samples`), its answers (the
responses) and their scores. So a stored run is judged from the store as it was recorded,
whatever became of its data file since (rewritten by ``synth filter``, moved, deleted) and
whether or not its models can be loaded here (an imported run's model is a label). The stored
answers cost nothing now: only the judges are priced, and with a budget must be.

`lmmprobe.api.judge_stored` records the judged run; `lmmprobe.judge.dry_run.plan_stored_judges`
counts its judge calls without sending any.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lmmprobe.run.runner as runner
from lmmprobe.data.base import LoadResult, SampleKind, SampleProblem, sample_kind
from lmmprobe.judge.step import check_config, score_chunks
from lmmprobe.models import ModelIdentity
from lmmprobe.run import CostMeter, ModelOutcome, RunOutcome, new_run_id
from lmmprobe.run.runner import EarlierKeys, answers_status, priced
from lmmprobe.schema import JudgeConfig, RunSpec, Sample
from lmmprobe.store import Store
from lmmprobe.store.reuse import JUDGED_FROM

__all__ = ["StoredLoad", "judged_spec", "score_chunks", "stored_outcome"]

log = logging.getLogger(__name__)

_CHUNK = 2000

_SHOWN = 10
"""Samples whose image file changed since the run named one line each; the rest counted."""
"""Responses read at a time for a model's counts (a large run is not read in one piece)."""


def judged_spec(
    stored_spec: Mapping[str, Any],
    config: JudgeConfig,
    *,
    db: Path,
    out: str | Path | None = None,
    prices: Mapping[str, Any] | None = None,
    max_cost: float | None = None,
) -> RunSpec:
    """A stored run's spec with `config`'s judges, priced for judging from the store.

    Args:
        stored_spec: The stored run's spec (as the store holds it).
        config: The judges and how to use them.
        db: The store the run is in.
        out: The new run's folder (default: its id beside the store).
        prices: Price table entries added to the run's (the judges' prices).
        max_cost: A budget for the judge calls (every judge then needs a price).

    Raises:
        ValueError: A judge option does not fit (see `check_config`), a ``price=`` option is
            invalid, or ``max_cost`` is set and a judge has no price (the run's models need
            none: their stored answers cost nothing now).
        RegistryError: The protocol is unknown.

    """
    spec = RunSpec.model_validate(
        {
            **stored_spec,
            "db": str(db),
            "out": str(out) if out else None,
            "judge": config.model_dump(),
            "prices": {**stored_spec.get("prices", {}), **(prices or {})},
            "max_cost": max_cost,
        }
    )
    check_config(config, spec.data)
    judge_prices = priced(spec.model_copy(update={"models": []})).prices
    return spec.model_copy(update={"prices": {**spec.prices, **judge_prices}})


def stored_outcome(
    store: Store, source: str, status: str, manifest: Mapping[str, Any], spec: RunSpec
) -> RunOutcome:
    """A new run's outcome made of stored run `source`'s samples, answers and manifest.

    Each model's counts are those of its stored responses, as a run that read every answer
    from the store counts them (requests by distinct key, tokens, latency).

    Args:
        store: The store holding `source`.
        source: The stored run's id.
        status: Its status (named when it stopped before every model answered).
        manifest: Its manifest.
        spec: The new run's spec (`judged_spec`).

    Raises:
        ValueError: The run is still running in another process (it holds part of its
            answers at most), or a model of the run has no stored answers (the run stopped
            before it answered): the run resumes first, with the command that started it.

    """
    assert spec.judge is not None  # judged_spec sets it
    present = set(store.run_models(source))
    missing = [m for m in spec.models if m not in present]
    if status == "running":
        # Another process is running it (a run whose process died is no longer "running"
        # once the store is opened): its answers are scored as each chunk ends, so what it
        # holds is at most the chunks done so far, and judging them would record a judged run
        # of part of it.
        held = (
            f"holds no scored answers of {', '.join(map(repr, missing))} yet"
            if missing
            else "holds the scored answers of only the part it has done so far"
        )
        raise ValueError(
            f"run {source} is running (in another process) and {held}: judge it once it has "
            "finished"
        )
    if missing:
        raise ValueError(
            f"run {source} ({status}) holds no answers of {', '.join(map(repr, missing))}: it "
            "stopped before they were asked; run it again with the command that started it "
            "(stored answers are not asked again), then judge it"
        )
    identities = manifest.get("models")
    identities = identities if isinstance(identities, dict) else {}
    models = []
    for model in spec.models:
        ident = identities.get(model)
        identity = (
            ModelIdentity.model_validate(ident)
            if isinstance(ident, dict)
            else ModelIdentity(backend="stored", name=model)
        )
        models.append(_model_outcome(store, source, model, identity))
    run_id = new_run_id()
    out_dir = Path(spec.out) if spec.out else store.path.parent / run_id
    load, unusable = _recorded_load(store, source, spec.data, images=spec.judge.sees_image)
    # An image file changed (or gone) since the run is not the picture the model saw: its
    # sample's answers are left unjudged, each judge's verdict saying why, and said here.
    for why in list(unusable.values())[:_SHOWN]:
        log.warning("%s; its answers are not judged", why)
    if len(unusable) > _SHOWN:
        log.warning("... and %d more sample(s) so", len(unusable) - _SHOWN)
    outcome = RunOutcome(
        run_id,
        spec,
        store.path,
        out_dir,
        load,
        # Its rows are `source`'s as recorded, not scored here: never an identical run's
        # source (`lmmprobe.store.reuse`).
        {**manifest, JUDGED_FROM: source},
        models=models,
        meter=CostMeter(spec.max_cost, spec.prices),
        unusable_images=unusable,
    )
    # The stored run's answers decide as they did for it: one that stopped at its budget
    # (`budget` errors in its rows) stays `stopped_budget` once judged, never complete.
    outcome.status = answers_status(outcome)
    return outcome


@dataclass
class StoredLoad:
    """A stored run's recorded samples, more than a chunk: read again a page at a time.

    What ``lmmprobe judge`` reads of a large stored run (`lmmprobe.data.ChunkedLoad`): its
    samples were read once to be counted and their files checked (`_recorded_load`); the
    judging step reads them again a chunk at a time (`chunks`), never holding them all. A
    file found changed on a later read adds its sample to `unusable` (left unjudged).
    """

    store: Store
    run_id: str
    """The stored run whose samples these are."""
    images: bool
    source: str
    count: int
    kinds: dict[SampleKind, None]
    unusable: dict[str, str]
    """Sample id → why its image is not the one the model saw (the outcome's own dict)."""
    invalid: int = 0
    problems: list[SampleProblem] = field(default_factory=list)

    def chunks(self) -> Iterator[list[Sample]]:
        """The recorded samples, `CHUNK_SAMPLES` at a time, in id order."""
        for page in self.store.recorded_sample_chunks(
            self.run_id, runner.CHUNK_SAMPLES, images=self.images
        ):
            for sample_id, why in page.unusable.items():
                self.unusable.setdefault(sample_id, why)
            yield page.samples


def _recorded_load(
    store: Store, source: str, data: str, *, images: bool
) -> tuple[LoadResult | StoredLoad, dict[str, str]]:
    """Stored run `source`'s samples: held when they fit in a chunk, else a `StoredLoad`.

    Read once, a page at a time, to count them, note their kinds and check their files.
    Returns the samples and the unusable ones (sample id → why).
    """
    unusable: dict[str, str] = {}
    kinds: dict[SampleKind, None] = {}
    held: list[Sample] = []
    count = pages = 0
    for page in store.recorded_sample_chunks(source, runner.CHUNK_SAMPLES, images=images):
        unusable.update(page.unusable)
        kinds.update(dict.fromkeys(sample_kind(s) for s in page.samples))
        count += len(page.samples)
        pages += 1
        held = page.samples if pages == 1 else []
        del page  # not held while the next page is read, nor after
    if pages <= 1:
        return LoadResult(samples=held, source=data), unusable
    return StoredLoad(store, source, images, data, count, kinds, unusable), unusable


def _model_outcome(store: Store, source: str, model: str, identity: ModelIdentity) -> ModelOutcome:
    """One model's stored answers, counted as `lmmprobe.run.answer_requests` counts them.

    Read chunk by chunk: its distinct keys in the order its rows first name them, their
    responses read `_CHUNK` keys at a time (the order the sums are taken in), without holding
    its rows or every key.
    """
    mo = ModelOutcome(model, identity)
    earlier = EarlierKeys()
    pending: list[str] = []
    for scores in score_chunks(store, source, model):
        mo.rows += len(scores)
        mo.error_types.update(s.error_type for s in scores if s.error_type)
        keys = list(dict.fromkeys(s.key for s in scores))
        seen = earlier.among(keys)
        earlier.add(keys)
        pending += [k for k, was in zip(keys, seen, strict=True) if not was]
        while len(pending) >= _CHUNK:
            _count_responses(store, mo, pending[:_CHUNK])
            del pending[:_CHUNK]
    if pending:
        _count_responses(store, mo, pending)
    return mo


def _count_responses(store: Store, mo: ModelOutcome, keys: Iterable[str]) -> None:
    keys = list(keys)
    mo.requests += len(keys)
    mo.cached += len(keys)
    for resp in store.get_responses(keys, include_errors=True).values():
        mo.latency_s_total += resp.latency_s
        mo.errors += int(resp.error is not None)
        mo.redacted += int(resp.redacted)
        if resp.usage is not None:
            mo.prompt_tokens += resp.usage.prompt_tokens or 0
            mo.completion_tokens += resp.usage.completion_tokens or 0
