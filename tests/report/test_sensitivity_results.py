"""Dysca sensitivities appear in results when the metadata allows them."""

from __future__ import annotations

import pytest

from lmmprobe import evaluate
from lmmprobe.metrics import question_type_sensitivity_from_scores, scenario_deltas
from lmmprobe.store import Store


def test_demo_results_carry_question_type_and_scenario_sensitivity(tmp_path):
    pytest.importorskip("albumentations")
    ev = evaluate(
        models=["random"], data="demo,n=24,size=64,scenario=clean+corruption", db=str(tmp_path / "db"),
        out=str(tmp_path / "o"),
    )  # fmt: skip
    sens = ev.results.models["random"].sensitivity
    with Store(tmp_path / "db") as store:  # a run keeps no Scores: they are in the store
        scores = store.model_scores(ev.run_id, "random")
    assert sens.question_type is not None and sens.scenario_deltas is not None
    assert sens.question_type.model_dump() == pytest.approx(
        question_type_sensitivity_from_scores(scores)
    )
    assert sens.scenario_deltas == pytest.approx(scenario_deltas(scores))
    assert "corruption" in sens.scenario_deltas
    assert "sensitivity (Dysca" in (tmp_path / "o" / "results.md").read_text()


def test_no_sensitivity_without_the_metadata(tmp_path):
    import json

    from PIL import Image

    Image.new("RGB", (8, 8)).save(tmp_path / "a.png")
    (tmp_path / "d.jsonl").write_text(
        json.dumps(
            {"id": "1", "images": ["a.png"], "question": "q?", "choices": ["a", "b"], "answer": 0}
        )
        + "\n"
    )
    ev = evaluate(
        models=["first"],
        data=str(tmp_path / "d.jsonl"),
        db=str(tmp_path / "db"),
        out=str(tmp_path / "o"),
    )
    # Nothing computed: the file holds an empty object, not a list of nulls.
    saved = json.loads(ev.results_json.read_text(encoding="utf-8"))
    assert saved["models"]["first"]["sensitivity"] == {}
