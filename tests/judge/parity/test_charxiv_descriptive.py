"""CharXiv's descriptive grading against its released evaluation, run with a scripted judge.

charxiv_descriptive.json.gz comes from generate_charxiv_descriptive.py: princeton-nlp/CharXiv's
``src/evaluate.py`` (descriptive mode) and ``src/get_stats.py`` run unmodified on the 4,000 real
val descriptive questions with generated responses and a scripted ``openai`` module. Here each
question is read by the ``charxiv-descriptive`` definition; its prompt to the model must be the
reference's; the judging step's groups (`group_asks`, over the answers in the data's order)
must be the reference's grading prompts, each one's answers in its order and its prompt byte for
byte; each reply must be read into the scores the script stored; and the scores must give the
statistics ``get_stats.py`` wrote.
"""

from __future__ import annotations

import gzip
import json
import random
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.data.benchmarks.conftest import tiny_png

from lmmprobe.data.benchmarks import BENCHMARKS, RowContext
from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, grouped
from lmmprobe.judge.step import _Ask, group_asks
from lmmprobe.schema import Sample, Score

HERE = Path(__file__).parent
PROTOCOL = grouped(JUDGE_PROTOCOLS.get("charxiv-descriptive-grade"))
assert PROTOCOL is not None


@cache
def _doc() -> dict[str, Any]:
    with gzip.open(HERE / "charxiv_descriptive.json.gz", "rt", encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> list[Sample]:
    """Every question's row read by the definition (a stand-in chart for each figure)."""
    root = tmp_path_factory.mktemp("charxiv")
    (root / "images").mkdir()
    b = BENCHMARKS.get("charxiv-descriptive")
    out = []
    for i, case in enumerate(_doc()["cases"]):
        chart = root / "images" / f"{case['row']['figure_id']}.jpg"
        if not chart.exists():
            chart.write_bytes(tiny_png((i % 255, 0, 0)))
        ctx = RowContext(benchmark=b, split="val", root=root, where="parity", index=i)
        sample = b.to_sample(case["row"], ctx)
        assert isinstance(sample, Sample)
        out.append(sample)
    return out


def _ask(sample: Sample, response: str, repeat: int = 0) -> _Ask:
    score = Score(
        model="m", sample_id=sample.id, repeat=repeat, key="k", stage="unparsed",
        gold=sample.answer, gold_text=str(sample.answer[0]),
    )  # fmt: skip
    assert PROTOCOL is not None
    return _Ask(score, JudgeItem(sample, response.strip(), score), PROTOCOL, 0)


@pytest.fixture(scope="module")
def asks(samples: list[Sample]) -> list[_Ask]:
    return [_ask(s, case["response"]) for s, case in zip(samples, _doc()["cases"], strict=True)]


def test_the_reference_is_pinned_and_its_judge_settings_are_the_protocols() -> None:
    ref = _doc()["reference"]
    assert ref["repo"] == "princeton-nlp/CharXiv"
    assert ref["commit"] == "7ebe88f78dee387691551f071abcb2b9e1a8025b"
    assert PROTOCOL.version == "princeton-nlp/CharXiv@7ebe88f"
    call = ref["judge_call"]
    assert (call["max_tokens"], call["temperature"], call["top_p"]) == (256, 0, 1)
    assert PROTOCOL.gen.max_new_tokens == 256 and PROTOCOL.gen.temperature == 0.0
    assert PROTOCOL.batch == 5
    assert len(_doc()["cases"]) == 4000


def test_the_model_is_asked_build_descriptive_quries_question(samples: list[Sample]) -> None:
    differ = [
        s.id
        for s, case in zip(samples, _doc()["cases"], strict=True)
        if s.prompt is None or s.prompt.template.format() != case["question"]
    ]
    assert not differ, differ[:5]
    assert [s.id for s in samples[:3]] == ["0_0", "0_1", "0_2"]


def test_the_groups_are_the_references_whatever_order_the_answers_come_in(
    asks: list[_Ask],
) -> None:
    # The step knows each answer's place in the data; the store gives rows by sample id.
    placed = list(enumerate(asks))
    random.Random(0).shuffle(placed)
    groups = group_asks(placed)
    reference = _doc()["groups"]
    assert sorted(tuple(a.score.sample_id for a in g.asks) for g in groups) == sorted(
        tuple(g["keys"]) for g in reference
    )
    assert len(groups) == 807


def test_every_grading_prompt_is_the_references_byte_for_byte(asks: list[_Ask]) -> None:
    prompts = {
        tuple(a.score.sample_id for a in g.asks): PROTOCOL.prompt_group([a.item for a in g.asks])
        for g in group_asks(enumerate(asks))
    }
    differ = [g["keys"] for g in _doc()["groups"] if prompts[tuple(g["keys"])].user != g["prompt"]]
    assert not differ, differ[:3]


def test_each_reply_is_read_as_the_script_stores_it(asks: list[_Ask]) -> None:
    by_id = {a.score.sample_id: a for a in asks}
    cases = {f"{c['row']['figure_id']}_{c['row']['index']}": c for c in _doc()["cases"]}
    read = refused = 0
    for group in _doc()["groups"]:
        readings = PROTOCOL.read_group(group["reply"], [by_id[k].item for k in group["keys"]])
        assert len(readings) == len(group["keys"])
        for key, reading in zip(group["keys"], readings, strict=True):
            case = cases[key]
            if case["score"] == -1:
                # Refused whole: asked 10 times (3 for a cut-off string), -1 for each answer.
                assert group["asked"] in (3, 10) and reading is None, group["reply"]
                refused += 1
                continue
            assert group["asked"] == 1
            assert reading is not None, group["reply"]
            assert reading.value == case["score"], group["reply"]
            assert reading.reading == str(case["extracted_answer"])
            read += 1
    assert read + refused == 4000
    assert refused == _doc()["stats"]["N_invalid"] == 1002


def _stats(samples: list[Sample], values: list[int]) -> dict[str, Any]:
    """get_stats.py's descriptive statistics from per-question scores."""
    groups: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for s, v in zip(samples, values, strict=True):
        m = s.metadata
        for title, key in (("By Question", "template"), ("By Category", "question_type"),
                           ("By Subject", "subject"), ("By Year", "year"),
                           ("By Subplot", "subplots")):  # fmt: skip
            groups[title][str(m[key])].append(v)
    out: dict[str, Any] = {"Overall Score": round(100 * sum(values) / len(values), 2)}
    for title, by in groups.items():
        out[title] = {k: round(100 * sum(v) / len(v), 2) for k, v in by.items()}
    return out


def test_the_scores_give_get_stats_figures(samples: list[Sample], asks: list[_Ask]) -> None:
    value: dict[str, int] = {}
    for g in group_asks(enumerate(asks)):
        reply = next(
            r["reply"] for r in _doc()["groups"] if r["keys"][0] == g.asks[0].score.sample_id
        )
        readings = PROTOCOL.read_group(reply, [a.item for a in g.asks])
        for a, reading in zip(g.asks, readings, strict=True):
            value[a.score.sample_id] = 0 if reading is None else int(reading.value or 0)
    stats = _doc()["stats"]
    mine = _stats(samples, [value[s.id] for s in samples])
    assert mine["Overall Score"] == stats["Overall Score"] == 46.15
    for title in ("By Question", "By Category", "By Subject", "By Year", "By Subplot"):
        assert mine[title] == stats[title], title


def test_repeats_are_grouped_apart(asks: list[_Ask], samples: list[Sample]) -> None:
    again = [_ask(s, "x") for s in samples[:8]] + [_ask(s, "y", repeat=1) for s in samples[:8]]
    groups = group_asks(enumerate(again))
    assert all(len({a.score.repeat for a in g.asks}) == 1 for g in groups)
    assert sum(len(g.asks) for g in groups) == 16


@pytest.mark.parametrize(
    "reply",
    [
        "", "{", "[" * 100_000, "{" * 50_000 + "}" * 50_000, "x" * 20_000, "null", '"score_T1"',
        '{"extract_answer_T1": "a"}', '{"score_T1": 1}', '{"extract_answer_T1": "a", "score_T1": 2}',
        '{"extract_answer_T1": "a", "score_T1": "1"}', '{"extract_answer_T1": 1, "score_T1": ' + "9" * 5000 + "}",
    ],
)  # fmt: skip
def test_a_reply_the_script_asks_again_about_is_refused(reply: str, asks: list[_Ask]) -> None:
    assert PROTOCOL.read_group(reply, [asks[0].item]) == [None]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000))
def test_any_reply_is_read_or_refused_whole(reply: str) -> None:
    item = _ask(
        Sample(id="0_0", question="q", answer=["a"], metadata={"qid": 1}, formulation="open_ended"),
        "a",
    ).item
    readings = PROTOCOL.read_group(reply, [item, item])
    assert len(readings) == 2
    assert all(r is None for r in readings) or all(r is not None for r in readings)
