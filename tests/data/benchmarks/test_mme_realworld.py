"""MME-RealWorld: lmms-eval's reading and score, on rows in the schema lmms-eval reads.

`mme_realworld_parity/` holds rows and answers (``rows.json``) and what lmms-eval's own code
computes from them (``expected.json``; see its ``make_expected.py``): each answer's letter, the
overall score and each task's, subtask's and l2-category's. The rows are written here as a hub
snapshot (parquet; the image as base64 text in ``bytes``) and run end to end with a scripted
model giving those answers.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Value
from datasets import Sequence as Seq
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.data.benchmarks.conftest import scripted_model, tiny_png, write_hub_snapshot

from lmmprobe.api import evaluate
from lmmprobe.data.base import load_source
from lmmprobe.data.benchmarks._describe import official_matcher
from lmmprobe.parse.mme_realworld import mme_realworld_letter

HERE = Path(__file__).parent / "mme_realworld_parity"
ROWS = json.loads((HERE / "rows.json").read_text(encoding="utf-8"))
EXPECTED = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
SCRIPT = scripted_model("e9-mme-realworld")

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

_FEATURES = Features(
    {
        "index": Value("string"),
        "question": Value("string"),
        "multi-choice options": Seq(Value("string")),
        "answer": Value("string"),
        "category": Value("string"),
        "l2-category": Value("string"),
        "bytes": Value("string"),
    }
)


def _snapshot(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    table = {k: [r[k] for r in rows] for k in _FEATURES if k != "bytes"}
    table["bytes"] = [
        base64.b64encode(tiny_png((i % 255, 9, 9))).decode("ascii") for i in range(len(rows))
    ]
    dataset = Dataset.from_dict(table, features=_FEATURES)
    return write_hub_snapshot(tmp_path / "mme-realworld", {"train": dataset})


def test_letters_are_lmms_evals() -> None:
    for row in ROWS:
        assert mme_realworld_letter(row["prediction"]) == EXPECTED["letters"][row["index"]]


def test_scores_equal_lmms_evals_own_code(tmp_path: Path) -> None:
    folder = _snapshot(tmp_path, ROWS)
    SCRIPT.replies.clear()
    SCRIPT.replies.update({f"m{i}": r["prediction"] for i, r in enumerate(ROWS)})
    data = f"mme-realworld,path={folder}"
    assert official_matcher(data) == "mme-realworld"
    ev = evaluate(models=[SCRIPT.name], data=data, db=str(tmp_path / "db"),
                  out=str(tmp_path / "out"), bootstrap=0, formulate={"matcher": "mme-realworld"},
                  by=["task", "subtask", "l2_category"])  # fmt: skip
    m = ev.results.models[SCRIPT.name]
    assert m.metrics["accuracy"].value == pytest.approx(EXPECTED["overall"], abs=1e-12)
    for by, figures in EXPECTED["groups"].items():
        got = {g: v["accuracy"].value for g, v in m.breakdown[by].items()}
        assert got == pytest.approx(figures, abs=1e-12), by
    # The prompt is lmms-eval's mme_realworld_doc_to_text, byte for byte.
    assert SCRIPT.prompts["m0"] == EXPECTED["first_prompt"]


def test_a_bad_row_is_named_and_the_others_load(tmp_path: Path) -> None:
    bad = [dict(ROWS[0], answer="F"), dict(ROWS[1], **{"multi-choice options": ["(A) x"]}), ROWS[2]]
    result = load_source(f"mme-realworld,path={_snapshot(tmp_path, bad)}")
    assert len(result.samples) == 1
    problems = "\n".join(str(p) for p in result.problems)
    assert "answer" in problems and "expected an option letter A-E, got 'F'" in problems
    assert "multi-choice options" in problems and "2 to 5 option lines" in problems


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=2000) | st.sampled_from(["A" * 100_000, "x " * 50_000]))
def test_any_answer_reads_as_one_letter_or_nothing(text: str) -> None:
    assert mme_realworld_letter(text) in ("", "A", "B", "C", "D", "E")
