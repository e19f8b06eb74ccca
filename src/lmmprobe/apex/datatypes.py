"""Visual data types the rules orchestrator can plan experiments about, with their synonyms.

Origin: the 27 visual data types of Udandarao et al. ("Visual data-type understanding does not
emerge from scaling vision-language models", ICLR 2024), in the four groups APEx (Conti et al.)
evaluates — geometric, pixel, style and semantic — plus one data type per remaining APEx
transform tool and the procedural renderer's other styles and weathers, so every transform can
be asked about by name ("Can models identify RotateImage?").

Each data type says how to make it from registry tools (a strong version, and a mild one when
the effect has a severity), how to ask whether an image shows it, and what to call it among
alternatives. Where the offline procedural renderer has no equivalent of a style (it draws
"comic", not "cartoon"), the nearest style it has stands in and the data type's ``stand_in``
says so; the report repeats that note.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from lmmprobe.tools.compose import ToolCall

Group = Literal["geometric", "pixel", "style", "semantic"]
GROUPS: tuple[Group, ...] = ("geometric", "pixel", "style", "semantic")

Calls = tuple[tuple[str, Mapping[str, Any]], ...]


@dataclass(frozen=True)
class DataType:
    """A visual data type and the tool calls that make it.

    Attributes:
        name: Canonical name ("left rotation").
        group: geometric, pixel, style or semantic.
        label: Short answer text among alternatives ("rotated left").
        question: Yes/no question asking whether an image shows it.
        strong: Transform calls making a clear instance.
        mild: Transform calls making a subtle instance, when the effect has a severity.
        synonyms: Other ways a query may name it (matched as whole words, case-insensitive).
        apex27: One of Udandarao et al.'s 27 data types.
        stand_in: Why the calls only approximate the data type offline, or None.

    """

    name: str
    group: Group
    label: str
    question: str
    strong: Calls
    mild: Calls | None = None
    synonyms: tuple[str, ...] = ()
    apex27: bool = True
    stand_in: str | None = None
    names: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", (self.name, *self.synonyms))

    def calls(self, severity: Literal["strong", "mild"] = "strong") -> list[ToolCall]:
        """The transform calls for one severity (mild falls back to strong when absent)."""
        chosen = self.mild if severity == "mild" and self.mild is not None else self.strong
        return [ToolCall(tool=t, args=dict(a)) for t, a in chosen]


def _one(tool: str, **args: Any) -> Calls:
    return ((tool, args),)


def _style(
    name: str, style: str, label: str, synonyms: tuple[str, ...], stand_in: bool
) -> DataType:
    note = (
        f"the procedural renderer has no {name!r} style; its {style!r} style stands in"
        if stand_in
        else None
    )
    return DataType(
        name=name,
        group="style",
        label=label,
        question=f"Is this image {label}?",
        strong=_one("EditImageStyle", style=style),
        synonyms=synonyms,
        stand_in=note,
    )


NONE_LABEL = "no change"
"""Answer text of the untransformed alternative in discrimination experiments."""

_TIGER = (
    ("OverlayColor", {"color": "orange", "opacity": 0.35}),
    (
        "PasteGeometricShapeAtRandomPosition",
        {"shape": "diamond", "size": 0.15, "color": "black", "fill": True, "repeat": 12},
    ),
)

DATA_TYPES: tuple[DataType, ...] = (
    # ------------------------------------------------------------------ geometric
    DataType(
        "left rotation",
        "geometric",
        "rotated left",
        "Is this image rotated to the left?",
        _one("RotateImage", angle=90.0),
        _one("RotateImage", angle=20.0),
        (
            "rotated left",
            "rotated to the left",
            "rotation to the left",
            "counterclockwise rotation",
            "counter-clockwise rotation",
            "anticlockwise rotation",
            "left rotated",
        ),
    ),
    DataType(
        "right rotation",
        "geometric",
        "rotated right",
        "Is this image rotated to the right?",
        _one("RotateImage", angle=-90.0),
        _one("RotateImage", angle=-20.0),
        (
            "rotated right",
            "rotated to the right",
            "rotation to the right",
            "clockwise rotation",
            "right rotated",
        ),
    ),
    DataType(
        "vertical flip",
        "geometric",
        "upside down",
        "Is this image upside down?",
        _one("FlipImage", direction="vertical"),
        None,
        (
            "vertically flipped",
            "flipped vertically",
            "upside down",
            "upside-down",
            "flipped",
            "flip",
            "flips",
        ),
    ),
    DataType(
        "crop and zoom",
        "geometric",
        "zoomed in",
        "Is this image a zoomed-in crop of a larger picture?",
        _one("ZoomAtRandomPosition", zoom_factor=3.0),
        _one("ZoomAtRandomPosition", zoom_factor=1.5),
        (
            "zoom",
            "zoomed",
            "zoomed in",
            "zoom in",
            "cropped",
            "crop",
            "crops",
            "zooms",
            "ZoomAtRandomPosition",
        ),
    ),
    DataType(
        "patch and reshuffle",
        "geometric",
        "shuffled patches",
        "Is this image cut into patches that were shuffled?",
        _one("CropRandomShuffleAndRecompose", grid_size=4),
        _one("CropRandomShuffleAndRecompose", grid_size=2),
        (
            "patch reshuffle",
            "patch shuffling",
            "shuffled patches",
            "reshuffled",
            "shuffled",
            "jigsaw",
            "scrambled",
            "CropRandomShuffleAndRecompose",
        ),
    ),
    # ------------------------------------------------------------------ pixel
    DataType(
        "gaussian noise",
        "pixel",
        "noisy",
        "Does this image contain visible noise?",
        _one("AddGaussianNoise", variance_factor=3.0),
        _one("AddGaussianNoise", variance_factor=0.7),
        ("noise", "noisy", "AddGaussianNoise", "grain", "grainy"),
    ),
    DataType(
        "defocus blur",
        "pixel",
        "blurry",
        "Is this image blurry?",
        _one("DefocusBlurImage", blur_factor=10.0),
        _one("DefocusBlurImage", blur_factor=3.0),
        ("blur", "blurry", "blurred", "out of focus", "defocus", "defocused", "DefocusBlurImage"),
    ),
    DataType(
        "snow",
        "pixel",
        "snowy",
        "Is it snowing in this image?",
        _one("EditImageWeather", weather="snow"),
        None,
        ("snowy", "snowing", "snowfall", "EditImageWeather"),
    ),
    DataType(
        "high brightness",
        "pixel",
        "too bright",
        "Is this image unusually bright?",
        _one("ChangeBrightness", brightness_factor=1.8),
        _one("ChangeBrightness", brightness_factor=1.3),
        (
            "bright",
            "brightened",
            "overexposed",
            "overexposure",
            "increased brightness",
            "brightness",
            "ChangeBrightness",
        ),
    ),
    DataType(
        "low brightness",
        "pixel",
        "too dark",
        "Is this image unusually dark?",
        _one("ChangeBrightness", brightness_factor=0.35),
        _one("ChangeBrightness", brightness_factor=0.7),
        ("dark", "darkened", "underexposed", "underexposure", "decreased brightness"),
    ),
    DataType(
        "high contrast",
        "pixel",
        "high contrast",
        "Does this image have unusually high contrast?",
        _one("ChangeContrast", contrast_factor=2.5),
        _one("ChangeContrast", contrast_factor=1.4),
        ("increased contrast", "contrast", "ChangeContrast"),
    ),
    DataType(
        "low contrast",
        "pixel",
        "low contrast",
        "Does this image have unusually low contrast?",
        _one("ChangeContrast", contrast_factor=0.35),
        _one("ChangeContrast", contrast_factor=0.7),
        ("decreased contrast", "washed out", "faded"),
    ),
    DataType(
        "jpeg compression",
        "pixel",
        "JPEG artifacts",
        "Does this image show JPEG compression artifacts?",
        _one("AddJPEGCompression", target_psnr=22.0),
        _one("AddJPEGCompression", target_psnr=32.0),
        (
            "jpeg",
            "compression",
            "compression artifacts",
            "compressed",
            "jpeg artifacts",
            "AddJPEGCompression",
        ),
    ),
    # ------------------------------------------------------------------ style
    _style("cartoon", "comic", "a cartoon", ("cartoons", "comic", "cartoonish"), True),
    _style(
        "pencil sketch",
        "pencil_sketch",
        "a pencil sketch",
        ("sketch", "sketches", "pencil sketches", "pencil drawing", "drawing", "EditImageStyle"),
        False,
    ),
    _style("embroidery", "mosaic", "an embroidery", ("embroidered", "stitched"), True),
    _style("graffiti", "pop_art", "graffiti", ("street art", "spray paint"), True),
    _style("origami", "pixel_art", "origami", ("paper folding", "folded paper"), True),
    _style("plushie", "watercolor", "a plushie", ("plush toy", "plushies", "stuffed toy"), True),
    _style("sculpture", "emboss", "a sculpture", ("sculptures", "statue", "carving"), True),
    _style("tattoo", "halftone", "a tattoo", ("tattoos", "tattooed"), True),
    # ------------------------------------------------------------------ semantic
    DataType(
        "typographic text",
        "semantic",
        "text written on it",
        "Is there text written on this image?",
        _one("PasteTextAtRandomPosition", text="HELLO", font_size=48, font_color="red"),
        _one("PasteTextAtRandomPosition", text="HELLO", font_size=16, font_color="red"),
        (
            "typographic",
            "text",
            "written text",
            "words",
            "typography",
            "pasted text",
            "PasteTextAtRandomPosition",
        ),
    ),
    DataType(
        "several identical objects",
        "semantic",
        "several identical objects",
        "Does this image contain several identical objects?",
        _one("PasteGeneratedObjectAtRandomPosition", class_name="random", size=0.25, repeat=4),
        _one("PasteGeneratedObjectAtRandomPosition", class_name="random", size=0.25, repeat=2),
        (
            "multiple identical objects",
            "identical objects",
            "repeated objects",
            "copies",
            "multiple copies",
            "PasteGeneratedObjectAtRandomPosition",
        ),
    ),
    DataType(
        "several different objects",
        "semantic",
        "several different objects",
        "Does this image contain several different objects?",
        tuple(
            ("PasteGeneratedObjectAtRandomPosition", {"class_name": "random", "size": 0.25})
            for _ in range(3)
        ),
        None,
        (
            "multiple different objects",
            "different objects",
            "many objects",
            "multiple objects",
            "several objects",
        ),
    ),
    DataType(
        "tiger stripes",
        "semantic",
        "tiger stripes",
        "Does this image have a tiger-stripe texture?",
        _TIGER,
        None,
        ("tiger stripe", "stripes", "striped", "tiger texture", "tiger pattern"),
        stand_in="no tool paints tiger stripes; an orange tint with scattered black diamonds stands in",
    ),
    DataType(
        "mixup",
        "semantic",
        "two blended images",
        "Is this image a blend of two different images?",
        _one("ApplyMixUp", alpha=0.6),
        _one("ApplyMixUp", alpha=0.85),
        ("mix up", "mix-up", "blended images", "blend", "blended", "ApplyMixUp"),
    ),
    DataType(
        "cutmix",
        "semantic",
        "a pasted patch of another image",
        "Does part of this image come from a different image?",
        _one("ApplyCutMix", alpha=1.0),
        None,
        ("cut mix", "cut-mix", "cut and mix", "ApplyCutMix"),
    ),
    # ------------------------------------------------------------------ other transforms
    DataType(
        "rotation",
        "geometric",
        "rotated left",
        "Is this image rotated?",
        _one("RotateImage", angle=90.0),
        _one("RotateImage", angle=20.0),
        ("rotated", "rotations", "RotateImage"),
        apex27=False,
    ),
    DataType(
        "horizontal flip",
        "geometric",
        "mirrored",
        "Is this image mirrored left to right?",
        _one("FlipImage", direction="horizontal"),
        None,
        ("horizontally flipped", "flipped horizontally", "mirrored", "mirror image", "FlipImage"),
        apex27=False,
    ),
    DataType(
        "color overlay",
        "pixel",
        "color tinted",
        "Is this image tinted with a color?",
        _one("OverlayColor", color="red", opacity=0.5),
        _one("OverlayColor", color="red", opacity=0.2),
        ("colour overlay", "tinted", "tint", "color tint", "overlay", "OverlayColor"),
        apex27=False,
    ),
    DataType(
        "geometric shapes",
        "semantic",
        "shapes drawn on it",
        "Are there geometric shapes drawn on this image?",
        _one(
            "PasteGeometricShapeAtRandomPosition", shape="circle", size=0.2, color="red", repeat=3
        ),
        _one(
            "PasteGeometricShapeAtRandomPosition", shape="circle", size=0.08, color="red", repeat=1
        ),
        ("shapes", "pasted shapes", "geometric shape", "PasteGeometricShapeAtRandomPosition"),
        apex27=False,
    ),
    DataType(
        "print attack",
        "semantic",
        "a misleading word printed on it",
        "Is there a word printed on this image?",
        _one("PrintAttack", text="dog"),
        None,
        ("typographic attack", "printed text", "printed word", "PrintAttack"),
        apex27=False,
    ),
    *(
        DataType(
            f"{w} weather",
            "pixel",
            w,
            f"Does this image show {w} weather?",
            _one("EditImageWeather", weather=w),
            None,
            (w, {"rain": "rainy", "fog": "foggy", "night": "nighttime", "sandstorm": "dusty"}[w]),
            apex27=False,
        )
        for w in ("rain", "fog", "night", "sandstorm")
    ),
    *(
        DataType(
            kind.replace("_", " "),
            "pixel",
            kind.replace("_", " "),
            f"Does this image show {kind.replace('_', ' ')} corruption?",
            _one("ApplyCorruption", kind=kind, severity=5),
            _one("ApplyCorruption", kind=kind, severity=1),
            (f"{kind.replace('_', ' ')} corruption", *(("ApplyCorruption",) if i == 0 else ())),
            apex27=False,
        )
        for i, kind in enumerate(
            (
                "poisson_noise",
                "speckle_noise",
                "salt_and_pepper",
                "motion_blur",
                "spatter",
                "coarse_dropout",
                "shear",
            )
        )
    ),
)
"""Every data type the rules orchestrator knows (the 27 APEx ones first, in group order)."""

APEX27: tuple[DataType, ...] = tuple(d for d in DATA_TYPES if d.apex27)


def group_members(group: Group) -> list[DataType]:
    """The 27-type members of a group, in the published order."""
    return [d for d in APEX27 if d.group == group]


def _norm(text: str) -> str:
    # CamelCase tool names become words ("RotateImage" → "rotate image") so both read alike.
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


_INDEX: dict[str, DataType] = {}
for _d in DATA_TYPES:
    for _n in _d.names:
        _INDEX.setdefault(_norm(_n), _d)


def find_data_type(text: str) -> tuple[DataType, str] | None:
    """The data type a phrase names: the longest name or synonym found as whole words.

    Returns:
        The data type and the words that matched, or None.

    """
    words = f" {_norm(text)} "
    best: tuple[DataType, str] | None = None
    for name, dtype in _INDEX.items():
        if f" {name} " in words and (best is None or len(name) > len(best[1])):
            best = (dtype, name)
    return best


def by_name(name: str) -> DataType:
    """The data type with this canonical name or synonym.

    Raises:
        KeyError: Unknown name.

    """
    found = _INDEX.get(_norm(name))
    if found is None:
        raise KeyError(f"unknown data type {name!r}")
    return found
