"""OCRBench: the ``ocrbench`` benchmark definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    benchmark,
)
from lmmprobe.data.benchmarks._lmms import (
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._open import answer_texts, open_sample
from lmmprobe.schema import Sample

__all__ = ["OCRBENCH", "OCRBENCH_REVISION"]


def _ocrbench(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    category = required_text(row, "question_type")
    # lmms-eval strips the question and adds nothing to it.
    return open_sample(
        f"{ctx.split}-{ctx.index}",
        row,
        ctx,
        required_text(row, "question").strip(),
        answer_texts(row, "answer"),
        "ocr",
        question_type=category,
        dataset=required_text(row, "dataset"),
    )


OCRBENCH_REVISION = "92a54bd1384387c178d5a07140a2d85e0a3d12e1"

OCRBENCH = benchmark(
    Benchmark(
        name="ocrbench",
        title="OCRBench",
        citation="Liu et al. 2023, OCRBench: On the Hidden Mystery of OCR in Large Multimodal "
        "Models. arXiv:2305.07895",
        license="unknown (see card)",
        formulation="ocr",
        metric="ocrbench_score",
        prompt=PromptTemplate(
            template="{question}",
            source=lmms_source(
                "ocrbench/ocrbench.yaml (no pre/post prompt) + utils.py "
                "ocrbench_doc_to_text (question.strip())"
            ),
        ),
        to_sample=_ocrbench,
        split="test",
        splits=("test",),
        hub_id="echo840/OCRBench",
        revision=OCRBENCH_REVISION,
        size=1000,
        reform="scene text perception",
        notes=(
            "Score in points out of 1,000: a question scores 1 when a reference occurs in the "
            "answer (lowercased; HME100k formulas compared without spaces), as OCRBench's "
            "example.py scores it; --by question_type gives its ten category totals. lmms-eval's "
            "copy also folds full-width characters, which OCRBench's own code does not.",
            "The pinned revision 92a54bd is the repository's current main as the hub's file "
            "listing shows it (read offline); it changed only README.md since 276bd0b, where "
            "the schema was confirmed: the data files are those of the 'Upload dataset' commit.",
        ),
        schema_confirmed=(
            "echo840/OCRBench card @ 276bd0b (dataset, question, question_type strings, answer "
            "list of strings, image Image; data/test-*) + lmms-eval ocrbench/upload_ocrbench.py "
            "+ MultimodalOCR OCRBench/OCRBench.json"
        ),
    )
)
