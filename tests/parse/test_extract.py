import pytest

from lmmprobe.parse import Extraction, extract_choice

COLORS = ["red", "blue", "green", "yellow"]
UPPER = ["A", "B", "C", "D"]
LOWER = ["a", "b", "c", "d"]
NUMBER = ["1", "2", "3", "4"]
ANIMALS = ["dog", "bird", "fish", "cow"]


def colors(output: str, marks: list[str] = UPPER) -> Extraction:
    return extract_choice(output, COLORS, marks)


# --- empty -------------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["", " ", "\n\t  \n"])
def test_empty_output_is_unparsed_empty(output: str) -> None:
    assert colors(output) == Extraction(None, "unparsed", "empty")


# --- mark stage: leading mark ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "index"),
    [
        ("B", 1),
        ("b", 1),
        ("  C  ", 2),
        ("B.", 1),
        ("B)", 1),
        ("(B)", 1),
        ("(b)", 1),
        ("( d )", 3),
        ("B: blue", 1),
        ("B. blue", 1),
        ("(b) blue", 1),
        ("(B) something unrelated", 1),
        ("**B**", 1),
        ("**B**. blue", 1),
        ("**B** blue", 1),
        ("**(C)**", 2),
        ("__A__", 0),
        ('"B"', 1),
        ("'D'", 3),
        ("A, because it is red", 0),
        ("B\nThe object is painted in a cool tone.", 1),
        ("\uff08B\uff09", 1),  # full-width parentheses
        ("B\u3002", 1),  # Chinese full stop
    ],
)
def test_leading_mark(output: str, index: int) -> None:
    result = colors(output)
    assert (result.index, result.stage) == (index, "mark")


@pytest.mark.parametrize(
    "output",
    [
        "A cat sits on the mat",
        "A dog",
        "B is a letter",
        "A.I. systems read images",
    ],
)
def test_leading_letter_followed_by_words_is_not_a_mark(output: str) -> None:
    result = extract_choice(output, ["red", "blue", "green", "yellow"], UPPER)
    assert result.stage != "mark"
    assert result.index is None


def test_a_cat_sits_on_the_mat_is_unparsed_with_any_letter_marks() -> None:
    for marks in (UPPER, LOWER):
        result = extract_choice("A cat sits on the mat", ANIMALS, marks)
        assert result == Extraction(None, "unparsed", "no_match")


# --- mark stage: answer phrases ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "index"),
    [
        ("The answer is B", 1),
        ("the answer is (b)", 1),
        ("Answer: B", 1),
        ("ANSWER: c", 2),
        ("The answer is: **C**", 2),
        ("I think the answer is B.", 1),
        ("After looking closely, the answer is D!", 3),
        ("The correct option is C", 2),
        ("The best choice is A, because of the tint", 0),
        ("It must be option B", 1),
        ("I would go with choice (C) here", 2),
        ("I choose B", 1),
        ("I choose B, the cool colour", 1),
        ("the answer is b blue", 1),  # bare mark followed by the option's own text
        ("Answer: B - the sky colour", 1),
        ("Option A: red. Option B: blue. The answer is B", 1),
        ("\u7b54\u6848\u662fB", 1),  # 答案是B
        ("\u7b54\u6848\uff1aC", 2),  # 答案 + full-width colon + C
        ("\u7b54\u6848: A", 0),
        ("\u9009B", 1),  # 选B
        ("\u6211\u9009C\u3002", 2),  # 我选C。
        ("\u7b54\u6848\u662fB\u56e0\u4e3a\u84dd\u8272", 1),  # 答案是B因为蓝色
    ],
)
def test_answer_phrase_mark(output: str, index: int) -> None:
    result = colors(output)
    assert (result.index, result.stage) == (index, "mark")


@pytest.mark.parametrize(
    ("output", "options"),
    [
        ("the answer is a cat", ["dog", "bird", "fish", "cow"]),
        ("Well, the answer is a small animal", ["dog", "bird", "fish", "cow"]),
        ("I choose a fish", ["dog", "bird", "fish", "cow"]),
    ],
)
def test_bare_mark_followed_by_other_words_is_not_a_mark(output: str, options: list[str]) -> None:
    result = extract_choice(output, options, LOWER)
    assert result.index != 0
    assert result.stage != "mark"


def test_bare_mark_followed_by_its_option_text_is_a_mark() -> None:
    result = extract_choice("the answer is a cat", ["cat", "dog", "bird", "fish"], LOWER)
    assert (result.index, result.stage) == (0, "mark")


def test_mark_glued_to_a_word_is_not_a_mark() -> None:
    # "Blue" starts with B but is a word, decided by option text rather than by mark B.
    result = extract_choice("The answer is Blue", ["blue", "red", "green", "yellow"], UPPER)
    assert (result.index, result.stage) == (0, "text")


def test_conflicting_answer_phrases_are_ambiguous() -> None:
    result = colors("The answer is A. Actually, the answer is (B)")
    assert result == Extraction(None, "unparsed", "ambiguous")


def test_listed_options_do_not_block_a_single_parenthesized_mark() -> None:
    result = colors("Option A: ruby, option B: navy. Final pick: (B)")
    assert (result.index, result.stage) == (1, "mark")


# --- mark stage: parenthesized marks anywhere -----------------------------------------------------


@pytest.mark.parametrize(
    ("output", "index"),
    [
        ("I think the answer is (C) blue", 2),
        ("Looking at it closely... (C)", 2),
        ("It is (c), clearly.", 2),
        ("It is (C). Again: (C).", 2),
    ],
)
def test_single_distinct_parenthesized_mark(output: str, index: int) -> None:
    result = colors(output)
    assert (result.index, result.stage) == (index, "mark")


@pytest.mark.parametrize("output", ["not (A) but (C)", "Either (a) or (b) could fit"])
def test_several_parenthesized_marks_do_not_guess(output: str) -> None:
    assert colors(output) == Extraction(None, "unparsed", "ambiguous")


def test_several_parenthesized_marks_fall_through_to_text() -> None:
    result = colors("Not (A) and not (C): it is blue")
    assert (result.index, result.stage) == (1, "text")


@pytest.mark.parametrize("output", ["(E)", "E", "Answer: E", "The answer is (F)"])
def test_marks_not_displayed_do_not_count(output: str) -> None:
    result = colors(output)
    assert result.index is None
    assert result.stage == "unparsed"


# --- mark styles ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "index"),
    [("a", 0), ("(a)", 0), ("(A)", 0), ("b)", 1), ("c.", 2), ("Answer: d", 3), ("D", 3)],
)
def test_lower_marks(output: str, index: int) -> None:
    result = colors(output, LOWER)
    assert (result.index, result.stage) == (index, "mark")


@pytest.mark.parametrize(
    ("output", "index"),
    [
        ("2", 1),
        ("(2)", 1),
        ("2.", 1),
        ("2)", 1),
        ("2. blue", 1),
        ("Answer: 2", 1),
        ("The answer is 3.", 2),
        ("I pick (4)", 3),
    ],
)
def test_number_marks(output: str, index: int) -> None:
    result = colors(output, NUMBER)
    assert (result.index, result.stage) == (index, "mark")


@pytest.mark.parametrize("output", ["2.5 meters", "12", "(5)", "Answer: 12", "10:30"])
def test_numbers_that_are_not_displayed_marks(output: str) -> None:
    result = extract_choice(output, ANIMALS, NUMBER)
    assert result.stage == "unparsed"


@pytest.mark.parametrize(("output", "index"), [("(12)", 11), ("12.", 11), ("1.", 0), ("10", 9)])
def test_multi_digit_marks_are_not_read_as_their_prefix(output: str, index: int) -> None:
    options = [f"option text {i}" for i in range(12)]
    marks = [str(i + 1) for i in range(12)]
    result = extract_choice(output, options, marks)
    assert (result.index, result.stage) == (index, "mark")


# --- text stage ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "index"),
    [
        ("blue", 1),
        ("Blue.", 1),
        ("The sky in the picture is BLUE.", 1),
        ("blue... definitely blue", 1),
        ("It's green, I'd say: green!", 2),
    ],
)
def test_single_option_text(output: str, index: int) -> None:
    result = colors(output)
    assert result == Extraction(index, "text", COLORS[index])


@pytest.mark.parametrize("output", ["bluebird", "reddish", "greenery at dusk"])
def test_option_text_must_be_a_whole_word(output: str) -> None:
    assert colors(output).stage != "text"


@pytest.mark.parametrize("output", ["red or blue", "It is red, or maybe blue.", "yellow and green"])
def test_two_options_mentioned_are_ambiguous(output: str) -> None:
    assert colors(output) == Extraction(None, "unparsed", "ambiguous")


def test_longer_option_shadows_the_one_it_contains() -> None:
    options = ["red", "dark red", "blue", "green"]
    result = extract_choice("It is dark red.", options, UPPER)
    assert (result.index, result.stage) == (1, "text")


def test_shorter_option_also_named_alone_stays_ambiguous() -> None:
    options = ["red", "dark red", "blue", "green"]
    result = extract_choice("dark red, or just red", options, UPPER)
    assert result == Extraction(None, "unparsed", "ambiguous")


def test_option_text_whitespace_is_flexible() -> None:
    options = ["traffic light", "stop sign", "bench", "car"]
    result = extract_choice("a Traffic\n  light", options, UPPER)
    assert (result.index, result.stage) == (0, "text")


def test_word_boundaries_work_outside_ascii() -> None:
    options = ["\u043a\u043e\u0442", "\u0441\u043e\u0431\u0430\u043a\u0430"]  # кот, собака
    marks = ["A", "B"]
    found = extract_choice("\u042d\u0442\u043e \u043a\u043e\u0442.", options, marks)  # Это кот.
    assert (found.index, found.stage) == (0, "text")
    # котёнок (kitten) contains кот but is another word.
    inside = extract_choice("\u043a\u043e\u0442\u0451\u043d\u043e\u043a", options, marks)
    assert inside.stage == "unparsed"


def test_chinese_option_text_matches_without_spaces() -> None:
    options = ["\u7ea2\u8272", "\u84dd\u8272"]  # 红色, 蓝色
    output = "\u56fe\u4e2d\u7684\u5929\u7a7a\u662f\u84dd\u8272\u7684"  # 图中的天空是蓝色的
    result = extract_choice(output, options, ["A", "B"])
    assert (result.index, result.stage) == (1, "text")


@pytest.mark.parametrize(
    "output",
    [
        "\u8fd9\u5f20\u56fe\u7247\u91cc\u662f\u4e00\u53ea\u732b",  # 这张图片里是一只猫
        "\u6211\u89c9\u5f97\u662f\u7b2c\u4e8c\u4e2a",  # 我觉得是第二个
    ],
)
def test_chinese_output_without_mark_or_option_text_is_unparsed(output: str) -> None:
    result = colors(output)
    assert result.index is None
    assert result.stage == "unparsed"


def test_mark_stage_runs_before_text_stage() -> None:
    # The mark says A (red) although the text names blue.
    result = colors("(A) blue")
    assert (result.index, result.stage) == (0, "mark")


def test_option_text_that_reads_like_a_refusal_is_matched_as_text() -> None:
    options = ["a cat", "a dog", "none of these"]
    result = extract_choice("None of these.", options, ["A", "B", "C"])
    assert (result.index, result.stage) == (2, "text")


def test_blank_options_never_match() -> None:
    result = extract_choice("   ", ["", "blue"], ["A", "B"])
    assert result.reason == "empty"
    result = extract_choice("something", ["", " "], ["A", "B"])
    assert result == Extraction(None, "unparsed", "no_match")


def test_duplicate_option_texts_are_ambiguous() -> None:
    result = extract_choice("red", ["red", "red", "blue"], ["A", "B", "C"])
    assert result == Extraction(None, "unparsed", "ambiguous")


# --- refusal -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        "none of these",
        "None of the options",
        "I cannot determine the colour.",
        "I'm sorry, I can't help with that.",
        "I am not able to see the image.",
        "It cannot be determined from the image.",
        "Unable to answer.",
        "I don't know",
    ],
)
def test_refusal_is_unparsed_refusal(output: str) -> None:
    assert colors(output) == Extraction(None, "unparsed", "refusal")


def test_refusal_is_checked_before_reporting_ambiguity() -> None:
    result = colors("I can't tell whether it is red or blue.")
    assert result == Extraction(None, "unparsed", "refusal")


def test_refusal_is_checked_before_fuzzy() -> None:
    # Fuzzy alone would map this output to the first option (ratio > 90).
    options = ["i dont know", "maybe", "perhaps", "surely"]
    result = extract_choice("I don't know", options, UPPER)
    assert result == Extraction(None, "unparsed", "refusal")


# --- fuzzy stage ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "index"),
    [("gren", 2), ("yelow", 3), ("Yelow.", 3), ("  GREN!  ", 2), ("blu", 1)],
)
def test_fuzzy_typos(output: str, index: int) -> None:
    result = colors(output)
    assert (result.index, result.stage) == (index, "fuzzy")
    assert COLORS[index] in result.reason


def test_fuzzy_transposition_needs_a_lower_threshold() -> None:
    # fuzz.ratio("bleu", "blue") is 75: below the default threshold, above a lowered one.
    assert colors("bleu") == Extraction(None, "unparsed", "no_match")
    result = extract_choice("bleu", COLORS, UPPER, fuzzy_threshold=75)
    assert (result.index, result.stage) == (1, "fuzzy")


@pytest.mark.parametrize("output", ["grape", "purple", "xyz", "a completely different sentence"])
def test_fuzzy_below_threshold_is_no_match(output: str) -> None:
    assert colors(output) == Extraction(None, "unparsed", "no_match")


def test_fuzzy_threshold_is_respected() -> None:
    # fuzz.ratio("gren", "green") is about 88.9.
    assert colors("gren").stage == "fuzzy"
    assert extract_choice("gren", COLORS, UPPER, fuzzy_threshold=90).reason == "no_match"


def test_fuzzy_tie_is_no_match() -> None:
    # "car" is as close to "cart" as to "card".
    result = extract_choice("car", ["cart", "card", "bus"], ["A", "B", "C"], fuzzy_threshold=50)
    assert result == Extraction(None, "unparsed", "no_match")


def test_fuzzy_does_not_pick_among_ambiguous_mentions() -> None:
    # Fuzzy alone would pick "red or blu"; the output names two options, so nothing is picked.
    options = ["red", "blue", "red or blu", "green"]
    result = extract_choice("red or blue", options, UPPER)
    assert result == Extraction(None, "unparsed", "ambiguous")


def test_punctuation_only_output_is_no_match() -> None:
    assert colors("...?!") == Extraction(None, "unparsed", "no_match")


# --- Extraction and argument checks -------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "stage", "format_hit"),
    [
        ("B", "mark", True),
        ("blue", "text", True),
        ("gren", "fuzzy", False),
        ("none of these", "unparsed", False),
        ("", "unparsed", False),
    ],
)
def test_format_hit_per_stage(output: str, stage: str, format_hit: bool) -> None:
    result = colors(output)
    assert result.stage == stage
    assert result.format_hit is format_hit


def test_extraction_is_frozen() -> None:
    result = colors("B")
    with pytest.raises(AttributeError):
        result.index = 2  # type: ignore[misc]


def test_options_and_marks_must_have_the_same_length() -> None:
    with pytest.raises(ValueError, match="3 options but 4 marks"):
        extract_choice("A", ["red", "blue", "green"], UPPER)


@pytest.mark.parametrize("marks", [["A", "a"], ["A", ""], ["A", " B"]])
def test_marks_must_be_distinct_and_non_blank(marks: list[str]) -> None:
    with pytest.raises(ValueError, match="mark"):
        extract_choice("A", ["red", "blue"], marks)


def test_no_options_is_unparsed() -> None:
    assert extract_choice("A", [], []).stage == "unparsed"


def test_accepts_any_sequence_and_repeated_calls_agree() -> None:
    first = extract_choice("(C)", tuple(COLORS), tuple(UPPER))
    again = extract_choice("(C)", list(COLORS), list(UPPER))
    assert first == again == Extraction(2, "mark", "(C)")


# --- bare marks (read from a table built once per mark set) ------------------------------------

TWELVE = [str(i) for i in range(1, 13)]


@pytest.mark.parametrize(
    ("output", "marks", "index", "reason"),
    [
        ("B", UPPER, 1, "B"),
        ("b", UPPER, 1, "b"),
        ("(B)", UPPER, 1, "(B)"),
        ("(b)", UPPER, 1, "(b)"),
        ("B.", UPPER, 1, "B"),
        ("B)", UPPER, 1, "B"),
        ("(B).", UPPER, 1, "(B)"),
        ("c", LOWER, 2, "c"),
        ("(C)", LOWER, 2, "(C)"),
        ("(1)", TWELVE, 0, "(1)"),
        ("(10)", TWELVE, 9, "(10)"),
        ("12.", TWELVE, 11, "12"),
    ],
)
def test_bare_mark_reads_as_it_does_inside_whitespace(
    output: str, marks: list[str], index: int, reason: str
) -> None:
    options = [f"option {i}" for i in range(len(marks))]
    bare = extract_choice(output, options, marks)
    padded = extract_choice(f" {output}\n", options, marks)
    assert bare == padded
    assert (bare.index, bare.stage, bare.reason) == (index, "mark", reason)


def test_blank_output_is_empty_before_marks_are_checked() -> None:
    assert extract_choice(" ", ["red", "blue"], ["A", "a"]) == Extraction(None, "unparsed", "empty")
    with pytest.raises(ValueError, match="mark"):
        extract_choice("(A)", ["red", "blue"], ["A", "a"])
