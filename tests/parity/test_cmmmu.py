"""CMMMU's reading and figure against its released ``eval_script.py`` (random draws included).

Data: ``data/cmmmu.json.gz``, made by ``generate/cmmmu.py`` running CMMMU-Benchmark/CMMMU @
59a4776's ``eval/eval_script.py`` and ``eval/utils/eval_utils.py`` on seeded hard answers.
"""

from __future__ import annotations

import gzip
import json
import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.metrics.cmmmu import (
    CMMMU_CATEGORIES,
    CMMMU_COMMIT,
    CmmmuItem,
    cmmmu_evaluate,
    cmmmu_multi_choice,
    cmmmu_true_false,
)

DATA = Path(__file__).parent / "data" / "cmmmu.json.gz"


@cache
def _doc() -> dict[str, Any]:
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def _case(name: str) -> dict[str, Any]:
    return next(c for c in _doc()["cases"] if c["name"] == name)


def _items(case: dict[str, Any]) -> list[CmmmuItem]:
    data = {d["id"]: d for d in case["data"]}
    out = []
    for o in case["output"]:
        d = data[o["id"]]
        out.append(
            CmmmuItem(
                id=str(o["id"]),
                type=o["type"],
                answer=d["answer"],
                response=o["response"],
                category=d["category"],
                index2ans={k: d.get(f"option{i}", "") for i, k in enumerate("ABCD", 1)}
                if d["type"] == "选择"
                else {},
            )
        )
    return out


def test_the_data_names_the_reproduced_commit() -> None:
    assert _doc()["reference"]["commit"] == CMMMU_COMMIT


@pytest.mark.parametrize("name", ["generated", "partial"])
def test_every_verdict_draw_and_figure_equals_the_released_script(name: str) -> None:
    case = _case(name)
    expected = case["expected"]
    got = cmmmu_evaluate(_items(case))
    for sid, item in expected["items"].items():
        assert got.correct[sid] == (item["judge"] == "正确"), sid
        if item["predicted_answer"] is not None:  # a multiple-choice reading
            assert got.predicted[sid] == item["predicted_answer"], sid
    # The same answers drew, and drew the same letters or 对/错, in the same order.
    assert got.guessed == expected["draws"]
    assert list(got.guessed) == expected["draw_order"]
    rows = [
        [c, got.categories[c][0], got.categories[c][1], got.categories[c][0] / got.categories[c][1]]
        if got.categories[c][1]
        else [c, 0, 0, 0]
        for c in CMMMU_CATEGORIES
    ]
    assert rows == expected["categories"]
    right, n = got.overall
    printed = expected["printed"].splitlines()[-1]
    assert printed.split("|")[2:4] == [f" {right:>13} ", f" {n:>13} "], printed
    assert f"{right / n:g}" == printed.split("|")[4].strip()


def test_the_draws_are_the_ones_lmmprobe_reading_leaves_unread() -> None:
    # The run metric never guesses: exactly the answers the script drew for read as None.
    case = _case("generated")
    drawn = set(case["expected"]["draws"])
    for item in _items(case):
        if item.type == "选择":
            unread = (
                bool(item.response) and cmmmu_multi_choice(item.response, item.index2ans) is None
            )
        elif item.type == "判断":
            unread = cmmmu_true_false(item.response) is None
        else:
            unread = False
        assert unread == (item.id in drawn), item.id
    assert len(drawn) >= 100


def test_another_seed_draws_other_answers_and_another_figure() -> None:
    items = _items(_case("generated"))
    ours = cmmmu_evaluate(items)
    other = cmmmu_evaluate(items, random.Random(7))
    assert set(other.guessed) == set(ours.guessed)
    assert list(other.guessed.values()) != list(ours.guessed.values())
    assert other.overall != ours.overall
