"""HEMM: OK-VQA (val): the ``hemm-okvqa`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    Row,
    Rows,
    at,
    file_image,
    hemm_sample,
    loader_confirmed,
    need_root,
    read_json,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["OKVQA", "OK_VQA"]

OKVQA = (
    "Given an image and a question. Answer the question in a single word.\n"
    "Question: {question} Short Answer: "
)

_OKVQA_ANNOTATIONS = "okvqa/mscoco_val2014_annotations.json"

_OKVQA_QUESTIONS = "okvqa/OpenEnded_mscoco_val2014_questions.json"


def _okvqa_rows(root: Path, split: str) -> Rows:
    annotations = read_json(root, _OKVQA_ANNOTATIONS)
    questions = read_json(root, _OKVQA_QUESTIONS)
    by_id = {q["question_id"]: q["question"] for q in questions.get("questions", [])}
    for i, ann in enumerate(annotations.get("annotations", [])):
        yield (
            f"{root / _OKVQA_ANNOTATIONS}:annotations[{i}]",
            {
                **ann,
                "question": by_id.get(ann.get("question_id")),
            },
        )


def _okvqa_sample(row: Row, ctx: RowContext) -> Sample | None:
    root = need_root(ctx)
    # HEMM's path puts six zeros before the id and skips a question whose file does not
    # exist: COCO's names pad ids to 12 digits, so only 6-digit image ids are asked.
    relative = f"okvqa/val2014/COCO_val2014_000000{row['image_id']}.jpg"
    if not (root / relative).is_file():
        return None
    if not isinstance(row.get("question"), str):
        raise RowError("question_id", "no question with this id in the questions file")
    refs = list(dict.fromkeys(str(a["answer"]) for a in row.get("answers", [])))
    return hemm_sample(
        ctx,
        str(row["question_id"]),
        [file_image(root, relative)],
        row["question"],
        OKVQA,
        refs,
        multi_ref=True,
    )


OK_VQA = benchmark(
    Benchmark(
        name="hemm-okvqa",
        title="HEMM: OK-VQA (val)",
        citation=CITATION,
        license="CC BY 4.0 (OK-VQA); COCO images under their Flickr licenses",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(OKVQA, at("hemm/prompts/okqvqa_prompt.py")),
        to_sample=_okvqa_sample,
        split="val",
        splits=("val",),
        read_files=_okvqa_rows,
        hemm="OK-VQA",
        schema_confirmed=loader_confirmed("hemm/data/ok_vqa_dataset.py"),
        notes=(
            "Ground truth: the question's distinct annotator answers, all references (BARTScore "
            "keeps the best).",
            "As HEMM: the image path is COCO_val2014_000000{image_id}.jpg and questions whose "
            "file does not exist are skipped, so only images with 6-digit ids are asked.",
        ),
        **release_files(
            'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-okvqa/okvqa && cd "$LMMPROBE_DATA_DIR"/hemm-okvqa/okvqa && '
            "wget http://images.cocodataset.org/zips/val2014.zip "
            "https://okvqa.allenai.org/static/data/mscoco_val2014_annotations.json.zip "
            "https://okvqa.allenai.org/static/data/OpenEnded_mscoco_val2014_questions.json.zip && "
            "unzip val2014.zip && unzip mscoco_val2014_annotations.json.zip && "
            "unzip OpenEnded_mscoco_val2014_questions.json.zip"
        ),
    )
)
