"""CMMMU (validation): the ``cmmmu`` benchmark definition.

CMMMU is MMMU's Chinese companion: 12k college-level questions over six disciplines and 30
subjects, each a multiple-choice (``选择``, one or several of four options), true/false
(``判断``) or fill-in-the-blank (``填空``) question, with up to five images placed in the text
(``<img="q_00205_001.png">``). Its answers are public for the val split only (900 questions;
the test split's are held by the authors).

Origin: Zhang et al. 2024, CMMMU: A Chinese Massive Multi-discipline Multimodal Understanding
Benchmark, arXiv:2401.20847; data lmms-lab/CMMMU (the official release re-packed by lmms-eval's
authors); scoring CMMMU-Benchmark/CMMMU ``eval/`` (`lmmprobe.metrics.cmmmu`). The official
repository ships no inference code: the prompt is lmms-eval's port of the paper's (its
``construct_prompt``).
"""

from __future__ import annotations

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
from lmmprobe.data.benchmarks._lmms import LMMS_EVAL_COMMIT, lmms_source, required_text
from lmmprobe.data.benchmarks.standard._choice import escape_braces, plain
from lmmprobe.metrics.cmmmu import (
    CMMMU_COMMIT,
    CMMMU_SUBCATEGORIES,
    FILL_BLANK,
    MULTI_CHOICE,
    TRUE_FALSE,
)
from lmmprobe.schema import ImageRef, Sample

__all__ = ["CMMMU", "CMMMU_INSTRUCTIONS"]

CMMMU_INSTRUCTIONS: dict[str, str] = {
    MULTI_CHOICE: "请回答以下多项选择题，并选出正确选项。这些题目可能包括单选和多选题型。"
    "如果所提供的信息不足以确定一个明确的答案，那么请根据可用的数据和你的判断来选择最可能正确的选项。",
    TRUE_FALSE: "请回答以下判断题，并根据题目描述和所给的信息来判断问题中陈述的对错。"
    "如果信息不完整或不足以作出绝对判断，请运用你的逻辑推理和现有信息来做出最可能的判断。",
    FILL_BLANK: "请回答以下填空题，并根据题目的要求和所提供的信息来给出最恰当的答案。"
    "如果信息不足以确切回答，那么请依据现有的数据和你的推理能力来填写最合理的答案。",
}
"""The instruction before each kind of question (lmms-eval ``PROMPT["task_instructions"]``,
the paper's appendix prompts)."""

_MAX_IMAGES = 5
_SHOWN_IMAGE = re.compile(r"<图片 (\d+)>")
_PLACEHOLDER = re.compile(r'<img="[^"\n]{0,300}">')
_DISCIPLINE_OF = {sub: cat for cat, subs in CMMMU_SUBCATEGORIES.items() for sub in subs}


def _text(row: Mapping[str, Any], field: str) -> str:
    value = row.get(field)
    if not isinstance(value, str):
        raise RowError(field, f"expected text, got {value!r}")
    return value


def _prompt(row: Mapping[str, Any], qtype: str, question: str, options: list[str]) -> str:
    """The whole message as lmms-eval's ``construct_prompt`` writes it."""
    if qtype == MULTI_CHOICE:
        listed = "".join(f"({m}) {o}\n" for m, o in zip("ABCD", options, strict=True))
        body = f"问题：{question}\n选项：\n{listed}\n正确答案：\n"
    else:
        body = f"问题：{question}\n正确答案：\n"
    text = f"{CMMMU_INSTRUCTIONS[qtype]}\n\n{body}"
    # Each image's placeholder (<img="FILE">) becomes <图片 N> by its slot's file name; a slot
    # without a file writes "None", as the port's f-string does.
    for i in range(1, _MAX_IMAGES + 1):
        text = text.replace(f'<img="{row.get(f"image_{i}_filename")}">', f"<图片 {i}>")
    return text


def _cmmmu(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    qtype = required_text(row, "type")
    if qtype not in CMMMU_INSTRUCTIONS:
        raise RowError("type", f"expected one of {', '.join(CMMMU_INSTRUCTIONS)}, got {qtype!r}")
    question = _text(row, "question")
    answer = _text(row, "answer")
    options = [_text(row, f"option{i}") for i in range(1, 5)] if qtype == MULTI_CHOICE else []
    if qtype == MULTI_CHOICE and (not answer or any(c not in "ABCD" for c in answer)):
        raise RowError("answer", f"expected option letters A-D, got {answer!r}")
    if qtype == TRUE_FALSE and answer not in ("对", "错"):
        raise RowError("answer", f"expected 对 or 错, got {answer!r}")
    subcategory = plain(row.get("subcategory"))
    category = plain(row.get("category")) or _DISCIPLINE_OF.get(str(subcategory))
    if category not in CMMMU_SUBCATEGORIES:
        raise RowError("category", f"not one of CMMMU's six disciplines: {category!r}")
    text = _prompt(row, qtype, question, options)
    left = _PLACEHOLDER.search(text)
    if left is not None:
        # The port would send the question without that image: refused, never asked blind.
        raise RowError(
            "question", f"names image {left.group(0)[:80]} but no image_N_filename holds it"
        )
    # The images the message names, in the order it names them (a slot named twice is sent
    # twice), as the port's cmmmu_doc_to_visual.
    images: list[ImageRef] = []
    for number in _SHOWN_IMAGE.findall(text):
        slot = f"image_{number}"
        if row.get(slot) is None:
            raise RowError(slot, "the question names this image but the row has none")
        images.append(image_ref(row[slot], ctx, slot))
    sid = row.get("id")
    if sid is None or isinstance(sid, bool) or not str(sid).strip():
        raise RowError("id", f"expected an id, got {sid!r}")
    return Sample(
        id=str(sid),
        images=images,
        question=question,
        answer=[answer],
        formulation="open_ended",
        metadata={
            "question_type": qtype,
            "option_letters": list("ABCD") if options else [],
            "option_texts": options,
            # The paper's breakdowns: discipline, subject, difficulty (--by).
            "category": category,
            "subcategory": subcategory,
            "difficulty_level": plain(row.get("difficulty_level")),
            "img_type": plain(row.get("img_type")),
        },
        prompt=PromptTemplate(escape_braces(text)),
    )


CMMMU = benchmark(
    Benchmark(
        name="cmmmu",
        groups=("chinese", "multi-image"),
        title="CMMMU (val)",
        citation="Zhang et al. 2024, CMMMU: A Chinese Massive Multi-discipline Multimodal "
        "Understanding Benchmark, arXiv:2401.20847",
        license="CMMMU-Benchmark/CMMMU: no license file; lmms-lab/CMMMU card: unknown",
        formulation="open_ended",
        metric="cmmmu_accuracy",
        prompt=PromptTemplate(
            template="{question}\n{options}",
            source=lmms_source("cmmmu/utils.py (PROMPT, construct_prompt, cmmmu_doc_to_visual)")
            + "; the paper's appendix (arXiv:2401.20847): the official repository has scoring "
            "code only",
        ),
        to_sample=_cmmmu,
        include=("data/val-*", "README.md"),
        split="val",
        # The test split's answers are held by the authors: not offered (nothing to score).
        splits=("dev", "val"),
        hub_id="lmms-lab/CMMMU",
        revision="ba85ed9c2d4e3843d085e15440d91b41664f239f",
        size=900,
        notes=(
            "Each row gets its own prompt, the whole message as lmms-eval's construct_prompt "
            "writes it: the instruction of its question type, then 问题：question (with "
            "选项： and (A) ... (D) lines for multiple choice) and 正确答案：; each image "
            "placeholder becomes <图片 N> and its image is sent, in the order the text names "
            "them (images come before the text in lmmprobe's message).",
            "cmmmu_accuracy reads answers with CMMMU's own rules (CMMMU-Benchmark/CMMMU @ "
            f"{CMMMU_COMMIT[:7]} eval/utils/eval_utils.py evaluate_response). Where that code "
            "draws a random answer (a multiple-choice answer naming no letter or option, a "
            "true/false answer as positive as negative), the run counts it wrong; `lmmprobe "
            "score FILE --benchmark cmmmu --as-published` gives CMMMU's figure with its draws "
            "(seed 42, its order), so the same answers count right.",
            "The test split's answers are not public (the authors score submissions), so "
            "split= offers dev and val only. --by category gives the paper's six disciplines, "
            "--by subcategory its 30 subjects, --by question_type and --by difficulty_level "
            "its other tables.",
            f"lmms-eval @ {LMMS_EVAL_COMMIT[:7]} generates at most 16 new tokens for CMMMU "
            "(cmmmu_val.yaml); set --max-new-tokens to match.",
        ),
        schema_confirmed="lmms-eval cmmmu/utils.py @ "
        + LMMS_EVAL_COMMIT[:7]
        + " (id, type, question, option1..option4, answer, image_1..image_5, "
        "image_N_filename, subcategory) + CMMMU-Benchmark/CMMMU @ "
        + CMMMU_COMMIT[:7]
        + " cmmmu-data-dev/*.jsonl (category, difficulty_level, img_type); the parquet "
        "files themselves were not readable here",
    )
)
