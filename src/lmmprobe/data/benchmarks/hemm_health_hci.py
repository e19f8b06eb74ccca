"""HEMM's healthcare and HCI datasets.

PathVQA, VQA-RAD, OpenPath (PLIP's Kather colon test set), SLAKE, Enrico and Screen2Words.

As in ``hemm_multimedia``: the files HEMM's loaders read, at their paths, with HEMM's prompts
(pliang279/HEMM at `HEMM_COMMIT`).
"""

from __future__ import annotations

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
    loader_confirmed,
    need_root,
    open_file,
    read_json,
    read_plain_pickle,
    text_lines,
)
from lmmprobe.schema import Sample

Row = Mapping[str, Any]
Rows = Iterator[tuple[str, Row]]

PATHVQA = (
    "Given a Radiology Image and a question. Answer the question in a single word.\n"
    "Question: {question} Short Answer: "
)
VQARAD = (
    "Given a Radiology image and a Question. Answer the question in a single word.\n"
    "Question: {question}\nAnswer: "
)
KATHER = (
    "Answer the Question from the below Options.\nQuestion: Given Pathalogy image is a "
    "hematoxylin and eosin image of:\nOptions: cancer-associated stroma, adipose tissue, debris, "
    "lymphocytes, mucus, background, normal colon mucosa, colorectal adenocarcinoma epithelium, "
    "smooth muscle\nAnswer:"
)
SLAKE = (
    "Given a Radiology Image. Answer the question in a single word, Question: {question} "
    "Short Answer: "
)
ENRICO = (
    "Given a screenshot of the user interface of a mobile application. Choose the most "
    "appropriate design topic from the following comma separated choices:\nbare, dialer, "
    "camera, chat, editor, form, gallery, list, login, maps, mediaplayer, menu, modal, news, "
    "other, profile, search, settings, terms, tutorial\nAnswer:"
)
SCREEN2WORDS = "You are given a phone UI screen. Describe the screen in one sentence."


def _files(fetch: str) -> dict[str, Any]:
    return {"layout": "files", "fetch": fetch}


# -- PathVQA ----------------------------------------------------------------------------------

_PVQA_QA = "pathvqa_images/pvqa/qas/test/test_qa.pkl"


def _pathvqa_rows(root: Path, split: str) -> Rows:
    data = read_plain_pickle(root / _PVQA_QA)
    if not isinstance(data, list):
        raise DataError(f"{root / _PVQA_QA}: expected a list of question dicts")
    for i, row in enumerate(data):
        yield f"{root / _PVQA_QA}:[{i}]", row


def _pathvqa_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"pathvqa_images/pvqa/images/test/{row['image']}.jpg")
    return hemm_sample(
        ctx, str(ctx.index), [image], str(row["question"]), PATHVQA, str(row["answer"])
    )


PATHVQA_BENCHMARK = Benchmark(
    name="hemm-pathvqa",
    title="HEMM: PathVQA (test)",
    citation=CITATION,
    license="MIT (PathVQA)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(PATHVQA, at("hemm/prompts/pathvqa_prompt.py")),
    to_sample=_pathvqa_sample,
    split="test",
    splits=("test",),
    read_files=_pathvqa_rows,
    hemm="PathVQA",
    schema_confirmed=loader_confirmed("hemm/data/pathvqa_dataset.py"),
    notes=(
        "HEMM reads the release's test_qa.pkl; lmmprobe reads it as plain data only (a pickle "
        "naming any class or function is refused, never run).",
    ),
    **_files(
        'cd "$LMMPROBE_DATA_DIR" && mkdir -p hemm-pathvqa && cd hemm-pathvqa && gdown '
        "--no-check-certificate --folder "
        "https://drive.google.com/drive/folders/1G2C2_FUCyYQKCkSeCRRiTTsLDvOAjFj5 && "
        "unzip Backup/pvqa.zip -d pathvqa_images/"
    ),
)


# -- VQA-RAD (hub) ----------------------------------------------------------------------------


def _vqarad_sample(row: Row, ctx: RowContext) -> Sample:
    image = jpeg_image(image_bytes(row["image"], "image"), "image", convert_rgb=False)
    return hemm_sample(
        ctx, str(ctx.index), [image], str(row["question"]), VQARAD, str(row["answer"])
    )


VQARAD_BENCHMARK = Benchmark(
    name="hemm-vqarad",
    title="HEMM: VQA-RAD (test)",
    citation=CITATION,
    license="CC0 1.0 (VQA-RAD)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(VQARAD, at("hemm/prompts/vqarad_prompt.py")),
    to_sample=_vqarad_sample,
    split="test",
    splits=("test",),
    hub_id="flaviagiammarino/vqa-rad",
    size=451,
    hemm="VQARAD",
    schema_confirmed=loader_confirmed("hemm/data/vqarad_dataset.py"),
    notes=(
        "HEMM loads flaviagiammarino/vqa-rad without a pinned revision.",
        "As HEMM: the image is saved as JPEG (Pillow's defaults) before the model sees it.",
    ),
)


# -- OpenPath (PLIP's Kather colon test set) --------------------------------------------------

_KATHER_CSV = "open_path/Kather_test/Kather_test.csv"


def _kather_rows(root: Path, split: str) -> Rows:
    lines = text_lines(root, _KATHER_CSV)
    for n, line in enumerate(lines[1:], 2):
        yield f"{root / _KATHER_CSV}:{n}", {"line": line}


def _kather_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    parts = str(row["line"]).strip().split(",")
    if len(parts) != 4:
        raise RowError("line", f"HEMM splits each row into 4 fields at ',', got {len(parts)}")
    _, fn, lb, caption = parts
    # HEMM's label: the caption from its 6th word on, without its last character (a period).
    label = " ".join(caption.split()[5:])[:-1]
    image = file_image(root, f"open_path/{lb}/{fn}")
    return hemm_sample(ctx, f"{lb}/{fn}", [image], KATHER, escape(KATHER), label)


OPENPATH = Benchmark(
    name="hemm-openpath",
    title="HEMM: OpenPath (PLIP's Kather colon tissue test)",
    citation=CITATION,
    license="CC BY 4.0 (Kather et al. 2019 colon tissue images)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(escape(KATHER), at("hemm/prompts/plip_kather_prompt.py")),
    to_sample=_kather_sample,
    split="test",
    splits=("test",),
    read_files=_kather_rows,
    hemm="OpenPath",
    schema_confirmed=loader_confirmed("hemm/data/open_path_dataset.py"),
    notes=(
        "Ground truth: the caption column from its 6th word on, last character dropped, as "
        "HEMM cuts it (the tissue name).",
    ),
    **_files(
        "hf download akshayg08/OpenPath --repo-type dataset --local-dir "
        '"$LMMPROBE_DATA_DIR"/hemm-openpath/open_path'
    ),
)


# -- SLAKE ------------------------------------------------------------------------------------

_SLAKE = "Slake1.0/test.json"


def _slake_rows(root: Path, split: str) -> Rows:
    for i, row in enumerate(read_json(root, _SLAKE)):
        # HEMM keeps the English closed-ended questions only.
        if row.get("q_lang") == "en" and row.get("answer_type") == "CLOSED":
            yield f"{root / _SLAKE}:[{i}]", row


def _slake_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"Slake1.0/imgs/{row['img_name']}")
    sid = str(row.get("qid", ctx.index))
    return hemm_sample(ctx, sid, [image], str(row["question"]), SLAKE, str(row["answer"]))


SLAKE_BENCHMARK = Benchmark(
    name="hemm-slake",
    title="HEMM: SLAKE (test, English closed-ended)",
    citation=CITATION,
    license="CC BY 4.0 (SLAKE)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(SLAKE, at("hemm/prompts/slake_prompt.py")),
    to_sample=_slake_sample,
    split="test",
    splits=("test",),
    read_files=_slake_rows,
    hemm="Slake",
    schema_confirmed=loader_confirmed("hemm/data/slake_dataset.py"),
    notes=("As HEMM: only questions with q_lang 'en' and answer_type 'CLOSED'.",),
    **_files(
        'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-slake/Slake1.0 && cd "$LMMPROBE_DATA_DIR"/hemm-slake/Slake1.0 '
        "&& wget https://huggingface.co/datasets/BoKelvin/SLAKE/raw/main/test.json "
        "https://huggingface.co/datasets/BoKelvin/SLAKE/resolve/main/imgs.zip && unzip imgs.zip"
    ),
)


# -- Enrico -----------------------------------------------------------------------------------

_ENRICO = "enrico/design_topics.csv"


def _enrico_rows(root: Path, split: str) -> Rows:
    for line in hemm_tenth(text_lines(root, _ENRICO)):
        yield f"{root / _ENRICO}", {"line": line}


def _enrico_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    parts = str(row["line"]).strip().split(",")
    if len(parts) != 2:
        raise RowError("line", f"expected 'screen_id,topic', got {row['line']!r}")
    img_id, label = parts
    image = file_image(root, f"enrico/screenshots/{img_id}.jpg")
    return hemm_sample(ctx, img_id, [image], ENRICO, escape(ENRICO), label)


ENRICO_BENCHMARK = Benchmark(
    name="hemm-enrico",
    title="HEMM: Enrico design topics (HEMM's tenth)",
    citation=CITATION,
    license="MIT (Enrico)",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(escape(ENRICO), at("hemm/prompts/enrico_prompt.py")),
    to_sample=_enrico_sample,
    split="test",
    splits=("test",),
    read_files=_enrico_rows,
    hemm="Enrico",
    schema_confirmed=loader_confirmed("hemm/data/enrico_dataset.py"),
    notes=(
        "As HEMM: design_topics.csv's rows (header dropped) shuffled with random.seed(0), the "
        "last tenth asked; the gold answer is the topic.",
    ),
    **_files(
        'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-enrico/enrico && cd "$LMMPROBE_DATA_DIR"/hemm-enrico/enrico '
        "&& wget http://userinterfaces.aalto.fi/enrico/resources/screenshots.zip "
        "https://raw.githubusercontent.com/luileito/enrico/master/design_topics.csv && "
        "unzip screenshots.zip"
    ),
)


# -- Screen2Words -----------------------------------------------------------------------------

_S2W_CSV = "screen2words/screen_summaries.csv"
_S2W_TEST = "screen2words/split/test_screens.txt"


def _s2w_rows(root: Path, split: str) -> Rows:
    import pandas as pd  # type: ignore[import-untyped]

    table = pd.read_csv(open_file(root, _S2W_CSV))
    # HEMM's answer for a screen: the last of its summaries in the CSV.
    last: dict[int, str] = {}
    for screen, summary in zip(table["screenId"], table["summary"], strict=True):
        last[int(screen)] = str(summary)
    for n, line in enumerate(text_lines(root, _S2W_TEST), 1):
        name = line.strip()
        yield f"{root / _S2W_TEST}:{n}", {"screen": name, "summary": last.get(int(name))}


def _s2w_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    if row["summary"] is None:
        raise RowError("screenId", f"screen {row['screen']} has no summary in {_S2W_CSV}")
    image = file_image(root, f"screen2wordsimages/unique_uis/combined/{row['screen']}.jpg")
    return hemm_sample(
        ctx, str(row["screen"]), [image], SCREEN2WORDS, escape(SCREEN2WORDS), row["summary"]
    )


SCREEN2WORDS_BENCHMARK = Benchmark(
    name="hemm-screen2words",
    title="HEMM: Screen2Words (test screens)",
    citation=CITATION,
    license="CC BY 4.0 (Screen2Words); RICO screenshots",
    formulation="open_ended",
    metric=METRIC,
    prompt=PromptTemplate(escape(SCREEN2WORDS), at("hemm/prompts/screen2words_prompt.py")),
    to_sample=_s2w_sample,
    split="test",
    splits=("test",),
    read_files=_s2w_rows,
    hemm="Screen2Words",
    schema_confirmed=loader_confirmed("hemm/data/screen2words_dataset.py"),
    notes=("Ground truth: the screen's last summary in screen_summaries.csv, as HEMM takes it.",),
    **_files(
        "kaggle datasets download -d onurgunes1993/rico-dataset -p "
        '"$LMMPROBE_DATA_DIR"/hemm-screen2words && cd "$LMMPROBE_DATA_DIR"/hemm-screen2words && '
        "unzip rico-dataset.zip -d screen2wordsimages && git clone "
        "https://github.com/google-research-datasets/screen2words screen2words"
    ),
)

DEFINITIONS: tuple[Benchmark, ...] = (
    PATHVQA_BENCHMARK,
    VQARAD_BENCHMARK,
    OPENPATH,
    SLAKE_BENCHMARK,
    ENRICO_BENCHMARK,
    SCREEN2WORDS_BENCHMARK,
)
