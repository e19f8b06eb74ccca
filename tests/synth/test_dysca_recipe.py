"""``synth generate --recipe dysca`` through the console script, with a tiny random SDXL pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.console import lmmprobe

from lmmprobe.schema import ImageRef
from lmmprobe.synth import dysca_pqa
from lmmprobe.synth.dysca_recipe import dysca_items, dysca_samples
from lmmprobe.synth.generate import SynthConfig


def test_dysca_items_become_samples_with_dyscas_options_and_answers() -> None:
    items = dysca_items(2024, 2, ("animal", "text"), 64)
    assert [i.group for i in items] == ["animal", "animal", "text", "text"]
    # The same stream as Dysca's own run over these two groups.
    records = [r for _, recs in dysca_pqa.generate_pqa(2024, 2, ("animal", "text")) for r in recs]
    assert [i.record for i in items] == records
    samples = dysca_samples(items[0], ImageRef(path="x.png"))
    assert [s.metadata["subtask"] for s in samples] == [
        "animal", "color", "background", "style",
        "animal", "color", "background", "style",
        "animal",
    ]  # fmt: skip
    for sample, qa in zip(samples, items[0].record["q_a"], strict=True):
        assert sample.question == qa["question"]
        assert sample.gold_text == qa["answer"]
        assert sample.choices == (qa["options"] or None)
    assert items[2].text is not None and items[2].text in items[2].prompt
    assert items[0].recipe["prompt"] == items[0].prompt


def test_dysca_recipe_is_refused_without_a_diffusion_renderer(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="draws Dysca's prompts with a diffusion pipeline"):
        SynthConfig(recipe="dysca")
    with pytest.raises(ValueError, match="unknown recipe 'dyska'"):
        SynthConfig(recipe="dyska")
    result = lmmprobe("synth", "generate", "--recipe", "dysca", "--out", tmp_path / "x")
    assert result.returncode != 0
    assert "--renderer diffusion --diffusion-model" in result.stderr
    assert not (tmp_path / "x").exists()
    config = SynthConfig(recipe="dysca", renderer="diffusion", diffusion_model="m")
    assert config.subtasks == dysca_pqa.GROUPS
    with pytest.raises(ValueError, match=r"unknown subtasks \['ocr'\]"):
        SynthConfig(recipe="dysca", renderer="diffusion", diffusion_model="m", subtasks=("ocr",))


@pytest.mark.slow
@pytest.mark.usefixtures("hf_offline")
def test_generate_covers_dyscas_twenty_subtasks_and_drops_unread_text(
    tiny_cache: Path, tmp_path: Path
) -> None:
    pytest.importorskip("diffusers")
    pytest.importorskip(
        "rapidocr_onnxruntime", reason="rapidocr_onnxruntime is not installed (lmmprobe[ocr])"
    )
    from lmmprobe.synth.tiny_diffusion import tiny_sdxl_path

    tiny = tiny_sdxl_path(tiny_cache)
    out = tmp_path / "set"
    # Two items per group; the text group's noise images are read by the real OCR model,
    # which finds no text in them: they are dropped and counted (OCR check on by default).
    result = lmmprobe(
        "synth", "generate", "--recipe", "dysca", "--renderer", "diffusion",
        "--diffusion-model", tiny, "--diffusion-steps", "1", "--n", "2", "--size", "32",
        "--seed", "2024", "--no-dysca-postprocess", "--out", out, HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["recipe"] == "dysca"
    assert manifest["vocabulary"]["source"]["commit"] == dysca_pqa.load_metadata().origin["commit"]
    (ocr,) = manifest["filters"]
    expected = dysca_pqa.generate_pqa(2024, 2)
    n_text = len(dict(expected)["text"])
    assert ocr["name"] == "ocr" and ocr["dropped_items"] == n_text
    n_items = sum(len(recs) for _, recs in expected)
    assert manifest["counts"]["items"] == n_items - n_text
    # Every subtask but text is asked about here; text questions went with their images.
    assert set(manifest["counts"]["by_subtask"]) == {*dysca_pqa.SUBTASKS, "face"} - {"text"}
    records = json.loads((out / "dysca.json").read_text())
    want = [
        (r["prompt"], qa["question"], qa["answer"])
        for g, recs in expected
        if g != "text"
        for r in recs
        for qa in r["q_a"]
    ]
    assert [(r["prompt"], r["question"], r["answer"]) for r in records] == want
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == len(records) == manifest["counts"]["samples"]
    assert all((out / row["images"][0]).is_file() for row in rows)

    # Without the check, the text group is kept: all 20 subtasks.
    result = lmmprobe(
        "synth", "generate", "--recipe", "dysca", "--renderer", "diffusion",
        "--diffusion-model", tiny, "--diffusion-steps", "1", "--n", "1", "--size", "32",
        "--tasks", "text,face", "--no-ocr-check", "--no-dysca-postprocess",
        "--out", tmp_path / "text", HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "text" / "manifest.json").read_text())
    assert manifest["filters"] == []
    assert set(manifest["counts"]["by_subtask"]) == {
        "text", "age", "gender", "expression", "race", "background", "style", "face",
    }  # fmt: skip


@pytest.mark.usefixtures("hf_offline")
def test_write_dataset_with_the_dysca_recipe_counts_what_the_ocr_check_drops(
    tiny_cache: Path, tmp_path: Path
) -> None:
    pytest.importorskip("diffusers")
    pytest.importorskip(
        "rapidocr_onnxruntime", reason="rapidocr_onnxruntime is not installed (lmmprobe[ocr])"
    )
    from lmmprobe.synth.generate import write_dataset
    from lmmprobe.synth.tiny_diffusion import tiny_sdxl_path

    config = SynthConfig(
        n=1,
        size=32,
        recipe="dysca",
        renderer="diffusion",
        diffusion_model=str(tiny_sdxl_path(tiny_cache)),
        diffusion_steps=1,
        subtasks=("text", "landmark"),
        ocr_check=True,
        dysca_postprocess=False,
    )
    manifest = write_dataset(config, tmp_path / "set")
    # Noise from a random pipeline holds no legible text: the text item is dropped and counted.
    assert manifest["filters"][0]["dropped_items"] == 1
    assert manifest["counts"]["items"] == 1
    assert set(manifest["counts"]["by_subtask"]) == {"landmark", "background", "style"}
    assert manifest["renderer"]["prompt"].startswith("lmmprobe.synth.dysca_pqa")


@pytest.mark.slow
@pytest.mark.usefixtures("hf_offline")
def test_generate_shows_dyscas_items_under_corruption_and_print_attack(
    tiny_cache: Path, tmp_path: Path
) -> None:
    pytest.importorskip("diffusers")
    from PIL import Image

    from lmmprobe.imaging.corruptions import CORRUPTIONS
    from lmmprobe.synth.dysca_postprocess import postprocess
    from lmmprobe.synth.tiny_diffusion import tiny_sdxl_path

    out = tmp_path / "set"
    result = lmmprobe(
        "synth", "generate", "--recipe", "dysca", "--renderer", "diffusion",
        "--diffusion-model", tiny_sdxl_path(tiny_cache), "--diffusion-steps", "1",
        "--n", "3", "--size", "32", "--seed", "2024", "--tasks", "animal,text",
        "--scenarios", "clean,corruption,print_attack", "--no-ocr-check", "--out", out,
        HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Dysca's post-processing: asked" in result.stdout
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    by = {s: [r for r in rows if r["metadata"]["scenario"] == s] for s in ("clean", "corruption")}
    attacked = [r for r in rows if r["metadata"]["scenario"] == "print_attack"]
    # Dysca's post-processing decides the questions: those its own script keeps (seed 2024).
    drawn = dysca_pqa.generate_pqa(2024, 3, ("animal", "text"))
    kept = postprocess([recs for _, recs in drawn])
    want = sorted((r["prompt"], r["question"]) for r in kept)
    records = json.loads((out / "dysca.json").read_text())
    clean_records = [r for r in records if r["scenario"] == "clean"]
    assert sorted((r["prompt"], r["question"]) for r in clean_records) == want
    # Every question again under a corruption of its item's picture, one kind per item.
    strip = [r["id"].split("@")[0] for r in by["clean"]]
    assert [r["id"].split("@")[0] for r in by["corruption"]] == strip
    for row in by["corruption"]:
        assert row["metadata"]["corruption"] in CORRUPTIONS
        assert row["metadata"]["severity"] == 3
        clean_image = out / row["images"][0].replace("@corruption", "@clean")
        assert Image.open(out / row["images"][0]).tobytes() != Image.open(clean_image).tobytes()
    # Print attacks: every question but scene text's, each on a picture of its own that
    # carries one of that question's wrong options (Dysca's grid of sizes, colors, angles).
    assert [r["id"].split("@")[0] for r in attacked] == [
        s for s, r in zip(strip, by["clean"], strict=True) if r["metadata"]["group"] != "text"
    ]
    assert len({r["images"][0] for r in attacked}) == len(attacked) > 0
    for row in attacked:
        attack = row["metadata"]["print_attack"]
        assert (out / row["images"][0]).is_file()
        if "choices" in row:
            wrong = [c for i, c in enumerate(row["choices"]) if i != row["answer"]]
            assert attack["text"] in wrong
        assert attack["opacity"] in (40, 60, 80, 100) and attack["angle"] in (
            0, 15, -15, 25, -25, 35, -35,
        )  # fmt: skip
    # dysca.json: Dysca's record keys, and its free-form instruction.
    for record in records:
        assert record["negative_prompt"] and record["task"] in ("recognition", "OCR")
        if record["question_type"] == "image caption":
            assert record["instruction"] == record["question"] + "\nYour answer is:"
    manifest = json.loads((out / "manifest.json").read_text())
    (post,) = manifest["filters"]
    assert post["name"] == "dysca_postprocess" and post["questions_asked"] == len(kept)


@pytest.mark.slow
@pytest.mark.usefixtures("hf_offline")
def test_generate_attacks_dyscas_items_with_pgd_on_a_proxy(
    tiny_cache: Path, tmp_path: Path
) -> None:
    pytest.importorskip("diffusers")
    from lmmprobe.synth.tiny_diffusion import tiny_sdxl_path

    out = tmp_path / "adv"
    result = lmmprobe(
        "synth", "generate", "--recipe", "dysca", "--renderer", "diffusion",
        "--diffusion-model", tiny_sdxl_path(tiny_cache), "--diffusion-steps", "1",
        "--n", "1", "--size", "32", "--seed", "2024", "--tasks", "landmark",
        "--scenarios", "clean,adversarial", "--proxy", "tiny-llava", "--steps", "1",
        "--no-dysca-postprocess", "--out", out, HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    adv = [r for r in rows if r["metadata"]["scenario"] == "adversarial"]
    assert len(adv) == len(rows) // 2 > 0
    assert {r["images"][0] for r in adv} == {"images/0000/dysca-2024-000000@adversarial.png"}
    assert all(r["metadata"]["adversarial"]["proxy"] == "tiny-llava" for r in adv)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["adversarial_proxy"]["proxy"] == "tiny-llava"


def test_the_on_the_fly_synth_source_refuses_the_dysca_recipe_with_what_to_run(
    tmp_path: Path,
) -> None:
    result = lmmprobe("run", "--model", "random", "--data", "synth,recipe=dysca", "--db",
                      tmp_path / "db.sqlite")  # fmt: skip
    assert result.returncode != 0
    assert "recipe=dysca is not made on the fly" in result.stderr
    assert "lmmprobe synth generate --recipe dysca" in result.stderr
