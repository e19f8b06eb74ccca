"""Record what the whole-file readers of ReForm-Eval and Dysca files gave, for the streamed ones.

Run once at commit 8b1e5ec, whose ``lmmprobe.predictions.reform.read_records`` and
``lmmprobe.predictions.dysca._read_list`` read a file whole; the streamed readers that took
their place must give the same result on the same files, to the last digit
(``tests/predictions/test_streamed_files.py``). The files: every ReForm-Eval file of
``tests/parity/data/reform_files.json`` (entries ReForm-Eval's ``metric_eval`` scored), saved as
a JSON list, as JSON Lines and as a ``{"data": [...]}`` wrapper; and every Dysca case of
``tests/parity/data/dysca_compute.json`` (ground truth and model output, captions included:
all-MiniLM-L6-v2 on CPU).

Made with::

    PYTHONPATH=src /work/main/.venv/bin/python tests/predictions/generate/whole_file_readings.py
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from lmmprobe.metrics.embedding import SentenceEmbedder
from lmmprobe.predictions import score_prediction_file
from lmmprobe.predictions.dysca import score_dysca_files

ROOT = Path(__file__).resolve().parents[3]
PARITY = ROOT / "tests" / "parity" / "data"
OUT = ROOT / "tests" / "predictions" / "data" / "whole_file_readings.json"
FORMULATIONS = {"SingleChoice": "single_choice", "OCROpenEnded": "ocr", "KIEOpenEnded": "kie"}
LAYOUTS = ("json", "jsonl", "wrapped")


def write(path: Path, entries: list[Any], layout: str) -> None:
    """`entries` as a JSON list, JSON Lines or a ``{"data": [...]}`` object."""
    if layout == "jsonl":
        text = "".join(json.dumps(e) + "\n" for e in entries)
    elif layout == "wrapped":
        text = json.dumps({"data": entries}, indent=1)
    else:
        text = json.dumps(entries, indent=1)
    path.write_text(text, encoding="utf-8")


def main() -> None:
    """Score every file with the readers of this checkout and write their results."""
    reform = json.loads((PARITY / "reform_files.json").read_text(encoding="utf-8"))
    dysca = json.loads((PARITY / "dysca_compute.json").read_text(encoding="utf-8"))
    embedder = SentenceEmbedder(device="cpu")
    results: dict[str, Any] = {"reform": [], "dysca": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for case in reform["cases"]:
            inp = case["input"]
            formulation = FORMULATIONS[inp["formulation"]]
            for layout in LAYOUTS:
                path = folder / f"pred.{layout}"
                write(path, inp["entries"], layout)
                got = score_prediction_file(path, formulation, inp["infer_method"])
                results["reform"].append({"name": inp["name"], "layout": layout, "result": got})
        for n, case in enumerate(dysca["cases"]):
            truth, output = folder / "gt.json", folder / "out.json"
            write(truth, case["input"]["ground_truth"], "json")
            write(output, case["input"]["output"], "json")
            got = score_dysca_files(output, truth, embedder=embedder)
            results["dysca"].append({"case": n, "result": got})
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    document = {"made_at": head, "generator": "tests/predictions/generate/whole_file_readings.py"}
    OUT.write_text(json.dumps(document | results, indent=1) + "\n", encoding="utf-8")
    print(f"{len(results['reform'])} ReForm-Eval files, {len(results['dysca'])} Dysca cases")


if __name__ == "__main__":
    main()
