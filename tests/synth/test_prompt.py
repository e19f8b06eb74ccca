"""Text-to-image prompts from recipes: wording per style, count, colour, size, place, words."""

from __future__ import annotations

from typing import Any

import pytest

from lmmprobe.imaging import vocab
from lmmprobe.synth.metadata import SUBTASKS, make_item
from lmmprobe.synth.prompt import STYLE_TEMPLATES, build_prompt, negative_prompt


def obj(
    name: str, color: str | None = "red", *, kind: str = "glyph", **where: float
) -> dict[str, Any]:
    o: dict[str, Any] = {"kind": kind, "name": name, "x": 0.5, "y": 0.5, "r": 0.2, **where}
    if color is not None:
        o["color"] = color
    return o


def recipe(*objects: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "size": 512,
        "seed": 1,
        "background": "sky",
        "style": "none",
        "objects": list(objects),
        **extra,
    }


def test_the_documented_example() -> None:
    r = recipe(
        obj("dog", "red", r=0.2),
        obj("star", "blue", kind="shape", x=0.2, y=0.2, r=0.1),
        obj("APPLE", "black", kind="text", y=0.8, r=0.08),
        style="watercolor",
        weather="snow",
    )
    assert build_prompt(r) == (
        'a watercolor painting of a large red dog and a small blue star, with the word "APPLE" '
        "written in black letters against a blue sky, in the snow, soft brush strokes"
    )


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("none", "an image of a red dog against a blue sky"),
        ("photo", "a photo of a red dog against a blue sky, photorealistic, high quality"),
        ("watercolor", "a watercolor painting of a red dog against a blue sky, soft brush strokes"),
        ("pixel_art", "pixel art of a red dog against a blue sky, 8-bit"),
        (
            "oil_painting",
            "an oil painting of a red dog against a blue sky, thick brush strokes on canvas",
        ),
        # Styles that do not keep colours get no colour words: the image cannot show them.
        ("grayscale", "a black and white photo of a dog against a blue sky"),
        ("pencil_sketch", "a pencil sketch of a dog against a blue sky, graphite lines on paper"),
    ],
)
def test_style_templates(style: str, expected: str) -> None:
    assert build_prompt(recipe(obj("dog"), style=style)) == expected


def test_templates_cover_every_style() -> None:
    assert set(STYLE_TEMPLATES) == {*vocab.STYLES, "none", "photo"}
    assert all(t.count("{subject}") == 1 for t in STYLE_TEMPLATES.values())
    prompts = {build_prompt(recipe(obj("dog"), style=s)) for s in STYLE_TEMPLATES}
    assert len(prompts) == len(STYLE_TEMPLATES)


def test_counts_colours_and_backgrounds() -> None:
    dogs = [obj("dog", "red", x=x, r=0.12) for x in (0.2, 0.5, 0.8)]
    assert build_prompt(recipe(*dogs, background="grass", style="pixel_art")) == (
        "pixel art of three red dogs against green grass, 8-bit"
    )
    cats = [obj("cat", "orange", x=x, r=0.12) for x in (0.2, 0.8)]
    assert build_prompt(
        recipe(*cats, obj("star", "blue", kind="shape", r=0.12), background="brick")
    ) == ("an image of two orange cats and a blue star against a brick wall")


def test_plurals_units_and_articles() -> None:
    def words(name: str, n: int, color: str | None = None) -> str:
        prompt = build_prompt(
            recipe(*[obj(name, color, x=0.5 + 0.01 * i, r=0.1) for i in range(n)])
        )
        return prompt.removeprefix("an image of ").removesuffix(" against a blue sky")

    assert words("mouse", 2) == "two mice"
    assert words("sheep", 4) == "four sheep"
    assert words("hot dog", 3, "red") == "three red hot dogs"
    assert words("cherry", 2) == "two cherries"
    assert words("bus", 5) == "five buses"
    assert words("rice", 2, "white") == "two white bowls of rice"
    assert words("scissors", 1) == "a pair of scissors"
    assert words("owl", 1) == "an owl"
    assert words("owl", 1, "orange") == "an orange owl"
    assert words("unicorn", 1) == "a unicorn"
    assert words("statue of liberty", 2) == "two statues of liberty"


def test_sizes_are_worded_only_when_radii_differ_enough() -> None:
    big, small = obj("dog", "red", x=0.3, r=0.26), obj("cat", "blue", x=0.7, r=0.12)
    assert build_prompt(recipe(big, small)) == (
        "an image of a large red dog and a small blue cat against a blue sky"
    )
    close = obj("cat", "blue", x=0.7, r=0.2)
    assert (
        build_prompt(recipe(big, close))
        == "an image of a red dog and a blue cat against a blue sky"
    )


def test_a_lone_object_away_from_the_centre_gets_its_place() -> None:
    assert build_prompt(recipe(obj("dog", x=0.17, y=0.15))) == (
        "an image of a red dog in the top left corner against a blue sky"
    )
    assert build_prompt(recipe(obj("dog", x=0.5, y=0.85))).endswith(
        "red dog at the bottom against a blue sky"
    )
    assert build_prompt(recipe(obj("dog", x=0.84, y=0.5))).endswith(
        "red dog on the right against a blue sky"
    )
    assert "dog against" in build_prompt(recipe(obj("dog", x=0.52, y=0.48)))


def test_words_for_ocr() -> None:
    r = recipe(obj("JAM", "green", kind="text", r=0.1), background="brick", style="pixel_art")
    assert (
        build_prompt(r)
        == 'pixel art of the word "JAM" written in green letters against a brick wall, 8-bit'
    )
    sepia = recipe(obj("CAKE", "green", kind="text"), style="sepia", background=None)
    assert build_prompt(sepia) == 'a sepia photo of the word "CAKE", old brown tones'
    on_dog = recipe(obj("dog", x=0.3), obj("CAKE", kind="text", y=0.8), style="grayscale")
    assert build_prompt(on_dog) == (
        'a black and white photo of a dog, with the word "CAKE" written on it against a blue sky'
    )


def test_negative_prompt() -> None:
    plain = negative_prompt(recipe(obj("dog"), style="watercolor"))
    assert "blurry" in plain and "text" in plain.split(", ") and "photo" in plain.split(", ")
    assert "duplicates" in plain
    worded = negative_prompt(recipe(obj("JAM", kind="text"), style="photo"))
    assert "text" not in worded.split(", ") and "misspelled text" in worded
    assert "painting" in worded.split(", ")
    several = negative_prompt(recipe(obj("dog", x=0.2), obj("dog", x=0.8)))
    assert "duplicates" not in several


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"style": "cubism"}, "style 'cubism'"),
        ({"background": "lava"}, "background 'lava'"),
        ({"weather": "hail"}, "weather 'hail'"),
        ({"objects": []}, "non-empty list of objects"),
        ({"objects": [obj("dog", "teal")]}, r"objects\[0\].color 'teal'"),
        ({"objects": [obj("dog", kind="sprite")]}, r"objects\[0\].kind"),
        ({"objects": [obj("")]}, r"objects\[0\].name"),
    ],
)
def test_bad_recipes_are_named(bad: dict[str, Any], match: str) -> None:
    r = {**recipe(obj("dog")), **bad}
    with pytest.raises(ValueError, match=match):
        build_prompt(r)
    with pytest.raises(ValueError, match=match):
        negative_prompt(r)


def test_metadata_items_are_described_faithfully_and_deterministically() -> None:
    for i in range(3 * len(SUBTASKS)):
        item = make_item(i, 42)
        prompt = build_prompt(item.recipe)
        assert prompt == build_prompt(make_item(i, 42).recipe)
        assert vocab.BACKGROUNDS[item.facts["background"]] in prompt
        facts = item.facts
        if "word" in facts:
            assert f'"{facts["word"]}"' in prompt
        elif facts.get("count", 1) > 1:
            assert ("two", "three", "four", "five", "six")[facts["count"] - 2] in prompt.split()
        else:
            assert facts["class"] in prompt
        if item.subtask == "color":
            assert facts["color"] in prompt.split()
