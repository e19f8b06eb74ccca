"""Generation paths that need a model: the adversarial scenario and the CLIP filter."""

from __future__ import annotations

import json

import numpy as np
from PIL import Image

from lmmprobe.models.tiny_clip import tiny_clip_path
from lmmprobe.synth.generate import SynthConfig, write_dataset


def test_adversarial_scenario_attacks_the_proxy_and_records_it(tmp_path):
    config = SynthConfig(
        n=2, seed=3, size=64, subtasks=("animal",), scenarios=("clean", "adversarial"),
        proxy="tiny-llava", steps=3,
    )  # fmt: skip
    manifest = write_dataset(config, tmp_path / "adv")
    rows = [json.loads(x) for x in (tmp_path / "adv" / "samples.jsonl").read_text().splitlines()]
    adv = [r for r in rows if r["metadata"]["scenario"] == "adversarial"]
    assert len(adv) == 2 * 3
    assert manifest["adversarial_proxy"]["epsilon"] == config.epsilon
    for r in adv:
        record = r["metadata"]["adversarial"]
        assert record["loss_after"] >= record["loss_before"] - 1e-3
        assert record["linf"] <= config.epsilon + 1e-9
        clean = next(c for c in rows if c["id"] == r["id"].replace("@adversarial", "@clean"))
        a = np.asarray(Image.open(tmp_path / "adv" / r["images"][0]), dtype=np.int16)
        b = np.asarray(Image.open(tmp_path / "adv" / clean["images"][0]), dtype=np.int16)
        assert 0 < np.abs(a - b).max() <= round(config.epsilon * 255)


def test_clip_filter_drops_items_below_the_threshold_and_is_recorded(tmp_path):
    path = str(tiny_clip_path())
    keep_all = write_dataset(
        SynthConfig(n=4, size=64, clip_model=path, clip_threshold=0.0), tmp_path / "a"
    )
    assert keep_all["counts"]["items"] == 4
    drop_all = write_dataset(
        SynthConfig(n=4, size=64, clip_model=path, clip_threshold=100.0), tmp_path / "b"
    )
    assert drop_all["counts"]["items"] == 0 and drop_all["counts"]["samples"] == 0
    record = drop_all["filters"][0]
    assert record["threshold"] == 100.0 and record["dropped_items"] == 4
