"""Replay: a saved campaign's experiments give identical datasets and results for the same seed."""

from __future__ import annotations

import pytest

from lmmprobe.apex import OrchestratorError, Settings, replay_settings, run_campaign
from lmmprobe.apex.orchestrators import load_orchestrator


def _campaign(tmp_path, cache_dir, name, orchestrator, models, settings=None):
    return run_campaign(
        "Can models identify geometric transformations?",
        models,
        orchestrator,
        out=tmp_path / name,
        settings=settings,
        cache_dir=cache_dir / name,  # a cold cache each time: images are recomposed
    )


def test_replay_reproduces_datasets_and_results(tmp_path, cache_dir):
    settings = Settings(images_per_answer=3, image_size=32, bootstrap=100, seed=11,
                        max_experiments=3, stop_when_sufficient=False)  # fmt: skip
    original = _campaign(tmp_path, cache_dir, "a", "rules", ["random", "first"], settings)
    saved = original.report_json
    again = _campaign(tmp_path, cache_dir, "b", f"replay:{saved}", ["random", "first"])
    a, b = original.report, again.report
    assert b.orchestrator.startswith("replay:") and b.status == "max_experiments"
    assert b.settings.seed == 11 and b.settings.images_per_answer == 3  # the saved settings
    assert len(b.experiments) == len(a.experiments) == 3
    for ra, rb in zip(a.experiments, b.experiments, strict=True):
        assert rb.experiment == ra.experiment
        assert rb.dataset.fingerprint == ra.dataset.fingerprint
        assert rb.dataset.image_hashes == ra.dataset.image_hashes
        assert (rb.dataset.made, rb.dataset.cached) == (ra.dataset.made, ra.dataset.cached)
        assert rb.results == ra.results


def test_replay_on_other_models_uses_the_same_experiments(tmp_path, cache_dir):
    settings = Settings(images_per_answer=2, image_size=32, bootstrap=50, max_experiments=2,
                        stop_when_sufficient=False)  # fmt: skip
    original = _campaign(tmp_path, cache_dir, "a", "rules", ["random"], settings)
    other = _campaign(tmp_path, cache_dir, "b", f"replay:{original.report_json}", ["first"])
    assert [r.experiment for r in other.report.experiments] == [
        r.experiment for r in original.report.experiments
    ]
    assert [r.dataset.fingerprint for r in other.report.experiments] == [
        r.dataset.fingerprint for r in original.report.experiments
    ]
    assert other.report.experiments[0].results.models[0].model == "first"
    assert replay_settings(original.report_json).seed == settings.seed


def test_replay_of_a_missing_or_foreign_file(tmp_path):
    with pytest.raises(OrchestratorError, match="no report file"):
        load_orchestrator(f"replay:{tmp_path / 'nope.json'}")
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(OrchestratorError, match="not an APEx report"):
        load_orchestrator(f"replay:{bad}")
    with pytest.raises(ValueError, match="unknown orchestrator"):
        load_orchestrator("gpt4")
