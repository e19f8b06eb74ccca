"""Tiny random-weight checkpoints: build, reload offline, prompt, generate, score."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from PIL import Image  # noqa: E402

from lmmprobe.models.tiny import TINY_ARCHS, tiny_alias, tiny_model_path  # noqa: E402

QUESTION = (
    "What color is the shape in the image? Options: (A) red; (B) blue. "
    "Answer with the option's mark from the given choices directly, e.g. (A)."
)
# Placeholder tokens each processor expands one image into.
IMAGE_TOKENS = {"llava": 16, "idefics3": 4, "paligemma": 16, "blip2": 4}
MULTI_IMAGE = {"llava": True, "idefics3": True, "paligemma": True, "blip2": False}

pytestmark = pytest.mark.usefixtures("hf_offline")


@pytest.fixture(scope="module")
def loaded(tiny_cache: Path) -> dict[str, tuple[Any, Any]]:
    """Each architecture built once and loaded once for the whole module."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    out: dict[str, tuple[Any, Any]] = {}
    for arch in TINY_ARCHS:
        path = tiny_model_path(arch, cache_dir=tiny_cache)
        processor = AutoProcessor.from_pretrained(path)
        model = AutoModelForImageTextToText.from_pretrained(
            path, low_cpu_mem_usage=True, dtype=torch.float32
        )
        model.eval()
        out[arch] = (processor, model)
    return out


def _image(color: str, size: tuple[int, int] = (40, 30)) -> Image.Image:
    return Image.new("RGB", size, color)


def _render(processor: Any, messages: list[dict[str, Any]]) -> str:
    # Blip2Processor.__init__ drops chat_template on load (transformers 5.23); the tokenizer
    # carries the same template.
    template = processor.chat_template or processor.tokenizer.chat_template
    text = processor.apply_chat_template(
        messages, chat_template=template, add_generation_prompt=True, tokenize=False
    )
    assert isinstance(text, str)
    return text


def _user(n_images: int, text: str = QUESTION) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "image"} for _ in range(n_images)]
    return [{"role": "user", "content": [*parts, {"type": "text", "text": text}]}]


def _images_arg(arch: str, per_prompt: list[list[Image.Image]]) -> Any:
    """The `images=` nesting each processor wants: one list per prompt, BLIP-2 flat."""
    if arch == "blip2":
        assert all(len(imgs) == 1 for imgs in per_prompt)
        return [imgs[0] for imgs in per_prompt]
    return per_prompt


def _encode(arch: str, processor: Any, prompts: list[str], images: list[list[Image.Image]]) -> Any:
    return processor(
        text=prompts,
        images=_images_arg(arch, images),
        return_tensors="pt",
        padding=True,
        padding_side="left",
    )


@pytest.mark.parametrize("arch", TINY_ARCHS)
def test_folder_is_a_complete_checkpoint(arch: str, tiny_cache: Path) -> None:
    path = tiny_model_path(arch, cache_dir=tiny_cache)
    names = set(os.listdir(path))
    assert {"config.json", "model.safetensors", "tokenizer.json", "processor_config.json"} <= names
    assert "chat_template.jinja" in names
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temp leftovers


@pytest.mark.parametrize("arch", TINY_ARCHS)
def test_loads_with_pil_processor_and_expected_classes(
    arch: str, loaded: dict[str, tuple[Any, Any]]
) -> None:
    processor, model = loaded[arch]
    expected = {
        "llava": ("LlavaProcessor", "LlavaForConditionalGeneration"),
        "idefics3": ("Idefics3Processor", "Idefics3ForConditionalGeneration"),
        "paligemma": ("PaliGemmaProcessor", "PaliGemmaForConditionalGeneration"),
        "blip2": ("Blip2Processor", "Blip2ForConditionalGeneration"),
    }[arch]
    assert (type(processor).__name__, type(model).__name__) == expected
    assert type(processor.image_processor).__name__.endswith("Pil")
    assert model.dtype == torch.float32
    assert processor.tokenizer.padding_side == "left"


@pytest.mark.parametrize("arch", TINY_ARCHS)
def test_one_image_generate_and_logits(arch: str, loaded: dict[str, tuple[Any, Any]]) -> None:
    processor, model = loaded[arch]
    prompt = _render(processor, _user(1))
    assert QUESTION in prompt
    inputs = _encode(arch, processor, [prompt], [[_image("red")]])
    image_id = model.config.image_token_id
    assert int((inputs["input_ids"] == image_id).sum()) == IMAGE_TOKENS[arch]
    # Exactly one BOS: the template (or PaliGemma's processor) adds it, the tokenizer does not.
    assert int((inputs["input_ids"] == processor.tokenizer.bos_token_id).sum()) == 1
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=3, do_sample=False)
        logits = model(**inputs).logits
    assert out.shape == (1, inputs["input_ids"].shape[1] + 3)
    assert logits.shape[:2] == inputs["input_ids"].shape
    assert logits.shape[2] >= len(processor.tokenizer)
    assert torch.isfinite(logits).all()


@pytest.mark.parametrize("arch", TINY_ARCHS)
def test_batched_left_padded_mixed_image_counts(
    arch: str, loaded: dict[str, tuple[Any, Any]]
) -> None:
    processor, model = loaded[arch]
    n_second = 2 if MULTI_IMAGE[arch] else 1
    prompts = [_render(processor, _user(1)), _render(processor, _user(n_second, "Which is red?"))]
    if MULTI_IMAGE[arch] and arch != "paligemma":
        assert prompts[1].count("<image>") == 2
    images = [[_image("red")], [_image("blue", (30, 50)), _image("green")][:n_second]]
    inputs = _encode(arch, processor, prompts, images)
    mask = inputs["attention_mask"]
    assert mask.shape[0] == 2 and bool((mask[:, -1] == 1).all())  # left padded: ends aligned
    image_id = model.config.image_token_id
    counts = (inputs["input_ids"] == image_id).sum(dim=1).tolist()
    assert counts == [IMAGE_TOKENS[arch], IMAGE_TOKENS[arch] * n_second]
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=3, do_sample=False)
        logits = model(**inputs).logits
    assert out.shape == (2, inputs["input_ids"].shape[1] + 3)
    assert logits.shape[:2] == inputs["input_ids"].shape


@pytest.mark.parametrize("arch", TINY_ARCHS)
def test_template_roles_and_string_content(arch: str, loaded: dict[str, tuple[Any, Any]]) -> None:
    processor, _ = loaded[arch]
    messages = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Color?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "The answer is (A)."}]},
        {"role": "user", "content": "And the shape?"},
    ]
    text = _render(processor, messages)
    for piece in ("Answer briefly.", "Color?", "The answer is (A).", "And the shape?"):
        assert piece in text
    assert text.index("Color?") < text.index("The answer is (A).") < text.index("And the shape?")
    if arch == "paligemma":
        assert text.startswith("<image>") and text.count("<image>") == 1
    else:
        assert text.endswith("ASSISTANT:") and "SYSTEM: Answer briefly." in text
        assert text.count("<image>") == (0 if arch == "blip2" else 1)
    # The rendered conversation goes through the processor (PaliGemma needs >= 1 image).
    inputs = _encode(arch, processor, [text], [[_image("red")]])
    assert inputs["input_ids"].shape[0] == 1


def test_build_is_cached_and_deterministic(tmp_path: Path) -> None:
    first = tiny_model_path("llava", cache_dir=tmp_path / "a")
    weights = first / "model.safetensors"
    stamp = weights.stat().st_mtime_ns
    again = tiny_model_path("llava", cache_dir=tmp_path / "a")
    assert again == first and weights.stat().st_mtime_ns == stamp
    other = tiny_model_path("llava", cache_dir=tmp_path / "b")
    assert other != first and other.is_dir()
    assert (other / "model.safetensors").read_bytes() == weights.read_bytes()
    assert (other / "tokenizer.json").read_bytes() == (first / "tokenizer.json").read_bytes()
    assert other.parent.name == first.parent.name  # <lmmprobe version>-tf<transformers version>
    assert first.name == "llava-tiny" and first.parent.parent.name == "tiny"


def test_build_leaves_global_rng_alone(tmp_path: Path) -> None:
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    tiny_model_path("blip2", cache_dir=tmp_path)
    assert torch.equal(torch.rand(3), expected)


def test_concurrent_builders_share_one_folder(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        paths = list(pool.map(lambda _: tiny_model_path("idefics3", cache_dir=tmp_path), range(2)))
    assert paths[0] == paths[1] and (paths[0] / "model.safetensors").is_file()
    assert [p.name for p in paths[0].parent.iterdir()] == ["idefics3-tiny"]


def test_small_llava_has_64_image_tokens(tmp_path: Path) -> None:
    from transformers import AutoConfig, AutoProcessor

    path = tiny_model_path("llava", size="small", cache_dir=tmp_path)
    assert path.name == "llava-small"
    config = AutoConfig.from_pretrained(path)
    assert config.text_config.hidden_size == 256 and config.text_config.num_hidden_layers == 4
    processor = AutoProcessor.from_pretrained(path)
    inputs = _encode("llava", processor, [_render(processor, _user(1))], [[_image("red")]])
    assert int((inputs["input_ids"] == config.image_token_id).sum()) == 64


def test_aliases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMMPROBE_CACHE", str(tmp_path))
    path = tiny_alias("tiny-paligemma")
    assert path is not None and path.is_relative_to(tmp_path) and path.name == "paligemma-tiny"
    assert tiny_alias("gpt-4o") is None
    assert tiny_alias("hf:tiny-llava") is None


@pytest.mark.parametrize(
    ("arch", "size"), [("gpt2", "tiny"), ("llava", "huge"), ("blip2", "small")]
)
def test_bad_arguments(arch: str, size: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"choose|llava only"):
        tiny_model_path(arch, size=size, cache_dir=tmp_path)


def test_plain_variant_has_no_chat_template_and_the_same_weights(tiny_cache: Path) -> None:
    from transformers import AutoProcessor

    plain = tiny_model_path("paligemma", cache_dir=tiny_cache, chat_template=False)
    templated = tiny_model_path("paligemma", cache_dir=tiny_cache)
    assert plain.name == "paligemma-tiny-plain" and plain.parent == templated.parent
    processor = AutoProcessor.from_pretrained(plain)
    assert not processor.chat_template and not processor.tokenizer.chat_template
    assert AutoProcessor.from_pretrained(templated).chat_template
    weights = "model.safetensors"
    assert (plain / weights).read_bytes() == (templated / weights).read_bytes()


@pytest.mark.parametrize("arch", ["qwen2_vl", "llava_onevision"])
def test_a_video_model_without_torchvision_says_what_it_needs(arch: str, tmp_path: Path) -> None:
    # Where torchvision is installed the build runs instead (tests/models/test_hf_video.py).
    if importlib.util.find_spec("torchvision") is not None:
        pytest.skip("torchvision is installed: the video models build here")
    with pytest.raises(ImportError, match=rf"the tiny {arch} model needs torchvision"):
        tiny_model_path(arch, cache_dir=tmp_path)
    assert not list(tmp_path.rglob("*.safetensors"))  # nothing half-built left behind
