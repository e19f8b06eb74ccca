"""lmmprobe-pairwise: reading a judge's reply and combining the two orders."""

from __future__ import annotations

import pytest

from lmmprobe.judge.pairwise import PAIRWISE, PairwiseJudgement, combine, unswap


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("Verdict: A", "A"),
        ("verdict: b", "B"),
        ("Verdict: TIE", "tie"),
        ("**Verdict: [[B]]**", "B"),
        ("A is longer but wrong.\nVerdict: B", "B"),
        ("Verdict: A\nOn reflection... Verdict: tie", "tie"),  # the last one counts
        ("B.", "B"),
        ("tie", "tie"),
        ("Answer A", None),
        ("Both are fine.", None),
        ("", None),
        ("Verdict: C", None),
    ],
)
def test_read(reply: str, verdict: str | None) -> None:
    assert PAIRWISE.read(reply) == verdict


def test_a_verdict_that_flips_with_the_order_is_a_tie() -> None:
    # The judge picked the first place both times: A, then (swapped) B's answer.
    flipped = PairwiseJudgement(first="A", swapped=unswap("A"))
    assert (flipped.verdict, flipped.consistent) == ("tie", False)
    assert combine("B", unswap("A")) == "B"
    assert combine("A", "tie") == "tie"
    assert combine("tie", "tie") == "tie"
    assert combine(None, "A") is None and PairwiseJudgement("A", None).consistent is None


def test_prompt_names_the_image_only_when_one_is_sent() -> None:
    with_image = PAIRWISE.prompt("What colour?", "red", "blue", image=True)
    text_only = PAIRWISE.prompt("What colour?", "red", "blue", image=False)
    assert "about the image shown" in with_image.user and "image" not in text_only.user
    assert with_image.user.index("red") < with_image.user.index("blue")
    assert text_only.system is not None
