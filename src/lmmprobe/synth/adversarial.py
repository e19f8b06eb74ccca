"""Dysca's adversarial scenario: PGD with an L∞ bound on pixel values against a proxy model.

Dysca (Zhang et al., 2024) attacks its generated images with projected gradient descent
(PGD; Madry et al., 2018, "Towards Deep Learning Models Resistant to Adversarial Attacks")
against one proxy model (InstructBLIP in the paper) and evaluates every other model on the
same images, so most results measure *transfer* (black-box) robustness and only the proxy's
own results are *white-box*. This module runs the attack through lmmprobe's hf backend.

What is attacked. The sample (a choice question whose ``answer`` is the gold option index) is
formulated exactly as the runner would ask it (`lmmprobe.formulate.formulate`, default
`FormulateConfig` unless another is given) and rendered through the proxy's chat template
(`HFModel.render`). The loss is the proxy's negative log-likelihood of the gold answer
continuing that prompt, and PGD *maximizes* it (untargeted). The continuation is what the
request's method scores: under ``likelihood`` the gold option text (the candidate
`HFModel.loglikelihood` ranks), under ``mark_logprob`` the gold mark (``A``), and under
``generate`` (the default) the mark as the instruction asks for it, ``(A)``.

How. The perturbation lives at the image's own resolution in [0, 1]. A differentiable copy of
the proxy's image preprocessing maps the image to ``pixel_values``: torch resize to the
processor's size (antialiased bicubic or bilinear, torch's port of PIL's filters, in PIL's two
separable passes with clipping after each), center crop, and the processor's rescale and
mean/std normalization. This reproduces the standard PIL pipeline (`PilBackend`: resize →
crop → rescale → normalize) except that PIL rounds each resize pass to uint8 and our path
stays continuous (differentiable); a LANCZOS resample is approximated by bicubic.
`AttackResult.preprocess_gap` reports the largest difference on the clean image in normalized
units: about one pixel level (≈ 0.015 for CLIP's std) for the tiny models' processors.
Processors with other pipelines (image splitting, padding, dynamic resolution: Idefics3,
Qwen2-VL...) raise ValueError. Steps: a random start inside the ε-ball drawn from ``seed`` (a
local `torch.Generator`), then `steps` sign-gradient ascent steps, each followed by projection
onto the ε-ball and clamping to [0, 1]; the iterate with the highest (differentiable-path)
loss is kept. The result is rounded to uint8 with the change per pixel capped at
``floor(ε · 255)`` levels, so ``linf`` ≤ ε holds after rounding, and `loss_before` /
`loss_after` are measured on the uint8 pictures through the real processor, as an evaluation
would see them (so `loss_after` can fall short of the kept iterate's loss by the rounding).

Recording the proxy. Store ``attacker.sample_metadata(result)`` under the sample's
``metadata["adversarial"]`` (it holds ``proxy``, ``epsilon``, ``step_size``, ``steps``, the
proxy's ``backend``/``name``/``revision``/``fingerprint``, ``seed`` and the losses) and the
attacker's `identity` in the dataset manifest. When results are reported, split adversarial
rows by ``proxy_relation(sample.metadata["adversarial"], model.identity.model_dump())``:
"white-box" rows come from the proxy itself, "transfer" rows from every other model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from lmmprobe.formulate import formulate
from lmmprobe.schema import FormulateConfig, ImageRef, Request, Sample

if TYPE_CHECKING:
    import torch

    from lmmprobe.models.hf import HFModel

__all__ = ["AttackResult", "PGDAttacker", "PGDConfig", "proxy_relation"]

_LEVELS = 255.0  # uint8 pixel levels per unit of the [0, 1] scale


@dataclass(frozen=True)
class PGDConfig:
    """PGD settings on the [0, 1] pixel scale; Dysca's defaults are 8/255, 2/255 and 10 steps.

    Attributes:
        epsilon: L∞ radius of the perturbation (at least 1/255, or no uint8 pixel may change).
        step_size: Size of each sign-gradient step (at most `epsilon`).
        steps: Number of gradient steps (at least 1).

    """

    epsilon: float = 8 / 255
    step_size: float = 2 / 255
    steps: int = 10

    def __post_init__(self) -> None:
        if not (math.isfinite(self.epsilon) and 0.0 < self.epsilon <= 1.0):
            raise ValueError(f"PGDConfig.epsilon must lie in (0, 1], got {self.epsilon}")
        if _max_levels(self.epsilon) < 1:
            raise ValueError(
                f"PGDConfig.epsilon={self.epsilon} is below 1/255: no uint8 pixel could change"
            )
        if not (math.isfinite(self.step_size) and self.step_size > 0.0):
            raise ValueError(f"PGDConfig.step_size must be positive, got {self.step_size}")
        if self.step_size > self.epsilon:
            raise ValueError(
                f"PGDConfig.step_size={self.step_size} exceeds epsilon={self.epsilon}; "
                "a step must stay inside the ball"
            )
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) or self.steps < 1:
            raise ValueError(f"PGDConfig.steps must be an integer ≥ 1, got {self.steps!r}")


def _max_levels(epsilon: float) -> int:
    # The small slack keeps 8/255 * 255 = 7.999... at 8 levels.
    return math.floor(epsilon * _LEVELS + 1e-6)


@dataclass(frozen=True)
class AttackResult:
    """The outcome of one attack.

    Attributes:
        image: The attacked picture: RGB, uint8, the input's size.
        loss_before: Proxy's negative log-likelihood of the gold continuation on the clean
            image (through the real processor).
        loss_after: The same on `image`.
        linf: Largest absolute pixel change divided by 255 (≤ epsilon).
        target: The continuation whose likelihood was attacked, e.g. ``(A)``.
        seed: Seed of the random start.
        best_step: Which iterate was kept: 0 is the random start, k the k-th step.
        preprocess_gap: Largest absolute difference between the differentiable preprocessing
            and the processor's ``pixel_values`` on the clean image (normalized units).

    """

    image: Image.Image
    loss_before: float
    loss_after: float
    linf: float
    target: str
    seed: int
    best_step: int
    preprocess_gap: float


def proxy_relation(proxy_identity: Mapping[str, Any], model_identity: Mapping[str, Any]) -> str:
    """Whether an evaluated model was the attack's proxy: ``"white-box"`` or ``"transfer"``.

    Two identities name the same model when both carry a weights fingerprint and the
    fingerprints agree; without both fingerprints, when backend, name and revision agree.
    Loading options (dtype, device) do not matter: the same weights see the same attack. A
    record holding only the proxy spec (``{"proxy": "hf:PATH,dtype=float32", ...}``) is read
    as backend ``hf`` and name ``PATH``, the name the hf backend gives its `ModelIdentity`.

    Args:
        proxy_identity: `PGDAttacker.identity`, `PGDAttacker.sample_metadata`, or any record
            with a ``proxy`` spec (e.g. a sample's ``metadata["adversarial"]``).
        model_identity: The evaluated model's `ModelIdentity` as a dict (``model_dump()``).

    Returns:
        ``"white-box"`` when the evaluated model is the proxy, else ``"transfer"``.

    Raises:
        ValueError: `proxy_identity` names no proxy (no ``name``, ``fingerprint`` or
            ``proxy``).

    """
    p_fp, m_fp = proxy_identity.get("fingerprint"), model_identity.get("fingerprint")
    p_name = proxy_identity.get("name")
    p_backend = proxy_identity.get("backend")
    spec = proxy_identity.get("proxy")
    if p_name is None and isinstance(spec, str) and spec:
        backend, target, _ = _split_spec(spec)
        p_name, p_backend = target, p_backend or backend
    if p_fp is None and p_name is None:
        raise ValueError(
            "proxy_identity names no proxy: expected 'name', 'fingerprint' or 'proxy' keys "
            "(PGDAttacker.identity or sample.metadata['adversarial'])"
        )
    if (p_backend or "hf") != model_identity.get("backend"):
        return "transfer"
    if p_fp is not None and m_fp is not None:
        return "white-box" if p_fp == m_fp else "transfer"
    same_name = p_name == model_identity.get("name")
    same_revision = proxy_identity.get("revision") == model_identity.get("revision")
    return "white-box" if same_name and same_revision else "transfer"


def _split_spec(proxy: str) -> tuple[str, str | None, dict[str, str]]:
    """(backend, target, options) of a proxy given as ``hf:TARGET[,k=v...]`` or a bare target."""
    from lmmprobe.models.base import parse_model_spec

    if proxy.startswith("hf:"):
        return parse_model_spec(proxy)
    return "hf", proxy, {}


# --------------------------------------------------------------------------- preprocessing


_PIL_FILTERS = {0: "nearest", 2: "bilinear", 3: "bicubic", 1: "bicubic"}
# PIL's NEAREST, BILINEAR, BICUBIC; LANCZOS (1) is approximated by bicubic, the closest
# antialiased filter torch offers. BOX (4) and HAMMING (5) are refused.


class _Preprocess:
    """A differentiable copy of a standard PIL image processor (resize, crop, normalize)."""

    def __init__(self, image_processor: Any) -> None:
        from transformers.image_processing_backends import PilBackend, TorchvisionBackend

        name = type(image_processor).__name__
        standard = (
            isinstance(image_processor, PilBackend)
            and type(image_processor)._preprocess is PilBackend._preprocess
        ) or (
            isinstance(image_processor, TorchvisionBackend)
            and type(image_processor)._preprocess is TorchvisionBackend._preprocess
        )
        if not standard:
            raise ValueError(
                f"cannot differentiate through {name}: only processors with the standard "
                "resize → center crop → rescale → normalize pipeline (CLIP, SigLIP, BLIP "
                "style) are supported as PGD proxies"
            )
        ip = image_processor
        if getattr(ip, "do_pad", None):
            raise ValueError(f"cannot differentiate through {name}: it pads images")
        size = ip.size if ip.do_resize else None
        self.shortest: int | None = None
        self.fixed: tuple[int, int] | None = None
        if size is not None:
            extra = [
                k
                for k in ("longest_edge", "max_height", "max_width", "min_pixels", "max_pixels")
                if getattr(size, k, None)
            ]
            if extra:
                raise ValueError(f"cannot differentiate through {name}: size uses {extra}")
            if getattr(size, "shortest_edge", None):
                self.shortest = int(size.shortest_edge)
            elif getattr(size, "height", None) and getattr(size, "width", None):
                self.fixed = (int(size.height), int(size.width))
            else:
                raise ValueError(f"cannot differentiate through {name}: unknown size {size}")
        resample = int(getattr(ip, "resample", None) or 2)
        if resample not in _PIL_FILTERS:
            raise ValueError(f"cannot differentiate through {name}: resample filter {resample}")
        self.mode = _PIL_FILTERS[resample]
        crop = ip.crop_size if ip.do_center_crop else None
        self.crop = (int(crop.height), int(crop.width)) if crop is not None else None
        self.scale = float(ip.rescale_factor) * _LEVELS if ip.do_rescale else _LEVELS
        self.mean = tuple(float(x) for x in ip.image_mean) if ip.do_normalize else None
        self.std = tuple(float(x) for x in ip.image_std) if ip.do_normalize else None

    def _resize_shape(self, height: int, width: int) -> tuple[int, int] | None:
        if self.fixed is not None:
            return self.fixed
        if self.shortest is None:
            return None
        # The rule of transformers' get_resize_output_image_size (default_to_square=False).
        short, long = (width, height) if width <= height else (height, width)
        new_short, new_long = self.shortest, int(self.shortest * long / short)
        return (new_long, new_short) if width <= height else (new_short, new_long)

    def _interpolate(self, x: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
        import torch.nn.functional as F

        if self.mode == "nearest":
            return F.interpolate(x, size=size, mode="nearest")
        # antialias=True is torch's port of PIL's filters (support widened when shrinking).
        y = F.interpolate(x, size=size, mode=self.mode, align_corners=False, antialias=True)
        return y.clamp(0.0, 1.0)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """Map a (1, 3, H, W) image in [0, 1] to the processor's ``pixel_values``."""
        import torch

        shape = self._resize_shape(int(x.shape[-2]), int(x.shape[-1]))
        if shape is not None:
            # PIL resizes in two separable passes, horizontal first, and clips each pass to
            # the pixel range; doing the same keeps bicubic overshoot from diverging.
            height, width = shape
            if width != x.shape[-1]:
                x = self._interpolate(x, (int(x.shape[-2]), width))
            if height != x.shape[-2]:
                x = self._interpolate(x, (height, width))
        if self.crop is not None:
            ch, cw = self.crop
            h, w = int(x.shape[-2]), int(x.shape[-1])
            if ch > h or cw > w:
                raise ValueError(
                    f"cannot differentiate through a crop of {ch}×{cw} larger than the "
                    f"resized image {h}×{w}"
                )
            top, left = (h - ch) // 2, (w - cw) // 2  # transformers' center_crop offsets
            x = x[..., top : top + ch, left : left + cw]
        x = x * self.scale
        if self.mean is not None and self.std is not None:
            mean = torch.tensor(self.mean, dtype=x.dtype, device=x.device)[None, :, None, None]
            std = torch.tensor(self.std, dtype=x.dtype, device=x.device)[None, :, None, None]
            x = (x - mean) / std
        return x


# --------------------------------------------------------------------------- attacker


def _load_proxy(proxy: str, device: str | None) -> HFModel:
    from lmmprobe.models.hf import HFModel, parse_options

    _, target, options = _split_spec(proxy)
    if not target:
        raise ValueError("PGD proxy is empty: give an hf checkpoint path, hub id or tiny alias")
    if device is not None:
        options = {**options, "device": device}
    return HFModel(parse_options(target, options))


class PGDAttacker:
    """Untargeted L∞ PGD against a proxy vision-language model (see the module docstring).

    Attributes:
        proxy: The proxy spec as given.
        config: The PGD settings.
        formulate_config: How samples are turned into prompts (the runner's default unless
            given).

    """

    def __init__(
        self,
        proxy: str,
        config: PGDConfig = PGDConfig(),  # frozen, so one shared default is safe
        *,
        device: str | None = None,
        formulate_config: FormulateConfig | None = None,
    ) -> None:
        """Load the proxy through the hf backend and check it can be differentiated through.

        Args:
            proxy: An hf spec or what ``hf:`` takes: ``hf:PATH[,option=value...]``, a
                checkpoint folder, a hub id, or a tiny alias such as ``tiny-llava``.
            config: PGD settings.
            device: ``cpu``, ``cuda`` or ``cuda:N``; overrides the spec's ``device``.
            formulate_config: Prompt construction; default `FormulateConfig()`, the runner's.

        Raises:
            ValueError: Bad spec, or a proxy whose image processor cannot be differentiated
                through, or a blind formulation (no image in the prompt).

        """
        self.proxy = proxy
        self.config = config
        self.formulate_config = formulate_config or FormulateConfig()
        if self.formulate_config.blind:
            raise ValueError("PGD needs the image in the prompt; formulate_config.blind is set")
        self._model = _load_proxy(proxy, device)
        image_processor = getattr(self._model.processor, "image_processor", None)
        if image_processor is None:
            raise ValueError(f"proxy {proxy!r} has no image processor to differentiate through")
        self._pre = _Preprocess(image_processor)

    def __repr__(self) -> str:
        c = self.config
        return f"PGDAttacker({self.proxy!r}, epsilon={c.epsilon:.5g}, steps={c.steps})"

    @property
    def identity(self) -> dict[str, Any]:
        """Manifest record: proxy spec and identity (name, revision, fingerprint), settings."""
        ident = self._model.identity
        return {
            "attack": "pgd_linf",
            "proxy": self.proxy,
            "backend": ident.backend,
            "name": ident.name,
            "revision": ident.revision,
            "fingerprint": ident.fingerprint,
            "dtype": ident.options.get("dtype"),
            "epsilon": self.config.epsilon,
            "step_size": self.config.step_size,
            "steps": self.config.steps,
            "method": self.formulate_config.method,
            "loss": "nll_of_gold_continuation",
        }

    def sample_metadata(self, result: AttackResult) -> dict[str, Any]:
        """What to store under a sample's ``metadata["adversarial"]``: identity and outcome."""
        return {
            **self.identity,
            "seed": result.seed,
            "target": result.target,
            "loss_before": result.loss_before,
            "loss_after": result.loss_after,
            "linf": result.linf,
        }

    # -- prompt and loss ----------------------------------------------------------------

    def _request(self, sample: Sample, image: Image.Image) -> tuple[Request, str]:
        if not sample.is_choice or not isinstance(sample.answer, int):
            raise ValueError(
                f"sample {sample.id}: PGD attacks choice questions (single_choice or "
                f"true_false with a gold index), not {sample.formulation}"
            )
        if len(sample.images) > 1:
            raise ValueError(
                f"sample {sample.id} has {len(sample.images)} images; PGD attacks one image"
            )
        asked = sample.model_copy(update={"images": [ImageRef.from_pil(image)]})
        request = formulate(asked, config=self.formulate_config)
        assert request.order is not None and request.options is not None
        position = request.order.index(sample.answer)
        if request.method == "likelihood":
            target = request.options[position]
        else:
            assert request.marks is not None
            mark = request.marks[position]
            target = mark if request.method == "mark_logprob" else f"({mark})"
        return request, target

    def target(self, sample: Sample) -> str:
        """The continuation whose likelihood the attack lowers, e.g. ``(A)`` or ``red``."""
        return self._request(sample, Image.new("RGB", (1, 1)))[1]

    def loss(self, sample: Sample, image: Image.Image) -> float:
        """The proxy's negative log-likelihood of the gold continuation, on a real picture.

        The picture goes through the proxy's own processor, as in an evaluation.
        """
        import torch

        rgb = image.convert("RGB")
        request, target = self._request(sample, rgb)
        inputs, start, ids = self._model.continuation_inputs(
            self._model.render(request), [[rgb]], target
        )
        with torch.inference_mode():
            return float(self._nll(dict(inputs), start, ids))

    def _nll(self, inputs: dict[str, Any], start: int, ids: list[int]) -> torch.Tensor:
        import torch

        logits = self._model.model(**inputs).logits[0]
        n = len(ids)
        logp = torch.log_softmax(logits[start - 1 : start + n - 1].float(), dim=-1)
        target = torch.tensor(ids, device=logp.device)
        return -logp.gather(1, target[:, None]).sum()

    # -- attack -------------------------------------------------------------------------

    def attack(self, sample: Sample, image: Image.Image, *, seed: int = 0) -> AttackResult:
        """Perturb `image` within the L∞ ball to raise the proxy's loss on the gold answer.

        Args:
            sample: A choice sample; ``answer`` is the gold option index. Its own images, if
                any, are replaced by `image` (one image at most).
            image: The picture to attack (converted to RGB).
            seed: Seed of the random start; same seed, same sample and image → same result.

        Returns:
            The attacked picture with its losses and L∞ distance.

        Raises:
            ValueError: The sample is not a choice question, or has several images.

        """
        import torch

        rgb = image.convert("RGB")
        request, target = self._request(sample, rgb)
        prompt = self._model.render(request)
        inputs, start, ids = self._model.continuation_inputs(prompt, [[rgb]], target)
        inputs = dict(inputs)
        clean_pixels = inputs["pixel_values"]
        device, dtype = clean_pixels.device, self._model.dtype

        x0 = torch.from_numpy(np.asarray(rgb, dtype=np.float32) / _LEVELS)
        x0 = x0.permute(2, 0, 1)[None].to(device)
        with torch.inference_mode():
            loss_before = float(self._nll(inputs, start, ids))
            mine = self._pre(x0)
        if tuple(mine.shape) != tuple(clean_pixels.shape):
            raise ValueError(
                f"differentiable preprocessing gives {tuple(mine.shape)} but the proxy's "
                f"processor gives {tuple(clean_pixels.shape)}; this proxy is not supported"
            )
        gap = float((mine - clean_pixels.float()).abs().max())

        def surrogate(delta: torch.Tensor) -> torch.Tensor:
            pixels = self._pre((x0 + delta).clamp(0.0, 1.0)).to(dtype)
            return self._nll({**inputs, "pixel_values": pixels}, start, ids)

        best_delta, best_step = self._pgd(x0, surrogate, seed)
        attacked, linf = self._to_uint8(rgb, best_delta)
        loss_after = self.loss(sample, attacked)
        return AttackResult(
            image=attacked,
            loss_before=loss_before,
            loss_after=loss_after,
            linf=linf,
            target=target,
            seed=seed,
            best_step=best_step,
            preprocess_gap=gap,
        )

    def _pgd(
        self, x0: torch.Tensor, loss_fn: Callable[[torch.Tensor], torch.Tensor], seed: int
    ) -> tuple[torch.Tensor, int]:
        import torch

        eps, step = self.config.epsilon, self.config.step_size
        # The start is drawn on the CPU so that a seed gives the same start on every device.
        gen = torch.Generator(device="cpu").manual_seed(seed)
        delta = (torch.rand(x0.shape, generator=gen) * 2.0 - 1.0) * eps
        delta = ((x0 + delta.to(x0.device)).clamp(0.0, 1.0) - x0).detach()
        best_loss, best_delta, best_step = -math.inf, delta, 0
        with torch.enable_grad():
            for k in range(self.config.steps + 1):
                delta.requires_grad_(True)
                loss = loss_fn(delta)
                value = float(loss.detach())
                if value > best_loss:
                    best_loss, best_delta, best_step = value, delta.detach().clone(), k
                if k == self.config.steps:
                    break  # the last iterate is scored, not stepped from
                (grad,) = torch.autograd.grad(loss, delta)
                with torch.no_grad():
                    delta = delta + step * grad.sign()
                    delta = delta.clamp(-eps, eps)  # projection onto the L∞ ball
                    delta = (x0 + delta).clamp(0.0, 1.0) - x0  # stay a valid picture
                delta = delta.detach()
        return best_delta, best_step

    def _to_uint8(self, rgb: Image.Image, delta: torch.Tensor) -> tuple[Image.Image, float]:
        base = np.asarray(rgb, dtype=np.int16)
        levels = _max_levels(self.config.epsilon)
        change = np.rint(delta[0].permute(1, 2, 0).detach().cpu().double().numpy() * _LEVELS)
        change = np.clip(change, -levels, levels).astype(np.int16)
        out = np.clip(base + change, 0, 255).astype(np.uint8)
        linf = float(np.abs(out.astype(np.int16) - base).max()) / _LEVELS
        return Image.fromarray(out), linf
