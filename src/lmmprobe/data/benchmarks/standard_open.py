"""The open-ended, OCR and caption benchmarks users ask for, each one `Benchmark` definition.

TextVQA (val), DocVQA (val), ChartQA (test), OCRBench, VQAv2 (val), GQA (testdev balanced),
OK-VQA (val2014), VizWiz-VQA (val), COCO Caption (2017 val), NoCaps (val) and Flickr30k (test),
as lmms-eval loads them: the ``lmms-lab/*`` copies on the Hugging Face Hub (lmms-eval's task
files moved to identical ``lmms-lab-encoder/*`` copies in July 2026), ``echo840/OCRBench`` for
OCRBench. Each definition keeps every reference answer in ``Sample.answer``, words the prompt as
lmms-eval's task does (cited), and names the run metric computing the official score
(`lmmprobe.metrics.builtin.benchmark_open`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
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
    lmms_source,
    required_text,
)
from lmmprobe.schema import Sample

__all__ = ["BENCHMARK_NAMES", "read_gqa_snapshot"]

SHORT_ANSWER = "\nAnswer the question using a single word or phrase."
UNANSWERABLE = "\nWhen the provided information is insufficient, respond with 'Unanswerable'."
CAPTION_PROMPT = "Provide a one-sentence caption for the provided image."
_LMMS_ENCODER = (
    "lmms-eval's task files now load the identical copy lmms-lab-encoder/{repo} (moved there "
    "in July 2026); either works."
)


# --- reading fields ------------------------------------------------------------------------


def _texts(row: Mapping[str, Any], field: str) -> list[str]:
    """A list of reference texts, kept as written (empty strings included: they are answers)."""
    value = row[field]
    if not isinstance(value, list) or not value:
        raise RowError(field, f"expected a non-empty list of answers, got {value!r}")
    bad = [v for v in value if not isinstance(v, str)]
    if bad:
        raise RowError(field, f"expected text answers, got {bad[0]!r}")
    return list(value)


def _id(row: Mapping[str, Any], field: str) -> str:
    value = row[field]
    if value is None or isinstance(value, bool) or (isinstance(value, str) and not value):
        raise RowError(field, f"expected an id, got {value!r}")
    return str(value)


def _open_sample(
    sid: str,
    row: Mapping[str, Any],
    ctx: RowContext,
    question: str,
    answers: list[str],
    formulation: str,
    **metadata: Any,
) -> Sample:
    return Sample(
        id=sid,
        images=[image_ref(row["image"], ctx)],
        question=question,
        answer=answers,
        formulation=formulation,
        metadata={k: v for k, v in metadata.items() if v is not None},
    )


# --- TextVQA -------------------------------------------------------------------------------


def _textvqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    # lmms-eval asks doc["question"].capitalize(): first letter upper, every other lowered.
    return _open_sample(
        _id(row, "question_id"),
        row,
        ctx,
        required_text(row, "question").capitalize(),
        _texts(row, "answers"),
        "open_ended",
        question_id=row["question_id"],
        image_id=row.get("image_id"),
        ocr_tokens=row.get("ocr_tokens"),
    )


TEXTVQA_REVISION = "9c0699cd19768ac5ab97568f6b3cbac4c0062884"
TEXTVQA = benchmark(
    Benchmark(
        name="textvqa",
        title="TextVQA (validation)",
        citation="Singh et al. 2019, Towards VQA Models That Can Read. CVPR 2019, arXiv:1904.08920",
        license="unknown (see card); TextVQA's annotations are CC BY 4.0 (textvqa.org)",
        formulation="open_ended",
        metric="vqa_accuracy_evalai",
        prompt=PromptTemplate(
            template="{question}" + SHORT_ANSWER,
            source=lmms_source(
                "textvqa/_default_template_textvqa_yaml (post_prompt) + utils.py "
                "textvqa_doc_to_text (question.capitalize())"
            ),
        ),
        to_sample=_textvqa,
        include=("data/validation-*",),
        split="validation",
        splits=("train", "validation", "test"),
        hub_id="lmms-lab/textvqa",
        revision=TEXTVQA_REVISION,
        size=5000,
        reform="scene text perception",
        notes=(
            "Scored with EvalAI's answer processor and the 10-annotator VQA accuracy, as "
            "lmms-eval's textvqa_val computes it (the TextVQA evaluation's formula, mmf); the "
            "question is shown capitalized as lmms-eval shows it. lmms-eval's optional "
            "OCR-token hint is off by default and not added.",
            "The pinned revision is the repository's current main (9c0699c on the hub's commit "
            "list; the full id as public evaluation code pins it, read offline).",
            _LMMS_ENCODER.format(repo="textvqa"),
        ),
        schema_confirmed=(
            "lmms-lab/textvqa card (copy pppop7/textvqa @ 21253e8): image_id string, question_id "
            "int32, question, question_tokens list, image Image, image_width/height int32, "
            "flickr_original_url, flickr_300k_url, answers list of 10 strings, image_classes "
            "list, set_name, ocr_tokens list; files data/validation-0000N-of-00003.parquet; "
            "+ lmms-eval textvqa/utils.py"
        ),
    )
)


# --- DocVQA --------------------------------------------------------------------------------


def _docvqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return _open_sample(
        _id(row, "questionId"),
        row,
        ctx,
        required_text(row, "question"),
        _texts(row, "answers"),
        "open_ended",
        question_types=row.get("question_types"),
        docId=row.get("docId"),
    )


DOCVQA_REVISION = "59fed3cdc38662abeef8f363171b2ec7c95c165c"
DOCVQA = benchmark(
    Benchmark(
        name="docvqa",
        title="DocVQA (validation)",
        citation="Mathew et al. 2021, DocVQA: A Dataset for VQA on Document Images. WACV 2021, "
        "arXiv:2007.00398",
        license="apache-2.0 (lmms-lab/DocVQA card)",
        formulation="open_ended",
        metric="anls",
        prompt=PromptTemplate(
            template="{question}" + SHORT_ANSWER,
            source=lmms_source(
                "docvqa/_default_template_docvqa_yaml (post_prompt) + utils.py docvqa_doc_to_text"
            ),
        ),
        to_sample=_docvqa,
        include=("DocVQA/validation-*",),
        split="validation",
        splits=("train", "validation", "test"),
        hub_id="lmms-lab/DocVQA",
        revision=DOCVQA_REVISION,
        config="DocVQA",
        size=5349,
        reform="scene text perception",
        notes=(
            "ANLS with threshold 0.5 over all reference answers, as the DocVQA (RRC) evaluation "
            "script computes it; the test split has no answers (submit to the RRC server).",
            _LMMS_ENCODER.format(repo="DocVQA"),
        ),
        schema_confirmed=(
            "lmms-lab/DocVQA card @ 59fed3c (config DocVQA: questionId string, question, "
            "question_types list, image Image, docId int64, ucsf_document_id, "
            "ucsf_document_page_no, answers list of strings, data_split; files "
            "DocVQA/validation-*) + lmms-eval docvqa/utils.py"
        ),
    )
)


# --- ChartQA -------------------------------------------------------------------------------


def _chartqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    # No id column: the row's position in the split names it (human rows come first).
    return _open_sample(
        f"{ctx.split}-{ctx.index}",
        row,
        ctx,
        required_text(row, "question"),
        [required_text(row, "answer")],
        "open_ended",
        type=row.get("type"),
    )


CHARTQA_REVISION = "9e63b7df1592a1c2158e735cc1725454aef0d6d9"
CHARTQA = benchmark(
    Benchmark(
        name="chartqa",
        title="ChartQA (test, human + augmented)",
        citation="Masry et al. 2022, ChartQA: A Benchmark for Question Answering about Charts "
        "with Visual and Logical Reasoning. Findings of ACL 2022, arXiv:2203.10244",
        license="unknown (see card); the ChartQA release is GPL-3.0 (ahmed-masry/ChartQA card)",
        formulation="open_ended",
        metric="relaxed_accuracy",
        prompt=PromptTemplate(
            template="{question}\nAnswer the question with a single word.",
            source=lmms_source("chartqa/chartqa.yaml (post_prompt) + utils.py chartqa_doc_to_text"),
        ),
        to_sample=_chartqa,
        split="test",
        splits=("test",),
        hub_id="lmms-lab/ChartQA",
        revision=CHARTQA_REVISION,
        size=2500,
        notes=(
            "Relaxed accuracy: numeric answers within 5% of the gold count, others must match "
            "exactly (case-insensitive). lmms-eval also reports the human_test and "
            "augmented_test halves: run with --by type.",
            _LMMS_ENCODER.format(repo="ChartQA"),
        ),
        schema_confirmed=(
            "lmms-eval chartqa/upload_chartqa.py (features type, question, answer strings, image "
            "Image; type human_test/augmented_test) + the same four columns in the copy "
            "qywang1106/chartqa_split_2_2's card; lmms-lab/ChartQA @ 9e63b7d holds data/test-*"
        ),
    )
)


# --- OCRBench ------------------------------------------------------------------------------


def _ocrbench(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    category = required_text(row, "question_type")
    # lmms-eval strips the question and adds nothing to it.
    return _open_sample(
        f"{ctx.split}-{ctx.index}",
        row,
        ctx,
        required_text(row, "question").strip(),
        _texts(row, "answer"),
        "ocr",
        question_type=category,
        dataset=required_text(row, "dataset"),
    )


OCRBENCH_REVISION = "92a54bd1384387c178d5a07140a2d85e0a3d12e1"
OCRBENCH = benchmark(
    Benchmark(
        name="ocrbench",
        title="OCRBench",
        citation="Liu et al. 2023, OCRBench: On the Hidden Mystery of OCR in Large Multimodal "
        "Models. arXiv:2305.07895",
        license="unknown (see card)",
        formulation="ocr",
        metric="ocrbench_score",
        prompt=PromptTemplate(
            template="{question}",
            source=lmms_source(
                "ocrbench/ocrbench.yaml (no pre/post prompt) + utils.py "
                "ocrbench_doc_to_text (question.strip())"
            ),
        ),
        to_sample=_ocrbench,
        split="test",
        splits=("test",),
        hub_id="echo840/OCRBench",
        revision=OCRBENCH_REVISION,
        size=1000,
        reform="scene text perception",
        notes=(
            "Score in points out of 1,000: a question scores 1 when a reference occurs in the "
            "answer (lowercased; HME100k formulas compared without spaces), as OCRBench's "
            "example.py scores it; --by question_type gives its ten category totals. lmms-eval's "
            "copy also folds full-width characters, which OCRBench's own code does not.",
            "The pinned revision 92a54bd is the repository's current main as the hub's file "
            "listing shows it (read offline); it changed only README.md since 276bd0b, where "
            "the schema was confirmed: the data files are those of the 'Upload dataset' commit.",
        ),
        schema_confirmed=(
            "echo840/OCRBench card @ 276bd0b (dataset, question, question_type strings, answer "
            "list of strings, image Image; data/test-*) + lmms-eval ocrbench/upload_ocrbench.py "
            "+ MultimodalOCR OCRBench/OCRBench.json"
        ),
    )
)


# --- VQAv2 ---------------------------------------------------------------------------------


def _vqav2(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    raw = row["answers"]
    if not isinstance(raw, list) or not raw:
        raise RowError("answers", f"expected the list of annotator answers, got {raw!r}")
    answers = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("answer"), str):
            raise RowError(f"answers[{i}]", f"expected {{answer, answer_id, ...}}, got {item!r}")
        answers.append(item["answer"])
    return _open_sample(
        _id(row, "question_id"),
        row,
        ctx,
        required_text(row, "question"),
        answers,
        "open_ended",
        question_type=row.get("question_type"),
        answer_type=row.get("answer_type"),
        multiple_choice_answer=row.get("multiple_choice_answer"),
        image_id=row.get("image_id"),
    )


VQAV2_REVISION = "32665d35052eb4a6d4414851c3c829a72754915a"
VQAV2 = benchmark(
    Benchmark(
        name="vqav2",
        title="VQAv2 (validation)",
        citation="Goyal et al. 2017, Making the V in VQA Matter. CVPR 2017, arXiv:1612.00837",
        license="cc-by-4.0 (lmms-lab/VQAv2 card)",
        formulation="open_ended",
        metric="vqa_accuracy",
        prompt=PromptTemplate(
            template="{question}" + SHORT_ANSWER,
            source=lmms_source("vqav2/vqav2_val.yaml (post_prompt) + utils.py vqav2_doc_to_text"),
        ),
        to_sample=_vqav2,
        include=("data/validation-*",),
        split="validation",
        splits=("validation",),
        hub_id="lmms-lab/VQAv2",
        revision=VQAV2_REVISION,
        size=214354,
        hemm="VQA",
        reform="visually grounded reasoning",
        notes=(
            "Scored as lmms-eval's vqav2_val scores the model's raw reply (the prompt is "
            "lmms-eval's): the reply and every annotator answer normalized with VQA's "
            "punctuation, digit, article and contraction rules, then the 10-annotator VQA "
            "accuracy (vqav2/utils.py vqav2_process_results). The official vqaEval.py "
            "normalizes only when the annotators disagree, because the challenge cleans the "
            "submitted answers first.",
            _LMMS_ENCODER.format(repo="VQAv2"),
        ),
        schema_confirmed=(
            "lmms-lab/VQAv2 card @ d138bef (question_type, multiple_choice_answer, answers list "
            "of {answer, answer_confidence string, answer_id int64}, image_id int64, "
            "answer_type, question_id int64, question, image Image; data/validation-*) + "
            "lmms-eval vqav2/utils.py"
        ),
    )
)


# --- GQA -----------------------------------------------------------------------------------

GQA_INSTRUCTIONS = "testdev_balanced_instructions"
GQA_IMAGES = "testdev_balanced_images"


def read_gqa_snapshot(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Rows of GQA's hub snapshot, each question joined with its image.

    lmms-lab/GQA keeps questions and images in two configs (``{split}_balanced_instructions``
    and ``{split}_balanced_images``, parquet files named ``{split}-0000N-of-0000M.parquet``);
    lmms-eval joins them on ``imageId`` (``gqa/utils.py gqa_process_docs``), and so does this.

    Raises:
        lmmprobe.data.base.DataError: A config folder or its files are missing.
        lmmprobe.registry.RegistryError: `datasets` is not installed (with the pip command).

    """
    from lmmprobe.data.base import DataError
    from lmmprobe.data.hf_dataset import import_datasets

    import_datasets()  # says which extra to install when `datasets` (and pyarrow) are missing
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    folders = {kind: root / f"{split}_balanced_{kind}" for kind in ("instructions", "images")}
    files = {}
    for kind, folder in folders.items():
        found = sorted(folder.glob(f"{split}-*.parquet"))
        if not found:
            raise DataError(
                f"benchmark gqa: no {folder}/{split}-*.parquet; fetch both configs with:\n  "
                f"{GQA.fetch}"
            )
        files[kind] = found
    images: dict[str, Any] = {}
    for path in files["images"]:
        for item in pq.read_table(path).to_pylist():
            images[str(item["id"])] = item["image"]
    index = 0
    for path in files["instructions"]:
        for row in pq.read_table(path).to_pylist():
            image = images.get(str(row.get("imageId")))
            yield f"{path}[{split}]:{index}", {**row, "image": image}
            index += 1


def _gqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    if row.get("image") is None:
        raise RowError("imageId", f"image {row.get('imageId')!r} is not in {GQA_IMAGES}")
    return _open_sample(
        _id(row, "id"),
        row,
        ctx,
        required_text(row, "question"),
        [required_text(row, "answer")],
        "open_ended",
        image_id=row.get("imageId"),
        full_answer=row.get("fullAnswer"),
    )


GQA_REVISION = "a6e72d6e1b912da88af8b2f9eba05d5ea8ec2dd8"
GQA = benchmark(
    Benchmark(
        name="gqa",
        title="GQA (testdev, balanced)",
        citation="Hudson and Manning 2019, GQA: A New Dataset for Real-World Visual Reasoning "
        "and Compositional Question Answering. CVPR 2019, arXiv:1902.09506",
        license="mit (lmms-lab/GQA card)",
        formulation="open_ended",
        metric="gqa_exact_match",
        prompt=PromptTemplate(
            template="{question}" + SHORT_ANSWER,
            source=lmms_source("gqa/gqa.yaml (post_prompt) + utils.py gqa_doc_to_text"),
        ),
        to_sample=_gqa,
        include=("testdev_balanced_*",),
        split="testdev",
        splits=("testdev",),
        hub_id="lmms-lab/GQA",
        revision=GQA_REVISION,
        size=12578,
        layout="files",
        read_files=read_gqa_snapshot,
        hemm="GQA",
        reform="visually grounded reasoning",
        notes=(
            "Questions and images are two configs of lmms-lab/GQA "
            "(testdev_balanced_instructions, testdev_balanced_images) joined on imageId, as "
            "lmms-eval joins them. The fetch command takes both; without a local copy, the "
            "hub cache's snapshot is read, and online the same two configs are downloaded "
            "into it. Scored by exact match ignoring case and punctuation against the short "
            "answer, as lmms-eval's gqa task.",
            "The pinned revision a6e72d6 is the commit public evaluation code pins for "
            "lmms-lab/GQA (read offline: whether main has moved since could not be asked).",
            _LMMS_ENCODER.format(repo="GQA"),
        ),
        # The images config (id, image) is on the card; of the instructions config only the
        # columns lmms-eval reads (id, imageId, question, answer) and fullAnswer were seen.
        schema_confirmed="",
    )
)


# --- OK-VQA --------------------------------------------------------------------------------


def _okvqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return _open_sample(
        _id(row, "question_id"),
        row,
        ctx,
        required_text(row, "question"),
        _texts(row, "answers"),
        "open_ended",
        question_type=row.get("question_type"),
        answer_type=row.get("answer_type"),
    )


OKVQA_REVISION = "c9f858961f4095a9aeef615057b0822cce967096"
OKVQA = benchmark(
    Benchmark(
        name="okvqa",
        title="OK-VQA (val2014)",
        citation="Marino et al. 2019, OK-VQA: A Visual Question Answering Benchmark Requiring "
        "External Knowledge. CVPR 2019, arXiv:1906.00067",
        license="unknown (see card)",
        formulation="open_ended",
        metric="vqa_accuracy_evalai",
        prompt=PromptTemplate(
            template="{question}" + UNANSWERABLE + SHORT_ANSWER,
            source=lmms_source(
                "ok_vqa/_default_template_vqa_yaml (post_prompt) + utils.py ok_vqa_doc_to_text"
            ),
        ),
        to_sample=_okvqa,
        split="val2014",
        splits=("val2014",),
        hub_id="lmms-lab/OK-VQA",
        revision=OKVQA_REVISION,
        size=5046,
        hemm="OK-VQA",
        reform="visually grounded reasoning",
        notes=(
            "Scored as lmms-eval's ok_vqa_val2014 scores the model's raw reply (the prompt is "
            "lmms-eval's): EvalAI's answer processor on the reply and every annotator answer, "
            "then the 10-annotator VQA accuracy (ok_vqa/utils.py ok_vqa_process_results). The "
            "official vqaEval.py expects answers its challenge has already cleaned.",
            _LMMS_ENCODER.format(repo="OK-VQA"),
        ),
        schema_confirmed=(
            "lmms-lab/OK-VQA card @ c9f8589 (question_id string, image Image, question, answers "
            "list of 10 strings, question_type, answer_type; data/val2014-0000N-of-00002) + "
            "lmms-eval ok_vqa/utils.py"
        ),
    )
)


# --- VizWiz --------------------------------------------------------------------------------


def _vizwiz(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return _open_sample(
        _id(row, "question_id"),
        row,
        ctx,
        required_text(row, "question").capitalize(),
        _texts(row, "answers"),
        "open_ended",
        category=row.get("category"),
    )


VIZWIZ_REVISION = "d428a2dae984f79cf1b9d99467dfa883e0c30686"
VIZWIZ = benchmark(
    Benchmark(
        name="vizwiz",
        title="VizWiz-VQA (val)",
        citation="Gurari et al. 2018, VizWiz Grand Challenge: Answering Visual Questions from "
        "Blind People. CVPR 2018, arXiv:1802.08218",
        license="unknown (see card); VizWiz is CC BY 4.0 (vizwiz.org)",
        formulation="open_ended",
        metric="vqa_accuracy_evalai",
        prompt=PromptTemplate(
            template="{question}" + UNANSWERABLE + SHORT_ANSWER,
            source=lmms_source(
                "vizwiz_vqa/_default_template_vqa_yaml (post_prompt) + utils.py "
                "vizwiz_vqa_doc_to_text (question.capitalize())"
            ),
        ),
        to_sample=_vizwiz,
        include=("data/val-*",),
        split="val",
        splits=("val", "test"),
        hub_id="lmms-lab/VizWiz-VQA",
        revision=VIZWIZ_REVISION,
        size=4319,
        reform="visually grounded reasoning",
        notes=(
            "10-annotator VQA accuracy with EvalAI's answer processor, as lmms-eval's "
            "vizwiz_vqa_val computes it; 'unanswerable' is an ordinary answer. VizWiz's own "
            "evaluation script (vizwiz.org, adapted from VQA's) could not be read here, so "
            "agreement with it is not checked. The question is shown capitalized as lmms-eval "
            "shows it.",
            _LMMS_ENCODER.format(repo="VizWiz-VQA"),
        ),
        schema_confirmed=(
            "lmms-lab/VizWiz-VQA card @ d428a2d (question_id string, image Image, question, "
            "answers list of strings, category string; data/val-0000N-of-00005-<hash>.parquet) "
            "+ lmms-eval vizwiz_vqa/utils.py"
        ),
    )
)


# --- captions ------------------------------------------------------------------------------

_CAPTION_NOTE = (
    "Scored as COCO's caption evaluation scores it (and lmms-eval's caption tasks): BLEU-4, "
    "ROUGE-L and CIDEr over the whole run after the PTB tokenizer (needs Java); METEOR, "
    "which starts its own Java process, is left out of the run metrics."
)


def _caption(
    sid: str, row: Mapping[str, Any], ctx: RowContext, refs_field: str, **metadata: Any
) -> Sample:
    return _open_sample(
        sid, row, ctx, CAPTION_PROMPT, _texts(row, refs_field), "caption", **metadata
    )


def _coco(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return _caption(
        _id(row, "question_id"),
        row,
        ctx,
        "answer",
        coco_id=row.get("id"),
        file_name=row.get("file_name"),
    )


def _nocaps(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return _caption(
        _id(row, "image_id"),
        row,
        ctx,
        "annotations_captions",
        open_images_id=row.get("image_open_images_id"),
    )


def _flickr(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return _caption(_id(row, "img_id"), row, ctx, "caption", filename=row.get("filename"))


_CAPTION_TEMPLATE = PromptTemplate(
    template=CAPTION_PROMPT,
    source=lmms_source(
        "coco_cap/utils.py coco_doc_to_text; nocaps/_default_template_nocaps_yaml; "
        "flickr30k/utils.py flickr_doc_to_text (the same sentence)"
    ),
)

COCO_REVISION = "3bdd5827e243cc3084ac69a1111e69c3ab9193ff"
COCO_CAPTION = benchmark(
    Benchmark(
        name="coco-caption",
        title="COCO Caption (2017 val)",
        citation="Chen et al. 2015, Microsoft COCO Captions: Data Collection and Evaluation "
        "Server. arXiv:1504.00325",
        license="unknown (see card); COCO annotations are CC BY 4.0 (cocodataset.org)",
        formulation="caption",
        metric="coco_cider",
        prompt=_CAPTION_TEMPLATE,
        to_sample=_coco,
        include=("data/val-*",),
        split="val",
        splits=("val", "test"),
        hub_id="lmms-lab/COCO-Caption2017",
        revision=COCO_REVISION,
        size=5000,
        reform="visual description",
        notes=(
            _CAPTION_NOTE,
            "This is lmms-eval's coco2017_cap_val (5,000 images, five references each); "
            "lmms-eval's coco_karpathy_val reads yerevann/coco-karpathy, whose images are URLs "
            "fetched at run time, which lmmprobe does not do.",
            _LMMS_ENCODER.format(repo="COCO-Caption2017"),
        ),
        schema_confirmed=(
            "lmms-lab/COCO-Caption2017 card @ main (question_id string, image Image, question, "
            "answer list of strings, id int64, license int8, file_name, coco_url, height int32, "
            "width int32, date_captured; data/val-0000N-of-00002) + lmms-eval coco_cap/utils.py"
        ),
    )
)

NOCAPS_REVISION = "dad208efd3283d30699ce151cd2035c96ee95a71"
NOCAPS = benchmark(
    Benchmark(
        name="nocaps",
        title="NoCaps (validation)",
        citation="Agrawal et al. 2019, nocaps: novel object captioning at scale. ICCV 2019, "
        "arXiv:1812.08658",
        license="unknown (see card); NoCaps is CC BY 2.0 (HuggingFaceM4/NoCaps card)",
        formulation="caption",
        metric="coco_cider",
        prompt=_CAPTION_TEMPLATE,
        to_sample=_nocaps,
        include=("data/validation-*",),
        split="validation",
        splits=("validation", "test"),
        hub_id="lmms-lab/NoCaps",
        revision=NOCAPS_REVISION,
        size=4500,
        hemm="NoCaps",
        reform="visual description",
        notes=(
            _CAPTION_NOTE,
            "Pinned to the commit whose card (validation split) was read; the repository has "
            "since added the test split (no references).",
            _LMMS_ENCODER.format(repo="NoCaps"),
        ),
        schema_confirmed=(
            "lmms-lab/NoCaps card @ dad208e (image Image, image_coco_url, image_date_captured, "
            "image_file_name, image_height int32, image_width int32, image_id int32, "
            "image_license int8, image_open_images_id, annotations_ids list int32, "
            "annotations_captions list of 10 strings; data/validation-*) + lmms-eval "
            "nocaps/utils.py"
        ),
    )
)

FLICKR_REVISION = "0d6d9049be2e08261be315e731e0d8054c1d1c03"
FLICKR30K = benchmark(
    Benchmark(
        name="flickr30k",
        title="Flickr30k (test, all 31,783 images)",
        citation="Young et al. 2014, From image descriptions to visual denotations. TACL 2; "
        "Plummer et al. 2015, Flickr30k Entities, arXiv:1505.04870",
        license="unknown (see card)",
        formulation="caption",
        metric="coco_cider",
        prompt=_CAPTION_TEMPLATE,
        to_sample=_flickr,
        split="test",
        splits=("test",),
        hub_id="lmms-lab/flickr30k",
        revision=FLICKR_REVISION,
        size=31783,
        hemm="Flickr30K",
        reform="visual description",
        notes=(
            _CAPTION_NOTE,
            "lmms-eval's flickr30k_test is all 31,783 images of lmms-lab/flickr30k, not the "
            "1,000-image Karpathy test split.",
            _LMMS_ENCODER.format(repo="flickr30k"),
        ),
        schema_confirmed=(
            "lmms-lab/flickr30k card @ 0d6d904 (image Image, caption list of strings, sentids "
            "list of strings, img_id string, filename string; data/test-0000N-of-00009) + "
            "lmms-eval flickr30k/utils.py"
        ),
    )
)

BENCHMARK_NAMES: tuple[str, ...] = tuple(
    b.name
    for b in (
        TEXTVQA,
        DOCVQA,
        CHARTQA,
        OCRBENCH,
        VQAV2,
        GQA,
        OKVQA,
        VIZWIZ,
        COCO_CAPTION,
        NOCAPS,
        FLICKR30K,
    )
)
"""The benchmarks this module defines, in the order of issue 18."""
