"""MMMU (validation): the ``mmmu`` benchmark definition."""

from __future__ import annotations

import ast
import re
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
    LMMS_EVAL_COMMIT,
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._choice import LETTER_PROMPT, escape_braces, plain
from lmmprobe.schema import ImageRef, Sample

__all__ = ["MMMU", "MMMU_OPEN_PROMPT"]

_IMAGE_TOKEN = re.compile(r"<image \d+>")

MMMU_OPEN_PROMPT = "Answer the question using a single word or phrase."


def _mmmu_answers(answer: str) -> list[str]:
    # A few open answers are a Python list written as text ("['24/7', '3.429']").
    if answer.startswith("["):
        try:
            value = ast.literal_eval(answer)
        except (ValueError, SyntaxError):
            return [answer]
        if isinstance(value, list) and value:
            return [str(v) for v in value]
    return [answer]


def _mmmu(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    question = required_text(row, "question")
    qtype = required_text(row, "question_type")
    try:
        options = ast.literal_eval(row["options"]) if row["options"] else []
    except (ValueError, SyntaxError) as exc:
        raise RowError(
            "options", f"expected a Python list written as text, got {row['options']!r}"
        ) from exc
    if not isinstance(options, list):
        raise RowError("options", f"expected a list, got {options!r}")
    options = [str(o) for o in options]
    letters = [chr(ord("A") + i) for i in range(len(options))]
    answer = required_text(row, "answer")
    if qtype == "multiple-choice":
        if answer not in letters:
            raise RowError("answer", f"{answer!r} is not one of the option letters {letters}")
        shown = "\n".join(f"{m}. {o}" for m, o in zip(letters, options, strict=True))
        template = "{question}\n" + escape_braces(shown) + "\n\n" + LETTER_PROMPT
        refs = [answer]
    else:
        template = "{question}\n\n" + MMMU_OPEN_PROMPT
        refs = _mmmu_answers(answer)
    # lmms-eval shows the images the prompt names, in sorted token order (mmmu_doc_to_visual).
    tokens = sorted(
        {
            t.strip("<>").replace(" ", "_")
            for t in _IMAGE_TOKEN.findall(template.format(question=question))
        }
    )
    images: list[ImageRef] = []
    for token in tokens:
        if token not in row or row[token] is None:
            raise RowError(token, "the question names this image but the row has none")
        images.append(image_ref(row[token], ctx, token))
    sid = required_text(row, "id")
    return Sample(
        id=sid,
        images=images,
        question=question,
        answer=refs,
        formulation="open_ended",
        metadata={
            "question_type": qtype,
            "option_letters": letters,
            "option_texts": options,
            "answers": refs,
            "subject": _subject(sid),
            "subfield": plain(row.get("subfield")),
            "img_type": plain(row.get("img_type")),
            "topic_difficulty": plain(row.get("topic_difficulty")),
        },
        prompt=PromptTemplate(template),  # the row's own, cited as the definition's
    )


_SUBJECT_ID = re.compile(r"^[^_]+_(.+?)_\d+$")


def _subject(sample_id: str) -> str | None:
    """The subject an MMMU id names: ``validation_Art_Theory_12`` → ``Art_Theory``.

    Everything between the split and the item number, as lmms-eval's ``extract_subset_name``
    (lmms_eval/tasks/mmmu/utils.py) and MMMU's own file layout read it; None for an id of
    another shape.
    """
    match = _SUBJECT_ID.match(sample_id)
    return match.group(1) if match else None


MMMU = benchmark(
    Benchmark(
        name="mmmu",
        # Some questions interleave several images (<image 1> ... <image 7>).
        groups=("multi-image",),
        title="MMMU (validation)",
        citation="Yue et al. 2024, MMMU: A Massive Multi-discipline Multimodal Understanding and "
        "Reasoning Benchmark for Expert AGI, CVPR 2024, arXiv:2311.16502",
        license="apache-2.0 (MMMU/MMMU card); lmms-lab/MMMU card: unknown",
        formulation="open_ended",
        metric="mmmu_accuracy",
        prompt=PromptTemplate(
            template="{question}\n{options}\n\n" + LETTER_PROMPT,
            source=lmms_source(
                "mmmu/utils.py (construct_prompt) and mmmu_val.yaml "
                "(multiple_choice_prompt, open_ended_prompt)"
            ),
        ),
        to_sample=_mmmu,
        include=("data/validation-*", "README.md"),
        split="validation",
        splits=("dev", "validation", "test"),
        hub_id="lmms-lab/MMMU",
        revision="364f2e2eb107b36e07ff4c5a15f5947a759cef47",
        size=900,
        notes=(
            "Each row gets its own prompt: multiple-choice questions list their options "
            "(A. ...) and ask for the letter, open questions ask for a short answer; the "
            "question keeps its <image N> placeholders and the named images follow in order.",
            "mmmu_accuracy reads answers with MMMU's rules (parse_multi_choice_response, "
            "parse_open_response). Where MMMU's code picks a random letter (nothing readable), "
            "lmmprobe counts the answer as wrong.",
            "Rows are open-ended so the raw answer is kept for MMMU's reading; the generic "
            "accuracy column (exact match) is not MMMU's score.",
        ),
        schema_confirmed="lmms-lab/MMMU card @ 364f2e2 (id, question, options as text, "
        "explanation, image_1..image_7 Image, img_type, answer, topic_difficulty, "
        "question_type, subfield) + lmms-eval mmmu/utils.py @ " + LMMS_EVAL_COMMIT[:7],
    )
)
