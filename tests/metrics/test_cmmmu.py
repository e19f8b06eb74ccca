"""CMMMU's reading on any text: never an error, the same numbers as its patterns, long inputs.

Parity with CMMMU's released code is in tests/parity/test_cmmmu.py; here the reading is fuzzed.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from lmmprobe.metrics.cmmmu import (
    _SCIENTIFIC,
    cmmmu_fill_blank,
    cmmmu_fill_correct,
    cmmmu_multi_choice,
    cmmmu_true_false,
)

# CMMMU's own scientific-number pattern (eval_utils.py extract_numbers), the oracle of the
# anchored one lmmprobe runs.
_CMMMU_SCIENTIFIC = re.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d+")

_TEXT = st.text(alphabet=st.sampled_from(list("0123456789eE+-.，, =。\n是为错对不正确ABCD()甲 x")))
_OPTIONS = {"A": "甲", "B": "乙乙", "C": "", "D": "1.5"}


@given(_TEXT)
@settings(max_examples=400, deadline=None)
def test_the_anchored_scientific_pattern_finds_what_cmmmus_finds(text: str) -> None:
    assert _SCIENTIFIC.findall(text) == _CMMMU_SCIENTIFIC.findall(text)


@given(st.text(), st.text(max_size=30))
@settings(max_examples=300, deadline=None)
def test_any_text_is_read_without_an_error(response: str, gold: str) -> None:
    letters = cmmmu_multi_choice(response, _OPTIONS)
    assert letters is None or (letters and set(letters) <= set("ABCD"))
    assert cmmmu_true_false(response) in ("对", "错", None)
    assert isinstance(cmmmu_fill_correct(gold, cmmmu_fill_blank(response, gold)), bool)


def test_an_empty_option_is_found_everywhere_as_str_count_finds_it() -> None:
    # No letter and no other option: option C, empty, is found len + 1 times (CMMMU's quirk).
    assert cmmmu_multi_choice("无法确定", _OPTIONS) == "C"
    assert cmmmu_multi_choice("无法确定", {"A": "x", "B": "y", "C": "z", "D": "w"}) is None


def test_negated_words_count_as_positive_as_in_cmmmu() -> None:
    # "不正确" holds "正确", which is tested first.
    assert cmmmu_true_false("不正确") == "对"
    assert cmmmu_true_false("错误") == "错"
    assert cmmmu_true_false("正确。错误") == "对"  # no key word: the whole answer, positive
    assert cmmmu_true_false("答案是正确。答案是错误") is None  # one each: CMMMU draws


def test_long_adversarial_answers_are_read_in_one_pass() -> None:
    # Runs of digits that CMMMU's unanchored pattern would rescan from every digit, and long
    # texts full of key words: each must finish (a quadratic reading would not, here).
    n = 200_000
    for text in (
        "1" * n + "x",
        "1" * n + "e",
        "-" + "9" * n + ".",
        "是" * n,
        "为1" * n,
        "1，" * n,
        ("答案是" + "2" * 1000 + "。") * 200,
    ):
        numbers = cmmmu_fill_blank(text, "1")
        assert isinstance(numbers, list)
        assert cmmmu_true_false(text) in ("对", "错", None)
        assert cmmmu_multi_choice(text, _OPTIONS) is not None or "(" not in text
