"""The runner's collector tuning leaves the process as it found it."""

from __future__ import annotations

import gc

from lmmprobe.run._gc import fewer_collections


def test_thresholds_and_frozen_objects_are_restored() -> None:
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with fewer_collections():
        assert gc.get_threshold()[:2] == (50_000, 1_000)
        assert gc.get_freeze_count() > 0  # what existed before is not rescanned
        with fewer_collections():  # nested: the outer context keeps the freeze
            pass
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_restored_after_an_error() -> None:
    before = gc.get_threshold()
    try:
        with fewer_collections():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_cyclic_garbage_made_inside_is_still_collectable() -> None:
    class Node:
        ref: object = None

    with fewer_collections():
        a, b = Node(), Node()
        a.ref, b.ref = b, a
        del a, b
    assert gc.collect() >= 2
