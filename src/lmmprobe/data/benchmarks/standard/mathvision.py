"""MATH-Vision (MATH-V): the ``mathvision`` benchmark definition.

Origin: Wang et al. 2024, Measuring Multimodal Mathematical Reasoning with MATH-Vision Dataset
(NeurIPS 2024 Datasets and Benchmarks, arXiv:2402.14804); data MathLLMs/MathVision (mit), 3,040
competition problems (test) and a 304-problem testmini, 16 subjects and 5 levels; prompt and
scoring from mathllm/MATH-V at `MATH_V_COMMIT`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.standard._choice import escape_braces, plain
from lmmprobe.schema import Sample

__all__ = [
    "MATHVISION",
    "MATHVISION_DIRECT",
    "MATHVISION_DIRECT_PROMPT",
    "MATHVISION_PROMPT",
    "MATH_V_COMMIT",
]

MATH_V_COMMIT = "a1f5cc3add200c0cd080fad463e500f44ef1fb41"
"""The mathllm/MATH-V commit whose prompt (``models/GPT4V.py``) and scoring are cited."""

MATHVISION_PROMPT = (
    'Please solve the problem and put your answer in one "\\boxed{}". If it is a multiple '
    'choice question, only one letter is allowed in the "\\boxed{}".\n'
)
"""The first line of every question's prompt (``process_example_mergedimg``)."""

MATHVISION_DIRECT_PROMPT = "Answer the question using a single word or phrase."
"""The last line of the direct prompt (``models/GPT4V.py`` ``geninput``)."""

_LETTERS = ("A", "B", "C", "D", "E")


def _options_block(options: list[str]) -> str:
    # Five options listed "(A) ..." one a line, unless they are the letters A-E themselves
    # (the options are then in the picture): process_example_mergedimg.
    if not options or "".join(options) == "ABCDE":
        return ""
    return "".join(f"({m}) {o}\n" for m, o in zip(_LETTERS, options, strict=True))


def _cot_text(question: str, options: list[str]) -> str:
    # process_example_mergedimg: the boxed-answer instruction, the question, the options.
    return MATHVISION_PROMPT + f"{question}\n{_options_block(options)}"


def _direct_text(question: str, options: list[str]) -> str:
    # geninput: the question, the options, a blank line's worth of "\n", the instruction.
    return f"{question}\n{_options_block(options)}\n{MATHVISION_DIRECT_PROMPT}"


def _mathvision(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return _read(row, ctx, _cot_text)


def _mathvision_direct(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return _read(row, ctx, _direct_text)


def _read(
    row: Mapping[str, Any], ctx: RowContext, prompt: Callable[[str, list[str]], str]
) -> Sample:
    if importlib.util.find_spec("latex2sympy2") is None:
        # Checked on reading, not after the model has answered every question.
        raise DataError(
            "mathvision: its official scoring parses LaTeX answers with latex2sympy2, which is "
            "not installed: pip install 'lmmprobe[mathvision]'"
        )
    question = required_text(row, "question")
    options = row.get("options")
    if options is None:
        options = []
    if not isinstance(options, list | tuple) or not all(isinstance(o, str) for o in options):
        raise RowError("options", f"expected a list of option texts, got {options!r}")
    options = list(options)
    if options and len(options) != len(_LETTERS):
        raise RowError("options", f"expected 5 options or none, got {len(options)}")
    answer = required_text(row, "answer")
    if options and answer not in _LETTERS:
        raise RowError("answer", f"{answer!r} is not one of the option letters A-E")
    level = row.get("level")
    if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= 5:
        raise RowError("level", f"expected a level from 1 to 5, got {level!r}")
    text = prompt(question, options)
    return Sample(
        id=required_text(row, "id"),
        images=[image_ref(row["decoded_image"], ctx, "decoded_image")],
        question=question,
        answer=[answer],
        formulation="open_ended",
        metadata={
            "options": options,
            # The paper's breakdowns: 16 subjects, 5 levels (`--by subject`, `--by level`).
            "subject": plain(row.get("subject")),
            "level": level,
        },
        # The whole message as the official script writes it, cited as the definition's.
        prompt=PromptTemplate(escape_braces(text)),
    )


MATHVISION = benchmark(
    Benchmark(
        name="mathvision",
        title="MATH-Vision (test)",
        citation="Wang et al. 2024, Measuring Multimodal Mathematical Reasoning with MATH-Vision "
        "Dataset, NeurIPS 2024 Datasets and Benchmarks, arXiv:2402.14804",
        license="mit (MathLLMs/MathVision card)",
        formulation="open_ended",
        metric="mathvision_accuracy",
        prompt=PromptTemplate(
            template=escape_braces(MATHVISION_PROMPT) + "{question}\n{options}",
            option_format="({mark}) {text}",
            source=f"mathllm/MATH-V @ {MATH_V_COMMIT[:7]} models/GPT4V.py "
            "(process_example_mergedimg: the boxed-answer instruction, the question, the five "
            "options '(A) ...' unless they are the letters A-E)",
        ),
        to_sample=_mathvision,
        include=("data/*", "README.md"),
        split="test",
        splits=("test", "testmini"),
        hub_id="MathLLMs/MathVision",
        revision="0c681f39d3dacd336abf62ceb833e40320c8599f",
        size=3040,
        notes=(
            "mathvision_accuracy reads and compares answers with MATH-V's evaluation/evaluate.py "
            "and utils.py (find_math_answer, is_equal: LaTeX parsed by latex2sympy2, values "
            "equal at 2 decimals); it needs pip install 'lmmprobe[mathvision]'. Where is_equal "
            "evaluates the parsed answer with Python's eval, lmmprobe computes the same value "
            "without evaluating model text as code.",
            "--by subject gives the 16 subjects, --by level the 5 levels, --by subject,level "
            "both (math_level_subject_acc's keys). split=testmini is the 304-question subset.",
            "The prompt is the chain-of-thought one of the paper's GPT-4V runs with the merged "
            "image the dataset holds; the questions keep their <image1> marks. MATH-V's direct "
            "prompt (models/GPT4V.py geninput) is `mathvision-direct`, read the same way.",
        ),
        schema_confirmed="MathLLMs/MathVision card @ b223f3c (id, question, options list, "
        "image path, decoded_image Image, answer, solution, level int64, subject) + "
        f"mathllm/MATH-V data/test.jsonl @ {MATH_V_COMMIT[:7]}",
    )
)


MATHVISION_DIRECT = benchmark(
    replace(
        MATHVISION,
        name="mathvision-direct",
        title="MATH-Vision (test, direct prompt)",
        prompt=PromptTemplate(
            template="{question}\n{options}\n" + MATHVISION_DIRECT_PROMPT,
            option_format="({mark}) {text}",
            source=f"mathllm/MATH-V @ {MATH_V_COMMIT[:7]} models/GPT4V.py (geninput: the "
            "question, the five options '(A) ...' unless they are the letters A-E, then "
            "'Answer the question using a single word or phrase.'; also models/Qwen-VL.py "
            "process_example)",
        ),
        to_sample=_mathvision_direct,
        # One copy serves both prompts: $LMMPROBE_DATA_DIR/mathvision.
        copy="mathvision",
        fetch="",
        notes=(
            MATHVISION.notes[0],
            MATHVISION.notes[1],
            "The prompt is MATH-V's direct one, as models/GPT4V.py geninput and "
            "models/Qwen-VL.py process_example write it: the question and its options, then "
            "'Answer the question using a single word or phrase.'; `mathvision` asks the boxed "
            "chain-of-thought prompt. Both are read by the same rules.",
        ),
    )
)
