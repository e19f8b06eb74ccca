"""Write MME-RealWorld parity rows and answers, and score them with lmms-eval's own code.

``rows.json`` holds rows in the schema lmms-eval reads (index, question, "multi-choice options",
answer, category, l2-category; the test adds each row's image), with the answer the scripted
model gives. ``expected.json`` is what lmms-eval (EvolvingLMMs-Lab/lmms-eval @
75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3, ``lmms_eval/tasks/mme_realworld/utils.py``) computes:
``mme_realworld_process_results`` on each answer, then ``mme_realworld_aggregate_results`` over
all rows and over each task, subtask and (merged) l2-category's rows. The module is loaded by
path with a stand-in ``loguru`` (its logger is only printed to).

    git -C /path/to/lmms-eval checkout 75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3
    python tests/data/benchmarks/mme_realworld_parity/make_expected.py /path/to/lmms-eval
"""

from __future__ import annotations

import importlib.util
import json
import logging
import random
import sys
import types
from pathlib import Path

HERE = Path(__file__).parent
SUBTASKS = ["Monitoring", "Autonomous_Driving", "OCR with Complex Context", "Diagram and Table",
            "Remote Sensing"]  # fmt: skip
L2 = ["counting/vehicle", "color/attribute/car", "position/person", "Attribute/Motion/Pedestrain",
      "text recognition"]  # fmt: skip
ANSWERS = ["A", "(B)", "The answer is C", "The best answer is D.", "E", "", "a", "b",
           "I cannot tell from this picture whether it is one or another thing at all",
           "Option (C) seems right", "none", "(E) None of the above"]  # fmt: skip


def rows(n: int, seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        task = rng.choice(["Perception", "Reasoning"])
        options = [f"({c}) {rng.randrange(100)} cars" for c in "ABCDE"]
        out.append({
            "index": f"{task[:3]}_{i}",
            "question": f"How many cars are parked on the left? #m{i}",
            "multi-choice options": options,
            "answer": rng.choice("ABCDE"),
            "category": f"{task}/{rng.choice(SUBTASKS)}",
            "l2-category": rng.choice(L2),
            "prediction": rng.choice(ANSWERS) if rng.random() < 0.7 else "ABCDE"[i % 5],
        })  # fmt: skip
    return out


def main(lmms_eval: Path) -> None:
    loguru = types.ModuleType("loguru")
    loguru.logger = logging.getLogger("lmms-eval")  # type: ignore[attr-defined]
    sys.modules["loguru"] = loguru
    path = lmms_eval / "lmms_eval/tasks/mme_realworld/utils.py"
    spec = importlib.util.spec_from_file_location("mme_realworld_utils", path)
    assert spec is not None and spec.loader is not None
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    data = rows(60, seed=6000)
    results = [
        utils.mme_realworld_process_results(r, [r["prediction"]])["mme_realworld_score"]
        for r in data
    ]

    def score(keep: object) -> float:
        return float(utils.mme_realworld_aggregate_results([x for x in results if keep(x)]))  # type: ignore[operator]

    groups: dict[str, dict[str, float]] = {"task": {}, "subtask": {}, "l2_category": {}}
    for key, field in (("task", "category"), ("subtask", "sub_category")):
        for value in sorted({x[field] for x in results}):
            groups[key][value] = score(lambda x, f=field, v=value: x[f] == v)

    def merged(x: dict[str, str]) -> str:  # the aggregation's own grouping of task_category
        c = x["task_category"].lower()
        return c.split("/")[0] + "/attribute" if "attribute" in c else c

    for value in sorted({merged(x) for x in results}):
        groups["l2_category"][value] = score(lambda x, v=value: merged(x) == v)
    expected = {
        "source": "EvolvingLMMs-Lab/lmms-eval@75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3",
        "overall": score(lambda x: True),
        "letters": {str(x["question_id"]): x["pred_answer"] for x in results},
        "first_prompt": utils.mme_realworld_doc_to_text(data[0]),
        "groups": groups,
    }
    (HERE / "rows.json").write_text(json.dumps(data, indent=1) + "\n")
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
