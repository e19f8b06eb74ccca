"""Garbage-collector tuning for the runner's hot loops."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def fewer_collections(threshold0: int = 50_000, threshold1: int = 1_000) -> Iterator[None]:
    """Collect less while a run creates many long-lived objects.

    A run allocates tens of thousands of samples, asks and scores that all stay alive until the
    end. With the default thresholds (700, 10) the collector rescans them over and over, and
    every tenth young collection also rescans everything that survived the earlier ones; both
    cost about a third of a cached re-run. Inside this context young collections come every
    `threshold0` allocations and older ones every `threshold1` young ones, and the objects
    that existed before it (e.g. an earlier run's results in a notebook) are frozen, i.e. not
    scanned at all. Cyclic garbage is still collected, only in larger steps.
    """
    old = gc.get_threshold()
    # Only an outermost use freezes: unfreezing also releases what someone else froze.
    froze = gc.get_freeze_count() == 0
    if froze:
        gc.freeze()
    gc.set_threshold(threshold0, threshold1, old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)
        if froze:
            gc.unfreeze()
