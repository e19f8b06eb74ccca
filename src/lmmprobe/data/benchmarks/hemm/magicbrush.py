"""HEMM: MagicBrush (test, image editing): the ``hemm-magicbrush`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    IMAGE_GENERATION,
    Rows,
    at,
    loader_confirmed,
    needs_generation,
    read_json,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark

__all__ = ["MAGIC_BRUSH", "MAGIC_BRUSH_BENCHMARK"]

MAGIC_BRUSH = "Edit the given image based on the provided instruction.\nInstruction: {question}"

_MAGIC = "magic_brush/edit_sessions.json"


def _magic_rows(root: Path, split: str) -> Rows:
    sessions = read_json(root, _MAGIC)
    count = 0
    for img_id, turns in sessions.items():
        for k, turn in enumerate(turns):
            yield f"{root / _MAGIC}:{img_id}[{k}]", {**turn, "img_id": img_id}
            count += 1
            if count == 100:  # HEMM evaluates the first 100 edit turns
                return


MAGIC_BRUSH_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-magicbrush",
        title="HEMM: MagicBrush (test, image editing)",
        citation=CITATION,
        license="CC BY 4.0 (MagicBrush)",
        formulation="open_ended",
        # No run metric: HEMM scores the generated image against the reference with CLIP-I,
        # and lmmprobe has no image-generation backend to produce one (needs= says so).
        metric=None,
        prompt=PromptTemplate(MAGIC_BRUSH, at("hemm/prompts/magic_brush_prompt.py")),
        to_sample=needs_generation,
        split="test",
        splits=("test",),
        size=100,
        read_files=_magic_rows,
        hemm="MagicBrush",
        needs=IMAGE_GENERATION,
        schema_confirmed=loader_confirmed("hemm/data/magic_brush_dataset.py"),
        notes=(
            "The model edits the input image as the instruction says; HEMM scores the output "
            "image against the reference with CLIP-I (and MSE), over the first 100 edit turns.",
        ),
        **release_files(
            "hf download akshayg08/MagicBrushTest --repo-type dataset --local-dir "
            '"$LMMPROBE_DATA_DIR"/hemm-magicbrush/magic_brush'
        ),
    )
)
