"""OCRBench v2's scoring against its own eval.py and get_score.py, run on generated answers.

The fixtures (tests/data/benchmarks/ocrbench_v2_parity/, see its README) hold 226 generated
items over all 30 task types, each with an answer, and the score the released scripts gave each
one, with what get_score.py printed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("apted", reason="OCRBench v2's TEDS needs the ocrbench extra")
pytest.importorskip("lxml", reason="OCRBench v2's TEDS needs the ocrbench extra")
pytest.importorskip("zss", reason="OCRBench v2's STEDS needs the ocrbench extra")
pytest.importorskip("jieba", reason="OCRBench v2's page OCR needs the ocrbench extra")
nltk = pytest.importorskip("nltk", reason="OCRBench v2's page OCR needs the ocrbench extra")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import lmmprobe.metrics._ocrbench_v2_ocr as ocr  # noqa: E402
from lmmprobe.metrics._ocrbench_v2_ocr import (  # noqa: E402
    ITEM,
    bracketed_items,
    cal_per_metrics,
    extract_bounding_boxes_robust,
)
from lmmprobe.metrics._ocrbench_v2_struct import (  # noqa: E402
    _FENCE,
    KEY_VALUE,
    convert_str_to_dict,
    convert_str_to_multi_dict,
    fenced_blocks,
    key_values,
)
from lmmprobe.metrics.ocrbench_v2 import (  # noqa: E402
    TASK_TYPES,
    OcrbenchV2Item,
    ocrbench_v2_summary,
    score_item,
)
from lmmprobe.metrics.text import MetricUnavailable  # noqa: E402

HERE = Path(__file__).parents[1] / "data" / "benchmarks" / "ocrbench_v2_parity"


def _wordnet() -> bool:
    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        return False
    return True


needs_wordnet = pytest.mark.skipif(not _wordnet(), reason="NLTK's WordNet corpus is not installed")


def _items() -> list[dict]:
    return json.loads((HERE / "items.json").read_text(encoding="utf-8"))


def _expected() -> dict:
    return json.loads((HERE / "expected.json").read_text(encoding="utf-8"))


def _item(raw: dict) -> OcrbenchV2Item:
    return OcrbenchV2Item(raw["type"], raw["question"], raw["answers"], raw.get("eval"),
                          raw.get("bbox"), raw.get("content"))  # fmt: skip


def test_the_fixtures_cover_every_task_type() -> None:
    assert {raw["type"] for raw in _items()} == set(TASK_TYPES)


@needs_wordnet
def test_each_answer_scores_what_eval_py_gives_it() -> None:
    expected = {s["id"]: s for s in _expected()["scores"]}
    for raw in _items():
        score, ignored = score_item(_item(raw), raw["predict"])
        want = expected[raw["id"]]
        assert score == pytest.approx(want["score"], abs=1e-12), (
            raw["id"],
            raw["type"],
            raw["predict"],
        )
        assert ignored == (want["ignore"] == "True"), raw["id"]


@needs_wordnet
def test_the_summary_prints_what_get_score_py_prints() -> None:
    scored = []
    for raw in _items():
        score, ignored = score_item(_item(raw), raw["predict"])
        if not ignored:
            scored.append((raw["type"], score))
    summary = ocrbench_v2_summary(scored)
    printed = _expected()["get_score"]
    lines = [f"{k}: {v:.3f} (Count: {n})" for k, (v, n) in summary.en.items()]
    lines += [f"{k}: {v:.3f} (Count: {n})" for k, (v, n) in summary.cn.items()]
    for line in lines:
        assert line in printed
    assert f"English Overall Score: {summary.en_overall:.3f}" in printed
    assert f"Chinese Overall Score: {summary.cn_overall:.3f}" in printed
    # Each group's figure in full, not only to three places.
    got = dict(re.findall(r"^(\w+): ([0-9.]+) \(Count", printed, re.M))
    assert len(got) == 8  # the names repeat across languages: the Chinese ones overwrite
    assert summary.cn["element_parsing"][0] == pytest.approx(
        float(got["element_parsing"]), abs=5e-4
    )


def test_a_missing_wordnet_refuses_naming_the_download(monkeypatch: pytest.MonkeyPatch) -> None:
    def find(resource: str, *args: object, **kwargs: object) -> None:
        raise LookupError(resource)

    monkeypatch.setattr(nltk.data, "find", find)
    with pytest.raises(MetricUnavailable, match=r"nltk\.downloader wordnet"):
        score_item(OcrbenchV2Item("full-page OCR en", "q", ["a b"]), "a b")
    # The rules that need no WordNet still score.
    assert score_item(OcrbenchV2Item("text recognition en", "q", ["a b"]), "a b") == (1, False)


def test_an_unknown_task_type_is_refused() -> None:
    with pytest.raises(ValueError, match="not an OCRBench v2 task type"):
        score_item(OcrbenchV2Item("poetry en", "q", ["x"]), "x")


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_the_answer_readers_take_any_text(text: str) -> None:
    assert isinstance(convert_str_to_dict(text), dict)
    assert isinstance(convert_str_to_multi_dict(text), dict)
    boxes = extract_bounding_boxes_robust(text)
    assert boxes is None or all(len(b) == 5 for b in boxes)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5000 + "]" * 5000,
        "{" * 3000,
        "a: " * 20000,
        "x " * 30000 + ":",
        "x " * 30000 + "' :",
        "(" + " " * 30000 + "x",
        "```python\n" * 2000,
    ],
)
def test_long_adversarial_answers_are_read_without_failing(text: str) -> None:
    convert_str_to_dict(text)
    convert_str_to_multi_dict(text)
    extract_bounding_boxes_robust(text)


# The characters the two patterns turn on, with word and space characters of several kinds.
_PATTERN_TEXT = st.text(alphabet=list("ab_1中 \t\n\u3000\"':=,{}[]()x"), max_size=60)


@settings(max_examples=400, deadline=None)
@given(_PATTERN_TEXT)
def test_the_linear_key_value_scan_finds_what_the_scripts_pattern_finds(text: str) -> None:
    assert key_values(text) == re.findall(KEY_VALUE, text)


# Backticks, newlines and the tags' letters (the long s and the Kelvin sign fold to s and k).
_FENCE_TEXT = st.text(alphabet=list("`\n\n\npythonjsPYTHONJSſKx "), max_size=60)


@settings(max_examples=600, deadline=None)
@given(_FENCE_TEXT)
def test_the_linear_fence_scan_finds_what_the_scripts_pattern_finds(text: str) -> None:
    expected = re.findall(_FENCE, text, re.DOTALL | re.IGNORECASE)
    assert list(fenced_blocks(text)) == expected


@pytest.mark.parametrize(
    "text",
    ["```\nx" * 200_000, "```json\n" * 100_000, "```\n" + "```python\n`" * 80_000 + "\n```"],
)
def test_an_answer_of_fences_that_never_close_is_read_in_linear_time(text: str) -> None:
    # Re-test 17: the scripts' pattern scanned the rest of the text from each opening: a
    # capped answer of ```\nx repeated took about half an hour, twice for one KIE answer.
    from tests.bounded import bounded

    assert bounded(convert_str_to_dict, text) == convert_str_to_dict(text)
    bounded(convert_str_to_multi_dict, text)


@settings(max_examples=400, deadline=None)
@given(_PATTERN_TEXT)
def test_the_linear_bracket_scan_finds_what_the_scripts_pattern_finds(text: str) -> None:
    assert bracketed_items(text) == re.findall(ITEM, text)


_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.floats(), st.text(max_size=12)
)
_JSON = st.recursive(
    _LEAF,
    lambda c: st.one_of(
        st.lists(c, max_size=4), st.dictionaries(st.text(max_size=4), c, max_size=4)
    ),
    max_leaves=10,
)
_RULE_FAILURES = (ValueError, ZeroDivisionError, TypeError, KeyError, IndexError, AttributeError)
"""What `metrics.builtin.ocrbench_v2` turns into a 0 with a warning (eval.py stopping)."""


@needs_wordnet
@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(TASK_TYPES),
    answers=st.one_of(
        st.lists(
            st.one_of(st.text(max_size=30), st.sampled_from(["{'a': 1", "x y", "{'k': ['a']}"])),
            min_size=1,
            max_size=3,
        ),
        _JSON,
    ),
    fields=st.tuples(_JSON, _JSON, _JSON),
    predict=st.one_of(
        st.text(max_size=60),
        st.sampled_from(
            [
                "{'a': [",
                "[" * 3000,
                "(" * 300 + ")" * 300,
                "[[nan, 1, 2, 3]]",
                "[1e400, 2, 3, 4]",
                '{"answer": "x", "bbox": [1, "a", null, 4]}',
            ]
        ),
    ),
)
def test_any_item_and_answer_scores_or_fails_as_a_rule_failure(
    kind: str, answers: object, fields: tuple[object, object, object], predict: str
) -> None:
    # Items from a data file (any JSON in the rule's fields) and answers from a model: a score,
    # or one of the failures the metric turns into a 0 with a line; never another exception.
    ev, bbox, content = fields
    item = OcrbenchV2Item(kind, "html markdown", answers, ev, bbox, content)
    try:
        score, ignored = score_item(item, predict)
    except _RULE_FAILURES:
        return
    assert isinstance(score, int | float) and isinstance(ignored, bool)


@pytest.mark.parametrize("gold", ["{'a': 1", "x y", "[1, 2]", "(" * 300 + ")" * 300])
def test_a_chinese_key_information_reference_no_dict_is_a_rule_failure(gold: str) -> None:
    # eval.py's ast.literal_eval stops on it (SyntaxError, or .items() of a list): a named
    # ValueError here, which the metric turns into a 0 with a line (an import's rows).
    item = OcrbenchV2Item("key information extraction cn", "", [gold], None, None, None)
    with pytest.raises(ValueError, match="the reference is not a Python dict literal"):
        score_item(item, "{}")


# Words WordNet links (car/automobile, run/running/ran, house/houses) and some it does not.
_METEOR_WORDS = ["car", "automobile", "auto", "running", "ran", "run", "houses", "house", "home",
                 "the", "of", "Big", "large", "x1", "quickly", "fast", "Fast"]  # fmt: skip


@needs_wordnet
@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(_METEOR_WORDS), max_size=40),
    st.lists(st.sampled_from(_METEOR_WORDS), min_size=1, max_size=40),
)
def test_meteor_is_nltks_with_its_own_stemmer_and_wordnet(
    answer: list[str], reference: list[str]
) -> None:
    # The page OCR score's METEOR remembers each word's stem and synonyms; its figure is the
    # one NLTK gives with its defaults (a fresh stemmer, the WordNet reader itself).
    from nltk.translate.meteor_score import meteor_score

    got = cal_per_metrics(" ".join(answer), " ".join(reference))["meteor"]
    assert got == meteor_score([reference], answer)


@needs_wordnet
def test_a_runaway_page_looks_each_word_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A model repeating a page until its tokens ran out: a million characters, 150,000 words.
    # METEOR stemmed and looked up in WordNet every word again (re-test 16 #7: about 30 s an
    # answer); each distinct word is now looked up once, and the figures are NLTK's.
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.stem.porter import PorterStemmer

    asked = {"stem": 0, "synsets": 0}

    def counted(name: str, method: Any) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            asked[name] += 1
            return method(self, *args, **kwargs)

        return call

    monkeypatch.setattr(PorterStemmer, "stem", counted("stem", PorterStemmer.stem))
    monkeypatch.setattr(
        WordNetCorpusReader, "synsets", counted("synsets", WordNetCorpusReader.synsets)
    )
    ocr._meteor_helpers.cache_clear()  # built again with the counted methods
    try:
        page = " ".join(f"{w} cars running houses" for w in ("alpha", "beta", "gamma", "delta"))
        answer = " ".join([page] * 10_000)
        score = score_item(OcrbenchV2Item("full-page OCR en", "q", ["the car runs home"]), answer)
    finally:
        ocr._meteor_helpers.cache_clear()
    distinct = len(set(answer.split()) | {"the", "car", "runs", "home"})
    assert asked["stem"] <= distinct
    assert asked["synsets"] <= distinct
    assert 0 < score[0] < 0.5
