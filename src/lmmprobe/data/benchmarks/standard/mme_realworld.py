"""MME-RealWorld (lmms-eval's copy): the ``mme-realworld`` benchmark definition.

MME-RealWorld asks 5-option questions about high-resolution real-world images (perception and
reasoning over monitoring, autonomous driving, OCR, diagrams and tables, remote sensing).
lmms-eval (``lmms_eval/tasks/mme_realworld``) reads yifanzhang114/MME-RealWorld-Lmms-eval
(split ``train``: the image as base64 text in ``bytes``, the options as ``(A) ...`` lines),
asks ``mme_realworld_doc_to_text`` and scores ``mme_realworld_aggregate_results``: the share of
answers whose letter (``extract_characters_regex``, the ``mme-realworld`` matcher) is the gold
one, over all questions (``accuracy``); the task (Perception, Reasoning), subtask and l2-category
figures are the same share within each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import lmms_source, required_text
from lmmprobe.schema import Sample

__all__ = ["MME_REALWORLD"]

_LETTERS = "ABCDE"


def _task_category(l2: str) -> str:
    # mme_realworld_aggregate_results: lower-cased, "x/.../attribute..." groups as "x/attribute".
    category = l2.lower()
    return category.split("/")[0] + "/attribute" if "attribute" in category else category


def _mme_realworld(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    options = row["multi-choice options"]
    if (
        not isinstance(options, Sequence)
        or isinstance(options, str)
        or not 2 <= len(options) <= len(_LETTERS)
        or not all(isinstance(o, str) for o in options)
    ):
        raise RowError("multi-choice options", "expected a list of 2 to 5 option lines")
    answer = str(row["answer"]).strip()
    if len(answer) != 1 or _LETTERS.find(answer) not in range(len(options)):
        raise RowError(
            "answer", f"expected an option letter A-{_LETTERS[len(options) - 1]}, got {answer!r}"
        )
    category = required_text(row, "category")
    return Sample(
        id=str(row["index"]),
        images=[image_ref(row["bytes"], ctx, "bytes")],
        question=required_text(row, "question"),
        # The option lines as published ("(A) ..."), shown verbatim in their order.
        choices=list(options),
        answer=_LETTERS.index(answer),
        formulation="single_choice",
        metadata={
            "index": str(row["index"]),
            "task": "Perception" if "perception" in category.lower() else "Reasoning",
            "subtask": category.split("/")[-1],
            "l2_category": _task_category(required_text(row, "l2-category")),
            "fixed_options": True,
        },
    )


MME_REALWORLD = benchmark(
    Benchmark(
        name="mme-realworld",
        title="MME-RealWorld",
        citation="Zhang et al. 2025, MME-RealWorld: Could Your Multimodal LLM Challenge "
        "High-Resolution Real-World Scenarios that are Difficult for Humans? ICLR 2025, "
        "arXiv:2408.13257",
        license="unknown (see the yifanzhang114/MME-RealWorld card)",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question} The choices are listed below:\n{options}\nSelect the best "
            "answer to the above multiple-choice question based on the image. Respond with only "
            "the letter (A, B, C, D, or E) of the correct option.\nThe best answer is: ",
            source=lmms_source("mme_realworld/utils.py (mme_realworld_doc_to_text)"),
            option_format="{text}",
        ),
        to_sample=_mme_realworld,
        split="train",
        splits=("train",),
        hub_id="yifanzhang114/MME-RealWorld-Lmms-eval",
        matcher="mme-realworld",
        notes=(
            "The official score is lmms-eval's mme_realworld_aggregate_results: the share of "
            "answers whose letter, read by extract_characters_regex (matcher mme-realworld), is "
            "the gold one, over all questions. --by task gives Perception and Reasoning, --by "
            "subtask each domain, --by l2_category each of its categories (as it groups them).",
            "The options are shown as published ('(A) ...' lines) and keep their order whatever "
            "--circular or --marks say (metadata fixed_options).",
            "lmms-eval reads an empty answer as A (its rule finds '' inside '(A)'); so does "
            "the matcher.",
            "Revision not pinned: lmms-eval reads the repository's main (with a Hub token: the "
            "dataset may ask you to accept its terms first), and no commit id was confirmed "
            "offline.",
        ),
        schema_confirmed="",
    )
)
