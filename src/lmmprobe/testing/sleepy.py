"""``sleepy``: a stand-in for a model server whose every batch takes a fixed time.

It answers as the ``first`` baseline does (the first option shown), after sleeping
``delay`` seconds per batch (default 0.05) whatever the batch's size: the time is spent
waiting, not computing, like a GPU or a remote server working while the caller's CPU is idle.
That makes it the yardstick of the executors' scheduling (benchmarks/distributed.py): N
replicas should answer N times as fast however few CPU cores the machine has.

Importing this module registers ``sleepy`` in the model registry; a Ray replica, which
receives the factory by reference, imports it itself. Options: ``delay`` (seconds per batch),
``batch`` (requests per batch, default 8). Not part of lmmprobe's own registry: load it with
``import lmmprobe.testing.sleepy`` first.
"""

from __future__ import annotations

import time

from lmmprobe.models.base import MODELS
from lmmprobe.models.baselines import FirstBaseline

DEFAULT_DELAY = 0.05
"""Seconds each batch sleeps."""


@MODELS.register(
    "sleepy", summary="sleepy  first option after DELAY seconds per batch (delay, batch)"
)
class SleepyModel(FirstBaseline):
    """The ``first`` baseline sleeping `delay` seconds per batch (not per request)."""

    backend = "sleepy"

    def __init__(self, target: str | None, options: dict[str, str]) -> None:
        super().__init__(target, {"delay": str(DEFAULT_DELAY), "batch": "8", **options})

    def _wait(self, n: int) -> None:
        if self.delay > 0:
            time.sleep(self.delay)
