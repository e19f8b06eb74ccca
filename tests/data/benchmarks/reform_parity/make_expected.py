"""ReForm-Eval parity fixtures: a clone of ReForm-Eval-Data in its released layout, and what
ReForm-Eval's own dataset classes make of it.

``write_clone(ROOT)`` writes every one of the 61 datasets' files (two items each, one dialog for
the dialogue sets) under ``ROOT/huggingface_data/``, the fields each class reads at
FudanDISC/ReForm-Eval @ df1cfa7b (``build/*/``; version and split as its configs give them).
Run as a script with a checkout of ReForm-Eval, it loads each dataset through ReForm-Eval's
``build.load_reform_dataset`` (``offline_from_hf=True``, generation, no in-context sample,
``random_instruct`` with ``data_duplication=1``, options unshuffled, marks upper case) and
writes ``expected.json``: per dataset, per sample, the question, options, gold, the instruction,
the verdicts of ReForm-Eval's metric for its formulation (``metrics.get_metric``) on a few
model outputs, and a hash of the image's RGB pixels (boxes drawn); for a caption dataset first its
instruction list, from which the class draws the question at random::

    git -C /path/to/ReForm-Eval checkout df1cfa7bf15f89591fc2c0e0f654c84d2cbf44bb
    python tests/data/benchmarks/reform_parity/make_expected.py /path/to/ReForm-Eval

(needs torch, datasets, pyyaml, opencv and tqdm, which ReForm-Eval's classes import).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
EXPECTED = HERE / "expected.json"
H = "huggingface_data/"


def _png(seed: int) -> str:
    from PIL import Image

    rng = random.Random(seed)
    im = Image.new("RGB", (40, 30))
    im.putdata([tuple(rng.randrange(256) for _ in range(3)) for _ in range(40 * 30)])
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _write(root: Path, relative: str, doc: Any) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")


def _wrap(data: Any, version: str = "", split: str = "", name: str = "") -> dict[str, Any]:
    doc: dict[str, Any] = {"dataset_name": name, "version": version, "split": split}
    doc["instructs"] = [f"instruct {i}" for i in range(5)]
    doc["data"] = data
    return doc


def write_clone(root: Path) -> None:
    """Every dataset's released file(s), two items each, under ``root``."""
    a, b = _png(1), _png(2)
    # Classification (build/CIFAR10 ... : a list of id, image, question, answer, options).
    for rel in ("Flowers102/flower102_val_1p.json", "CIFAR10/cifar10_test_10p.json",
                "ImageNet-1K/imagenet1k_val_10p.json", "Pets37/pets37_test_10p.json",
                "VizWiz/vizwiz_singleChoice_val_10p.json"):  # fmt: skip
        items = [{"id": f"k{i}", "image": img, "question": f"What is shown {i}?",
                  "answer": i, "options": ["cat", "dog", "bird", "fish"]}
                 for i, img in enumerate((a, b))]  # fmt: skip
        _write(root, H + rel, items)
    _write(root, H + "VizWiz/vizwiz_yesno_val_10p.json",
           [{"id": "y0", "image": a, "question": "Is it blurry?", "answer": 1,
             "options": ["yes", "no"]}])  # fmt: skip
    # TDIUC: questions, annotations and one choice list per question type.
    types = ["sport_recognition", "scene_recognition", "color", "utility_affordance",
             "positional_reasoning", "object_recognition", "counting"]  # fmt: skip
    ques, anns = [], []
    for i, t in enumerate(types):
        for j, img in enumerate((a, b)):
            qid = 100 * i + j
            ques.append({"question_id": qid, "image_id": img, "question": f"Q {t} {j}?"})
            answer = "yes" if j == 1 and t == "utility_affordance" else f"{t}-a{j}"
            anns.append({"question_id": qid, "question_type": t, "ans_source": "x",
                         "answers": [{"answer": answer}]})  # fmt: skip
        _write(root, H + f"TDIUC/choice_list/{t}.json",
               {"choice": [f"{t}-a{k}" for k in range(8)]})  # fmt: skip
    _write(root, H + "TDIUC/TDIUC_val_ques.json", ques[::-1])
    _write(root, H + "TDIUC/TDIUC_val_anns.json", anns)
    # MSCOCO object counting: Image_ID, Question, Answer; the answer list.
    _write(root, H + "MSCOCO/object-counting-all.json",
           [{"Image_ID": img, "Question": f"How many {i}?", "Answer": i + 2,
             "Resolved_COCO_category": "dog"} for i, img in enumerate((a, b))])  # fmt: skip
    _write(root, H + "MSCOCO/objectCounting_answer_list/answer_list.json",
           {"choice": list(range(10))})  # fmt: skip
    # The "bootstrap" layout: img, gt, options / anno.
    boot = [{"id": i, "img": img, "gt": i, "options": ["flood", "fire", "storm"],
             "anno": f"a dog {i}", "region": [[2, 3, 20, 15]], "method": f"bake {i}",
             "title": "t"} for i, img in enumerate((a, b))]  # fmt: skip
    _write(root, H + "MEDIC/disaster-type-selection-sampled.json", _wrap(boot, name="MEDIC"))
    _write(root, H + "RefCOCO/referring-expression-selection-sampled.json",
           _wrap(boot, name="RefCOCO"))  # fmt: skip
    _write(root, H + "MSCOCO/image-text-matching-object-sampled.json",
           _wrap([{**x, "options": None} for x in boot], name="MSCOCO"))  # fmt: skip
    its = [{"img": img, "gt": i, "anno": ["a cat", "a dog", "a car"]} for i, img in
           enumerate((a, b))]  # fmt: skip
    _write(root, H + "MSCOCO/image-text-selection-object-sampled.json",
           _wrap(its, name="MSCOCO"))  # fmt: skip
    ve = _wrap([{"img": x["img"], "gt": x["gt"], "anno": x["anno"]} for x in boot], name="SNLI")
    ve["gt_info"] = {"0": "entailment", "1": "neutral", "2": "contradiction"}
    _write(root, H + "SNLI_VE/visual-entailment-matching-sampled.json", ve)
    _write(root, H + "WikiHow/wikihow-image-text-selection-in-method-sampled.json",
           _wrap(boot, name="WikiHow"))  # fmt: skip

    # The "qa" layout: question_id, image, question, answer, answer_options.
    def qa(key: str = "image", **extra: Any) -> list[dict[str, Any]]:
        # The VQA-family files (image_id) hold the answer as the option's text; a digit
        # text among numeric options is the case an index reading would get wrong.
        opts = ["1", "2", "0"] if key == "image_id" else ["left", "right", "top"]
        return [{"question_id": f"q{i}", key: img, "question": f"Where is it {i}?",
                 "answer": opts[i] if key == "image_id" else i, "answer_options": opts,
                 **extra} for i, img in enumerate((a, b))]  # fmt: skip

    _write(root, H + "MSCOCO/mci_core_multiple_choice.json", _wrap(qa(), "2.0", "val2017"))
    _write(root, H + "MSCOCO/goi_core_multiple_choice.json",
           _wrap(qa(bbox=[3, 4, 12, 9]), "2.0", "val2017"))  # fmt: skip
    _write(root, H + "MSCOCO/mos_core_multiple_choice.json",
           _wrap(qa(bbox=[[1, 2, 8, 6], [20, 10, 9, 12]]), "2.0", "val2017"))  # fmt: skip
    _write(root, H + "CLEVR/clevr_core_multiple_choice.json", _wrap(qa(), "2.0", "val"))
    # VSR and MP3D hold several wordings of each question (a list); CLEVR one text.
    listed = [{**x, "question": [x["question"], "Say where."]} for x in qa()]
    _write(root, H + "VSR/vsr_core_multiple_choice.json", _wrap(listed, "2.0", "test"))
    mp3d = [{**x, "questions": x.pop("question")} for x in listed]
    _write(root, H + "MP3D/mp3d_core_multiple_choice.json", _wrap(mp3d, "2.0", "test"))
    vqa = {"VQA_v2/vqa_val_10p.json": ("2.0", "COCO_val2014"),
           "GQA/gqa_testdev_10p.json": ("2.0", "testdev_balanced"),
           "Whoops/whoops_all_10p.json": ("1.0", "all"),
           "OK-VQA/okvqa_val_10p.json": ("1.0", "COCO_val2014"),
           "ScienceQA/scienceqa_test_10p.json": ("2.0", "test"),
           "VizWiz/vizwiz_val_10p.json": ("2.0", "val"),
           "ViQuAE/viquae_test_10p.json": ("1.0", "test"),
           "A-OKVQA/aokvqa_val_10p.json": ("1.0", "val"),
           "ImageNetVC/imagenetvc_all_10p.json": ("1.0", "val")}  # fmt: skip
    for rel, (version, split) in vqa.items():
        _write(root, H + rel, _wrap(qa("image_id"), version, split))
    _write(root, H + "K-ViQuAE/kviquae_test_10p.json",
           _wrap(qa("image_id", context="Paris is in France."), "2.0", "test"))  # fmt: skip
    _write(root, H + "A-OKVQRA/aokvqra_val_10p.json",
           _wrap(qa("image_id", rationale="because", rationale_options=["x", "y"]), "1.0",
                 "val"))  # fmt: skip
    qar = [{**x, "rationale": f"r{i}", "rationale_options": ["r0", "r1", "r2"]}
           for i, x in enumerate(qa("image_id"))]  # fmt: skip
    _write(root, H + "A-OKVQAR/aokvqar_val_10p.json", _wrap(qar, "1.0", "val"))
    _write(root, H + "Winoground/winoground_all_10p.json",
           _wrap(qa("image_id"), "1.0", "test"))  # fmt: skip
    moc = [{"instance_id": f"m{i}", "image_id": img, "claim": f" claim {i} ",
            "text_evidence": "evidence ", "answer": ["supported", "refuted"][i],
            "answer_options": ["supported", "refuted", "NEI"]}
           for i, img in enumerate((a, b))]  # fmt: skip
    _write(root, H + "MOCHEG/mocheg_test_10p.json", _wrap(moc, "1.0", "test"))

    # OCR / KIE: question_id, image, question (wordings), answer_txt.
    def ocr(**extra: Any) -> list[dict[str, Any]]:
        return [{"question_id": f"o{i}", "image": img,
                 "question": ["What is written?", "Read the text.", "Text?"],
                 "answer_txt": f"STOP {i}", **extra} for i, img in enumerate((a, b))]  # fmt: skip

    ocr_files = {"IC15/ic15_core_open_ended.json": "test",
                 "COCO_Text/cocotext_core_open_ended.json": "test",
                 "TextOCR/textocr_core_open_ended.json": "test",
                 "CUTE80/cute80_core_open_ended.json": "test",
                 "IIIT5K/iiit5k_core_open_ended.json": "test",
                 "WordArt/wordart_core_open_ended.json": "test",
                 "FUNSD/funsd_core_open_ended.json": "test",
                 "POIE/poie_core_open_ended.json": "test",
                 "SROIE/sroie_core_open_ended.json": "test"}  # fmt: skip
    for rel, split in ocr_files.items():
        # build/textOCR/ocr_dataset.py crops each image to the item's bbox.
        extra: dict[str, Any] = {"bbox": [3, 2, 20, 15]} if rel.startswith("TextOCR") else {}
        items = ocr(**extra)
        if rel.split("/")[0] in ("FUNSD", "POIE", "SROIE"):
            # The KIE classes ask the item's question as it is: one text each.
            items = [{**x, "question": f"What is the total {i}?"} for i, x in enumerate(items)]
        _write(root, H + rel, _wrap(items, "2.0", split))
    _write(root, H + "IC15/ic15_gocr_core_open_ended.json",
           _wrap(ocr(bbox=[2, 3, 25, 20]), "2.0", "test"))  # fmt: skip
    _write(root, H + "COCO_Text/cocotext_gocr_core_open_ended.json",
           _wrap(ocr(bbox=[2, 3, 15, 10]), "2.0", "val2014"))  # fmt: skip
    _write(root, H + "TextOCR/textocr_gocr_core_open_ended.json",
           _wrap(ocr(bbox=[5, 1, 10, 12]), "2.0", "test"))  # fmt: skip
    ocr_vqa = [{"question_id": f"v{i}", "image_id": img, "question": f"What does it say {i}?",
                "answer": ["sale", "SALE"]} for i, img in enumerate((a, b))]  # fmt: skip
    for rel, (version, split) in {"TextVQA/textvqa_val_10p.json": ("1.0", "val"),
                                  "DocVQA/docvqa_val_10p.json": ("1.0", "val"),
                                  "OCR-VQA/ocrvqa_test_10p.json": ("1.0", "test")}.items():  # fmt: skip
        _write(root, H + rel, _wrap(ocr_vqa, version, split))
    # Captions: img, annos.
    caps = [{"img": img, "annos": [f"a picture {i}", "noise"]} for i, img in enumerate((a, b))]
    for rel, name in {"MSCOCO/captions-sampled.json": "mscoco",
                      "TextCaps/captions-sampled.json": "textcaps",
                      "NoCaps/captions-sampled.json": "nocaps",
                      "Flickr30K/captions-sampled.json": "flickr30k"}.items():  # fmt: skip
        _write(root, H + rel, _wrap(caps, name=name))
    # Dialogues: questions, answers, dialogs of rounds by index.
    dialog = {"questions": ["what color is it", "is it big?", "where"],
              "answers": ["red", "no", "blue", "yes", "outside"],
              "dialogs": [{"image_id": 7, "image_base64": a, "dialog": [
                  {"question": 0, "answer": 0, "answer_options": [2, 0, 4]},
                  {"question": 1, "answer": 3, "answer_options": [1, 3]},
                  {"question": 2, "answer": 4, "answer_options": [4, 0]}]}]}  # fmt: skip
    _write(root, H + "VisDial/Visdial_1.0_val_v1.2.json",
           {"version": "lvlm_1.2", "split": "val2018", "data": dialog})  # fmt: skip
    _write(root, H + "VisDial/VQA_MultiTurn_v1.0.json",
           {"version": "v2.0_MultiRound", "split": "COCO_val2014", "data": dialog})  # fmt: skip


def pixels(image: Any) -> str:
    """A hash of an image's RGB pixels and size."""
    import numpy as np

    arr = np.asarray(image.convert("RGB"))
    return hashlib.sha256(repr(arr.shape).encode() + arr.tobytes()).hexdigest()[:16]


CHOICE_PREDICTIONS = ["(A)", "(B) yes", "(b)", "(2)", "I think (C).", "none", ""]
"""Model outputs scored for every single-choice sample (and its gold option's text)."""
OPEN_PREDICTIONS = ["STOP 0", "it says stop 1 here", "Sale", "sale SALE", "", "nothing"]
"""Model outputs scored for every OCR / KIE sample."""


class _Proc:
    """A stand-in preprocessor: the caption classes set ``response_prefix`` on theirs."""

    response_prefix = None

    def __call__(self, sample: dict[str, Any]) -> str:
        return ""

    def process_qa(self, question: str, options: list[str], answer: str) -> tuple[str, str]:
        return question, answer


def _run_reform(reform: Path, clone: Path) -> dict[str, list[dict[str, Any]]]:
    sys.path.insert(0, str(reform))
    sys.path.insert(0, str(HERE.parents[3] / "src"))
    from build import load_reform_dataset  # type: ignore[import-not-found]

    from lmmprobe.data.benchmarks import BENCHMARKS
    from lmmprobe.data.benchmarks.reform_common import SETS
    from metrics import get_metric  # type: ignore[import-not-found]

    work = Path(tempfile.mkdtemp())
    (work / "ReForm-Eval-Data").symlink_to(clone)
    os.chdir(work)  # the configs name ReForm-Eval-Data/huggingface_data/... relative paths
    out: dict[str, list[dict[str, Any]]] = {}
    import yaml

    for name in BENCHMARKS.get("reform-eval").members:
        spec = SETS[name]
        config = reform / spec.config
        if spec.family == "dialogue":
            # VisualDialog_SingleChoice asserts each raw image exists at the config's
            # image_path even when it reads the base64 image: give it empty stand-ins.
            cfg = yaml.safe_load(config.read_text())
            images = work / "images" / name
            images.mkdir(parents=True)
            cfg["data_config"]["image_path"] = str(images)
            for f in ("COCO_val2014_000000000007.jpg", "VisualDialog_val2018_000000000007.jpg"):
                (images / f).touch()
            config = work / f"{name}.yaml"
            config.write_text(yaml.safe_dump(cfg))
        random.seed(0)
        ds = load_reform_dataset(
            spec.loader, spec.formulation, dataset_config=str(config),
            inference_method="generation", in_context_sample=False, random_instruct=True,
            data_duplication=1, shuffle_options=False, load_from_hf=False,
            offline_from_hf=True, option_mark="upper", online_multi_round=False,
            preprocessor=_Proc(),
        )  # fmt: skip
        rows: list[dict[str, Any]] = []
        if spec.formulation == "Generation":
            # The caption classes draw the question at random from this list (duplication 1).
            rows.append({"instruction_list": list(ds.instruction_list)})
        metric = None if spec.formulation == "Generation" else get_metric(spec.formulation)
        for i in range(len(ds)):
            item = ds[i]
            answer = item.get("answer", item.get("references"))
            verdicts = None
            if metric is not None and item.get("answer_options") is not None:
                options = item["answer_options"]
                outputs = [*CHOICE_PREDICTIONS, options[int(answer)]]
                verdicts = [[p, metric(p, answer, options)[0]] for p in outputs]
            elif metric is not None:
                verdicts = [[p, int(metric(p, answer)[0])] for p in OPEN_PREDICTIONS]
            rows.append({
                "verdicts": verdicts,
                "id": str(item["sample_id"]),
                "question": item["question"],
                "options": item.get("answer_options"),
                "answer": answer if isinstance(answer, list) else str(answer),
                "instruct": item.get("instruct"),
                "pixels": pixels(item["image"]),
            })  # fmt: skip
        out[name] = rows
    return out


def main() -> None:
    """Write the clone to a temporary folder, run ReForm-Eval on it, write expected.json."""
    reform = Path(sys.argv[1]).resolve()
    clone = Path(tempfile.mkdtemp()) / "ReForm-Eval-Data"
    write_clone(clone)
    expected = _run_reform(reform, clone)
    EXPECTED.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{sum(len(v) for v in expected.values())} samples of {len(expected)} datasets")


if __name__ == "__main__":
    main()
