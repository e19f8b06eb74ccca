"""RefCLIPScore, CLIP-I and MSE: identities, hand-computed pixels, a tiny random CLIP."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from PIL import Image

from lmmprobe.metrics.image import (
    clip_image_similarity,
    clip_s_from_similarities,
    mse,
    ref_clip_score,
)
from lmmprobe.schema import ImageRef


def _noise(seed: int, size: tuple[int, int] = (40, 40)) -> Image.Image:
    return Image.effect_noise(size, 20 + 15 * seed).convert("RGB").rotate(seed * 37)


def test_mse_by_hand(tmp_path: Path) -> None:
    black = Image.new("RGB", (4, 4), (0, 0, 0))
    white = Image.new("RGB", (4, 4), (255, 255, 255))
    gray = Image.new("RGB", (4, 4), (51, 51, 51))  # 51 / 255 = 0.2
    path = tmp_path / "white.png"
    white.save(path)
    got = mse([black, black, black, path], [black, white, gray, ImageRef.from_pil(white)])
    assert got == pytest.approx([0.0, 1.0, 0.04, 0.0])
    # Red vs black differs in one of three channels by 1.
    assert mse([Image.new("RGB", (2, 2), (255, 0, 0))], [black.resize((2, 2))]) == pytest.approx(
        [1 / 3]
    )


def test_clip_s_and_ref_clip_s_by_hand() -> None:
    # w * cos = 2.5 * 0.4 = 1; harmonic mean of 1 and 0.6 = 2 * 0.6 / 1.6.
    assert clip_s_from_similarities(0.4, 0.6) == pytest.approx((1.0, 0.75))
    assert clip_s_from_similarities(0.4, 0.6, w=1.0) == pytest.approx((0.4, 0.48))
    # Negative similarities are clipped at 0, and so is the harmonic mean.
    assert clip_s_from_similarities(-0.2, 0.9) == (0.0, 0.0)
    assert clip_s_from_similarities(0.2, -0.9) == pytest.approx((0.5, 0.0))
    assert clip_s_from_similarities(-0.2, -0.9) == (0.0, 0.0)


def test_mse_sizes_and_errors() -> None:
    a, b = Image.new("RGB", (4, 4)), Image.new("RGB", (8, 8))
    with pytest.raises(ValueError, match=r"pair 0: images differ in size \(4x4 vs 8x8\)"):
        mse([a], [b])
    assert mse([a], [b], size=(6, 6)) == [0.0]
    with pytest.raises(ValueError, match="mse needs pairs"):
        mse([a], [])
    with pytest.raises(FileNotFoundError, match=r"images_a\[0\]"):
        mse(["/no/such.png"], [a])


torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from lmmprobe.models.tiny_clip import tiny_clip_path  # noqa: E402

pytestmark = pytest.mark.usefixtures("hf_offline")


@pytest.fixture(scope="module")
def clip(tiny_cache: Path) -> Path:
    return tiny_clip_path(tiny_cache)


IMAGES = [Image.new("RGB", (40, 40), (200, 30, 30)), _noise(1), _noise(2)]


def test_clip_i_of_an_image_with_itself_is_the_maximum(clip: Path) -> None:
    self_sim = clip_image_similarity(IMAGES, IMAGES, clip, device="cpu")
    assert self_sim == pytest.approx([1.0] * 3, abs=1e-6)
    for i, a in enumerate(IMAGES):
        others = clip_image_similarity([a] * 3, IMAGES, clip, device="cpu")
        assert max(others) == pytest.approx(others[i], abs=1e-9)
        assert all(-1.0 - 1e-9 <= s <= 1.0 + 1e-9 for s in others)
    # Symmetric and deterministic.
    ab = clip_image_similarity(IMAGES[:2], IMAGES[1:], clip, device="cpu")
    ba = clip_image_similarity(IMAGES[1:], IMAGES[:2], clip, device="cpu")
    assert ab == pytest.approx(ba, abs=1e-9)
    assert ab == clip_image_similarity(IMAGES[:2], IMAGES[1:], clip, device="cpu")
    assert clip_image_similarity([], [], clip) == []


def test_ref_clip_score_identities(clip: Path) -> None:
    captions = ["a red circle", "hexagon", "A blue square and a green triangle"]
    refs = [["a red circle", "star"], ["star"], "yes"]
    got = ref_clip_score(IMAGES, captions, refs, clip, device="cpu")
    assert got == ref_clip_score(IMAGES, captions, refs, clip, device="cpu")
    assert all(math.isfinite(v) and v >= 0 for v in (*got.clip_s, *got.ref_clip_s))
    # CLIP-S is w * max(cos, 0), so it is linear in w.
    doubled = ref_clip_score(IMAGES, captions, refs, clip, w=5.0, device="cpu")
    assert doubled.clip_s == pytest.approx([2 * c for c in got.clip_s], abs=1e-9)
    # Caption 0 equals one of its references, so the text-text term is 1 and RefCLIP-S is
    # the harmonic mean of CLIP-S and 1.
    c = got.clip_s[0]
    assert got.ref_clip_s[0] == pytest.approx(2 * c / (c + 1) if c > 0 else 0.0, abs=1e-6)
    # A reference identical to the caption is the best a reference can be.
    worse = ref_clip_score(IMAGES[:1], captions[:1], [["star"]], clip, device="cpu")
    assert worse.ref_clip_s[0] <= got.ref_clip_s[0] + 1e-9
    assert got.mean_ref_clip_s == pytest.approx(sum(got.ref_clip_s) / 3)


def test_ref_clip_score_with_a_positive_image_text_similarity(clip: Path) -> None:
    # The random CLIP finds most captions unlike most images (negative cosines, CLIP-S 0);
    # look for a pair it finds alike, so the harmonic mean is checked away from 0 too.
    options = ["hexagon", "star", "yes", "the image shows", "a red circle", "1 2 3"]
    for image in IMAGES:
        scores = ref_clip_score([image] * 6, options, options, clip, prefix="", device="cpu")
        for c, ref in zip(scores.clip_s, scores.ref_clip_s, strict=True):
            assert ref == pytest.approx(2 * c / (c + 1) if c > 0 else 0.0, abs=1e-6)
            if c > 0:
                return
    pytest.skip("the tiny CLIP gives no positive image-text similarity for these pairs")


def test_ref_clip_score_errors(clip: Path) -> None:
    with pytest.raises(ValueError, match="one image and one reference"):
        ref_clip_score(IMAGES, ["a"], ["a"], clip)
    with pytest.raises(ValueError, match=r"references\[0\] is an empty list"):
        ref_clip_score(IMAGES[:1], ["a"], [[]], clip)
    with pytest.raises(ValueError, match="w must be positive"):
        ref_clip_score(IMAGES[:1], ["a"], ["a"], clip, w=0)
    with pytest.raises(FileNotFoundError, match="not a local CLIP folder"):
        ref_clip_score(IMAGES[:1], ["a"], ["a"], clip.parent / "missing")
