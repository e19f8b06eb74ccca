"""Regenerate tests/parity/data/hemm_prompts.json by running HEMM's prompt code.

For every one of HEMM's 30 datasets, the prompt class its loader uses (``hemm/prompts/*.py``
of pliang279/HEMM) formats fixed inputs; the output is the exact text HEMM gives the model.
Two datasets build part of the text in the loader itself, and that code is run too:

- VCR: ``VCRDatasetEvaluator.fix_tokenization`` (``hemm/data/vcr_dataset.py``) turns the
  question's and the choices' tokens into text before ``VCRPrompt`` formats them. The module
  imports OpenCV and Pillow at the top, which this environment lacks: empty modules stand in
  (fix_tokenization uses neither) and the evaluator is made with ``__new__``.
- ScienceQA: ``ScienceQADatasetEvaluator.evaluate_dataset`` (``hemm/data/scienceQA_dataset.py``)
  appends the numbered choice lines after the prompt. It is run on a one-item dataset whose
  image is an object with a ``save`` method, with a model object recording the text it is
  given; ``datasets`` and Pillow stand in as empty modules (only imported at the top).

Every input holds a brace, so the check also covers text that looks like a format field.

Run with the reference environment::

    /work/refenv/bin/python tests/parity/generate/hemm_prompts.py --reference /work/ref/HEMM
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "data" / "hemm_prompts.json"

# dataset name -> (prompt module, class, format_prompt argument names)
SINGLE = {
    "hemm-vqa": ("vqa_prompt", "VQAPrompt", ["question"]),
    "hemm-visualgenome": ("visualgenome_prompt", "visualgenomeprompt", ["question"]),
    "hemm-okvqa": ("okqvqa_prompt", "OKVQAPrompt", ["question"]),
    "hemm-gqa": ("gqa_prompt", "GQAPrompt", ["question"]),
    "hemm-nocaps": ("nocaps_prompt", "NoCapsPrompt", []),
    "hemm-flickr30k": ("flickr30k_prompt", "Flickr30kPrompt", []),
    "hemm-winoground": ("winoground_prompt", "WinogroundPrompt", ["caption"]),
    "hemm-nlvr": ("nlvr_prompt", "nlvrprompt", ["sentence"]),
    "hemm-nlvr2": ("nlvr2prompt", "NLVR2prompt", ["sentence"]),
    "hemm-irfl": ("irfl_prompt", "IRFLPrompt", ["phrase"]),
    "hemm-mmimdb": ("mmimdb_prompt", "MMIMDBPrompt", ["plot"]),
    "hemm-magicbrush": ("magic_brush_prompt", "MagicBrushPrompt", ["instruction"]),
    "hemm-lncoco": ("lncoco_prompt", "LNCOCOPrompt", ["caption"]),
    "hemm-nycartoon": ("newyorkercartoon_prompt", "NewYorkerCartoonPrompt", ["caption"]),
    "hemm-hatefulmemes": ("hateful_memes_prompt", "HatefulMemesPrompt", ["text"]),
    "hemm-memecap": ("memecaps_prompt", "MemeCapsPrompt", ["title", "img_caption"]),
    "hemm-memotion": ("memotion_prompt", "MemotionPrompt", ["text_corrected"]),
    "hemm-fer2013": ("face_emotion_prompt", "FaceEmotionPrompt", []),
    "hemm-resisc45": ("resisc45_prompt", "Resisc45Prompt", []),
    "hemm-ucmerced": ("ucmerced_prompt", "UCMercedPrompt", []),
    "hemm-inat": ("inat_prompt", "INATPrompt", []),
    "hemm-decimer": ("decimer_prompt", "DecimerPrompt", []),
    "hemm-pathvqa": ("pathvqa_prompt", "PathVQAPrompt", ["question"]),
    "hemm-vqarad": ("vqarad_prompt", "VQARADPrompt", ["question"]),
    "hemm-openpath": ("plip_kather_prompt", "PlipKatherPrompt", []),
    "hemm-slake": ("slake_prompt", "SlakePrompt", ["question"]),
    "hemm-enrico": ("enrico_prompt", "EnricoPrompt", []),
    "hemm-screen2words": ("screen2words_prompt", "Screen2WordsPrompt", []),
}


def _value(dataset: str, arg: str) -> str:
    # Distinct per dataset and argument, with braces and a quote in each.
    return f"{arg} of {dataset} {{x}} 'q' #1"


def _stub(name: str, **attrs: Any) -> None:
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    sys.modules.setdefault(name, module)


def _vcr_case() -> dict[str, Any]:
    _stub("cv2")
    _stub("PIL", Image=types.SimpleNamespace(Image=type("Image", (), {})))
    _stub("PIL.Image", Image=type("Image", (), {}))
    vcr = importlib.import_module("hemm.data.vcr_dataset")
    prompt = importlib.import_module("hemm.prompts.vcr_prompt").VCRPrompt()
    evaluator = vcr.VCRDatasetEvaluator.__new__(vcr.VCRDatasetEvaluator)
    objects = ["person", "person", "dog"]
    question = ["Why", "is", [0, 2], "near", [1], "{x}", "?"]
    choices = [
        [[0], "is", "walking", "the", [2], "."],
        ["Because", [1], "likes", "{dogs}", "."],
        ["They", "are", "lost", "."],
        [[0, 1], "are", "friends", "."],
    ]
    q = evaluator.fix_tokenization(question, objects)
    fixed = [evaluator.fix_tokenization(c, objects) for c in choices]
    return {
        "dataset": "hemm-vcr",
        "inputs": {"question": question, "answer_choices": choices, "objects": objects},
        "prompt": prompt.format_prompt(q, fixed),
    }


def _scienceqa_case(workdir: Path) -> dict[str, Any]:
    _stub("datasets", load_dataset=None)
    _stub("requests")
    sqa = importlib.import_module("hemm.data.scienceQA_dataset")
    evaluator = sqa.ScienceQADatasetEvaluator.__new__(sqa.ScienceQADatasetEvaluator)
    evaluator.prompt = importlib.import_module("hemm.prompts.scienceqa_prompt").ScienceQAPrompt()
    evaluator.download_dir = str(workdir)

    class Saved:
        def save(self, f: Any) -> None:
            f.write(b"")

    item = {
        "image": Saved(),
        "question": "Which {x} is a solid?",
        "choices": ["ice {cube}", "water", "steam"],
        "answer": 0,
        "lecture": "Matter has {three} states.",
        "hint": "Look at the 'picture'.",
    }
    evaluator.dataset = [item]

    class Recorder:
        texts: list[str] = []

        def generate(self, text: str, image_path: str) -> str:
            self.texts.append(text)
            return ""

    model = Recorder()
    evaluator.evaluate_dataset(model)
    inputs = {k: v for k, v in item.items() if k != "image"}
    return {"dataset": "hemm-scienceqa", "inputs": inputs, "prompt": model.texts[0]}


def main() -> None:
    """Run HEMM's prompt code and write the cases."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True, help="pliang279/HEMM checkout")
    args = parser.parse_args()
    sys.path.insert(0, str(args.reference))
    commit = subprocess.run(
        ["git", "-C", str(args.reference), "rev-parse", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    cases = []
    for dataset, (module, cls, names) in SINGLE.items():
        prompt = getattr(importlib.import_module(f"hemm.prompts.{module}"), cls)()
        inputs = {name: _value(dataset, name) for name in names}
        cases.append(
            {"dataset": dataset, "inputs": inputs, "prompt": prompt.format_prompt(*inputs.values())}
        )
    cases.append(_vcr_case())
    with tempfile.TemporaryDirectory() as tmp:
        cases.append(_scienceqa_case(Path(tmp)))
    doc = {
        "reference": {
            "repo": "pliang279/HEMM",
            "commit": commit,
            "file": "hemm/prompts/*.py, hemm/data/vcr_dataset.py, hemm/data/scienceQA_dataset.py",
            "function": "<Prompt>.format_prompt, VCRDatasetEvaluator.fix_tokenization, "
            "ScienceQADatasetEvaluator.evaluate_dataset",
        },
        "generator": "tests/parity/generate/hemm_prompts.py",
        "cases": sorted(cases, key=lambda c: c["dataset"]),
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
