"""HEMM's multimedia datasets.

VQA, Visual Genome, VCR, OK-VQA, GQA, NoCaps, Flickr30K, Winoground, NLVR, NLVR2, IRFL,
MM-IMDb, and the two whose answer is an image, MagicBrush and LNCOCO.

Each definition reads the files HEMM's loader (``hemm/data/*.py`` of pliang279/HEMM at
`HEMM_COMMIT`) reads, at the same paths relative to the copy's folder (HEMM's
``download_dir``), and asks HEMM's prompt (``hemm/prompts/*.py``). Where HEMM's loader has a
quirk that decides which rows are asked, the definition keeps it and says so in its notes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    IMAGE_GENERATION,
    METRIC,
    at,
    escape,
    file_image,
    hemm_sample,
    image_bytes,
    jpeg_image,
    json_lines,
    loader_confirmed,
    need_root,
    png_image,
    read_json,
    text_lines,
)
from lmmprobe.schema import Sample

Row = Mapping[str, Any]
Rows = Iterator[tuple[str, Row]]

# HEMM's prompt texts (hemm/prompts/*.py at HEMM_COMMIT), with {question} for the main slot.
SHORT_ANSWER = (
    "Given an image and a question. Answer the question in a single word. "
    "Question: {question} Short Answer: "
)
OKVQA = (
    "Given an image and a question. Answer the question in a single word.\n"
    "Question: {question} Short Answer: "
)
VCR = (
    "Given an Image and a Question: {question}. Choose the correct answet from the choices: "
    "{a0}, {a1}, {a2}, {a3}, Answer: "
)
VCR_SHOWN = VCR.replace("{a", "{{a").replace("}, {{a", "}}, {{a").replace("a3}", "a3}}")
"""HEMM's VCR prompt as `data show` prints it: the choice slots are filled per row."""
PICTURE_OF = "A Picture of "
WINOGROUND = (
    "Given an image and a text. Answer yes if the text matches the image and no if the text "
    "does not match the image.\nText: {question}\nAnswer: "
)
TRUE_FALSE = (
    "Given an image and the Question: {question}, Answer the question with only 'true' or "
    "'false'. Answer: "
)
IRFL = (
    " You are given a simile and a picture along with the simile. You have to say if the "
    "simile matches the given picture. Answer the following question in a single word with a "
    "yes or no.\nSimile: {question}. Answer:"
)
MMIMDB = (
    "Given the movie poster and the corresponding plot of the movie, choose the appropriate "
    "genres from the following comma separated genres: drama, comedy, romance, thriller, "
    "crime, action, adventure, horror, documentry, mystery, sci-fi, fantasy, family, "
    "biography, war, history, music, animation, musical, western, sport, short, film-noir.\n"
    "Plot: {question}\nNote that a movie can belong to more than one genres, provide all the "
    "suitable genres seperated by commas. Answer: "
)
MAGIC_BRUSH = "Edit the given image based on the provided instruction.\nInstruction: {question}"
LNCOCO = "Generate an Image based on the provided caption.\nCaption: {question}"

_SINGLE_SLOT_NOTE = "The prompt is HEMM's, word for word (typos included)."


def _files(fetch: str) -> dict[str, Any]:
    return {"layout": "files", "fetch": fetch}


# -- VQA (abstract scenes, v2 val) -----------------------------------------------------------

_VQA_QUESTIONS = "vqa_questions/OpenEnded_abstract_v002_val2015_questions.json"
_VQA_ANNOTATIONS = "vqa_annotations/abstract_v002_val2015_annotations.json"


def _vqa_rows(root: Path, split: str) -> Rows:
    questions = read_json(root, _VQA_QUESTIONS)
    annotations = read_json(root, _VQA_ANNOTATIONS)
    # HEMM's get_ground_truth_answer: the first annotation with the question's id.
    answers: dict[Any, Any] = {}
    for ann in annotations.get("annotations", []):
        answers.setdefault(ann.get("question_id"), ann.get("multiple_choice_answer"))
    for i, q in enumerate(questions.get("questions", [])):
        yield (
            f"{root / _VQA_QUESTIONS}:questions[{i}]",
            {
                **q,
                "multiple_choice_answer": answers.get(q.get("question_id")),
            },
        )


def _vqa_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    answer = row.get("multiple_choice_answer")
    if not isinstance(answer, str):
        raise RowError("multiple_choice_answer", "no annotation for this question_id")
    # HEMM's file name: seven zeros then the id (abstract scene ids have five digits).
    image = file_image(root, f"vqa_images/abstract_v002_val2015_0000000{row['image_id']}.png")
    return hemm_sample(
        ctx, str(row["question_id"]), [image], str(row["question"]), SHORT_ANSWER, answer
    )


VQA = Benchmark(
    name="hemm-vqa",
    title="HEMM: VQA (abstract scenes, v2 val)",
    citation=CITATION,
    license="CC BY 4.0 (VQA abstract scenes)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(SHORT_ANSWER, at("hemm/prompts/vqa_prompt.py")),
    to_sample=_vqa_sample,
    split="val",
    splits=("val",),
    size=30000,
    read_files=_vqa_rows,
    hemm="VQA",
    schema_confirmed=loader_confirmed("hemm/data/vqa_dataset.py"),
    notes=(
        "HEMM's VQA is VQA v2's abstract-scene val split (not the COCO photographs).",
        "Ground truth: the question's multiple_choice_answer (one reference).",
    ),
    **_files(
        'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-vqa && cd "$LMMPROBE_DATA_DIR"/hemm-vqa && '
        "wget https://s3.amazonaws.com/cvmlp/vqa/abstract_v002/vqa/Annotations_Val_abstract_v002.zip "
        "https://s3.amazonaws.com/cvmlp/vqa/abstract_v002/vqa/Questions_Val_abstract_v002.zip "
        "https://s3.amazonaws.com/cvmlp/vqa/abstract_v002/scene_img/scene_img_abstract_v002_val2015.zip && "
        "unzip scene_img_abstract_v002_val2015.zip -d vqa_images && "
        "unzip Annotations_Val_abstract_v002.zip -d vqa_annotations && "
        "unzip Questions_Val_abstract_v002.zip -d vqa_questions"
    ),
)


# -- Visual Genome ----------------------------------------------------------------------------

_VG_QA = "visual_genome/question_answers.json"


def _vg_rows(root: Path, split: str) -> Rows:
    data = read_json(root, _VG_QA)
    for i, entry in enumerate(data):
        yield f"{root / _VG_QA}:[{i}]", {**entry, "_index": i}


def _vg_sample(row: Row, ctx: RowContext) -> list[Sample] | None:
    from PIL import Image

    root = need_root(ctx)
    # HEMM downloads VG_100K_2/ID.jpg for the entry at index 1 and VG_100K/ID.jpg for every
    # other one, and skips an entry whose download fails: with the release's two image
    # folders, the entries whose image is only in VG_100K_2 are skipped.
    folder = "VG_100K_2" if row["_index"] == 1 else "VG_100K"
    path = root / "visual_genome" / folder / f"{row['id']}.jpg"
    if not path.is_file():
        return None
    try:
        with Image.open(path) as im:
            image = png_image(im.resize((640, 480)))
    except OSError as exc:
        raise RowError("image", f"unreadable image {path}: {exc}") from exc
    return [
        hemm_sample(
            ctx, f"{row['id']}#{j}", [image], str(qa["question"]), SHORT_ANSWER, str(qa["answer"])
        )
        for j, qa in enumerate(row.get("qas", []))
    ]


VISUAL_GENOME = Benchmark(
    name="hemm-visualgenome",
    title="HEMM: Visual Genome question answers",
    citation=CITATION,
    license="CC BY 4.0 (Visual Genome)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(SHORT_ANSWER, at("hemm/prompts/visualgenome_prompt.py")),
    to_sample=_vg_sample,
    split="all",
    splits=("all",),
    read_files=_vg_rows,
    hemm="Visual Genome",
    schema_confirmed=loader_confirmed("hemm/data/visualgenome_dataset.py"),
    notes=(
        "HEMM fetches each image from cs.stanford.edu at run time; the local copy holds the "
        "release's image folders visual_genome/VG_100K and visual_genome/VG_100K_2 (lmmprobe's "
        "layout: HEMM keeps no image files).",
        "As HEMM: images are resized to 640x480; entries whose image HEMM cannot download "
        "(not in VG_100K, except the entry at index 1, read from VG_100K_2) are skipped.",
    ),
    **_files(
        'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-visualgenome/visual_genome && '
        'cd "$LMMPROBE_DATA_DIR"/hemm-visualgenome/visual_genome && '
        "wget https://homes.cs.washington.edu/~ranjay/visualgenome/data/dataset/question_answers.json.zip "
        "https://cs.stanford.edu/people/rak248/VG_100K_2/images.zip "
        "https://cs.stanford.edu/people/rak248/VG_100K_2/images2.zip && "
        "unzip question_answers.json.zip && unzip images.zip && unzip images2.zip"
    ),
)


# -- VCR --------------------------------------------------------------------------------------

_VCR_ANNOTATIONS = "vcr_annotations/val.jsonl"


def _vcr_rows(root: Path, split: str) -> Rows:
    path = root / _VCR_ANNOTATIONS
    for n, line in enumerate(text_lines(root, _VCR_ANNOTATIONS), 1):
        try:
            # HEMM reads each line with ast.literal_eval (a Python literal, not json.loads).
            row = ast.literal_eval(line)
        except (ValueError, SyntaxError) as exc:
            raise DataError(f"{path}:{n}: not a Python/JSON literal ({exc})") from exc
        yield f"{path}:{n}", row


def vcr_words(tokens: Any, objects: list[str]) -> str:
    """HEMM's ``fix_tokenization``: object references become ``person0, person2``; words joined."""
    words = []
    for tok in tokens:
        if isinstance(tok, list):
            words.append(", ".join(f"{objects[i]}{i}" for i in tok))
        else:
            words.append(tok)
    return " ".join(words)


def _vcr_image(path: Path, metadata: Mapping[str, Any], objects: list[str]) -> Any:
    """The image with HEMM's boxes, names and segment outlines drawn by OpenCV."""
    try:
        import cv2
    except ImportError:
        raise DataError(
            "hemm-vcr draws HEMM's object boxes, names and outlines on each image with OpenCV, "
            "as HEMM's loader does; install it: pip install opencv-python-headless"
        ) from None
    import numpy as np
    from PIL import Image

    with Image.open(path) as im:
        img = np.array(im.convert("RGB"))
    names = [f"{obj}{i}" for i, obj in enumerate(objects)]
    for box, name in zip(metadata["boxes"], names, strict=False):
        x1, y1, x2, y2, _ = box
        cv2.rectangle(img, (int(x1), int(y1)), (int(x2), int(y2)), (0, 255, 0), 2)
        cv2.putText(
            img, name, (int(x1), int(y1) - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 255, 0), 2
        )
    for segment in metadata["segms"]:
        if len(segment) == 0:
            continue
        points = segment[0]
        for i in range(len(points) - 1):
            (x1, y1), (x2, y2) = points[i], points[i + 1]
            cv2.line(img, (int(x1), int(y1)), (int(x2), int(y2)), (0, 0, 255), 2)
    return Image.fromarray(img)


def _vcr_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    objects = [str(o) for o in row["objects"]]
    question = vcr_words(row["question"], objects)
    choices = [vcr_words(c, objects) for c in row["answer_choices"]]
    if len(choices) != 4:
        raise RowError("answer_choices", f"HEMM's prompt shows 4 choices, got {len(choices)}")
    template = VCR.replace("{question}", "\0").format(
        a0=escape(choices[0]), a1=escape(choices[1]), a2=escape(choices[2]), a3=escape(choices[3])
    )
    template = template.replace("\0", "{question}")
    image_path = root / "vcr1images" / str(row["img_fn"])
    metadata_path = root / "vcr1images" / str(row["metadata_fn"])
    if not image_path.is_file():
        raise RowError("img_fn", f"image file not found: {image_path}")
    import json

    try:
        metadata = json.loads(metadata_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RowError("metadata_fn", f"{metadata_path}: {exc}") from exc
    image = png_image(_vcr_image(image_path, metadata, objects))
    sid = str(row.get("annot_id", ctx.index))
    return hemm_sample(ctx, sid, [image], question, template, choices[int(row["answer_label"])])


VCR_BENCHMARK = Benchmark(
    name="hemm-vcr",
    title="HEMM: VCR (val, question to answer)",
    citation=CITATION,
    license="VCR license (research use; see visualcommonsense.com)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(VCR_SHOWN, at("hemm/prompts/vcr_prompt.py")),
    to_sample=_vcr_sample,
    split="val",
    splits=("val",),
    read_files=_vcr_rows,
    hemm="VCR",
    schema_confirmed=loader_confirmed("hemm/data/vcr_dataset.py"),
    notes=(
        "As HEMM: object references become names like person0; the four answer choices are "
        "filled into the prompt ({a0}..{a3}) and the gold answer is the correct choice's text.",
        "As HEMM: boxes, object names and segment outlines are drawn on each image with "
        "OpenCV (pip install opencv-python-headless).",
        "HEMM's evaluate_dataset asks every val question; its batched variant stops after 101.",
    ),
    **_files(
        'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-vcr && cd "$LMMPROBE_DATA_DIR"/hemm-vcr && '
        "wget https://s3.us-west-2.amazonaws.com/ai2-rowanz/vcr1images.zip "
        "https://s3.us-west-2.amazonaws.com/ai2-rowanz/vcr1annots.zip && "
        "unzip vcr1annots.zip -d vcr_annotations && unzip vcr1images.zip"
    ),
)


# -- OK-VQA -----------------------------------------------------------------------------------

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


OK_VQA = Benchmark(
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
    **_files(
        'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-okvqa/okvqa && cd "$LMMPROBE_DATA_DIR"/hemm-okvqa/okvqa && '
        "wget http://images.cocodataset.org/zips/val2014.zip "
        "https://okvqa.allenai.org/static/data/mscoco_val2014_annotations.json.zip "
        "https://okvqa.allenai.org/static/data/OpenEnded_mscoco_val2014_questions.json.zip && "
        "unzip val2014.zip && unzip mscoco_val2014_annotations.json.zip && "
        "unzip OpenEnded_mscoco_val2014_questions.json.zip"
    ),
)


# -- GQA --------------------------------------------------------------------------------------

_GQA_QUESTIONS = "gqa_questions/testdev_all_questions.json"


def _gqa_rows(root: Path, split: str) -> Rows:
    data = read_json(root, _GQA_QUESTIONS)
    for qid, q in data.items():
        yield f"{root / _GQA_QUESTIONS}:{qid}", {**q, "_id": qid}


def _gqa_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"gqa_images/{row['imageId']}.jpg")
    return hemm_sample(
        ctx, str(row["_id"]), [image], str(row["question"]), SHORT_ANSWER, str(row["answer"])
    )


GQA = Benchmark(
    name="hemm-gqa",
    title="HEMM: GQA (test-dev, all questions)",
    citation=CITATION,
    license="CC BY 4.0 (GQA)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(SHORT_ANSWER, at("hemm/prompts/gqa_prompt.py")),
    to_sample=_gqa_sample,
    split="testdev",
    splits=("testdev",),
    size=172174,
    read_files=_gqa_rows,
    hemm="GQA",
    schema_confirmed=loader_confirmed("hemm/data/gqa_dataset.py"),
    notes=("HEMM asks testdev_all_questions.json (all, not the balanced subset).",),
    **_files(
        'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-gqa && cd "$LMMPROBE_DATA_DIR"/hemm-gqa && '
        "wget https://downloads.cs.stanford.edu/nlp/data/gqa/questions1.2.zip "
        "https://downloads.cs.stanford.edu/nlp/data/gqa/images.zip && "
        "unzip questions1.2.zip -d gqa_questions && unzip -j images.zip -d gqa_images"
    ),
)


# -- NoCaps -----------------------------------------------------------------------------------

_NOCAPS = "nocaps_images/nocaps_val_4500_captions.json"


def _nocaps_rows(root: Path, split: str) -> Rows:
    data = read_json(root, _NOCAPS)
    annotations = data.get("annotations", [])
    for i, image in enumerate(data.get("images", [])):
        # HEMM takes annotations 10*i .. 10*i+9 as image i's captions (the file's order).
        captions = [a["caption"] for a in annotations[10 * i : 10 * (i + 1)]]
        yield f"{root / _NOCAPS}:images[{i}]", {**image, "captions": captions}


def _nocaps_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"nocaps_images/{row['file_name']}")
    sid = str(row.get("id", row["file_name"]))
    return hemm_sample(
        ctx, sid, [image], PICTURE_OF, escape(PICTURE_OF), row["captions"], multi_ref=True
    )


NOCAPS = Benchmark(
    name="hemm-nocaps",
    title="HEMM: NoCaps (val)",
    citation=CITATION,
    license="CC BY 2.0 (Open Images); captions CC BY 4.0",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(escape(PICTURE_OF), at("hemm/prompts/nocaps_prompt.py")),
    to_sample=_nocaps_sample,
    split="val",
    splits=("val",),
    size=4500,
    read_files=_nocaps_rows,
    hemm="NoCaps",
    schema_confirmed=loader_confirmed("hemm/data/nocaps_dataset.py"),
    notes=("Ground truth: the image's 10 captions (annotations 10i..10i+9, as HEMM slices).",),
    **_files(
        "hf download akshayg08/NocapsTest --repo-type dataset --local-dir "
        '"$LMMPROBE_DATA_DIR"/hemm-nocaps/nocaps_images && wget '
        "https://s3.amazonaws.com/nocaps/nocaps_val_4500_captions.json -P "
        '"$LMMPROBE_DATA_DIR"/hemm-nocaps/nocaps_images'
    ),
)


# -- Flickr30K --------------------------------------------------------------------------------

_FLICKR = "flickr30k_images/flickr30k_test.json"


def _flickr_rows(root: Path, split: str) -> Rows:
    for i, ann in enumerate(read_json(root, _FLICKR)):
        yield f"{root / _FLICKR}:[{i}]", ann


def _flickr_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    name = str(row["image"]).split("/")[-1]
    image = file_image(root, f"flickr30k_images/flickr30k_images/{name}")
    captions = row["caption"]
    if not captions:
        raise RowError("caption", "no caption")
    return hemm_sample(ctx, name, [image], PICTURE_OF, escape(PICTURE_OF), str(captions[0]))


FLICKR30K = Benchmark(
    name="hemm-flickr30k",
    title="HEMM: Flickr30K (Karpathy test)",
    citation=CITATION,
    license="Flickr terms of use (images); captions for research use",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(escape(PICTURE_OF), at("hemm/prompts/flickr30k_prompt.py")),
    to_sample=_flickr_sample,
    split="test",
    splits=("test",),
    size=1000,
    read_files=_flickr_rows,
    hemm="Flickr30K",
    schema_confirmed=loader_confirmed("hemm/data/flickr30k_dataset.py"),
    notes=(
        "Ground truth: the first caption, as HEMM's evaluate_dataset (its batched variant "
        "passes all five).",
    ),
    **_files(
        "kaggle datasets download -d hsankesara/flickr-image-dataset -p "
        '"$LMMPROBE_DATA_DIR"/hemm-flickr30k && cd "$LMMPROBE_DATA_DIR"/hemm-flickr30k && '
        "unzip flickr-image-dataset.zip && wget "
        "https://huggingface.co/datasets/akshayg08/Flickr30k_test/raw/main/flickr30k_test.json "
        "-P flickr30k_images/"
    ),
)


# -- Winoground (hub) -------------------------------------------------------------------------


def _winoground_sample(row: Row, ctx: RowContext) -> list[Sample]:
    samples = []
    # HEMM asks each (image, caption) pair; the answer is yes for matching indices.
    for i, j in ((0, 0), (0, 1), (1, 0), (1, 1)):
        field = f"image_{i}"
        image = jpeg_image(image_bytes(row[field], field), field, convert_rgb=True)
        caption = str(row[f"caption_{j}"])
        sid = f"{row.get('id', ctx.index)}#i{i}c{j}"
        gold = "yes" if i == j else "no"
        samples.append(hemm_sample(ctx, sid, [image], caption, WINOGROUND, gold))
    return samples


WINOGROUND_BENCHMARK = Benchmark(
    name="hemm-winoground",
    title="HEMM: Winoground (each image-caption pair, yes/no)",
    citation=CITATION,
    license="Getty Images license (research use; gated on the hub)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(WINOGROUND, at("hemm/prompts/winoground_prompt.py")),
    to_sample=_winoground_sample,
    fetch=(
        "hf download facebook/winoground --repo-type dataset --revision "
        'refs/convert/parquet --local-dir "$LMMPROBE_DATA_DIR"/hemm-winoground'
    ),
    split="test",
    splits=("test",),
    hub_id="facebook/winoground",
    size=1600,
    hemm="Winoground",
    schema_confirmed=loader_confirmed("hemm/data/winogroundVQA_dataset.py"),
    notes=(
        "HEMM loads facebook/winoground without a pinned revision; gated: accept its terms "
        "on the hub and log in first.",
        "As HEMM: each image is converted to RGB and saved as JPEG (Pillow's defaults) "
        "before the model sees it.",
    ),
)


# -- NLVR -------------------------------------------------------------------------------------

_NLVR_DEV = "nlvr/nlvr/dev/dev.json"


def _nlvr_rows(root: Path, split: str) -> Rows:
    yield from json_lines(root, _NLVR_DEV)


def _nlvr_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    relative = f"nlvr/nlvr/dev/images/{row['directory']}/dev-{row['identifier']}-0.png"
    return hemm_sample(
        ctx,
        str(row["identifier"]),
        [file_image(root, relative)],
        str(row["sentence"]),
        TRUE_FALSE,
        str(row["label"]).lower(),
    )


NLVR = Benchmark(
    name="hemm-nlvr",
    title="HEMM: NLVR (dev)",
    citation=CITATION,
    license="CC BY 4.0 (NLVR)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(TRUE_FALSE, at("hemm/prompts/nlvr_prompt.py")),
    to_sample=_nlvr_sample,
    split="dev",
    splits=("dev",),
    read_files=_nlvr_rows,
    hemm="NLVR",
    schema_confirmed=loader_confirmed("hemm/data/nlvr_dataset.py"),
    notes=("As HEMM: the first of the three renderings (dev-ID-0.png) of each statement.",),
    **_files('git clone https://github.com/lil-lab/nlvr.git "$LMMPROBE_DATA_DIR"/hemm-nlvr/nlvr'),
)


# -- NLVR2 ------------------------------------------------------------------------------------

_NLVR2_DEV = "nlvr/nlvr2/data/dev.json"
NLVR2_IMAGES = "nlvr2_images"
"""Folder of the copy holding each row's left_url/right_url file under the URL's last part."""


def _nlvr2_rows(root: Path, split: str) -> Rows:
    yield from json_lines(root, _NLVR2_DEV)


def _url_file(root: Path, url: str) -> Path:
    return root / NLVR2_IMAGES / url.rstrip("/").split("/")[-1]


def _nlvr2_sample(row: Row, ctx: RowContext) -> Sample | None:
    from PIL import Image

    root = need_root(ctx)
    left, right = _url_file(root, str(row["left_url"])), _url_file(root, str(row["right_url"]))
    # HEMM downloads both images and skips the row when either fails.
    if not (left.is_file() and right.is_file()):
        return None
    try:
        with Image.open(left) as img_1, Image.open(right) as img_2:
            size1, size2 = img_1.size, img_2.size
            avg = ((size1[0] + size2[0]) // 2, (size1[1] + size2[1]) // 2)
            a, b = img_1.resize(avg), img_2.resize(avg)
            image = Image.new("RGB", (2 * avg[0], avg[1]), (255, 255, 255))
            image.paste(a, (0, 0))
            image.paste(b, (avg[0], 0))
    except OSError:
        return None  # HEMM's bare except skips an unreadable download the same way
    return hemm_sample(
        ctx,
        str(row.get("identifier", ctx.index)),
        [png_image(image)],
        str(row["sentence"]),
        TRUE_FALSE,
        str(row["label"]).lower(),
        prediction_filter="alpha",
    )


NLVR2 = Benchmark(
    name="hemm-nlvr2",
    title="HEMM: NLVR2 (dev)",
    citation=CITATION,
    license="CC BY 4.0 (NLVR2 annotations); images from the web",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(TRUE_FALSE, at("hemm/prompts/nlvr2prompt.py")),
    to_sample=_nlvr2_sample,
    split="dev",
    splits=("dev",),
    read_files=_nlvr2_rows,
    hemm="NLVR2",
    schema_confirmed=loader_confirmed("hemm/data/nlvr2.py"),
    notes=(
        "HEMM downloads left_url and right_url at run time; the local copy keeps each file "
        f"in {NLVR2_IMAGES}/ under the URL's last part (lmmprobe's layout; the fetch command "
        "makes it). Rows whose images are missing are skipped, as HEMM skips failed downloads.",
        "As HEMM: both images are resized to their mean size and put side by side on white; "
        "the output's letters, lowercased, are what is scored.",
    ),
    **_files(
        'git clone https://github.com/lil-lab/nlvr.git "$LMMPROBE_DATA_DIR"/hemm-nlvr2/nlvr && '
        "cd \"$LMMPROBE_DATA_DIR\"/hemm-nlvr2 && jq -r '.left_url, .right_url' "
        f"nlvr/nlvr2/data/dev.json | wget -nc -q -P {NLVR2_IMAGES} -i -"
    ),
)


# -- IRFL (hub rows, images from the release zip) ---------------------------------------------

IRFL_IMAGES = "IRFL_images"


def _irfl_sample(row: Row, ctx: RowContext) -> list[Sample]:
    root = need_root(ctx)
    try:
        distractors = list(ast.literal_eval(str(row["distractors"])))
        answer = next(iter(ast.literal_eval(str(row["answer"]))))
    except (ValueError, SyntaxError, StopIteration, TypeError) as exc:
        raise RowError("distractors", f"not a Python list literal ({exc})") from exc
    names = [*distractors, answer]
    if len(names) != 4:
        # HEMM appends the answer image and labels the four no, no, no, yes.
        raise RowError("distractors", f"HEMM expects 3 distractors, got {len(distractors)}")
    samples = []
    for k, (name, gold) in enumerate(zip(names, ("no", "no", "no", "yes"), strict=True)):
        relative = f"{IRFL_IMAGES}/{str(name).split('.')[0]}.jpeg"
        samples.append(
            hemm_sample(
                ctx,
                f"{ctx.index}#{k}",
                [file_image(root, relative)],
                str(row["phrase"]),
                IRFL,
                gold,
            )
        )
    return samples


IRFL_BENCHMARK = Benchmark(
    name="hemm-irfl",
    title="HEMM: IRFL simile detection (test)",
    citation=CITATION,
    license="CC BY 4.0 (IRFL)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(IRFL, at("hemm/prompts/irfl_prompt.py")),
    to_sample=_irfl_sample,
    fetch=(
        "hf download lampent/IRFL --repo-type dataset --local-dir "
        '"$LMMPROBE_DATA_DIR"/hemm-irfl && cd "$LMMPROBE_DATA_DIR"/hemm-irfl && '
        f"unzip -j IRFL_images.zip -d {IRFL_IMAGES}"
    ),
    split="test",
    splits=("test",),
    hub_id="lampent/IRFL",
    config="simile-detection-task",
    hemm="IRFL",
    schema_confirmed=loader_confirmed("hemm/data/irfl_dataset.py"),
    notes=(
        "HEMM loads lampent/IRFL (config simile-detection-task) without a pinned revision.",
        f"Images: IRFL_images.zip extracted into {IRFL_IMAGES}/ of the local copy (HEMM reads "
        "them from the datasets cache); each row asks its 3 distractors (no) and its answer "
        "image (yes).",
    ),
)


# -- MM-IMDb ----------------------------------------------------------------------------------

_MMIMDB_SPLIT = "mmimdb/split.json"


def _mmimdb_rows(root: Path, split: str) -> Rows:
    ids = read_json(root, _MMIMDB_SPLIT)["test"]
    for i, ann_id in enumerate(ids):
        yield f"{root / _MMIMDB_SPLIT}:test[{i}]", {"id": str(ann_id).strip()}


def _mmimdb_sample(row: Row, ctx: RowContext) -> Sample:
    import json

    root = need_root(ctx)
    ann_id = row["id"]
    path = root / "mmimdb" / "annotations" / f"{ann_id}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RowError("annotations", f"{path}: {exc}") from exc
    image = file_image(root, f"mmimdb/images/{ann_id}.jpeg")
    return hemm_sample(
        ctx, ann_id, [image], str(data["plot"][0]), MMIMDB, ", ".join(data["genres"])
    )


MMIMDB_BENCHMARK = Benchmark(
    name="hemm-mmimdb",
    title="HEMM: MM-IMDb (test)",
    citation=CITATION,
    license="MM-IMDb: IMDb data for research use",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(MMIMDB, at("hemm/prompts/mmimdb_prompt.py")),
    to_sample=_mmimdb_sample,
    split="test",
    splits=("test",),
    read_files=_mmimdb_rows,
    hemm="MM-IMDb",
    schema_confirmed=loader_confirmed("hemm/data/mmimdb_dataset.py"),
    notes=("Ground truth: the movie's genres joined with ', '; the prompt shows plot[0].",),
    **_files(
        "hf download akshayg08/mmimdb_test --repo-type dataset --local-dir "
        '"$LMMPROBE_DATA_DIR"/hemm-mmimdb/mmimdb'
    ),
)


# -- Image generation: MagicBrush, LNCOCO -----------------------------------------------------

_MAGIC = "magic_brush/edit_sessions.json"
_LNCOCO = "ln_coco/coco_val_captions.jsonl"


def _magic_rows(root: Path, split: str) -> Rows:
    sessions = read_json(root, _MAGIC)
    count = 0
    for img_id, turns in sessions.items():
        for k, turn in enumerate(turns):
            yield f"{root / _MAGIC}:{img_id}[{k}]", {**turn, "img_id": img_id}
            count += 1
            if count == 100:  # HEMM evaluates the first 100 edit turns
                return


def _lncoco_rows(root: Path, split: str) -> Rows:
    yield from json_lines(root, _LNCOCO)


def _needs_generation(row: Row, ctx: RowContext) -> Sample:
    raise DataError(
        f"benchmark {ctx.benchmark.name} needs {IMAGE_GENERATION}: its answer is an image, "
        "scored by CLIP-I against the reference image; lmmprobe's backends generate text"
    )


MAGIC_BRUSH_BENCHMARK = Benchmark(
    name="hemm-magicbrush",
    title="HEMM: MagicBrush (test, image editing)",
    citation=CITATION,
    license="CC BY 4.0 (MagicBrush)",
    formulation="open_ended",
    metric="clip_i",
    prompt=PromptTemplate(MAGIC_BRUSH, at("hemm/prompts/magic_brush_prompt.py")),
    to_sample=_needs_generation,
    split="test",
    splits=("test",),
    size=100,
    read_files=_magic_rows,
    hemm="MagicBrush",
    needs=IMAGE_GENERATION,
    schema_confirmed=loader_confirmed("hemm/data/magic_brush_dataset.py"),
    notes=(
        "The model edits the input image as the instruction says; HEMM scores the output "
        "image against the reference with CLIP-I (and MSE), over the first 100 edit turns.",
    ),
    **_files(
        "hf download akshayg08/MagicBrushTest --repo-type dataset --local-dir "
        '"$LMMPROBE_DATA_DIR"/hemm-magicbrush/magic_brush'
    ),
)

LNCOCO_BENCHMARK = Benchmark(
    name="hemm-lncoco",
    title="HEMM: Localized Narratives COCO (val, text to image)",
    citation=CITATION,
    license="CC BY 4.0 (Localized Narratives); COCO images under their Flickr licenses",
    formulation="open_ended",
    metric="clip_i",
    prompt=PromptTemplate(LNCOCO, at("hemm/prompts/lncoco_prompt.py")),
    to_sample=_needs_generation,
    split="val",
    splits=("val",),
    read_files=_lncoco_rows,
    hemm="LNCOCO",
    needs=IMAGE_GENERATION,
    schema_confirmed=loader_confirmed("hemm/data/lncoco_dataset.py"),
    notes=(
        "The model generates the image a narrative describes; HEMM scores it against the COCO "
        "image (val2017/000000{image_id}.jpg) with CLIP-I (and MSE).",
    ),
    **_files(
        'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-lncoco/ln_coco && cd "$LMMPROBE_DATA_DIR"/hemm-lncoco/ln_coco && '
        "wget https://storage.googleapis.com/localized-narratives/annotations/coco_val_captions.jsonl "
        "http://images.cocodataset.org/zips/val2017.zip && unzip val2017.zip"
    ),
)

DEFINITIONS: tuple[Benchmark, ...] = (
    VQA,
    VISUAL_GENOME,
    VCR_BENCHMARK,
    OK_VQA,
    GQA,
    NOCAPS,
    FLICKR30K,
    WINOGROUND_BENCHMARK,
    NLVR,
    NLVR2,
    IRFL_BENCHMARK,
    MMIMDB_BENCHMARK,
    MAGIC_BRUSH_BENCHMARK,
    LNCOCO_BENCHMARK,
)
"""In HEMM's order (its README's multimedia list, then LNCOCO)."""
