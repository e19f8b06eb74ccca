from collections import Counter

import pytest

from lmmprobe.formulate import formulate
from lmmprobe.imaging import vocab
from lmmprobe.schema import FormulateConfig, ImageRef
from lmmprobe.synth.metadata import GROUP_SUBTASKS, SUBTASKS, make_item
from lmmprobe.synth.questions import free_form_reference, item_questions, plural

IMG = ImageRef(path="x.png")


def _questions(n: int = 390, seed: int = 0):
    for i in range(n):
        item = make_item(i, seed, size=64)
        yield item, item_questions(item, IMG)


def test_three_question_types_per_item_cycling_every_subtask():
    seen = Counter()
    for item, qs in _questions(26):
        assert [q.metadata["question_type"] for q in qs] == [
            "multiple_choice",
            "true_false",
            "free_form",
        ]
        assert {q.metadata["subtask"] for q in qs} == {item.subtask}
        seen[item.subtask] += 1
    assert set(seen) == set(SUBTASKS) and set(seen.values()) == {2}
    assert len(SUBTASKS) >= 10


def test_distractors_never_equal_the_answer_and_never_repeat():
    for item, (mc, tf, _) in _questions():
        assert mc.choices is not None and len(mc.choices) == 4
        assert len(set(mc.choices)) == 4, (item.subtask, mc.choices)
        truth = mc.choices[mc.answer]
        assert mc.choices.count(truth) == 1
        assert tf.choices == ["yes", "no"]


def test_distractors_come_from_the_same_vocabulary_group():
    for item, (mc, _, _) in _questions():
        if item.subtask in GROUP_SUBTASKS:
            assert set(mc.choices) <= set(vocab.GLYPHS[item.subtask])
        elif item.subtask == "color":
            assert set(mc.choices) <= set(vocab.COLORS)
        elif item.subtask == "size":
            assert item.facts["smaller"] in mc.choices  # the other drawn object is offered
            assert set(mc.choices) <= set(vocab.GLYPHS[item.facts["group"]])


def test_multiple_choice_answer_is_the_drawn_truth():
    for item, (mc, _, _) in _questions(130):
        truth = mc.choices[mc.answer]
        f = item.facts
        expected = {
            "color": f.get("color"),
            "count": str(f.get("count")),
            "ocr": f.get("word"),
            "position": f.get("position"),
            "background": vocab.BACKGROUNDS[f["background"]],
            "style": vocab.STYLES[f["style"]].phrase,
        }.get(item.subtask, f.get("class"))
        assert truth == expected, item.subtask
        drawn = item.recipe["objects"]
        if item.subtask == "count":
            assert len(drawn) == f["count"]
        if item.subtask in GROUP_SUBTASKS:
            assert drawn[0]["name"] == truth


def test_true_false_negative_with_probability_one_half():
    answers = Counter(tf.answer for _, (_, tf, _) in _questions(600))
    assert 0.42 < answers[1] / 600 < 0.58


def test_styles_never_hide_the_asked_attribute():
    for item, _ in _questions(390):
        info = vocab.STYLES[item.recipe["style"]]
        if item.subtask == "color":
            assert info.keeps_color
        if item.subtask == "ocr":
            assert info.keeps_text


def test_free_form_reference_is_comma_joined_attributes():
    item = make_item(0, 0, subtasks=("animal",), size=64)
    ref = free_form_reference(item)
    f = item.facts
    background = vocab.BACKGROUNDS[f["background"]].removesuffix(" background")
    assert ref == (
        f"{f['color']} color {f['class']}, on {background} background, "
        f"{vocab.STYLES[f['style']].phrase} style"
    )
    ff = item_questions(item, IMG)[2]
    assert ff.formulation == "free_form" and ff.answer == [ref]
    assert ff.question.startswith(
        "Please describe the image. You can describe it from these aspects:"
    )


def test_items_are_independent_and_seeded():
    assert make_item(7, 3) == make_item(7, 3)
    assert make_item(7, 3) != make_item(7, 4)
    a = [item_questions(make_item(i, 1), IMG) for i in range(5)]
    b = [item_questions(make_item(i, 1), IMG) for i in range(5)]
    assert a == b


def test_choice_questions_ask_with_dyscas_wording_by_default():
    _, (mc, _tf, ff) = next(iter(_questions(1)))
    text = formulate(mc, config=FormulateConfig()).prompt
    assert text.startswith("Question: ") and text.endswith("Your answer is:")
    assert "(A) " in text and "Hint: Please answer the question" in text
    reform = formulate(mc, config=FormulateConfig(prompt_style="reform")).prompt
    assert not reform.startswith("Question: ")
    assert formulate(ff).prompt == ff.question  # free-form carries its own instruction


@pytest.mark.parametrize(
    ("noun", "expected"),
    [("dog", "dogs"), ("mouse", "mice"), ("bus", "buses"), ("cherry", "cherries"),
     ("hot air balloon", "hot air balloons"), ("fox", "foxes"), ("key", "keys")],
)  # fmt: skip
def test_plural(noun, expected):
    assert plural(noun) == expected


def test_unknown_subtask_is_rejected():
    with pytest.raises(ValueError, match="unknown subtasks"):
        make_item(0, 0, subtasks=("smell",))
