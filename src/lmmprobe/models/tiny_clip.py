"""A tiny random-weight CLIP checkpoint, built locally for tests of CLIP-based code.

CLIP (Radford et al., 2021, "Learning Transferable Visual Models From Natural Language
Supervision") embeds images and texts in one space; Dysca filters generated images by their
CLIP text-image score, and HEMM's RefCLIPScore and CLIP-I use the same embeddings. Real CLIP
weights cannot be downloaded here, so this module builds a genuine transformers `CLIPModel`
checkpoint with random weights: its scores are meaningless, but every loading, tokenizing,
preprocessing and embedding path is the real one.

The folder holds the model config and safetensors weights, a `CLIPProcessor` made of a
`CLIPImageProcessorPil` (torchvision is absent) and a byte-level BPE fast tokenizer trained
locally (see `models/tiny.py`). `CLIPModel.from_pretrained(path)` and
`CLIPProcessor.from_pretrained(path)` load it offline.

What callers must know:

- Images are resized (shortest edge) and center-cropped to 32×32; patches of 8 pixels.
- Text: at most 77 positions (CLIP's context). The tokenizer wraps every text as
  ``<s> ... </s>``, because CLIP pools the text at the first end-of-text token; pass
  ``truncation=True`` for long texts (the end token is kept), and pad on the right.
- Embeddings (``projection_dim``) have 16 dimensions.
"""

from __future__ import annotations

from pathlib import Path

from lmmprobe._optional import require
from lmmprobe.models.tiny import _wrapping_tokenizer, build_once, seeded

__all__ = ["TINY_CLIP_CONTEXT", "tiny_clip_path"]

TINY_CLIP_CONTEXT = 77
"""Text positions of the tiny CLIP model (CLIP's own context length)."""

_SEED = 0
_IMAGE_SIZE, _PATCH, _HIDDEN, _PROJECTION = 32, 8, 32, 16
_FOLDER = "clip-tiny"


def tiny_clip_path(cache_dir: str | Path | None = None) -> Path:
    """Build (once, then reuse) the tiny random-weight CLIP checkpoint and return its folder.

    The folder lives beside the tiny vision-language models, under
    ``<cache_dir>/tiny/<lmmprobe version>-tf<transformers version>/clip-tiny``. It is built in
    a temporary folder and renamed into place, so concurrent builders never see half a model.
    The build is seeded and deterministic.

    Args:
        cache_dir: Root of the cache; defaults to ``$LMMPROBE_CACHE`` or ``~/.cache/lmmprobe``.

    Returns:
        A folder that `CLIPModel.from_pretrained` and `CLIPProcessor.from_pretrained` load
        offline.

    Raises:
        ImportError: torch, transformers or tokenizers is missing
            (``pip install 'lmmprobe[hf]'``).

    """
    require("torch", "transformers", "tokenizers", extra="hf", purpose="the tiny CLIP model")
    return build_once(_FOLDER, _build, cache_dir)


def _build(folder: Path) -> None:
    from transformers import CLIPConfig, CLIPImageProcessorPil, CLIPModel, CLIPProcessor

    # End-of-text is id 3, not 2: CLIPTextModel treats eos_token_id == 2 as the legacy
    # configuration and pools at the highest token id instead of at the end token.
    tokenizer = _wrapping_tokenizer(TINY_CLIP_CONTEXT)
    image_processor = CLIPImageProcessorPil(
        size={"shortest_edge": _IMAGE_SIZE},
        crop_size={"height": _IMAGE_SIZE, "width": _IMAGE_SIZE},
    )
    processor = CLIPProcessor(  # type: ignore[no-untyped-call]
        image_processor=image_processor, tokenizer=tokenizer
    )
    config = CLIPConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": _HIDDEN,
            "intermediate_size": _HIDDEN * 2,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "max_position_embeddings": TINY_CLIP_CONTEXT,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
            "projection_dim": _PROJECTION,
        },
        vision_config={
            "hidden_size": _HIDDEN,
            "intermediate_size": _HIDDEN * 2,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "image_size": _IMAGE_SIZE,
            "patch_size": _PATCH,
            "projection_dim": _PROJECTION,
        },
        projection_dim=_PROJECTION,
    )
    with seeded(_SEED):
        model = CLIPModel(config)
    processor.save_pretrained(folder)
    model.save_pretrained(folder)
