"""HEMM's human-battle ratings: Elo by hand, win rates by hand, battle files."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from lmmprobe.metrics.elo import (
    Battle,
    BattleFileError,
    elo_ratings,
    elo_sequence,
    load_battles,
    win_rates,
)

BATTLES = [Battle("x", "y", "a"), Battle("y", "z", "tie"), Battle("x", "z", "b")]


def _expect(r_self: float, r_other: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((r_other - r_self) / 400.0))


def test_elo_sequence_by_hand_k4() -> None:
    # 1. x beats y, both at 1000: expectation 1/2 each, so x + 4 * 1/2, y - 4 * 1/2.
    x, y, z = 1002.0, 998.0, 1000.0
    # 2. y ties z: y expected slightly less than 1/2 (it is 2 points lower).
    e_y, e_z = _expect(y, z), _expect(z, y)
    assert e_y == pytest.approx(0.4971218, abs=1e-7)
    y, z = y + 4 * (0.5 - e_y), z + 4 * (0.5 - e_z)
    # 3. z beats x.
    e_x, e_z = _expect(x, z), _expect(z, x)
    x, z = x + 4 * (0.0 - e_x), z + 4 * (1.0 - e_z)

    got = elo_sequence(BATTLES)
    assert list(got) == ["x", "y", "z"]
    assert got == pytest.approx({"x": x, "y": y, "z": z})
    assert got == pytest.approx({"x": 999.98842, "y": 998.01151, "z": 1002.00007}, abs=1e-5)
    # Every update moves as many points as it takes: the total stays 3 x 1000.
    assert sum(got.values()) == pytest.approx(3000.0)


def test_elo_parameters() -> None:
    one = [Battle("a", "b", "a")]
    assert elo_sequence(one, k=32, initial=1500) == pytest.approx({"a": 1516.0, "b": 1484.0})
    # With base e and scale 1 the expectation is the logistic function of the difference.
    two = [Battle("a", "b", "a"), Battle("a", "b", "a")]
    got = elo_sequence(two, k=1.0, initial=0.0, scale=1.0, base=math.e)
    # After the first battle (expectation 1/2): a = 0.5, b = -0.5.
    a1, b1 = 0.5, -0.5
    e_a = 1.0 / (1.0 + math.exp(b1 - a1))
    assert got["a"] == pytest.approx(a1 + (1.0 - e_a))
    with pytest.raises(ValueError, match="k must be a positive"):
        elo_sequence(one, k=0)
    with pytest.raises(ValueError, match="base must be"):
        elo_sequence(one, base=1.0)


def test_elo_ratings_median_over_orders() -> None:
    per_order = [elo_sequence(list(p)) for p in itertools.permutations(BATTLES)]
    got = elo_ratings(BATTLES, shuffles=1000, seed=0)
    assert got == elo_ratings(BATTLES, shuffles=1000, seed=0)
    for model in ("x", "y", "z"):
        values = [r[model] for r in per_order]
        assert min(values) - 1e-9 <= got[model] <= max(values) + 1e-9
    # One order: the median is that order's result, so it is one of the six.
    for seed in range(5):
        single = elo_ratings(BATTLES, shuffles=1, seed=seed)
        assert any(single == pytest.approx(r) for r in per_order)
    # shuffles=0 replays the given order.
    assert elo_ratings(BATTLES, shuffles=0) == elo_sequence(BATTLES)
    # When the order cannot matter (one pair, one outcome), every shuffle agrees.
    same = [Battle("a", "b", "a")] * 3
    assert elo_ratings(same, shuffles=50) == pytest.approx(elo_sequence(same))
    assert elo_ratings([], shuffles=10) == {}
    with pytest.raises(ValueError, match="shuffles must be >= 0"):
        elo_ratings(BATTLES, shuffles=-1)


def test_win_rates_by_hand() -> None:
    battles = [
        *[Battle("x", "y", "a")] * 3,
        Battle("y", "x", "a"),
        *[Battle("x", "z", "tie")] * 2,
        Battle("z", "y", "a"),
        Battle("y", "z", "a"),
    ]
    # Ties ignored: w_xy = 3/4, w_yx = 1/4, w_yz = w_zy = 1/2; x-z (only ties) is left out.
    assert win_rates(battles) == pytest.approx({"x": 0.75, "y": (0.25 + 0.5) / 2, "z": 0.5})
    # Ties as half wins: w_xz = w_zx = 1/2 joins the means.
    assert win_rates(battles, ties="half") == pytest.approx(
        {"x": (0.75 + 0.5) / 2, "y": 0.375, "z": 0.5}
    )
    only_ties = win_rates([Battle("p", "q", "tie")])
    assert math.isnan(only_ties["p"]) and math.isnan(only_ties["q"])
    with pytest.raises(ValueError, match="ties must be"):
        win_rates(battles, ties="drop")  # type: ignore[arg-type]


def test_battle_validation() -> None:
    with pytest.raises(ValueError, match="two different models"):
        Battle("a", "a", "a")
    with pytest.raises(ValueError, match="winner must be"):
        Battle("a", "b", "c")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="model_b must be a non-empty"):
        Battle("a", " ", "a")


def test_load_battles_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "votes.jsonl"
    rows = [
        {"model_a": "x", "model_b": "y", "winner": "a"},
        {"model_a": "x", "model_b": "y", "winner": "y"},
        {"model_a": "y", "model_b": "z", "winner": "tie (bothbad)"},
        {"model_a": "y", "model_b": "z", "winner": "model_a", "voter": "anna"},
    ]
    path.write_text(
        "# votes\n"
        + "\n".join(json.dumps(r) for r in rows[:2])
        + "\n\n"
        + "\n".join(json.dumps(r) for r in rows[2:])
        + "\n",
        encoding="utf-8",
    )
    assert load_battles(path) == [
        Battle("x", "y", "a"),
        Battle("x", "y", "b"),
        Battle("y", "z", "tie"),
        Battle("y", "z", "a"),
    ]


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "not valid JSON"),
        ('{"model_a": "x", "winner": "a"}', "missing field(s) model_b"),
        ('{"model_a": "x", "model_b": "x", "winner": "a"}', "two different models"),
        ('{"model_a": "x", "model_b": "y", "winner": "w"}', "winner 'w'"),
        ("[1, 2]", "expected an object"),
    ],
)
def test_load_battles_bad_rows_name_file_and_line(tmp_path: Path, line: str, needle: str) -> None:
    path = tmp_path / "votes.jsonl"
    good = json.dumps({"model_a": "x", "model_b": "y", "winner": "a"})
    path.write_text(f"{good}\n\n{line}\n", encoding="utf-8")
    with pytest.raises(BattleFileError) as info:
        load_battles(path)
    assert f"{path}:3:" in str(info.value)
    assert needle in str(info.value)


def test_load_battles_csv(tmp_path: Path) -> None:
    path = tmp_path / "votes.csv"
    path.write_text("model_a,model_b,winner\nx,y,b\n,,\ny,z,tie\n", encoding="utf-8")
    assert load_battles(path) == [Battle("x", "y", "b"), Battle("y", "z", "tie")]
    path.write_text("model_a,model_b,winner\nx,y,b\nx,y,\n", encoding="utf-8")
    with pytest.raises(BattleFileError, match=r"votes\.csv:3: missing field\(s\) winner"):
        load_battles(path)
    path.write_text("a,b,winner\nx,y,b\n", encoding="utf-8")
    with pytest.raises(BattleFileError, match=r"votes\.csv:1: .*model_a, model_b"):
        load_battles(path)
    with pytest.raises(FileNotFoundError):
        load_battles(tmp_path / "nope.jsonl")
