"""Answer-key versions by hash, and warnings when a file was scored against another key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lmmprobe.predictions.answer_keys import KNOWN_KEYS, key_hash, key_version, key_warnings
from lmmprobe.predictions.imported import ImportedPrediction
from lmmprobe.predictions.verdicts import audit_imported
from lmmprobe.run.scoring import score_response
from lmmprobe.schema import FormulateConfig, Request, Response, Sample
from lmmprobe.schema.benchmark import BenchmarkTag

# MMMU's released answer_dict_val.json (MMMU-Benchmark/MMMU @ bb0b95a, mmmu/): the current key.
ANSWERS = Path(__file__).parent / "data" / "mmmu_answer_dict_val.json"


def _released() -> dict[str, Any]:
    return {k: v["ground_truth"] for k, v in json.loads(ANSWERS.read_text()).items()}


def _older() -> dict[str, Any]:
    # The key before commit bbaa1eb (2023-12-14): two Literature answers differ.
    return _released() | {"validation_Literature_10": "D", "validation_Literature_15": "B"}


def test_the_released_keys_hash_to_the_known_versions() -> None:
    newest, older = KNOWN_KEYS
    assert key_hash(_released()) == newest.sha256
    assert key_hash(_older()) == older.sha256
    assert "bbaa1eb" in key_version("mmmu", _released())
    assert "bf380a2" in key_version("mmmu", _older())
    assert "no known version" in key_version("mmmu", _released() | {"validation_Art_1": "Z"})


def test_a_file_with_the_older_golds_is_named() -> None:
    local = {k: [v] if isinstance(v, str) else v for k, v in _released().items()}
    (line,) = key_warnings("mmmu", local, _older(), path="out.json")
    assert line.startswith(
        "out.json was evidently scored against MMMU answer_dict_val.json @ bf380a2"
    )
    assert "validation_Literature_10 (D there, C here)" in line
    assert "validation_Literature_15 (B there, A here)" in line
    assert key_warnings("mmmu", local, _released()) == []


def test_verdicts_alone_can_show_the_older_key() -> None:
    local = {k: [v] if isinstance(v, str) else v for k, v in _released().items()}
    # The tool read D on Literature_10 and called it right: only the older key says so.
    (line,) = key_warnings("mmmu", local, verdicts={"validation_Literature_10": ("D", True)})
    assert "validation_Literature_10" in line and "Literature_15" not in line
    # Read C and called wrong: the older key too. Read B and called wrong: either key.
    assert key_warnings("mmmu", local, verdicts={"validation_Literature_10": ("C", False)})
    assert not key_warnings("mmmu", local, verdicts={"validation_Literature_10": ("B", False)})


def test_many_other_golds_are_listed() -> None:
    local = {f"q{i}": ["A"] for i in range(30)}
    file = {f"q{i}": "B" if i < 25 else "A" for i in range(30)}
    (line,) = key_warnings("mybench", local, file)
    assert "on 25 items: q0, q1" in line and "and 5 more" in line
    # A few are no other key, but each is named with both golds (issue 36: a disagreement
    # with the copy is named).
    (few,) = key_warnings("mybench", local, {"q0": "B", "q1": "B", "q2": "B"})
    assert "on 3 items: q0 (B there, A here), q1 (B there, A here), q2 (B there, A here)" in few
    assert key_warnings("mybench", local, {"q0": "A"}) == []


def test_the_audit_puts_an_older_key_item_under_different_gold() -> None:
    tag = BenchmarkTag(name="mmmu", split="validation", metric="mmmu_accuracy")
    sample = Sample(
        id="validation_Literature_10",
        question="Which?",
        answer=["C"],
        formulation="open_ended",
        metadata={
            "question_type": "multiple-choice",
            "option_letters": ["A", "B", "C", "D"],
            "option_texts": ["w", "x", "y", "z"],
            "answers": ["C"],
        },
        benchmark=tag,
    )
    request = Request(sample_id=sample.id, method="generate", messages=[], prompt="Which?")
    score = score_response("m", sample, request, Response(key="k", text="(D)"), FormulateConfig())
    pred = ImportedPrediction(
        row=1, sample_id=sample.id, prediction="(D)", tool_extraction="D", tool_verdict=1.0
    )
    result = audit_imported([score], [pred], n_boot=0)
    (item,) = result.items
    assert item.cause == "gold" and item.b.gold == ("D",)
