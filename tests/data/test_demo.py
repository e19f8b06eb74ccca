"""The built-in demo source: seeded, valid by construction, answers match the pictures."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from lmmprobe.data import DataError, data_fingerprint, load_source, sample_fingerprint
from lmmprobe.data.demo import _BLOCK, SHAPES, SUBTASKS
from lmmprobe.imaging.colors import COLORS
from lmmprobe.schema import ImageRef, Sample


def _pixel_hash(sample: Sample) -> str:
    im = sample.images[0].load()
    return hashlib.sha256(im.tobytes()).hexdigest()


def _summary(spec: str) -> list[tuple[object, ...]]:
    return [
        (
            s.id,
            s.question,
            tuple(s.choices or ()),
            s.answer,
            s.formulation,
            s.images[0].content_hash(),
        )
        for s in load_source(spec).samples
    ]


def test_default_size_is_120() -> None:
    assert len(load_source("demo").samples) == 120


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_deterministic_for_a_seed(seed: int) -> None:
    spec = f"demo,n=24,seed={seed}"
    assert _summary(spec) == _summary(spec)
    a, b = load_source(spec).samples, load_source(spec).samples
    assert [_pixel_hash(s) for s in a[:6]] == [_pixel_hash(s) for s in b[:6]]


def test_different_seed_differs() -> None:
    a, b = _summary("demo,n=24,seed=0"), _summary("demo,n=24,seed=1")
    assert [x[1:] for x in a] != [x[1:] for x in b]
    assert {x[-1] for x in a}.isdisjoint({x[-1] for x in b})


@pytest.mark.parametrize("n", [0, 1, 7, 50])
def test_n_option(n: int) -> None:
    samples = load_source(f"demo,n={n}").samples
    assert len(samples) == n
    assert len({s.id for s in samples}) == n


@pytest.mark.parametrize(("n", "limit", "expected"), [(50, 5, 5), (3, 10, 3), (120, 1, 1)])
def test_limit(n: int, limit: int, expected: int) -> None:
    full = load_source(f"demo,n={n}").samples
    limited = load_source(f"demo,n={n}", limit=limit).samples
    assert len(limited) == expected
    # limit takes a prefix of the same data; it does not change what the samples are.
    assert [sample_fingerprint(s) for s in limited] == [
        sample_fingerprint(s) for s in full[:expected]
    ]


def test_samples_are_valid_and_answers_in_range() -> None:
    samples = load_source("demo,n=200,seed=3").samples
    for s in samples:
        assert s.choices is not None
        assert 0 <= s.answer < len(s.choices)  # type: ignore[operator]
        assert len(set(s.choices)) == len(s.choices)
        # The generator skips validation for speed; the samples must still pass it.
        Sample.model_validate(s.model_dump())


def test_subtasks_present() -> None:
    samples = load_source("demo,n=40").samples
    assert {s.metadata["subtask"] for s in samples} == set(SUBTASKS)
    for s in samples:
        assert s.metadata["task"] == "demo"
        tf = s.metadata["subtask"] == "color_tf"
        assert (s.formulation == "true_false") == tf
        assert s.metadata["question_type"] == ("true_false" if tf else "multiple_choice")
        if tf:
            assert s.choices == ["yes", "no"]
        else:
            assert len(s.choices or []) == 4


def test_gold_answer_matches_the_recipe() -> None:
    for s in load_source("demo,n=80,seed=5").samples:
        recipe = s.images[0].recipe
        assert recipe is not None
        subtask = s.metadata["subtask"]
        if subtask == "color":
            assert s.gold_text == recipe["color"]
        elif subtask == "shape":
            assert s.gold_text == recipe["shape"]
        elif subtask == "count":
            assert s.gold_text == str(len(recipe["spots"]))
        else:
            asked = next(c for c in COLORS if f" {c}?" in s.question)
            assert s.gold_text == ("yes" if asked == recipe["color"] else "no")


@pytest.mark.parametrize("size", [32, 64, 128])
def test_images_are_rgb_of_requested_size(size: int) -> None:
    for s in load_source(f"demo,n=8,size={size}").samples:
        im = s.images[0].load()
        assert im.mode == "RGB"
        assert im.size == (size, size)


def test_image_shows_the_gold_color() -> None:
    for s in load_source("demo,n=12,seed=2").samples:
        recipe = s.images[0].recipe
        assert recipe is not None
        im = s.images[0].load()
        assert recipe["shape"] in SHAPES
        assert COLORS[recipe["color"]] in {c for _, c in im.getcolors(maxcolors=1 << 16)}


@pytest.mark.parametrize(
    "spec",
    ["demo,foo=1", "demo,n=abc", "demo,seed=1.5", "demo,size=big", "demo:extra"],
)
def test_bad_option_is_data_error(spec: str) -> None:
    with pytest.raises(DataError):
        load_source(spec)


def test_option_without_value_is_rejected() -> None:
    with pytest.raises(ValueError, match="key=value"):
        load_source("demo,n")


def test_data_fingerprint_stable_across_loads() -> None:
    a = data_fingerprint(load_source("demo,n=30").samples)
    b = data_fingerprint(load_source("demo,n=30").samples)
    assert a == b
    assert len(a) == 64


def test_data_fingerprint_changes_when_one_answer_changes() -> None:
    samples = load_source("demo,n=30").samples
    before = data_fingerprint(samples)
    s = samples[7]
    assert s.choices is not None
    new_answer = (s.answer + 1) % len(s.choices)  # type: ignore[operator]
    changed = [*samples[:7], s.model_copy(update={"answer": new_answer}), *samples[8:]]
    assert data_fingerprint(changed) != before
    assert data_fingerprint(samples) == before  # the original list is untouched


def test_data_fingerprint_depends_on_seed_size_and_order() -> None:
    base = load_source("demo,n=10").samples
    fp = data_fingerprint(base)
    assert data_fingerprint(load_source("demo,n=10,seed=1").samples) != fp
    assert data_fingerprint(load_source("demo,n=10,size=64").samples) != fp
    assert data_fingerprint(list(reversed(base))) != fp


@pytest.mark.parametrize("seed", [0, -3, 10**30])
def test_smaller_n_is_a_prefix_across_blocks(seed: int) -> None:
    # Samples are drawn in blocks; cutting inside, at and past a block edge keeps the prefix.
    full = load_source(f"demo,n={2 * _BLOCK + 3},seed={seed}").samples
    for n in (_BLOCK - 1, _BLOCK, _BLOCK + 1, 2 * _BLOCK + 1):
        part = load_source(f"demo,n={n},seed={seed}").samples
        assert [sample_fingerprint(s) for s in part] == [sample_fingerprint(s) for s in full[:n]]
        assert part[-1].id == f"demo-{seed}-{n - 1:06d}"


def test_negative_seed_differs_from_its_absolute_value() -> None:
    a, b = _summary("demo,n=24,seed=-1"), _summary("demo,n=24,seed=1")
    assert [x[1:] for x in a] != [x[1:] for x in b]


def test_draws_cover_every_value_in_balance() -> None:
    samples = load_source("demo,n=4000,seed=11").samples
    recipes = [s.images[0].recipe or {} for s in samples]
    assert Counter(r["color"] for r in recipes).keys() == set(COLORS)
    assert Counter(r["shape"] for r in recipes).keys() == set(SHAPES)
    assert {len(r["spots"]) for r in recipes} == {1, 2, 3, 4}
    assert {r["bg"] for r in recipes} == set(range(110, 151))
    choice = [s for s in samples if s.formulation == "single_choice"]
    assert Counter(s.answer for s in choice).keys() == {0, 1, 2, 3}
    yes = [s.answer for s in samples if s.formulation == "true_false"].count(0)
    assert 0.4 < yes / (len(samples) / 4) < 0.6


def test_recipes_are_in_the_canonical_form_validation_stores() -> None:
    # Demo images skip validation; their recipes must already be what validation would store,
    # or the same picture would hash differently when read back from a saved data set.
    samples = load_source("demo,n=8,scenario=clean+corruption+print_attack").samples
    for s in samples:
        ref = s.images[0]
        again = ImageRef.model_validate(ref.model_dump())
        assert again.recipe == ref.recipe
        assert list(again.recipe or {}) == list(ref.recipe or {})
        assert again.content_hash() == ref.content_hash()


def test_fingerprint_takes_any_metadata_and_ignores_its_key_order() -> None:
    base = {"id": "s", "question": "Q?", "choices": ["a", "b"], "answer": 0}
    raw = Sample(**base, metadata={"thumb": b"\x89PNG\xff\x00", "task": "t"})  # not UTF-8
    assert len(sample_fingerprint(raw)) == 64
    a = Sample(**base, metadata={"task": "t", "subtask": "s"})
    b = Sample(**base, metadata={"subtask": "s", "task": "t"})
    assert sample_fingerprint(a) == sample_fingerprint(b)
    values = [None, float("nan"), float("inf"), 1, 1.0, True, "1"]
    prints = {sample_fingerprint(Sample(**base, metadata={"x": v})) for v in values}
    assert len(prints) == len(values)
    assert data_fingerprint([a, raw]) != data_fingerprint([raw, a])
