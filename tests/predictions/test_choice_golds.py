"""A choice gold is an option's letter or its text by what the tool records, not by its shape.

VLMEvalKit's ``answer`` is the option's letter; lmms-eval's ai2d target is the option's text for
its ``qa`` prompt format (``lmms_eval/tasks/ai2d/utils.py``), and AI2D has options that are
single letters (a diagram's labels). Second review of issue 27, finding 3.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Value
from datasets import Sequence as Seq
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import (  # noqa: F401 (a fixture)
    own_datasets_cache,
    tiny_png,
    write_hub_snapshot,
)

from lmmprobe.predictions.imported import READERS, ReadOptions

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

VLMEVALKIT = Path(__file__).parent / "fixtures" / "vlmevalkit"


def _ai2d(tmp_path: Path) -> str:
    rows = {
        "question": ["Which label marks the sun?", "Which label is the leaf?", "What is ice?"],
        "options": [["D", "A", "C", "B"], ["B", "A"], ["cold", "hot"]],
        "answer": ["1", "0", "0"],
        "image": [{"bytes": tiny_png(), "path": f"{i}.png"} for i in range(3)],
    }
    feats = Features(
        {
            "question": Value("string"),
            "options": Seq(Value("string")),
            "answer": Value("string"),
            "image": Image(),
        }
    )
    folder = write_hub_snapshot(
        tmp_path / "ai2d", {"test": Dataset.from_dict(rows, features=feats)}
    )
    return f"ai2d,path={folder}"


def test_a_single_letter_option_text_gold_is_that_text_not_a_letter(tmp_path: Path) -> None:
    # lmms-eval's ai2d (qa format) writes the option's text as the target: item 0's gold is
    # option "A" (the second option), item 1's option "B" (the first), as the local key has it.
    log = tmp_path / "20261127_000000_samples_ai2d.jsonl"
    lines = [
        {"doc_id": 0, "target": "A", "filtered_resps": ["A"], "exact_match": 1.0, "input": "q"},
        {"doc_id": 1, "target": "B", "filtered_resps": ["B"], "exact_match": 1.0, "input": "q"},
        {"doc_id": 2, "target": "cold", "filtered_resps": ["cold"], "exact_match": 1.0},
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = lmmprobe(
        "score", log, "--benchmark", _ai2d(tmp_path), "--audit", "--format", "json",
        HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "cli-datasets-cache"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    assert "gold" not in doc["audit"]["causes"], doc["audit"]["causes"]
    assert not [n for n in doc["notes"] if "gold" in n], doc["notes"]
    # What is left is lmmprobe reading the reply "A" as option A's letter, lmms-eval comparing
    # texts: a reading, not a gold, and the causes add up to the gap.
    causes = doc["audit"]["causes"]
    assert sum(c["net_items"] for c in causes.values()) == pytest.approx(doc["audit"]["gap_items"])
    assert set(causes) == {"unrecorded"}


def test_vlmevalkit_says_its_golds_are_letters() -> None:
    table = VLMEVALKIT / "Model_MMBench_DEV_EN_openai_vanilla_all_result.xlsx"
    preds = list(READERS.get("vlmevalkit").read(table, ReadOptions()))
    assert preds and {p.gold_names for p in preds} == {"letter"}
