"""Run Mantis's own evaluation on the parity inputs; write ``expected.json``.

TIGER-AI-Lab/Mantis ``mantis/benchmark/eval.py`` ``main`` is run as written on ``dataset.json``
(its local-file branch: rows from JSON, images opened from their paths), with a model that
takes the images before the text (``support_multi_image = False``) and replies
``answers.json``'s answer for the ``#tag`` in its text. The model stands in for
``mllm_tools.MLLM_Models`` (which loads real checkpoints) and ``fire`` (only ``__main__`` uses
it) is stubbed; everything else — the prompt (``templates/*.txt``), ``get_prediction``, the
accuracies — is eval.py's. Recorded per id: the text and image files it sent and whether
``get_prediction`` counted the answer correct; and its printed Overall, Multi-choice and
Short-answer accuracies (unrounded, from its results file).

    git clone https://github.com/TIGER-AI-Lab/Mantis /path/to/Mantis
    git -C /path/to/Mantis checkout f3a319202d882a1794d28440b77bba7c58869a9e
    python tests/data/benchmarks/mantis_parity/make_expected.py /path/to/Mantis
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).parent
COMMIT = "f3a319202d882a1794d28440b77bba7c58869a9e"


def main(repo: Path) -> None:
    answers = json.loads((HERE / "answers.json").read_text(encoding="utf-8"))
    sent: dict[str, dict[str, object]] = {}

    class Parity:
        support_multi_image = False

        def __call__(self, messages: list[dict[str, object]]) -> str:
            text = next(str(m["content"]) for m in messages if m["type"] == "text")
            tag = re.search(r"#(\w+)", text)
            assert tag is not None, text
            images = [Path(m["content"].filename).name for m in messages if m["type"] == "image"]  # type: ignore[attr-defined]
            sent[tag.group(1)] = {"text": text, "images": images,
                                  "order": [m["type"] for m in messages]}  # fmt: skip
            return str(answers[tag.group(1)])

    tools = types.ModuleType("mllm_tools")
    tools.MLLM_Models = lambda name: Parity  # type: ignore[attr-defined]
    sys.modules["mllm_tools"] = tools
    sys.modules["fire"] = types.ModuleType("fire")
    spec = importlib.util.spec_from_file_location("mantis_eval", repo / "mantis/benchmark/eval.py")
    assert spec is not None and spec.loader is not None
    evaluate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evaluate)
    with tempfile.TemporaryDirectory() as tmp:
        evaluate.main(model_name="parity", dataset_path=str(HERE / "dataset.json"),
                      dataset_name="mantis_parity", results_dir=tmp, overwrite=True)  # fmt: skip
        results = json.loads(next(Path(tmp).rglob("*.json")).read_text())
    by_id = {}
    for r in results:
        tag = re.search(r"#(\w+)", r["question"]).group(1)  # type: ignore[union-attr]
        by_id[r["id"]] = {"correct": bool(r["prediction"]["correct"]), **sent[tag]}

    def mean(rows: list[dict[str, object]]) -> float:
        return sum(bool(r["prediction"]["correct"]) for r in rows) / len(rows)  # type: ignore[index]

    figures = {
        "Overall": mean(results),
        "multi-choice": mean([r for r in results if r["question_type"] == "multi-choice"]),
        "short-answer": mean([r for r in results if r["question_type"] == "short-answer"]),
    }
    out = {"source": f"TIGER-AI-Lab/Mantis@{COMMIT} mantis/benchmark/eval.py",
           "figures": figures, "rows": by_id}  # fmt: skip
    (HERE / "expected.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
