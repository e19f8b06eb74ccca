"""``score OUTPUT --benchmark mathvista --as-published`` against MathVista's own score files.

- Parity: ``tests/predictions/fixtures/mathvista/output_skills.json`` was rescored by MathVista's
  ``calculate_score.py`` (lupantech/MathVista @ 53d5258), which wrote
  ``calculate_score_skills.json`` (the fixture's README has the command): the default version's
  figures must be its floats, bit for bit.
- Released: ``tests/predictions/fixtures/mathvista/released/`` holds MathVista's released
  ``results/random/output_random_guess.json`` (lupantech/MathVista @ ed0d56d, every one of its
  1,000 records, keeping the fields the score file and the join read: pid, question and answer
  types, choices, unit, precision, answer, response, extraction, true_false, metadata) and the
  ``scores_random_guess.json`` released beside it, verbatim. With ``--tool-version 2023-10-03``
  the printed figures are that file's, string for string and in its order (17.9, not 33.15 on
  540 items).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import own_datasets_cache  # noqa: F401 (a fixture)
from tests.predictions.test_mathvista_recorded import _copy

FIXTURES = Path(__file__).parents[1] / "predictions" / "fixtures" / "mathvista"
SKILLS = FIXTURES / "output_skills.json"
SKILLS_SCORES: dict[str, Any] = json.loads((FIXTURES / "calculate_score_skills.json").read_text())
RELEASED = FIXTURES / "released" / "output_random_guess.json"
RELEASED_SCORES: dict[str, Any] = json.loads(
    (FIXTURES / "released" / "scores_random_guess.json").read_text()
)

pytestmark = pytest.mark.usefixtures("own_datasets_cache")


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "cli-datasets-cache")}


def _score_file(doc: dict[str, Any]) -> dict[str, Any]:
    """``--as-published``'s tables in the layout of MathVista's score file."""
    out: dict[str, Any] = {}
    for table in doc["tables"]:
        rows = [list(r.values()) for r in table["rows"]]
        if table["title"] == "average":
            ((_, acc, correct, total),) = rows
            out["average"] = {"accuracy": acc, "correct": correct, "total": total}
        else:
            out[table["title"]] = {
                name: {"accuracy": acc, "correct": c, "total": t} for name, acc, c, t in rows
            }
    return out


def _published(tmp_path: Path, output: Path, records: Any, *more: str) -> dict[str, Any]:
    copy = _copy(tmp_path, records)
    done = lmmprobe(
        "score", output, "--benchmark", copy, "--as-published", "--format", "json", *more,
        **_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_as_published_equals_calculate_scores_own_file(tmp_path: Path) -> None:
    records = list(json.loads(SKILLS.read_text()).values())
    doc = _published(tmp_path, SKILLS, records)
    got = _score_file(doc["as_published"])
    assert got == SKILLS_SCORES
    # Sorted by accuracy as the script sorts; only skills' ties follow a set's order there.
    for key, values in SKILLS_SCORES.items():
        if key not in ("average", "skills"):
            assert list(got[key]) == list(values), key
    assert "53d5258" in doc["as_published"]["source"]


def test_as_published_gives_the_released_score_file_string_for_string(tmp_path: Path) -> None:
    records = list(json.loads(RELEASED.read_text()).values())
    doc = _published(tmp_path, RELEASED, records, "--tool-version", "2023-10-03")
    got = _score_file(doc["as_published"])
    assert got == RELEASED_SCORES
    for key, values in RELEASED_SCORES.items():
        if key != "average":
            assert list(got[key]) == list(values), key
    assert got["average"]["accuracy"] == "17.9" and got["average"]["total"] == 1000
    # lmmprobe's own figure counts the same 1,000 items.
    assert doc["metrics"]["mathvista_accuracy"]["n"] == 1000


def test_the_table_prints_the_tools_digits_and_an_unknown_version_is_refused(
    tmp_path: Path,
) -> None:
    records = list(json.loads(SKILLS.read_text()).values())
    copy = _copy(tmp_path, records)
    done = lmmprobe(
        "score", SKILLS, "--benchmark", copy, "--as-published", "--tool-version", "2023-10-03",
        **_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    average = SKILLS_SCORES["average"]
    assert str(round(average["correct"] / average["total"] * 100, 2)) in done.stdout
    assert "ed0d56d" in done.stdout
    bad = lmmprobe(
        "score", SKILLS, "--benchmark", copy, "--as-published", "--tool-version", "2025",
        **_env(tmp_path),
    )  # fmt: skip
    assert bad.returncode != 0
    assert bad.stderr.strip().count("\n") == 0
    assert "--tool-version '2025'" in bad.stderr and "2023-10-03" in bad.stderr


def test_a_record_without_true_false_is_named(tmp_path: Path) -> None:
    records = json.loads(SKILLS.read_text())
    first = next(iter(records))
    del records[first]["true_false"]
    output = tmp_path / "output_x.json"
    output.write_text(json.dumps(records))
    copy = _copy(tmp_path, list(records.values()))
    done = lmmprobe(
        "score", output, "--benchmark", copy, "--as-published", **_env(tmp_path)
    )  # fmt: skip
    assert done.returncode != 0
    assert f"output_x.json:#1 (pid {first!r}): true_false: missing" in done.stderr
