"""MathVista (testmini): the ``mathvista`` benchmark definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import (
    required_text,
)
from lmmprobe.data.benchmarks.standard._choice import escape_braces, plain, struct
from lmmprobe.schema import Sample

__all__ = ["MATHVISTA"]


def _mathvista(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    choices = row.get("choices")
    qtype = required_text(row, "question_type")
    if qtype == "multi_choice" and (not isinstance(choices, list) or len(choices) < 2):
        raise RowError(
            "choices", f"a multi_choice question needs a list of options, got {choices!r}"
        )
    meta_info = struct(row.get("metadata"))
    return Sample(
        id=required_text(row, "pid"),
        images=[image_ref(row["decoded_image"], ctx, "decoded_image")],
        question=required_text(row, "question"),
        answer=[str(row["answer"])],
        formulation="open_ended",
        metadata={
            "choices": plain(choices),
            # Not "question_type": lmmprobe reads question_type "free_form" as a Dysca
            # free-form description (scored by embedding similarity).
            "mathvista_question_type": qtype,
            "answer_type": required_text(row, "answer_type"),
            "precision": plain(row.get("precision")),
            "unit": plain(row.get("unit")),
            "category": plain(meta_info.get("category")),
            "task": plain(meta_info.get("task")),
            "context": plain(meta_info.get("context")),
            # A list: `--by skills` counts an item in every skill it lists, as MathVista's
            # calculate_score.py does.
            "skills": plain(meta_info.get("skills")),
        },
        # The row's own query is its prompt, cited as the definition's.
        prompt=PromptTemplate(escape_braces(required_text(row, "query"))),
    )


MATHVISTA = benchmark(
    Benchmark(
        name="mathvista",
        title="MathVista (testmini)",
        citation="Lu et al. 2024, MathVista: Evaluating Mathematical Reasoning of Foundation "
        "Models in Visual Contexts, ICLR 2024, arXiv:2310.02255",
        license="cc-by-sa-4.0 (AI4Math/MathVista card)",
        formulation="open_ended",
        metric="mathvista_accuracy",
        prompt=PromptTemplate(
            template="{question}",
            source="each row's query column, MathVista's own prompt (hint, question, choices) "
            "built by lupantech/MathVista evaluation/build_query.py @ 53d5258",
        ),
        to_sample=_mathvista,
        include=("data/testmini-*", "README.md"),
        split="testmini",
        splits=("testmini", "test"),
        hub_id="AI4Math/MathVista",
        revision="d32e834bdd9442cf2a0f72e3b2b7a74151c2a2d1",
        size=1000,
        judge="mathvista-extract",
        notes=(
            "With --judge SPEC the score is the official one: the mathvista-extract protocol "
            "applies MathVista's extraction rules, then the judge's few-shot extraction prompt "
            "where they fail, and scores the extraction with normalize_extracted_answer. "
            "Without a judge lmmprobe uses the rule-based reading (extract_answer with "
            "quick_extract, then normalize_extracted_answer): not the official number. A "
            "multiple-choice reply that is "
            "only an option letter ('B', '(B)', 'B.') is read as that option, as GPT-4's "
            "extraction would read it. An answer the rules cannot read is unparsed and wrong: "
            "unlike the released code, whose normalization sends an empty extraction to the "
            "nearest option by edit distance, lmmprobe never scores an option the model did "
            "not give.",
            "The prompt is the row's query column verbatim.",
        ),
        schema_confirmed="AI4Math/MathVista card @ d32e834 (pid, question, image path, "
        "decoded_image Image, choices list, unit, precision float64, answer, question_type, "
        "answer_type, metadata struct, query) + lupantech/MathVista evaluation/*.py @ 53d5258",
    )
)
