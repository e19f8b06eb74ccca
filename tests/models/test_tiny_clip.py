"""The tiny random-weight CLIP checkpoint: builds once, reloads offline, embeds whole texts."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from PIL import Image  # noqa: E402
from transformers import CLIPModel, CLIPProcessor  # noqa: E402

from lmmprobe.models.tiny_clip import TINY_CLIP_CONTEXT, tiny_clip_path  # noqa: E402

pytestmark = pytest.mark.usefixtures("hf_offline")


@pytest.fixture(scope="module")
def clip(tiny_cache: Path) -> tuple[CLIPModel, CLIPProcessor]:
    path = tiny_clip_path(tiny_cache)
    model = CLIPModel.from_pretrained(path)
    model.eval()
    return model, CLIPProcessor.from_pretrained(path)


def test_built_once_under_the_cache_and_reused(tiny_cache: Path) -> None:
    path = tiny_clip_path(tiny_cache)
    assert path.is_dir() and tiny_cache in path.parents
    stamp = (path / "model.safetensors").stat().st_mtime_ns
    assert tiny_clip_path(tiny_cache) == path
    assert (path / "model.safetensors").stat().st_mtime_ns == stamp
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_build_is_deterministic(tiny_cache: Path, tmp_path: Path) -> None:
    again = tiny_clip_path(tmp_path)
    first = tiny_clip_path(tiny_cache)
    assert (again / "model.safetensors").read_bytes() == (first / "model.safetensors").read_bytes()


def test_processor_uses_pil_images_and_wraps_texts(clip: tuple[CLIPModel, CLIPProcessor]) -> None:
    _, processor = clip
    assert type(processor.image_processor).__name__ == "CLIPImageProcessorPil"
    tok = processor.tokenizer
    ids = tok("a red circle")["input_ids"]
    assert ids[0] == tok.bos_token_id and ids[-1] == tok.eos_token_id
    long = tok(" ".join(["circle"] * 200), truncation=True)["input_ids"]
    assert len(long) == TINY_CLIP_CONTEXT and long[-1] == tok.eos_token_id
    enc = processor(images=[Image.new("RGB", (50, 30), "blue")], return_tensors="pt")
    assert tuple(enc["pixel_values"].shape) == (1, 3, 32, 32)


def test_text_embedding_depends_on_every_word(clip: tuple[CLIPModel, CLIPProcessor]) -> None:
    # CLIP pools at the end token: the embedding must see the last word, not just the first.
    model, processor = clip
    texts = ["a red circle", "a red square", "a red circle"]
    enc = processor(text=texts, return_tensors="pt", padding=True)
    with torch.inference_mode():
        emb = model.get_text_features(**enc)
    emb = emb if isinstance(emb, torch.Tensor) else emb.pooler_output
    assert not torch.allclose(emb[0], emb[1])
    assert torch.allclose(emb[0], emb[2])


def test_image_text_forward(clip: tuple[CLIPModel, CLIPProcessor]) -> None:
    model, processor = clip
    images = [Image.new("RGB", (40, 40), c) for c in ("red", "green")]
    enc = processor(text=["red", "green"], images=images, return_tensors="pt", padding=True)
    with torch.inference_mode():
        out = model(**enc)
    assert tuple(out.logits_per_image.shape) == (2, 2)
    assert torch.isfinite(out.logits_per_image).all()
