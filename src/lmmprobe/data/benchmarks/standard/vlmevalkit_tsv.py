"""The VLMEvalKit-TSV choice benchmarks: one table, a row per benchmark (MMBench v1.1, CCBench...).

These benchmarks differ only in configuration: each is one TSV file VLMEvalKit publishes
(open-compass/VLMEvalKit @ e8e78f0, ``vlmeval/dataset/image_mcq.py`` ``ImageMCQDataset``:
``DATASET_URL`` and ``DATASET_MD5``), read the same way (`_vlmevalkit`), asked with
``ImageMCQDataset.build_prompt`` (or the row's own: MuirBench's ``MUIRDataset.build_prompt``)
and scored by the same code (``evaluate_heuristic``: CircularEval for
the names holding ``mmbench`` or ``ccbench``, ``mcq_vanilla_eval`` otherwise; ``report_acc``'s
breakdowns). So they are rows of `TABLE` (name, title, file, checksum, breakdown columns,
protocol), not a file each (docs/benchmarks.md, "Where shared benchmark code lives"); a
benchmark with its own reading or scoring (MMVP's pairs, CV-Bench's 2D/3D average) is its own
file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, RowContext, benchmark
from lmmprobe.data.benchmarks.standard._vlmevalkit import (
    CIRCULAR_BASE,
    PROMPT,
    SERVER,
    VLMEVALKIT,
    choice_sample,
    fetch_command,
    read_tsv,
    tsv_file,
)
from lmmprobe.schema import Sample
from lmmprobe.schema.text import ascii_integer

__all__ = ["TABLE", "TABLE_DEFINITIONS", "TsvChoice"]


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
        groups: ``data list``'s facets it belongs to (``chinese``, ``multi-image``).
        prompt: The dataset's ``build_prompt`` (``ImageMCQDataset``'s unless its class has its own).
        image_tags: The question marks where each image goes with ``<image>`` (MUIRBench):
            VLMEvalKit's ``split_MUIR`` puts the images there and drops the tags; lmmprobe asks
            the images in order before the text, so the tags are dropped from the question.

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
    groups: tuple[str, ...] = ()
    prompt: PromptTemplate = PROMPT
    image_tags: bool = False


_MMBENCH = "Liu et al. 2024, MMBench: Is Your Multi-modal Model an All-around Player? ECCV 2024, arXiv:2307.06281"

_MMT = (
    "Ying et al. 2024, MMT-Bench: A Comprehensive Multimodal Benchmark for Evaluating Large "
    "Vision-Language Models Towards Multitask AGI, ICML 2024, arXiv:2404.16006"
)
_MMT_L2 = (
    "Overall and --by category (its 162 subtasks) equal report_acc_MMT's figures; its "
    "meta-task figures average their subtasks' accuracies: --by l2_category gives them as "
    "mmt_meta_task_accuracy, beside vlmevalkit_accuracy (the mean over the meta-task's "
    "questions)."
)

_MUIR_PROMPT = PromptTemplate(
    template="{question}\n{options}\nAnswer with the option's letter from the given choices directly.",
    source=VLMEVALKIT + ":vlmeval/dataset/image_mcq.py (MUIRDataset.build_prompt)",
    option_format="{mark}. {text}",
    option_sep="\n",
)
"""MUIRBench's ``build_prompt``: the question, one ``X. text`` line per option, the instruction
(no hint line, no ``Options:`` header)."""

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
        groups=("chinese",),
        dataset="MMBench_DEV_CN_V11",
        title="MMBench v1.1 (dev, Chinese)",
        citation=_MMBENCH,
        md5="593f9b5f6bea453d870a798b34ae4f37",
        url=f"{SERVER}/benchmarks/MMBench/MMBench_DEV_CN_V11.tsv",
        circular=True,
    ),
    TsvChoice(
        name="mmbench-cn",
        groups=("chinese",),
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
        groups=("chinese",),
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
        groups=("multi-image",),
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
    TsvChoice(
        name="muirbench",
        groups=("multi-image",),
        dataset="MUIRBench",
        title="MuirBench (multi-image understanding)",
        citation="Wang et al. 2025, MuirBench: A Comprehensive Benchmark for Robust Multi-image "
        "Understanding, ICLR 2025, arXiv:2406.09411",
        md5="2e5e6fd7699761b08a7cb3ab8c0c2ec8",
        url=f"{SERVER}/VLMEval/MUIRBench.tsv",
        size=2600,
        split="test",
        license="unknown (see the MUIRBench/MUIRBench card)",
        prompt=_MUIR_PROMPT,
        image_tags=True,
        notes=(
            "VLMEvalKit's MUIRDataset: its own prompt (build_prompt), ImageMCQDataset's scoring "
            "(mcq_vanilla_eval, report_acc); the paper's per-task figures are --by category.",
            "Departure: VLMEvalKit places each image at its <image> tag in the question "
            "(split_MUIR); lmmprobe asks a question's images in order before its text, the "
            "tags dropped (the text is otherwise the same).",
        ),
    ),
    TsvChoice(
        name="vstar",
        dataset="VStarBench",
        title="V* Bench (high-resolution visual search)",
        citation="Wu and Xie 2024, V*: Guided Visual Search as a Core Mechanism in Multimodal "
        "LLMs, CVPR 2024, arXiv:2312.14135",
        md5="b18854d7075574be06b631cd5f7d2d6a",
        url="https://huggingface.co/datasets/xjtupanda/VStar_Bench/resolve/main/VStarBench.tsv",
        size=191,
        split="test",
        license="mit (craigwu/vstar_bench card)",
        notes=(
            "VLMEvalKit's VStarBench file: ImageMCQDataset's prompt and scoring; the paper's "
            "attribute and spatial figures are --by category (direct_attributes, "
            "relative_position).",
        ),
    ),
)
"""The VLMEvalKit-TSV choice benchmarks: a benchmark of this kind is a row here."""


def _reader(entry: TsvChoice) -> Any:
    def to_sample(row: Mapping[str, Any], ctx: RowContext) -> Sample | None:
        if entry.image_tags and isinstance(row.get("question"), str):
            # split_MUIR drops the tags; the text between them reaches the model unchanged.
            row = {**row, "question": "".join(row["question"].split("<image>"))}
        # CircularEval groups the copies of question i by index % 1e6 (g_index). An index in
        # ASCII digits only: "²" passes isdigit() and int() refuses it, "٣" is no index.
        index = ascii_integer(str(row.get("index", "")).strip())
        extra = (
            {"circular_index": index % CIRCULAR_BASE}
            if entry.circular and index is not None
            else {}
        )
        return choice_sample(row, ctx, entry.breakdown, extra)

    return to_sample


def _files(entry: TsvChoice) -> Any:
    def read(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
        yield from read_tsv(tsv_file(root, entry.dataset))

    return read


def _fetch(entry: TsvChoice) -> str:
    return fetch_command(entry.name, [(entry.dataset, entry.url, entry.md5)])


def _definition(entry: TsvChoice) -> Benchmark:
    protocol = (
        "The official score is VLMEvalKit's CircularEval (mmbench_circular): the file holds "
        "each question once per rotation of its options (index i, i+1e6, ...), and a question "
        "counts only if every copy is right."
        if entry.circular
        else "The official score is VLMEvalKit's accuracy (mcq_vanilla_eval)."
    )
    by = ", ".join(f"--by {c.replace('-', '_')}" for c in entry.breakdown)
    return Benchmark(
        name=entry.name,
        title=entry.title,
        citation=entry.citation,
        license=entry.license,
        formulation="single_choice",
        metric="mmbench_circular" if entry.circular else "vlmevalkit_accuracy",
        prompt=entry.prompt,
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
            f"report_acc's breakdowns: {by}.",
            f"Data: VLMEvalKit's {entry.dataset}.tsv, pinned by its md5 {entry.md5} (VLMEvalKit's "
            "DATASET_MD5; the server keeps no revisions, the fetch command checks it).",
            *entry.notes,
        ),
        circular=entry.circular,
        groups=entry.groups,
        schema_confirmed=VLMEVALKIT[:36] + " image_mcq.py build_prompt/evaluate_heuristic and "
        "image_base.py (index, question, hint, A-Z, answer, category, l2-category, image)",
    )


TABLE_DEFINITIONS: tuple[Benchmark, ...] = tuple(benchmark(_definition(e)) for e in TABLE)
"""The registered definitions, one per row of `TABLE`."""
