"""Counting the live instances of a class made during a test, cheaply.

A memory test asks how many objects of a class (`Sample`, `Score`) are alive while a run
streams its rows. The count is a collection and a scan of the objects the collector tracks;
in a test worker that has imported torch and run much of the suite that is millions of
objects, and a test doing it every few rows took minutes. `objects_made_since` collects the
garbage and freezes every object alive when it is entered (`gc.freeze`: the collector, and
`gc.get_objects`, then leave them out), so each count collects and scans only what was made
since: the test's own objects.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def objects_made_since() -> Iterator[None]:
    """Within the block, `alive` counts only objects made after it was entered.

    Objects older than the block are frozen (not collected, not listed) until it ends, when
    they are handed back to the collector.
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def alive(cls: type) -> int:
    """The instances of `cls` (subclasses included) alive now, once garbage is collected.

    Inside `objects_made_since`, those made since it was entered.
    """
    gc.collect()  # what is only garbage is not held
    return sum(1 for o in gc.get_objects() if isinstance(o, cls))
