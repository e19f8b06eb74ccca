"""Dysca's ``pqa_postprocess.py``, reproduced: parity with its own output on generated files.

The expected outputs were made by running Dysca's script (``tests/synth/data/
make_dysca_postprocess.py`` says how) on Dysca's own generator output and on a synthetic set
large enough for its 13,000 caps to sample.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.synth.dysca_postprocess import (
    CAPPED,
    dysca_instruction,
    postprocess,
    select_questions,
)
from lmmprobe.synth.dysca_recipe import dysca_items

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    with gzip.open(DATA / "dysca_postprocess_parity.json.gz", "rt", encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def _pqa_files() -> dict[str, list[dict[str, Any]]]:
    with gzip.open(DATA / "dysca_pqa_20_2024.json.gz", "rt", encoding="utf-8") as fh:
        pqa = json.load(fh)
    return {f"{g['group'].replace(' ', '_')}.json": g["items"] for g in pqa["groups"]}


def test_postprocess_equals_dyscas_script_on_its_generated_files(expected: dict[str, Any]) -> None:
    files = _pqa_files()
    theirs = expected["pqa20"]["output"]
    ours = postprocess([files[name] for name in expected["pqa20"]["order"]])
    assert len(ours) == len(theirs) == 919
    assert sum(a == b for a, b in zip(ours, theirs, strict=True)) == 919
    # The file order matters (Dysca takes os.walk's): another order keeps other questions.
    assert postprocess([files[name] for name in sorted(files)]) != theirs


def test_postprocess_equals_dyscas_script_where_its_caps_sample(expected: dict[str, Any]) -> None:
    spec = importlib.util.spec_from_file_location("maker", DATA / "make_dysca_postprocess.py")
    assert spec is not None and spec.loader is not None
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    parts = {f"part{f}.json": items for f, items in enumerate(maker.capped_files())}
    ours = postprocess([parts[name] for name in expected["capped"]["order"]])
    text = json.dumps(ours, indent=4)  # as Dysca's json.dump writes its file
    assert len(ours) == expected["capped"]["records"] == 56942
    assert hashlib.sha256(text.encode()).hexdigest() == expected["capped"]["sha256"]
    counts = {m: sum(r["question_majority"] == m for r in ours) for m in CAPPED}
    assert counts["style"] == counts["background"] == 13000


def test_instructions_are_dyscas_layouts() -> None:
    mc = dysca_instruction("Q?", "multi choice", ["x", "y"])
    assert mc.startswith("Question: Q? \n(A) x\n(B) y\nHint: ") and "Choices:" not in mc
    tf = dysca_instruction("Q?", "true or false", ["True", "False"])
    assert tf.startswith("Question: Q?\nChoices:\n(A) True\n(B) False\nHint: ")
    assert dysca_instruction("Describe.", "image caption", []) == "Describe.\nYour answer is:"


def test_the_recipe_asks_what_dyscas_postprocessing_keeps() -> None:
    # Seed 2024, the recipe's groups as Dysca's files in Dysca's group order.
    items = dysca_items(2024, 3, ("face", "animal"), 64, postprocess=True)
    every = dysca_items(2024, 3, ("face", "animal"), 64)
    majorities = [
        [[qa["question_majority"] for qa in i.record["q_a"]] for i in every if i.group == g]
        for g in ("face", "animal")
    ]
    kept = [ks for per_file in select_questions(majorities, 2024) for ks in per_file]
    assert [i.asked for i in items] == [tuple(ks) for ks in kept if ks]
    assert {i.index for i in items} == {i.index for i, ks in zip(every, kept, strict=True) if ks}
    assert all(i.asked == tuple(range(len(i.record["q_a"]))) for i in every)
