"""Row checks shared by the file sources: how deep a row nests."""

from __future__ import annotations

import random
from typing import Any

from lmmprobe.data.rows import MAX_NESTING, _deep_path, too_deep


def _nested(rng: random.Random, depth: int) -> Any:
    # A random mix of objects, lists, tuples and scalars up to `depth` levels.
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(["x", 1, None, 2.5, True])
    kind = rng.choice(["dict", "list", "tuple"])
    items = [_nested(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    if kind == "dict":
        return {f"k{i}": v for i, v in enumerate(items)}
    return items if kind == "list" else tuple(items)


def test_too_deep_names_what_the_plain_walk_names() -> None:
    # too_deep answers most rows without building paths; whatever the shape, it must give
    # the path the plain walk (every container visited with its path) gives, or None with it.
    rng = random.Random(5)
    found = 0
    for _ in range(3000):
        value = _nested(rng, rng.randint(0, 8))
        for limit in (0, 1, 2, 3, 5):
            assert too_deep(value, limit) == _deep_path(value, limit)
            found += too_deep(value, limit) is not None
    assert found > 1000  # both answers were exercised, not only None


def test_too_deep_past_the_recursion_limit() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = {"a": [deep]}
    assert too_deep(deep) == _deep_path(deep, MAX_NESTING) == "a[0].a..."
    assert too_deep({"a": [[[1]]]}) is None
