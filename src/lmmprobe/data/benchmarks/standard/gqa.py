"""GQA (testdev, balanced): the ``gqa`` benchmark definition."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
)
from lmmprobe.data.benchmarks._lmms import (
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._open import LMMS_ENCODER, SHORT_ANSWER, open_sample, row_id
from lmmprobe.schema import Sample

__all__ = ["GQA", "GQA_IMAGES", "GQA_INSTRUCTIONS", "GQA_REVISION", "read_gqa_snapshot"]

GQA_INSTRUCTIONS = "testdev_balanced_instructions"

GQA_IMAGES = "testdev_balanced_images"


def read_gqa_snapshot(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Rows of GQA's hub snapshot, each question joined with its image.

    lmms-lab/GQA keeps questions and images in two configs (``{split}_balanced_instructions``
    and ``{split}_balanced_images``, parquet files named ``{split}-0000N-of-0000M.parquet``);
    lmms-eval joins them on ``imageId`` (``gqa/utils.py gqa_process_docs``), and so does this.

    Raises:
        lmmprobe.data.base.DataError: A config folder or its files are missing.
        lmmprobe.registry.RegistryError: `datasets` is not installed (with the pip command).

    """
    from lmmprobe.data.base import DataError
    from lmmprobe.data.hf_dataset import import_datasets

    import_datasets()  # says which extra to install when `datasets` (and pyarrow) are missing
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    folders = {kind: root / f"{split}_balanced_{kind}" for kind in ("instructions", "images")}
    files = {}
    for kind, folder in folders.items():
        found = sorted(folder.glob(f"{split}-*.parquet"))
        if not found:
            raise DataError(
                f"benchmark gqa: no {folder}/{split}-*.parquet; fetch both configs with:\n  "
                f"{GQA.fetch}"
            )
        files[kind] = found
    _check_parquet(pq, [*files["instructions"], *files["images"]])  # before any is read
    # Only the images a question refers to are kept, each once: the questions' imageIds are
    # read first (one column), then the images files' rows are converted only where wanted.
    wanted: set[str] = set()
    for path in files["instructions"]:
        wanted.update(_parquet_ids(pq, path))
    images: dict[str, Any] = {}
    for path in files["images"]:
        images.update(_parquet_images(pq, path, wanted - images.keys()))
    index = 0
    for path in files["instructions"]:
        for row in _parquet_rows(pq, path):
            image = images.get(str(row.get("imageId")))
            yield f"{path}[{split}]:{index}", {**row, "image": image}
            index += 1


_BATCH = 1024
"""Rows decoded at a time from a parquet file."""


def _check_parquet(pq: Any, paths: list[Path]) -> None:
    """Refuse a parquet file stating more rows than bytes, or the files decoding past limits.

    A file's footer states its row count: one stating more rows than the file has bytes
    (dictionary and run-length encoding store a repeated value once: 3,000,000 identical rows
    fit in 94 KB) is refused before any row is decoded; every real GQA row holds its own id
    and question. So are files whose values together decode to more than
    `lmmprobe.data.files.PARQUET_LIMITS` allow (one budget for them all: the images kept
    come from every images file; `check_parquets`).

    Raises:
        lmmprobe.data.base.DataError: One line naming the file.

    """
    from lmmprobe.data.base import DataError
    from lmmprobe.data.files import UnreadableFile, check_parquets

    for path in paths:
        with _readable(path):
            rows, size = pq.ParquetFile(path).metadata.num_rows, path.stat().st_size
        if rows > size:
            raise DataError(
                f"{path}: states {rows:,} rows in {size:,} bytes (more rows than bytes: "
                "repeated rows, not GQA's questions); fetch the config again"
            )
    try:
        check_parquets(paths, what="GQA's data")
    except UnreadableFile as exc:
        raise DataError(f"{exc}; fetch it again") from None


def _parquet_ids(pq: Any, path: Path) -> Iterator[str]:
    """The ``imageId`` of each question of one instructions file (none: no such column)."""
    with _readable(path):
        parquet = pq.ParquetFile(path)
        if "imageId" not in parquet.schema_arrow.names:
            return  # each row is then refused as having no image, naming its line
        for batch in parquet.iter_batches(batch_size=_BATCH, columns=["imageId"]):
            yield from (str(value) for value in batch.column(0).to_pylist())


def _parquet_images(pq: Any, path: Path, wanted: set[str]) -> dict[str, Any]:
    """The images of one images file whose ids are `wanted`, by id (the first of each id)."""
    from lmmprobe.data.base import DataError

    found: dict[str, Any] = {}
    with _readable(path):
        parquet = pq.ParquetFile(path)
        if not {"id", "image"} <= set(parquet.schema_arrow.names):
            raise DataError(f"{path}: an images file needs the columns id and image")
        for batch in parquet.iter_batches(batch_size=_BATCH, columns=["id", "image"]):
            ids = [str(value) for value in batch.column(0).to_pylist()]
            keep = [i for i, key in enumerate(ids) if key in wanted and key not in found]
            if keep:  # only the images asked for are converted into Python
                pictures = batch.column(1).take(keep).to_pylist()
                found.update((ids[i], picture) for i, picture in zip(keep, pictures, strict=True))
    return found


def _parquet_rows(pq: Any, path: Path) -> Iterator[dict[str, Any]]:
    """The rows of one parquet file (checked by `_check_parquet`), a batch at a time.

    Raises:
        lmmprobe.data.base.DataError: pyarrow cannot read it; one line naming the file.

    """
    with _readable(path):
        parquet = pq.ParquetFile(path)
        for batch in parquet.iter_batches(batch_size=_BATCH):
            yield from batch.to_pylist()


@contextmanager
def _readable(path: Path) -> Iterator[None]:
    """Errors of pyarrow and the file system within the block, as one line naming `path`."""
    import pyarrow as pa

    from lmmprobe.data.base import DataError

    try:
        yield
    except (pa.ArrowException, OSError) as exc:  # pyarrow's messages name no file
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"{path}: not a readable parquet file ({first}); fetch it again") from None
    except UnicodeDecodeError:  # pyarrow decodes the schema's names as it opens the file
        raise DataError(
            f"{path}: not a readable parquet file (a column name that is not UTF-8); fetch it again"
        ) from None


def _gqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    if row.get("image") is None:
        raise RowError("imageId", f"image {row.get('imageId')!r} is not in {GQA_IMAGES}")
    return open_sample(
        row_id(row, "id"),
        row,
        ctx,
        required_text(row, "question"),
        [required_text(row, "answer")],
        "open_ended",
        image_id=row.get("imageId"),
        full_answer=row.get("fullAnswer"),
    )


GQA_REVISION = "a6e72d6e1b912da88af8b2f9eba05d5ea8ec2dd8"

GQA = benchmark(
    Benchmark(
        name="gqa",
        title="GQA (testdev, balanced)",
        citation="Hudson and Manning 2019, GQA: A New Dataset for Real-World Visual Reasoning "
        "and Compositional Question Answering. CVPR 2019, arXiv:1902.09506",
        license="mit (lmms-lab/GQA card)",
        formulation="open_ended",
        metric="gqa_exact_match",
        prompt=PromptTemplate(
            template="{question}" + SHORT_ANSWER,
            source=lmms_source("gqa/gqa.yaml (post_prompt) + utils.py gqa_doc_to_text"),
        ),
        to_sample=_gqa,
        include=("testdev_balanced_*",),
        split="testdev",
        splits=("testdev",),
        hub_id="lmms-lab/GQA",
        revision=GQA_REVISION,
        size=12578,
        layout="files",
        read_files=read_gqa_snapshot,
        hemm="GQA",
        reform="visually grounded reasoning",
        notes=(
            "Questions and images are two configs of lmms-lab/GQA "
            "(testdev_balanced_instructions, testdev_balanced_images) joined on imageId, as "
            "lmms-eval joins them. The fetch command takes both; without a local copy, the "
            "hub cache's snapshot is read, and online the same two configs are downloaded "
            "into it. Scored by exact match ignoring case and punctuation against the short "
            "answer, as lmms-eval's gqa task.",
            "The pinned revision a6e72d6 is the commit public evaluation code pins for "
            "lmms-lab/GQA (read offline: whether main has moved since could not be asked).",
            LMMS_ENCODER.format(repo="GQA"),
        ),
        # The images config (id, image) is on the card; of the instructions config only the
        # columns lmms-eval reads (id, imageId, question, answer) and fullAnswer were seen.
        schema_confirmed="",
    )
)
