"""The OpenVLM leaderboard's average, against the leaderboard's own ``generate_table`` (issue 37).

``data/openvlm_leaderboard.json`` holds generated results files (22 models) and, for five
column selections (``DEFAULT_BENCH``, ``MAIN_FIELDS`` and three subsets), each model's columns
and ``Avg Score`` as the Space's ``gen_table.py`` computed them (``generate/openvlm_leaderboard.py``
ran it; the reference commit is in the file). lmmprobe's `column_figure` and
`leaderboard_average` must give the same figures, exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.metrics.leaderboard import (
    OPENVLM_COLUMNS,
    OPENVLM_DEFAULT,
    OPENVLM_MAIN,
    column_figure,
    leaderboard_average,
)

DATA = json.loads(
    (Path(__file__).parent / "data" / "openvlm_leaderboard.json").read_text(encoding="utf-8")
)
CASES = [(c["selection"], model) for c in DATA["cases"] for model in c["models"]]


def _figures(item: dict[str, Any]) -> dict[tuple[str, str], float]:
    """The results file's figures as lmmprobe's (benchmark, metric) figures, leaderboard units."""
    out: dict[tuple[str, str], float] = {
        ("mmbench-v11-en", "mmbench_circular"): item["MMBench_TEST_EN_V11"]["Overall"],
        ("mmbench-v11-cn", "mmbench_circular"): item["MMBench_TEST_CN_V11"]["Overall"],
    }
    for field, column in OPENVLM_COLUMNS.items():
        if field not in item:
            continue
        value = item[field]["Final Score" if field == "OCRBench" else "Overall"]
        (benchmark,) = column.benchmarks
        # The file holds each column's total; the figures that add up (MME's perception and
        # cognition) or average (HallusionBench's three) to it are given as such.
        if column.combine == "sum":
            out[(benchmark, column.metrics[0])] = value
            out[(benchmark, column.metrics[1])] = 0.0
        else:
            for metric in column.metrics:
                out[(benchmark, metric)] = value
    return out


def test_the_sets_are_the_leaderboards() -> None:
    assert list(OPENVLM_DEFAULT) == DATA["default_bench"]
    assert list(OPENVLM_MAIN) == DATA["main_fields"]


@pytest.mark.parametrize(("selection", "model"), CASES)
def test_columns_and_average_equal_generate_table(selection: str, model: str) -> None:
    case = next(c for c in DATA["cases"] if c["selection"] == selection)
    expected = case["models"][model]
    figures = _figures(DATA["results"][model])
    columns = {f: column_figure(OPENVLM_COLUMNS[f], figures) for f in case["fields"]}
    for field, value in columns.items():
        if OPENVLM_COLUMNS[field].combine == "mean" and value is not None:
            # HallusionBench's file figure is already its three accuracies' mean (computed
            # upstream by VLMEvalKit): given three times, their mean is it to the last ulp.
            assert value == pytest.approx(expected["columns"][field], rel=1e-15)
        else:
            assert value == expected["columns"][field], field
    average = leaderboard_average(case["fields"], expected["columns"])
    if expected["avg_score"] is None:
        # The leaderboard shows no average; lmmprobe's is partial and names what is missing.
        assert average.partial
        assert list(average.missing) == [f for f in case["fields"] if columns[f] is None]
        assert average.value is not None or not average.scores
    else:
        assert not average.partial
        assert average.value == expected["avg_score"]


def test_the_rounding_ties_are_in_the_data() -> None:
    # Models 16-21 put the mean on a decimal tie, where numpy's rounding and decimal rounding
    # can part: the parity above covers the leaderboard's way.
    default = next(c for c in DATA["cases"] if c["selection"] == "DEFAULT_BENCH")
    means = []
    for i in range(16, 22):
        columns = default["models"][f"model-{i}"]["columns"]
        scores = [v / OPENVLM_COLUMNS[f].divisor for f, v in columns.items()]
        means.append(sum(scores) / len(scores))
    assert any(abs(m * 100 % 10 - 5) < 1e-6 for m in means)


def test_hallusionbench_and_mme_columns_as_vlmevalkit_makes_them() -> None:
    # Transcribed (see tests/parity/README.md): VLMEvalKit's `report_primary_metric` @145bdaf1
    # gives HallusionBench's `Overall` as sum([aAcc, fAcc, qAcc]) / 3 and MME's as perception +
    # reasoning. The figures are a real score.csv's "Overall" row (VLMEvalKit issue #825).
    a, f, q = 67.92849631966351, 37.861271676300575, 43.956043956043956
    hallusion = OPENVLM_COLUMNS["HallusionBench"]
    figures = {("hallusionbench", m): v for m, v in zip(hallusion.metrics, (a, f, q), strict=True)}
    assert column_figure(hallusion, figures) == sum([a, f, q]) / 3
    mme = OPENVLM_COLUMNS["MME"]
    figures = {("mme", "mme_perception"): 1487.5, ("mme", "mme_cognition"): 362.5}
    assert column_figure(mme, figures) == 1850.0
    # lmmprobe's figures are shares: each column's unit puts them in percent first.
    assert hallusion.unit(0.5) == 50.0 and mme.unit(1487.5) == 1487.5
