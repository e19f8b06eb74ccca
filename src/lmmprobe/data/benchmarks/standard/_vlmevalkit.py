r"""Reading VLMEvalKit's TSV benchmark files, as VLMEvalKit reads them, for the definitions built on them.

VLMEvalKit (open-compass/VLMEvalKit @ e8e78f0) publishes each image benchmark it runs as one TSV
file (``vlmeval/dataset/image_mcq.py``: ``DATASET_URL``, ``DATASET_MD5``). Reading follows
``vlmeval/smp/file.py`` ``load`` (``pandas.read_csv(sep='\t')``, so a cell reading ``None``,
``NA`` or ``nan`` is missing, as there) and ``ImageBaseDataset.__init__``: a row without an image
is left out, an ``image`` cell of at most 64 characters names the row whose image it shares
(MMBench's circular copies), and a cell ``['...', '...']`` holds several images, asked in order.
The table of choice benchmarks (`vlmevalkit_tsv`) and the benchmarks scored their own way on
such files (MMVP's pairs...) share it.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import PromptTemplate, RowContext, RowError, as_index, image_ref
from lmmprobe.data.benchmarks._fetch import local_dir_word
from lmmprobe.data.benchmarks.standard._choice import plain, present
from lmmprobe.schema import ImageRef, Sample

VLMEVALKIT = "open-compass/VLMEvalKit@e8e78f05f3080fe28154f2130321f17951c3be94"
SERVER = "https://opencompass.openxlab.space/utils"
CIRCULAR_BASE = 1_000_000
"""VLMEvalKit groups the circular copies of question ``i`` as ``index % 1e6`` (``g_index``)."""

_REF_CHARS = 64  # ImageBaseDataset: an image cell this short names another row
_CHUNK_ROWS = 256  # rows per pandas chunk: a chunk of base64 images stays tens of megabytes
# VLMEvalKit writes several images as a Python list of base64 strings; base64 has no quote, so
# the cell is read with this pattern (linear, no eval) instead of VLMEvalKit's `eval`.
_B64 = r"'[A-Za-z0-9+/=\s]*'"
_IMAGE_LIST = re.compile(rf"\[\s*{_B64}(?:\s*,\s*{_B64})*\s*,?\s*\]")
_ONE_B64 = re.compile(_B64)

PROMPT = PromptTemplate(
    template="{context}Question: {question}\nOptions:\n{options}\n"
    "Please select the correct answer from the options above. \n",
    source=VLMEVALKIT + ":vlmeval/dataset/image_mcq.py (ImageMCQDataset.build_prompt)",
    option_format="{mark}. {text}",
    option_sep="\n",
    context_format="Hint: {context}\n",
)
"""``build_prompt``: ``Hint: `` line where the row has one, ``Question: ``, ``Options:`` and
one ``X. text`` line per option, then the instruction (its trailing space and newline kept)."""


def tsv_path(root: Path, dataset: str) -> Path:
    """The TSV of `dataset` in a copy: ``root/DATASET.tsv``, or `root` itself if it is a file."""
    return root if root.is_file() else root / f"{dataset}.tsv"


def _chunks(path: Path, columns: list[str] | None = None) -> Iterator[Any]:
    """The TSV's rows as pandas data frames of `_CHUNK_ROWS` rows.

    Raises:
        DataError: pandas cannot read the file as a TSV (a line with too many fields, a
            missing ``index`` or ``image`` column, bytes that are not UTF-8), naming the file.

    """
    import pandas as pd  # type: ignore[import-untyped]  # imported when a copy is read

    # VLMEvalKit's own reading (pd.read_csv(f, sep='\t')), in chunks so memory stays bounded
    # by the chunk, whatever the file's size; a missing cell is NaN under pandas' default
    # missing-value words, as there. Departure: every value is kept as the text written, where
    # VLMEvalKit's whole-file type inference may turn an all-number column into numbers (an
    # option "1.50" shown as "1.5"); per-chunk inference would differ from both.
    try:
        yield from pd.read_csv(
            path, sep="\t", dtype=str, usecols=columns, chunksize=_CHUNK_ROWS, engine="c"
        )
    except ValueError as exc:  # pandas' ParserError and UnicodeDecodeError are ValueErrors
        raise DataError(f"{path}: not a TSV VLMEvalKit's reading reads: {exc}") from exc


def image_cell(value: Any) -> str:
    return str(value) if present(value) else ""


def read_tsv(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The rows of a VLMEvalKit TSV, each image reference replaced by the image it names.

    Two passes, each in chunks: the first finds the rows whose image others share (a cell of at
    most 64 characters names such a row's index); the second gives each row, keeping only
    those rows' images in memory. A row naming a row further down waits for it.

    Yields:
        ``(where, row)``: ``PATH:N`` (N: the row's number, the header being 1; a row whose
        cell holds a line break still counts once) and the row.

    Raises:
        DataError: pandas cannot read the file (see `_chunks`). A reference to a missing row
            is not raised here: the row reader reports it as that row's problem.

    """
    shared: set[str] = set()
    for chunk in _chunks(path, ["index", "image"]):
        for cell in chunk["image"]:
            text = image_cell(cell)
            if 0 < len(text) <= _REF_CHARS:
                shared.add(text.strip())
    kept: dict[str, str] = {}
    waiting: list[tuple[str, dict[str, Any]]] = []
    line = 1
    for chunk in _chunks(path):
        for row in chunk.to_dict("records"):
            line += 1
            where = f"{path}:{line}"
            index = str(row.get("index"))
            image = image_cell(row.get("image"))
            if index in shared and len(image) > _REF_CHARS:
                kept[index] = image
            if 0 < len(image) <= _REF_CHARS:
                target = image.strip()
                if target not in kept:
                    waiting.append((where, row))
                    continue
                row["image"] = kept[target]
            yield where, row
    for where, row in waiting:
        target = image_cell(row.get("image")).strip()
        row["image"] = kept.get(target, f"<no row {target}>")
        yield where, row


def tsv_images(value: Any, ctx: RowContext) -> list[ImageRef]:
    """The images an ``image`` cell holds (after `read_tsv`), in order."""
    text = image_cell(value)
    if text.startswith("<no row "):
        raise RowError("image", f"names {text[8:-1]!r}, which is no row with an image")
    if text.startswith("["):
        if _IMAGE_LIST.fullmatch(text) is None:
            raise RowError("image", "starts with '[' but is not a list of base64 images")
        cells = [m.group(0)[1:-1] for m in _ONE_B64.finditer(text)]
        return [image_ref(c, ctx, f"image[{i}]") for i, c in enumerate(cells)]
    return [image_ref(text, ctx)]


def choice_sample(
    row: Mapping[str, Any],
    ctx: RowContext,
    columns: Sequence[str] = (),
    metadata: Mapping[str, Any] | None = None,
) -> Sample | None:
    """A VLMEvalKit TSV row as a choice sample (None: a row without an image, left out).

    Args:
        row: The row (`read_tsv`).
        ctx: Its context.
        columns: TSV columns kept as metadata (``l2-category`` as ``l2_category``).
        metadata: More metadata.

    Raises:
        RowError: A bad index, options not A, B[, C...] in order, a bad image or answer.

    """
    if not image_cell(row.get("image")):
        return None  # ImageBaseDataset(skip_noimg=True) leaves rows without an image out
    raw = str(row.get("index", "")).strip()
    try:
        index = int(raw)
    except ValueError as exc:
        raise RowError("index", f"expected an integer, got {raw!r}") from exc
    # VLMEvalKit shows every letter column holding a value (build_choices), in order.
    letters = [c for c in string.ascii_uppercase if present(row.get(c))]
    if len(letters) < 2 or letters != list(string.ascii_uppercase[: len(letters)]):
        raise RowError("A", f"options must be A, B[, C...] in order; this row has {letters}")
    choices = [str(row[c]) for c in letters]
    hint = row.get("hint")
    meta: dict[str, Any] = {"index": index, "n_options": len(choices), **(metadata or {})}
    for column in columns:
        meta[column.replace("-", "_")] = plain(row.get(column))
    return Sample(
        id=str(index),
        images=tsv_images(row.get("image"), ctx),
        question=str(row["question"]) if present(row.get("question")) else "",
        choices=choices,
        answer=as_index(str(row.get("answer", "")).strip(), choices),
        formulation="single_choice",
        context=str(hint) if present(hint) else None,
        metadata=meta,
    )


def tsv_file(root: Path, dataset: str) -> Path:
    """The copy's ``DATASET.tsv`` (`root` itself if it is that file); OSError if it is missing."""
    path = tsv_path(root, dataset)
    if not path.is_file():
        raise FileNotFoundError(f"no {dataset}.tsv in {root}")
    return path


def fetch_command(name: str, files: Sequence[tuple[str, str, str]]) -> str:
    """The command fetching ``(dataset, url, md5)`` files into ``$LMMPROBE_DATA_DIR/NAME``, checked."""
    steps = [f"mkdir -p {local_dir_word(name)}"]
    for dataset, url, md5 in files:
        steps.append(f"wget -O {local_dir_word(f'{name}/{dataset}.tsv')} {url}")
        steps.append(f'echo "{md5}  $LMMPROBE_DATA_DIR/{name}/{dataset}.tsv" | md5sum -c -')
    return " && ".join(steps)
