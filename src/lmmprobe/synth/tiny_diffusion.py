"""A tiny random-weight SDXL pipeline, built locally to test the diffusion renderer offline.

Dysca (Zhang et al., 2024) draws its images with Stable Diffusion XL (Podell et al., 2023,
"SDXL: Improving Latent Diffusion Models for High-Resolution Image Synthesis"). SDXL weights
cannot be downloaded here, so this module builds a genuine diffusers `StableDiffusionXLPipeline`
folder with random weights: its images are noise, but every loading, tokenizing, encoding,
denoising and decoding path the renderer uses is the real one.

The folder holds what an SDXL checkpoint holds, only small:

- ``unet``: `UNet2DConditionModel` with SDXL's ``text_time`` addition embeddings (pooled text
  embedding + six size/crop conditioning numbers), two blocks of 16 and 32 channels, latent
  16×16;
- ``vae``: `AutoencoderKL` with two blocks (scale factor 2), so images are 32×32 pixels
  (the renderer resizes them to each recipe's size);
- ``text_encoder`` (`CLIPTextModel`) and ``text_encoder_2`` (`CLIPTextModelWithProjection`),
  hidden 32 each, whose penultimate states are concatenated into the UNet's 64-dimensional
  cross-attention context, as in SDXL;
- ``tokenizer`` and ``tokenizer_2``: `CLIPTokenizer` over a byte-level BPE vocabulary learnt
  here from the words prompts are made of (the synthetic vocabularies, the style templates and
  Dysca's style and scene-text templates; ``vocab.json`` + ``merges.txt``, CLIP's format with ``</w>`` word ends), 77 positions, so
  built prompts fit without truncation;
- ``scheduler``: `EulerDiscreteScheduler` with SDXL's noise schedule.

`DiffusionRenderer("tiny")` (``synth generate --diffusion-model tiny``) builds it on first use
(a few seconds), loads it offline and renders an image in a few hundredths of a second on CPU
at the few steps the tests ask for (about a tenth at the renderer's default 30 steps with
guidance).
"""

from __future__ import annotations

import collections
import itertools
import json
import re
import shutil
from pathlib import Path
from typing import Any

from lmmprobe._optional import require
from lmmprobe.models.tiny import build_once, seeded

__all__ = ["TINY_SDXL_RESOLUTION", "tiny_sdxl_path"]

TINY_SDXL_RESOLUTION = 32
"""Side in pixels of the images the tiny pipeline makes natively (latent 16 × VAE factor 2)."""

_SEED = 0
# Bumped whenever the build changes, so a stale cached folder is never reused.
_BUILD = 3
_CONTEXT = 77
_BOS, _EOS = "<|startoftext|>", "<|endoftext|>"
_MERGES = 2000

# Words text-to-image prompts are made of, so the tokenizer splits them into few pieces.
_CORPUS = """
a an the of on in with and at its it is written word words three two one four five six
red orange yellow green blue purple white black pink brown gray grey gold silver colour color
dog dogs cat cats bird birds fish horse cow pig sheep lion tiger bear fox rabbit mouse owl frog
apple apples banana bananas pizza cake bread cheese carrot tomato grape cherry lemon strawberry
tree trees flower flowers rose tulip cactus leaf mushroom sunflower palm clover
car cars bus truck bicycle train airplane boat ship rocket motorcycle taxi tractor
star stars circle circles square squares triangle triangles heart hearts hexagon diamond
large small big tiny top bottom left right center middle corner
background sky clouds sunset grass lawn water sea beach brick wall stripes checkerboard dots
noise gradient solid plain wood forest field desert snow snowing rain raining fog foggy night
style photo photograph photorealistic painting watercolor oil pencil sketch drawing pixel art
bit comic book pop neon glow glowing halftone mosaic tiles blueprint sepia grayscale vintage
soft brush strokes thick impasto canvas graphite lines bold outlines flat colors cel shading
high quality detailed sharp focus blurry lowres low resolution deformed watermark text
signature ugly bad anatomy extra cropped jpeg artifacts duplicate monochrome
"""


def tiny_sdxl_path(cache_dir: str | Path | None = None) -> Path:
    """Build (once, then reuse) the tiny random-weight SDXL pipeline and return its folder.

    The folder lives beside the tiny vision-language models, under
    ``<cache_dir>/tiny/<lmmprobe version>-tf<transformers version>/sdxl-tiny-d<diffusers
    version>-b<build>``. It is built in a temporary folder and renamed into place, so
    concurrent builders never see half a pipeline. The build is seeded and deterministic.

    Args:
        cache_dir: Root of the cache; defaults to ``$LMMPROBE_CACHE`` or ``~/.cache/lmmprobe``.

    Returns:
        The pipeline folder (``model_index.json`` and one subfolder per component).

    Raises:
        ImportError: torch, transformers or diffusers is missing
            (``pip install 'lmmprobe[diffusion]'``).

    """
    _, _, diffusers = require(
        "torch", "transformers", "diffusers", extra="diffusion", purpose="the tiny SDXL pipeline"
    )

    return build_once(
        f"sdxl-tiny-d{diffusers.__version__}-b{_BUILD}",
        _build,
        cache_dir,
        marker="model_index.json",
    )


# --------------------------------------------------------------------------- tokenizer


def _byte_alphabet() -> list[str]:
    """GPT-2/CLIP's printable stand-ins for the 256 byte values, in byte order.

    Byte-level BPE works on bytes, but its vocabulary files hold text: printable bytes stand for
    themselves and the others are shifted past 255 so that no stand-in is whitespace or a control
    character.
    """
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    shifted = 0
    table: dict[int, str] = {}
    for byte in range(256):
        if byte in printable:
            table[byte] = chr(byte)
        else:
            table[byte] = chr(256 + shifted)
            shifted += 1
    return [table[b] for b in range(256)]


def _corpus_words() -> list[str]:
    """The words prompts are made of: the fixed corpus plus the vocabularies and templates.

    Split as CLIP's pre-tokenizer splits (lowercased runs of letters, single digits, runs of
    punctuation), so that the merges learnt here are the ones the tokenizer applies, and
    built prompts stay within the 77 positions. Dysca's style and scene-text templates are
    in too, so the ``dysca`` recipe's prompts fit as well (all but a few with long names;
    without them a quarter were cut, each with a warning).
    """
    from lmmprobe.imaging import vocab
    from lmmprobe.synth.dysca_pqa import load_metadata
    from lmmprobe.synth.prompt import NEGATIVE_BASE, STYLE_TEMPLATES

    dysca = load_metadata()
    parts = [
        _CORPUS,
        *(f"{s['prompt']} {s['negative_prompt']}" for s in dysca.styles),
        *(t["template"] for t in dysca.text_templates),
        *STYLE_TEMPLATES.values(),
        *NEGATIVE_BASE,
        *vocab.BACKGROUNDS.values(),
        *vocab.WEATHERS.values(),
        *(name for group in vocab.GLYPHS.values() for name in group),
        *vocab.SHAPES,
        *vocab.COLORS,
        *vocab.WORDS,
        *vocab.POSITIONS,
    ]
    return re.findall(r"[^\W\d_]+|\d|[^\s\w]+", " ".join(parts).lower())


def _learn_merges(words: list[str], alphabet: list[str], limit: int) -> list[tuple[str, str]]:
    """Learn up to `limit` BPE merges from `words`: most frequent pair first, ties by text.

    Stops when no pair occurs twice. Pair counts are updated only for the words a merge
    touches, which keeps the build fast.
    """
    # A word is its byte stand-ins, the last one marked as a word end, as CLIP's BPE does.
    spelled: list[list[str]] = []
    weights: list[int] = []
    for word, n in sorted(collections.Counter(words).items()):
        letters = [alphabet[b] for b in word.encode("utf-8")]
        letters[-1] += "</w>"
        spelled.append(letters)
        weights.append(n)
    pairs: collections.Counter[tuple[str, str]] = collections.Counter()
    for symbols, n in zip(spelled, weights, strict=True):
        for pair in itertools.pairwise(symbols):
            pairs[pair] += n
    merges: list[tuple[str, str]] = []
    while len(merges) < limit and pairs:
        top = max(pairs.values())
        if top < 2:
            break
        best = min(p for p, c in pairs.items() if c == top)
        merges.append(best)
        joined = best[0] + best[1]
        for symbols, n in zip(spelled, weights, strict=True):
            if best[0] not in symbols or best not in itertools.pairwise(symbols):
                continue
            for pair in itertools.pairwise(symbols):
                pairs[pair] -= n
            out: list[str] = []
            i = 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    out.append(joined)
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            symbols[:] = out
            for pair in itertools.pairwise(symbols):
                pairs[pair] += n
        pairs = +pairs  # drop pairs that no longer occur
    return merges


def _write_bpe(folder: Path) -> None:
    """Write CLIP-format ``vocab.json`` and ``merges.txt`` learnt from the prompt corpus."""
    alphabet = _byte_alphabet()
    merges = _learn_merges(_corpus_words(), alphabet, _MERGES)
    tokens = [*alphabet, *(c + "</w>" for c in alphabet)]
    seen = set(tokens)
    for a, b in merges:
        if a + b not in seen:
            seen.add(a + b)
            tokens.append(a + b)
    # The special tokens come last, as in CLIP: the end token's id must not be 2, which
    # CLIPTextModel reads as a legacy configuration and then pools at the highest id instead.
    tokens += [_BOS, _EOS]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(
        json.dumps({t: i for i, t in enumerate(tokens)}, ensure_ascii=False), encoding="utf-8"
    )
    lines = ["#version: 0.2", *(f"{a} {b}" for a, b in merges)]
    (folder / "merges.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _tokenizer(bpe: Path) -> Any:
    from transformers import CLIPTokenizer

    return CLIPTokenizer.from_pretrained(str(bpe), model_max_length=_CONTEXT)


# --------------------------------------------------------------------------- models


def _text_config(tokenizer: Any) -> Any:
    from transformers import CLIPTextConfig

    return CLIPTextConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=_CONTEXT,
        projection_dim=32,
        hidden_act="gelu",
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def _build(folder: Path) -> None:
    from diffusers import (
        AutoencoderKL,
        EulerDiscreteScheduler,
        StableDiffusionXLPipeline,
        UNet2DConditionModel,
    )
    from transformers import CLIPTextModel, CLIPTextModelWithProjection

    bpe = folder / ".bpe"
    _write_bpe(bpe)
    tokenizer, tokenizer_2 = _tokenizer(bpe), _tokenizer(bpe)
    text_config = _text_config(tokenizer)
    with seeded(_SEED):
        unet: Any = UNet2DConditionModel(  # type: ignore[no-untyped-call]
            sample_size=TINY_SDXL_RESOLUTION // 2,
            in_channels=4,
            out_channels=4,
            layers_per_block=1,
            block_out_channels=(16, 32),
            norm_num_groups=8,
            down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
            up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
            attention_head_dim=(2, 4),
            use_linear_projection=True,
            transformer_layers_per_block=(1, 1),
            # SDXL's micro-conditioning: the pooled text embedding (32) plus six numbers
            # (original size, crop corner, target size), each embedded in 8 dimensions.
            addition_embed_type="text_time",
            addition_time_embed_dim=8,
            projection_class_embeddings_input_dim=32 + 6 * 8,
            # Both text encoders' hidden states, concatenated.
            cross_attention_dim=64,
        )
        vae: Any = AutoencoderKL(  # type: ignore[no-untyped-call]
            in_channels=3,
            out_channels=3,
            down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
            up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
            block_out_channels=(16, 32),
            layers_per_block=1,
            latent_channels=4,
            norm_num_groups=8,
            sample_size=TINY_SDXL_RESOLUTION,
        )
        text_encoder = CLIPTextModel(text_config)
        text_encoder_2 = CLIPTextModelWithProjection(text_config)
    # SDXL base's noise schedule and spacing.
    scheduler: Any = EulerDiscreteScheduler(  # type: ignore[no-untyped-call]
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        timestep_spacing="leading",
        steps_offset=1,
        prediction_type="epsilon",
    )
    pipe: Any = StableDiffusionXLPipeline(  # type: ignore[no-untyped-call]
        vae=vae,
        text_encoder=text_encoder,
        text_encoder_2=text_encoder_2,
        tokenizer=tokenizer,
        tokenizer_2=tokenizer_2,
        unet=unet,
        scheduler=scheduler,
        add_watermarker=False,
    )
    pipe.save_pretrained(str(folder))
    # The tokenizer folders keep CLIP's own files beside the fast tokenizer's JSON.
    for sub in ("tokenizer", "tokenizer_2"):
        for name in ("vocab.json", "merges.txt"):
            shutil.copyfile(bpe / name, folder / sub / name)
    shutil.rmtree(bpe)
