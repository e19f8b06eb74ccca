"""HEMM: VCR (val, question to answer): the ``hemm-vcr`` benchmark definition."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    Row,
    Rows,
    at,
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
from lmmprobe.schema import Sample

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


def _vcr_image(path: Path, metadata: Mapping[str, Any], objects: list[str]) -> Any:
    """The image with HEMM's boxes, names and segment outlines drawn by OpenCV."""
    try:
        import cv2
    except ImportError:
        raise DataError(
            "hemm-vcr draws HEMM's object boxes, names and outlines on each image with OpenCV, "
            "as HEMM's loader does; install it: pip install opencv-python-headless"
        ) from None
    import numpy as np
    from PIL import Image

    with Image.open(path) as im:
        img = np.array(im.convert("RGB"))
    names = [f"{obj}{i}" for i, obj in enumerate(objects)]
    for box, name in zip(metadata["boxes"], names, strict=False):
        x1, y1, x2, y2, _ = box
        cv2.rectangle(img, (int(x1), int(y1)), (int(x2), int(y2)), (0, 255, 0), 2)
        cv2.putText(
            img, name, (int(x1), int(y1) - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 255, 0), 2
        )
    for segment in metadata["segms"]:
        if len(segment) == 0:
            continue
        points = segment[0]
        for i in range(len(points) - 1):
            (x1, y1), (x2, y2) = points[i], points[i + 1]
            cv2.line(img, (int(x1), int(y1)), (int(x2), int(y2)), (0, 0, 255), 2)
    return Image.fromarray(img)


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
    metadata = read_row_json(metadata_path, "metadata_fn")
    image = png_image(_vcr_image(image_path, metadata, objects))
    sid = str(row.get("annot_id", ctx.index))
    return hemm_sample(ctx, sid, [image], question, template, choices[int(row["answer_label"])])


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
