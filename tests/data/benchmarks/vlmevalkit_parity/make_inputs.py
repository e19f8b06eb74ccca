"""Write the parity inputs: a VLMEvalKit-schema TSV and the model's answers, per benchmark.

Each ``NAME.tsv`` has the columns VLMEvalKit's file of that benchmark has (index, question,
hint, A-D, answer, category, l2-category, image): for CircularEval benchmarks every question
once per rotation of its options (index i + k * 1e6), the copies' image cells naming the first
row's index as VLMEvalKit's files do; for the others one row a question, one with two images.
``NAME_pred.tsv`` holds the answers (index, prediction): letters, "The answer is X", option
texts, wrong letters, refusals, Chinese and unreadable text, drawn with a fixed seed.

    python tests/data/benchmarks/vlmevalkit_parity/make_inputs.py
"""

from __future__ import annotations

import base64
import csv
import io
import random
from pathlib import Path

from PIL import Image

HERE = Path(__file__).parent
# name: (VLMEvalKit dataset, circular, Chinese, questions)
SETS = {
    "mmbench-v11-en": ("MMBench_DEV_EN_V11", True, False, 24),
    "mmbench-v11-cn": ("MMBench_DEV_CN_V11", True, True, 16),
    "mmbench-cn": ("MMBench_DEV_CN", True, True, 12),
    "ccbench": ("CCBench", True, True, 12),
    "seedbench2-plus": ("SEEDBench2_Plus", False, False, 40),
    "mmt-bench": ("MMT-Bench_VAL", False, False, 96),
    "mmt-bench-mi": ("MMT-Bench_VAL_MI", False, False, 40),
    "muirbench": ("MUIRBench", False, False, 40),
    "vstar": ("VStarBench", False, False, 30),
}
# Their files' task columns: MuirBench's tasks, V*'s two kinds (category only, no l2-category).
OWN_CATEGORIES = {
    "MUIRBench": ["Image-Text Matching", "Counting", "Visual Retrieval", "Ordering"],
    "VStarBench": ["direct_attributes", "relative_position"],
}
CATEGORIES = ["attribute_recognition", "ocr", "spatial_relationship", "image_scene"]
L2 = {"attribute_recognition": "FP-S", "ocr": "FP-S", "spatial_relationship": "RR",
      "image_scene": "CP"}  # fmt: skip
# MMT-Bench's 32 meta-tasks (report_acc_MMT's MMT_abbrs keys: it expects every one of them).
MMT_META = [
    "visual_recognition",
    "localization",
    "ocr",
    "counting",
    "hallucination",
    "image_retrieval",
    "threed",
    "visual_captioning",
    "visual_grounding",
    "doc_understanding",
    "action_recognition",
    "pixel_level_perception",
    "image-to-image_translation",
    "relation_reasoning",
    "intelligence_quotient_test",
    "emotion",
    "visual_illusion",
    "meme_understanding",
    "visual_prompt_understanding",
    "anomaly_detection",
    "keypoint_detection",
    "visual_commonsense_reasoning",
    "image_evaluation_judgement",
    "multiple_image_analysis",
    "cross_image_matching",
    "temporal_understanding",
    "visual_code",
    "medical_understanding",
    "autonomous_driving",
    "discipline_knowledge_reasoning",
    "embodied_ai",
    "gui_navigation",
]
WORDS_EN = ["red", "blue", "a cat", "two dogs", "the left one", "3", "yes", "a tree"]
WORDS_CN = ["红色", "蓝色", "一只猫", "两只狗", "左边", "三", "是", "一棵树"]


def png(rng: random.Random) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), tuple(rng.randrange(256) for _ in range(3))).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def answer(rng: random.Random, letters: list[str], options: list[str], gold: str) -> str:
    """One model answer: right or wrong, in one of the forms models write."""
    pick = gold if rng.random() < 0.85 else rng.choice(letters)
    text = options[letters.index(pick)]
    forms = [
        pick, f"{pick}.", f"The answer is {pick}.", f"({pick}) {text}", text,
        f"I think the correct answer is **{pick}**", "Cannot determine the answer",
        "I am not sure.", "", f"答案是{pick}", f"{pick}. {text}",
        f"A and {pick}", "Spider",
    ]  # fmt: skip
    return rng.choice(forms)


def write(name: str, dataset: str, circular: bool, chinese: bool, n: int, seed: int) -> None:
    rng = random.Random(seed)
    words = WORDS_CN if chinese else WORDS_EN
    rows, preds = [], []
    for q in range(1, n + 1):
        n_opt = rng.choice([2, 3, 4, 4])
        options = rng.sample(words, n_opt)
        gold = rng.randrange(n_opt)
        category = rng.choice(CATEGORIES)
        l2 = L2[category]
        if dataset.startswith("MMT"):  # every meta-task, one or two subtasks each
            l2 = MMT_META[(q - 1) % len(MMT_META)]
            # The meta-task's k-th question goes to subtask k % 2: with three questions, two
            # subtasks of unequal size (report_acc_MMT's meta-task figure is the mean of its
            # subtasks' accuracies, not of its questions).
            category = f"{l2}_task{(q - 1) // len(MMT_META) % 2}"
        if dataset in OWN_CATEGORIES:
            category = rng.choice(OWN_CATEGORIES[dataset])
        hint = rng.choice(["", "", "The picture was taken indoors."])
        question = ("图中是什么？" if chinese else "What is shown?") + f" #q{q}"
        n_images = 1 + q % 3 if dataset == "MUIRBench" else 1
        if dataset == "MUIRBench":  # MuirBench marks where each image goes with <image>
            question = "Which image shows it? " + " ".join(["<image>"] * n_images) + f" #q{q}"
        rotations = range(n_opt) if circular else range(1)
        for k in rotations:
            index = q + k * 1_000_000
            shown = options[k:] + options[:k]
            letters = "ABCD"[:n_opt]
            g = letters[shown.index(options[gold])]
            if k == 0:
                image = png(rng)
                several = q % 3 == 0 if dataset.endswith("_MI") else q % 7 == 3
                if dataset == "MUIRBench":
                    if n_images > 1:
                        image = repr([image] + [png(rng) for _ in range(n_images - 1)])
                elif not circular and several:  # several images: a list of base64 strings
                    image = repr([image, png(rng)])
            else:
                image = str(q)  # the copy shares the first row's image
            cells = {c: (shown[i] if i < n_opt else "") for i, c in enumerate("ABCD")}
            rows.append({"index": index, "question": question.replace("#q", f"#r{index}q"),
                         "hint": hint, **cells, "answer": g, "category": category,
                         "l2-category": l2, "image": image, "split": "dev"})  # fmt: skip
            preds.append({"index": index, "prediction": answer(rng, list(letters), shown, g)})
    columns = ["index", "question", "hint", "A", "B", "C", "D", "answer", "category",
               "l2-category", "image", "split"]  # fmt: skip
    if dataset in OWN_CATEGORIES:
        columns.remove("l2-category")
        rows = [{k: v for k, v in r.items() if k != "l2-category"} for r in rows]
    folder = HERE / name
    folder.mkdir(exist_ok=True)
    with open(folder / f"{dataset}.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, columns, delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerows(rows)
    with open(HERE / f"{name}_pred.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, ["index", "prediction"], delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerows(preds)


def write_mmvp(n_pairs: int, seed: int) -> None:
    """MMVP's file: each question asked on two images (indexes 2i-1, 2i), rows shuffled.

    Both rows of a pair hold the same question (report_acc_MMVP checks it); the tag the
    scripted model answers by is in each row's hint.
    """
    rng = random.Random(seed)
    rows, preds = [], []
    for p in range(n_pairs):
        question = "Is the dog facing left or right?"
        options = ["left", "right"]
        for k in range(2):
            index = 2 * p + k + 1
            gold = "AB"[rng.randrange(2)]
            rows.append({"index": index, "question": question, "hint": f"#i{index}",
                         "A": options[0], "B": options[1], "answer": gold,
                         "category": "Orientation", "image": png(rng)})  # fmt: skip
            preds.append({"index": index, "prediction": answer(rng, ["A", "B"], options, gold)})
    rng.shuffle(rows)  # report_acc_MMVP pairs rows by index order, not file order
    folder = HERE / "mmvp"
    folder.mkdir(exist_ok=True)
    columns = ["index", "question", "hint", "A", "B", "answer", "category", "image"]
    with open(folder / "MMVP.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, columns, delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerows(rows)
    with open(HERE / "mmvp_pred.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, ["index", "prediction"], delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerows(preds)


BLINK_TASKS = ["Visual_Similarity", "Counting", "Relative_Depth", "Jigsaw", "Art_Style",
               "Functional_Correspondence", "Semantic_Correspondence", "Spatial_Relation",
               "Object_Localization", "Visual_Correspondence", "Multi-view_Reasoning",
               "Relative_Reflectance", "Forensic_Detection", "IQ_Test"]  # fmt: skip


def write_blink(per_task: int, seed: int) -> None:
    """BLINK's file: its 14 subtasks (category), one to four images a question."""
    rng = random.Random(seed)
    rows, preds = [], []
    index = 0
    for task in BLINK_TASKS:
        for _ in range(rng.randint(1, per_task)):
            index += 1
            n_opt = rng.choice([2, 2, 3, 4])
            options = [f"Point {c}" for c in "ABCD"[:n_opt]]
            gold = "ABCD"[rng.randrange(n_opt)]
            n_images = rng.choice([1, 1, 2, 3, 4])
            images = [png(rng) for _ in range(n_images)]
            cells = {c: (options[i] if i < n_opt else "") for i, c in enumerate("ABCD")}
            rows.append({"index": index, "question": f"Which point is closer? #b{index}",
                         **cells, "answer": gold, "category": task,
                         "image": images[0] if n_images == 1 else repr(images)})  # fmt: skip
            preds.append({"index": index,
                          "prediction": answer(rng, list("ABCD"[:n_opt]), options, gold)})  # fmt: skip
    folder = HERE / "blink"
    folder.mkdir(exist_ok=True)
    columns = ["index", "question", "A", "B", "C", "D", "answer", "category", "image"]
    with open(folder / "BLINK.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, columns, delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerows(rows)
    with open(HERE / "blink_pred.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, ["index", "prediction"], delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerows(preds)


def write_cvbench(n: int, seed: int) -> None:
    """CV-Bench's two files: 2D rows (ADE20K, COCO sources), 3D rows (Omni3D), each row's prompt
    holding its options; indexes distinct across the files."""
    rng = random.Random(seed)
    folder = HERE / "cv-bench"
    folder.mkdir(exist_ok=True)
    preds = []
    columns = ["index", "question", "A", "B", "C", "D", "answer", "prompt", "source", "split",
               "category", "image"]  # fmt: skip
    for kind, sources, start in (("2D", ["ADE20K", "COCO"], 1), ("3D", ["Omni3D"], 1001)):
        rows = []
        for k in range(n):
            index = start + k
            n_opt = rng.choice([2, 4, 6]) if kind == "2D" else 2
            options = [str(rng.randrange(10)) + f" objects {i}" for i in range(n_opt)][:4]
            n_opt = len(options)
            gold = "ABCD"[rng.randrange(n_opt)]
            question = f"How many chairs are there? #c{index}"
            shown = "\n".join(f"({c}) {o}" for c, o in zip("ABCD", options, strict=False))
            cells = {c: (options[i] if i < n_opt else "") for i, c in enumerate("ABCD")}
            rows.append({"index": index, "question": question, **cells, "answer": gold,
                         "prompt": f"{question}\nSelect from the following choices.\n{shown}",
                         "source": rng.choice(sources), "split": kind,
                         "category": "Count" if kind == "2D" else "Depth", "image": png(rng)})  # fmt: skip
            preds.append({"index": index,
                          "prediction": answer(rng, list("ABCD"[:n_opt]), options, gold)})  # fmt: skip
        with open(folder / f"CV-Bench-{kind}.tsv", "w", encoding="utf-8", newline="") as f:
            out = csv.DictWriter(f, columns, delimiter="\t", lineterminator="\n")
            out.writeheader()
            out.writerows(rows)
    with open(HERE / "cv-bench_pred.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, ["index", "prediction"], delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerows(preds)


def write_hrbench(name: str, dataset: str, n: int, seed: int) -> None:
    """HR-Bench's file: FSP and FCP questions, each in 4 cycles of its options (own indexes)."""
    rng = random.Random(seed)
    rows, preds = [], []
    index = 0
    for q in range(n):
        options = rng.sample(WORDS_EN, 4)
        gold = rng.randrange(4)
        category = "FSP" if q % 2 else "FCP"
        image = png(rng)
        first = index + 1
        for k in range(4):
            index += 1
            shown = options[k:] + options[:k]
            g = "ABCD"[shown.index(options[gold])]
            rows.append({"index": index, "question": f"What colour is the sign? #h{index}",
                         **dict(zip("ABCD", shown, strict=True)), "answer": g,
                         "category": category, "cycle_category": f"cycle{k + 1}",
                         "image": image if k == 0 else str(first)})  # fmt: skip
            preds.append({"index": index, "prediction": answer(rng, list("ABCD"), shown, g)})
    folder = HERE / name
    folder.mkdir(exist_ok=True)
    columns = ["index", "question", "A", "B", "C", "D", "answer", "category", "cycle_category",
               "image"]  # fmt: skip
    with open(folder / f"{dataset}.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, columns, delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerows(rows)
    with open(HERE / f"{name}_pred.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, ["index", "prediction"], delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerows(preds)


if __name__ == "__main__":
    for i, (name, (dataset, circular, chinese, n)) in enumerate(SETS.items()):
        write(name, dataset, circular, chinese, n, seed=1000 + i)
    write_mmvp(30, seed=2000)
    write_blink(4, seed=3000)
    write_cvbench(24, seed=4000)
    write_hrbench("hrbench-4k", "hr_bench_4k", 10, seed=5000)
    write_hrbench("hrbench-8k", "hr_bench_8k", 8, seed=5001)
