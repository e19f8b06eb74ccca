"""Prompt styles are registry entries: the built-ins word prompts as before, `auto` follows
each sample, and a style registered by a user's module is chosen by name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lmmprobe.formulate import PROMPT_STYLES, ChoicePrompt, formulate
from lmmprobe.formulate.pools import DYSCA_CHOICE_HINT
from lmmprobe.formulate.prompt import Formulator
from lmmprobe.registry import RegistryError
from lmmprobe.schema import FormulateConfig, Sample

SAMPLE = Sample(id="s", question="What color?", choices=["red", "blue"], answer=1)


def prompt(style: str, sample: Sample = SAMPLE, **config: object) -> str:
    return formulate(sample, config=FormulateConfig(prompt_style=style, **config)).prompt


def test_builtin_styles_are_registered() -> None:
    assert {"auto", "dysca", "reform"} <= set(PROMPT_STYLES.names())


def test_reform_and_dysca_wording() -> None:
    reform = prompt("reform").split("\n")
    assert reform[:2] == ["What color?", "Options: (A) red; (B) blue."]
    assert len(reform) == 3  # and the pool's instruction
    assert prompt("dysca") == f"Question: What color?\n(A) red\n(B) blue\n{DYSCA_CHOICE_HINT}"
    assert prompt("dysca", instruction="Pick one.").endswith("(B) blue\nPick one.")
    assert prompt("reform", instruction="") == "What color?\nOptions: (A) red; (B) blue."


def test_auto_follows_the_sample() -> None:
    synthetic = SAMPLE.model_copy(update={"metadata": {"prompt_style": "dysca"}})
    assert prompt("auto", synthetic) == prompt("dysca", synthetic)
    assert prompt("auto") == prompt("reform")
    odd = SAMPLE.model_copy(update={"metadata": {"prompt_style": "no-such-style"}})
    assert prompt("auto", odd) == prompt("reform", odd)


def test_styles_do_not_apply_when_options_are_not_shown() -> None:
    # Likelihood inference scores the options instead of showing them.
    assert prompt("dysca", method="likelihood") == prompt("reform", method="likelihood")


@pytest.fixture
def numbered() -> Iterator[str]:
    """A style a user's module registers: options as a numbered list, no instruction."""

    @PROMPT_STYLES.register("numbered-list")
    def numbered_list(p: ChoicePrompt) -> list[str]:
        """Options one per line after their mark, then 'Answer:'."""
        return [
            p.question,
            *(f"{m}. {o}" for m, o in zip(p.marks, p.options, strict=True)),
            "Answer:",
        ]

    yield "numbered-list"
    PROMPT_STYLES.unregister("numbered-list")


def test_registered_style_is_chosen_by_name(numbered: str) -> None:
    config = FormulateConfig(prompt_style=numbered, option_marks="number")
    ask = Formulator(config).ask(SAMPLE.model_copy(update={"context": "A ball."}))
    assert ask.prompt == "A ball.\nWhat color?\n1. red\n2. blue\nAnswer:"
    assert (
        PROMPT_STYLES.summary(numbered) == "Options one per line after their mark, then 'Answer:'."
    )


def test_unknown_style_lists_the_known_ones() -> None:
    with pytest.raises(
        RegistryError, match="unknown prompt style 'foo'; known: auto, benchmark, dysca, reform"
    ):
        Formulator(FormulateConfig(prompt_style="foo"))
