"""HEMM: VCR (val, question to answer): the ``hemm-vcr`` benchmark definition."""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, NoReturn

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    Row,
    Rows,
    at,
    copy_image,
    escape,
    hemm_sample,
    loader_confirmed,
    need_root,
    png_image,
    python_literal,
    read_row_json,
    release_files,
    text_lines,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import ImageRef, Sample

__all__ = ["VCR", "VCR_BENCHMARK", "VCR_SHOWN", "vcr_words"]

VCR = (
    "Given an Image and a Question: {question}. Choose the correct answet from the choices: "
    "{a0}, {a1}, {a2}, {a3}, Answer: "
)

VCR_SHOWN = VCR.replace("{a", "{{a").replace("}, {{a", "}}, {{a").replace("a3}", "a3}}")
"""HEMM's VCR prompt as `data show` prints it: the choice slots are filled per row."""

_VCR_ANNOTATIONS = "vcr_annotations/val.jsonl"


def _vcr_rows(root: Path, split: str) -> Rows:
    path = root / _VCR_ANNOTATIONS
    for n, line in enumerate(text_lines(root, _VCR_ANNOTATIONS), 1):
        yield f"{path}:{n}", python_literal(f"{path}:{n}", line)


def vcr_words(tokens: Any, objects: list[str]) -> str:
    """HEMM's ``fix_tokenization``: object references become ``person0, person2``; words joined."""
    words = []
    for tok in tokens:
        if isinstance(tok, list):
            words.append(", ".join(f"{objects[i]}{i}" for i in tok))
        else:
            words.append(tok)
    return " ".join(words)


MAX_POINTS = 100_000
"""Segment points (and segments) one image's metadata may hold: VCR's outlines have some
hundreds an image; each point is one OpenCV line drawn."""

METADATA_BYTES = 8 << 20
"""The largest metadata file read (8 MiB): room for `MAX_POINTS` points written at full float
precision. JSON costs more in memory than on disk (a list per point): 20 MB of points took
300 MB."""

_FIELD = "metadata_fn"
"""The row's field that names the metadata file, under which its problems are reported."""


class _Metadata:
    """Reads the boxes and outlines of one VCR metadata file, checking each value.

    The file is outside JSON: every coordinate must be a finite number within the image (with
    one image's size of slack either side: OpenCV clips what it draws, but converts each
    coordinate to a 32-bit integer first), every box five numbers and every point two; the
    points are bounded (`MAX_POINTS`). A failure names the file and the value's place.
    """

    def __init__(self, path: Path, metadata: Any, size: tuple[int, int]) -> None:
        self.path = path
        self.size = size
        if not isinstance(metadata, Mapping):
            self.fail("", f"expected a JSON object, got {_kind(metadata)}")
        self.metadata = metadata

    def fail(self, where: str, why: str) -> NoReturn:
        raise RowError(_FIELD, f"{self.path}: {where + ': ' if where else ''}{why}")

    def items(self, key: str) -> list[Any]:
        if key not in self.metadata:
            self.fail(key, "missing (HEMM draws every image's boxes and segms)")
        value = self.metadata[key]
        if not isinstance(value, list):
            self.fail(key, f"expected a list, got {_kind(value)}")
        return value

    def coordinate(self, value: Any, axis: int, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(where, f"expected a number, got {_kind(value)}")
        if not math.isfinite(value):
            self.fail(where, f"{value} is not a finite number")
        extent = self.size[axis]
        if not -extent <= value <= 2 * extent:
            self.fail(where, f"{value:g} lies outside the {self.size[0]}×{self.size[1]} image")
        return int(value)

    def point(self, value: Any, where: str) -> tuple[int, int]:
        if not isinstance(value, list) or len(value) != 2:
            self.fail(where, f"expected a point [x, y], got {_kind(value)}")
        return self.coordinate(value[0], 0, f"{where}[0]"), self.coordinate(
            value[1], 1, f"{where}[1]"
        )

    def boxes(self, count: int) -> list[tuple[int, int, int, int]]:
        """The first `count` boxes (HEMM draws one per object name): x1, y1, x2, y2."""
        out = []
        for i, box in enumerate(self.items("boxes")[:count]):
            where = f"boxes[{i}]"
            if not isinstance(box, list) or len(box) != 5:
                self.fail(where, f"expected 5 numbers (x1, y1, x2, y2, score), got {_kind(box)}")
            x1, y1 = (
                self.coordinate(box[0], 0, f"{where}[0]"),
                self.coordinate(box[1], 1, f"{where}[1]"),
            )
            x2, y2 = (
                self.coordinate(box[2], 0, f"{where}[2]"),
                self.coordinate(box[3], 1, f"{where}[3]"),
            )
            out.append((x1, y1, x2, y2))
        return out

    def outlines(self) -> list[list[tuple[int, int]]]:
        """The first polygon of each segment (HEMM draws those), as points."""
        segments = self.items("segms")
        if len(segments) > MAX_POINTS:
            self.fail("segms", f"{len(segments):,} segments (at most {MAX_POINTS:,})")
        out, total = [], 0
        for i, segment in enumerate(segments):
            if not isinstance(segment, list):
                self.fail(f"segms[{i}]", f"expected a list of polygons, got {_kind(segment)}")
            if not segment:
                continue
            points = segment[0]
            if not isinstance(points, list):
                self.fail(f"segms[{i}][0]", f"expected a list of points, got {_kind(points)}")
            total += len(points)
            if total > MAX_POINTS:
                self.fail(
                    f"segms[{i}][0]",
                    f"more than {MAX_POINTS:,} points in the image's outlines (at most "
                    f"{MAX_POINTS:,})",
                )
            out.append([self.point(p, f"segms[{i}][0][{j}]") for j, p in enumerate(points)])
        return out


def _kind(value: Any) -> str:
    """How a JSON value is named in a message: its type, and its length for a list."""
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if value is None:
        return "null"
    return {dict: "an object", str: "a string", bool: "a boolean"}.get(
        type(value), f"{type(value).__name__} {value!r}"[:60]
    )


MAX_NAME = 256
"""The most characters of an object name HEMM draws on the image (``person0``): VCR's names are
COCO's categories and a number; OpenCV draws a name glyph by glyph, and 30 names of a million
characters took 12 s."""

MIN_DRAWN = 1_000_000
"""The drawing budget of an image smaller than this many pixels (see `drawn_budget`)."""

_FONT_SCALE = 0.6
_THICKNESS = 2
"""HEMM's ``draw_bounding_boxes`` and ``draw_segments`` draw at this scale and thickness."""


def drawn_budget(size: tuple[int, int]) -> int:
    """How long, in pixels, the lines drawn on an image of `size` may be together.

    Drawing costs as much as the lines are long: 99,999 outline points spread over a
    6000×6000 image (36 MP, under the decoding cap) took 44 s. The lines, box edges and names
    together may be as long as the image holds pixels (at least `MIN_DRAWN`), so drawing costs
    no more than decoding and encoding the image: a real VCR image's outlines and boxes are
    a few thousand pixels long.
    """
    return max(size[0] * size[1], MIN_DRAWN)


def _drawn_names(objects: list[str], count: int) -> list[str]:
    """HEMM's names of the first `count` objects (``person0``): those drawn beside a box."""
    names = [f"{obj}{i}" for i, obj in enumerate(objects[:count])]
    for i, name in enumerate(names):
        if len(name) > MAX_NAME:
            raise RowError(
                "objects",
                f"objects[{i}]: a name of {len(name):,} characters; HEMM draws each boxed "
                f"object's name on the image, at most {MAX_NAME:,} characters here",
            )
    return names


def _check_drawing(
    meta: _Metadata,
    boxes: list[tuple[int, int, int, int]],
    names: list[str],
    outlines: list[list[tuple[int, int]]],
) -> None:
    """Refuse a drawing longer than `drawn_budget`, naming the box or segment that passes it."""
    import cv2
    import numpy as np

    budget, total = drawn_budget(meta.size), 0.0
    for i, ((x1, y1, x2, y2), name) in enumerate(zip(boxes, names, strict=False)):
        (width, _), _ = cv2.getTextSize(name, cv2.FONT_HERSHEY_SIMPLEX, _FONT_SCALE, _THICKNESS)
        total += 2 * (abs(x2 - x1) + abs(y2 - y1)) + width
        if total > budget:
            _too_long(meta, f"boxes[{i}]", budget)
    for i, points in enumerate(outlines):
        if len(points) > 1:
            xy = np.asarray(points, dtype=np.float64)
            total += float(np.hypot(*np.diff(xy, axis=0).T).sum())
        if total > budget:
            _too_long(meta, f"segms[{i}]", budget)


def _too_long(meta: _Metadata, where: str, budget: int) -> NoReturn:
    width, height = meta.size
    meta.fail(
        where,
        f"the boxes, names and outlines up to here are more than {budget:,} pixels of line: "
        f"a {width}×{height} image is drawn on with at most as many as it has pixels (at "
        f"least {MIN_DRAWN:,})",
    )


def _vcr_image(path: Path, metadata_path: Path, objects: list[str]) -> Any:
    """The image with HEMM's boxes, names and segment outlines drawn by OpenCV.

    The metadata is read and checked (`_Metadata`, `drawn_budget`, `MAX_NAME`) from the
    image's header, before its pixels are decoded.
    """
    try:
        import cv2
    except ImportError:
        raise DataError(
            "hemm-vcr draws HEMM's object boxes, names and outlines on each image with OpenCV, "
            "as HEMM's loader does; install it: pip install opencv-python-headless"
        ) from None
    import numpy as np
    from PIL import Image

    with copy_image(path, "img_fn") as im:
        meta = _Metadata(
            metadata_path, read_row_json(metadata_path, _FIELD, METADATA_BYTES), im.size
        )
        boxes = meta.boxes(len(objects))
        names = _drawn_names(objects, len(boxes))
        outlines = meta.outlines()
        _check_drawing(meta, boxes, names, outlines)
        img = np.array(im.convert("RGB"))
    for (x1, y1, x2, y2), name in zip(boxes, names, strict=False):
        cv2.rectangle(img, (x1, y1), (x2, y2), (0, 255, 0), _THICKNESS)
        cv2.putText(
            img, name, (x1, y1 - 5), cv2.FONT_HERSHEY_SIMPLEX, _FONT_SCALE, (0, 255, 0), _THICKNESS
        )
    for points in outlines:
        for i in range(len(points) - 1):
            cv2.line(img, points[i], points[i + 1], (0, 0, 255), _THICKNESS)
    return Image.fromarray(img)


def _drawn_image(image_path: Path, metadata_path: Path, objects: list[str]) -> ImageRef:
    """`_vcr_image` as a PNG, drawn once for consecutive rows of one image and its metadata.

    VCR asks several questions about each image, in consecutive rows naming the same image,
    metadata and objects: the drawing (or the row problem it raised) of the last is reused
    while neither file has changed (same size, inode and modification time).
    """
    try:
        stamps = tuple(
            (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            for st in (image_path.stat(), metadata_path.stat())
        )
    except OSError:  # missing or unreadable: drawn (and refused) as usual, naming the file
        return png_image(_vcr_image(image_path, metadata_path, objects))
    drawn = _drawn_once(image_path, metadata_path, tuple(objects), stamps)
    if isinstance(drawn, RowError):
        raise RowError(drawn.field, drawn.reason)
    return drawn


@lru_cache(maxsize=1)
def _drawn_once(
    image_path: Path, metadata_path: Path, objects: tuple[str, ...], stamps: tuple[Any, ...]
) -> ImageRef | RowError:
    """`_drawn_image` for the files as `stamps` describe them (the cache's key)."""
    del stamps  # part of the key only
    try:
        return png_image(_vcr_image(image_path, metadata_path, list(objects)))
    except RowError as exc:
        return exc


def _vcr_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    objects = [str(o) for o in row["objects"]]
    question = vcr_words(row["question"], objects)
    choices = [vcr_words(c, objects) for c in row["answer_choices"]]
    if len(choices) != 4:
        raise RowError("answer_choices", f"HEMM's prompt shows 4 choices, got {len(choices)}")
    template = VCR.replace("{question}", "\0").format(
        a0=escape(choices[0]), a1=escape(choices[1]), a2=escape(choices[2]), a3=escape(choices[3])
    )
    template = template.replace("\0", "{question}")
    image_path = root / "vcr1images" / str(row["img_fn"])
    metadata_path = root / "vcr1images" / str(row["metadata_fn"])
    if not image_path.is_file():
        raise RowError("img_fn", f"image file not found: {image_path}")
    image = _drawn_image(image_path, metadata_path, objects)
    sid = str(row.get("annot_id", ctx.index))
    return hemm_sample(ctx, sid, [image], question, template, choices[_answer_label(row)])


def _answer_label(row: Row) -> int:
    """The row's ``answer_label``: the number (0 to 3) of its right choice."""
    label = row["answer_label"]
    try:
        number = int(label)
    except (TypeError, ValueError):
        number = -1
    if not 0 <= number <= 3:  # HEMM's prompt shows 4 choices
        raise RowError("answer_label", f"{str(label)[:40]!r} is not a choice's number (0 to 3)")
    return number


VCR_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-vcr",
        title="HEMM: VCR (val, question to answer)",
        citation=CITATION,
        license="VCR license (research use; see visualcommonsense.com)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(VCR_SHOWN, at("hemm/prompts/vcr_prompt.py")),
        to_sample=_vcr_sample,
        split="val",
        splits=("val",),
        read_files=_vcr_rows,
        hemm="VCR",
        schema_confirmed=loader_confirmed("hemm/data/vcr_dataset.py"),
        notes=(
            "As HEMM: object references become names like person0; the four answer choices are "
            "filled into the prompt ({a0}..{a3}) and the gold answer is the correct choice's text.",
            "As HEMM: boxes, object names and segment outlines are drawn on each image with "
            "OpenCV (pip install opencv-python-headless).",
            "HEMM's evaluate_dataset asks every val question; its batched variant stops after 101.",
        ),
        **release_files(
            'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-vcr && cd "$LMMPROBE_DATA_DIR"/hemm-vcr && '
            "wget https://s3.us-west-2.amazonaws.com/ai2-rowanz/vcr1images.zip "
            "https://s3.us-west-2.amazonaws.com/ai2-rowanz/vcr1annots.zip && "
            "unzip vcr1annots.zip -d vcr_annotations && unzip vcr1images.zip"
        ),
    )
)
