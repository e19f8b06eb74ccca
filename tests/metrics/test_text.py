import logging
import math
import shutil
import sys

import pytest

from lmmprobe.metrics import text
from lmmprobe.metrics.text import (
    CAPTION_METRICS,
    MetricUnavailable,
    anls,
    caption_scores,
    kie_correct,
    normalize_vqa_answer,
    ocr_correct,
)

# --- OCR ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prediction", "ground_truth", "expected"),
    [
        ("the sign says STOP.", "stop", True),
        ("stopped", "stop", False),
        ("nonstop service", "stop", False),
        ("stop here", "S.T.O.P", True),  # marks are deleted from the ground truth too
        ("I love New\nYork city!", "new york", True),  # whole word sequence, any whitespace
        ("I love newyork", "new york", False),
        ("New Yorkshire", "new york", False),
        ("it is stateoftheart", "state-of-the-art", True),  # ReForm deletes marks, no space
        ("it is state of the art", "state-of-the-art", False),
        ("open 24/7", "247", True),
        ("", "stop", False),
    ],
)
def test_ocr_whole_word(prediction: str, ground_truth: str, expected: bool) -> None:
    assert ocr_correct(prediction, ground_truth) is expected


def test_ocr_ground_truth_emptied_by_cleaning_never_matches() -> None:
    # ReForm-Eval's empty \b\b pattern would match any prediction with a word in it.
    assert ocr_correct("anything at all", "!!!") is False
    assert ocr_correct("café", "ééé") is False  # non-ASCII letters are erased, as in ReForm-Eval


# --- VQA normalization and KIE -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("Two dogs.", "2 dogs"),  # number word, lowercase, final period
        ("none", "0"),
        ("ten apples", "10 apples"),
        ("eleven", "eleven"),  # VQA's table stops at ten
        ("The answer is: an apple", "answer is: apple"),  # articles go, colon stays
        ("A", ""),
        ("dont know", "don't know"),
        ("Dont", "don't"),  # looked up after lowercasing
        ("Im here", "im here"),  # VQA's capitalised keys never match; kept that way
        ("yall'll", "y'all'll"),
        ("1,000 dollars", "1000 dollars"),  # comma between digits deleted
        ("3.5 kg", "3.5 kg"),  # period followed by a digit kept
        ("end. of.", "end of"),
        ("yes/no", "yes no"),  # a mark not touching a space becomes a space
        ("yes / no", "yes no"),  # touching a space: deleted, then spaces collapse
        ("hello,world", "hello world"),
        ("1,2 hello,world", "12 helloworld"),  # a digit-comma-digit anywhere deletes every mark
        ("(left)", "left"),
        ("\tA  big\ndog\n", "big dog"),
        ("$5 & 50%", "$5 & 50%"),  # marks outside VQA's list are kept
    ],
)
def test_normalize_vqa_answer(raw: str, normalized: str) -> None:
    assert normalize_vqa_answer(raw) == normalized


@pytest.mark.parametrize(
    ("prediction", "ground_truth", "expected"),
    [
        ("There are 2 apples.", "Two", True),
        ("There are two apples.", "2", True),
        ("Total: 5", "the total", True),
        ("15 items", "5", False),  # whole words only
        ("I dont know", "don't", True),
        ("Tan Chay Yee", "TAN CHAY YEE", True),
        ("Tan Chay", "TAN CHAY YEE", False),
        ("The total is $5.00 today.", "$5.00", True),  # ReForm's \b\$ could not match this
        ("save 50% now", "50%", True),
        ("1,000", "1000", True),
        ("anything", "the", False),  # ground truth empty after normalization
    ],
)
def test_kie_correct(prediction: str, ground_truth: str, expected: bool) -> None:
    assert kie_correct(prediction, ground_truth) is expected


# --- ANLS --------------------------------------------------------------------------------------


def test_anls_exact_and_normalized_match() -> None:
    assert anls("hello", ["hello"]) == 1.0
    assert anls("  Hello   World ", ["hello world"]) == 1.0


def test_anls_one_edit_in_ten_characters() -> None:
    assert anls("abcdefghij", ["abcdefghix"]) == pytest.approx(0.9)
    assert anls("abcdefghi", ["abcdefghij"]) == pytest.approx(0.9)  # deletion, max length 10


def test_anls_beyond_threshold_is_zero() -> None:
    assert anls("abcdef", ["uvwxyz"]) == 0.0
    assert anls("ab", ["ax"]) == 0.0  # NL = 0.5 exactly: not below the threshold
    assert anls("abcd", ["abxx"], threshold=0.6) == pytest.approx(0.5)


def test_anls_takes_the_best_ground_truth() -> None:
    assert anls("abcdefghij", ["zzzzzzzzzz", "abcdefghix", "abcdefgxxx"]) == pytest.approx(0.9)


def test_anls_edge_cases() -> None:
    assert anls("", [""]) == 1.0
    assert anls("", ["abc"]) == 0.0
    assert anls("abcdefghij", "abcdefghix") == pytest.approx(0.9)  # a bare string is one answer
    with pytest.raises(ValueError, match="at least one"):
        anls("a", [])
    with pytest.raises(ValueError, match="threshold"):
        anls("a", ["a"], threshold=0.0)


# --- captions ----------------------------------------------------------------------------------

TWO_IMAGES = {"1": ["a dog runs on the grass"], "2": ["a red car parked outside"]}


@pytest.fixture
def coco() -> None:
    pytest.importorskip("pycocoevalcap")


@pytest.mark.usefixtures("coco")
def test_identical_captions_score_one() -> None:
    refs = {"1": ["A man rides a horse.", "a person on a horse"], "2": ["two cats sleep on a sofa"]}
    preds = {"1": "a man rides a horse", "2": "Two cats sleep on a sofa!"}
    out = caption_scores(preds, refs, meteor=False)
    assert list(out) == [m for m in CAPTION_METRICS if m != "METEOR"]
    for n in range(1, 5):
        assert out[f"BLEU-{n}"] == pytest.approx(1.0, abs=1e-6)
    assert out["ROUGE-L"] == pytest.approx(1.0)


@pytest.mark.usefixtures("coco")
def test_hand_checked_bleu_and_rouge() -> None:
    # 6 tokens each: unigrams the,sat,on,the,mat match (5/6); bigrams sat on, on the, the mat
    # (3/5); equal lengths, so no brevity penalty. LCS = 5 tokens: P = R = F = 5/6.
    out = caption_scores(
        {"x": "The dog sat on the mat."}, {"x": ["the cat sat on the mat"]}, meteor=False
    )
    assert out["BLEU-1"] == pytest.approx(5 / 6, abs=1e-6)
    assert out["BLEU-2"] == pytest.approx(math.sqrt(5 / 6 * 3 / 5), abs=1e-6)
    assert out["ROUGE-L"] == pytest.approx(5 / 6)


@pytest.mark.usefixtures("coco")
def test_without_tokenization_raw_strings_are_scored() -> None:
    # As ReForm-Eval's code: "The" and "mat." are tokens of their own, so 3 of 6 unigrams match.
    out = caption_scores(
        {"x": "The dog sat on the mat."},
        {"x": ["the cat sat on the mat"]},
        meteor=False,
        tokenize=False,
    )
    assert out["BLEU-1"] == pytest.approx(3 / 6, abs=1e-6)


@pytest.mark.usefixtures("coco")
def test_cider_perfect_versus_swapped_captions() -> None:
    perfect = caption_scores({k: v[0] for k, v in TWO_IMAGES.items()}, TWO_IMAGES, meteor=False)
    # Every n-gram shared by both images ("a") has IDF log(2/2) = 0; the rest match exactly, so
    # each n-gram order has cosine 1 and CIDEr-D = 10 * mean(1, 1, 1, 1).
    assert perfect["CIDEr"] == pytest.approx(10.0)
    swapped = caption_scores(
        {"1": TWO_IMAGES["2"][0], "2": TWO_IMAGES["1"][0]}, TWO_IMAGES, meteor=False
    )
    assert swapped["CIDEr"] == pytest.approx(0.0)


@pytest.mark.usefixtures("coco")
def test_cider_of_a_one_image_corpus_is_zero() -> None:
    # IDF = log(N / df) = log(1 / 1) = 0 for every n-gram: CIDEr needs a corpus.
    out = caption_scores({"1": "a dog runs"}, {"1": ["a dog runs"]}, meteor=False)
    assert out["CIDEr"] == 0.0


@pytest.mark.usefixtures("coco")
def test_caption_input_errors() -> None:
    with pytest.raises(ValueError, match="at least one"):
        caption_scores({}, {}, meteor=False)
    with pytest.raises(ValueError, match="same image ids"):
        caption_scores({"1": "a"}, {"2": ["a"]}, meteor=False)
    with pytest.raises(ValueError, match="non-empty list"):
        caption_scores({"1": "a"}, {"1": []}, meteor=False)
    with pytest.raises(ValueError, match="non-empty list"):
        caption_scores({"1": "a"}, {"1": "a"}, meteor=False)


def test_missing_pycocoevalcap_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pycocoevalcap.bleu.bleu", None)
    with pytest.raises(MetricUnavailable, match=r"pip install 'lmmprobe\[metrics\]'"):
        caption_scores({"1": "a"}, {"1": ["a"]})


@pytest.mark.usefixtures("coco")
def test_meteor_without_java(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(text, "_find_java", lambda: None)
    text._warn_meteor_skipped.cache_clear()
    with caplog.at_level(logging.WARNING, logger="lmmprobe.metrics.text"):
        out = caption_scores({"1": "a dog"}, {"1": ["a dog"]})
        caption_scores({"1": "a dog"}, {"1": ["a dog"]})
    assert "METEOR" not in out
    assert "BLEU-1" in out
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1, "the reason is logged once, not once per call"
    assert "no Java runtime" in messages[0]
    with pytest.raises(MetricUnavailable, match="no Java runtime"):
        caption_scores({"1": "a dog"}, {"1": ["a dog"]}, meteor=True)
    text._warn_meteor_skipped.cache_clear()


@pytest.mark.usefixtures("coco")
def test_meteor_process_failure_is_a_warning_unless_required(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*_: object) -> float:
        raise MetricUnavailable("the METEOR Java process failed: boom")

    monkeypatch.setattr(text, "_find_java", lambda: "/usr/bin/java")
    monkeypatch.setattr(text, "_meteor", broken)
    text._warn_meteor_skipped.cache_clear()
    with caplog.at_level(logging.WARNING, logger="lmmprobe.metrics.text"):
        out = caption_scores({"1": "a dog"}, {"1": ["a dog"]})
    assert "METEOR" not in out
    assert "boom" in caplog.text
    with pytest.raises(MetricUnavailable, match="boom"):
        caption_scores({"1": "a dog"}, {"1": ["a dog"]}, meteor=True)
    text._warn_meteor_skipped.cache_clear()


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("java") is None, reason="METEOR 1.5 needs a Java runtime (java not on PATH)"
)
@pytest.mark.usefixtures("coco")
def test_meteor_with_java() -> None:
    # One Java process (several seconds): an identical caption scores 1, a disjoint one 0, and a
    # raw newline or "|||" inside a caption does not desynchronise METEOR's line protocol.
    out = caption_scores(
        {"1": "a dog runs\non the grass", "2": "zzz qqq"},
        {"1": ["a dog runs on the grass", "a dog ||| outside"], "2": ["a red car parked outside"]},
        meteor=True,
        tokenize=False,
    )
    assert list(out) == list(CAPTION_METRICS)
    assert 0.0 < out["METEOR"] < 1.0
    single = caption_scores(
        {"1": "a dog runs on the grass"}, {"1": ["a dog runs on the grass"]}, meteor=True
    )
    assert single["METEOR"] == pytest.approx(1.0)
