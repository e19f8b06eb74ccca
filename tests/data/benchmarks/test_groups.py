"""Which groups ``lmmprobe data list`` puts a benchmark under, from its definition (issue 37, 4).

A group is data on the definitions (`Benchmark.groups`, and the sets naming a benchmark as a
member), never a guess from the name: these build definitions without registering them and
check `groups_of` over them, then check every registered benchmark has one family.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from lmmprobe.data.benchmarks import BENCHMARKS, Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks._describe import benchmark_groups, groups_of
from lmmprobe.data.benchmarks.base import GROUPS


def _row(row: Mapping[str, Any], ctx: RowContext) -> None:
    return None


def _define(name: str, **fields: Any) -> Benchmark:
    fields.setdefault("fetch", "true")
    if fields.get("members"):
        fields.setdefault("layout", "files")
    return Benchmark(
        name=name,
        title=name,
        citation="c",
        license="l",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate("{question}", "s"),
        to_sample=_row,
        **fields,
    )


def test_a_benchmark_is_in_its_own_groups_its_sets_and_one_family() -> None:
    multi = _define("toy-multi", groups=("multi-image", "chinese"))
    plain = _define("toy-plain")
    board = _define("toy-board", members=("toy-multi", "toy-plain"), groups=("leaderboard",))
    family = _define("toy-family", members=("toy-plain",), groups=("hemm",))
    found = groups_of([multi, plain, board, family])
    # Several groups at once, in GROUPS order; a family set's members leave `standard`.
    assert found["toy-multi"] == ["standard", "leaderboard", "multi-image", "chinese"]
    assert found["toy-plain"] == ["leaderboard", "hemm"]
    assert found["toy-board"] == ["standard", "leaderboard"]
    assert found["toy-family"] == ["hemm"]


def test_a_set_naming_no_group_is_in_what_its_members_share() -> None:
    a = _define("toy-a", groups=("reform-eval", "multi-image"))
    b = _define("toy-b", groups=("reform-eval",))
    dimension = _define("toy-dim", members=("toy-a", "toy-b", "toy-not-defined-here"))
    assert groups_of([a, b, dimension])["toy-dim"] == ["reform-eval"]


@pytest.mark.parametrize(
    ("groups", "why"),
    [
        (("multi_image",), "groups must be a tuple of"),
        ("chinese", "groups must be a tuple of"),
        (("hemm", "dysca"), "more than one family"),
    ],
)
def test_a_group_that_is_not_one_is_refused(groups: Any, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        _define("toy-bad", groups=groups)


@pytest.mark.parametrize("name", BENCHMARKS.names())
def test_every_registered_benchmark_has_one_family(name: str) -> None:
    groups = benchmark_groups(BENCHMARKS.get(name))
    assert sum(GROUPS[g].family for g in groups) == 1, (name, groups)
