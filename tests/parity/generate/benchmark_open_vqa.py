"""Regenerate tests/parity/data/benchmark_open_vqa.json by running the official VQA evaluation.

The reference is ``VQAEval.evaluate`` of ``PythonEvaluationTools/vqaEvaluation/vqaEval.py``
(GT-Vision-Lab/VQA), a Python 2 program. This script writes the annotation, question and result
files in the VQA formats, then runs a small Python 2.7 driver that loads them with the
repository's own ``VQA`` helper and ``VQAEval``, and records each question's accuracy as
``evaluate`` computes it (``avgGTAcc``, captured where ``evaluate`` hands it to ``setEvalQA``,
before that rounds it to two decimals of a percentage).

Run it with a Python 2.7 interpreter available and a checkout of the repository::

    git clone https://github.com/GT-Vision-Lab/VQA /tmp/VQA   # or extract the fetched mirror
    .venv/bin/python tests/parity/generate/benchmark_open_vqa.py --reference /tmp/VQA \\
        --python2 "env PYENV_VERSION=2.7.18 python2"

Inputs come from `benchmark_open_cases` (seeded): unanimous, near-unanimous and scattered
answer sets of 10 with punctuation, number words, articles, contractions, possessives and
whitespace variants, and predictions written the same ways. Texts are ASCII or Latin-1 letters
(non-ASCII digits would show Python 2's ASCII ``\\d``, which lmmprobe, in Python 3, does not
reproduce).
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import subprocess
import tempfile
from pathlib import Path

from benchmark_open_cases import annotators, dump, prediction

SEED = 20261124
N_CASES = 3000
DATA = Path(__file__).resolve().parents[1] / "data" / "benchmark_open_vqa.json"
COMMIT = "a013f0043c1e2cdc995922dfe257f7149aa9af06"

DRIVER = """
import json, sys
sys.path.insert(0, sys.argv[1] + '/PythonHelperTools')
sys.path.insert(0, sys.argv[1] + '/PythonEvaluationTools')
from vqaTools.vqa import VQA
from vqaEvaluation.vqaEval import VQAEval

class Capture(VQAEval):
    def setEvalQA(self, quesId, acc):
        self.raw[quesId] = acc

vqa = VQA(sys.argv[2], sys.argv[3])
res = vqa.loadRes(sys.argv[4], sys.argv[3])
ev = Capture(vqa, res, n=2)
ev.raw = {}
ev.evaluate()
json.dump(dict((str(k), repr(v)) for k, v in ev.raw.items()), open(sys.argv[5], 'w'))
"""


def run_reference(reference: Path, python2: str, cases: list[dict[str, object]]) -> list[float]:
    meta = {"info": {}, "task_type": "Open-Ended", "data_type": "mscoco",
            "data_subtype": "val2014", "license": {}}  # fmt: skip
    annotations, questions, results = [], [], []
    for i, case in enumerate(cases):
        answers = case["answers"]
        assert isinstance(answers, list)
        annotations.append(
            {
                "question_id": i,
                "image_id": i,
                "question_type": "what",
                "answer_type": "other",
                "multiple_choice_answer": answers[0],
                "answers": [
                    {"answer": a, "answer_confidence": "yes", "answer_id": j + 1}
                    for j, a in enumerate(answers)
                ],
            }
        )
        questions.append({"question_id": i, "image_id": i, "question": "q?"})
        results.append({"question_id": i, "answer": case["prediction"]})
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = {name: folder / f"{name}.json" for name in ("ann", "ques", "res", "out")}
        files["ann"].write_text(json.dumps({**meta, "annotations": annotations}), encoding="utf-8")
        files["ques"].write_text(json.dumps({**meta, "questions": questions}), encoding="utf-8")
        files["res"].write_text(json.dumps(results), encoding="utf-8")
        driver = folder / "driver.py"
        driver.write_text(DRIVER, encoding="utf-8")
        args = [str(reference), *(str(files[k]) for k in ("ann", "ques", "res", "out"))]
        subprocess.run(
            [*shlex.split(python2), str(driver), *args], check=True, stdout=subprocess.DEVNULL
        )
        raw = json.loads(files["out"].read_text(encoding="utf-8"))
    return [float(raw[str(i)]) for i in range(len(cases))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=Path("/tmp/VQA"))
    parser.add_argument("--python2", default="env PYENV_VERSION=2.7.18 python2")
    parser.add_argument("--out", type=Path, default=DATA)
    args = parser.parse_args()
    rng = random.Random(SEED)
    cases: list[dict[str, object]] = []
    for _ in range(N_CASES):
        answers = annotators(rng)
        cases.append({"prediction": prediction(rng, answers), "answers": answers})
    expected = run_reference(args.reference, args.python2, cases)
    payload = {
        "reference": {
            "repo": "GT-Vision-Lab/VQA",
            "commit": COMMIT,
            "file": "PythonEvaluationTools/vqaEvaluation/vqaEval.py",
            "function": "VQAEval.evaluate (per-question avgGTAcc)",
        },
        "generator": "tests/parity/generate/benchmark_open_vqa.py",
        "seed": SEED,
        "cases": [{"input": c, "expected": e} for c, e in zip(cases, expected, strict=True)],
    }
    args.out.write_text(dump(payload), encoding="utf-8")
    print(f"{len(cases)} cases -> {args.out}")


if __name__ == "__main__":
    main()
