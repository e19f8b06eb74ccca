"""The runner's collector settings leave the process as they found it."""

from __future__ import annotations

import gc

from lmmprobe.run._gc import fewer_collections, normal_collections


class _Node:
    ref: object = None


def _cycle() -> None:
    a, b = _Node(), _Node()
    a.ref, b.ref = b, a


def test_settings_are_restored_and_nothing_stays_frozen() -> None:
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with fewer_collections():
        assert not gc.isenabled()
        assert gc.get_freeze_count() > 0  # what existed before is not rescanned
        with fewer_collections():  # nested: the outer context keeps its settings
            assert not gc.isenabled()
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        with normal_collections():  # e.g. model calls
            assert gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_restored_after_an_error() -> None:
    try:
        with fewer_collections():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_cycles_made_inside_are_collected_afterwards() -> None:
    gc.collect()
    with fewer_collections():
        _cycle()
        _cycle()
    assert gc.collect() >= 4  # two cycles of two nodes (and their dicts)


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with fewer_collections(), normal_collections():
            assert gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
