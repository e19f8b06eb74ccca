"""Fake model backends for runner tests (external-model stand-ins, not lmmprobe components).

Each answers deterministically from the request key, so interrupted and uninterrupted runs
must agree, and records every key it is asked about.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

from lmmprobe.models.base import (
    Capabilities,
    ModelIdentity,
    RateLimitError,
    UnsupportedInputError,
)
from lmmprobe.schema import Request, Response


def keyed_answer(req: Request) -> str:
    """A mark chosen by the key: deterministic, roughly uniform."""
    marks = req.marks or ["A"]
    return f"The answer is ({marks[int(req.key[:8], 16) % len(marks)]})."


class RecordingModel:
    """Sync backend: answers by key, records calls and batch sizes, can fail or be slow."""

    def __init__(
        self,
        name: str = "recording",
        batch: int = 8,
        delay: float = 0.0,
        text: str | None = None,
        fail_keys: set[str] | None = None,
        likelihood: bool = True,
        max_images: int | None = None,
        calls_file: str | None = None,
    ) -> None:
        self.identity = ModelIdentity(backend="fake", name=name)
        self.capabilities = Capabilities(
            likelihood=likelihood, max_batch_size=batch, max_images=max_images
        )
        self.delay = delay
        self.text = text
        self.fail_keys = fail_keys if fail_keys is not None else set()
        self.calls: list[str] = []
        self.batch_sizes: list[int] = []
        self.calls_file = calls_file

    def _record(self, requests: Sequence[Request]) -> None:
        if self.delay:
            time.sleep(self.delay)
        keys = [r.key for r in requests]
        self.calls.extend(keys)
        self.batch_sizes.append(len(requests))
        if self.calls_file:
            with open(self.calls_file, "a") as f:
                f.write("".join(k + "\n" for k in keys))

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        self._record(requests)
        out = []
        for r in requests:
            if r.key in self.fail_keys:
                out.append(Response(key=r.key, error=RateLimitError("slow down").to_info()))
            else:
                out.append(
                    Response(
                        key=r.key, text=self.text if self.text is not None else keyed_answer(r)
                    )
                )
        return out

    def loglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        if not self.capabilities.likelihood:
            raise UnsupportedInputError("no likelihoods")
        self._record(requests)
        return [
            Response(key=r.key, loglikelihoods=[-float(len(c)) for c in r.candidates or []])
            for r in requests
        ]


class AsyncRecordingModel:
    """Async backend that tracks how many calls are in flight at once."""

    def __init__(self, concurrency: int = 3, delay: float = 0.01) -> None:
        self.identity = ModelIdentity(backend="fake-async", name="async")
        self.capabilities = Capabilities(
            is_async=True, max_concurrency=concurrency, max_batch_size=1
        )
        self.delay = delay
        self.in_flight = 0
        self.peak = 0
        self.calls = 0
        self._lock = threading.Lock()

    async def agenerate(self, requests: Sequence[Request]) -> list[Response]:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self.calls += 1
        try:
            await asyncio.sleep(self.delay)
            return [Response(key=r.key, text=keyed_answer(r)) for r in requests]
        finally:
            self.in_flight -= 1

    async def aloglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        raise UnsupportedInputError("no likelihoods")


class ExplodingModel:
    """Raises an unexpected exception on every call (a backend bug)."""

    def __init__(self) -> None:
        self.identity = ModelIdentity(backend="fake", name="exploding")
        self.capabilities = Capabilities(max_batch_size=1)
        self.calls = 0

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.calls += 1
        raise ZeroDivisionError("bug in backend")

    def loglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        raise ZeroDivisionError("bug in backend")
