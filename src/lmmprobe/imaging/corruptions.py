"""Dysca's eleven image corruptions as deterministic, seeded image tools.

Origin: Dysca (Zhang et al., "Dysca: A Dynamic and Scalable Benchmark for Evaluating Perception
Ability of LVLMs"), corruption scenario: one corruption per image, drawn from eleven kinds. Dysca
reports one setting per kind; that setting is severity 3 here, and severities 1, 2, 4, 5 scale
around it (our choice, not Dysca's). Pixel arithmetic follows scikit-image's ``random_noise``
conventions on images scaled to [0, 1], which is what Dysca's variances refer to.

Severity table (severity 3 is Dysca's setting):

================  =============================  ===========================================
kind              parameter                      severity 1 / 2 / 3 / 4 / 5
================  =============================  ===========================================
gaussian_noise    variance (std = sqrt(var))     0.01 / 0.05 / **0.1** / 0.2 / 0.4
poisson_noise     photon scale (lower = noisier) 1024 / 512 / **256** / 64 / 16
speckle_noise     variance of the multiplier     0.01 / 0.05 / **0.1** / 0.2 / 0.4
salt_and_pepper   fraction of pixels replaced    0.02 / 0.05 / **0.1** / 0.2 / 0.3
motion_blur       degree (kernel px), angle 45°  6 / 12 / **20** / 30 / 40
gaussian_blur     square kernel side (px)        7 / 13 / **19** / 25 / 31
jpeg              JPEG quality                   90 / 70 / **50** / 30 / 10
spatter           cutout threshold, intensity    .76,.4 / .72,.5 / **.68,.6** / .64,.7 / .60,.8
coarse_dropout    number of black holes          2 / 4 / **6** / 8 / 10
rotation          angle range (deg, either sign) 2–10 / 5–25 / **10–45** / 20–60 / 30–90
shear             shear factor range (tan)       .02–.05 / .05–.10 / **.10–.20** / .20–.30 / .30–.40
================  =============================  ===========================================

Notes on the mapping:

- Poisson: scikit-image scales by ``2 ** ceil(log2(#unique values))``, which is 256 for any
  natural 8-bit photo, so 256 is Dysca's setting.
- Motion blur: albumentations needs an odd kernel, so an even degree d becomes d + 1 (20 → 21).
- Gaussian blur: sigma follows OpenCV's rule for ``sigma=0``, ``0.3 * ((k - 1) / 2 - 1) + 0.8``
  (3.2 for 19 × 19), as ``cv2.GaussianBlur(img, (19, 19), 0)`` would.
- Spatter and coarse dropout have no reported setting; severity 3 of spatter is albumentations'
  default, coarse-dropout holes are 10–20 % of each side.
- Rotation and shear draw the sign and the magnitude from the seed; the uncovered border is black.

Requires the ``synth`` extra (albumentations ≥ 2) for every kind except ``poisson_noise`` and
``speckle_noise``, which use NumPy only.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

__all__ = ["CORRUPTIONS", "corrupt", "severity_params"]

CORRUPTIONS: tuple[str, ...] = (
    "gaussian_noise",
    "poisson_noise",
    "speckle_noise",
    "salt_and_pepper",
    "motion_blur",
    "gaussian_blur",
    "jpeg",
    "spatter",
    "coarse_dropout",
    "rotation",
    "shear",
)

# Index = severity - 1. Kept as data so the table above, the code and the tests agree.
_SEVERITY: dict[str, tuple[Any, ...]] = {
    "gaussian_noise": (0.01, 0.05, 0.1, 0.2, 0.4),
    "poisson_noise": (1024.0, 512.0, 256.0, 64.0, 16.0),
    "speckle_noise": (0.01, 0.05, 0.1, 0.2, 0.4),
    "salt_and_pepper": (0.02, 0.05, 0.1, 0.2, 0.3),
    "motion_blur": (6, 12, 20, 30, 40),
    "gaussian_blur": (7, 13, 19, 25, 31),
    "jpeg": (90, 70, 50, 30, 10),
    "spatter": ((0.76, 0.4), (0.72, 0.5), (0.68, 0.6), (0.64, 0.7), (0.60, 0.8)),
    "coarse_dropout": (2, 4, 6, 8, 10),
    "rotation": ((2.0, 10.0), (5.0, 25.0), (10.0, 45.0), (20.0, 60.0), (30.0, 90.0)),
    "shear": ((0.02, 0.05), (0.05, 0.10), (0.10, 0.20), (0.20, 0.30), (0.30, 0.40)),
}

_INSTALL_HINT = "pip install 'lmmprobe[synth]'"

Array = NDArray[np.uint8]


def severity_params(kind: str, severity: int = 3) -> Any:
    """The parameter a corruption uses at a severity (see the module's table).

    Args:
        kind: One of `CORRUPTIONS`.
        severity: 1 (mildest) to 5 (strongest); 3 is Dysca's setting.

    Returns:
        The table entry: a number, or a pair for range-valued kinds.

    Raises:
        ValueError: For an unknown kind or a severity outside 1..5.

    """
    _check(kind, severity)
    return _SEVERITY[kind][severity - 1]


def corrupt(image: Image.Image, kind: str, *, severity: int = 3, seed: int = 0) -> Image.Image:
    """Apply one of Dysca's corruptions, deterministically for a seed.

    The same ``(image, kind, severity, seed)`` always gives byte-identical pixels; randomness is
    local to the call (a NumPy generator or albumentations' ``Compose(seed=...)``), never global.

    Args:
        image: The clean image; converted to RGB if it is in another mode.
        kind: One of `CORRUPTIONS`.
        severity: 1 (mildest) to 5 (strongest); 3 is Dysca's setting.
        seed: Non-negative seed for the corruption's randomness.

    Returns:
        A new RGB image of the same size.

    Raises:
        ValueError: For an unknown kind, a severity outside 1..5 or a negative seed.
        ImportError: When the kind needs albumentations and it is not installed.

    """
    _check(kind, severity)
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    pixels: Array = np.asarray(image.convert("RGB"), dtype=np.uint8)
    param = _SEVERITY[kind][severity - 1]
    out = _KINDS[kind](pixels, param, seed)
    return Image.fromarray(out, mode="RGB")


def _check(kind: str, severity: int) -> None:
    if kind not in _SEVERITY:
        raise ValueError(f"unknown corruption {kind!r}; choose one of {', '.join(CORRUPTIONS)}")
    # bool is an int subclass; True as a severity is a caller bug, not severity 1.
    if isinstance(severity, bool) or not isinstance(severity, int) or not 1 <= severity <= 5:
        raise ValueError(f"severity must be an int in 1..5, got {severity!r}")


def _to_uint8(x: NDArray[np.float64]) -> Array:
    # Round rather than truncate so that a no-op float round trip keeps the original pixels.
    return np.clip(np.rint(x * 255.0), 0, 255).astype(np.uint8)


def _poisson(pixels: Array, peak: float, seed: int) -> Array:
    x = pixels.astype(np.float64) / 255.0
    rng = np.random.default_rng(seed)
    return _to_uint8(rng.poisson(x * peak) / peak)


def _speckle(pixels: Array, var: float, seed: int) -> Array:
    x = pixels.astype(np.float64) / 255.0
    rng = np.random.default_rng(seed)
    return _to_uint8(x + x * rng.normal(0.0, math.sqrt(var), size=x.shape))


def _albumentations() -> Any:
    """Import albumentations lazily, with the install hint when it is missing."""
    # albumentations otherwise checks PyPI for a newer version on import, which stalls offline.
    os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")
    try:
        import albumentations  # type: ignore[import-untyped]
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"this corruption needs albumentations; install it with: {_INSTALL_HINT}"
        ) from exc
    return albumentations


def _run(transform: Any, pixels: Array, seed: int) -> Array:
    A = _albumentations()
    out = A.Compose([transform], seed=seed)(image=pixels)["image"]
    return np.ascontiguousarray(out, dtype=np.uint8)


def _gaussian_noise(pixels: Array, var: float, seed: int) -> Array:
    A = _albumentations()
    std = math.sqrt(var)  # albumentations' std is a fraction of 255, like skimage's on [0, 1]
    return _run(A.GaussNoise(std_range=(std, std), per_channel=True, p=1.0), pixels, seed)


def _salt_and_pepper(pixels: Array, amount: float, seed: int) -> Array:
    A = _albumentations()
    return _run(A.SaltAndPepper(amount=(amount, amount), p=1.0), pixels, seed)


def _motion_blur(pixels: Array, degree: int, seed: int) -> Array:
    A = _albumentations()
    k = degree if degree % 2 else degree + 1
    blur = A.MotionBlur(
        blur_limit=(k, k),
        angle_range=(45.0, 45.0),
        direction_range=(0.0, 0.0),  # symmetric streak, as Dysca's diagonal-line kernel
        allow_shifted=False,
        p=1.0,
    )
    return _run(blur, pixels, seed)


def _gaussian_blur(pixels: Array, ksize: int, seed: int) -> Array:
    A = _albumentations()
    sigma = 0.3 * ((ksize - 1) * 0.5 - 1) + 0.8
    blur = A.GaussianBlur(blur_limit=(ksize, ksize), sigma_limit=(sigma, sigma), p=1.0)
    return _run(blur, pixels, seed)


def _jpeg(pixels: Array, quality: int, seed: int) -> Array:
    A = _albumentations()
    return _run(A.ImageCompression(quality_range=(quality, quality), p=1.0), pixels, seed)


def _spatter(pixels: Array, param: tuple[float, float], seed: int) -> Array:
    A = _albumentations()
    threshold, intensity = param
    spatter = A.Spatter(cutout_threshold=threshold, intensity=intensity, mode="rain", p=1.0)
    return _run(spatter, pixels, seed)


def _coarse_dropout(pixels: Array, holes: int, seed: int) -> Array:
    A = _albumentations()
    dropout = A.CoarseDropout(
        num_holes_range=(holes, holes),
        hole_height_range=(0.1, 0.2),
        hole_width_range=(0.1, 0.2),
        fill=0,
        p=1.0,
    )
    return _run(dropout, pixels, seed)


def _signed_range(lo: float, hi: float, seed: int) -> tuple[float, float]:
    # Affine samples from one interval; the sign comes from our own generator so that both
    # directions occur while the magnitude stays within Dysca's range.
    sign = 1.0 if np.random.default_rng(seed).random() < 0.5 else -1.0
    a, b = sign * lo, sign * hi
    return (min(a, b), max(a, b))


def _rotation(pixels: Array, param: tuple[float, float], seed: int) -> Array:
    A = _albumentations()
    rotate = A.Affine(rotate=_signed_range(*param, seed), fill=0, p=1.0)
    return _run(rotate, pixels, seed)


def _shear(pixels: Array, param: tuple[float, float], seed: int) -> Array:
    A = _albumentations()
    # Dysca's shear is a factor (tangent); albumentations' Affine takes degrees.
    lo, hi = (math.degrees(math.atan(s)) for s in param)
    shear = A.Affine(shear={"x": _signed_range(lo, hi, seed), "y": (0.0, 0.0)}, fill=0, p=1.0)
    return _run(shear, pixels, seed)


_KINDS: dict[str, Callable[[Array, Any, int], Array]] = {
    "gaussian_noise": _gaussian_noise,
    "poisson_noise": _poisson,
    "speckle_noise": _speckle,
    "salt_and_pepper": _salt_and_pepper,
    "motion_blur": _motion_blur,
    "gaussian_blur": _gaussian_blur,
    "jpeg": _jpeg,
    "spatter": _spatter,
    "coarse_dropout": _coarse_dropout,
    "rotation": _rotation,
    "shear": _shear,
}
