"""Planned asks: the runner keys them without building requests, and the keys must agree.

A stored response is found by its key. The runner computes keys from planned asks
(`ask_key`) and builds full requests only for what it sends; if the two ever disagreed, a
re-run would miss every stored response (or, worse, a backend would see another prompt than
the one the key names).
"""

from __future__ import annotations

from typing import Any

import pytest
from PIL import Image

from lmmprobe.formulate import formulate, render_options
from lmmprobe.formulate.prompt import Formulator
from lmmprobe.run.keys import AskKeys, ask_key, request_key
from lmmprobe.schema import FormulateConfig, GenerationParams, ImageRef, Sample, Turn

IDENT = "backend=x|name=x|rev=1"


def _samples() -> list[Sample]:
    red = ImageRef.from_pil(Image.new("RGB", (4, 4), (255, 0, 0)))
    blue = ImageRef.from_pil(Image.new("RGB", (4, 4), (0, 0, 255)))
    return [
        Sample(id="c1", images=[red], question="Color?", choices=["red", "blue", "green"],
               answer=0),
        Sample(id="c2", images=[red, blue], question="Same color?", choices=["yes", "no"],
               answer=1, formulation="true_false", context="Two pictures.",
               history=[Turn(role="user", content="Hi"), Turn(role="assistant", content="Hello")]),
        Sample(id="c3", images=[], question="Pick one", choices=["a", "b", "c", "d", "e"],
               answer=4, metadata={"prompt_style": "dysca"}),
        Sample(id="o1", images=[blue], question="Describe.", answer=["a blue square"],
               formulation="open_ended"),
        Sample(id="f1", images=[blue], question="Describe it freely.", answer=["blue"],
               formulation="free_form"),
        Sample(id="k1", images=[red], question="What is written? 12:00 | x", answer=["12:00"],
               formulation="ocr"),
    ]  # fmt: skip


CONFIGS: list[dict[str, Any]] = [
    {},
    {"method": "likelihood"},
    {"method": "mark_logprob", "option_marks": "number"},
    {"option_marks": "random", "instruction_pool": True},
    {"in_context_example": True, "system_prompt": "Be brief.", "option_marks": "lower"},
    {"response_prefix": "Answer: (", "circular": True},
    {"prompt_style": "dysca", "blind": True},
    {"prompt_style": "reform", "instruction": ""},
    {"instruction": "Answer with one letter.", "shuffle_repeats": False},
]


@pytest.mark.parametrize("cfg", CONFIGS)
@pytest.mark.parametrize("gen", [GenerationParams(), GenerationParams(temperature=0.7)])
def test_ask_key_equals_request_key(cfg: dict[str, Any], gen: GenerationParams) -> None:
    config = FormulateConfig(**cfg)
    formulator = Formulator(config, gen, seed=3)
    run_keys = AskKeys(IDENT)  # one per model of a run, remembering repeated parts
    keys = set()
    for sample in _samples() * 2:
        for repeat in range(3):
            ask = formulator.ask(sample, repeat)
            key = run_keys(ask)
            assert key == ask_key(IDENT, ask) == request_key(IDENT, ask.to_request())
            keys.add(key)
    # Different samples and repeats are really keyed apart (the check above is not vacuous).
    assert len(keys) >= len(_samples())


@pytest.mark.parametrize("cfg", CONFIGS)
def test_one_formulator_for_a_run_gives_what_formulate_gives(cfg: dict[str, Any]) -> None:
    # The formulator remembers config-level parts across samples; nothing of one sample may
    # leak into the next one's request.
    config = FormulateConfig(**cfg)
    formulator = Formulator(config, GenerationParams(temperature=0.5), seed=9)
    for sample in _samples() * 2:
        for repeat in range(2):
            shared = formulator.ask(sample, repeat).to_request()
            alone = formulate(
                sample, repeat=repeat, config=config, gen=GenerationParams(temperature=0.5), seed=9
            )
            assert shared == alone


def test_requests_share_no_lists() -> None:
    formulator = Formulator(FormulateConfig(method="likelihood"))
    sample = _samples()[0]
    a, b = formulator.ask(sample).to_request(), formulator.ask(sample).to_request()
    assert a == b
    assert a.marks is not b.marks and a.options is not b.options
    assert a.candidates is not b.candidates and a.images is not b.images
    assert a.marks is not None
    a.marks.append("Z")  # a backend mutating its request does not change the next one
    assert formulator.ask(sample).to_request().marks == ["A", "B", "C"]


@pytest.mark.parametrize("style", ["upper", "lower", "number"])
def test_option_rendering_matches_render_options_for_any_text(style: str) -> None:
    # The formulator renders options through a per-layout template; texts with braces,
    # separators or marks of their own must come out exactly as render_options writes them.
    texts = ["{0}", "}{", "a; b", "(B) trap", "{}", "x.", "ünï", "{name}", "%s", "\\n"]
    formulator = Formulator(FormulateConfig(option_marks=style))  # type: ignore[arg-type]
    for n in range(2, len(texts) + 1):
        sample = Sample(id=f"t{n}", question="Q?", choices=texts[:n], answer=0)
        ask = formulator.ask(sample)
        assert ask.marks is not None
        assert render_options(texts[:n], ask.marks) in ask.prompt.split("\n")
