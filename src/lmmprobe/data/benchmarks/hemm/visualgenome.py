"""HEMM: Visual Genome question answers: the ``hemm-visualgenome`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    SHORT_ANSWER,
    Row,
    Rows,
    at,
    copy_image,
    hemm_sample,
    loader_confirmed,
    need_root,
    png_image,
    read_json,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["VISUAL_GENOME"]

_VG_QA = "visual_genome/question_answers.json"


def _vg_rows(root: Path, split: str) -> Rows:
    data = read_json(root, _VG_QA)
    for i, entry in enumerate(data):
        yield f"{root / _VG_QA}:[{i}]", {**entry, "_index": i}


def _vg_sample(row: Row, ctx: RowContext) -> list[Sample] | None:
    root = need_root(ctx)
    # HEMM downloads VG_100K_2/ID.jpg for the entry at index 1 and VG_100K/ID.jpg for every
    # other one, and skips an entry whose download fails: with the release's two image
    # folders, the entries whose image is only in VG_100K_2 are skipped.
    folder = "VG_100K_2" if row["_index"] == 1 else "VG_100K"
    path = root / "visual_genome" / folder / f"{row['id']}.jpg"
    if not path.is_file():
        return None
    # Under the decoding cap; a broken or oversized image is this entry's problem.
    with copy_image(path, "image") as im:
        image = png_image(im.resize((640, 480)))
    return [
        hemm_sample(
            ctx, f"{row['id']}#{j}", [image], str(qa["question"]), SHORT_ANSWER, str(qa["answer"])
        )
        for j, qa in enumerate(row.get("qas", []))
    ]


VISUAL_GENOME = benchmark(
    Benchmark(
        name="hemm-visualgenome",
        title="HEMM: Visual Genome question answers",
        citation=CITATION,
        license="CC BY 4.0 (Visual Genome)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(SHORT_ANSWER, at("hemm/prompts/visualgenome_prompt.py")),
        to_sample=_vg_sample,
        split="all",
        splits=("all",),
        read_files=_vg_rows,
        hemm="Visual Genome",
        schema_confirmed=loader_confirmed("hemm/data/visualgenome_dataset.py"),
        notes=(
            "HEMM fetches each image from cs.stanford.edu at run time; the local copy holds the "
            "release's image folders visual_genome/VG_100K and visual_genome/VG_100K_2 (lmmprobe's "
            "layout: HEMM keeps no image files).",
            "As HEMM: images are resized to 640x480; entries whose image HEMM cannot download "
            "(not in VG_100K, except the entry at index 1, read from VG_100K_2) are skipped.",
        ),
        **release_files(
            'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-visualgenome/visual_genome && '
            'cd "$LMMPROBE_DATA_DIR"/hemm-visualgenome/visual_genome && '
            "wget https://homes.cs.washington.edu/~ranjay/visualgenome/data/dataset/question_answers.json.zip "
            "https://cs.stanford.edu/people/rak248/VG_100K_2/images.zip "
            "https://cs.stanford.edu/people/rak248/VG_100K_2/images2.zip && "
            "unzip question_answers.json.zip && unzip images.zip && unzip images2.zip"
        ),
    )
)
