"""The demo source under Dysca's scenarios: clean, corruption and print attack."""

from __future__ import annotations

import numpy as np
import pytest

from lmmprobe import evaluate
from lmmprobe.data import DataError, load_source

pytest.importorskip("albumentations")

SPEC = "demo,n=8,size=96,scenario=clean+corruption+print_attack"


def pixels(sample) -> np.ndarray:
    return np.asarray(sample.images[0].load(), dtype=np.int16)


def test_each_base_sample_appears_once_per_scenario():
    samples = load_source(SPEC).samples
    assert len(samples) == 24
    by_base: dict[str, dict[str, object]] = {}
    for s in samples:
        base, scenario = s.id.split("@")
        assert s.metadata["scenario"] == scenario
        by_base.setdefault(base, {})[scenario] = s
    for variants in by_base.values():
        clean, corrupted, printed = (variants[k] for k in ("clean", "corruption", "print_attack"))
        assert clean.question == corrupted.question == printed.question
        assert np.abs(pixels(clean) - pixels(corrupted)).mean() > 0
        assert np.abs(pixels(clean) - pixels(printed)).mean() > 0
        assert corrupted.metadata["corruption"] and corrupted.metadata["severity"] == 3
        written = printed.metadata["print_attack"]["text"]
        assert written in printed.choices and written != printed.choices[printed.answer]


def test_scenarios_are_deterministic_and_leave_the_clean_set_alone():
    a, b = load_source(SPEC).samples, load_source(SPEC).samples
    assert [s.images[0].content_hash() for s in a] == [s.images[0].content_hash() for s in b]
    plain = load_source("demo,n=8,size=96").samples
    clean = [s for s in a if s.metadata["scenario"] == "clean"]
    assert [s.images[0].content_hash() for s in clean] == [
        s.images[0].content_hash() for s in plain
    ]
    with pytest.raises(DataError, match="unknown scenario"):
        load_source("demo,n=2,scenario=adversarial")


def test_scenario_breakdown_end_to_end(tmp_path):
    ev = evaluate(
        models=["first"],
        data=SPEC,
        by=["scenario"],
        db=str(tmp_path / "db"),
        out=str(tmp_path / "o"),
    )
    groups = ev.results.models["first"].breakdown["scenario"]
    assert set(groups) == {"clean", "corruption", "print_attack"}
    assert all(g["error_rate"].value == 0.0 for g in groups.values())
