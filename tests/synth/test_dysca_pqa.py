"""Dysca's generator, reproduced: lmmprobe's `dysca_pqa` against the output of Dysca's own code.

The fixture ``data/dysca_pqa_20_2024.json.gz`` was made by running Dysca's ``pqa_generate.py``
(Benchmark-Dysca/Dysca @ 442ef75) with seed 2024 and ``--prompt_num 20`` over its 14 groups;
``data/make_dysca_pqa.py`` holds the commands. 278 items, 1,988 questions.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from lmmprobe.synth import dysca_pqa

FIXTURE = Path(__file__).parent / "data" / "dysca_pqa_20_2024.json.gz"


def _expected() -> dict:
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def test_every_item_prompt_question_option_and_answer_is_dyscas_byte_for_byte() -> None:
    expected = _expected()
    got = dysca_pqa.generate_pqa(expected["seed"], expected["prompt_num"])
    assert [g for g, _ in got] == [g["group"] for g in expected["groups"]]
    compared = equal = 0
    for (_, records), group in zip(got, expected["groups"], strict=True):
        assert len(records) == len(group["items"])
        for mine, theirs in zip(records, group["items"], strict=True):
            compared += 1
            # Dysca writes json.dump(..., ensure_ascii=False, indent=4): compare those bytes.
            mine_text = json.dumps(mine, ensure_ascii=False, indent=4)
            equal += mine_text == json.dumps(theirs, ensure_ascii=False, indent=4)
    assert (compared, equal) == (278, 278)


def test_the_twenty_subtasks_and_dyscas_styles_are_all_asked_about() -> None:
    got = dysca_pqa.generate_pqa(2024, 20)
    majorities = {qa["question_majority"] for _, recs in got for r in recs for qa in r["q_a"]}
    # "face" labels the free-form question of a face item, as in Dysca.
    assert majorities == {*dysca_pqa.SUBTASKS, "face"}
    assert len(dysca_pqa.SUBTASKS) == 20
    meta = dysca_pqa.load_metadata()
    assert meta.origin["commit"] == "442ef7565029ca62756bea79138b63c038cfb7e4"
    assert len(meta.styles) == 57  # the file Dysca's code reads (its paper counts 51)


def test_a_group_is_drawn_from_the_callers_stream_only() -> None:
    state = random.getstate()
    first = dysca_pqa.generate_group(random.Random(5), "animal", 3)
    random.seed(99)
    assert dysca_pqa.generate_group(random.Random(5), "animal", 3) == first
    random.setstate(state)
    question = first[0]["q_a"][0]
    assert question["question"] == "What is the animal in the image?"
    assert question["answer"] in question["options"] and len(question["options"]) == 4
