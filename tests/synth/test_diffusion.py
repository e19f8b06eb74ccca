"""The diffusion renderer on a tiny random SDXL pipeline: loads offline, batches, seeds per recipe."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("diffusers")

import numpy as np

from lmmprobe.synth.diffusion import DiffusionRenderer, model_kind
from lmmprobe.synth.dysca_pqa import generate_pqa
from lmmprobe.synth.metadata import make_item
from lmmprobe.synth.tiny_diffusion import TINY_SDXL_RESOLUTION, tiny_sdxl_path

pytestmark = pytest.mark.usefixtures("hf_offline")


@pytest.fixture(scope="module")
def tiny(tiny_cache: Path) -> Path:
    return tiny_sdxl_path(tiny_cache)


@pytest.fixture(scope="module")
def renderer(tiny: Path) -> DiffusionRenderer:
    # Guidance above 1 so that negative prompts and classifier-free guidance run too.
    return DiffusionRenderer(str(tiny), steps=2, guidance_scale=5.0, batch_size=3, device="cpu")


def recipes(n: int, size: int = 48, seed: int = 5) -> list[dict[str, Any]]:
    return [make_item(i, seed, size=size).recipe for i in range(n)]


def pixels(image: Any) -> np.ndarray:
    return np.asarray(image).astype(np.int16)


def test_tiny_pipeline_is_built_once_as_an_sdxl_folder(tiny_cache: Path, tiny: Path) -> None:
    assert tiny_cache in tiny.parents
    index = json.loads((tiny / "model_index.json").read_text())
    assert index["_class_name"] == "StableDiffusionXLPipeline"
    assert index["scheduler"] == ["diffusers", "EulerDiscreteScheduler"]
    for sub in ("tokenizer", "tokenizer_2"):
        assert (tiny / sub / "vocab.json").is_file() and (tiny / sub / "merges.txt").is_file()
    unet = json.loads((tiny / "unet" / "config.json").read_text())
    assert unet["addition_embed_type"] == "text_time"
    stamp = (tiny / "unet" / "diffusion_pytorch_model.safetensors").stat().st_mtime_ns
    assert tiny_sdxl_path(tiny_cache) == tiny
    assert (tiny / "unet" / "diffusion_pytorch_model.safetensors").stat().st_mtime_ns == stamp
    assert not [p for p in tiny.parent.iterdir() if p.name.endswith(".tmp")]


def test_tokenizer_keeps_built_prompts_within_clip_context(tiny: Path) -> None:
    from transformers import CLIPTokenizer

    from lmmprobe.synth.prompt import build_prompt, negative_prompt

    tok = CLIPTokenizer.from_pretrained(str(tiny / "tokenizer"))
    ids = tok("a watercolor painting of three red dogs")["input_ids"]
    assert ids[0] == tok.bos_token_id and ids[-1] == tok.eos_token_id
    assert tok.eos_token_id != 2  # CLIPTextModel would pool at the wrong place otherwise
    for r in recipes(40):
        assert len(tok(build_prompt(r))["input_ids"]) <= 77
        assert len(tok(negative_prompt(r))["input_ids"]) <= 77
    # Dysca's prompts too, but for a few long names (a quarter were cut before).
    records = [r for _, group in generate_pqa(0, 20) for r in group]
    cut = [r for r in records if len(tok(r["prompt"])["input_ids"]) > 77]
    assert len(cut) <= len(records) // 50
    assert all(len(tok(r["negative_prompt"])["input_ids"]) <= 77 for r in records)


def test_tiny_is_the_tiny_pipeline_by_name(tiny_cache: Path, tiny: Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LMMPROBE_CACHE", str(tiny_cache))
        renderer = DiffusionRenderer("tiny", steps=1)
    assert renderer.identity["model"] == "tiny"
    assert (
        renderer.identity["revision"] == DiffusionRenderer(str(tiny), steps=1).identity["revision"]
    )
    (image,) = renderer.render(recipes(1, size=40))
    assert image.size == (40, 40)


def test_renders_a_batch_to_each_recipe_size(renderer: DiffusionRenderer) -> None:
    batch = recipes(4)
    batch[1] = {**batch[1], "size": 80}
    batch[2] = {**batch[2], "size": TINY_SDXL_RESOLUTION}
    images = renderer.render(batch)
    assert [im.size for im in images] == [(48, 48), (80, 80), (32, 32), (48, 48)]
    assert all(im.mode == "RGB" for im in images)
    assert renderer.render([]) == []


def test_same_recipe_same_image_alone_or_in_a_batch(renderer: DiffusionRenderer) -> None:
    batch = recipes(3)
    together = renderer.render(batch)
    again = renderer.render(batch)
    assert [im.tobytes() for im in together] == [im.tobytes() for im in again]
    for recipe, in_batch in zip(batch, together, strict=True):
        (alone,) = renderer.render([recipe])
        diff = np.abs(pixels(alone) - pixels(in_batch))
        # The noise is the recipe's own; only float summation order differs with the batch
        # shape, which can move a rare pixel by one level.
        assert diff.max() <= 1 and (diff > 0).mean() < 0.01


def test_different_seeds_give_different_images(renderer: DiffusionRenderer) -> None:
    base = recipes(1)[0]
    one, other = renderer.render([base, {**base, "seed": base["seed"] + 1}])
    assert np.abs(pixels(one) - pixels(other)).mean() > 5


def test_identity_for_the_manifest(renderer: DiffusionRenderer, tiny: Path) -> None:
    ident = renderer.identity
    assert ident["model"] == str(tiny)
    assert ident["revision"].startswith("sha256:")
    assert ident["pipeline"] == "StableDiffusionXLPipeline"
    assert ident["scheduler"] == "EulerDiscreteScheduler"
    assert (ident["steps"], ident["guidance_scale"], ident["dtype"]) == (2, 5.0, "float32")
    assert ident["resolution"] == TINY_SDXL_RESOLUTION
    json.dumps(ident)  # the manifest is JSON


def test_defaults_follow_the_model_kind(tiny: Path, tmp_path: Path) -> None:
    assert model_kind("stabilityai/sdxl-turbo") == "turbo"
    assert model_kind("stabilityai/stable-diffusion-xl-base-1.0") == "base"
    base = DiffusionRenderer(str(tiny))
    assert (base.kind, base.steps, base.guidance_scale) == ("base", 30, 7.0)
    assert base.device == "cpu" and base.dtype == "float32"  # no CUDA in the test suite
    turbo_dir = tmp_path / "tiny-sdxl-turbo"
    turbo_dir.symlink_to(tiny, target_is_directory=True)
    turbo = DiffusionRenderer(str(turbo_dir))
    assert (turbo.kind, turbo.steps, turbo.guidance_scale) == ("turbo", 4, 0.0)
    (image,) = turbo.render(recipes(1, size=32))
    assert image.size == (32, 32)


def test_bad_paths_are_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        DiffusionRenderer(str(tmp_path / "missing" / "pipeline"))
    with pytest.raises(ValueError, match=r"no model_index\.json"):
        DiffusionRenderer(str(tmp_path))
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"\0" * 8)
    with pytest.raises(ValueError, match="not a diffusers pipeline folder"):
        DiffusionRenderer(str(weights))
    with pytest.raises(ValueError, match=r"not in the Hugging Face cache.*--diffusion-model tiny"):
        DiffusionRenderer("nobody/no-such-pipeline")  # offline: not in the cache, refused at once


def test_bad_options_and_recipes(renderer: DiffusionRenderer, tiny: Path) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        DiffusionRenderer(str(tiny), batch_size=0)
    with pytest.raises(ValueError, match="dtype"):
        DiffusionRenderer(str(tiny), dtype="int8")
    recipe = recipes(1)[0]
    with pytest.raises(ValueError, match="recipe 0: seed"):
        renderer.render([{k: v for k, v in recipe.items() if k != "seed"}])
    with pytest.raises(ValueError, match="recipe 1: size"):
        renderer.render([recipe, {**recipe, "size": 0}])
    with pytest.raises(ValueError, match="style 'cubism'"):
        renderer.render([{**recipe, "style": "cubism"}])


def test_missing_diffusers_names_the_extra(monkeypatch: pytest.MonkeyPatch, tiny: Path) -> None:
    monkeypatch.setitem(sys.modules, "diffusers", None)
    with pytest.raises(ImportError, match=r"pip install 'lmmprobe\[diffusion\]'"):
        DiffusionRenderer(str(tiny))
