"""The diffusion renderer: Dysca's own image path, a diffusers text-to-image pipeline.

Origin: Dysca (Zhang et al., 2024, "Dysca: A Dynamic and Scalable Benchmark for Evaluating
Perception Ability of LVLMs") renders each metadata item M by prompting Stable Diffusion XL
(Podell et al., 2023) with a prompt P built from M (`lmmprobe.synth.prompt`). This module loads
any diffusers text-to-image pipeline (SDXL base, SDXL-Turbo, or another
`AutoPipelineForText2Image` family) from a local folder or a hub id and renders recipes in
batches. A hub id that is not cached while the Hub cannot be reached is refused at once, with
the command that fetches it (`lmmprobe._hub.read_from_cache`), as the ``hf`` backend refuses
one. The model ``tiny`` (`TINY_MODEL`) is a tiny random-weight SDXL built locally in seconds
(`lmmprobe.synth.tiny_diffusion`): its images are noise, but it runs every step of a recipe
offline, to try one before fetching SDXL.

Defaults depend on the kind of model, read from its name:

- distilled few-step models (a name containing ``turbo``, ``lightning``, ``lcm`` or ``hyper``,
  e.g. ``stabilityai/sdxl-turbo``): 4 steps, guidance 0 (these models are trained without
  classifier-free guidance; 1 step already works, 4 gives cleaner small objects and text), and
  images made at 512 px, their training resolution;
- everything else (e.g. ``stabilityai/stable-diffusion-xl-base-1.0``): 30 steps and guidance
  7.0, the usual SDXL base setting, at the UNet's native resolution (1024 px for SDXL).

Images are then resized to the recipe's ``size``. The negative prompt is only used when
guidance is above 1 (without classifier-free guidance there is nothing to push away from).

Determinism: each image's starting noise comes from its own `torch.Generator` seeded with the
recipe's ``seed`` (always a CPU generator, so the noise is the same on any device), so a recipe
gives the same image whether it is rendered alone or in a batch, on the same device and dtype.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from lmmprobe._hub import NotCached, read_from_cache
from lmmprobe._optional import quiet_loading
from lmmprobe.synth.prompt import build_prompt, negative_prompt

__all__ = ["TINY_MODEL", "DiffusionRenderer", "model_kind"]

TINY_MODEL = "tiny"
"""The model name that means the tiny random-weight SDXL (`lmmprobe.synth.tiny_diffusion`),
built locally and cached; a folder named ``tiny`` is passed as ``./tiny``."""

_INSTALL_HINT = "pip install 'lmmprobe[diffusion]'"
_FEW_STEP = re.compile(r"turbo|lightning|lcm|hyper", re.IGNORECASE)
_DEFAULTS: dict[str, tuple[int, float]] = {"turbo": (4, 0.0), "base": (30, 7.0)}
_TURBO_RESOLUTION = 512
_DTYPES = ("float32", "float16", "bfloat16")
# A hub id is "name" or "owner/name"; anything else that does not exist is a bad local path.
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def model_kind(model: str) -> str:
    """``"turbo"`` for distilled few-step models (by name), else ``"base"``.

    Args:
        model: Pipeline folder or hub id.

    """
    return "turbo" if _FEW_STEP.search(Path(model).name or model) else "base"


class DiffusionRenderer:
    """Render recipes with a diffusers text-to-image pipeline (SDXL, SDXL-Turbo...).

    Args:
        model: A local pipeline folder (with ``model_index.json``), a hub id, or ``tiny``
            (`TINY_MODEL`). Local folders load with ``local_files_only=True``; hub ids too
            when the Hub cannot be reached (``HF_HUB_OFFLINE`` set, or no connection).
        steps: Denoising steps; default by model kind (module docstring).
        guidance_scale: Classifier-free guidance scale; default by model kind.
        batch_size: Images per pipeline call.
        device: ``cuda``, ``cuda:N``, ``cpu``...; default ``cuda`` when available, else ``cpu``.
        dtype: ``float32``, ``float16`` or ``bfloat16``; default ``float16`` on CUDA and
            ``float32`` on CPU (half precision is slow or unsupported there).
        resolution: Side in pixels the pipeline draws at before resizing to each recipe's
            size; default 512 for turbo models, else the UNet's native resolution.

    Raises:
        ImportError: diffusers (or torch) is missing; the message says what to install.
        FileNotFoundError: `model` looks like a local path and does not exist.
        ValueError: A bad option, `model` is a folder that is not a diffusers pipeline, or a
            hub id not in the local cache while the Hub cannot be reached (at once: the
            message gives the command that fetches it, and names ``tiny``).
        OSError: The pipeline could not be loaded.

    """

    def __init__(
        self,
        model: str,
        *,
        steps: int | None = None,
        guidance_scale: float | None = None,
        batch_size: int = 4,
        device: str | None = None,
        dtype: str | None = None,
        resolution: int | None = None,
    ) -> None:
        if steps is not None and steps < 1:
            raise ValueError(f"steps must be at least 1, got {steps}")
        if guidance_scale is not None and guidance_scale < 0:
            raise ValueError(f"guidance_scale must be non-negative, got {guidance_scale}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if dtype is not None and dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
        if resolution is not None and (resolution < 8 or resolution % 8):
            raise ValueError(f"resolution must be a positive multiple of 8, got {resolution}")
        local, offline = _where(model)
        try:
            # transformers tells of a missing torchvision when diffusers is imported.
            with quiet_loading():
                import diffusers
                import torch
        except ImportError as exc:
            raise ImportError(
                f"the diffusion renderer needs diffusers and torch ({exc}); run: {_INSTALL_HINT}"
            ) from exc

        if model == TINY_MODEL:
            from lmmprobe.synth.tiny_diffusion import tiny_sdxl_path

            with quiet_loading(diffusers=True):
                source = str(tiny_sdxl_path())
        else:
            source = str(Path(model).expanduser()) if local else model
        self.model = model
        self.kind = model_kind(model)
        default_steps, default_guidance = _DEFAULTS[self.kind]
        self.steps = steps if steps is not None else default_steps
        self.guidance_scale = guidance_scale if guidance_scale is not None else default_guidance
        self.batch_size = batch_size
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.dtype = dtype or ("float16" if self.device.startswith("cuda") else "float32")

        try:
            with warnings.catch_warnings(), quiet_loading(diffusers=True):
                # Newer diffusers renamed torch_dtype to dtype; older ones (>= 0.30, which the
                # extra allows) only know torch_dtype, so keep it and silence the rename notice.
                warnings.filterwarnings("ignore", message=".*torch_dtype.*", category=FutureWarning)
                pipe = diffusers.AutoPipelineForText2Image.from_pretrained(  # type: ignore[no-untyped-call]
                    source, torch_dtype=getattr(torch, self.dtype), local_files_only=offline
                )
        except (OSError, ValueError) as exc:
            raise OSError(
                f"cannot load a diffusers text-to-image pipeline from {model!r}: "
                f"{str(exc).rstrip('. ')}; pass a pipeline folder (saved with save_pretrained, "
                "holding model_index.json), a hub id that is cached or reachable, or "
                f"{TINY_MODEL} (a tiny random SDXL, to try a recipe offline)"
            ) from exc
        pipe.set_progress_bar_config(disable=True)
        self.pipe: Any = pipe.to(self.device)
        native = _native_resolution(pipe)
        if resolution is not None:
            self.resolution = resolution
        elif self.kind == "turbo":
            self.resolution = min(native, _TURBO_RESOLUTION)
        else:
            self.resolution = native
        self._revision = _revision(source, local)

    def __repr__(self) -> str:
        return (
            f"DiffusionRenderer({self.model!r}, steps={self.steps}, "
            f"guidance_scale={self.guidance_scale}, device={self.device!r}, dtype={self.dtype!r})"
        )

    @property
    def identity(self) -> dict[str, Any]:
        """What decides the images, for the dataset manifest.

        Keys: ``model`` (path or hub id), ``revision`` (hub commit, or ``sha256:...`` — a cheap
        fingerprint of a local folder's configs and weight files), ``pipeline`` and
        ``scheduler`` (class names), ``kind``, ``steps``, ``guidance_scale``, ``resolution``,
        ``dtype``, ``device`` (noise is drawn on the CPU, but the arithmetic and so the exact
        pixels depend on the device) and ``prompt`` (the prompt builder).
        """
        return {
            "model": self.model,
            "revision": self._revision,
            "pipeline": type(self.pipe).__name__,
            "scheduler": type(self.pipe.scheduler).__name__,
            "kind": self.kind,
            "steps": self.steps,
            "guidance_scale": self.guidance_scale,
            "resolution": self.resolution,
            "dtype": self.dtype,
            "device": self.device,
            "prompt": "lmmprobe.synth.prompt",
        }

    def render(self, recipes: Sequence[Mapping[str, Any]]) -> list[Image.Image]:
        """Render recipes, `batch_size` at a time, each from its own seed.

        Args:
            recipes: Recipes (``size``, ``seed``, ``objects``, ``background``, ``style``...),
                see `lmmprobe.synth.prompt.build_prompt`; a recipe holding ``prompt`` (and
                ``negative_prompt``, default empty) is drawn from that text instead, e.g.
                Dysca's own prompts (`lmmprobe.synth.dysca_pqa`).

        Returns:
            One RGB image per recipe, in order, ``size`` × ``size`` pixels.

        Raises:
            ValueError: A recipe lacks a valid ``size`` or ``seed``, or its prompt cannot be
                built (unknown style, colour...).

        """
        jobs = [(_size_seed(r, i), *_prompts(r, i)) for i, r in enumerate(recipes)]
        cfg = self.guidance_scale > 1.0
        images: list[Image.Image] = []
        # The tiny pipeline's arithmetic is microseconds: a second CPU thread only adds
        # synchronisation, and on a busy machine its spinning made 4 images take 50 s, not 1 s.
        threads = 1 if self.model == TINY_MODEL and self.device == "cpu" else None
        with _torch_threads(threads):
            for start in range(0, len(jobs), self.batch_size):
                images += self._render_batch(jobs[start : start + self.batch_size], cfg)
        return images

    def _render_batch(
        self, chunk: list[tuple[tuple[int, int], str, str]], cfg: bool
    ) -> list[Image.Image]:
        """One pipeline call: the images of `chunk` (``((size, seed), prompt, negative)``)."""
        import torch

        images: list[Image.Image] = []
        generators = [torch.Generator("cpu").manual_seed(seed) for (_, seed), _, _ in chunk]
        with torch.inference_mode():
            out = self.pipe(
                prompt=[p for _, p, _ in chunk],
                negative_prompt=[n for _, _, n in chunk] if cfg else None,
                num_inference_steps=self.steps,
                guidance_scale=self.guidance_scale,
                height=self.resolution,
                width=self.resolution,
                generator=generators,
                output_type="pil",
            )
        for ((size, _), _, _), image in zip(chunk, out.images, strict=True):
            image = image.convert("RGB")
            if image.size != (size, size):
                image = image.resize((size, size), Image.Resampling.LANCZOS)
            images.append(image)
        return images


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Run torch's CPU kernels on `n` threads inside (None: as they are)."""
    import torch

    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _where(model: str) -> tuple[bool, bool]:
    """``(local, offline)``: whether `model` is a local folder, and whether to read files only.

    Decided before diffusers is imported, so an uncached hub id is refused in a moment.

    Raises:
        FileNotFoundError, ValueError: A bad local path (`_check_local`).
        ValueError: A hub id not in the cache while the Hub cannot be reached.

    """
    if model == TINY_MODEL:
        return True, True
    if _check_local(model):
        return True, True
    try:
        return False, read_from_cache(model, "model_index.json")
    except NotCached as exc:
        # The command ends the line, so it can be copied from "with: " to the end as it is.
        raise ValueError(
            f"diffusion model {exc}; try the recipe offline with --diffusion-model "
            f"{TINY_MODEL} (a tiny random SDXL: noise images, every step real), or fetch it "
            f"to {exc.folder} (then --diffusion-model {exc.folder}) where the Hub is "
            f"reachable, with: {exc.command}"
        ) from None


def _check_local(model: str) -> bool:
    """Whether `model` is a local pipeline folder; raise when it is a bad local path."""
    path = Path(model).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ValueError(
                f"{model!r} is a file, not a diffusers pipeline folder; pass the folder that "
                "holds model_index.json (single-file checkpoints are not supported)"
            )
        if not (path / "model_index.json").is_file():
            raise ValueError(
                f"{model!r} is not a diffusers pipeline folder: it has no model_index.json "
                "(a transformers checkpoint or a bare UNet will not do; save the whole pipeline "
                "with save_pretrained)"
            )
        return True
    if not _HUB_ID.match(model):
        raise FileNotFoundError(
            f"diffusion model folder {model!r} does not exist (and it is not a hub id "
            "like owner/name)"
        )
    return False


def _native_resolution(pipe: Any) -> int:
    unet = getattr(pipe, "unet", None)
    sample = getattr(getattr(unet, "config", None), "sample_size", None)
    factor = getattr(pipe, "vae_scale_factor", 8)
    if isinstance(sample, int) and isinstance(factor, int):
        return sample * factor
    return 1024


def _revision(model: str, local: bool) -> str | None:
    """The hub commit a hub id resolved to, or a fingerprint of a local folder."""
    if local:
        return _fingerprint(Path(model).expanduser())
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - diffusers depends on huggingface_hub
        return None
    cached = try_to_load_from_cache(model, "model_index.json")
    if isinstance(cached, str):
        # .../snapshots/<commit>/model_index.json
        return Path(cached).parent.name
    return None


def _fingerprint(folder: Path) -> str:
    """Cheap fingerprint: every config's bytes, and each weight file's name, size, head, tail.

    Reading all of SDXL's ~7 GB would take longer than loading it; the safetensors header (at
    the head) names every tensor with its shape and dtype, and a changed weight file almost
    surely changes its size or its first or last MiB.
    """
    h = hashlib.sha256()
    chunk = 1 << 20
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = f.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in f.relative_to(folder).parts):
            continue  # caches and lock files of hub downloads, not the pipeline
        size = f.stat().st_size
        h.update(f"{rel}:{size}:".encode())
        with f.open("rb") as fh:
            h.update(fh.read(chunk))
            if size > 2 * chunk:
                fh.seek(-chunk, os.SEEK_END)
                h.update(fh.read())
    return "sha256:" + h.hexdigest()[:32]


def _size_seed(recipe: Mapping[str, Any], index: int) -> tuple[int, int]:
    size, seed = recipe.get("size"), recipe.get("seed")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"recipe {index}: size must be a positive integer, got {size!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"recipe {index}: seed must be an integer in [0, 2**63), got {seed!r}")
    return size, seed


def _prompts(recipe: Mapping[str, Any], index: int) -> tuple[str, str]:
    """(prompt, negative prompt): the recipe's own text when it holds one, else built from it."""
    if "prompt" not in recipe:
        return build_prompt(recipe), negative_prompt(recipe)
    prompt, negative = recipe["prompt"], recipe.get("negative_prompt", "")
    if not isinstance(prompt, str) or not prompt or not isinstance(negative, str):
        raise ValueError(f"recipe {index}: prompt must be a non-empty string, got {prompt!r}")
    return prompt, negative
