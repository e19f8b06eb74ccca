"""Balanced experiment datasets: ground truth by construction, seeding, content cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lmmprobe.apex.experiment_data import UNKNOWN, ImageCache, build_dataset
from lmmprobe.apex.experiments import Answer, Experiment
from lmmprobe.tools.compose import ToolCall
from lmmprobe.tools.registry import ToolCallError
from lmmprobe.tools.select import SelectContext

GEN = ToolCall(tool="TextToImageGeneration", args={"class_name": "random"})


def _rotation() -> Experiment:
    return Experiment(
        question="Is this image rotated?",
        answers=[
            Answer(
                text="yes",
                select=GEN,
                transforms=[ToolCall(tool="RotateImage", args={"angle": 90})],
            ),
            Answer(text="no", select=GEN, transforms=[ToolCall(tool="Identity")]),
        ],
        difficulty="easy",
    )


def test_balanced_samples_with_ground_truth_from_the_tools(cache_dir):
    ds = build_dataset(
        _rotation(), index=1, images_per_answer=3, seed=7, context=SelectContext(size=32),
        cache=ImageCache(cache_dir),
    )  # fmt: skip
    assert [s.answer for s in ds.samples] == [0, 0, 0, 1, 1, 1]
    assert all(s.choices == ["yes", "no"] for s in ds.samples)
    assert {s.metadata["apex_answer"] for s in ds.samples} == {"yes", "no"}
    assert ds.info.made == 6 and ds.info.cached == 0
    assert ds.info.answers == ["yes", "no"] and len(ds.info.image_hashes) == 6
    # Paired design: image j of "yes" is image j of "no" rotated by 90 degrees.
    for j in range(3):
        yes = np.asarray(ds.samples[j].images[0].load())
        no = np.asarray(ds.samples[3 + j].images[0].load())
        assert not np.array_equal(yes, no)
        assert ds.samples[j].metadata["class_name"] == ds.samples[3 + j].metadata["class_name"]
    # Provenance records every call with its seed.
    assert ds.provenance[0]["transforms"][0]["tool"] == "RotateImage"


def test_same_seed_same_images_and_the_cache_serves_them(cache_dir):
    ctx = SelectContext(size=32)
    first = build_dataset(_rotation(), index=1, images_per_answer=2, seed=1, context=ctx,
                          cache=ImageCache(cache_dir))  # fmt: skip
    again = build_dataset(_rotation(), index=1, images_per_answer=2, seed=1, context=ctx,
                          cache=ImageCache(cache_dir))  # fmt: skip
    fresh = build_dataset(_rotation(), index=1, images_per_answer=2, seed=1, context=ctx)
    other = build_dataset(_rotation(), index=1, images_per_answer=2, seed=2, context=ctx,
                          cache=ImageCache(cache_dir))  # fmt: skip
    assert again.info.cached == 4 and again.info.made == 0
    assert again.info.fingerprint == first.info.fingerprint
    for a, b in zip(first.samples, fresh.samples, strict=True):
        assert np.array_equal(np.asarray(a.images[0].load()), np.asarray(b.images[0].load()))
    assert other.info.image_hashes != first.info.image_hashes


def test_unknown_option_is_offered_last():
    ds = build_dataset(_rotation(), index=2, images_per_answer=1, seed=0,
                       context=SelectContext(size=32), unknown_option=True)  # fmt: skip
    assert ds.samples[0].choices == ["yes", "no", UNKNOWN]
    assert ds.info.unknown_option


def test_a_call_the_tools_cannot_serve_is_a_tool_call_error():
    exp = _rotation().model_copy(deep=True)
    exp.answers[1].select = ToolCall(
        tool="TextToImageGeneration", args={"class_name": "random:nonexistent"}
    )
    with pytest.raises(ToolCallError, match=r"answers\[1\] \('no'\).*no class group"):
        build_dataset(exp, index=1, images_per_answer=1, seed=0, context=SelectContext(size=32))


def test_distinct_answer_texts_are_required():
    with pytest.raises(ValueError, match="appears twice"):
        Experiment(
            question="Is it?",
            answers=[Answer(text="Yes", select=GEN), Answer(text="yes ", select=GEN)],
            difficulty="easy",
        )


def test_a_damaged_cache_entry_is_recomposed(tmp_path: Path) -> None:
    """A provenance file nested 100,000 deep (or a link to /dev/zero) is no entry, not a crash.

    The cache folder lies outside the store: re-test 11 #10 read its .json with json.loads.
    """
    from PIL import Image

    cache = ImageCache(tmp_path)
    png = cache.put("ab" * 32, Image.new("RGB", (4, 4)), {"source": "x"})
    assert cache.get("ab" * 32) == (png, {"source": "x"})
    meta = png.with_suffix(".json")
    meta.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert cache.get("ab" * 32) is None
    meta.unlink()
    meta.symlink_to("/dev/zero")
    assert cache.get("ab" * 32) is None
    meta.unlink()
    meta.write_text("[1]", encoding="utf-8")  # JSON, but no provenance object
    assert cache.get("ab" * 32) is None
