"""What runs inside a Ray worker: one model replica, built from its spec, answering batches.

Kept apart from the driver's scheduling (`ray_executor`) so what a worker imports is small and
its contract plain: the driver sends batches in a wire form (`WireBatch`), the replica rebuilds
the requests, calls the backend through the executor's own `call_batch` / `acall_batch` (the
same typed errors as the local executor) and returns a `BatchResult` with its process id.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lmmprobe._optional import require
from lmmprobe.models.base import AsyncModel, ClosableModel, Model, ModelFactory
from lmmprobe.run.executor import BatchResult, acall_batch, call_batch
from lmmprobe.schema import ImageRef, Request
from lmmprobe.schema.image import Renderer, register_renderer

if TYPE_CHECKING:  # asyncio itself is imported where a replica awaits: a local run never does
    import asyncio

ImageSlot = ImageRef | str
"""An image as sent: the reference itself, or the content hash of one in the object store."""
WireBatch = list[tuple[Request, list[ImageSlot]]]
"""A batch on its way to a replica: each request without images, and its images' slots."""

_IMAGE_CACHE = 512
"""Images a replica keeps after fetching them from the object store (repeats share images)."""


def ray_module() -> Any:
    """The ``ray`` module, or an ImportError naming the extra that installs it."""
    (ray,) = require("ray", extra="ray", purpose="the Ray executor (--executor ray)")
    return ray


class _ReplicaBase:
    """Builds the model in this worker and turns wire batches back into requests."""

    def __init__(
        self,
        factory: ModelFactory,
        target: str | None,
        options: dict[str, str],
        renderers: dict[str, tuple[str, Renderer]],
    ) -> None:
        # Recipe images are drawn here: their renderers are registered as on the driver.
        self.add_renderers(renderers)
        self.model: Model | AsyncModel = factory(target, options)
        self._images: OrderedDict[str, ImageRef] = OrderedDict()

    def add_renderers(self, renderers: dict[str, tuple[str, Renderer]]) -> None:
        """Register recipe renderers as on the driver (a later chunk may bring new ones)."""
        for name, (version, fn) in renderers.items():
            register_renderer(name, version, fn)

    def describe(self) -> dict[str, Any]:
        """Process id, node id and the model's cache identity (checked against the driver's)."""
        ray = ray_module()
        return {
            "pid": os.getpid(),
            "node_id": ray.get_runtime_context().get_node_id(),
            "identity": self.model.identity.cache_id(),
        }

    def _fetch(self, wire: WireBatch, objects: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
        """The shipped images `wire` needs, and the object references of those not held yet."""
        needed = {s for _, slots in wire for s in slots if isinstance(s, str)}
        return needed, {h: objects[h] for h in needed if h not in self._images}

    def _remember(self, needed: set[str], fetched: dict[str, ImageRef]) -> None:
        self._images.update(fetched)
        for h in needed:  # most recently used last: the oldest are dropped first
            self._images.move_to_end(h)
        while len(self._images) > max(_IMAGE_CACHE, len(needed)):
            self._images.popitem(last=False)

    def _unpack(self, wire: WireBatch) -> list[Request]:
        out = []
        for req, slots in wire:
            images = [self._images[s] if isinstance(s, str) else s for s in slots]
            out.append(req.model_copy(update={"images": images}) if images else req)
        return out


class SyncReplica(_ReplicaBase):
    """A replica of a synchronous backend: one batch at a time (an hf model on its GPU)."""

    def run(self, wire: WireBatch, objects: dict[str, Any]) -> tuple[BatchResult, int]:
        """Answer one batch; the result and this worker's pid."""
        needed, missing = self._fetch(wire, objects)
        got = ray_module().get(list(missing.values())) if missing else []
        self._remember(needed, dict(zip(missing, got, strict=True)))
        model = self.model
        assert isinstance(model, Model)
        return call_batch(model, self._unpack(wire)), os.getpid()


class AsyncReplica(_ReplicaBase):
    """A replica of an async backend: its own event loop, its own concurrency limit.

    Ray runs an actor with async methods on an event loop of its own, so each replica sends
    up to `concurrency` calls at once and N replicas multiply the API concurrency.
    """

    def __init__(
        self,
        factory: ModelFactory,
        target: str | None,
        options: dict[str, str],
        renderers: dict[str, tuple[str, Renderer]],
        concurrency: int,
    ) -> None:
        super().__init__(factory, target, options, renderers)
        self.concurrency = concurrency
        self._sem: asyncio.Semaphore | None = None

    async def run(self, wire: WireBatch, objects: dict[str, Any]) -> tuple[BatchResult, int]:
        """Answer one batch (up to `concurrency` at once); the result and this worker's pid."""
        import asyncio

        needed, missing = self._fetch(wire, objects)
        while missing:
            # Object references are awaitable: fetching never blocks the replica's other calls.
            got: Sequence[ImageRef] = await asyncio.gather(*missing.values())
            self._images.update(zip(missing, got, strict=True))
            # Another call may have dropped an image this one counted on while it waited.
            needed, missing = self._fetch(wire, objects)
        self._remember(needed, {})
        # Unpacked now, before waiting for a turn: meanwhile other calls may drop the images
        # this one needs from the cache.
        reqs = self._unpack(wire)
        if self._sem is None:  # created inside the actor's event loop
            self._sem = asyncio.Semaphore(self.concurrency)
        model = self.model
        assert isinstance(model, AsyncModel)
        async with self._sem:
            return await acall_batch(model, reqs), os.getpid()

    async def close(self) -> None:
        """Release the backend's connections inside the loop that used them."""
        if isinstance(self.model, ClosableModel):
            await self.model.aclose()
