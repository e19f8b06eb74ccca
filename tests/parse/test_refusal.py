import pytest

from lmmprobe.parse import is_refusal


@pytest.mark.parametrize(
    "text",
    [
        "none of these",
        "None of the options",
        "None of the above.",
        "Neither of them.",
        "None.",
        "**None**",
        "N/A",
        "I cannot determine",
        "I can not determine the answer from this picture.",
        "I'm sorry, I can't help",
        "I\u2019m sorry, I can\u2019t help with that.",  # typographic apostrophes
        "I am not able to see the image",
        "I couldn't view the picture you sent.",
        "cannot be determined from the image",
        "It is impossible to tell from this angle.",
        "unable to answer",
        "UNABLE TO ANSWER",
        "I don't know",
        "I do not know.",
        "There is not enough information to decide.",
        "There is no correct answer among the options.",
        "No image was provided.",
        "\u65e0\u6cd5\u786e\u5b9a",  # 无法确定 (cannot determine)
        "\u6211\u4e0d\u77e5\u9053",  # 我不知道 (I don't know)
        "\u90fd\u4e0d\u662f",  # 都不是 (none of them)
    ],
)
def test_refusals_are_flagged(text: str) -> None:
    assert is_refusal(text)


@pytest.mark.parametrize(
    "text",
    [
        "The answer is B",
        "blue",
        "B",
        "(C) green",
        "",
        "The dog cannot swim across the river.",
        "A cat that can't see in daylight would be unusual.",
        "Nonetheless, it is red.",
        "The canopy of these trees is green.",
        "Only one of these is red: (A).",
        "I know the answer: A.",
        "Uncannot tell",  # a phrase glued to a preceding word does not count
        "\u7b54\u6848\u662fB",  # 答案是B
    ],
)
def test_ordinary_answers_are_not_refusals(text: str) -> None:
    assert not is_refusal(text)
