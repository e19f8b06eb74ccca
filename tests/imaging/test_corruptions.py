import io
import os

import numpy as np
import pytest
from PIL import Image

from lmmprobe.imaging.corruptions import CORRUPTIONS, corrupt, severity_params

NUMPY_ONLY = {"poisson_noise", "speckle_noise"}
RANDOM_KINDS = {
    "gaussian_noise",
    "poisson_noise",
    "speckle_noise",
    "salt_and_pepper",
    "spatter",
    "coarse_dropout",
    "rotation",
    "shear",
}
ORDERED_KINDS = (
    "gaussian_noise",
    "poisson_noise",
    "speckle_noise",
    "salt_and_pepper",
    "motion_blur",
    "gaussian_blur",
    "jpeg",
)


def _needs(kind: str) -> None:
    if kind not in NUMPY_ONLY:
        os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")
        pytest.importorskip("albumentations")


@pytest.fixture(scope="module")
def clean() -> Image.Image:
    # Structured, mid-range content: gradients plus hard edges, so blurs, noise (without
    # clipping everything) and geometric moves all show up in the pixels.
    y, x = np.mgrid[0:128, 0:128]
    r = 40 + x * 1.3
    g = 40 + y * 1.3
    b = np.where(((x // 16) + (y // 16)) % 2 == 0, 70, 190)
    arr = np.stack([r, g, b], axis=-1).astype(np.uint8)
    return Image.fromarray(arr, mode="RGB")


def mad(a: Image.Image, b: Image.Image) -> float:
    return float(np.abs(np.asarray(a, dtype=np.int16) - np.asarray(b, dtype=np.int16)).mean())


def test_kinds_listed_in_dysca_order() -> None:
    assert len(CORRUPTIONS) == 11
    assert len(set(CORRUPTIONS)) == 11


@pytest.mark.parametrize("kind", CORRUPTIONS)
def test_changes_pixels_keeps_size_and_mode(clean: Image.Image, kind: str) -> None:
    _needs(kind)
    out = corrupt(clean, kind)
    assert out.size == clean.size
    assert out.mode == "RGB"
    assert mad(out, clean) > 0


@pytest.mark.parametrize("kind", CORRUPTIONS)
def test_deterministic_for_a_seed(clean: Image.Image, kind: str) -> None:
    _needs(kind)
    a = corrupt(clean, kind, severity=4, seed=7)
    b = corrupt(clean, kind, severity=4, seed=7)
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("kind", sorted(RANDOM_KINDS))
def test_random_kinds_differ_across_seeds(clean: Image.Image, kind: str) -> None:
    _needs(kind)
    assert corrupt(clean, kind, seed=1).tobytes() != corrupt(clean, kind, seed=2).tobytes()


@pytest.mark.parametrize("kind", ORDERED_KINDS)
def test_severity_ordering(clean: Image.Image, kind: str) -> None:
    _needs(kind)
    diffs = [mad(corrupt(clean, kind, severity=s, seed=3), clean) for s in range(1, 6)]
    assert diffs == sorted(diffs)
    assert diffs[0] < diffs[-1]


def test_grayscale_input_becomes_rgb(clean: Image.Image) -> None:
    out = corrupt(clean.convert("L"), "speckle_noise")
    assert out.mode == "RGB"
    assert out.size == clean.size


def test_severity_3_is_dysca_setting() -> None:
    assert severity_params("gaussian_noise") == 0.1
    assert severity_params("speckle_noise") == 0.1
    assert severity_params("salt_and_pepper") == 0.1
    assert severity_params("motion_blur") == 20
    assert severity_params("gaussian_blur") == 19
    assert severity_params("jpeg") == 50
    assert severity_params("rotation") == (10.0, 45.0)
    assert severity_params("shear") == (0.10, 0.20)


@pytest.mark.parametrize("kind", ["rotation", "shear"])
def test_geometric_kinds_move_content(clean: Image.Image, kind: str) -> None:
    _needs(kind)
    out = corrupt(clean, kind)
    # A checkerboard moved by >= 5 degrees of rotation or shear misaligns most tiles.
    assert mad(out, clean) > 10
    # Black fill enters from the border: some corner pixel is now black.
    arr = np.asarray(out)
    corners = [arr[0, 0], arr[0, -1], arr[-1, 0], arr[-1, -1]]
    assert any(int(c.sum()) == 0 for c in corners)


def test_jpeg_severity_3_matches_quality_50(clean: Image.Image) -> None:
    _needs("jpeg")
    noisy = corrupt(clean, "gaussian_noise", severity=2, seed=0)
    out = corrupt(noisy, "jpeg", severity=3)

    def encode(img: Image.Image, **kw: object) -> bytes:
        buf = io.BytesIO()
        img.save(buf, **kw)  # type: ignore[arg-type]
        return buf.getvalue()

    # JPEG removes high-frequency noise: the result compresses far better losslessly.
    assert len(encode(out, format="PNG")) < len(encode(noisy, format="PNG"))
    # An independent quality-50 round trip (Pillow, standard tables) lands close to it,
    # much closer than quality 90 or 10 would.
    pil_q50 = Image.open(io.BytesIO(encode(noisy, format="JPEG", quality=50))).convert("RGB")
    pil_q90 = Image.open(io.BytesIO(encode(noisy, format="JPEG", quality=90))).convert("RGB")
    pil_q10 = Image.open(io.BytesIO(encode(noisy, format="JPEG", quality=10))).convert("RGB")
    assert mad(out, pil_q50) < mad(out, pil_q90)
    assert mad(out, pil_q50) < mad(out, pil_q10)


@pytest.mark.parametrize("kind", ["blur", "Gaussian_Noise", ""])
def test_unknown_kind(clean: Image.Image, kind: str) -> None:
    with pytest.raises(ValueError, match="unknown corruption"):
        corrupt(clean, kind)


@pytest.mark.parametrize("severity", [0, 6, -1, True, 2.5])
def test_bad_severity(clean: Image.Image, severity: object) -> None:
    with pytest.raises(ValueError, match="severity"):
        corrupt(clean, "speckle_noise", severity=severity)  # type: ignore[arg-type]


def test_negative_seed(clean: Image.Image) -> None:
    with pytest.raises(ValueError, match="seed"):
        corrupt(clean, "poisson_noise", seed=-1)


def test_missing_albumentations_names_the_extra(
    clean: Image.Image, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "albumentations", None)
    with pytest.raises(ImportError, match=r"pip install 'lmmprobe\[synth\]'"):
        corrupt(clean, "jpeg")
    # The NumPy-only kinds keep working without it.
    assert corrupt(clean, "poisson_noise").size == clean.size
