"""CharXiv's reasoning grading against its released evaluation, run with a scripted judge.

charxiv.json.gz comes from generate_charxiv.py: princeton-nlp/CharXiv's ``src/evaluate.py``
(reasoning mode) and ``src/get_stats.py`` run unmodified on the 1,000 real val reasoning
questions with generated responses and a scripted ``openai`` module. Here each question is read
by the ``charxiv-reasoning`` definition; its prompt to the model, ``charxiv-reasoning-grade``'s
grading prompt and the score read from each reply must be the reference's, and the scores must
give the statistics ``get_stats.py`` wrote.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from tests.data.benchmarks.conftest import tiny_png

from lmmprobe.data.benchmarks import BENCHMARKS, RowContext
from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem
from lmmprobe.schema import Sample, Score

HERE = Path(__file__).parent
PROTOCOL = JUDGE_PROTOCOLS.get("charxiv-reasoning-grade")


@cache
def _doc() -> dict[str, Any]:
    with gzip.open(HERE / "charxiv.json.gz", "rt", encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> list[Sample]:
    """Every case's row read by the definition (a stand-in chart for each figure)."""
    root = tmp_path_factory.mktemp("charxiv")
    (root / "images").mkdir()
    b = BENCHMARKS.get("charxiv-reasoning")
    out = []
    for i, case in enumerate(_doc()["cases"]):
        (root / "images" / f"{case['row']['figure_id']}.jpg").write_bytes(tiny_png((i % 255, 0, 0)))
        ctx = RowContext(benchmark=b, split="val", root=root, where="parity", index=i)
        sample = b.to_sample(case["row"], ctx)
        assert isinstance(sample, Sample)
        out.append(sample)
    return out


def _item(sample: Sample, response: str) -> JudgeItem:
    score = Score(
        model="m", sample_id=sample.id, repeat=0, key="k", stage="unparsed",
        gold=sample.answer, gold_text=str(sample.answer[0]),
    )  # fmt: skip
    return JudgeItem(sample, response.strip(), score)


def _official(score: Any) -> int:
    """``get_stats.py``: a score not in [0, 1] counts 0."""
    return int(score) if score in [0, 1] else 0


def test_the_reference_is_pinned_and_its_judge_settings_are_the_protocols() -> None:
    ref = _doc()["reference"]
    assert ref["repo"] == "princeton-nlp/CharXiv"
    assert ref["commit"] == "7ebe88f78dee387691551f071abcb2b9e1a8025b"
    assert PROTOCOL.version == "princeton-nlp/CharXiv@7ebe88f"
    call = ref["judge_call"]
    assert (call["max_tokens"], call["temperature"], call["top_p"]) == (256, 0, 1)
    assert PROTOCOL.gen.max_new_tokens == 256 and PROTOCOL.gen.temperature == 0.0
    assert len(_doc()["cases"]) == 1000


def test_the_model_is_asked_build_reasoning_queries_question(samples: list[Sample]) -> None:
    differ = [
        s.id
        for s, case in zip(samples, _doc()["cases"], strict=True)
        if s.prompt is None or s.prompt.template.format() != case["question"]
    ]
    assert not differ, differ[:5]


def test_the_grading_prompts_are_the_references_byte_for_byte(samples: list[Sample]) -> None:
    differ = [
        s.id
        for s, case in zip(samples, _doc()["cases"], strict=True)
        if PROTOCOL.prompt(_item(s, case["response"])).user != case["grading_prompt"]
    ]
    assert not differ, differ[:5]


def test_each_reply_is_read_as_the_script_stores_it(samples: list[Sample]) -> None:
    read = unjudged = 0
    for s, case in zip(samples, _doc()["cases"], strict=True):
        reading = PROTOCOL.read(case["reply"], _item(s, case["response"]))
        if case["score"] == -1:
            # The script asked 10 times and stored -1 ("Failed to parse response"): unjudged
            # here, counted 0 in the figure as get_stats.py counts the -1.
            assert case["asked"] == 10 and reading is None, case["reply"]
            unjudged += 1
            continue
        assert case["asked"] == 1
        assert reading is not None, case["reply"]
        assert reading.value == _official(case["score"]), case["reply"]
        assert reading.reading == str(case["extracted_answer"])
        read += 1
    assert (read, unjudged) == (896, 104)


def _stats(samples: list[Sample], values: list[int]) -> dict[str, Any]:
    """get_stats.py's reasoning statistics from per-question scores."""
    groups: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for s, v in zip(samples, values, strict=True):
        m = s.metadata
        for title, key in (("By Answer Type", "answer_type"), ("By Source", "source"),
                           ("By Subject", "subject"), ("By Year", "year"),
                           ("By Subplot", "subplots")):  # fmt: skip
            groups[title][str(m[key])].append(v)
    out: dict[str, Any] = {"Overall Score": round(100 * sum(values) / len(values), 2)}
    for title, by in groups.items():
        out[title] = {k: round(100 * sum(v) / len(v), 2) for k, v in by.items()}
    return out


def test_the_scores_give_get_stats_figures(samples: list[Sample]) -> None:
    values = []
    for s, case in zip(samples, _doc()["cases"], strict=True):
        reading = PROTOCOL.read(case["reply"], _item(s, case["response"]))
        values.append(0 if reading is None else int(reading.value or 0))
    stats = _doc()["stats"]
    mine = _stats(samples, values)
    assert mine["Overall Score"] == stats["Overall Score"]
    for title in ("By Answer Type", "By Source", "By Subject", "By Year", "By Subplot"):
        assert mine[title] == stats[title], title


@pytest.mark.parametrize(
    "reply",
    ["", "{", "[" * 100_000, '{"score": 1}', '{"extracted_answer": "x"}', "x" * 20_000],
)
def test_a_reply_the_script_asks_again_about_is_unreadable(
    reply: str, samples: list[Sample]
) -> None:
    case = _doc()["cases"][0]
    assert PROTOCOL.read(reply, _item(samples[0], case["response"])) is None
