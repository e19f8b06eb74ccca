"""DocVQA and InfographicVQA (validation): one table of two rows, ``docvqa`` and ``infovqa``.

Both are the RRC document-VQA tasks lmms-eval runs from one Hub repository (lmms-lab/DocVQA, a
config each: ``DocVQA``, ``InfographicVQA``), asked with the same prompt (the question and
lmms-eval's short-answer line: ``docvqa/`` and ``infovqa/`` ``_default_template_*_yaml``, the
same ``post_prompt``) and scored by the same ANLS (``anls``: the RRC script
``infographicsvqa_eval.py``, threshold 0.5, best over the references). They differ only in
configuration (name, title, citation, config, size, the metadata columns kept), so they are
rows of `TABLE` (docs/benchmarks.md, "Where shared benchmark code lives").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, RowContext, benchmark
from lmmprobe.data.benchmarks._lmms import lmms_source, required_text
from lmmprobe.data.benchmarks.standard._open import (
    LMMS_ENCODER,
    SHORT_ANSWER,
    answer_texts,
    open_sample,
    row_id,
)
from lmmprobe.schema import Sample

__all__ = ["DOCVQA_REVISION", "TABLE", "TABLE_DEFINITIONS", "DocVQATask"]

DOCVQA_REVISION = "59fed3cdc38662abeef8f363171b2ec7c95c165c"
"""The lmms-lab/DocVQA revision both configs are read at."""


@dataclass(frozen=True)
class DocVQATask:
    """A row of the table: one config of lmms-lab/DocVQA.

    Attributes:
        name: The ``--data`` name.
        config: The Hub config (its folder of parquet files).
        title: Display title.
        citation: The paper.
        size: Validation questions.
        task: lmms-eval's task folder (its prompt's source).
        columns: Row columns kept as metadata (``--by`` keys), by metadata name.
        reform: The ReForm-Eval dimension it belongs to, if any.
        notes: Sentences ``data show`` prints beside the shared ones.

    """

    name: str
    config: str
    title: str
    citation: str
    size: int
    task: str
    columns: tuple[tuple[str, str], ...]
    reform: str | None = None
    notes: tuple[str, ...] = ()


TABLE: tuple[DocVQATask, ...] = (
    DocVQATask(
        name="docvqa",
        config="DocVQA",
        title="DocVQA (validation)",
        citation="Mathew et al. 2021, DocVQA: A Dataset for VQA on Document Images. WACV 2021, "
        "arXiv:2007.00398",
        size=5349,
        task="docvqa",
        columns=(("question_types", "question_types"), ("docId", "docId")),
        reform="scene text perception",
    ),
    DocVQATask(
        name="infovqa",
        config="InfographicVQA",
        title="InfographicVQA (validation)",
        citation="Mathew et al. 2022, InfographicVQA, WACV 2022, arXiv:2104.12756",
        size=2801,
        task="infovqa",
        # The paper's breakdowns the config holds: answer type (image span, question span,
        # multiple spans, non-span) and operation (comparison, arithmetic, counting); lists.
        columns=(("answer_type", "answer_type"), ("operation/reasoning", "operation")),
        notes=(
            "The paper's breakdowns are kept per question as lists: answer_type and operation "
            "(from operation/reasoning); a question may carry several.",
        ),
    ),
)
"""lmms-lab/DocVQA's configs as benchmarks: a benchmark read from another config is a row here."""


def _reader(entry: DocVQATask) -> Any:
    def to_sample(row: Mapping[str, Any], ctx: RowContext) -> Sample:
        return open_sample(
            row_id(row, "questionId"),
            row,
            ctx,
            required_text(row, "question"),
            answer_texts(row, "answers"),
            "open_ended",
            **{meta: row.get(column) for column, meta in entry.columns},
        )

    return to_sample


def _definition(entry: DocVQATask) -> Benchmark:
    kept = ", ".join(c for c, _ in entry.columns)
    return Benchmark(
        name=entry.name,
        title=entry.title,
        citation=entry.citation,
        license="apache-2.0 (lmms-lab/DocVQA card)",
        formulation="open_ended",
        metric="anls",
        prompt=PromptTemplate(
            template="{question}" + SHORT_ANSWER,
            source=lmms_source(
                f"{entry.task}/_default_template_{entry.task}_yaml (post_prompt) + utils.py "
                f"{entry.task}_doc_to_text"
            ),
        ),
        to_sample=_reader(entry),
        include=(f"{entry.config}/validation-*",),
        split="validation",
        splits=("train", "validation", "test"),
        hub_id="lmms-lab/DocVQA",
        revision=DOCVQA_REVISION,
        config=entry.config,
        size=entry.size,
        reform=entry.reform,
        notes=(
            "ANLS with threshold 0.5 over all reference answers, as the RRC evaluation script "
            "(infographicsvqa_eval.py) computes it; the test split has no answers (submit to "
            "the RRC server).",
            LMMS_ENCODER.format(repo="DocVQA"),
            *entry.notes,
        ),
        schema_confirmed=(
            f"lmms-lab/DocVQA card @ {DOCVQA_REVISION[:7]} (config {entry.config}: questionId "
            f"string, question, answers list of strings, image Image, {kept}; files "
            f"{entry.config}/validation-*) + lmms-eval {entry.task}/utils.py"
        ),
    )


TABLE_DEFINITIONS: tuple[Benchmark, ...] = tuple(benchmark(_definition(e)) for e in TABLE)
"""The registered definitions, one per row of `TABLE`."""
