"""Regenerate tests/data/benchmarks/fixtures/dysca/compute_expected.json with Dysca's own scorer.

The reference is ``DyscaDataset.calculate_result`` of ``evaluate_LVLMs/Dysca_compute.py``
(Robin-WZQ/Dysca @ ac202cb), imported from the checkout (``--reference``) and run on CPU as
tests/parity/generate/dysca.py runs it (its `load_reference`, `make_dataset`, `cpu_model`).
The inputs are what tests/data/benchmarks/test_dysca.py's
``test_dysca_figures_equal_dysca_compute_on_the_same_answers`` writes: the ground truth
(``gt.json``: Dysca's own generator output, the askable entries, multiple-choice instructions
with the README's ``Choices:`` line) and the answers the fake server gave (``output.json``).
Recorded: the answers, ``calculate_result(None)`` and ``calculate_result(qm)`` for the 21
majorities of ``__main__``.

Run (``Levenshtein`` is the reference's one extra import)::

    python tests/parity/generate/dysca_released.py --reference /path/to/Dysca \\
        --ground-truth gt.json --output output.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dysca import MAJORITIES, cpu_model, load_reference, make_dataset

TARGET = (
    Path(__file__).resolve().parents[2]
    / "data"
    / "benchmarks"
    / "fixtures"
    / "dysca"
    / "compute_expected.json"
)


def main() -> None:
    """Run the reference on the two files and write the expected figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reference", type=Path, required=True, help="Dysca checkout")
    parser.add_argument("--ground-truth", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    module = load_reference(args.reference)
    dataset = make_dataset(module, cpu_model())
    dataset.data = json.loads(args.ground_truth.read_text(encoding="utf-8"))
    dataset.num_samples = len(dataset.data)
    overall = dataset.calculate_result(str(args.output), None)[0]
    by_majority = {qm: dataset.calculate_result(str(args.output), qm)[0] for qm in MAJORITIES}
    answers = [e["answer"] for e in json.loads(args.output.read_text(encoding="utf-8"))]
    doc = {
        "reference": "Robin-WZQ/Dysca @ ac202cbfa09c52cdb994dbc1683e144ebaabceaf "
        "evaluate_LVLMs/Dysca_compute.py DyscaDataset.calculate_result (CPU)",
        "answers": answers,
        "overall": overall,
        "by_question_majority": by_majority,
    }
    TARGET.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
