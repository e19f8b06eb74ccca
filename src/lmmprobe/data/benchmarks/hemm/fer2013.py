"""HEMM: FER-2013 (test): the ``hemm-fer2013`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    Row,
    Rows,
    at,
    escape,
    file_image,
    fixed_sample,
    loader_confirmed,
    need_root,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["FACE_EMOTION", "FER2013"]

FACE_EMOTION = (
    "Given an Image of a face, determinte the face expression, choose from the following "
    "choices: angry, disgust, fear, happy, neutral, sad, surprise. Answer: "
)

_FER = "face_emotion"


def _fer_rows(root: Path, split: str) -> Rows:
    folder = root / _FER
    if not folder.is_dir():
        raise DataError(f"{folder} not found: the local copy lacks HEMM's folder {_FER}")
    # HEMM keys images by file name (a name in two folders keeps the later folder's label).
    labels: dict[str, str] = {}
    for label in sorted(p.name for p in folder.iterdir() if p.is_dir()):
        for img in sorted(p.name for p in (folder / label).iterdir()):
            labels[img] = label
    for img in sorted(labels):
        yield f"{folder / labels[img] / img}", {"image": img, "label": labels[img]}


def _fer_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"{_FER}/{row['label']}/{row['image']}")
    return fixed_sample(ctx, str(row["image"]), image, FACE_EMOTION, str(row["label"]))


FER2013 = benchmark(
    Benchmark(
        name="hemm-fer2013",
        title="HEMM: FER-2013 (test)",
        citation=CITATION,
        license="FER-2013 (ICML 2013 challenge data; research use)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(escape(FACE_EMOTION), at("hemm/prompts/face_emotion_prompt.py")),
        to_sample=_fer_sample,
        split="test",
        splits=("test",),
        size=7178,
        read_files=_fer_rows,
        hemm="FER-2013",
        schema_confirmed=loader_confirmed("hemm/data/faceemotion_dataset.py"),
        notes=(
            "HEMM's registry maps FER-2013 to its face_emotion loader (faceemotion_dataset.py, "
            "prompt face_emotion_prompt.py), not the unused fer_dataset.py.",
            "Ground truth: the image's folder name (angry, disgust, fear, happy, neutral, sad, "
            "surprise).",
        ),
        **release_files(
            'kaggle datasets download -d msambare/fer2013 -p "$LMMPROBE_DATA_DIR"/hemm-fer2013 && '
            'cd "$LMMPROBE_DATA_DIR"/hemm-fer2013 && unzip fer2013.zip && mv test face_emotion'
        ),
    )
)
