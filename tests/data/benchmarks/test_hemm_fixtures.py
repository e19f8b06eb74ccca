"""Fixture builders for HEMM's 30 datasets, each in the layout HEMM's loader reads.

Each builder writes, under ``root`` (HEMM's ``download_dir``), the files its loader opens
(pliang279/HEMM ``hemm/data/*.py`` @ 612fc2a): annotation JSON/JSONL/CSV/TSV/pickle and tiny
images at HEMM's paths, or a hub snapshot (parquet, ``Image`` columns) for the four datasets
HEMM loads with ``datasets.load_dataset``. The first sample each dataset yields carries the
parity case's inputs (tests/parity/data/hemm_prompts.json), so its prompt can be compared with
what HEMM's prompt code printed for the same inputs. Each returns what the test expects.

test_hemm.py imports the builders; the one test here checks that every registered HEMM
dataset has one and that the parity file is the one for the definitions' HEMM commit.
"""

from __future__ import annotations

import io
import json
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasets import Dataset, Features, Image, Sequence, Value
from PIL import Image as PILImage
from tests.data.benchmarks.conftest import tiny_png, write_hub_snapshot

PARITY = Path(__file__).resolve().parents[2] / "parity" / "data" / "hemm_prompts.json"


def parity_cases() -> dict[str, dict[str, Any]]:
    """HEMM's printed prompts by dataset name."""
    doc = json.loads(PARITY.read_text(encoding="utf-8"))
    return {c["dataset"]: c for c in doc["cases"]}


@dataclass
class Expect:
    """What loading a fixture must give."""

    count: int  # samples
    refs: list[str]  # the first sample's references
    ids: list[str] = field(default_factory=list)  # the samples' ids (without the NAME/ prefix)


def _image(path: Path, color: tuple[int, int, int] = (200, 30, 30), fmt: str | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = fmt or ("JPEG" if path.suffix.lower() in (".jpg", ".jpeg") else "PNG")
    PILImage.new("RGB", (12, 10), color).save(path, format=fmt)


def _json(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


def _lines(path: Path, rows: list[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _png_bytes(color: tuple[int, int, int]) -> dict[str, Any]:
    return {"bytes": tiny_png(color), "path": None}


# --- multimedia ------------------------------------------------------------------------------


def build_vqa(root: Path, inputs: dict[str, Any]) -> Expect:
    _json(
        root / "vqa_questions/OpenEnded_abstract_v002_val2015_questions.json",
        {
            "info": {},
            "task_type": "Open-Ended",
            "data_type": "abstract_v002",
            "data_subtype": "val2015",
            "questions": [
                {"image_id": 20001, "question": inputs["question"], "question_id": 200010},
                {"image_id": 20002, "question": "Is it day?", "question_id": 200020},
            ],
        },
    )
    answers = [{"answer": "ball", "answer_confidence": "yes", "answer_id": 1}]
    _json(
        root / "vqa_annotations/abstract_v002_val2015_annotations.json",
        {
            "annotations": [
                {
                    "question_id": 200010,
                    "image_id": 20001,
                    "question_type": "what",
                    "answer_type": "other",
                    "multiple_choice_answer": "red",
                    "answers": answers,
                },
                {
                    "question_id": 200020,
                    "image_id": 20002,
                    "question_type": "is it",
                    "answer_type": "yes/no",
                    "multiple_choice_answer": "yes",
                    "answers": answers,
                },
            ]
        },
    )
    for i in (20001, 20002):
        _image(root / f"vqa_images/abstract_v002_val2015_0000000{i}.png")
    return Expect(2, ["red"], ["200010", "200020"])


def build_visualgenome(root: Path, inputs: dict[str, Any]) -> Expect:
    qa = [
        {
            "qa_id": 1,
            "image_id": 1,
            "question": inputs["question"],
            "answer": "Two.",
            "synsets": [],
        },
        {"qa_id": 2, "image_id": 1, "question": "Where?", "answer": "Park.", "synsets": []},
    ]
    _json(
        root / "visual_genome/question_answers.json",
        [
            {"id": 1, "qas": qa},
            {"id": 2, "qas": [{"qa_id": 3, "image_id": 2, "question": "Q2?", "answer": "A2"}]},
            # Only in VG_100K_2 and not at index 1: HEMM's download fails, the entry is skipped.
            {"id": 3, "qas": [{"qa_id": 4, "image_id": 3, "question": "Q3?", "answer": "A3"}]},
        ],
    )
    _image(root / "visual_genome/VG_100K/1.jpg")
    _image(root / "visual_genome/VG_100K_2/2.jpg", (20, 20, 200))
    _image(root / "visual_genome/VG_100K_2/3.jpg")
    return Expect(3, ["Two."], ["1#0", "1#1", "2#0"])


def build_vcr(root: Path, inputs: dict[str, Any]) -> Expect:
    row = {
        "movie": "1054_Harry_Potter",
        "objects": inputs["objects"],
        "interesting_scores": [0],
        "answer_likelihood": "likely",
        "img_fn": "lsmdc_1054/frame.jpg",
        "metadata_fn": "lsmdc_1054/frame.json",
        "answer_orig": "x",
        "question_orig": "y",
        "rationale_orig": "z",
        "question": inputs["question"],
        "answer_match_iter": [0, 1, 2, 3],
        "answer_sources": [0, 1, 2, 3],
        "answer_choices": inputs["answer_choices"],
        "answer_label": 1,
        "rationale_choices": [["r"], ["s"], ["t"], ["u"]],
        "rationale_sources": [0, 1, 2, 3],
        "rationale_match_iter": [0, 1, 2, 3],
        "rationale_label": 0,
        "img_id": "val-0",
        "question_number": 0,
        "annot_id": "val-0",
        "match_fold": "val-0",
        "match_index": 0,
    }
    _lines(root / "vcr_annotations/val.jsonl", [row])
    _image(root / "vcr1images/lsmdc_1054/frame.jpg")
    boxes = [[1, 1, 5, 5, 0.9], [2, 2, 8, 8, 0.8], [0, 0, 3, 3, 0.7]]
    segms = [[[[1, 1], [4, 1], [4, 4]]], [], [[[0, 0], [2, 2]]]]
    _json(root / "vcr1images/lsmdc_1054/frame.json", {"boxes": boxes, "segms": segms})
    return Expect(1, ["Because person1 likes {dogs} ."], ["val-0"])


def build_okvqa(root: Path, inputs: dict[str, Any]) -> Expect:
    def answers(*words: str) -> list[dict[str, Any]]:
        return [
            {"answer_id": i, "raw_answer": w, "answer_confidence": "yes", "answer": w}
            for i, w in enumerate(words, 1)
        ]

    _json(
        root / "okvqa/mscoco_val2014_annotations.json",
        {
            "annotations": [
                {
                    "image_id": 297147,
                    "question_id": 2971475,
                    "question_type": "eight",
                    "answer_type": "other",
                    "answers": answers("race", "race", "motocross", "race"),
                    "confidence": 3,
                },
                # A 2-digit id: HEMM's path has 6 zeros, the file is padded to 12 digits.
                {
                    "image_id": 42,
                    "question_id": 425,
                    "question_type": "one",
                    "answer_type": "other",
                    "answers": answers("x"),
                    "confidence": 3,
                },
            ]
        },
    )
    _json(
        root / "okvqa/OpenEnded_mscoco_val2014_questions.json",
        {
            "questions": [
                {"image_id": 297147, "question": inputs["question"], "question_id": 2971475},
                {"image_id": 42, "question": "What?", "question_id": 425},
            ]
        },
    )
    _image(root / "okvqa/val2014/COCO_val2014_000000297147.jpg")
    _image(root / "okvqa/val2014/COCO_val2014_000000000042.jpg")
    return Expect(1, ["race", "motocross"], ["2971475"])


def build_gqa(root: Path, inputs: dict[str, Any]) -> Expect:
    _json(
        root / "gqa_questions/testdev_all_questions.json",
        {
            "201307251": {
                "semantic": [],
                "entailed": [],
                "equivalent": ["201307251"],
                "question": inputs["question"],
                "imageId": "n15740",
                "isBalanced": True,
                "groups": {"global": None, "local": "14-train_l"},
                "answer": "right",
                "semanticStr": "",
                "annotations": {"answer": {}, "question": {}, "fullAnswer": {}},
                "types": {"detailed": "relS", "semantic": "rel", "structural": "query"},
                "fullAnswer": "The train is on the right.",
            }
        },
    )
    _image(root / "gqa_images/n15740.jpg")
    return Expect(1, ["right"], ["201307251"])


def build_nocaps(root: Path, inputs: dict[str, Any]) -> Expect:
    images = [
        {"id": 0, "file_name": "0013ea2087020901.jpg", "height": 10, "width": 12},
        {"id": 1, "file_name": "00223d95b38bd8c5.jpg", "height": 10, "width": 12},
    ]
    annotations = [{"image_id": i // 10, "id": i, "caption": f"caption {i}"} for i in range(20)]
    _json(
        root / "nocaps_images/nocaps_val_4500_captions.json",
        {"licenses": [], "info": {}, "images": images, "annotations": annotations},
    )
    for im in images:
        _image(root / "nocaps_images" / im["file_name"])
    return Expect(2, [f"caption {i}" for i in range(10)], ["0", "1"])


def build_flickr30k(root: Path, inputs: dict[str, Any]) -> Expect:
    caps = [f"A dog runs {i}." for i in range(5)]
    _json(
        root / "flickr30k_images/flickr30k_test.json",
        [{"image": "flickr30k-images/1007129816.jpg", "caption": caps}],
    )
    _image(root / "flickr30k_images/flickr30k_images/1007129816.jpg")
    return Expect(1, ["A dog runs 0."], ["1007129816.jpg"])


def build_winoground(root: Path, inputs: dict[str, Any]) -> Expect:
    features = Features(
        {
            "id": Value("int32"),
            "image_0": Image(),
            "image_1": Image(),
            "caption_0": Value("string"),
            "caption_1": Value("string"),
            "tag": Value("string"),
            "secondary_tag": Value("string"),
            "num_main_preds": Value("int32"),
            "collapsed_tag": Value("string"),
        }
    )
    ds = Dataset.from_dict(
        {
            "id": [0],
            "image_0": [_png_bytes((250, 10, 10))],
            "image_1": [_png_bytes((10, 10, 250))],
            "caption_0": [inputs["caption"]],
            "caption_1": ["the other way round"],
            "tag": ["Object"],
            "secondary_tag": [""],
            "num_main_preds": [1],
            "collapsed_tag": ["Object"],
        },
        features=features,
    )
    write_hub_snapshot(root, {"test": ds})
    return Expect(4, ["yes"], ["0#i0c0", "0#i0c1", "0#i1c0", "0#i1c1"])


def build_nlvr(root: Path, inputs: dict[str, Any]) -> Expect:
    rows = [
        {"sentence": inputs["sentence"], "label": "true", "identifier": "0-0", "directory": "0",
         "evals": {"r0": "true"}},
        {"sentence": "There is a box.", "label": "false", "identifier": "1-3", "directory": "1",
         "evals": {"r0": "false"}},
    ]  # fmt: skip
    _lines(root / "nlvr/nlvr/dev/dev.json", rows)
    _image(root / "nlvr/nlvr/dev/images/0/dev-0-0-0.png")
    _image(root / "nlvr/nlvr/dev/images/1/dev-1-3-0.png")
    return Expect(2, ["true"], ["0-0", "1-3"])


def build_nlvr2(root: Path, inputs: dict[str, Any]) -> Expect:
    rows = [
        {"validation": {}, "sentence": inputs["sentence"], "left_url": "http://x.org/a/left1.jpg",
         "writer": "w", "label": "True", "right_url": "http://x.org/b/right1.png",
         "synset": "dog", "query": "dogs", "identifier": "dev-850-0-0", "extra_validations": {}},
        # Its right image was never downloaded: HEMM's bare except skips the row.
        {"validation": {}, "sentence": "Two dogs.", "left_url": "http://x.org/a/left2.jpg",
         "writer": "w", "label": "False", "right_url": "http://x.org/b/gone.jpg",
         "synset": "dog", "query": "dogs", "identifier": "dev-850-0-1", "extra_validations": {}},
    ]  # fmt: skip
    _lines(root / "nlvr/nlvr2/data/dev.json", rows)
    _image(root / "nlvr2_images/left1.jpg")
    _image(root / "nlvr2_images/right1.png", (0, 0, 250))
    _image(root / "nlvr2_images/left2.jpg")
    return Expect(1, ["true"], ["dev-850-0-0"])


def build_irfl(root: Path, inputs: dict[str, Any]) -> Expect:
    features = Features(
        {
            "phrase": Value("string"),
            "figurative_type": Value("string"),
            "distractors": Value("string"),
            "answer": Value("string"),
        }
    )
    ds = Dataset.from_dict(
        {
            "phrase": [inputs["phrase"]],
            "figurative_type": ["simile"],
            "distractors": ["['d1.jpeg', 'd2.jpeg', 'd3.jpeg']"],
            "answer": ["['ans.jpeg']"],
        },
        features=features,
    )
    write_hub_snapshot(root, {"test": ds}, config="simile-detection-task")
    for name, color in (
        ("d1", (1, 1, 1)),
        ("d2", (2, 2, 2)),
        ("d3", (3, 3, 3)),
        ("ans", (9, 9, 9)),
    ):
        _image(root / "IRFL_images" / f"{name}.jpeg", color)
    return Expect(4, ["no"], ["0#0", "0#1", "0#2", "0#3"])


def build_mmimdb(root: Path, inputs: dict[str, Any]) -> Expect:
    _json(root / "mmimdb/split.json", {"train": ["1"], "dev": ["2"], "test": ["0000008"]})
    _json(
        root / "mmimdb/annotations/0000008.json",
        {"title": "T", "plot": [inputs["plot"], "Another plot."], "genres": ["Drama", "War"]},
    )
    _image(root / "mmimdb/images/0000008.jpeg")
    return Expect(1, ["Drama, War"], ["0000008"])


def build_magicbrush(root: Path, inputs: dict[str, Any]) -> Expect:
    _json(
        root / "magic_brush/edit_sessions.json",
        {"327726": [{"input": "327726-input.png", "mask": "m.png", "instruction": "x",
                     "output": "327726-output1.png"}]},
    )  # fmt: skip
    _image(root / "magic_brush/images/327726/327726-input.png")
    return Expect(0, [])


def build_lncoco(root: Path, inputs: dict[str, Any]) -> Expect:
    _lines(
        root / "ln_coco/coco_val_captions.jsonl",
        [{"dataset_id": "mscoco_val2017", "image_id": "137576", "annotator_id": 93,
          "caption": "In this image we can see a dog."}],
    )  # fmt: skip
    _image(root / "ln_coco/val2017/000000137576.jpg")
    return Expect(0, [])


# --- affect and science ----------------------------------------------------------------------


def build_nycartoon(root: Path, inputs: dict[str, Any]) -> Expect:
    header = "rank,funny,somewhat_funny,unfunny,count,score,precision,contest,caption\n"
    first = [inputs["caption"], "b", "c", "d", "e", "f"]
    rows = "".join(f'{i},1,1,1,3,1.5,0.1,510,"{c}"\n' for i, c in enumerate(first))
    _text(root / "caption-contest-data/summaries/510.csv", header + rows)
    second = "".join(f"{i},1,1,1,3,1.5,0.1,511,cap{i}\n" for i in range(5))
    _text(root / "caption-contest-data/summaries/511_LilUCB.csv", header + second)
    _image(root / "caption-contest-data/cartoons/510.jpg")
    _image(root / "caption-contest-data/cartoons/511.jpg")
    return Expect(10, ["yes"], [f"{c}#{k}" for c in (510, 511) for k in range(5)])


def build_hatefulmemes(root: Path, inputs: dict[str, Any]) -> Expect:
    _lines(
        root / "hateful_memes/data/dev.jsonl",
        [
            {"id": 8291, "img": "img/08291.png", "label": 1, "text": inputs["text"]},
            {"id": 46971, "img": "img/46971.png", "label": 0, "text": "bravery at its finest"},
        ],
    )
    _image(root / "hateful_memes/data/img/08291.png")
    _image(root / "hateful_memes/data/img/46971.png")
    return Expect(2, ["yes"], ["8291", "46971"])


def build_memecap(root: Path, inputs: dict[str, Any]) -> Expect:
    _json(
        root / "memes-test.json",
        [
            {
                "category": "memes",
                "img_captions": [inputs["img_caption"], "second caption"],
                "meme_captions": ["Meme poster is tired.", "other"],
                "title": inputs["title"],
                "url": "https://i.redd.it/x.png",
                "img_fname": " memes_bpet7l.png ",
                "metaphors": [],
                "post_id": "bpet7l",
            }
        ],
    )
    _image(root / "memecap_images/memes/memes_bpet7l.png")
    return Expect(1, ["Meme poster is tired."], ["bpet7l"])


def build_memotion(root: Path, inputs: dict[str, Any]) -> Expect:
    text = inputs["text_corrected"].replace('"', '""')
    _text(
        root / "memotion-dataset-7k/memotion_dataset_7k/labels.csv",
        ",image_name,text_ocr,text_corrected,humour,sarcasm,offensive,motivational,"
        "overall_sentiment\n"
        f'0,image_1.jpg,OCR,"{text}",hilarious,general,not_offensive,not_motivational,'
        "very_positive\n"
        "1,image_2.jpeg,OCR,,very_funny,twisted_meaning,very_offensive,motivational,positive\n",
    )
    _image(root / "memotion-dataset-7k/memotion_dataset_7k/images/image_1.jpg")
    _image(root / "memotion-dataset-7k/memotion_dataset_7k/images/image_2.jpeg")
    return Expect(2, ["hilarious"], ["image_1.jpg", "image_2.jpeg"])


def build_fer2013(root: Path, inputs: dict[str, Any]) -> Expect:
    for label, name in (("happy", "PrivateTest_10077120.jpg"), ("sad", "PublicTest_1.jpg")):
        path = root / "face_emotion" / label / name
        path.parent.mkdir(parents=True, exist_ok=True)
        PILImage.new("L", (48, 48), 120).save(path, format="JPEG")
    return Expect(2, ["happy"], ["PrivateTest_10077120.jpg", "PublicTest_1.jpg"])


def build_scienceqa(root: Path, inputs: dict[str, Any]) -> Expect:
    features = Features(
        {
            "image": Image(),
            "question": Value("string"),
            "choices": Sequence(Value("string")),
            "answer": Value("int8"),
            "hint": Value("string"),
            "task": Value("string"),
            "grade": Value("string"),
            "subject": Value("string"),
            "topic": Value("string"),
            "category": Value("string"),
            "skill": Value("string"),
            "lecture": Value("string"),
            "solution": Value("string"),
        }
    )
    n = 2
    ds = Dataset.from_dict(
        {
            "image": [_png_bytes((5, 200, 5)), None],  # the second has no image: skipped
            "question": [inputs["question"], "No image?"],
            "choices": [inputs["choices"], ["a", "b"]],
            "answer": [inputs["answer"], 1],
            "hint": [inputs["hint"], ""],
            "task": ["closed choice"] * n,
            "grade": ["grade2"] * n,
            "subject": ["natural science"] * n,
            "topic": ["physics"] * n,
            "category": ["States of matter"] * n,
            "skill": ["Identify solids"] * n,
            "lecture": [inputs["lecture"], ""],
            "solution": [""] * n,
        },
        features=features,
    )
    write_hub_snapshot(root, {"test": ds})
    return Expect(1, [inputs["choices"][inputs["answer"]]], ["0"])


def build_resisc45(root: Path, inputs: dict[str, Any]) -> Expect:
    base = root / "resisc45/NWPU Data Set/NWPU-RESISC45/NWPU-RESISC45"
    _image(base / "airport/airport_001.jpg")
    _image(base / "beach/beach_700.jpg")
    return Expect(2, ["airport"], ["airport/airport_001.jpg", "beach/beach_700.jpg"])


def build_ucmerced(root: Path, inputs: dict[str, Any]) -> Expect:
    _text(
        root / "ucmercedimages/validation.csv",
        ",Filename,Label,ClassName\n"
        "0,agricultural/agricultural_000001_0.png,0,agricultural\n"
        "1,river/river_000010_1.png,16,river\n",
    )
    base = root / "ucmercedimages/images_train_test_val/validation"
    _image(base / "agricultural/agricultural_000001_0.png")
    _image(base / "river/river_000010_1.png")
    return Expect(
        2, ["agricultural"], ["agricultural/agricultural_000001_0.png", "river/river_000010_1.png"]
    )


def build_inat(root: Path, inputs: dict[str, Any]) -> Expect:
    folder = "00000_Animalia_Annelida_Clitellata_Haplotaxida_Lumbricidae_Lumbricus_terrestris"
    _image(root / "inat/val" / folder / "4a1f.jpg")
    return Expect(1, ["lumbricus terrestris"], [f"{folder}/4a1f.jpg"])


DECIMER_ROWS = [f"DECIMER_HDM_{i:05d}\tC{'C' * i}O" for i in range(1, 13)]


def build_decimer(root: Path, inputs: dict[str, Any]) -> Expect:
    _text(
        root / "DECIMER/DECIMER_HDM_Dataset_SMILES.tsv",
        "Image ID\tSMILES\n" + "\n".join(DECIMER_ROWS) + "\n",
    )
    for row in DECIMER_ROWS:
        _image(
            root
            / "DECIMER/DECIMER_HDM_Dataset_Images/DECIMER_HDM_Dataset_Images"
            / f"{row.split(chr(9))[0]}.png"
        )
    return Expect(2, [])  # which two: test_hemm checks against random.seed(0)


# --- health and HCI --------------------------------------------------------------------------


def build_pathvqa(root: Path, inputs: dict[str, Any]) -> Expect:
    path = root / "pathvqa_images/pvqa/qas/test/test_qa.pkl"
    path.parent.mkdir(parents=True, exist_ok=True)
    qa = [
        {"image": "test_0000", "question": inputs["question"], "answer": "yes"},
        {"image": "test_0001", "question": "what is present?", "answer": "fibrosis"},
    ]
    path.write_bytes(pickle.dumps(qa))
    _image(root / "pathvqa_images/pvqa/images/test/test_0000.jpg")
    _image(root / "pathvqa_images/pvqa/images/test/test_0001.jpg")
    return Expect(2, ["yes"], ["0", "1"])


def build_vqarad(root: Path, inputs: dict[str, Any]) -> Expect:
    features = Features({"image": Image(), "question": Value("string"), "answer": Value("string")})
    buf = io.BytesIO()
    PILImage.new("L", (12, 10), 90).save(buf, format="JPEG")
    ds = Dataset.from_dict(
        {
            "image": [{"bytes": buf.getvalue(), "path": None}],
            "question": [inputs["question"]],
            "answer": ["no"],
        },
        features=features,
    )
    write_hub_snapshot(root, {"test": ds})
    return Expect(1, ["no"], ["0"])


def build_openpath(root: Path, inputs: dict[str, Any]) -> Expect:
    _text(
        root / "open_path/Kather_test/Kather_test.csv",
        ",image,label,caption\n"
        "0,ADI-TCGA-AAICEQFN.png,ADI,An H&E image patch of adipose tissue.\n"
        "1,MUC-TCGA-ACCPKIPN.png,MUC,An H&E image patch of mucus.\n",
    )
    _image(root / "open_path/ADI/ADI-TCGA-AAICEQFN.png")
    _image(root / "open_path/MUC/MUC-TCGA-ACCPKIPN.png")
    return Expect(2, ["adipose tissue"], ["ADI/ADI-TCGA-AAICEQFN.png", "MUC/MUC-TCGA-ACCPKIPN.png"])


def build_slake(root: Path, inputs: dict[str, Any]) -> Expect:
    def row(qid: int, q: str, a: str, lang: str, kind: str) -> dict[str, Any]:
        return {
            "img_id": 1, "img_name": "xmlab1/source.jpg", "question": q, "answer": a,
            "q_lang": lang, "location": "Lung", "modality": "CT", "answer_type": kind,
            "base_type": "vqa", "content_type": "Organ", "triple": ["vhead", "_", "_"],
            "qid": qid,
        }  # fmt: skip

    _json(
        root / "Slake1.0/test.json",
        [
            row(11, inputs["question"], "Yes", "en", "CLOSED"),
            row(12, "Which organ?", "Lung", "en", "OPEN"),
            row(13, "是否正常?", "是", "zh", "CLOSED"),
        ],
    )
    _image(root / "Slake1.0/imgs/xmlab1/source.jpg")
    return Expect(1, ["Yes"], ["11"])


ENRICO_ROWS = [f"{1000 + i},{['list', 'login', 'maps'][i % 3]}" for i in range(12)]


def build_enrico(root: Path, inputs: dict[str, Any]) -> Expect:
    _text(root / "enrico/design_topics.csv", "screen_id,topic\n" + "\n".join(ENRICO_ROWS) + "\n")
    for row in ENRICO_ROWS:
        _image(root / "enrico/screenshots" / f"{row.split(',')[0]}.jpg")
    return Expect(2, [])  # which two: test_hemm checks against random.seed(0)


def build_screen2words(root: Path, inputs: dict[str, Any]) -> Expect:
    _text(
        root / "screen2words/screen_summaries.csv",
        "screenId,summary\n10,first summary\n10,last summary\n22,settings page\n",
    )
    _text(root / "screen2words/split/test_screens.txt", "10\n22\n")
    _image(root / "screen2wordsimages/unique_uis/combined/10.jpg")
    _image(root / "screen2wordsimages/unique_uis/combined/22.jpg")
    return Expect(2, ["last summary"], ["10", "22"])


BUILDERS: dict[str, Callable[[Path, dict[str, Any]], Expect]] = {
    "hemm-vqa": build_vqa,
    "hemm-visualgenome": build_visualgenome,
    "hemm-vcr": build_vcr,
    "hemm-okvqa": build_okvqa,
    "hemm-gqa": build_gqa,
    "hemm-nocaps": build_nocaps,
    "hemm-flickr30k": build_flickr30k,
    "hemm-winoground": build_winoground,
    "hemm-nlvr": build_nlvr,
    "hemm-nlvr2": build_nlvr2,
    "hemm-irfl": build_irfl,
    "hemm-mmimdb": build_mmimdb,
    "hemm-magicbrush": build_magicbrush,
    "hemm-lncoco": build_lncoco,
    "hemm-nycartoon": build_nycartoon,
    "hemm-hatefulmemes": build_hatefulmemes,
    "hemm-memecap": build_memecap,
    "hemm-memotion": build_memotion,
    "hemm-fer2013": build_fer2013,
    "hemm-scienceqa": build_scienceqa,
    "hemm-resisc45": build_resisc45,
    "hemm-ucmerced": build_ucmerced,
    "hemm-inat": build_inat,
    "hemm-decimer": build_decimer,
    "hemm-pathvqa": build_pathvqa,
    "hemm-vqarad": build_vqarad,
    "hemm-openpath": build_openpath,
    "hemm-slake": build_slake,
    "hemm-enrico": build_enrico,
    "hemm-screen2words": build_screen2words,
}


def build(name: str, root: Path) -> Expect:
    """Write dataset `name`'s fixture into `root` (created) with its parity case's inputs."""
    root.mkdir(parents=True, exist_ok=True)
    return BUILDERS[name](root, parity_cases()[name]["inputs"])


def build_all(folder: Path) -> dict[str, Expect]:
    """Every dataset's fixture under ``folder/NAME``, as the suite's ``path=`` expects."""
    return {name: build(name, folder / name) for name in BUILDERS}


def test_every_hemm_dataset_has_a_builder_and_a_parity_case() -> None:
    from lmmprobe.data.benchmarks import BENCHMARKS
    from lmmprobe.data.benchmarks.hemm_common import HEMM_COMMIT

    names = {n for n in BENCHMARKS.names() if n.startswith("hemm-")}
    assert set(BUILDERS) == names == set(parity_cases())
    doc = json.loads(PARITY.read_text(encoding="utf-8"))
    assert doc["reference"]["commit"] == HEMM_COMMIT
