"""POPE (MSCOCO: random, popular, adversarial): the ``pope`` benchmark definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import (
    LMMS_EVAL_COMMIT,
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._choice import plain, yes_no
from lmmprobe.schema import Sample

__all__ = ["POPE", "POPE_POST"]

POPE_POST = "Answer the question using a single word or phrase."


def _pope(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    qid = str(row["question_id"])
    # A choice between yes and no that is never shown (the prompt asks for a word or phrase):
    # the ``pope`` matcher reads the answer as POPE's evaluate.py does, for the answer rates too.
    return Sample(
        id=f"{row.get('category') or 'pope'}-{qid}",
        images=[image_ref(row["image"], ctx)],
        question=required_text(row, "question").strip(),
        choices=["yes", "no"],
        answer=0 if yes_no(row["answer"], "answer") == "yes" else 1,
        formulation="single_choice",
        metadata={
            "question_id": qid,
            "category": plain(row.get("category")),
            "image_source": plain(row.get("image_source")),
        },
    )


POPE = benchmark(
    Benchmark(
        name="pope",
        title="POPE (MSCOCO: random, popular, adversarial)",
        citation="Li et al. 2023, Evaluating Object Hallucination in Large Vision-Language "
        "Models, EMNLP 2023, arXiv:2305.10355",
        license="mit (RUCAIBox/POPE repository); lmms-lab/POPE card: unknown",
        formulation="single_choice",
        metric="pope_f1",
        prompt=PromptTemplate(
            template="{question}\n" + POPE_POST,
            source=lmms_source("pope/pope.yaml (post_prompt) and pope/utils.py (pope_doc_to_text)"),
        ),
        to_sample=_pope,
        include=("data/*", "README.md"),
        splits=("test",),
        hub_id="lmms-lab/POPE",
        revision="4db1276663dfa5eb8ad16a52d24c31a09e470896",
        size=9000,
        matcher="pope",
        notes=(
            "pope_f1, pope_accuracy, pope_precision, pope_recall and pope_yes_ratio are POPE's "
            "(evaluate.py): the first sentence of an answer is 'no' when one of its words is "
            "No, not or no, else 'yes'. --by category gives random/popular/adversarial.",
            "lmms-eval's own yes-ratio counts gold answers; lmmprobe reports POPE's (answers).",
            "accuracy reads each answer by the same rule (matcher pope; the options yes and no "
            "are never shown), which reads every answer but an empty one (unparsed, and wrong "
            "unless a judge read it; POPE's script reads it 'yes', as pope_accuracy does).",
        ),
        schema_confirmed="lmms-lab/POPE layout @ 4db1276 (data/test-0000N-of-00003.parquet) + "
        "card of its duplicate giobin/POPE (id, question_id, question, answer, image_source, "
        "image Image, category; 9000 rows) + lmms-eval pope/utils.py @ " + LMMS_EVAL_COMMIT[:7],
    )
)
