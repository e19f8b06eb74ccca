"""HEMM: IRFL simile detection (test): the ``hemm-irfl`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    YES_NO_NOTE,
    Row,
    at,
    file_image,
    hemm_sample,
    loader_confirmed,
    need_root,
    python_literal,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["IRFL", "IRFL_BENCHMARK", "IRFL_IMAGES"]

IRFL = (
    " You are given a simile and a picture along with the simile. You have to say if the "
    "simile matches the given picture. Answer the following question in a single word with a "
    "yes or no.\nSimile: {question}. Answer:"
)

IRFL_IMAGES = "IRFL_images"


def _irfl_sample(row: Row, ctx: RowContext) -> list[Sample]:
    root = need_root(ctx)
    try:
        # HEMM reads both with ast.literal_eval; python_literal bounds their nesting first.
        distractors = list(python_literal("distractors", str(row["distractors"])))
        answer = next(iter(python_literal("answer", str(row["answer"]))))
    except (DataError, StopIteration, TypeError) as exc:
        raise RowError("distractors", f"not a Python list literal ({exc})") from exc
    names = [*distractors, answer]
    if len(names) != 4:
        # HEMM appends the answer image and labels the four no, no, no, yes.
        raise RowError("distractors", f"HEMM expects 3 distractors, got {len(distractors)}")
    samples = []
    for k, (name, gold) in enumerate(zip(names, ("no", "no", "no", "yes"), strict=True)):
        relative = f"{IRFL_IMAGES}/{str(name).split('.')[0]}.jpeg"
        samples.append(
            hemm_sample(
                ctx,
                f"{ctx.index}#{k}",
                [file_image(root, relative)],
                str(row["phrase"]),
                IRFL,
                gold,
                yes_no=True,
            )
        )
    return samples


IRFL_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-irfl",
        title="HEMM: IRFL simile detection (test)",
        citation=CITATION,
        license="CC BY 4.0 (IRFL)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(IRFL, at("hemm/prompts/irfl_prompt.py")),
        to_sample=_irfl_sample,
        # The fetch command is made from hub_id (hf download ...), then unpacks the images.
        after_download=f"unzip -j IRFL_images.zip -d {IRFL_IMAGES}",
        split="test",
        splits=("test",),
        hub_id="lampent/IRFL",
        config="simile-detection-task",
        hemm="IRFL",
        schema_confirmed=loader_confirmed("hemm/data/irfl_dataset.py"),
        notes=(
            "HEMM loads lampent/IRFL (config simile-detection-task) without a pinned revision.",
            f"Images: IRFL_images.zip extracted into {IRFL_IMAGES}/ of the local copy (HEMM reads "
            "them from the datasets cache); each row asks its 3 distractors (no) and its answer "
            "image (yes).",
            YES_NO_NOTE,
        ),
    )
)
