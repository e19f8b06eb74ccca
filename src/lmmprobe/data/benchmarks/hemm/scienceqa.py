"""HEMM: ScienceQA (test, questions with an image): the ``hemm-scienceqa`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    Row,
    at,
    escape,
    hemm_sample,
    image_bytes,
    jpeg_image,
    loader_confirmed,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["SCIENCEQA", "SCIENCEQA_BENCHMARK", "scienceqa_template"]

SCIENCEQA = (
    "You are given an image, question and few choices. A context is also provided to help you "
    "understand the image. In order to answer the question, you have been given lecture notes. "
    "You can use these lecture notes, image, and the context in order to answer the question. "
    "There are some choices given to you which are comma separated. You have to select which "
    "choice best answers the question. Generate choice as it is from the given choices.\n"
    "Lecture: {lecture}\nQuestion: {question}\nContext: {context}\nChoices: {choices}\nAnswer:"
)


def scienceqa_template(lecture: str, context: str, choices: list[str]) -> str:
    """HEMM's ScienceQA message around the question slot.

    HEMM's prompt joins the choices with ", " after ``Choices:``, and its loader then appends
    one ``N) choice`` line per choice and an empty line after ``Answer:``.
    """
    head = SCIENCEQA.replace("{question}", "\0").format(
        lecture=escape(lecture), context=escape(context), choices=escape(", ".join(choices).strip())
    )
    lines = "".join(f"{i + 1}) {escape(c)}\n" for i, c in enumerate(choices))
    return head.replace("\0", "{question}") + lines + "\n"


def _scienceqa_sample(row: Row, ctx: RowContext) -> Sample | None:
    if not row.get("image"):
        return None  # HEMM asks only the questions with an image
    choices = [str(c) for c in row["choices"]]
    answer = row["answer"]
    if not isinstance(answer, int) or not 0 <= answer < len(choices):
        raise RowError("answer", f"expected an index into {len(choices)} choices, got {answer!r}")
    image = jpeg_image(image_bytes(row["image"], "image", ctx.root), "image", convert_rgb=False)
    template = scienceqa_template(str(row["lecture"]), str(row["hint"]), choices)
    return hemm_sample(
        ctx, str(ctx.index), [image], str(row["question"]), template, choices[answer]
    )


SCIENCEQA_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-scienceqa",
        title="HEMM: ScienceQA (test, questions with an image)",
        citation=CITATION,
        license="CC BY-NC-SA 4.0 (ScienceQA)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(
            SCIENCEQA.replace("{lecture}", "{{lecture}}")
            .replace("{context}", "{{context}}")
            .replace("{choices}", "{{choices}}"),
            at("hemm/prompts/scienceqa_prompt.py") + " and hemm/data/scienceQA_dataset.py",
        ),
        to_sample=_scienceqa_sample,
        split="test",
        splits=("test",),
        hub_id="derek-thomas/ScienceQA",
        size=2017,
        hemm="ScienceQA",
        schema_confirmed=loader_confirmed("hemm/data/scienceQA_dataset.py"),
        notes=(
            "HEMM loads derek-thomas/ScienceQA without a pinned revision and skips rows without "
            "an image.",
            "The message is HEMM's prompt with the lecture, hint (Context), choices joined by ', ', "
            "then one 'N) choice' line per choice and an empty line, as its loader appends them; "
            "the gold answer is the correct choice's text.",
            "As HEMM: the image is saved as JPEG (Pillow's defaults) before the model sees it.",
        ),
    )
)
