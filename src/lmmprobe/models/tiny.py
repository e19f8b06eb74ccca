r"""Tiny random-weight vision-language checkpoints, built locally for tests and demos.

These models have random weights; their answers are meaningless. They exist to exercise real
loading, prompting, generation and scoring code offline: each folder is a genuine transformers
checkpoint (config, safetensors weights, a locally trained fast tokenizer, a PIL image processor,
the architecture's processor and a chat template) that `AutoProcessor.from_pretrained(path)` and
`AutoModelForImageTextToText.from_pretrained(path)` load without a network.

Architectures (``TINY_ARCHS``) and what callers must know about them. Each loads with
`AutoModelForImageTextToText`; processors use the PIL image processors (no torchvision).

- ``llava``: `LlavaProcessor` + `CLIPImageProcessorPil`, CLIP vision tower, Llama text model.
  16 image tokens per image (64 for ``size="small"``); several images per prompt.
- ``idefics3``: `Idefics3Processor` + `Idefics3ImageProcessorPil` with image splitting off; 4
  ``<image>`` tokens per image, wrapped as ``<fake_token_around_image><global-img>`` ...
  ``<fake_token_around_image>``; several images per prompt.
- ``paligemma``: `PaliGemmaProcessor` + `SiglipImageProcessorPil`, Gemma text model; 16 image
  tokens per image; several images per prompt. The template puts every ``<image>`` first; the
  processor inserts BOS after the last one and appends the newline that separates prefix from
  answer. It also returns ``token_type_ids`` and ``labels`` (prefix masked), which the model
  accepts.
- ``blip2``: `Blip2Processor` + `BlipImageProcessorPil`, OPT text model; 4 query tokens that the
  processor prepends itself before the (padded) text, so the template renders no image
  placeholder. One image per prompt only. transformers 5.23 drops the chat template when it
  loads a `Blip2Processor`; the tokenizer carries the same template, so render with
  ``processor.apply_chat_template(..., chat_template=processor.tokenizer.chat_template)``.

Video architectures (``TINY_VIDEO_ARCHS``; their processors' video processors, and so their
builds, need torchvision; aliases ``tiny-qwen2-vl`` and ``tiny-llava-onevision``):

- ``qwen2_vl``: `Qwen2VLProcessor` + `Qwen2VLImageProcessorPil` + `Qwen2VLVideoProcessor`
  (4-pixel patches merged 2x2, two frames per temporal patch, at most 1024 pixels a picture),
  M-RoPE text model. The template renders an image part as
  ``<|vision_start|><|image_pad|><|vision_end|>`` and a video part with ``<|video_pad|>``.
- ``llava_onevision``: `LlavaOnevisionProcessor` + `LlavaOnevisionImageProcessorPil` (one
  32x32 grid point) + `LlavaOnevisionVideoProcessor`, SigLIP tower, Qwen2 text model; an image
  part renders as ``<image>\\n``, a video part as ``<video>\\n``. Its processor stacks a
  batch's videos, so they must have one frame count.

``images=`` takes one list per prompt (``[[a], [b, c]]``) for llava, idefics3 and paligemma
(a flat list in prompt order works too), and a flat list with one image per prompt
(``[a, b]``) for blip2.

The chat templates ("USER: <image> ... ASSISTANT:") emit BOS themselves (PaliGemma's
processor adds it instead) and the tokenizers add no special tokens, so
``processor(text=apply_chat_template(...))`` yields exactly one BOS. Tokenizers pad on the left.

``tiny_model_path(arch, chat_template=False)`` builds the same checkpoint without any chat
template (folder ``<arch>-<size>-plain``), like the original BLIP-2 and PaliGemma releases:
it exercises the plain-text prompt layout of the ``hf`` backend.

``tiny_model_path("llava", thinking=True)`` (alias ``tiny-llava-think``, folder
``llava-tiny-think``) is tiny-llava (same weights and tokenizer) with a thinking chat template
in the manner of Qwen3's: the generation prompt opens a think block (``ASSISTANT: <think>\n``),
or, when the template argument ``enable_thinking`` is false, gives an empty closed one
(``ASSISTANT: <think>\n\n</think>\n\n``), so thinking on and off are two prompts of one
checkpoint.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lmmprobe._optional import quiet_loading, require
from lmmprobe._version import __version__

__all__ = [
    "TINY_ALIASES",
    "TINY_ARCHS",
    "TINY_VIDEO_ARCHS",
    "build_once",
    "seeded",
    "tiny_alias",
    "tiny_model_path",
]

TINY_ARCHS: tuple[str, ...] = ("llava", "idefics3", "paligemma", "blip2")
TINY_VIDEO_ARCHS: tuple[str, ...] = ("qwen2_vl", "llava_onevision")
"""Architectures whose processor takes a video; building (and loading) them needs torchvision."""

_ALIASES: dict[str, tuple[str, str, bool]] = {
    "tiny-llava": ("llava", "tiny", False),
    "tiny-idefics3": ("idefics3", "tiny", False),
    "tiny-paligemma": ("paligemma", "tiny", False),
    "tiny-blip2": ("blip2", "tiny", False),
    "small-llava": ("llava", "small", False),
    "tiny-llava-think": ("llava", "tiny", True),
    "tiny-qwen2-vl": ("qwen2_vl", "tiny", False),
    "tiny-llava-onevision": ("llava_onevision", "tiny", False),
}

TINY_ALIASES: tuple[str, ...] = tuple(_ALIASES)
"""The ``hf:`` names of the tiny random-weight models, e.g. ``tiny-llava``."""

_SEED = 0
_BOS, _EOS, _PAD, _UNK, _IMAGE = "<s>", "</s>", "<pad>", "<unk>", "<image>"

# Words the demo and synthetic tasks ask about, so they tokenize into few pieces.
_CORPUS_LINES: tuple[str, ...] = (
    "What color is the shape in the image? Options: (A) red; (B) blue. "
    "Answer with the option's mark from the given choices directly, e.g. (A).",
    "What shape is in the image? Options: (A) circle; (B) square; (C) triangle; (D) diamond.",
    "Is there a star in the image? Answer yes or no.",
    "How many shapes are in the image? Answer with a number.",
    "The answer is (A). The answer is (B). The answer is (C). The answer is (D).",
    "red orange yellow green blue purple white black",
    "circle square triangle diamond star hexagon",
    "yes no Yes No YES NO true false True False",
    "1 2 3 4 5 6 7 8 9 10 one two three four five six seven eight nine ten 0 11 12 100",
    "A B C D E F (A) (B) (C) (D) (E) (F) A. B. C. D.",
    "USER: ASSISTANT: SYSTEM: User: Assistant: System:",
    "USER: What is it? ASSISTANT: The answer is (A).",
    "SYSTEM: You are a helpful assistant. USER: Look at the image. ASSISTANT: yes",
    "a an the is are was were of in on at to from with and or not this that there here it",
    "image picture photo shape color colour number count left right top bottom center middle",
    "small large big tiny background foreground object objects caption describe question answer",
    "Describe the image. Please answer the question. Choose the correct option. Which one?",
    "The image shows a red circle on a white background.",
    "A blue square and a green triangle next to a yellow star.",
    "Question: Answer: Options: Option Hint: Context: Choices:",
    ", . ; : ! ? ' \" ( ) [ ] - _ / + = * % & # @",
)


def _default_cache_dir() -> Path:
    env = os.environ.get("LMMPROBE_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "lmmprobe"


def _versions_dir(cache_dir: Path) -> Path:
    import transformers

    return cache_dir / "tiny" / f"{__version__}-tf{transformers.__version__}"


def _tiny_vision(image_size: int, patch: int, **extra: Any) -> dict[str, Any]:
    """The vision tower every tiny architecture shares: hidden 32, 2 layers, 4 heads."""
    return {
        **extra,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "image_size": image_size,
        "patch_size": patch,
    }


def tiny_model_path(
    arch: str,
    *,
    size: str = "tiny",
    cache_dir: str | Path | None = None,
    chat_template: bool = True,
    thinking: bool = False,
) -> Path:
    """Build (once, then reuse) a tiny random-weight checkpoint and return its folder.

    The folder loads with `AutoProcessor.from_pretrained(path)` and
    `AutoModelForImageTextToText.from_pretrained(path)`, offline. It lives under
    ``<cache_dir>/tiny/<lmmprobe version>-tf<transformers version>/<arch>-<size>``; it is built in
    a temporary folder beside it and renamed into place, so concurrent builders never see half a
    model. Builds are seeded and deterministic.

    Args:
        arch: One of `TINY_ARCHS` or `TINY_VIDEO_ARCHS` (these need torchvision).
        size: ``"tiny"`` for every architecture, or ``"small"`` (llava only: text hidden 256,
            4 layers, 64 image tokens) for speed benchmarks.
        cache_dir: Root of the cache; defaults to ``$LMMPROBE_CACHE`` or ``~/.cache/lmmprobe``.
        chat_template: False builds the same checkpoint (same weights and tokenizer) without a
            chat template, in ``<arch>-<size>-plain``, as original BLIP-2 and PaliGemma
            releases ship; backends must then lay the conversation out themselves.
        thinking: True builds the checkpoint with a thinking chat template (llava only, in
            ``<arch>-<size>-think``): the generation prompt opens a ``<think>`` block unless
            the template argument ``enable_thinking`` is false.

    Returns:
        The checkpoint folder.

    Raises:
        ValueError: `arch` or `size` is unknown, or ``size="small"`` is asked of an architecture
            other than llava.
        ImportError: torch, transformers or tokenizers is missing
            (``pip install 'lmmprobe[hf]'``), or torchvision for a video architecture.

    """
    if arch not in (*TINY_ARCHS, *TINY_VIDEO_ARCHS):
        raise ValueError(
            f"unknown tiny architecture {arch!r}; choose one of "
            f"{', '.join((*TINY_ARCHS, *TINY_VIDEO_ARCHS))}"
        )
    if size not in ("tiny", "small"):
        raise ValueError(f"unknown size {size!r}; choose 'tiny' or 'small'")
    if size == "small" and arch != "llava":
        raise ValueError(f"size='small' exists for llava only, not {arch!r}")
    if thinking and (arch != "llava" or not chat_template):
        raise ValueError("thinking=True exists for llava with a chat template only")
    require("torch", "transformers", "tokenizers", extra="hf", purpose="tiny models")
    if arch in TINY_VIDEO_ARCHS:
        _require_torchvision(f"the tiny {arch} model")
    # Saving drew transformers' "Writing model shards" bar in the middle of a run's output.
    with quiet_loading():
        if thinking:
            return build_once(
                f"{arch}-{size}-think",
                lambda folder: _build_llava(folder, size, True, True),
                cache_dir,
            )
        name = f"{arch}-{size}" if chat_template else f"{arch}-{size}-plain"
        return build_once(
            name, lambda folder: _BUILDERS[arch](folder, size, chat_template), cache_dir
        )


def tiny_alias(name: str) -> Path | None:
    """Resolve a tiny-model alias to its (built on first use) folder.

    Args:
        name: ``"tiny-llava"``, ``"tiny-idefics3"``, ``"tiny-paligemma"``, ``"tiny-blip2"``,
            ``"small-llava"``, ``"tiny-llava-think"``, ``"tiny-qwen2-vl"`` or
            ``"tiny-llava-onevision"``.

    Returns:
        The checkpoint folder, or None when `name` is not an alias.

    """
    spec = _ALIASES.get(name)
    if spec is None:
        return None
    arch, size, thinking = spec
    return tiny_model_path(arch, size=size, thinking=thinking)


# --------------------------------------------------------------------------- tokenizer


def _train_tokenizer(specials: list[str], extra_specials: list[str]) -> Any:
    """A byte-level BPE tokenizer trained on the built-in corpus, wrapped as a fast tokenizer.

    Byte-level so any text encodes (no unknown characters); no post-processor, so encoding adds
    no special tokens and the chat template owns BOS.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=640,
        min_frequency=1,
        special_tokens=[*specials, *extra_specials],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    # Repeat the corpus so merges for the task words are learned before rarer pairs.
    tok.train_from_iterator(list(_CORPUS_LINES) * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tok,
        bos_token=_BOS,
        eos_token=_EOS,
        pad_token=_PAD,
        unk_token=_UNK,
        extra_special_tokens=extra_specials,
        padding_side="left",
        model_max_length=1024,
    )
    return fast


def _wrapping_tokenizer(max_length: int, **special: str) -> Any:
    """The trained tokenizer for encoder models: every text becomes ``<s> ... </s>``.

    Special tokens take ids 0-3 as ``<pad> <unk> <s> </s>``; the tokenizer itself adds the
    boundary tokens (CLIP pools at the end token, BART and BERT-style scoring expect them), pads
    on the right and truncates to `max_length`. `special` sets further attributes, e.g.
    ``cls_token="<s>"``.
    """
    from tokenizers import processors

    tok = _train_tokenizer([_PAD, _UNK, _BOS, _EOS], [])
    bos, eos = tok.convert_tokens_to_ids(_BOS), tok.convert_tokens_to_ids(_EOS)
    tok.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{_BOS} $A {_EOS}",
        pair=f"{_BOS} $A {_EOS} $B {_EOS}",
        special_tokens=[(_BOS, bos), (_EOS, eos)],
    )
    for key, value in special.items():
        setattr(tok, key, value)
    tok.padding_side = "right"
    tok.model_max_length = max_length
    return tok


# Qwen3's way: thinking on opens the block for the model; off closes an empty one for it.
_THINK_PROMPT = (
    "{%- if enable_thinking is defined and enable_thinking is false -%}"
    "{{ ' <think>\\n\\n</think>\\n\\n' }}{%- else -%}{{ ' <think>\\n' }}{%- endif -%}"
)


def _chat_template(
    *, bos: bool, image: str, turn_end: str, thinking: bool = False, video: str | None = None
) -> str:
    """A "USER: <image> ... ASSISTANT:" template over typed-part or string content.

    Every literal is a Jinja string expression so whitespace control cannot eat spaces and
    newlines; `image`, `turn_end` and `video` are Jinja expressions. `thinking` adds
    `_THINK_PROMPT` after the generation prompt; `video` renders a ``{"type": "video"}`` part
    (a template without it renders none).
    """
    start = "{{ bos_token }}" if bos else ""
    think = _THINK_PROMPT if thinking else ""
    picture_parts = "{%- if part['type'] == 'image' -%}{{ " + image + " }}"
    if video is not None:
        picture_parts += "{%- elif part['type'] == 'video' -%}{{ " + video + " }}"
    return (
        start + "{%- for message in messages -%}"
        "{%- if message['role'] == 'system' -%}{{ 'SYSTEM: ' }}"
        "{%- elif message['role'] == 'user' -%}{{ 'USER: ' }}"
        "{%- else -%}{{ 'ASSISTANT: ' }}{%- endif -%}"
        "{%- if message['content'] is string -%}{{ message['content'] }}"
        "{%- else -%}{%- for part in message['content'] -%}"
        + picture_parts
        + "{%- elif part['type'] == 'text' -%}{{ part['text'] }}{%- endif -%}"
        "{%- endfor -%}{%- endif -%}"
        "{%- if message['role'] == 'assistant' -%}{{ " + turn_end + " }}{%- endif -%}"
        "{{ '\\n' }}{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{ 'ASSISTANT:' }}" + think + "{%- endif -%}"
    )


# PaliGemma wants every image placeholder before the prefix text: the processor inserts BOS
# right after the last <image> and appends the "\n" that separates prefix from answer.
_PALIGEMMA_TEMPLATE = (
    "{%- for message in messages -%}{%- if message['content'] is not string -%}"
    "{%- for part in message['content'] -%}{%- if part['type'] == 'image' -%}{{ '<image>' }}"
    "{%- endif -%}{%- endfor -%}{%- endif -%}{%- endfor -%}"
    "{%- for message in messages -%}{%- if not loop.first -%}{{ '\\n' }}{%- endif -%}"
    "{%- if message['content'] is string -%}{{ message['content'] }}"
    "{%- else -%}{%- for part in message['content'] -%}{%- if part['type'] == 'text' -%}"
    "{{ part['text'] }}{%- endif -%}{%- endfor -%}{%- endif -%}{%- endfor -%}"
)


# --------------------------------------------------------------------------- builders


def build_once(
    name: str,
    build: Callable[[Path], None],
    cache_dir: str | Path | None = None,
    *,
    marker: str | None = None,
) -> Path:
    """Build a tiny checkpoint folder once under the versioned cache and return it.

    The folder is built in a temporary sibling and renamed into place, so a crashed build never
    leaves a half-written checkpoint and concurrent builders (test workers) do not collide.

    Args:
        name: Folder name under ``<cache_dir>/tiny/<lmmprobe version>-tf<transformers version>``.
        build: Writes the checkpoint into the folder it is given.
        cache_dir: Cache root (default: ``$LMMPROBE_CACHE`` or ``~/.cache/lmmprobe``).
        marker: A file whose presence marks a finished folder (default: the folder itself).

    """
    root = _versions_dir(Path(cache_dir) if cache_dir is not None else _default_cache_dir())
    final = root / name
    if (final / marker).is_file() if marker else final.is_dir():
        return final
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=root))
    try:
        build(tmp)
        try:
            os.replace(tmp, final)
        except OSError:
            # Another process renamed its finished build into place first; theirs is as good.
            if not final.is_dir():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


@contextlib.contextmanager
def seeded(seed: int = _SEED) -> Iterator[None]:
    """Seed torch for weight initialisation without touching the caller's global RNG state."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def _save_model(config: Any, folder: Path, tokenizer: Any) -> None:
    from transformers import AutoModelForImageTextToText

    with seeded():
        model = AutoModelForImageTextToText.from_config(config)  # type: ignore[no-untyped-call]
    gen = model.generation_config
    gen.bos_token_id = tokenizer.bos_token_id
    gen.eos_token_id = tokenizer.eos_token_id
    gen.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)


def _llama_text(vocab: int, tokenizer: Any, *, hidden: int, layers: int) -> dict[str, Any]:
    return {
        "model_type": "llama",
        "vocab_size": vocab,
        "hidden_size": hidden,
        "intermediate_size": hidden * 2,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 1024,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        "tie_word_embeddings": False,
    }


def _build_llava(folder: Path, size: str, template: bool, thinking: bool = False) -> None:
    from transformers import CLIPImageProcessorPil, LlavaConfig, LlavaProcessor

    small = size == "small"
    image_size, patch = (128, 16) if small else (32, 8)
    tokenizer = _train_tokenizer([_UNK, _BOS, _EOS, _PAD], [_IMAGE])
    if template:
        tokenizer.chat_template = _chat_template(
            bos=True, image="'<image>\\n'", turn_end="eos_token", thinking=thinking
        )
    image_processor = CLIPImageProcessorPil(
        size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size}
    )
    # CLIP adds a CLS token; "default" feature selection drops it again, so the count is exactly
    # (image_size // patch) ** 2: 16 for tiny, 64 for small.
    processor = LlavaProcessor(  # type: ignore[no-untyped-call]
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=patch,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=tokenizer.chat_template,
    )
    vision_hidden = 64 if small else 32
    config = LlavaConfig(
        vision_config={
            "model_type": "clip_vision_model",
            "hidden_size": vision_hidden,
            "intermediate_size": vision_hidden * 2,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "image_size": image_size,
            "patch_size": patch,
            "projection_dim": vision_hidden,
        },
        text_config=_llama_text(
            len(tokenizer), tokenizer, hidden=256 if small else 32, layers=4 if small else 2
        ),
        image_token_index=tokenizer.convert_tokens_to_ids(_IMAGE),
        image_seq_length=(image_size // patch) ** 2,
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
    )
    processor.save_pretrained(folder)
    _save_model(config, folder, tokenizer)


def _build_idefics3(folder: Path, size: str, template: bool) -> None:
    from transformers import Idefics3Config, Idefics3ImageProcessorPil, Idefics3Processor

    del size  # tiny only
    image_size, patch, scale = 32, 8, 2
    extras = [
        "<fake_token_around_image>",
        _IMAGE,
        "<end_of_utterance>",
        "<global-img>",
        *[f"<row_{i}_col_{j}>" for i in range(1, 7) for j in range(1, 7)],
    ]
    tokenizer = _train_tokenizer([_UNK, _BOS, _EOS, _PAD], extras)
    if template:
        tokenizer.chat_template = _chat_template(
            bos=True, image="'<image>'", turn_end="'<end_of_utterance>'"
        )
    # Splitting off: one global view per image keeps the sequence (and the test) short.
    image_processor = Idefics3ImageProcessorPil(
        size={"longest_edge": image_size},
        max_image_size={"longest_edge": image_size},
        do_image_splitting=False,
    )
    seq_len = (image_size // patch) ** 2 // scale**2
    processor = Idefics3Processor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        image_seq_len=seq_len,
        chat_template=tokenizer.chat_template,
    )
    config = Idefics3Config(
        vision_config=_tiny_vision(image_size, patch, model_type="idefics3_vision"),
        text_config=_llama_text(len(tokenizer), tokenizer, hidden=64, layers=2),
        image_token_id=tokenizer.convert_tokens_to_ids(_IMAGE),
        scale_factor=scale,
    )
    processor.save_pretrained(folder)
    _save_model(config, folder, tokenizer)


def _build_paligemma(folder: Path, size: str, template: bool) -> None:
    from transformers import PaliGemmaConfig, PaliGemmaProcessor, SiglipImageProcessorPil

    del size
    image_size, patch = 32, 8
    seq_len = (image_size // patch) ** 2
    tokenizer = _train_tokenizer([_UNK, _BOS, _EOS, _PAD], [_IMAGE])
    chat_template = _PALIGEMMA_TEMPLATE if template else None
    tokenizer.chat_template = chat_template
    image_processor = SiglipImageProcessorPil(
        size={"height": image_size, "width": image_size}, image_seq_length=seq_len
    )
    # The processor adds 1152 <locNNNN>/<segNNN> tokens to the tokenizer, so the model's
    # vocabulary is sized after it is built.
    processor = PaliGemmaProcessor(  # type: ignore[no-untyped-call]
        image_processor=image_processor, tokenizer=tokenizer, chat_template=chat_template
    )
    vocab = len(tokenizer)
    hidden = 32
    config = PaliGemmaConfig(
        vision_config=_tiny_vision(image_size, patch, model_type="siglip_vision_model"),
        text_config={
            "model_type": "gemma",
            "vocab_size": vocab,
            "hidden_size": hidden,
            "intermediate_size": hidden * 2,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": 8,
            "max_position_embeddings": 1024,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        image_token_index=tokenizer.convert_tokens_to_ids(_IMAGE),
        vocab_size=vocab,
        projection_dim=hidden,
        hidden_size=hidden,
    )
    processor.save_pretrained(folder)
    _save_model(config, folder, tokenizer)


def _build_blip2(folder: Path, size: str, template: bool) -> None:
    from transformers import Blip2Config, Blip2Processor, BlipImageProcessorPil

    del size
    image_size, patch, queries = 32, 8, 4
    tokenizer = _train_tokenizer([_UNK, _BOS, _EOS, _PAD], [_IMAGE])
    # The processor prepends the query-token placeholders itself, so the template has none.
    if template:
        tokenizer.chat_template = _chat_template(bos=True, image="''", turn_end="eos_token")
    image_processor = BlipImageProcessorPil(size={"height": image_size, "width": image_size})
    processor = Blip2Processor(  # type: ignore[no-untyped-call]
        image_processor=image_processor, tokenizer=tokenizer, num_query_tokens=queries
    )
    # Blip2Processor.__init__ drops chat_template; set it afterwards so save_pretrained writes it.
    processor.chat_template = tokenizer.chat_template
    config = Blip2Config(
        vision_config=_tiny_vision(image_size, patch),
        qformer_config={
            "vocab_size": 64,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "max_position_embeddings": 64,
            "cross_attention_frequency": 1,
        },
        text_config={
            "model_type": "opt",
            "vocab_size": len(tokenizer),
            "hidden_size": 32,
            "ffn_dim": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "word_embed_proj_dim": 32,
            "max_position_embeddings": 512,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        num_query_tokens=queries,
        image_token_index=tokenizer.convert_tokens_to_ids(_IMAGE),
    )
    processor.save_pretrained(folder)
    _save_model(config, folder, tokenizer)


def _require_torchvision(purpose: str) -> None:
    """Fail as `require` does where torchvision is missing: video processors need it.

    torchvision is no lmmprobe extra: it must be the build made for the installed torch.
    """
    try:
        importlib.import_module("torchvision")
    except ImportError as exc:
        raise ImportError(
            f"{purpose} needs torchvision ({exc}): transformers' video processors use it; "
            "install the torchvision release made for your torch (see pytorch.org)"
        ) from exc


def _build_qwen2_vl(folder: Path, size: str, template: bool) -> None:
    """Qwen2-VL: M-RoPE text model over a windowless ViT, images and videos as patch grids.

    Frames are resized to 32x32 (min and max pixels both 1024) and cut into 4-pixel patches
    merged 2x2, so an image is 16 ``<|image_pad|>`` tokens and a video 16 ``<|video_pad|>``
    tokens per two frames (a temporal patch; an odd last frame is repeated).
    """
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLImageProcessorPil,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    del size
    specials = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
    tokenizer = _train_tokenizer([_UNK, _BOS, _EOS, _PAD], specials)
    if template:
        tokenizer.chat_template = _chat_template(
            bos=True,
            image="'<|vision_start|><|image_pad|><|vision_end|>'",
            video="'<|vision_start|><|video_pad|><|vision_end|>'",
            turn_end="eos_token",
        )
    grid: dict[str, Any] = {
        "size": {"shortest_edge": 32 * 32, "longest_edge": 32 * 32},
        "patch_size": 4,
        "merge_size": 2,
        "temporal_patch_size": 2,
    }
    processor = Qwen2VLProcessor(  # type: ignore[no-untyped-call]
        image_processor=Qwen2VLImageProcessorPil(**grid),
        tokenizer=tokenizer,
        # The per-frame pixel cap of Qwen's own qwen-vl-utils (transformers warns without it).
        video_processor=Qwen2VLVideoProcessor(**grid, cap_pixels_per_frame=True),
        chat_template=tokenizer.chat_template,
    )
    ids = tokenizer.convert_tokens_to_ids
    hidden = 32
    config = Qwen2VLConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": hidden,
            "intermediate_size": hidden * 2,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 1024,
            # head_dim 8: M-RoPE's time, height and width sections share its 4 frequencies.
            "rope_parameters": {"rope_type": "default", "mrope_section": [2, 1, 1]},
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        vision_config={
            "depth": 2,
            "embed_dim": hidden,
            "hidden_size": hidden,
            "num_heads": 4,
            "mlp_ratio": 2,
            "patch_size": grid["patch_size"],
            "spatial_merge_size": grid["merge_size"],
            "temporal_patch_size": grid["temporal_patch_size"],
        },
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
        tie_word_embeddings=False,
    )
    processor.save_pretrained(folder)
    _save_model(config, folder, tokenizer)


def _build_llava_onevision(folder: Path, size: str, template: bool) -> None:
    """LLaVA-OneVision: SigLIP vision tower, Qwen2 text model, any-resolution images.

    An image is one 32x32 view (the only grid point), 16 ``<image>`` tokens plus its row
    newlines; a video's frames are 32x32 too, each pooled 2x2 to 4 ``<video>`` tokens, and
    one newline token after the last frame.
    """
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionImageProcessorPil,
        LlavaOnevisionProcessor,
        LlavaOnevisionVideoProcessor,
    )

    del size
    image_size, patch = 32, 8
    tokenizer = _train_tokenizer([_UNK, _BOS, _EOS, _PAD], [_IMAGE, "<video>"])
    if template:
        tokenizer.chat_template = _chat_template(
            bos=True, image="'<image>\\n'", video="'<video>\\n'", turn_end="eos_token"
        )
    square = {"height": image_size, "width": image_size}
    processor = LlavaOnevisionProcessor(  # type: ignore[no-untyped-call]
        image_processor=LlavaOnevisionImageProcessorPil(
            size=square, image_grid_pinpoints=[[image_size, image_size]]
        ),
        video_processor=LlavaOnevisionVideoProcessor(size=square),
        tokenizer=tokenizer,
        num_image_tokens=(image_size // patch) ** 2,
        vision_feature_select_strategy="full",
        vision_aspect_ratio="anyres_max_9",
        chat_template=tokenizer.chat_template,
    )
    ids = tokenizer.convert_tokens_to_ids
    config = LlavaOnevisionConfig(
        vision_config=_tiny_vision(image_size, patch, model_type="siglip_vision_model"),
        text_config={
            "model_type": "qwen2",
            "vocab_size": len(tokenizer),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 1024,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        image_token_index=ids(_IMAGE),
        video_token_index=ids("<video>"),
        image_grid_pinpoints=[[image_size, image_size]],
        vision_feature_select_strategy="full",
        vision_feature_layer=-1,
        vision_aspect_ratio="anyres_max_9",
    )
    processor.save_pretrained(folder)
    _save_model(config, folder, tokenizer)


_BUILDERS: dict[str, Callable[[Path, str, bool], None]] = {
    "llava": _build_llava,
    "idefics3": _build_idefics3,
    "paligemma": _build_paligemma,
    "blip2": _build_blip2,
    "qwen2_vl": _build_qwen2_vl,
    "llava_onevision": _build_llava_onevision,
}
