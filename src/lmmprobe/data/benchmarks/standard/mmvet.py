"""MM-Vet: the ``mmvet`` benchmark definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
)
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.standard._open import open_sample, row_id
from lmmprobe.schema import Sample

__all__ = ["MMVET"]


def _mmvet(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    capability = row.get("capability")
    if (
        not isinstance(capability, list)
        or not capability
        or not all(isinstance(c, str) for c in capability)
    ):
        raise RowError("capability", f"expected a list of capability names, got {capability!r}")
    return open_sample(
        row_id(row, "question_id"),
        row,
        ctx,
        required_text(row, "question"),
        # One ground truth, <AND>/<OR> kept: the grader's prompt spaces them out.
        [required_text(row, "answer")],
        "open_ended",
        capability=list(capability),
        image_source=row.get("image_source"),
    )


MMVET = benchmark(
    Benchmark(
        name="mmvet",
        title="MM-Vet",
        citation="Yu et al. 2024, MM-Vet: Evaluating Large Multimodal Models for Integrated "
        "Capabilities, ICML 2024, arXiv:2308.02490",
        license="unknown (see card)",
        formulation="open_ended",
        metric="mmvet_score",
        prompt=PromptTemplate(
            template="{question}",
            source="yuweihao/MM-Vet inference/utils.py @ acde843 (the question alone)",
        ),
        to_sample=_mmvet,
        split="test",
        splits=("test",),
        hub_id="lmms-lab/MMVet",
        revision=None,
        size=218,
        judge="mmvet-grade",
        notes=(
            "Scored by a judge only: run with --judge SPEC. mmvet_score is MM-Vet's grader "
            "(mmvet-grade: its few-shot 0-1 prompt, 5 runs as in the paper) averaged per run "
            "and over runs, in points; mmvet_rec, mmvet_ocr, mmvet_know, mmvet_gen, mmvet_spat "
            "and mmvet_math give each capability's score, --by capability each capability "
            "combination's. Without a judge there is no score.",
            "The prompt is the question alone, as MM-Vet's own inference scripts send it; "
            "lmms-eval's mmvet task adds a 'think step by step' pre-prompt, not used here.",
            "Revision not pinned: no public source read offline gives the hub commit of "
            "lmms-lab/MMVet (lmms-eval's task now loads the identical copy "
            "lmms-lab-encoder/MMVet), so the data is read from main.",
        ),
        schema_confirmed="lmms-eval lmms_eval/tasks/mmvet/mmvet.yaml + utils.py @ 75571cf "
        "(question_id, image, question, answer, capability list; split test)",
    )
)
