"""MME: the ``mme`` benchmark definition."""

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
    required_text,
)
from lmmprobe.data.benchmarks.standard._choice import yes_no
from lmmprobe.schema import Sample

__all__ = ["MME"]


def _mme(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    qid = required_text(row, "question_id")
    category = required_text(row, "category")
    # A choice between yes and no that is never shown (the prompt is the question alone): the
    # ``mme`` matcher reads the answer as MME's eval tool does, for the answer rates too.
    return Sample(
        id=f"{qid}/{ctx.index}",  # both questions of an image share its question_id
        images=[image_ref(row["image"], ctx)],
        question=required_text(row, "question"),
        choices=["yes", "no"],
        answer=0 if yes_no(row["answer"], "answer") == "yes" else 1,
        formulation="single_choice",
        metadata={"question_id": qid, "category": category},
    )


MME = benchmark(
    Benchmark(
        name="mme",
        title="MME",
        citation="Fu et al. 2023, MME: A Comprehensive Evaluation Benchmark for Multimodal Large "
        "Language Models, arXiv:2306.13394",
        license="unknown (see card; MME is released for research use)",
        formulation="single_choice",
        metric="mme_perception",
        prompt=PromptTemplate(
            template="{question}",
            source="MME's questions as released, each ending 'Please answer yes or no.' "
            "(BradyFU/Awesome-Multimodal-Large-Language-Models branch Evaluation, "
            "tools/eval_tool.zip Your_Results/*.txt @ dd29509)",
        ),
        to_sample=_mme,
        include=("data/test-*", "README.md"),
        splits=("test",),
        hub_id="lmms-lab/MME",
        revision="d6c9023f017b564f7b3ccccf5348166bce8fdbcd",
        size=2374,
        matcher="mme",
        notes=(
            "mme_perception and mme_cognition are MME's scores: per subtask (category) "
            "accuracy x 100 + accuracy+ x 100 (both questions of an image right), summed over "
            "the 10 perception and 4 cognition subtasks (maxima 2000 and 800). Answers are read "
            "as MME's eval tool reads them (yes/no in the first four characters). --by category "
            "gives each subtask's score. With --repeats, accuracy+ pairs an image's two "
            "questions within each repeat, so the score is the average over repeats.",
            "accuracy reads each answer by the same rule (matcher mme; the options yes and no "
            "are never shown): an answer read neither yes nor no is unparsed, and where a judge "
            "read it (--judge) the judge's verdict decides it (the judged headline); MME's "
            "scores count it wrong, as its tool does.",
            "lmms-eval replaces 'Please answer yes or no.' by 'Answer the question using a "
            "single word or phrase.'; lmmprobe asks MME's questions as released.",
        ),
        schema_confirmed="lmms-lab/MME card @ d6c9023 (question_id, image Image, question, "
        "answer Yes/No, category; 2374 rows) + lmms-eval mme/utils.py @ " + LMMS_EVAL_COMMIT[:7],
    )
)
