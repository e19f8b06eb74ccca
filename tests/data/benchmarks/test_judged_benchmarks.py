"""MM-Vet and LLaVA-Bench (In-the-Wild) load by name from fixtures in their published schemas.

Each fixture has the columns lmms-eval's task reads (its yaml and utils.py at the commit the
definitions cite) in the Hub's file layout, and is read back through ``--data NAME,path=FOLDER``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Sequence, Value
from tests.data.benchmarks.conftest import tiny_png, write_hub_snapshot

from lmmprobe.data import DataError, load_source
from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem
from lmmprobe.schema import Score

pytestmark = pytest.mark.usefixtures("own_datasets_cache")
STR = Value("string")


def _img(i: int) -> dict[str, Any]:
    return {"bytes": tiny_png((40 * i % 255, 90, 120)), "path": f"{i}.png"}


def _mmvet(tmp_path: Path, capability: list[Any]) -> Path:
    rows = {
        "question_id": ["v1_0", "v1_1"],
        "image": [_img(0), _img(1)],
        "question": ["What is x in the equation?", "Can you explain this meme?"],
        "answer": ["-1<AND>-5", "It pokes fun at Iceland and Greenland."],
        "image_source": ["source0", "source1"],
        "capability": capability,
    }
    feats = Features({"question_id": STR, "image": Image(), "question": STR, "answer": STR,
                      "image_source": STR, "capability": Sequence(STR)})  # fmt: skip
    return write_hub_snapshot(tmp_path / "mmvet", {"test": Dataset.from_dict(rows, features=feats)})


def _item(sample: Any, answer: str) -> JudgeItem:
    score = Score(model="m", sample_id=sample.id, repeat=0, key="k", stage="match",
                  gold=sample.answer, gold_text=sample.answer[0])  # fmt: skip
    return JudgeItem(sample=sample, answer=answer, score=score)


def test_mmvet_rows_become_samples_the_grader_prompts_about(tmp_path: Path) -> None:
    folder = _mmvet(tmp_path, [["math", "ocr"], ["rec", "know", "gen"]])
    samples = load_source(f"mmvet,path={folder}", strict=True).samples
    assert [s.id for s in samples] == ["mmvet/v1_0", "mmvet/v1_1"]
    first = samples[0]
    assert first.answer == ["-1<AND>-5"] and first.metadata["capability"] == ["math", "ocr"]
    assert first.benchmark is not None and first.benchmark.metric == "mmvet_score"
    prompt = JUDGE_PROTOCOLS.get("mmvet-grade").prompt(_item(first, "x = -1"))
    # The last table row, as mm-vet_evaluator.py writes it: <AND> spaced out, the grade empty.
    assert prompt.user.endswith("\nWhat is x in the equation? | -1 <AND> -5 | x = -1 | ")


def test_mmvet_row_without_capabilities_is_named(tmp_path: Path) -> None:
    folder = _mmvet(tmp_path, [["math"], []])
    with pytest.raises(DataError, match="capability"):
        load_source(f"mmvet,path={folder}", strict=True)


def _llava(tmp_path: Path, category: str = "conv") -> Path:
    rows = {
        "question_id": [0, 1],
        "question": ["What is the name of this dish?", "Describe the photo in detail."],
        "image": [_img(0), _img(1)],
        "caption": ["A bowl of ramen.", "A street at night."],
        "gpt_answer": ["It is ramen.", "A busy street lit by neon signs."],
        "category": [category, "detail"],
        "image_id": ["001", "002"],
    }
    feats = Features({"question_id": Value("int8"), "question": STR, "image": Image(),
                      "caption": STR, "gpt_answer": STR, "category": STR, "image_id": STR})  # fmt: skip
    return write_hub_snapshot(
        tmp_path / "llava-wild", {"train": Dataset.from_dict(rows, features=feats)}
    )


def test_llava_wild_rows_become_samples_the_review_prompts_about(tmp_path: Path) -> None:
    samples = load_source(f"llava-wild,path={_llava(tmp_path)}", strict=True).samples
    first = samples[0]
    assert first.answer == ["It is ramen."] and first.metadata["category"] == "conv"
    prompt = JUDGE_PROTOCOLS.get("llava-wild-review").prompt(_item(first, "Ramen."))
    assert prompt.user.startswith(
        "[Context]\nA bowl of ramen.\n\n[Question]\nWhat is the name of this dish?\n\n"
        "[Assistant 1]\nIt is ramen.\n\n[End of Assistant 1]\n\n[Assistant 2]\nRamen.\n\n"
    )
    assert prompt.system is not None and prompt.system.startswith("You are a helpful")


def test_llava_wild_unknown_category_is_named(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="category"):
        load_source(f"llava-wild,path={_llava(tmp_path, 'chat')}", strict=True)
