"""Garbage-collector settings for the runner's hot loops."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def fewer_collections() -> Iterator[None]:
    """No automatic collection in the runner's own loops; model code still collects.

    A run allocates tens of thousands of samples, asks, responses and scores that all stay alive
    until the end, and makes no reference cycles of its own. The collector would only rescan
    them again and again (about a third of a cached re-run with default settings). Inside this
    context automatic collection is off, except inside `normal_collections` (the runner wraps
    model calls in it: backends may make cycles). Objects that existed before are frozen, and
    on leaving, everything made inside is moved to the oldest generation without a scan, so
    turning collection back on does not begin with one big collection either.
    """
    enabled = gc.isenabled()
    # Only an outermost use freezes: unfreezing also releases what someone else froze.
    outermost = gc.get_freeze_count() == 0
    if outermost:
        gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        if outermost:
            gc.freeze()  # everything, the objects made inside too; resets the young count
            gc.unfreeze()  # back as the oldest generation, unscanned
        if enabled:
            gc.enable()


@contextmanager
def normal_collections() -> Iterator[None]:
    """Automatic collection on, as outside the runner (for code that may make cycles)."""
    enabled = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        if not enabled:
            gc.disable()
