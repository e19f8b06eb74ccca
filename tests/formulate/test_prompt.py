"""Formulation: how a sample becomes a request (options, marks, order, messages, seeds)."""

from __future__ import annotations

from typing import Any

import pytest
from PIL import Image

from lmmprobe.formulate import OPEN_INSTRUCTION, formulate, option_marks, render_options
from lmmprobe.schema import FormulateConfig, GenerationParams, ImageRef, Request, Sample, Turn

CHOICES = ["red", "blue", "green", "yellow", "purple", "orange", "black", "white"]


def choice_sample(n: int = 4, id: str = "s1", **kw: Any) -> Sample:
    fields: dict[str, Any] = {
        "id": id,
        "question": "What color is the ball?",
        "choices": CHOICES[:n],
        "answer": 1,
    }
    fields.update(kw)
    return Sample(**fields)


def open_sample(**kw: Any) -> Sample:
    fields: dict[str, Any] = {
        "id": "o1",
        "question": "Describe the picture.",
        "answer": ["a ball"],
        "formulation": "open_ended",
    }
    fields.update(kw)
    return Sample(**fields)


def pil_ref(color: tuple[int, int, int]) -> ImageRef:
    return ImageRef.from_pil(Image.new("RGB", (4, 4), color))


def user_message_text(req: Request) -> str:
    assert req.messages[-1].role == "user"
    return req.messages[-1].text


# --- options and marks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("style", "rendered", "example"),
    [
        ("upper", "Options: (A) red; (B) blue; (C) green.", "(A)"),
        ("lower", "Options: (a) red; (b) blue; (c) green.", "(a)"),
        ("number", "Options: (1) red; (2) blue; (3) green.", "(1)"),
    ],
)
def test_options_rendered_in_mark_style(style: str, rendered: str, example: str) -> None:
    req = formulate(choice_sample(3), config=FormulateConfig(option_marks=style))  # type: ignore[arg-type]
    assert rendered in req.prompt
    assert req.prompt.startswith("What color is the ball?\n")
    # The default instruction asks for a mark and its example follows the style.
    assert f"e.g. {example}" in req.prompt
    assert req.prompt.index(rendered) < req.prompt.index("e.g.")
    assert req.marks == option_marks(style, 3)  # type: ignore[arg-type]
    assert req.method == "generate"
    assert req.candidates is None
    assert user_message_text(req) == req.prompt


@pytest.mark.parametrize(
    ("style", "n", "expected"),
    [
        ("upper", 4, ["A", "B", "C", "D"]),
        ("lower", 2, ["a", "b"]),
        ("number", 12, [str(i) for i in range(1, 13)]),
    ],
)
def test_option_marks(style: str, n: int, expected: list[str]) -> None:
    assert option_marks(style, n) == expected  # type: ignore[arg-type]


def test_too_many_options_for_letters() -> None:
    with pytest.raises(ValueError):
        option_marks("upper", 27)


def test_render_options_needs_one_mark_per_option() -> None:
    assert render_options(["x", "y"], ["1", "2"]) == "Options: (1) x; (2) y."
    with pytest.raises(ValueError):
        render_options(["x", "y"], ["A"])


def test_custom_instruction_replaces_default() -> None:
    req = formulate(choice_sample(), config=FormulateConfig(instruction="Pick one letter."))
    assert req.prompt.endswith("Pick one letter.")
    assert "e.g." not in req.prompt


def test_empty_instruction_means_none() -> None:
    req = formulate(choice_sample(2), config=FormulateConfig(instruction=""))
    assert req.prompt == "What color is the ball?\nOptions: (A) red; (B) blue."


def test_context_comes_before_question() -> None:
    req = formulate(choice_sample(2, context="The ball is on the grass."))
    assert req.prompt.startswith("The ball is on the grass.\nWhat color is the ball?\n")


# --- option order --------------------------------------------------------------------------------


@pytest.mark.parametrize("shuffle", [True, False])
def test_repeat_zero_keeps_original_order(shuffle: bool) -> None:
    s = choice_sample(8)
    req = formulate(s, repeat=0, config=FormulateConfig(shuffle_repeats=shuffle), seed=9)
    assert req.order == list(range(8))
    assert req.options == CHOICES


def test_repeats_shuffle_deterministically() -> None:
    s = choice_sample(8)
    orders = [formulate(s, repeat=r, seed=3).order for r in range(1, 6)]
    again = [formulate(s, repeat=r, seed=3).order for r in range(1, 6)]
    assert orders == again
    assert any(o != list(range(8)) for o in orders)
    assert len({tuple(o) for o in orders if o}) > 1  # repeats differ from each other
    other_seed = [formulate(s, repeat=r, seed=4).order for r in range(1, 6)]
    assert other_seed != orders


@pytest.mark.parametrize("repeat", [1, 2, 3, 7])
@pytest.mark.parametrize("style", ["upper", "lower", "number"])
def test_order_maps_display_position_to_original_index(repeat: int, style: str) -> None:
    s = choice_sample(8)
    req = formulate(s, repeat=repeat, config=FormulateConfig(option_marks=style), seed=11)  # type: ignore[arg-type]
    assert req.order is not None
    assert req.options is not None
    assert req.marks is not None
    assert sorted(req.order) == list(range(8))
    assert req.options == [CHOICES[i] for i in req.order]
    # The prompt shows exactly that order with the marks.
    assert render_options(req.options, req.marks) in req.prompt
    assert req.repeat == repeat


def test_shuffle_depends_on_sample_id() -> None:
    a = [formulate(choice_sample(8, id="a"), repeat=r).order for r in range(1, 5)]
    b = [formulate(choice_sample(8, id="b"), repeat=r).order for r in range(1, 5)]
    assert a != b


def test_shuffle_repeats_false_keeps_order() -> None:
    cfg = FormulateConfig(shuffle_repeats=False)
    for r in range(5):
        req = formulate(choice_sample(8), repeat=r, config=cfg, seed=1)
        assert req.order == list(range(8))
        assert req.options == CHOICES


def test_formulate_does_not_mutate_sample() -> None:
    s = choice_sample(8)
    before = s.model_dump()
    formulate(s, repeat=3, seed=2)
    assert s.model_dump() == before


# --- likelihood ----------------------------------------------------------------------------------


@pytest.mark.parametrize("repeat", [0, 1, 4])
def test_likelihood_method(repeat: int) -> None:
    s = choice_sample(4)
    req = formulate(s, repeat=repeat, config=FormulateConfig(method="likelihood"), seed=5)
    assert req.method == "likelihood"
    assert "Options:" not in req.prompt
    for text in CHOICES[:4]:
        assert f") {text}" not in req.prompt
    assert req.candidates == req.options
    assert req.order is not None
    assert req.candidates == [CHOICES[i] for i in req.order]
    # Same display order as the generate formulation of the same repeat.
    assert req.order == formulate(s, repeat=repeat, seed=5).order
    assert "mark" not in req.prompt  # no instruction to pick a mark that is not shown


def test_likelihood_true_false_candidates() -> None:
    s = Sample(id="t", question="Is it red?", answer=0, formulation="true_false")
    req = formulate(s, config=FormulateConfig(method="likelihood"))
    assert req.candidates == ["yes", "no"]
    assert req.method == "likelihood"


# --- open-ended ----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["generate", "likelihood"])
def test_open_ended_has_no_options(method: str) -> None:
    req = formulate(open_sample(), config=FormulateConfig(method=method))  # type: ignore[arg-type]
    assert req.method == "generate"
    assert req.options is None
    assert req.candidates is None
    assert req.marks is None
    assert req.order is None
    assert "Options:" not in req.prompt
    assert req.prompt == f"Describe the picture.\n{OPEN_INSTRUCTION}"


# --- messages ------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_images", [0, 1, 3])
def test_images_are_parts_before_the_text(n_images: int) -> None:
    images = [pil_ref((i * 40, 0, 0)) for i in range(n_images)]
    s = choice_sample(2, images=images)
    req = formulate(s)
    (user,) = req.messages
    assert user.role == "user"
    assert [p.type for p in user.content] == ["image"] * n_images + ["text"]
    assert [p.image for p in user.content[:n_images]] == list(range(n_images))
    assert user.content[-1].text == req.prompt
    assert [im.content_hash() for im in req.images] == [im.content_hash() for im in images]


def test_system_prompt_and_history_become_messages_in_order() -> None:
    s = choice_sample(
        2,
        images=[pil_ref((1, 2, 3))],
        history=[
            Turn(role="user", content="Look at this."),
            Turn(role="assistant", content="I see a ball."),
        ],
    )
    req = formulate(s, config=FormulateConfig(system_prompt="Be terse."))
    assert [m.role for m in req.messages] == ["system", "user", "assistant", "user"]
    assert [m.text for m in req.messages[:3]] == ["Be terse.", "Look at this.", "I see a ball."]
    assert all(p.type == "text" for m in req.messages[:3] for p in m.content)
    assert req.messages[-1].text == req.prompt
    assert req.messages[-1].content[0].type == "image"


def test_no_system_message_by_default() -> None:
    req = formulate(choice_sample(2))
    assert [m.role for m in req.messages] == ["user"]


# --- generation seeds ----------------------------------------------------------------------------


@pytest.mark.parametrize("repeat", [0, 1, 5])
def test_greedy_leaves_seed_none(repeat: int) -> None:
    req = formulate(choice_sample(), repeat=repeat, gen=GenerationParams(temperature=0.0), seed=7)
    assert req.gen.seed is None


def test_sampling_sets_a_seed_per_repeat() -> None:
    gen = GenerationParams(temperature=0.7, max_new_tokens=5)
    seeds = [formulate(choice_sample(), repeat=r, gen=gen, seed=7).gen.seed for r in range(4)]
    assert None not in seeds
    assert len(set(seeds)) == 4
    again = [formulate(choice_sample(), repeat=r, gen=gen, seed=7).gen.seed for r in range(4)]
    assert seeds == again
    req = formulate(choice_sample(), repeat=1, gen=gen, seed=7)
    assert req.gen.temperature == 0.7
    assert req.gen.max_new_tokens == 5
    assert gen.seed is None  # the caller's params are not modified


def test_request_key_is_left_for_the_runner() -> None:
    req = formulate(choice_sample())
    assert req.key == ""
    assert req.sample_id == "s1"
