"""MathVerse: ``mathverse`` (testmini, five problem versions) and ``mathverse-text-only``.

Origin: Zhang et al. 2024, MathVerse: Does Your Multi-modal LLM Truly See the Diagrams in Visual
Math Problems? (ECCV 2024, arXiv:2403.14624); data AI4Math/MathVerse (mit). The testmini set is
788 problems, each in five versions that move information from the text into the diagram (Text
Dominant, Text Lite, Vision Intensive, Vision Dominant, Vision Only: 3,940 questions, the
``testmini`` config, whose accuracy is the leaderboard's), and a sixth, Text Only, without the
diagram (the ``testmini_text_only`` config, an ablation the paper reports apart). Prompt and
scoring from ZrrSkywalker/MathVerse at `MATHVERSE_COMMIT`: each row's ``query_wo`` (the input
the README prescribes for the 'w/o' scores) and the two-stage judge ``mathverse-judge``
(`lmmprobe.judge.protocols.mathverse_judge`). The two configs differ only in their hub config
and files: one table of two rows (issue 37).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.standard._choice import escape_braces, plain, struct
from lmmprobe.schema import Sample

__all__ = ["MATHVERSE_COMMIT", "PROBLEM_VERSIONS", "TABLE", "TABLE_DEFINITIONS"]

MATHVERSE_COMMIT = "937b090597aeafb8e82b35d310a4bc5b9e2ea29d"
"""The ZrrSkywalker/MathVerse commit whose README, prompts and evaluation scripts are cited."""

HUB_ID = "AI4Math/MathVerse"
# The newest revision seen (README "Update README.md", after "Add question_for_eval"): its tree
# holds testmini.parquet and testmini_text_only.parquet with question_for_eval.
REVISION = "268dfc55b62296be3bdf6406d6dea07bd06a7d64"

PROBLEM_VERSIONS = (
    "Text Dominant",
    "Text Lite",
    "Vision Intensive",
    "Vision Dominant",
    "Vision Only",
    "Text Only",
)
"""MathVerse's problem versions (``problem_version``): the first five make ``testmini``."""


def _mathverse(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    version = required_text(row, "problem_version")
    if version not in PROBLEM_VERSIONS:
        raise RowError("problem_version", f"{version[:80]!r} is not a MathVerse problem version")
    qtype = required_text(row, "question_type")
    if qtype not in ("multi-choice", "free-form"):
        raise RowError("question_type", f"expected multi-choice or free-form, got {qtype[:80]!r}")
    image = row.get("image")
    # Text Only rows have no diagram (an empty image cell).
    images = [] if image is None or image == "" else [image_ref(image, ctx, "image")]
    meta = struct(row.get("metadata"))
    return Sample(
        id=required_text(row, "sample_index"),
        images=images,
        # The scoring prompt quotes the row's question (score_answer_s2.py inst['question']).
        question=str(row.get("question") or ""),
        answer=[required_text(row, "answer")],
        formulation="open_ended",
        metadata={
            # --by problem_version, subject, subfield: score_answer_s2.py's figures.
            "problem_version": version,
            "problem_index": plain(row.get("problem_index")),
            # Not "question_type": lmmprobe reads question_type "free_form" as Dysca's.
            "mathverse_question_type": qtype,
            "subject": plain(meta.get("subject")),
            "subfield": plain(meta.get("subfield")),
            "source": plain(meta.get("source")),
        },
        # The row's query_wo is the whole prompt, cited as the definition's.
        prompt=PromptTemplate(escape_braces(required_text(row, "query_wo"))),
    )


@dataclass(frozen=True)
class _Config:
    """One row of the table: a MathVerse config."""

    name: str
    title: str
    config: str
    file: str
    size: int
    note: str


TABLE = (
    _Config(
        "mathverse",
        "MathVerse (testmini, five problem versions)",
        "testmini",
        "testmini.parquet",
        3940,
        "The overall score is over the five versions (788 problems x 5), as the leaderboard "
        "reports it; --by problem_version gives Text Dominant, Text Lite, Vision Intensive, "
        "Vision Dominant and Vision Only, --by subject and --by subject,subfield the rest of "
        "score_answer_s2.py's figures.",
    ),
    _Config(
        "mathverse-text-only",
        "MathVerse (testmini, Text Only: no diagram)",
        "testmini_text_only",
        "testmini_text_only.parquet",
        788,
        "Text Only is the paper's ablation without the diagram (testmini_text_only.json), "
        "scored alone and not part of the overall score.",
    ),
)


def _definition(entry: _Config) -> Benchmark:
    return Benchmark(
        name=entry.name,
        title=entry.title,
        citation="Zhang et al. 2024, MathVerse: Does Your Multi-modal LLM Truly See the "
        "Diagrams in Visual Math Problems?, ECCV 2024, arXiv:2403.14624",
        license="mit (AI4Math/MathVerse card)",
        formulation="open_ended",
        metric="mathverse_accuracy",
        prompt=PromptTemplate(
            template="{question}",
            source=f"each row's query_wo column, MathVerse's prompt for the 'w/o' scores "
            f"(ZrrSkywalker/MathVerse @ {MATHVERSE_COMMIT[:7]} README.md, Inference)",
        ),
        to_sample=_mathverse,
        include=(entry.file, "README.md"),
        split="testmini",
        splits=("testmini",),
        hub_id=HUB_ID,
        revision=REVISION,
        config=entry.config,
        size=entry.size,
        judge="mathverse-judge",
        notes=(
            "Scored only with --judge SPEC: mathverse-judge asks the judge to extract the "
            "answer (extract_answer_s1.py), then whether the extraction matches the standard "
            "answer (score_answer_s2.py), with MathVerse's prompts byte for byte; "
            "mathverse_accuracy is the share judged 1. The paper's judge is GPT (gpt-3.5-turbo "
            "is the scripts' default). --judge-when miss scores an extraction equal to the "
            "answer 1 without asking (quick_match's rule); the extraction is always the "
            "judge's.",
            entry.note,
            "The 'CoT-E' scores (step-by-step grading) are not released and not computed.",
        ),
        schema_confirmed="",
    )


TABLE_DEFINITIONS: tuple[Benchmark, ...] = tuple(benchmark(_definition(e)) for e in TABLE)
"""The definitions, in `TABLE`'s order."""
