"""What the multiple-choice and yes/no benchmark definitions of this folder share.

MMBench (dev, English, CircularEval), MMMU (validation), MME, POPE, SEED-Bench (image),
ScienceQA-IMG, AI2D, MMStar, RealWorldQA, HallusionBench and MathVista (testmini) are one file
each. Each says where its data lives (the hub id lmms-eval loads, at a pinned revision where one
is known), how a row of its published schema becomes a `Sample`, its official prompt (cited),
and the run metric computing its official score (`lmmprobe.metrics.builtin.benchmark_choice`,
or the built-in ``accuracy``).

Yes/no benchmarks (MME, POPE, HallusionBench) and the benchmarks whose official reading needs
the model's raw answer (MMMU, MathVista) are open-ended samples: lmmprobe keeps the raw text
of open-ended answers, and their metrics read it with the benchmark's own rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lmmprobe.data.benchmarks import (
    RowError,
)
from lmmprobe.schema import ImageRef, PromptTemplate, Sample

LETTER_PROMPT = "Answer with the option's letter from the given choices directly."


def present(value: Any) -> bool:
    """Whether a table cell holds a value (not null, NaN, empty or the text "nan")."""
    # MMBench's tables write a missing option or hint as null, NaN or the text "nan".
    if value is None or (isinstance(value, float) and value != value):
        return False
    return not (isinstance(value, str) and value.strip() in ("", "nan"))


def struct(value: Any) -> Mapping[str, Any]:
    """A struct column's value (a mapping), or an empty one when the row has none."""
    return value if isinstance(value, Mapping) else {}


def escape_braces(text: str) -> str:
    """Text put into a per-row ``str.format`` template, braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def plain(value: Any) -> Any:
    """`value` as plain JSON values (mappings, lists, str, numbers), for sample metadata."""
    # Metadata must be JSON: numpy scalars and the like become Python values.
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [plain(v) for v in value]
    return str(value)


def yes_no(value: Any, field: str) -> str:
    """A gold answer read as ``yes`` or ``no`` (`RowError` naming `field` otherwise)."""
    text = str(value).strip().lower().rstrip(".")
    if text not in ("yes", "no"):
        raise RowError(field, f"expected Yes or No, got {value!r}")
    return text


def embedded_sample(
    sid: str,
    question: str,
    marks: list[str],
    texts: list[str],
    answer: str,
    images: list[ImageRef],
    template: str,
    metadata: dict[str, Any],
) -> Sample:
    """A sample of a question whose options are in its text: a choice sample when they parse."""
    # The options are part of the question text as published: the prompt shows that text
    # verbatim, and the parsed options let lmmprobe's matcher read the answer. The model sees
    # the published letters whatever the run's shuffle, rotation or marks, so the request must
    # keep them (fixed_options) or the matcher would map its letter to another option.
    prompt = PromptTemplate(template)  # the row's own template, cited as its definition's
    letters = [chr(ord("A") + i) for i in range(len(marks))]
    if len(marks) >= 2 and marks == letters and answer.strip() in marks:
        return Sample(
            id=sid,
            images=images,
            question=question,
            choices=texts,
            answer=marks.index(answer.strip()),
            metadata={**metadata, "fixed_options": True},
            prompt=prompt,
        )
    return Sample(
        id=sid,
        images=images,
        question=question,
        answer=[answer],
        formulation="open_ended",
        metadata=metadata,
        prompt=prompt,
    )
