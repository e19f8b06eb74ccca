"""Mantis-Eval: the ``mantis-eval`` benchmark definition (multi-image).

Origin: Jiang et al. 2024, MANTIS: Interleaved Multi-Image Instruction Tuning (TMLR 2024,
arXiv:2405.01483); data TIGER-Lab/Mantis-Eval (apache-2.0), 217 questions over two to five
images each, multi-choice and short-answer. Prompt and scoring are Mantis's own
(TIGER-AI-Lab/Mantis ``mantis/benchmark/eval.py`` and ``templates/`` at `MANTIS_COMMIT`): its
own file, as its reading (``get_prediction``, `lmmprobe.metrics.mantis`) is its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
    image_refs,
)
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.standard._choice import escape_braces, plain
from lmmprobe.metrics.mantis import MANTIS_COMMIT, mantis_gold_letter
from lmmprobe.schema import Sample

__all__ = ["MANTIS_EVAL", "mantis_message"]

_SOURCE = f"TIGER-AI-Lab/Mantis @ {MANTIS_COMMIT[:7]} mantis/benchmark/"
_TEMPLATES = {
    # templates/multi-choice.txt and templates/short-answer.txt (no final line break).
    "multi-choice": "{question}\nAnswer with the option's letter from the given choices directly.",
    "short-answer": "Given the images, answer the following short answer vqa question:\nQ: "
    '{question}\nYou can first give your analysis, and then give your final answer as "Final '
    'Answer:"',
}


def mantis_message(question: str, question_type: str, options: list[str]) -> str:
    """The text Mantis's ``eval.py`` sends with a question's images given before it.

    A multi-choice question gets one `` (X) option`` line per option (the option alone where it
    already holds ``X)``, ``X:`` or ``X.``), then the question type's template fills; the
    ``<image>`` marks are then dropped, the pieces between them stripped and joined by spaces
    (the message for a model that takes the images first: eval.py's ``support_multi_image``
    false branch).
    """
    if question_type == "multi-choice":
        for i, option in enumerate(options):
            mark = chr(ord("A") + i)
            if any(f"{mark}{c}" in option.upper() for c in "):."):
                question += f"\n {option}"
            else:
                question += f"\n ({mark}) {option}"
    text = _TEMPLATES[question_type].format(question=question)
    return " ".join(x.strip(" \n") for x in text.split("<image>") if x.strip() != "")


def _mantis(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    question = required_text(row, "question")
    qtype = required_text(row, "question_type")
    if qtype not in _TEMPLATES:
        raise RowError("question_type", f"expected multi-choice or short-answer, got {qtype!r}")
    options = row.get("options") or []
    if not isinstance(options, list | tuple) or not all(isinstance(o, str) for o in options):
        raise RowError("options", f"expected a list of option texts, got {options!r}")
    answer = required_text(row, "answer")
    if qtype == "multi-choice" and mantis_gold_letter(answer) is None:
        raise RowError("answer", f"{answer!r} holds no single option letter")
    images = row.get("images")
    if not isinstance(images, list | tuple) or not images:
        raise RowError("images", "expected a list of one or more images")
    return Sample(
        id=required_text(row, "id"),
        images=image_refs(images, ctx, "images"),
        question=question,
        answer=[answer],
        formulation="open_ended",
        metadata={
            "question_type": qtype,
            "options": list(options),
            "mantis_answer": answer,
            "category": plain(row.get("category")),
            "data_source": plain(row.get("data_source")),
        },
        prompt=PromptTemplate(escape_braces(mantis_message(question, qtype, list(options)))),
    )


MANTIS_EVAL = benchmark(
    Benchmark(
        name="mantis-eval",
        groups=("multi-image",),
        title="Mantis-Eval (multi-image reasoning)",
        citation="Jiang et al. 2024, MANTIS: Interleaved Multi-Image Instruction Tuning, TMLR "
        "2024, arXiv:2405.01483",
        license="apache-2.0 (TIGER-Lab/Mantis-Eval card)",
        formulation="open_ended",
        metric="mantis_accuracy",
        prompt=PromptTemplate(
            template=_TEMPLATES["multi-choice"],
            source=_SOURCE + "eval.py (main: the options as ' (X) text' lines, the question "
            "type's template, the <image> marks dropped) and templates/*.txt",
        ),
        to_sample=_mantis,
        include=("mantis_eval/*", "README.md"),
        split="test",
        splits=("test",),
        hub_id="TIGER-Lab/Mantis-Eval",
        revision="834c93a334f8cb510d9d0dcb32a3b57f5db41220",
        config="mantis_eval",
        size=217,
        notes=(
            "mantis_accuracy reads each answer as Mantis's eval.py get_prediction does: the text "
            "after 'Final Answer:' / 'the answer is' / 'Answer:', then the first letter for a "
            "multi-choice question (else the whole answer equal to the gold option's text), the "
            "case-insensitive equal answer for a short-answer one. Its Overall Accuracy is the "
            "figure; --by question_type gives its Multi-choice and Short-answer accuracies, "
            "--by category the question kinds.",
            "A question's images are asked in order before its text, which is the text eval.py "
            "sends a model taking the images first (the <image> marks dropped); eval.py "
            "interleaves them at the marks for a model that supports it.",
            "Each row gets its own prompt: a multi-choice question lists its options and asks "
            "for the letter; a short-answer one asks for an analysis and a 'Final Answer:'.",
        ),
        schema_confirmed="TIGER-Lab/Mantis-Eval @ 834c93a tree (mantis_eval/test-*.parquet) "
        f"+ the fields {_SOURCE}eval.py reads (id, question_type, question, images, options, "
        "answer, category, data_source)",
    )
)
