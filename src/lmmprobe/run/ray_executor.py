"""The Ray executor: model replicas as Ray actors, the driver alone writing to the store.

Each replica is a Ray actor that builds the model itself from the run's model spec (the
registry's factory, sent by reference), so the driver never needs the weights: the ``hf``
backend reads only the config and processor there (its weights load on the first request, and
the driver sends it none). Pending requests are cut into batches (`plan_batches`) and handed
to the replicas with at most `max_in_flight` batches per replica (backpressure: a slow replica
is not flooded, and an abort leaves little work thrown away); finished batches come back to the
driver in arrival order, and the driver stores each one in one transaction (`on_batch`) before
it decides anything else, exactly as the local executor does. Errors are the local executor's:
a replica runs the same `call_batch`, and the driver applies the same `AbortPolicy`.

Images travel by reference where a replica can read them (recipes always; file paths to
replicas on the driver's own machine) and through Ray's object store otherwise: each such image
is put there once and fetched once per replica, never copied into every request.

Faults: when a replica's worker dies (killed, out of memory, node lost), its batches in flight
go back to the front of the queue for the other replicas and the replica is started again (and
its model's identity checked again), up to `max_restarts` times each; one more death aborts the
run (`ReplicasLost`). A batch that was in flight when a replica died is a suspect: it runs
alone on a replica next, so a second death is surely its own; a batch that killed two replicas
is split in halves, and a single request that did is stored as an ``internal`` error (the run
goes on). Responses are stored by key and each batch is stored once, when its one answer
arrives, so nothing is stored twice; a killed driver loses only the batches in flight, and a
re-run resumes from the store.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import socket
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lmmprobe.models.api_keys import scrub_secrets
from lmmprobe.models.base import MODELS, AsyncModel, Model, ModelFactory, backend_spec_parts
from lmmprobe.registry import RegistryError
from lmmprobe.run._ray_local import LocalRay, start_local
from lmmprobe.run._ray_replica import (
    AsyncReplica,
    ImageSlot,
    SyncReplica,
    WireBatch,
    ray_module,
)
from lmmprobe.run.executor import (
    DEFAULT_MAX_TRANSIENT_FAILURES,
    AbortPolicy,
    BatchResult,
    OnBatch,
    RunAborted,
    StopSending,
    failed_result,
    plan_batches,
)
from lmmprobe.schema import ErrorInfo, ImageRef, Request, Response, RunSpec
from lmmprobe.schema.image import Renderer
from lmmprobe.schema.spec import check_ray_resource, ray_address

log = logging.getLogger(__name__)

ImageTransport = Literal["auto", "reference", "object_store"]

DEATHS_PER_BATCH = 2
"""Replica deaths a batch may cause before it is split (or, one request, stored as an error)."""


class ReplicasLost(RunAborted):
    """A replica died more often than the executor restarts one; the run stops (``failed``)."""


@dataclass
class ReplicaInfo:
    """One replica as the driver knows it.

    Attributes:
        index: The replica's number, 0-based.
        pid: Its worker's process id (None until it has answered or described itself).
        node_id: The Ray node it runs on (None after a restart, until known again).
        restarts: How often it was started again after its worker died.

    """

    index: int
    pid: int | None
    node_id: str | None
    restarts: int


@dataclass
class _Slot:
    """A replica position: the current actor, and how often it had to be replaced."""

    index: int
    handle: Any
    gen: int = 0
    restarts: int = 0
    pid: int | None = None
    node_id: str | None = None
    local: bool = False  # on the driver's node, so it reads the driver's files
    in_flight: int = 0
    solo: bool = False  # running a suspect batch alone: no other batch is sent to it meanwhile


@dataclass
class _Sent:
    """A batch in flight: where it went (the replica and its generation) and whether alone."""

    slot: _Slot
    gen: int
    batch: list[Request]
    solo: bool


@dataclass
class _Placement:
    replicas: int
    num_gpus: float
    num_cpus: float
    is_async: bool
    in_flight: int
    concurrency: int


@dataclass
class _Pool:
    """One model's replicas, from its first requests until its session ends (or one call's).

    Attributes:
        renderers: The recipe renderers every replica has registered: those of the requests
            it was started for, and those later chunks brought (`RayExecutor._add_renderers`).
            A replica started again gets them all.
        stats: What `RayExecutor.stats` says of this model.

    """

    model_spec: str
    place: _Placement
    actor: Any  # the replica's actor class, with its resources
    factory: ModelFactory
    target: str | None
    options: dict[str, str]
    renderers: dict[str, tuple[str, Renderer]]
    slots: list[_Slot] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    def start(self) -> Any:
        """A new replica (its actor handle); it builds the model as soon as Ray places it."""
        args: tuple[Any, ...] = (self.factory, self.target, self.options, dict(self.renderers))
        if self.place.is_async:
            args = (*args, self.place.concurrency)
        return self.actor.remote(*args)


@dataclass
class RayExecutor:
    """Runs a model's requests on replicas that are Ray actors (see the module docstring).

    Args:
        address: Ray cluster to join: None starts a local instance (or joins $RAY_ADDRESS)
            that listens on loopback only, with a token of its own, and whose processes end
            with this one (`lmmprobe.run._ray_local`);
            ``auto`` the cluster this machine is part of, ``HOST:PORT`` a head node,
            ``ray://HOST:PORT`` through Ray Client. Ignored when Ray is already initialised
            in this process (a notebook, a test): that instance is used as it is.
        replicas: Replicas per model; None: one per GPU of the cluster when replicas use GPUs
            (``hf`` on a cluster with GPUs), else one (each replica of a CPU model would load
            its own copy of the weights; an API model's replicas multiply its concurrency: ask
            for more with `replicas`).
        gpus_per_replica: GPUs each replica reserves; None: 1 for ``hf`` models when the
            cluster has GPUs (one replica per GPU), else 0.
        cpus_per_replica: CPUs each replica reserves; None: 1.
        max_in_flight: Batches sent to one replica before it answers; None: 2 for a
            synchronous backend (one running, one waiting), twice the concurrency for an async
            one.
        max_concurrency: Calls at once inside each replica of an async backend; None: the
            backend's own limit. N replicas multiply it.
        max_restarts: Times each replica is started again after its worker died; one more
            death stops the run (`ReplicasLost`). A death a suspect batch caused while running
            alone is the batch's, not the replica's, and is not counted here.
        ready_timeout_s: Seconds to wait for a replica to be placed and build its model (at
            the start and after each restart) before the run fails, naming the resources.
        images: ``auto``: recipes and (for replicas on the driver's machine) file paths by
            reference, everything else through the object store once; ``reference``: every
            path by reference (a filesystem every node shares); ``object_store``: every image
            but recipes through the object store.
        max_consecutive_failures: As `LocalExecutor`'s (`AbortPolicy`).
        max_auth_failures: As `LocalExecutor`'s (`AbortPolicy`).
        max_transient_failures: As `LocalExecutor`'s (`AbortPolicy`).

    A model's replicas start on its first requests and are killed when its session ends
    (`model_session`, which the runner opens around all of a model's chunks), so a run of
    many chunks starts each replica (and loads an ``hf`` model's weights) once per model.
    Called outside a session, `execute_spec` is a session of its own.

    Use it as a context manager, or call `close`, to shut down a Ray instance it started.

    """

    address: str | None = None
    replicas: int | None = None
    gpus_per_replica: float | None = None
    cpus_per_replica: float | None = None
    max_in_flight: int | None = None
    max_concurrency: int | None = None
    max_restarts: int = 3
    ready_timeout_s: float = 120.0
    images: ImageTransport = "auto"
    max_consecutive_failures: int = 20
    max_auth_failures: int = 3
    max_transient_failures: int = DEFAULT_MAX_TRANSIENT_FAILURES
    stats: dict[str, Any] = field(default_factory=dict, init=False)
    """The last model whose replicas started, over all its `execute_spec` calls (its chunks)
    in one session: ``ready_s`` (seconds until every replica had built its model), ``run_s``
    (seconds answering after that), ``batches``, ``restarts``, ``splits`` (batches cut in halves
    after killing two replicas), and ``pids``: the replicas' worker process ids, one per replica
    started (a restart adds one)."""
    _started_ray: bool = field(default=False, init=False, repr=False)
    _local: LocalRay | None = field(default=None, init=False, repr=False)
    _sessions: dict[str, _Pool | None] = field(default_factory=dict, init=False, repr=False)
    """Model spec → its replicas, for each open session (None until its first requests)."""
    _current: _Pool | None = field(default=None, init=False, repr=False)
    _bad_address: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.replicas is not None and self.replicas < 1:
            raise ValueError(f"replicas must be at least 1 (got {self.replicas})")
        if self.max_restarts < 0:
            raise ValueError(f"max_restarts must be 0 or more (got {self.max_restarts})")
        if self.ready_timeout_s <= 0:
            raise ValueError(f"ready_timeout_s must be positive (got {self.ready_timeout_s})")
        for name in ("gpus_per_replica", "cpus_per_replica"):
            try:
                check_ray_resource(getattr(self, name))
            except ValueError as exc:
                raise ValueError(f"{name}={getattr(self, name)!r}: {exc}") from None
        # Refuses bad stop limits now, not when the first model runs.
        AbortPolicy(
            self.max_consecutive_failures, self.max_auth_failures, self.max_transient_failures
        )

    @classmethod
    def from_spec(cls, spec: RunSpec) -> RayExecutor:
        """The executor a run spec asks for (``spec.executor`` is ``ray[:ADDRESS]``)."""
        return cls(
            address=ray_address(spec.executor),
            replicas=spec.replicas,
            gpus_per_replica=spec.gpus_per_replica,
            cpus_per_replica=spec.cpus_per_replica,
        )

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Shut down the Ray instance this executor started (one it joined stays up)."""
        if self._started_ray:
            if self._local is not None:
                self._local.shutdown()
                self._local = None
            else:
                ray_module().shutdown()
            self._started_ray = False

    def spec_fields(self) -> dict[str, Any]:
        """The `RunSpec` fields that record this executor with a run (what actually ran)."""
        if self.address is None:
            name = "ray"
        else:
            name = self.address if self.address.startswith("ray://") else f"ray:{self.address}"
        fields: dict[str, Any] = {"executor": name}
        for key in ("replicas", "gpus_per_replica", "cpus_per_replica"):
            fields[key] = getattr(self, key)  # None too: the executor's default is what runs
        return fields

    def replica_info(self) -> list[ReplicaInfo]:
        """The replicas of the model being run now (empty between models)."""
        slots = self._current.slots if self._current is not None else []
        return [ReplicaInfo(s.index, s.pid, s.node_id, s.restarts) for s in slots]

    # -- the protocol -----------------------------------------------------------------------

    def execute(
        self, model: Model | AsyncModel, requests: Sequence[Request], on_batch: OnBatch
    ) -> None:
        """Not usable without the model's spec: replicas build the model themselves.

        Raises:
            TypeError: Always; the runner calls `execute_spec`.

        """
        raise TypeError(
            "RayExecutor builds the model in each replica from its spec: call "
            "execute_spec(model_spec, model, requests, on_batch) (run_model and evaluate do)"
        )

    def execute_spec(
        self,
        model_spec: str,
        model: Model | AsyncModel,
        requests: Sequence[Request],
        on_batch: OnBatch,
    ) -> None:
        """Run every request once on replicas of `model_spec`, calling `on_batch` per batch.

        Args:
            model_spec: The spec each replica builds its model from (``hf:PATH,...``).
            model: The driver's own instance of it, for its identity and capabilities (the
                replicas' identity must equal it, or their answers would be stored under
                other keys).
            requests: The pending requests, keyed.
            on_batch: Stores a finished batch; called on this thread, in arrival order.

        Raises:
            RunAborted: As the local executor (`AbortPolicy`), or `ReplicasLost`.
            ValueError: The cluster lacks the resources the replicas ask for (checked before
                any starts, and again when one is not placed within `ready_timeout_s`), or a
                replica cannot build the model, or builds one of another identity.
            RegistryError: Ray is not installed.

        """
        if model_spec not in self._sessions:
            with self.model_session(model_spec, model):  # the replicas end with this call
                self.execute_spec(model_spec, model, requests, on_batch)
            return
        ray = self.connect()
        pool = self._sessions[model_spec]
        if pool is None:
            pool = self._sessions[model_spec] = self._start_pool(ray, model_spec, model, requests)
        else:
            self._add_renderers(ray, pool, requests)
        self._current = pool
        policy = AbortPolicy(
            self.max_consecutive_failures, self.max_auth_failures, self.max_transient_failures
        )
        batches: deque[list[Request]] = deque(
            plan_batches(requests, model.capabilities.max_batch_size)
        )
        pool.stats["batches"] += len(batches)
        # Images put in the object store for this call only: the driver holds a chunk's.
        shipper = _ImageShipper(ray, self.images)
        t0 = time.perf_counter()
        try:
            self._run(ray, pool, model, batches, shipper, policy, on_batch)
        except StopSending:
            raise  # every batch sent is back: the replicas are idle, and stay for the session
        except BaseException:
            # Batches may still be in flight on them: they are not used again.
            self._sessions[model_spec] = None
            self._release(ray, pool, close=False)
            raise
        finally:
            pool.stats["run_s"] += time.perf_counter() - t0
            shipper.clear()

    @contextlib.contextmanager
    def model_session(self, model_spec: str, model: Model | AsyncModel) -> Iterator[None]:
        """Keep `model_spec`'s replicas from its first `execute_spec` to the end of the block.

        The replicas start when the model first has requests to send (a model answered wholly
        from the store starts none) and are killed when the block ends, however it ends; on a
        normal end an async backend's replicas first close their connections. A session
        already open for `model_spec` is used as it is.

        Args:
            model_spec: The spec each replica builds its model from.
            model: The driver's own instance of it (unused here: `execute_spec` gets it).

        """
        if model_spec in self._sessions:
            yield
            return
        self._sessions[model_spec] = None
        finished = False
        try:
            yield
            finished = True
        finally:
            pool = self._sessions.pop(model_spec)
            if pool is not None:
                self._release(ray_module(), pool, close=finished)

    def _start_pool(
        self, ray: Any, model_spec: str, model: Model | AsyncModel, requests: Sequence[Request]
    ) -> _Pool:
        """Start `model_spec`'s replicas and wait until each has built the driver's model."""
        backend, target, options = backend_spec_parts(model_spec)
        place = self._placement(ray, backend, model)
        actor = ray.remote(AsyncReplica if place.is_async else SyncReplica).options(
            num_gpus=place.num_gpus,
            num_cpus=place.num_cpus,
            max_restarts=0,  # restarted here, so the driver knows which batches to run again
            # One call at a time for a synchronous backend (an hf model is not thread-safe);
            # an async one overlaps its calls on its event loop.
            max_concurrency=place.in_flight + 2 if place.is_async else 1,
        )
        pool = _Pool(
            model_spec, place, actor, MODELS.get(backend), target, options, _renderers(requests)
        )
        pool.stats = {"batches": 0, "restarts": 0, "splits": 0, "pids": [], "run_s": 0.0}
        self.stats = pool.stats
        self._current = pool
        t0 = time.perf_counter()
        try:
            for i in range(place.replicas):  # each kept as soon as it exists: none leaks
                pool.slots.append(_Slot(i, pool.start()))
            self._check_replicas(ray, pool, model, pool.slots)
        except BaseException:
            self._release(ray, pool, close=False)
            raise
        pool.stats["ready_s"] = time.perf_counter() - t0
        return pool

    def _add_renderers(self, ray: Any, pool: _Pool, requests: Sequence[Request]) -> None:
        """Register in `pool`'s replicas the recipe renderers `requests` bring that are new."""
        new = {n: r for n, r in _renderers(requests).items() if n not in pool.renderers}
        if not new:
            return
        pool.renderers.update(new)
        for ref in [slot.handle.add_renderers.remote(new) for slot in pool.slots]:
            # A replica that died meanwhile: its first batch finds out, and it is started
            # again with every renderer.
            with contextlib.suppress(ray.exceptions.RayActorError):
                ray.get(ref)

    def _release(self, ray: Any, pool: _Pool, *, close: bool) -> None:
        """Kill `pool`'s replicas (an async backend's closing its connections first if `close`)."""
        if self._current is pool:
            self._current = None
        if not ray.is_initialized():
            return  # Ray is shut down already (`close`): its actors went with it
        try:
            if close and pool.place.is_async:
                self._close_async(ray, pool)
        finally:
            for slot in pool.slots:
                ray.kill(slot.handle, no_restart=True)
            pool.slots = []

    def _close_async(self, ray: Any, pool: _Pool) -> None:
        """Let each async replica close its connections; every answer is already stored."""
        for slot in pool.slots:
            try:
                ray.get(slot.handle.close.remote())
            except ray.exceptions.RayError as exc:  # a replica lost after the last batch
                log.warning("replica %d of %s did not close: %s", slot.index, pool.model_spec, exc)

    # -- set-up -------------------------------------------------------------------------------

    def connect(self) -> Any:
        """Join the cluster (or start a local instance, or use the one already initialised).

        Returns:
            The ``ray`` module.

        Raises:
            RegistryError: Ray is not installed (the message gives the ``pip install``).
            ValueError: The cluster cannot be reached.

        """
        try:
            ray = ray_module()
        except ImportError as exc:
            raise RegistryError(str(exc)) from exc
        if not ray.is_initialized():
            address = self.address or os.environ.get("RAY_ADDRESS") or None
            if address is None:
                log.info("starting a local Ray instance (loopback only)")
                self._local = _start_local(ray)
            else:
                try:
                    _check_reachable(address)
                    ray.init(address=self.address)
                except (ConnectionError, RuntimeError, ValueError) as exc:
                    raise ValueError(
                        f"cannot join the Ray cluster at {address}: {_first(exc)}; start one "
                        "with `ray start --head` or check the address"
                    ) from exc
            self._started_ray = True
        return ray

    def _placement(self, ray: Any, backend: str, model: Model | AsyncModel) -> _Placement:
        total = ray.cluster_resources()
        gpus = self.gpus_per_replica
        if gpus is None:
            gpus = 1.0 if backend == "hf" and total.get("GPU", 0) > 0 else 0.0
        cpus = 1.0 if self.cpus_per_replica is None else self.cpus_per_replica
        n = self.replicas
        if n is None:
            # One per GPU; without GPUs one replica: each would load its own copy of the
            # weights (hf) or multiply an API's concurrency (openai) unasked.
            n = max(1, int(total.get("GPU", 0) // gpus)) if gpus > 0 else 1
        _check_fits(n, cpus, gpus, total)
        is_async = isinstance(model, AsyncModel) and model.capabilities.is_async
        concurrency = self.max_concurrency or model.capabilities.max_concurrency
        in_flight = self.max_in_flight or (2 * concurrency if is_async else 2)
        return _Placement(n, gpus, cpus, is_async, in_flight, concurrency)

    def _check_replicas(
        self, ray: Any, pool: _Pool, model: Model | AsyncModel, slots: list[_Slot]
    ) -> None:
        """Wait for `slots`' replicas to build their model; check it is the driver's model.

        Run at the start and after each restart, so a replica started again (perhaps on a
        node of another kind) never answers under the driver's keys with another model.
        """
        model_spec, place = pool.model_spec, pool.place
        refs = [s.handle.describe.remote() for s in slots]
        _, waiting = ray.wait(refs, num_returns=len(refs), timeout=self.ready_timeout_s)
        if waiting:
            late = [slots[refs.index(r)].index for r in waiting]
            raise ValueError(
                f"{len(late)} of {len(refs)} Ray replicas of {model_spec} (replicas "
                f"{', '.join(map(str, late))}) were not ready within {self.ready_timeout_s:g} s: "
                f"each asks for {_asks(place.num_cpus, place.num_gpus)} and the cluster has "
                f"{_has(ray.available_resources())} free of {_has(ray.cluster_resources())}; "
                "pass fewer --replicas or smaller --cpus-per-replica/--gpus-per-replica, add "
                "nodes, or give RayExecutor(ready_timeout_s=...) when building the model takes "
                "longer"
            )
        try:
            described = ray.get(refs)
        except ray.exceptions.RayError as exc:
            raise ValueError(
                f"a Ray replica could not build {model_spec}: {_reason(exc)}; check that every "
                "node has lmmprobe, the backend's libraries and the model's files"
            ) from exc
        mine = model.identity.cache_id()
        driver_node = ray.get_runtime_context().get_node_id()
        for slot, d in zip(slots, described, strict=True):
            if d["identity"] != mine:
                raise ValueError(
                    f"replica {slot.index} of {model_spec} built a model of another identity "
                    f"than the driver's, so its answers would be stored under other keys: "
                    f"driver {mine}, replica {d['identity']}. Pin what differs in the spec "
                    "(e.g. hf:...,dtype=bfloat16 when only the replicas have a GPU)"
                )
            slot.pid, slot.node_id = d["pid"], d["node_id"]
            slot.local = d["node_id"] == driver_node
        pool.stats["pids"] = [*pool.stats.get("pids", []), *(d["pid"] for d in described)]

    # -- the loop -----------------------------------------------------------------------------

    def _run(
        self,
        ray: Any,
        pool: _Pool,
        model: Model | AsyncModel,
        batches: deque[list[Request]],
        shipper: _ImageShipper,
        policy: AbortPolicy,
        on_batch: OnBatch,
    ) -> None:
        place = pool.place
        in_flight: dict[Any, _Sent] = {}
        # Replica deaths each batch was in flight for, by its requests' keys.
        deaths: dict[tuple[str, ...], int] = {}
        stop: list[StopSending] = []  # once on_batch says to send nothing more

        def store(batch: list[Request], result: BatchResult) -> None:
            responses = policy.settle(result)
            try:
                on_batch(batch, responses)
            except StopSending as exc:
                # What is in flight is answered (and paid for) all the same: it is awaited
                # and stored below; what is not sent yet never is.
                stop.append(exc)
                batches.clear()
            if not stop:
                policy.check(responses)

        while batches or in_flight:
            for slot in pool.slots:  # fill every replica up to its bound
                while batches and slot.in_flight < place.in_flight and not slot.solo:
                    # A suspect batch runs alone, so if its replica dies again it is the cause.
                    solo = deaths.get(_keys(batches[0]), 0) > 0
                    if solo and slot.in_flight:
                        break
                    batch = batches.popleft()
                    wire, objects = shipper.pack(batch, slot.local)
                    ref = slot.handle.run.remote(wire, objects)
                    in_flight[ref] = _Sent(slot, slot.gen, batch, solo)
                    slot.in_flight += 1
                    slot.solo = solo
            (ready,), _ = ray.wait(list(in_flight), num_returns=1)
            sent = in_flight.pop(ready)
            slot, batch = sent.slot, sent.batch
            if sent.gen == slot.gen:
                slot.in_flight -= 1
                slot.solo = slot.solo and not sent.solo
            try:
                result, slot.pid = ray.get(ready)
            except ray.exceptions.RayActorError as exc:
                if sent.gen == slot.gen:  # the first news of this death (its other batches follow)
                    lost = [sent] + [
                        o for o in in_flight.values() if o.slot is slot and o.gen == sent.gen
                    ]
                    for o in lost:
                        deaths[_keys(o.batch)] = deaths.get(_keys(o.batch), 0) + 1
                    # A suspect that died alone killed its replica: the batch's fault.
                    self._restart(ray, pool, slot, model, exc, counted=not sent.solo)
                if not stop:  # stopping: a lost batch is left unsent, as the ones not sent
                    self._requeue(pool, batch, deaths, batches, store)
                continue
            except ray.exceptions.RayError as exc:
                # The replica lives but the call failed: the backend raised through Ray (a
                # RayTaskError, stored as its cause, as locally), or outside the backend (an
                # argument that cannot be unpickled there, an image lost from the object store).
                cause = exc.cause if isinstance(exc, ray.exceptions.RayTaskError) else None
                result = failed_result(batch, cause if isinstance(cause, BaseException) else exc)
            store(batch, result)
        if stop:
            raise stop[0]

    def _requeue(
        self,
        pool: _Pool,
        batch: list[Request],
        deaths: dict[tuple[str, ...], int],
        batches: deque[list[Request]],
        store: Any,
    ) -> None:
        """Send a batch lost with its replica again: whole, in halves, or stored as an error."""
        if deaths.get(_keys(batch), 0) < DEATHS_PER_BATCH:
            batches.appendleft(batch)  # run again, on whichever replica is free first
        elif len(batch) > 1:
            # One of its requests kills the worker: halve until that one is alone. The halves
            # are suspects already, so each runs alone and only the guilty half dies again.
            half = len(batch) // 2
            for part in (batch[half:], batch[:half]):
                deaths[_keys(part)] = DEATHS_PER_BATCH - 1
                batches.appendleft(part)
            pool.stats["splits"] += 1
        else:
            message = (
                f"this request killed its Ray replica's worker {DEATHS_PER_BATCH} times (a "
                "crash in the backend: out of memory, a segfault), so it was not answered; "
                "check the workers' logs; a re-run asks it again"
            )
            info = ErrorInfo(type="internal", message=message, retryable=True)
            responses = [Response(key=r.key, error=info) for r in batch]
            store(batch, BatchResult(responses, unexpected=f"ReplicaKilled: {message}"))

    def _restart(
        self,
        ray: Any,
        pool: _Pool,
        slot: _Slot,
        model: Model | AsyncModel,
        exc: Exception,
        *,
        counted: bool,
    ) -> None:
        model_spec = pool.model_spec
        pool.stats["restarts"] += 1
        slot.restarts += counted
        reason = _reason(exc)
        if slot.restarts > self.max_restarts:
            raise ReplicasLost(
                f"replica {slot.index} of {model_spec} died {slot.restarts} times (the limit "
                f"is {self.max_restarts} restarts), last: {reason}. Everything answered is "
                "stored; check the workers' logs (out of memory? a request that crashes the "
                "model?)"
            )
        log.warning(
            "replica %d of %s died (%s); its batches run again, restart %d of %d",
            slot.index,
            model_spec,
            reason,
            slot.restarts,
            self.max_restarts,
        )
        ray.kill(slot.handle, no_restart=True)
        slot.handle = pool.start()
        slot.gen += 1
        slot.in_flight = 0
        slot.solo = False
        # It may start on another node, of another kind: nothing is sent to it before it has
        # built the driver's model (identity checked) and is known to be local or not.
        slot.pid = slot.node_id = None
        slot.local = False
        self._check_replicas(ray, pool, model, [slot])


class _ImageShipper:
    """Turns batches into wire form: images by reference, or once into the object store."""

    def __init__(self, ray: Any, mode: ImageTransport) -> None:
        self.ray = ray
        self.mode = mode
        self._objects: dict[str, Any] = {}

    def _by_reference(self, image: ImageRef, local: bool) -> bool:
        if image.kind == "recipe":
            return True
        if image.kind != "path" or self.mode == "object_store":
            return False
        return self.mode == "reference" or local

    def _put(self, image: ImageRef) -> str:
        h = image.content_hash()
        if h not in self._objects:
            if image.kind == "path":
                # The file's bytes, encoded as they are: the replica decodes what the driver
                # would have, and the content hash (of the encoded bytes) stays the same.
                with open(image.path or "", "rb") as f:
                    image = ImageRef.from_base64(base64.b64encode(f.read()).decode("ascii"))
            self._objects[h] = self.ray.put(image)
        return h

    def pack(self, batch: list[Request], local: bool) -> tuple[WireBatch, dict[str, Any]]:
        """The batch as sent to a replica (on the driver's node or not), and its objects."""
        wire: WireBatch = []
        objects: dict[str, Any] = {}
        for req in batch:
            if not req.images:
                wire.append((req, []))
                continue
            slots: list[ImageSlot] = []
            for image in req.images:
                if self._by_reference(image, local):
                    slots.append(image)
                    continue
                try:
                    h = self._put(image)
                except OSError:
                    # Unreadable here: sent as it is, the replica fails to read it as the
                    # local executor would, and stores the same typed error.
                    slots.append(image)
                    continue
                objects[h] = self._objects[h]
                slots.append(h)
            wire.append((req.model_copy(update={"images": []}), slots))
        return wire, objects

    def clear(self) -> None:
        """Drop the driver's references, so the object store can free the images."""
        self._objects.clear()


def _renderers(requests: Sequence[Request]) -> dict[str, tuple[str, Renderer]]:
    """The renderers the requests' recipe images need, to register in each replica.

    Their functions travel by reference (module and name), so importing them in the worker
    registers them there as on the driver.
    """
    from lmmprobe.schema.image import _RENDERERS  # the renderer table; no public accessor

    names = {i.renderer for r in requests for i in r.images if i.renderer is not None}
    return {n: _RENDERERS[n] for n in names if n in _RENDERERS}


JOIN_PROBE_S = 5.0
"""Seconds a cluster's ``HOST:PORT`` has to accept a connection before the join is refused:
``ray.init`` itself retries an address where nothing listens for ever (re-test 13 #2)."""


def _check_reachable(address: str) -> None:
    """Refuse a ``HOST:PORT`` cluster address where nothing accepts a connection.

    ``auto``, ``local`` and ``ray://`` addresses are left to Ray (they fail on their own).

    Raises:
        ConnectionError: Nothing answered within `JOIN_PROBE_S`.

    """
    if address in ("auto", "local") or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        return  # not HOST:PORT: Ray says what is wrong with it
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=JOIN_PROBE_S):
            pass
    except (OSError, OverflowError, ValueError) as exc:
        raise ConnectionError(
            f"nothing answers at {address} ({getattr(exc, 'strerror', None) or exc})"
        ) from None


def _start_local(ray: Any) -> LocalRay:
    """`start_local`, its failures in one line.

    Raises:
        ValueError: The instance did not start (Ray raises a bare ``Exception`` when its node
            times out, as under a memory limit: a traceback, re-test 13 #3).

    """
    try:
        return start_local(ray)
    except Exception as exc:
        raise ValueError(
            f"cannot start a local Ray instance: {_first(exc)}; Ray's logs are under "
            "/tmp/ray/session_latest/logs (too little memory or /dev/shm?)"
        ) from exc


def _first(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _reason(exc: BaseException) -> str:
    """One line saying why a replica died or failed to start (Ray's messages span pages)."""
    text = scrub_secrets(" ".join(str(exc).split()))  # a worker's error may quote a key
    return text[:400] + ("…" if len(text) > 400 else "")


def _keys(batch: Sequence[Request]) -> tuple[str, ...]:
    return tuple(r.key for r in batch)


def _asks(cpus: float, gpus: float) -> str:
    return f"{cpus:g} CPU and {gpus:g} GPU"


def _amount(value: float, what: str) -> str:
    """``1 CPU``, ``2 CPUs``, ``0.5 CPUs``: a resource count with its unit."""
    return f"{value:g} {what}{'' if value == 1 else 's'}"


def _has(resources: dict[str, float]) -> str:
    return (
        f"{_amount(resources.get('CPU', 0), 'CPU')} and {_amount(resources.get('GPU', 0), 'GPU')}"
    )


def _check_fits(n: int, cpus: float, gpus: float, total: dict[str, float]) -> None:
    """Refuse replicas the cluster can never place (Ray would wait for them for ever).

    Raises:
        ValueError: Naming what is asked, what the cluster has, and what to pass instead.

    """
    short = [
        (what, per, total.get(what, 0.0))
        for what, per in (("CPU", cpus), ("GPU", gpus))
        if n * per > total.get(what, 0.0)
    ]
    if not short:
        return
    fit = min(int(have // per) for _, per, have in short)
    asked = "; ".join(f"{n} x {per:g} = {_amount(n * per, what)}" for what, per, _ in short)
    if fit >= 1:
        advice = f"pass --replicas {fit}"
    elif any(what == "GPU" for what, _, _ in short):
        advice = "pass --gpus-per-replica 0 to run on CPUs, or join a cluster with GPUs"
    else:
        advice = "pass a smaller --cpus-per-replica"
    raise ValueError(
        f"the Ray cluster cannot place {n} replica{'' if n == 1 else 's'}: "
        f"{'it asks' if n == 1 else 'they ask'} for {asked}, and it has {_has(total)} in all; "
        f"{advice} (or add nodes)"
    )
