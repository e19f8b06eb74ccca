r"""The VLMEvalKit-TSV choice benchmarks: one table, a row per benchmark (MMBench v1.1, CCBench...).

These benchmarks differ only in configuration: each is one TSV file VLMEvalKit publishes
(open-compass/VLMEvalKit @ e8e78f0, ``vlmeval/dataset/image_mcq.py`` ``ImageMCQDataset``:
``DATASET_URL`` and ``DATASET_MD5``), read the same way, asked with the same prompt
(``build_prompt``) and scored by the same code (``evaluate_heuristic``: CircularEval for the
names holding ``mmbench`` or ``ccbench``, ``mcq_vanilla_eval`` otherwise; ``report_acc``'s
breakdowns). So they are rows of `TABLE` (name, title, file, checksum, breakdown columns,
protocol), not a file each (docs/benchmarks.md, "Where shared benchmark code lives"); a
benchmark with its own reading or scoring (MMVP's pairs, CV-Bench's 2D/3D average) is its own
file.

Reading follows ``vlmeval/smp/file.py`` ``load`` (``pandas.read_csv(sep='\\t')``, so a cell
reading ``None``, ``NA`` or ``nan`` is missing, as there) and ``ImageBaseDataset.__init__``: an
``image`` cell of at most 64 characters names the row whose image it shares (MMBench's circular
copies), and a cell ``['...', '...']`` holds several images, asked in order.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    as_index,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._fetch import local_dir_word
from lmmprobe.data.benchmarks.standard._choice import plain, present
from lmmprobe.schema import Sample

__all__ = ["TABLE", "TABLE_DEFINITIONS", "TsvChoice", "read_tsv"]

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


@dataclass(frozen=True)
class TsvChoice:
    """One row of the table: a VLMEvalKit TSV choice benchmark.

    Attributes:
        name: The ``--data`` name.
        dataset: VLMEvalKit's dataset name (the TSV is ``DATASET.tsv``).
        title: Display title.
        citation: The paper.
        md5: VLMEvalKit's ``DATASET_MD5`` for the file: the pin (the server has no revisions).
        size: Rows of the file, where known (VLMEvalKit's code does not say).
        url: Where VLMEvalKit downloads it (``DATASET_URL``).
        circular: VLMEvalKit scores it with CircularEval (its name holds mmbench or ccbench).
        breakdown: The TSV columns ``report_acc`` breaks the score down by, kept as metadata.
        split: The split the file holds.
        license: From the benchmark's release.
        notes: Sentences ``data show`` prints.

    """

    name: str
    dataset: str
    title: str
    citation: str
    md5: str
    url: str
    size: int | None = None
    circular: bool = False
    breakdown: tuple[str, ...] = ("category", "l2-category")
    split: str = "dev"
    license: str = "unknown (see the benchmark's release)"
    notes: tuple[str, ...] = ()


_MMBENCH = "Liu et al. 2024, MMBench: Is Your Multi-modal Model an All-around Player? ECCV 2024, arXiv:2307.06281"

_MMT = (
    "Ying et al. 2024, MMT-Bench: A Comprehensive Multimodal Benchmark for Evaluating Large "
    "Vision-Language Models Towards Multitask AGI, ICML 2024, arXiv:2404.16006"
)
_MMT_L2 = (
    "Overall and --by category (its 162 subtasks) equal report_acc_MMT's figures; its "
    "meta-task figures average their subtasks' accuracies, which --by l2_category (the mean "
    "over the meta-task's questions) does not: lmmprobe does not compute them."
)

TABLE: tuple[TsvChoice, ...] = (
    TsvChoice(
        name="mmbench-v11-en",
        dataset="MMBench_DEV_EN_V11",
        title="MMBench v1.1 (dev, English)",
        citation=_MMBENCH,
        md5="30c05be8f2f347a50be25aa067248184",
        url=f"{SERVER}/benchmarks/MMBench/MMBench_DEV_EN_V11.tsv",
        circular=True,
    ),
    TsvChoice(
        name="mmbench-v11-cn",
        dataset="MMBench_DEV_CN_V11",
        title="MMBench v1.1 (dev, Chinese)",
        citation=_MMBENCH,
        md5="593f9b5f6bea453d870a798b34ae4f37",
        url=f"{SERVER}/benchmarks/MMBench/MMBench_DEV_CN_V11.tsv",
        circular=True,
    ),
    TsvChoice(
        name="mmbench-cn",
        dataset="MMBench_DEV_CN",
        title="MMBench v1.0 (dev, Chinese)",
        citation=_MMBENCH,
        md5="08b8fc3324a5ed74155350f57be69fbd",
        size=4329,
        url=f"{SERVER}/benchmarks/MMBench/MMBench_DEV_CN.tsv",
        circular=True,
        notes=(
            "The English v1.0 dev set is `mmbench` (lmms-lab/MMBench's en config as lmms-eval "
            "reads and asks it).",
        ),
    ),
    TsvChoice(
        name="ccbench",
        dataset="CCBench",
        title="CCBench (Chinese culture, MMBench family)",
        citation=_MMBENCH + " (CCBench: its Chinese-culture set)",
        md5="f5dde47f24dc5a6fb6e595b409b466ac",
        url=f"{SERVER}/VLMEval/CCBench.tsv",
        circular=True,
        split="test",
    ),
    TsvChoice(
        name="seedbench2-plus",
        dataset="SEEDBench2_Plus",
        title="SEED-Bench-2-Plus (text-rich images)",
        citation="Li et al. 2024, SEED-Bench-2-Plus: Benchmarking Multimodal Large Language "
        "Models with Text-Rich Visual Comprehension, arXiv:2404.16790",
        md5="e32d3216dc4f452b0fe497a52015d1fd",
        url=f"{SERVER}/benchmarks/SEEDBench/SEEDBench2_Plus.tsv",
        split="test",
        license="cc-by-nc-4.0 (AILab-CVC/SEED-Bench-2-plus card)",
    ),
    TsvChoice(
        name="mmt-bench",
        dataset="MMT-Bench_VAL",
        title="MMT-Bench (val; several images joined into one)",
        citation=_MMT,
        md5="8dd4b730f53dbf9c3aed90ca31c928e0",
        url=f"{SERVER}/benchmarks/MMT-Bench/MMT-Bench_VAL.tsv",
        split="val",
        notes=(
            "The OpenVLM leaderboard's MMT-Bench column (VLMEvalKit's maintainers, "
            "open-compass/VLMEvalKit#223): a question with several images has them joined into "
            "one; `mmt-bench-mi` asks them separately.",
            _MMT_L2,
        ),
    ),
    TsvChoice(
        name="mmt-bench-mi",
        dataset="MMT-Bench_VAL_MI",
        title="MMT-Bench (val; several images asked separately)",
        citation=_MMT,
        md5="c7d7b998eb5cd9aa36c7d4f721472462",
        url=f"{SERVER}/benchmarks/MMT-Bench/MMT-Bench_VAL_MI.tsv",
        split="val",
        notes=(
            "The same questions as `mmt-bench`, each image of a question asked in order "
            "(VLMEvalKit's _MI file); no leaderboard reports it on its own.",
            _MMT_L2,
        ),
    ),
)
"""The VLMEvalKit-TSV choice benchmarks: a benchmark of this kind is a row here."""


def tsv_path(root: Path, dataset: str) -> Path:
    """The TSV of `dataset` in a copy: ``root/DATASET.tsv``, or `root` itself if it is a file."""
    return root if root.is_file() else root / f"{dataset}.tsv"


def _chunks(path: Path, columns: list[str] | None = None) -> Iterator[Any]:
    """The TSV's rows as pandas data frames of `_CHUNK_ROWS` rows."""
    import pandas as pd  # type: ignore[import-untyped]  # imported when a copy is read

    # VLMEvalKit's own reading (pd.read_csv(f, sep='\t')), in chunks so memory stays bounded
    # by the chunk, whatever the file's size; a missing cell is NaN under pandas' default
    # missing-value words, as there. Departure: every value is kept as the text written, where
    # VLMEvalKit's whole-file type inference may turn an all-number column into numbers (an
    # option "1.50" shown as "1.5"); per-chunk inference would differ from both.
    yield from pd.read_csv(
        path, sep="\t", dtype=str, usecols=columns, chunksize=_CHUNK_ROWS, engine="c"
    )


def _image_cell(value: Any) -> str:
    return str(value) if present(value) else ""


def read_tsv(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The rows of a VLMEvalKit TSV, each image reference replaced by the image it names.

    Two passes, each in chunks: the first finds the rows whose image others share (a cell of at
    most 64 characters names such a row's index); the second gives each row, keeping only
    those rows' images in memory. A row naming a row further down waits for it.

    Yields:
        ``(where, row)``: ``PATH:LINE`` (the row's 1-based line after the header) and the row.

    Raises:
        RowError: Never here; a reference to a missing row is reported by the row reader.

    """
    shared: set[str] = set()
    for chunk in _chunks(path, ["index", "image"]):
        for cell in chunk["image"]:
            text = _image_cell(cell)
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
            image = _image_cell(row.get("image"))
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
        target = _image_cell(row.get("image")).strip()
        row["image"] = kept.get(target, f"<no row {target}>")
        yield where, row


def _images(value: Any, ctx: RowContext) -> list[Any]:
    text = _image_cell(value)
    if text.startswith("<no row "):
        raise RowError("image", f"names {text[8:-1]!r}, which is no row with an image")
    if text.startswith("["):
        if _IMAGE_LIST.fullmatch(text) is None:
            raise RowError("image", "starts with '[' but is not a list of base64 images")
        cells = [m.group(0)[1:-1] for m in _ONE_B64.finditer(text)]
        return [image_ref(c, ctx, f"image[{i}]") for i, c in enumerate(cells)]
    return [image_ref(text, ctx)]


def _reader(entry: TsvChoice) -> Any:
    def to_sample(row: Mapping[str, Any], ctx: RowContext) -> Sample | None:
        if not _image_cell(row.get("image")):
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
        metadata: dict[str, Any] = {"index": index, "n_options": len(choices)}
        if entry.circular:
            metadata["circular_index"] = index % CIRCULAR_BASE
        for column in entry.breakdown:
            metadata[column.replace("-", "_")] = plain(row.get(column))
        return Sample(
            id=str(index),
            images=_images(row.get("image"), ctx),
            question=str(row["question"]) if present(row.get("question")) else "",
            choices=choices,
            answer=as_index(str(row.get("answer", "")).strip(), choices),
            formulation="single_choice",
            context=str(hint) if present(hint) else None,
            metadata=metadata,
        )

    return to_sample


def _files(entry: TsvChoice) -> Any:
    def read(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
        path = tsv_path(root, entry.dataset)
        if not path.is_file():
            raise FileNotFoundError(f"no {entry.dataset}.tsv in {root}")
        yield from read_tsv(path)

    return read


def _fetch(entry: TsvChoice) -> str:
    folder = local_dir_word(entry.name)
    file = local_dir_word(f"{entry.name}/{entry.dataset}.tsv")
    return (
        f"mkdir -p {folder} && curl -fL -o {file} {entry.url} && "
        f'echo "{entry.md5}  $LMMPROBE_DATA_DIR/{entry.name}/{entry.dataset}.tsv" | md5sum -c -'
    )


def _definition(entry: TsvChoice) -> Benchmark:
    protocol = (
        "The official score is VLMEvalKit's CircularEval (mmbench_circular): the file holds "
        "each question once per rotation of its options (index i, i+1e6, ...), and a question "
        "counts only if every copy is right."
        if entry.circular
        else "The official score is VLMEvalKit's accuracy (mcq_vanilla_eval)."
    )
    by = ", ".join(c.replace("-", "_") for c in entry.breakdown)
    return Benchmark(
        name=entry.name,
        title=entry.title,
        citation=entry.citation,
        license=entry.license,
        formulation="single_choice",
        metric="mmbench_circular" if entry.circular else "vlmevalkit_accuracy",
        prompt=PROMPT,
        to_sample=_reader(entry),
        fetch=_fetch(entry),
        split=entry.split,
        splits=(entry.split,),
        size=entry.size,
        layout="files",
        read_files=_files(entry),
        matcher="vlmevalkit",
        judge="mmbench-choice",
        notes=(
            protocol,
            "Answers are read by VLMEvalKit's rules (matcher vlmevalkit: its can_infer); an "
            "answer they cannot read is wrong, as under VLMEvalKit's exact_matching policy. "
            "With --judge SPEC the rules come first and the judge's matching prompt reads the "
            "rest (mmbench-choice), as VLMEvalKit's default; an answer the judge cannot match "
            "is unjudged and wrong (VLMEvalKit guesses a random option).",
            f"report_acc's breakdowns: --by {by}.",
            f"Data: VLMEvalKit's {entry.dataset}.tsv, pinned by its md5 {entry.md5} (VLMEvalKit's "
            "DATASET_MD5; the server keeps no revisions, the fetch command checks it).",
            *entry.notes,
        ),
        circular=entry.circular,
        schema_confirmed=VLMEVALKIT[:36] + " image_mcq.py build_prompt/evaluate_heuristic and "
        "image_base.py (index, question, hint, A-Z, answer, category, l2-category, image)",
    )


TABLE_DEFINITIONS: tuple[Benchmark, ...] = tuple(benchmark(_definition(e)) for e in TABLE)
"""The registered definitions, one per row of `TABLE`."""
