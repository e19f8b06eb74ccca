"""MathVerse's two-stage judge against its released evaluation scripts, run with a scripted judge.

mathverse.json comes from generate_mathverse.py: ZrrSkywalker/MathVerse's
``extract_answer_s1.py`` and ``score_answer_s2.py`` run unmodified on 60 generated rows (the
five problem versions) with a scripted ``openai`` module. Here each row is read by the
``mathverse`` definition, and ``mathverse-judge`` must send the same two prompts byte for byte,
read the same extraction and judgement from the same replies, and the judgements must give the
figures the script printed.
"""

from __future__ import annotations

import json
import subprocess
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.data.benchmarks import BENCHMARKS, RowContext
from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem
from lmmprobe.judge.protocols.mathverse_judge import EXTRACT_PROMPT, SCORE_PROMPT
from lmmprobe.schema import Sample, Score

HERE = Path(__file__).parent
PROTOCOL = JUDGE_PROTOCOLS.get("mathverse-judge")


@cache
def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((HERE / "mathverse.json").read_text(encoding="utf-8"))
    return doc


def _sample(case: dict[str, Any], index: int) -> Sample:
    b = BENCHMARKS.get("mathverse")
    row = dict(case["row"], image=None)  # the prompts never quote the image
    ctx = RowContext(benchmark=b, split="testmini", root=None, where="parity", index=index)
    sample = b.to_sample(row, ctx)
    assert isinstance(sample, Sample)
    return sample


def _item(
    case: dict[str, Any], index: int, stage: int = 0, earlier: tuple[str, ...] = ()
) -> JudgeItem:
    sample = _sample(case, index)
    score = Score(
        model="m", sample_id=sample.id, repeat=0, key="k", stage="unparsed",
        gold=sample.answer, gold_text=case["row"]["answer"],
    )  # fmt: skip
    # extract_answer_s1.py quotes model_answer as the output file holds it; lmmprobe the
    # answer stripped (the generated responses have no surrounding whitespace).
    return JudgeItem(sample, case["response"].strip(), score, stage=stage, earlier=earlier)


def test_the_reference_is_pinned_and_its_judge_settings_are_the_protocols() -> None:
    ref = _doc()["reference"]
    assert ref["repo"] == "ZrrSkywalker/MathVerse"
    assert ref["commit"] == "937b090597aeafb8e82b35d310a4bc5b9e2ea29d"
    assert PROTOCOL.version == "ZrrSkywalker/MathVerse@937b090"
    assert ref["judge_call"] == {"model": "gpt-3.5-turbo", "temperature": 0, "max_tokens": 256}
    assert PROTOCOL.gen.temperature == 0.0 and PROTOCOL.gen.max_new_tokens == 256
    assert len(_doc()["cases"]) == 60


def test_the_prompts_are_the_released_ones_as_python_reads_them() -> None:
    mirror = Path("/work/.mirror/ZrrSkywalker+MathVerse/repo")
    if not mirror.exists():
        pytest.skip("no MathVerse mirror here; the prompts sent are compared below")
    text = subprocess.run(
        ["git", "--git-dir", str(mirror), "show",
         f"{_doc()['reference']['commit']}:evaluation/prompts.py"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    namespace: dict[str, Any] = {}
    exec(compile(text, "prompts.py", "exec"), namespace)  # the reference's own literals
    assert namespace["demo_prompt_extract"] == EXTRACT_PROMPT
    assert namespace["demo_prompt_score"] == SCORE_PROMPT


@pytest.mark.parametrize("index", range(60))
def test_both_stages_send_and_read_as_the_scripts(index: int) -> None:
    case = _doc()["cases"][index]
    first = _item(case, index)
    assert PROTOCOL.rule(first) is None  # the extraction is always the judge's
    assert PROTOCOL.prompt(first).user == case["extract_prompt"]
    extraction = PROTOCOL.read(case["extract_reply"], first)
    assert extraction is not None and extraction.reading == case["extraction"]
    second = _item(case, index, stage=1, earlier=(case["extraction"],))
    assert PROTOCOL.prompt(second).user == case["score_prompt"]
    verdict = PROTOCOL.read(case["score_reply"], second)
    assert verdict is not None and verdict.value == float(case["judgement"])
    assert verdict.reading == case["extraction"]
    # --judge-when miss: the scoring stage's rule is quick_match's 1, and only its 1.
    ruled = PROTOCOL.rule(second)
    assert (ruled is not None) == (case["quick_judgement"] == 1)


def _figures(judgements: list[int]) -> dict[str, str]:
    """score_answer_s2.py's printed figures, from judgements in the cases' order."""
    groups: dict[str, list[int]] = defaultdict(list)
    for case, j in zip(_doc()["cases"], judgements, strict=True):
        row = case["row"]
        subject, subfield = row["metadata"]["subject"], row["metadata"]["subfield"]
        for key in (f"{subject}-{subfield}", subject, "Total", row["problem_version"], "overall"):
            groups[key].append(j)
    return {k: f"{sum(v) / len(v):.3f}" for k, v in groups.items()}


def test_the_judgements_give_the_figures_the_script_printed() -> None:
    cases = _doc()["cases"]
    judged = []
    for i, case in enumerate(cases):
        second = _item(case, i, stage=1, earlier=(case["extraction"],))
        verdict = PROTOCOL.read(case["score_reply"], second)
        assert verdict is not None and verdict.value is not None
        judged.append(int(verdict.value))
    assert _figures(judged) == _doc()["figures"]
    assert _figures([c["quick_judgement"] for c in cases]) == _doc()["quick_figures"]


@pytest.mark.parametrize(
    ("stage", "reply"),
    [(0, ""), (0, "   \n"), (1, "2"), (1, "yes"), (1, ""), (1, "Judgement: 1 because"), (1, "01")],
)
def test_a_reply_the_scripts_would_ask_again_about_is_unreadable(stage: int, reply: str) -> None:
    # get_chat_response asks again while the reply is empty; score_answer_s2.py while the
    # judgement is not 0 or 1: lmmprobe leaves the answer unjudged instead of asking forever.
    case = _doc()["cases"][0]
    it = _item(case, 0, stage=stage, earlier=(case["extraction"],) if stage else ())
    assert PROTOCOL.read(reply, it) is None


def test_a_long_reply_is_read_in_linear_time() -> None:
    case = _doc()["cases"][0]
    it = _item(case, 0)
    reading = PROTOCOL.read("Extracted Answer: " * 100_000, it)
    # Stripped first, as get_chat_response strips: the last copy has lost its space.
    assert reading is not None and reading.reading == "Extracted Answer:"
    second = _item(case, 0, stage=1, earlier=("x",))
    assert PROTOCOL.read("Judgement:" * 100_000 + "1", second) is not None
