"""HEMM's affective-computing and science datasets.

NY Cartoon, Hateful Memes, MemeCap, Memotion, FER-2013, ScienceQA, RESISC45, UC Merced,
iNaturalist and DECIMER.

As in ``hemm_multimedia``: the files HEMM's loaders read, at their paths, with HEMM's prompts
(pliang279/HEMM at `HEMM_COMMIT`). Where HEMM shuffles without a seed (FER-2013, RESISC45) the
order does not change its score (a mean over rows); lmmprobe reads in sorted order.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    at,
    escape,
    file_image,
    hemm_sample,
    hemm_tenth,
    image_bytes,
    jpeg_image,
    json_lines,
    loader_confirmed,
    need_root,
    open_file,
    read_json,
    text_lines,
)
from lmmprobe.schema import Sample

Row = Mapping[str, Any]
Rows = Iterator[tuple[str, Row]]

NY_CARTOON = (
    "Given a cartoon image and a caption.\nCaption: {question}. Question: Is the Caption Funny? "
    "Short Answer: "
)
HATEFUL = "Given a meme with {question} written on it. Is it hateful? Answer: "
MEMECAP = (
    'This is a meme with the title "{question}". The image description is "{description}". '
    "What is the meme poster trying to convey? Answer:"
)
MEMOTION = (
    "Given the Meme and the following caption\nCaption: {question}.\nQuestion: How funny is the "
    "meme? Choose from the following comma separated options: funny, very funny, not funny, "
    "hilarious. Answer: "
)
FACE_EMOTION = (
    "Given an Image of a face, determinte the face expression, choose from the following "
    "choices: angry, disgust, fear, happy, neutral, sad, surprise. Answer: "
)
SCIENCEQA = (
    "You are given an image, question and few choices. A context is also provided to help you "
    "understand the image. In order to answer the question, you have been given lecture notes. "
    "You can use these lecture notes, image, and the context in order to answer the question. "
    "There are some choices given to you which are comma separated. You have to select which "
    "choice best answers the question. Generate choice as it is from the given choices.\n"
    "Lecture: {lecture}\nQuestion: {question}\nContext: {context}\nChoices: {choices}\nAnswer:"
)
_RESISC_CLASSES = (
    "basketball_court, overpass, ground_track_field, church, chaparral, forest, parking_lot, "
    "golf_course, baseball_diamond, meadow, beach, sparse_residential, desert, terrace, palace, "
    "bridge, commercial_area, stadium, runway, lake, railway, tennis_court, ship, intersection, "
    "river, freeway, airplane, industrial_area, mountain, storage_tank, cloud, roundabout, "
    "wetland, mobile_home_park, island, harbor, railway_station, medium_residential, sea_ice, "
    "thermal_power_station, snowberg, circular_farmland, airport, dense_residential, "
    "rectangular_farmland"
)
RESISC45 = (
    "Given a Remote Sensing image scene, Classify the scene in following classes:\n"
    f"{_RESISC_CLASSES}\nChoose a class from the above classes.\nAnswer:"
)
UCMERCED = (
    "Classify the given land image into the following classes: mediumresidential, buildings, "
    "tenniscourt, denseresidential, baseballdiamond, intersection, harbor, parkinglot, river, "
    "overpass, mobilehomepark, runway, forest, beach, freeway, airplane, storagetanks, "
    "chaparral, golfcourse, sparseresidential, agricultural.\nChoose a class from the above "
    "classes: "
)
INAT = "The scientific species name of the species present in the image is: "
DECIMER = "Simplified molecular-input line-entry system (SMILES) notation of the given molecule: "


def _files(fetch: str) -> dict[str, Any]:
    return {"layout": "files", "fetch": fetch}


def _fixed(ctx: RowContext, sid: str, image: Any, prompt: str, gold: str) -> Sample:
    """A sample of a prompt without slots: the prompt is the whole message."""
    return hemm_sample(ctx, sid, [image], prompt, escape(prompt), gold)


# -- NY Cartoon (caption contest) -------------------------------------------------------------

_CARTOONS = "caption-contest-data/cartoons"
_SUMMARIES = "caption-contest-data/summaries"


def _cartoon_rows(root: Path, split: str) -> Rows:
    folder = root / _CARTOONS
    if not folder.is_dir():
        raise DataError(f"{folder} not found: the local copy lacks HEMM's folder {_CARTOONS}")
    for name in sorted(p.name for p in folder.iterdir()):
        yield f"{folder / name}", {"image": name}


def _cartoon_sample(row: Row, ctx: RowContext) -> list[Sample]:
    import pandas as pd  # type: ignore[import-untyped]

    root = need_root(ctx)
    name = str(row["image"])
    img_id = name.split(".jpg")[0]
    summaries = root / _SUMMARIES
    # HEMM's order of candidates for the contest's ranked captions.
    for candidate in (f"{img_id}.csv", f"{img_id}_LilUCB.csv", f"{img_id}_lil-KLUCB.csv"):
        if (summaries / candidate).is_file():
            table = pd.read_csv(summaries / candidate)
            break
    else:
        raise RowError(
            "summaries",
            f"no {img_id}.csv, {img_id}_LilUCB.csv or {img_id}_lil-KLUCB.csv in {summaries} "
            "(HEMM would reuse the previous cartoon's captions here)",
        )
    if len(table) < 5 or "caption" not in table.columns:
        raise RowError("summaries", f"{img_id}: needs a caption column and at least 5 rows")
    # The top-ranked caption (funny: yes) and the four ranked last (no).
    captions = [table.iloc[0]["caption"]] + [table.iloc[-i]["caption"] for i in range(1, 5)]
    image = file_image(root, f"{_CARTOONS}/{name}")
    return [
        hemm_sample(ctx, f"{img_id}#{k}", [image], str(c), NY_CARTOON, "yes" if k == 0 else "no")
        for k, c in enumerate(captions)
    ]


NY_CARTOON_BENCHMARK = Benchmark(
    name="hemm-nycartoon",
    title="HEMM: New Yorker Caption Contest (is the caption funny?)",
    citation=CITATION,
    license="caption-contest-data repository license (research use)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(NY_CARTOON, at("hemm/prompts/newyorkercartoon_prompt.py")),
    to_sample=_cartoon_sample,
    split="all",
    splits=("all",),
    read_files=_cartoon_rows,
    hemm="NY Cartoon",
    schema_confirmed=loader_confirmed("hemm/data/newyorkercartoon_dataset.py"),
    notes=(
        "Each cartoon is asked 5 times: with its top-ranked caption (yes) and its 4 "
        "lowest-ranked ones (no).",
        "A cartoon without a summary CSV is a problem here; HEMM's loop would silently reuse "
        "the previous cartoon's captions.",
    ),
    **_files(
        "git clone https://github.com/nextml/caption-contest-data "
        '"$LMMPROBE_DATA_DIR"/hemm-nycartoon/caption-contest-data'
    ),
)


# -- Hateful Memes ----------------------------------------------------------------------------

_HATEFUL_DEV = "hateful_memes/data/dev.jsonl"


def _hateful_rows(root: Path, split: str) -> Rows:
    yield from json_lines(root, _HATEFUL_DEV)


def _hateful_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"hateful_memes/data/{row['img']}")
    gold = "yes" if row["label"] else "no"
    return hemm_sample(ctx, str(row.get("id", ctx.index)), [image], str(row["text"]), HATEFUL, gold)


HATEFUL_MEMES = Benchmark(
    name="hemm-hatefulmemes",
    title="HEMM: Hateful Memes (dev)",
    citation=CITATION,
    license="Hateful Memes dataset license (research use)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(HATEFUL, at("hemm/prompts/hateful_memes_prompt.py")),
    to_sample=_hateful_sample,
    split="dev",
    splits=("dev",),
    read_files=_hateful_rows,
    hemm="Hateful Memes",
    schema_confirmed=loader_confirmed("hemm/data/hateful_memes_dataset.py"),
    notes=("Ground truth: yes for label 1, no for 0.",),
    **_files(
        "kaggle datasets download -d parthplc/facebook-hateful-meme-dataset -p "
        '"$LMMPROBE_DATA_DIR"/hemm-hatefulmemes && cd "$LMMPROBE_DATA_DIR"/hemm-hatefulmemes && '
        "unzip facebook-hateful-meme-dataset.zip -d hateful_memes/"
    ),
)


# -- MemeCap ----------------------------------------------------------------------------------

_MEMECAP = "memes-test.json"


def _memecap_rows(root: Path, split: str) -> Rows:
    for i, row in enumerate(read_json(root, _MEMECAP)):
        yield f"{root / _MEMECAP}:[{i}]", row


def _memecap_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"memecap_images/memes/{str(row['img_fname']).strip()}")
    template = MEMECAP.replace("{description}", escape(str(row["img_captions"][0])))
    sid = str(row.get("post_id", ctx.index))
    return hemm_sample(ctx, sid, [image], str(row["title"]), template, str(row["meme_captions"][0]))


MEMECAP_BENCHMARK = Benchmark(
    name="hemm-memecap",
    title="HEMM: MemeCap (test)",
    citation=CITATION,
    license="MemeCap repository license (research use)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(
        MEMECAP.replace("{description}", "{{description}}"), at("hemm/prompts/memecaps_prompt.py")
    ),
    to_sample=_memecap_sample,
    split="test",
    splits=("test",),
    size=559,
    read_files=_memecap_rows,
    hemm="MemeCap",
    schema_confirmed=loader_confirmed("hemm/data/memecaps_dataset.py"),
    notes=(
        "The prompt shows the title and the first image caption ({description}, filled per "
        "row); the gold answer is the first meme caption.",
    ),
    **_files(
        'cd "$LMMPROBE_DATA_DIR" && mkdir -p hemm-memecap && cd hemm-memecap && '
        "gdown https://drive.google.com/uc?id=1o1IB6am0HdYS58CEOmmxra3WjJkrn-M1 && "
        "wget https://raw.githubusercontent.com/eujhwang/meme-cap/main/data/memes-test.json && "
        "unzip memes.zip -d memecap_images/"
    ),
)


# -- Memotion ---------------------------------------------------------------------------------

_MEMOTION = "memotion-dataset-7k/memotion_dataset_7k"


def _memotion_rows(root: Path, split: str) -> Rows:
    import pandas as pd

    xlsx = root / _MEMOTION / "labels.xlsx"
    csv = root / _MEMOTION / "labels.csv"
    if xlsx.is_file():
        try:
            table = pd.read_excel(xlsx)
        except ImportError as exc:
            raise DataError(
                f"{xlsx}: reading HEMM's labels.xlsx needs openpyxl ({exc}); run: "
                "pip install openpyxl"
            ) from exc
        except (ValueError, OSError, zipfile.BadZipFile) as exc:
            raise DataError(f"{xlsx}: not a readable Excel workbook ({exc})") from exc
        where = xlsx
    elif csv.is_file():
        table, where = pd.read_csv(csv), csv
    else:
        raise DataError(
            f"{xlsx} not found: the local copy lacks HEMM's file {_MEMOTION}/labels.xlsx"
        )
    for i, row in enumerate(table.to_dict("records")):
        yield f"{where}:{i + 2}", row


def _memotion_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"{_MEMOTION}/images/{row['image_name']}")
    # str() of a missing caption is "nan", which is what HEMM's format() writes too.
    return hemm_sample(
        ctx,
        str(row["image_name"]),
        [image],
        str(row["text_corrected"]),
        MEMOTION,
        str(row["humour"]),
    )


MEMOTION_BENCHMARK = Benchmark(
    name="hemm-memotion",
    title="HEMM: Memotion 7k (humour)",
    citation=CITATION,
    license="Memotion dataset license (research use; Kaggle)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(MEMOTION, at("hemm/prompts/memotion_prompt.py")),
    to_sample=_memotion_sample,
    split="all",
    splits=("all",),
    read_files=_memotion_rows,
    hemm="Memotion",
    schema_confirmed=loader_confirmed("hemm/data/memotion_dataset.py"),
    notes=(
        "Ground truth: the humour label as written (funny, very_funny, not_funny, hilarious).",
        "HEMM reads labels.xlsx (pip install openpyxl); a labels.csv with the same columns is "
        "read when there is no labels.xlsx (the CSV's presence in the release is not "
        "confirmed).",
    ),
    **_files(
        "kaggle datasets download -d williamscott701/memotion-dataset-7k -p "
        '"$LMMPROBE_DATA_DIR"/hemm-memotion && cd "$LMMPROBE_DATA_DIR"/hemm-memotion && '
        "unzip memotion-dataset-7k.zip -d memotion-dataset-7k"
    ),
)


# -- FER-2013 (HEMM's face_emotion loader) ----------------------------------------------------

_FER = "face_emotion"


def _fer_rows(root: Path, split: str) -> Rows:
    folder = root / _FER
    if not folder.is_dir():
        raise DataError(f"{folder} not found: the local copy lacks HEMM's folder {_FER}")
    # HEMM keys images by file name (a name in two folders keeps the later folder's label).
    labels: dict[str, str] = {}
    for label in sorted(p.name for p in folder.iterdir() if p.is_dir()):
        for img in sorted(p.name for p in (folder / label).iterdir()):
            labels[img] = label
    for img in sorted(labels):
        yield f"{folder / labels[img] / img}", {"image": img, "label": labels[img]}


def _fer_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"{_FER}/{row['label']}/{row['image']}")
    return _fixed(ctx, str(row["image"]), image, FACE_EMOTION, str(row["label"]))


FER2013 = Benchmark(
    name="hemm-fer2013",
    title="HEMM: FER-2013 (test)",
    citation=CITATION,
    license="FER-2013 (ICML 2013 challenge data; research use)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(escape(FACE_EMOTION), at("hemm/prompts/face_emotion_prompt.py")),
    to_sample=_fer_sample,
    split="test",
    splits=("test",),
    size=7178,
    read_files=_fer_rows,
    hemm="FER-2013",
    schema_confirmed=loader_confirmed("hemm/data/faceemotion_dataset.py"),
    notes=(
        "HEMM's registry maps FER-2013 to its face_emotion loader (faceemotion_dataset.py, "
        "prompt face_emotion_prompt.py), not the unused fer_dataset.py.",
        "Ground truth: the image's folder name (angry, disgust, fear, happy, neutral, sad, "
        "surprise).",
    ),
    **_files(
        'kaggle datasets download -d msambare/fer2013 -p "$LMMPROBE_DATA_DIR"/hemm-fer2013 && '
        'cd "$LMMPROBE_DATA_DIR"/hemm-fer2013 && unzip fer2013.zip && mv test face_emotion'
    ),
)


# -- ScienceQA (hub) --------------------------------------------------------------------------


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
    image = jpeg_image(image_bytes(row["image"], "image"), "image", convert_rgb=False)
    template = scienceqa_template(str(row["lecture"]), str(row["hint"]), choices)
    return hemm_sample(
        ctx, str(ctx.index), [image], str(row["question"]), template, choices[answer]
    )


SCIENCEQA_BENCHMARK = Benchmark(
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


# -- RESISC45 ---------------------------------------------------------------------------------

_RESISC = "resisc45/NWPU Data Set/NWPU-RESISC45/NWPU-RESISC45"


def _class_folder_rows(root: Path, relative: str) -> Rows:
    folder = root / relative
    if not folder.is_dir():
        raise DataError(f"{folder} not found: the local copy lacks HEMM's folder {relative}")
    for label in sorted(p.name for p in folder.iterdir() if p.is_dir()):
        for img in sorted(p.name for p in (folder / label).iterdir()):
            yield f"{folder / label / img}", {"image": img, "label": label}


def _resisc_rows(root: Path, split: str) -> Rows:
    yield from _class_folder_rows(root, _RESISC)


def _resisc_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"{_RESISC}/{row['label']}/{row['image']}")
    return _fixed(ctx, f"{row['label']}/{row['image']}", image, RESISC45, str(row["label"]))


RESISC45_BENCHMARK = Benchmark(
    name="hemm-resisc45",
    title="HEMM: NWPU-RESISC45 (all images)",
    citation=CITATION,
    license="NWPU-RESISC45 (research use)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(escape(RESISC45), at("hemm/prompts/resisc45_prompt.py")),
    to_sample=_resisc_sample,
    split="all",
    splits=("all",),
    size=31500,
    read_files=_resisc_rows,
    hemm="Resisc45",
    schema_confirmed=loader_confirmed("hemm/data/resisc45_dataset.py"),
    notes=("HEMM asks every image of the 45 class folders; the gold answer is the folder name.",),
    **_files(
        'kaggle datasets download -d happyyang/nwpu-data-set -p "$LMMPROBE_DATA_DIR"/hemm-resisc45 '
        '&& cd "$LMMPROBE_DATA_DIR"/hemm-resisc45 && unzip nwpu-data-set.zip -d resisc45'
    ),
)


# -- UC Merced --------------------------------------------------------------------------------

_UCM_CSV = "ucmercedimages/validation.csv"


def _ucm_rows(root: Path, split: str) -> Rows:
    import pandas as pd

    path = open_file(root, _UCM_CSV)
    for i, row in enumerate(pd.read_csv(path).to_dict("records")):
        yield f"{path}:{i + 2}", row


def _ucm_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"ucmercedimages/images_train_test_val/validation/{row['Filename']}")
    return _fixed(ctx, str(row["Filename"]), image, UCMERCED, str(row["ClassName"]))


UCMERCED_BENCHMARK = Benchmark(
    name="hemm-ucmerced",
    title="HEMM: UC Merced Land Use (validation)",
    citation=CITATION,
    license="UC Merced Land Use (research use)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(escape(UCMERCED), at("hemm/prompts/ucmerced_prompt.py")),
    to_sample=_ucm_sample,
    split="validation",
    splits=("validation",),
    read_files=_ucm_rows,
    hemm="UCMerced",
    schema_confirmed=loader_confirmed("hemm/data/ucmerced_dataset.py"),
    notes=("Ground truth: validation.csv's ClassName.",),
    **_files(
        "kaggle datasets download -d apollo2506/landuse-scene-classification -p "
        '"$LMMPROBE_DATA_DIR"/hemm-ucmerced && cd "$LMMPROBE_DATA_DIR"/hemm-ucmerced && '
        "unzip landuse-scene-classification.zip -d ucmercedimages/"
    ),
)


# -- iNaturalist 2021 (val) -------------------------------------------------------------------


def _inat_rows(root: Path, split: str) -> Rows:
    folder = root / "inat" / "val"
    if not folder.is_dir():
        raise DataError(f"{folder} not found: the local copy lacks HEMM's folder inat/val")
    # HEMM globs inat/val/*/*.jpg.
    for path in sorted(folder.glob("*/*.jpg")):
        yield str(path), {"species": path.parent.name, "image": path.name}


def _inat_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"inat/val/{row['species']}/{row['image']}")
    # The folder name ends with genus_species: HEMM's answer is "genus species", lowercased.
    gold = " ".join(str(row["species"]).split("_")[-2:]).lower()
    return _fixed(ctx, f"{row['species']}/{row['image']}", image, INAT, gold)


INAT_BENCHMARK = Benchmark(
    name="hemm-inat",
    title="HEMM: iNaturalist 2021 (val)",
    citation=CITATION,
    license="iNaturalist 2021 (images under their owners' CC licenses)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(escape(INAT), at("hemm/prompts/inat_prompt.py")),
    to_sample=_inat_sample,
    split="val",
    splits=("val",),
    size=100000,
    read_files=_inat_rows,
    hemm="iNaturalist",
    schema_confirmed=loader_confirmed("hemm/data/inat_dataset.py"),
    notes=("Ground truth: the last two parts of the species folder name (genus species).",),
    **_files(
        'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-inat/inat && cd "$LMMPROBE_DATA_DIR"/hemm-inat/inat && '
        "wget https://ml-inat-competition-datasets.s3.amazonaws.com/2021/val.tar.gz && "
        "tar -xf val.tar.gz"
    ),
)


# -- DECIMER ----------------------------------------------------------------------------------

_DECIMER_TSV = "DECIMER/DECIMER_HDM_Dataset_SMILES.tsv"
_DECIMER_IMAGES = "DECIMER/DECIMER_HDM_Dataset_Images/DECIMER_HDM_Dataset_Images"


def _decimer_rows(root: Path, split: str) -> Rows:
    for line in hemm_tenth(text_lines(root, _DECIMER_TSV)):
        yield f"{root / _DECIMER_TSV}", {"line": line}


def _decimer_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    parts = str(row["line"]).strip().split("\t")
    if len(parts) != 2:
        raise RowError("line", f"expected 'id<TAB>SMILES', got {row['line']!r}")
    img_id, smiles = parts
    image = file_image(root, f"{_DECIMER_IMAGES}/{img_id}.png")
    return _fixed(ctx, img_id, image, DECIMER, smiles)


DECIMER_BENCHMARK = Benchmark(
    name="hemm-decimer",
    title="HEMM: DECIMER hand-drawn molecules (HEMM's tenth)",
    citation=CITATION,
    license="CC BY 4.0 (DECIMER hand-drawn dataset)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(escape(DECIMER), at("hemm/prompts/decimer_prompt.py")),
    to_sample=_decimer_sample,
    split="test",
    splits=("test",),
    read_files=_decimer_rows,
    hemm="Decimer",
    schema_confirmed=loader_confirmed("hemm/data/decimer_dataset.py"),
    notes=(
        "As HEMM: the TSV's rows (header dropped) shuffled with random.seed(0), the last tenth "
        "asked; the gold answer is the SMILES string.",
    ),
    **_files(
        'kaggle datasets download -d juliajakubowska/decimer -p "$LMMPROBE_DATA_DIR"/hemm-decimer/DECIMER '
        '&& cd "$LMMPROBE_DATA_DIR"/hemm-decimer/DECIMER && unzip decimer.zip'
    ),
)

DEFINITIONS: tuple[Benchmark, ...] = (
    NY_CARTOON_BENCHMARK,
    HATEFUL_MEMES,
    MEMECAP_BENCHMARK,
    MEMOTION_BENCHMARK,
    FER2013,
    SCIENCEQA_BENCHMARK,
    RESISC45_BENCHMARK,
    UCMERCED_BENCHMARK,
    INAT_BENCHMARK,
    DECIMER_BENCHMARK,
)
