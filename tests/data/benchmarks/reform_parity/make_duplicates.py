"""ReForm-Eval duplication parity fixtures: what ReForm-Eval's classes ask on each duplicate.

``write_wide_clone(ROOT)`` writes the clone of ``make_expected.py`` with every item's list of
question wordings (VSR, MP3D, the OCR sets) five long, as ReForm-Eval needs for five duplicates
(its classes assert ``duplication % len(wordings) == 0``). Run as a script with a checkout of
ReForm-Eval, it loads every dataset through ``build.load_reform_dataset`` with
``data_duplication=5``, ``random_instruct=True``, ``shuffle_options=True`` (the README's
``load_reform_dataset`` example), offline from the clone, once with
``inference_method="generation"`` and once with ``"likelihood"`` (single-choice sets), and writes
``duplicates.json``: per dataset and method, per item of the duplicated dataset in order, its
id, instruct, question, options and gold option text::

    git -C /path/to/ReForm-Eval checkout df1cfa7bf15f89591fc2c0e0f654c84d2cbf44bb
    python tests/data/benchmarks/reform_parity/make_duplicates.py /path/to/ReForm-Eval

The option orders come from ReForm-Eval's unseeded ``random.shuffle`` (seeded with
``random.seed(0)`` here only so the file is stable); the test compares them as multisets with
the gold text. ``load_reform_dataset`` leaves ``answer_space_instruct`` unset, which CLEVR's
class reads under likelihood: it is set to ``run_eval.py``'s default (False).
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
DUPLICATES = HERE / "duplicates.json"
sys.path.insert(0, str(HERE))
from make_expected import _Proc, write_clone  # noqa: E402


def write_wide_clone(root: Path) -> None:
    """`write_clone`, with each item's list of question wordings made five long."""
    write_clone(root)
    for path in sorted(root.rglob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        items = doc.get("data") if isinstance(doc, dict) else doc
        if not isinstance(items, list):
            continue
        wide = False
        for item in items:
            for key in ("question", "questions"):
                if isinstance(item, dict) and isinstance(item.get(key), list):
                    base = item[key]
                    more = [f"{base[0]} (wording {j})" for j in range(len(base), 5)]
                    item[key] = [*base, *more]
                    wide = True
        if wide:
            path.write_text(json.dumps(doc, indent=1), encoding="utf-8")


def _run_reform(reform: Path, clone: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    sys.path.insert(0, str(reform))
    sys.path.insert(0, str(HERE.parents[3] / "src"))
    import yaml
    from build import load_reform_dataset  # type: ignore[import-not-found]

    from lmmprobe.data.benchmarks import BENCHMARKS
    from lmmprobe.data.benchmarks.reform_common import SETS

    work = Path(tempfile.mkdtemp())
    (work / "ReForm-Eval-Data").symlink_to(clone)
    os.chdir(work)  # the configs name ReForm-Eval-Data/huggingface_data/... relative paths
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name in BENCHMARKS.get("reform-eval").members:
        spec = SETS[name]
        config = reform / spec.config
        if spec.family == "dialogue":  # as make_expected.py: empty stand-ins for raw images
            cfg = yaml.safe_load(config.read_text())
            images = work / "images" / name
            images.mkdir(parents=True)
            cfg["data_config"]["image_path"] = str(images)
            for f in ("COCO_val2014_000000000007.jpg", "VisualDialog_val2018_000000000007.jpg"):
                (images / f).touch()
            config = work / f"{name}.yaml"
            config.write_text(yaml.safe_dump(cfg))
        per: dict[str, list[dict[str, Any]]] = {}
        for method in ("generation", "likelihood"):
            if method == "likelihood" and spec.formulation != "SingleChoice":
                continue
            random.seed(0)
            ds = load_reform_dataset(
                spec.loader, spec.formulation, dataset_config=str(config),
                inference_method=method, in_context_sample=False, random_instruct=True,
                data_duplication=5, shuffle_options=True, load_from_hf=False,
                offline_from_hf=True, option_mark="upper", online_multi_round=False,
                preprocessor=_Proc(),
            )  # fmt: skip
            if not hasattr(ds.args, "answer_space_instruct"):
                ds.args.answer_space_instruct = False
            rows = []
            for i in range(len(ds)):
                item = ds[i]
                options = item.get("answer_options")
                gold = options[int(item["answer"])] if options is not None else None
                rows.append({
                    "id": str(item["sample_id"]), "instruct": item.get("instruct"),
                    "question": item["question"], "options": options, "gold": gold,
                })  # fmt: skip
            per[method] = rows
        out[name] = per
    return out


def main() -> None:
    """Write the wide clone to a temporary folder, run ReForm-Eval on it, write the fixture."""
    reform = Path(sys.argv[1]).resolve()
    clone = Path(tempfile.mkdtemp()) / "ReForm-Eval-Data"
    write_wide_clone(clone)
    found = _run_reform(reform, clone)
    DUPLICATES.write_text(json.dumps(found, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{sum(len(r) for m in found.values() for r in m.values())} duplicates of {len(found)}")


if __name__ == "__main__":
    main()
