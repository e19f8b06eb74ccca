"""Regenerate ``data/vlmevalkit_published/``: VLMEvalKit's own ratings run on VLMEvalKit-shaped tables.

VLMEvalKit (open-compass/VLMEvalKit @ e8e78f0) is imported from a checkout of its repository,
module by module, without its package ``__init__`` (which imports every model and dataset):
``vlmeval/smp`` (``load``, ``d2df``, ``process_punctuation``) and
``vlmeval/dataset/utils/yorn.py`` and ``multiple_choice.py`` run as written; the third-party
modules they import and this run never calls (``validators``, ``sty``, ``tabulate``...) and
``vlmeval.utils`` (``can_infer``, ``track_progress_rich``: not used by ``report_acc``) are
stand-ins.

Written, with a seeded random stream (``SEED``):

- ``Model_HallusionBench_auxmatch.xlsx``, ``Model_POPE_auxmatch.tsv``,
  ``Model_MME_auxmatch.xlsx``: ``_auxmatch`` tables as ``ImageYORNDataset.evaluate`` writes
  them with exact matching: the dataset's columns, ``prediction``, ``extracted`` (VLMEvalKit's
  ``YOrN_Extraction`` of the prediction) and ``score`` (``answer == extracted``); xlsx through
  pandas (openpyxl), tsv as ``dump_tsv`` writes it (``csv.QUOTE_ALL``). POPE's rows include
  items of two categories (``adversarial,popular``), which its rating counts twice.
- ``Model_MMBench_TEST_EN_openai_result.xlsx``, ``Model_SEEDBench_IMG_openai_result.tsv``:
  judged result tables with ``hit`` (two splits and MMBench's abilities; no split).
- ``Model_OCRBench.xlsx``: an OCRBench prediction table (OCRBench records no verdict: its
  ``evaluate`` reads the predictions), every category, empty predictions among them.
- ``Model_MMVet_gpt-4-turbo.xlsx``: an MM-Vet judged table with each grade in ``score``.
- ``expected.json``: per table, what ``Hallusion_rating`` / ``POPE_rating`` / ``MME_rating`` /
  ``report_acc`` / ``OCRBench.evaluate`` / ``MMVet_acc`` (both its tables) returned (each DataFrame as its columns and rows), with the run's reference.
  ``report_acc`` is also run on the four result tables of
  ``tests/predictions/fixtures/vlmevalkit/`` (written by VLMEvalKit's own evaluation).

Made with::

    mkdir -p /tmp/vk && git --git-dir=MIRROR archive e8e78f05f3080fe28154f2130321f17951c3be94 \\
        vlmeval | tar x -C /tmp/vk
    /work/main/.venv/bin/python tests/parity/generate/vlmevalkit_published.py --ref /tmp/vk
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import pandas as pd

COMMIT = "e8e78f05f3080fe28154f2130321f17951c3be94"
SEED = 20261130
HERE = Path(__file__).resolve().parents[1] / "data" / "vlmevalkit_published"
CHOICE_FIXTURES = Path(__file__).resolve().parents[2] / "predictions" / "fixtures" / "vlmevalkit"


class _Stub(types.ModuleType):
    """A module this run imports but never calls into."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub(f"{self.__name__}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        return None


def _vlmeval(ref: Path) -> tuple[Any, Any, Any, Any, Any]:
    root = ref / "vlmeval"
    for name, sub in (("vlmeval", ""), ("vlmeval.dataset", "dataset"),
                      ("vlmeval.dataset.utils", "dataset/utils")):  # fmt: skip
        # dataset/utils/__init__ imports every judge: its names are stand-ins, its modules real.
        pkg = (_Stub if sub == "dataset/utils" else types.ModuleType)(name)
        pkg.__path__ = [str(root / sub)]
        sys.modules[name] = pkg
    sys.modules["vlmeval.utils"] = _Stub("vlmeval.utils")
    for missing in ("validators", "sty", "tabulate", "portalocker", "xlsxwriter"):
        try:
            __import__(missing)
        except ImportError:
            sys.modules[missing] = _Stub(missing)
    import vlmeval.dataset.image_vqa as image_vqa  # type: ignore[import-not-found]
    import vlmeval.dataset.utils.mmvet as mmvet  # type: ignore[import-not-found]
    import vlmeval.dataset.utils.multiple_choice as mc  # type: ignore[import-not-found]
    import vlmeval.dataset.utils.yorn as yorn  # type: ignore[import-not-found]
    import vlmeval.smp as smp  # type: ignore[import-not-found]

    return smp, yorn, mc, image_vqa, mmvet


_ANSWERS = ("Yes", "yes, it is.", "No", "No, there is none.", "I am not sure.",
            "Yes and no.", "The answer is yes", "no")  # fmt: skip


def _dump(frame: pd.DataFrame, path: Path) -> None:
    if path.suffix == ".tsv":
        frame.to_csv(path, sep="\t", index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)
    else:
        frame.to_excel(path, index=False, engine="openpyxl")


def _yorn_rows(rng: random.Random, yorn: Any, rows: list[dict[str, Any]]) -> pd.DataFrame:
    for row in rows:
        row["answer"] = rng.choice(("Yes", "No"))
        row["prediction"] = rng.choice(_ANSWERS)
        row["extracted"] = yorn.YOrN_Extraction(row["prediction"])
    frame = pd.DataFrame(rows)
    frame["score"] = frame["answer"] == frame["extracted"]
    return frame


def _hallusion(rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    n = 0
    for category, l2s in (("VD", ("chart", "map", "illusion")), ("VS", ("table", "ocr"))):
        for l2 in l2s:
            for s in range(2):
                for fig in range(2):
                    for q in range(2):
                        rows.append({
                            "index": f"{category}_{l2}_{n}_{s}_{fig}_{q}",
                            "category": category, "l2-category": l2,
                            "question": f"Is {n} shown?",
                        })  # fmt: skip
                        n += 1
    return rows


def _pope(rng: random.Random) -> list[dict[str, Any]]:
    names = ("adversarial", "popular", "random", "adversarial,popular")
    return [
        {"index": i, "category": rng.choice(names), "question": f"Is there a {i}?"}
        for i in range(40)
    ]


def _mme(smp: Any, yorn: Any) -> list[dict[str, Any]]:
    rows = []
    n = 0
    categories = ("OCR", "artwork", "celebrity", "color", "count", "existence", "landmark",
                  "position", "posters", "scene", "code_reasoning", "commonsense_reasoning",
                  "numerical_calculation", "text_translation")  # fmt: skip
    for category in categories:
        for image in range(3):
            for _ in range(2):
                rows.append({
                    "index": n, "category": category, "image_path": f"{category}/{image}.jpg",
                    "question": f"Is this {n}?",
                })  # fmt: skip
                n += 1
    return rows


def _choice(rng: random.Random, splits: tuple[str, ...], mmb: bool) -> pd.DataFrame:
    rows = []
    l2 = {"coarse_perception": ("image_style", "image_scene"),
          "logic_reasoning": ("structuralized_imagetext_understanding",),
          "finegrained_perception (instance-level)": ("object_localization", "ocr")}  # fmt: skip
    n = 0
    for split in splits:
        for ability, categories in l2.items():
            for category in categories:
                for _ in range(3):
                    row: dict[str, Any] = {"index": n, "question": f"Q{n}", "A": "a", "B": "b",
                                           "answer": "A", "prediction": "A",
                                           "hit": rng.choice((0, 1)), "log": "Match Found"}  # fmt: skip
                    if mmb:
                        row |= {"split": split, "l2-category": ability, "category": category}
                    else:
                        row["category"] = category
                    rows.append(row)
                    n += 1
    return pd.DataFrame(rows)


_OCR = ("Regular Text Recognition", "Irregular Text Recognition", "Artistic Text Recognition",
        "Handwriting Recognition", "Digit String Recognition", "Non-Semantic Text Recognition",
        "Scene Text-centric VQA", "Doc-oriented VQA", "Key Information Extraction",
        "Handwritten Mathematical Expression Recognition")  # fmt: skip


def _ocrbench(rng: random.Random) -> pd.DataFrame:
    """Rows of every category: found, not found, an empty prediction (NaN: "nan"), newlines,
    and handwritten expressions whose spaces differ."""
    rows = []
    preds = ("The text is HELLO", "hello\nworld", "", "none of it", "an answer", "x ^ { 2 }",
             "x^{2}", "Total: 42")  # fmt: skip
    answers = (["hello"], ["Hello World"], ["an"], ["x^{2}"], ["42", "forty-two"], ["X ^ {2}"])
    for i in range(60):
        rows.append({"index": i, "question": f"q{i}", "category": rng.choice(_OCR),
                     "answer": str(rng.choice(answers)), "prediction": rng.choice(preds)})  # fmt: skip
    return pd.DataFrame(rows)


def _mmvet(rng: random.Random) -> pd.DataFrame:
    categories = ("rec", "ocr", "rec,know,gen", "ocr,spat", "rec,ocr,spat,math", "ocr,math",
                  "rec,spat", "know")  # fmt: skip
    grades = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0, 0.4)
    return pd.DataFrame([
        {"index": i, "question": f"q{i}", "answer": "a", "prediction": "p",
         "category": rng.choice(categories), "score": rng.choice(grades), "log": "Succeed"}
        for i in range(40)
    ])  # fmt: skip


def _frame(df: pd.DataFrame) -> dict[str, Any]:
    cols = [str(c) for c in df.columns]
    return {
        "columns": cols,
        "rows": [
            [v.item() if hasattr(v, "item") else v for v in row]
            for row in df.itertuples(index=False)
        ],
    }


def main() -> None:
    """Write the tables and VLMEvalKit's ratings of them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ref", type=Path, required=True, help="a VLMEvalKit checkout (e8e78f0)")
    args = parser.parse_args()
    smp, yorn, mc, image_vqa, mmvet = _vlmeval(args.ref)
    rng = random.Random(SEED)
    HERE.mkdir(parents=True, exist_ok=True)
    tables: dict[str, Any] = {}
    for name, rows, rating in (
        ("Model_HallusionBench_auxmatch.xlsx", _hallusion(rng), yorn.Hallusion_rating),
        ("Model_POPE_auxmatch.tsv", _pope(rng), yorn.POPE_rating),
        ("Model_MME_auxmatch.xlsx", _mme(smp, yorn), yorn.MME_rating),
    ):
        _dump(_yorn_rows(rng, yorn, rows), HERE / name)
        tables[name] = {"function": rating.__name__, "result": _frame(rating(str(HERE / name)))}
    for name, frame in (
        ("Model_MMBench_TEST_EN_openai_result.xlsx", _choice(rng, ("dev", "test"), True)),
        ("Model_SEEDBench_IMG_openai_result.tsv", _choice(rng, ("none",), False)),
    ):
        _dump(frame, HERE / name)
        tables[name] = {"function": "report_acc",
                        "result": _frame(mc.report_acc(smp.load(str(HERE / name))))}  # fmt: skip
    name = "Model_OCRBench.xlsx"
    _dump(_ocrbench(rng), HERE / name)
    with tempfile.TemporaryDirectory() as folder:
        # evaluate() writes its _score.json beside the table: run on a copy.
        copy = Path(folder) / name
        copy.write_bytes((HERE / name).read_bytes())
        result = image_vqa.OCRBench.evaluate(str(copy))
    tables[name] = {"function": "OCRBench.evaluate",
                    "result": {"columns": list(result), "rows": [list(result.values())]}}  # fmt: skip
    name = "Model_MMVet_gpt-4-turbo.xlsx"
    _dump(_mmvet(rng), HERE / name)
    coarse, fine = mmvet.MMVet_acc(str(HERE / name))
    tables[name] = {"function": "MMVet_acc", "result": _frame(coarse), "fine": _frame(fine)}
    for path in sorted(CHOICE_FIXTURES.glob("*_result.*")):
        tables[f"../../../predictions/fixtures/vlmevalkit/{path.name}"] = {
            "function": "report_acc",
            "result": _frame(mc.report_acc(smp.load(str(path)))),
        }
    doc = {
        "reference": {
            "repo": "open-compass/VLMEvalKit", "commit": COMMIT,
            "files": ["vlmeval/dataset/utils/yorn.py", "vlmeval/dataset/utils/multiple_choice.py"],
        },
        "generator": "tests/parity/generate/vlmevalkit_published.py",
        "seed": SEED,
        "tables": tables,
    }  # fmt: skip
    (HERE / "expected.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
