"""MMMU-Pro: ``mmmu-pro-standard-4``, ``mmmu-pro-standard-10`` and ``mmmu-pro-vision``.

One benchmark in three published settings (the configs of ``MMMU/MMMU_Pro``), which differ only
in their hub config, prompt and images, each asked in the two modes of the official inference
(``--mode direct``, the plain names, and ``--mode cot``, the names ending ``-cot``): one table
of variants in one file (issue 37: a family that differs in configuration is not a file per
member). The standard settings ask the question
with its options listed (4, or up to 10 after augmentation) and the images the text names; the
vision setting shows one screenshot holding question and options, asked with an instruction
alone. All three are scored by ``mmmu_pro_accuracy`` (MMMU-Pro's own answer reading).

Origin: Yue et al. 2024, MMMU-Pro (arXiv:2409.02813); data MMMU/MMMU_Pro (apache-2.0); prompts
and inference from MMMU-Benchmark/MMMU ``mmmu-pro/`` at `MMMU_PRO_COMMIT`.
"""

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
    RowReader,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.standard._choice import escape_braces, plain
from lmmprobe.schema import ImageRef, Sample
from lmmprobe.schema.text import ascii_integer

__all__ = [
    "MMMU_PRO_COMMIT",
    "MMMU_PRO_STANDARD_4",
    "MMMU_PRO_STANDARD_4_COT",
    "MMMU_PRO_STANDARD_10",
    "MMMU_PRO_STANDARD_10_COT",
    "MMMU_PRO_VISION",
    "MMMU_PRO_VISION_COT",
    "STANDARD_COT",
    "STANDARD_DIRECT",
    "VISION_COT",
    "VISION_DIRECT",
]

MMMU_PRO_COMMIT = "bb0b95a945998d91dfef37e969e07d49d1139438"
"""The MMMU-Benchmark/MMMU commit whose ``mmmu-pro/`` prompts, inference and scoring are cited."""

_SOURCE = f"MMMU-Benchmark/MMMU @ {MMMU_PRO_COMMIT[:7]} mmmu-pro/"

STANDARD_DIRECT = "Answer with the option letter from the given choices directly."
"""``prompts.yaml`` ``direct.standard``: the last line of a standard-setting prompt."""

VISION_DIRECT = (
    "Answer with the option letter from the given choices directly. The last line of your "
    "response should be of the following format: 'Answer: $LETTER' (without quotes) where "
    "LETTER is one of options."
)
"""``prompts.yaml`` ``direct.vision``: the whole prompt of the vision setting."""

STANDARD_COT = (
    "Answer the preceding multiple choice question. The last line of your response should be "
    "of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of "
    "options. Think step by step before answering."
)
"""``prompts.yaml`` ``cot.standard``: the last line of a standard-setting prompt (``--mode cot``)."""

VISION_COT = (
    "Write out the multiple-choice question in the image and then solve it. The last line of "
    "your response should be of the following format: 'Answer: $LETTER' (without quotes) where "
    "LETTER is one of options. Think step by step before answering."
)
"""``prompts.yaml`` ``cot.vision``: the whole prompt of the vision setting (``--mode cot``)."""

_INSTRUCTIONS = {
    ("direct", True): STANDARD_DIRECT,
    ("direct", False): VISION_DIRECT,
    ("cot", True): STANDARD_COT,
    ("cot", False): VISION_COT,
}

# The official inference finds "<image N>" with \s+ between the word and the number, sends the
# images in the order the tokens appear (a token named twice sends its image twice) and writes
# each token as "[image]" (infer_transformers.py; the API scripts write "<image>", which an
# open model's processor would take for its own image token).
# ASCII digits, few: "\d" also matches "٣" (read as 3 by int()) and 5,000 digits make int() raise.
_IMAGE_TOKEN = re.compile(r"<image\s+([0-9]{1,6})>")
_SHOWN_TOKEN = "[image]"

HUB_ID = "MMMU/MMMU_Pro"
# The newest commit whose tree was confirmed to hold all three configs (Nov 2024); later ones
# re-uploaded the vision files.
REVISION = "b037bbe72fe851ae9c9a792c7b34722542d4dc78"


def _options(row: Mapping[str, Any]) -> list[str]:
    """The row's options: a Python list written as text (as published) or a list."""
    value = row["options"]
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
            raise RowError(
                "options", f"expected a Python list written as text, got {value[:80]!r}"
            ) from exc
    if not isinstance(value, list | tuple) or not value:
        raise RowError("options", f"expected a non-empty list of options, got {value!r}")
    return [str(o) for o in value]


def _letters(row: Mapping[str, Any], options: list[str]) -> tuple[list[str], str]:
    letters = [chr(ord("A") + i) for i in range(len(options))]
    answer = required_text(row, "answer")
    # A letter beyond the options is kept, as the released scoring keeps it (it can never be
    # read as right): validation_Accounting_29 has one option, a list of three, and answer B.
    if len(answer) != 1 or not "A" <= answer <= "Z":
        raise RowError("answer", f"expected an option letter, got {answer!r}")
    return letters, answer


def _metadata(row: Mapping[str, Any], letters: list[str], options: list[str]) -> dict[str, Any]:
    return {
        "option_letters": letters,
        "option_texts": options,
        # The 30 subjects the paper's per-subject figures use (`--by subject`).
        "subject": plain(row.get("subject")),
        "img_type": plain(row.get("img_type")),
        "topic_difficulty": plain(row.get("topic_difficulty")),
    }


def _standard(row: Mapping[str, Any], ctx: RowContext, instruction: str) -> Sample:
    """A standard-setting row: the question, its options and the images its text names."""
    question = required_text(row, "question")
    options = _options(row)
    letters, answer = _letters(row, options)
    listed = "\n".join(f"{m}. {o}" for m, o in zip(letters, options, strict=True))
    # construct_prompt, then replace_images_tokens over the whole text, options included
    # (some options are images: "<image 2>").
    text = f"{question}\n{listed}\n{instruction}"
    order = _IMAGE_TOKEN.findall(text)
    images: list[ImageRef] = []
    for number in order:
        field = f"image_{ascii_integer(number, signed=False)}"
        if row.get(field) is None:
            raise RowError(field, "the question names this image but the row has none")
        images.append(image_ref(row[field], ctx, field))
    shown = _IMAGE_TOKEN.sub(_SHOWN_TOKEN, text)
    return Sample(
        id=required_text(row, "id"),
        images=images,
        question=_IMAGE_TOKEN.sub(_SHOWN_TOKEN, question),
        answer=[answer],
        formulation="open_ended",
        metadata=_metadata(row, letters, options),
        # The whole message as the official script words it, cited as the definition's.
        prompt=PromptTemplate(escape_braces(shown)),
    )


def _vision(row: Mapping[str, Any], ctx: RowContext, instruction: str) -> Sample:
    """A vision-setting row: one screenshot of question and options, the instruction alone."""
    options = _options(row)
    letters, answer = _letters(row, options)
    return Sample(
        id=required_text(row, "id"),
        images=[image_ref(row["image"], ctx, "image")],
        question=instruction,
        answer=[answer],
        formulation="open_ended",
        metadata=_metadata(row, letters, options),
        prompt=PromptTemplate(escape_braces(instruction)),
    )


def _reader(standard: bool, instruction: str) -> RowReader:
    """The setting's row reader, asking with `instruction` (a mode's prompts.yaml line)."""
    read = _standard if standard else _vision

    def reader(row: Mapping[str, Any], ctx: RowContext) -> Sample:
        return read(row, ctx, instruction)

    return reader


_READING = (
    "mmmu_pro_accuracy reads answers with MMMU-Pro's parse_multi_choice_response "
    "(mmmu-pro/evaluate.py): a single option letter after the last 'Answer:', then MMMU's "
    "rules with its own letter tests. Where that code picks a random letter (nothing "
    "readable), lmmprobe counts the answer as wrong."
)
_KEPT = (
    "A published row whose answer letter is beyond its options (validation_Accounting_29: "
    "one option, a list written as text) is asked and counted, never right, as the released "
    "scoring counts it; options are shown as Python writes them (str of the value)."
)
_SCORE = (
    "The paper's MMMU-Pro score is the mean of the standard (10 options) and vision "
    "accuracies; --by subject gives the per-subject figures."
)
_MODES = {
    "direct": (
        "The prompt is prompts.yaml's direct one (infer_transformers.py --mode direct); the "
        "same setting with its CoT prompt is the name ending -cot."
    ),
    "cot": (
        "The prompt is prompts.yaml's CoT one (infer_transformers.py --mode cot): step-by-step "
        "reasoning ending in 'Answer: $LETTER', read the same way. The released inference "
        "generates at most 50 new tokens in either mode; a CoT answer needs more (--max-new-tokens)."
    ),
}


def _variant(
    name: str, config: str, title: str, standard: bool, notes: tuple[str, ...], mode: str
) -> Benchmark:
    instruction = _INSTRUCTIONS[(mode, standard)]
    source = (
        f"{_SOURCE}prompts.yaml ({mode}.standard) and infer/infer_transformers.py "
        "(construct_prompt: question, 'A. option' lines, the instruction; "
        "replace_images_tokens: <image N> shown as [image], images in the order named)"
        if standard
        else f"{_SOURCE}prompts.yaml ({mode}.vision) and infer/infer_transformers.py "
        "(process_prompt: the instruction alone with the row's one image)"
    )
    return benchmark(
        Benchmark(
            name=name,
            # The standard settings ask up to seven images a question.
            groups=("multi-image",) if standard else (),
            title=title,
            citation="Yue et al. 2024, MMMU-Pro: A More Robust Multi-discipline Multimodal "
            "Understanding Benchmark, arXiv:2409.02813",
            license="apache-2.0 (MMMU/MMMU_Pro card)",
            formulation="open_ended",
            metric="mmmu_pro_accuracy",
            prompt=PromptTemplate(
                template="{question}\n{options}\n" + instruction
                if standard
                else escape_braces(instruction),
                source=source,
            ),
            to_sample=_reader(standard, instruction),
            include=(f"{config}/*", "README.md"),
            split="test",
            splits=("test",),
            hub_id=HUB_ID,
            revision=REVISION,
            config=config,
            size=1730,
            notes=(*notes, _READING, _KEPT, _SCORE, _MODES[mode]),
            # Both modes read one copy of the setting: $LMMPROBE_DATA_DIR/<the direct name>.
            copy=name.removesuffix("-cot") if mode == "cot" else "",
            schema_confirmed=(
                f"MMMU/MMMU_Pro @ {REVISION[:7]} tree ({config}/test-*.parquet) + the rows of "
                f"{_SOURCE}output/*.jsonl (id, question, options as text, explanation, "
                "img_type, answer, topic_difficulty, subject; image_1..image_7 or image, "
                "dropped there) + infer/*.py (the fields they read)"
            ),
        )
    )


_STANDARD_NOTE = (
    "Each row gets its own prompt, the whole message as MMMU-Pro's inference writes it: the "
    "question, its options as 'A. ...' lines and the instruction; each <image N> (in the "
    "question or an option) is shown as [image] and its image sent, in the order they appear "
    "(images come before the text in lmmprobe's message; the official scripts put them after)."
)

_TEN_NOTE = (
    "Options are shuffled in this setting, so the <image N> tokens of options may come in "
    "any order; each still sends its own image_N (the repository's README note)."
)
_VISION_NOTE = (
    "Question and options are inside the row's one image (a screenshot or photo); the "
    "prompt is the vision instruction alone, and the options are kept only for reading "
    "answers."
)

MMMU_PRO_STANDARD_4 = _variant(
    "mmmu-pro-standard-4",
    "standard (4 options)",
    "MMMU-Pro (standard, 4 options)",
    True,
    (_STANDARD_NOTE,),
    "direct",
)
MMMU_PRO_STANDARD_10 = _variant(
    "mmmu-pro-standard-10",
    "standard (10 options)",
    "MMMU-Pro (standard, 10 options)",
    True,
    (_STANDARD_NOTE, _TEN_NOTE),
    "direct",
)
MMMU_PRO_VISION = _variant(
    "mmmu-pro-vision", "vision", "MMMU-Pro (vision)", False, (_VISION_NOTE,), "direct"
)
MMMU_PRO_STANDARD_4_COT = _variant(
    "mmmu-pro-standard-4-cot",
    "standard (4 options)",
    "MMMU-Pro (standard, 4 options, CoT)",
    True,
    (_STANDARD_NOTE,),
    "cot",
)
MMMU_PRO_STANDARD_10_COT = _variant(
    "mmmu-pro-standard-10-cot",
    "standard (10 options)",
    "MMMU-Pro (standard, 10 options, CoT)",
    True,
    (_STANDARD_NOTE, _TEN_NOTE),
    "cot",
)
MMMU_PRO_VISION_COT = _variant(
    "mmmu-pro-vision-cot", "vision", "MMMU-Pro (vision, CoT)", False, (_VISION_NOTE,), "cot"
)
