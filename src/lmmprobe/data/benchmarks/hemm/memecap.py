"""HEMM: MemeCap (test): the ``hemm-memecap`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    Row,
    Rows,
    at,
    escape,
    file_image,
    hemm_sample,
    loader_confirmed,
    need_root,
    read_json,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["MEMECAP", "MEMECAP_BENCHMARK"]

MEMECAP = (
    'This is a meme with the title "{question}". The image description is "{description}". '
    "What is the meme poster trying to convey? Answer:"
)

_MEMECAP = "memes-test.json"


def _memecap_rows(root: Path, split: str) -> Rows:
    for i, row in enumerate(read_json(root, _MEMECAP)):
        yield f"{root / _MEMECAP}:[{i}]", row


def _memecap_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"memecap_images/memes/{str(row['img_fname']).strip()}")
    template = MEMECAP.replace("{description}", escape(str(row["img_captions"][0])))
    sid = str(row.get("post_id", ctx.index))
    return hemm_sample(ctx, sid, [image], str(row["title"]), template, str(row["meme_captions"][0]))


MEMECAP_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-memecap",
        title="HEMM: MemeCap (test)",
        citation=CITATION,
        license="MemeCap repository license (research use)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(
            MEMECAP.replace("{description}", "{{description}}"),
            at("hemm/prompts/memecaps_prompt.py"),
        ),
        to_sample=_memecap_sample,
        split="test",
        splits=("test",),
        size=559,
        read_files=_memecap_rows,
        hemm="MemeCap",
        schema_confirmed=loader_confirmed("hemm/data/memecaps_dataset.py"),
        notes=(
            "The prompt shows the title and the first image caption ({description}, filled per "
            "row); the gold answer is the first meme caption.",
        ),
        **release_files(
            'cd "$LMMPROBE_DATA_DIR" && mkdir -p hemm-memecap && cd hemm-memecap && '
            "gdown https://drive.google.com/uc?id=1o1IB6am0HdYS58CEOmmxra3WjJkrn-M1 && "
            "wget https://raw.githubusercontent.com/eujhwang/meme-cap/main/data/memes-test.json && "
            "unzip memes.zip -d memecap_images/"
        ),
    )
)
