import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from tests.console import lmmprobe

from lmmprobe.data import load_source
from lmmprobe.synth.generate import (
    DYSCA_FILE,
    MANIFEST_FILE,
    SAMPLES_FILE,
    SynthConfig,
    count_samples,
    iter_samples,
    write_dataset,
)

SCEN = ("clean", "corruption", "print_attack")


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "set"
    write_dataset(SynthConfig(n=26, seed=5, size=96, scenarios=SCEN), out, chunk_size=8)
    return out


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / SAMPLES_FILE).read_text().splitlines()]


def test_layout_and_counts(dataset):
    rows = _rows(dataset)
    ocr_items = sum(1 for r in rows if r["metadata"]["subtask"] == "ocr") // (3 * 2)
    # 3 questions per item and scenario; OCR items get no print attack.
    assert len(rows) == 26 * 3 * 3 - ocr_items * 3
    manifest = json.loads((dataset / MANIFEST_FILE).read_text())
    assert manifest["counts"]["samples"] == len(rows)
    assert manifest["config"]["seed"] == 5 and manifest["renderer"]["font"]["license"]
    assert manifest["vocabulary"]["glyph_classes"] >= 150
    counts = count_samples(dataset)
    assert counts["scenario"]["clean"] == 78 and sum(counts["question_type"].values()) == len(rows)
    for r in rows:
        assert (dataset / r["images"][0]).is_file()


def test_loads_through_the_synth_source(dataset):
    result = load_source(f"synth:{dataset}")
    assert result.invalid == 0 and len(result.samples) == len(_rows(dataset))
    first = result.samples[0]
    assert first.metadata["task"] == "synth" and first.images[0].load().size == (96, 96)


def test_dysca_export_layout(dataset):
    records = json.loads((dataset / DYSCA_FILE).read_text())
    assert len(records) == len(_rows(dataset))
    keys = {"id", "images", "prompt", "instruction", "question", "answer", "options",
            "question_type", "question_majority", "granularity"}  # fmt: skip
    kinds = {rec["question_type"] for rec in records}
    assert kinds <= {"multi choice", "true or false", "image caption"}  # Dysca's names
    for rec in records:
        assert keys <= set(rec)
        if rec["question_type"] == "multi choice":
            assert rec["answer"] in rec["options"] and len(rec["options"]) == 4
            # Dysca_compute.py finds the options after "Choices:" and before "Hint:".
            assert rec["instruction"].startswith("Question: ")
            lines = rec["instruction"].split("Choices:\n")[-1].split("\nHint:")[0].split("\n")
            letter = rec["answer_letter"]
            assert lines[ord(letter) - ord("A")] == f"({letter}) {rec['answer']}"


def test_same_seed_same_bytes_whatever_the_workers(tmp_path, dataset):
    again = tmp_path / "again"
    write_dataset(
        SynthConfig(n=26, seed=5, size=96, scenarios=SCEN), again, workers=2, chunk_size=5
    )
    assert _digest(again) == _digest(dataset)
    other = tmp_path / "other"
    write_dataset(SynthConfig(n=26, seed=6, size=96, scenarios=SCEN), other)
    assert _digest(other) != _digest(dataset)


def test_scenarios_change_pixels_and_print_attack_writes_a_wrong_option(dataset):
    rows = _rows(dataset)
    by_id = {r["id"]: r for r in rows}
    attacked = [r for r in rows if r["metadata"]["scenario"] == "print_attack"]
    assert attacked
    for r in attacked:
        assert r["metadata"]["subtask"] != "ocr"
        text = r["metadata"]["print_attack"]["text"]
        mc = by_id[r["id"].replace("-tf@", "-mc@").replace("-ff@", "-mc@")]
        assert text in mc["choices"] and text != mc["choices"][mc["answer"]]
    for r in rows:
        if (
            r["metadata"]["scenario"] == "clean"
            or r["metadata"]["question_type"] != "multiple_choice"
        ):
            continue
        clean = by_id[r["id"].rsplit("@", 1)[0] + "@clean"]
        a = np.asarray(Image.open(dataset / r["images"][0]), dtype=np.int16)
        b = np.asarray(Image.open(dataset / clean["images"][0]), dtype=np.int16)
        changed = (np.abs(a - b).max(axis=2) > 0).mean()
        # A one-character print attack at 96 px touches few pixels; a corruption touches many.
        floor = 0.01 if r["metadata"]["scenario"] == "corruption" else 0.001
        assert changed > floor, (r["id"], changed)
        if r["metadata"]["scenario"] == "corruption":
            assert r["metadata"]["corruption"] and r["metadata"]["severity"] == 3


def test_on_the_fly_samples_match_the_written_questions(dataset):
    lazy = list(iter_samples(SynthConfig(n=26, seed=5, size=96, scenarios=SCEN)))
    rows = _rows(dataset)
    assert [s.id for s in lazy] == [r["id"] for r in rows]
    assert [s.choices for s in lazy] == [r.get("choices") for r in rows]
    # The lazily drawn image is the written PNG, pixel for pixel.
    for s, r in list(zip(lazy, rows, strict=True))[:12]:
        assert np.array_equal(
            np.asarray(s.images[0].load()), np.asarray(Image.open(dataset / r["images"][0]))
        )


def test_larger_set_starts_with_the_smaller_one():
    small = [s.id for s in iter_samples(SynthConfig(n=5, seed=2, size=64))]
    large = [s.id for s in iter_samples(SynthConfig(n=9, seed=2, size=64))]
    assert large[: len(small)] == small


def test_settings_are_validated(tmp_path):
    with pytest.raises(ValueError, match="unknown scenarios"):
        SynthConfig(scenarios=("fog",))
    with pytest.raises(ValueError, match="proxy"):
        SynthConfig(scenarios=("adversarial",))
    with pytest.raises(ValueError, match="diffusion renderer needs a model"):
        SynthConfig(renderer="diffusion")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        write_dataset(SynthConfig(n=1, size=64), tmp_path / "x")
    with pytest.raises(ValueError, match="proxy model"):
        list(iter_samples(SynthConfig(n=1, scenarios=("adversarial",), proxy="tiny-llava")))


def test_an_empty_set_is_refused_not_written(tmp_path):
    # Re-test 13 #10: --n 0 wrote 0 samples and said "evaluate with: lmmprobe run ...", which
    # then failed with "no valid samples".
    done = lmmprobe("synth", "generate", "--n", "0", "--out", tmp_path / "o")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == ["error: n must be at least 1, got 0"]
    assert "evaluate with" not in done.stdout
    assert not (tmp_path / "o").exists()
