"""Dysca's cleaning filters: CLIP text-image score threshold and model consensus."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from lmmprobe.schema import Score
from lmmprobe.synth.filters import (
    ClipScoreFilter,
    ConsensusFilter,
    ItemFilter,
    consensus_failures,
)

# --------------------------------------------------------------------------- CLIP score


def _images() -> list[Image.Image]:
    colors = ["red", "green", "blue", "yellow", "purple", "white"]
    out = [Image.new("RGB", (48, 40), c) for c in colors]
    gradient = Image.linear_gradient("L").resize((40, 56)).convert("RGB")
    return [*out, gradient]


TEXTS = [
    "a red circle on a white background",
    "a green square",
    "a blue triangle next to a yellow star",
    "yellow",
    "a purple diamond in the center of the image",
    "a white background",
    "a picture with a gradient " * 40,  # longer than CLIP's context: truncated
]


@pytest.fixture(scope="module")
def clip_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from lmmprobe.models.tiny_clip import tiny_clip_path

    return tiny_clip_path(tmp_path_factory.mktemp("clip-cache"))


@pytest.fixture(scope="module")
def clip_filter(clip_path: Path) -> ClipScoreFilter:
    return ClipScoreFilter(clip_path, 20.0, device="cpu", batch_size=3)


def test_scores_are_finite_bounded_and_deterministic(
    clip_filter: ClipScoreFilter, clip_path: Path
) -> None:
    scores = clip_filter.scores(_images(), TEXTS)
    assert len(scores) == len(TEXTS)
    assert all(math.isfinite(s) and 0.0 <= s <= 100.0 for s in scores)
    assert clip_filter.scores(_images(), TEXTS) == scores
    # Another instance and another batching give the same scores.
    other = ClipScoreFilter(clip_path, 20.0, device="cpu", batch_size=16)
    assert other.scores(_images(), TEXTS) == pytest.approx(scores, abs=1e-4)
    # The pairing matters: each image is scored against its own text.
    swapped = clip_filter.scores(_images(), TEXTS[::-1])
    assert swapped != scores


def test_threshold_keeps_and_drops(clip_path: Path, clip_filter: ClipScoreFilter) -> None:
    scores = clip_filter.scores(_images(), TEXTS)
    top = max(scores)
    assert top > 0.0  # random CLIP still aligns some pairs positively
    # Two instances agree to about 1e-4 (CPU kernels), not to the last bit: thresholds sit a
    # margin away from the scores they are meant to separate.
    margin = 1e-3
    assert sorted(scores)[-2] < top - margin, "the two best scores are too close to separate"
    at_top = ClipScoreFilter(clip_path, top - margin, device="cpu")
    assert at_top.keep(_images(), TEXTS) == [s >= top - margin for s in scores]
    assert any(at_top.keep(_images(), TEXTS))
    everything = ClipScoreFilter(clip_path, 0.0, device="cpu")
    assert all(everything.keep(_images(), TEXTS))
    if top < 100.0:
        above = ClipScoreFilter(clip_path, min(100.0, top + 1e-3), device="cpu")
        assert not any(above.keep(_images(), TEXTS))


def test_describe_records_model_and_threshold(
    clip_filter: ClipScoreFilter, clip_path: Path
) -> None:
    record = clip_filter.describe()
    assert record["name"] == "clip_score" == clip_filter.name
    assert record["model"] == str(clip_path)
    assert record["threshold"] == 20.0
    assert isinstance(record["fingerprint"], str) and len(record["fingerprint"]) == 32
    assert isinstance(clip_filter, ItemFilter)


def test_clip_filter_rejects_bad_input(clip_path: Path, clip_filter: ClipScoreFilter) -> None:
    with pytest.raises(ValueError, match="texts"):
        clip_filter.scores(_images(), TEXTS[:2])
    with pytest.raises(ValueError, match="threshold"):
        ClipScoreFilter(clip_path, 120.0)
    with pytest.raises(ValueError, match="batch_size"):
        ClipScoreFilter(clip_path, 10.0, batch_size=0)
    with pytest.raises(FileNotFoundError):
        ClipScoreFilter(clip_path / "missing", 10.0)


def test_dysca_code_rule_scores_as_dyscas_clean_data_does(clip_path: Path) -> None:
    import torch
    from transformers import CLIPModel, CLIPProcessor

    dysca = ClipScoreFilter(clip_path, 0.0, device="cpu", batch_size=3, rule="dysca-code")
    images, texts = _images()[:6], TEXTS[:6]
    got = dysca.scores(images, texts)
    # Dysca's image_generate/clean_data.py (Benchmark-Dysca/Dysca @ 442ef75), one pair a call.
    model = CLIPModel.from_pretrained(clip_path)
    processor = CLIPProcessor.from_pretrained(clip_path)
    with torch.no_grad():
        for image, text, score in zip(images, texts, got, strict=True):
            inputs = processor(text=text, images=image, return_tensors="pt", padding=True)
            expected = float(model(**inputs).logits_per_image[0][0])
            assert score == pytest.approx(expected, rel=1e-4, abs=1e-4)
    # Dysca drops a score <= 25: kept only strictly above the threshold.
    top = max(got)
    assert 0.0 < top < 100.0
    best = got.index(top)
    # The threshold is the pair's score as `keep` computes it, alone: a batch of three may
    # differ from it in the last bits (BLAS kernels), which decided this test by chance.
    (alone,) = dysca.scores([images[best]], [texts[best]])
    at = ClipScoreFilter(clip_path, alone, device="cpu", rule="dysca-code")
    below = ClipScoreFilter(clip_path, alone - 1e-3, device="cpu", rule="dysca-code")
    assert at.keep([images[best]], [texts[best]]) == [False]
    assert below.keep([images[best]], [texts[best]]) == [True]
    assert dysca.describe()["rule"] == "dysca-code"
    with pytest.raises(ValueError, match="unknown CLIP rule"):
        ClipScoreFilter(clip_path, 10.0, rule="paper")


# --------------------------------------------------------------------------- consensus


def _row(model: str, sid: str, correct: bool | None, *, repeat: int = 0, **extra: Any) -> Score:
    stage = "error" if extra.get("error_type") else ("mark" if correct is not None else "match")
    return Score(
        model=model,
        sample_id=sid,
        repeat=repeat,
        key=f"{model}:{sid}:{repeat}",
        stage=extra.pop("stage", stage),
        correct=correct,
        gold=0,
        gold_text="red",
        **extra,
    )


def test_consensus_drops_only_items_all_models_answered_wrong() -> None:
    scores = {
        "a": [
            _row("a", "all-wrong", False),
            _row("a", "one-right", False),
            _row("a", "errored", False),
            _row("a", "partial", False),
            _row("a", "repeats", False),
            _row("a", "repeats", False, repeat=1),
        ],
        "b": [
            _row("b", "all-wrong", False),
            _row("b", "one-right", True),
            _row("b", "errored", None, error_type="timeout"),
            # "partial": b never answered it (no row at all)
            _row("b", "repeats", False),
            _row("b", "repeats", True, repeat=1),  # one right repeat spares the item
        ],
        "c": [
            _row("c", "all-wrong", False),
            _row("c", "one-right", False),
            _row("c", "errored", False),
            _row("c", "partial", False),
            _row("c", "repeats", False),
        ],
    }
    assert consensus_failures(scores) == {"all-wrong"}


def test_errors_are_not_answers() -> None:
    wrong = _row("a", "x", False)
    # An error row next to a wrong answer of the same model: the model still answered wrong.
    both = {"a": [wrong, _row("a", "x", None, repeat=1, error_type="out_of_memory")]}
    assert consensus_failures(both) == {"x"}
    # A row marked as an error is never a wrong answer, whatever its other fields say.
    flagged = {"a": [_row("a", "x", False, stage="error")]}
    assert consensus_failures(flagged) == set()
    # Rows without a verdict (captions judged as a corpus) are not answers either.
    assert consensus_failures({"a": [_row("a", "x", None)]}) == set()


def test_consensus_needs_reference_models() -> None:
    with pytest.raises(ValueError, match="at least one"):
        consensus_failures({})
    with pytest.raises(ValueError, match="at least one"):
        ConsensusFilter([])
    with pytest.raises(ValueError, match="repeat"):
        ConsensusFilter(["a", "a"])


def test_consensus_filter_checks_models_and_describes_itself() -> None:
    rule = ConsensusFilter(["a", "b"])
    scores = {"a": [_row("a", "x", False)], "b": [_row("b", "x", False)]}
    assert rule.failures(scores) == {"x"}
    with pytest.raises(ValueError, match="reference models"):
        rule.failures({"a": scores["a"]})
    record = rule.describe()
    assert record["name"] == "consensus" == rule.name
    assert record["reference_models"] == ["a", "b"]
    assert isinstance(rule, ItemFilter)
