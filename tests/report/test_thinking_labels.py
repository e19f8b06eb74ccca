"""Model options that turn thinking on or off are named in words (issue 25, item 6).

Thinking on and off of one checkpoint are two model specs differing in an option; the
comparison (``lmmprobe compare``, serve's compare page) and the report name the side by what
the option does: ``thinking off``, ``effort high``, ``thinking budget 512``.
"""

from __future__ import annotations

import pytest

from lmmprobe.report.compare import checkpoint, checkpoint_pair
from lmmprobe.report.settings import model_setting, sides_apart
from lmmprobe.schema import RunSpec

URL = "openai:qwen3-vl@http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("hf:/m/qwen3-vl,enable_thinking=false", ["thinking off"]),
        ("hf:/m/qwen3-vl,chat_template_kwargs=enable_thinking:false", ["thinking off"]),
        ('hf:/m/x,chat_template_kwargs={"enable_thinking": true}', ["thinking on"]),
        ("hf:/m/x,chat_template_kwargs=thinking_budget:512", ["thinking budget 512"]),
        (f"{URL},reasoning_effort=high", ["effort high"]),
        (f"{URL},reasoning_effort=low,think=off", ["effort low", "think off"]),
        ("hf:/m/x,dtype=float32", []),
        ("random,seed=7", []),
        ("not a spec,=", []),  # a stored spec that no longer parses names nothing
    ],
)
def test_model_setting_names_the_thinking_options(spec: str, words: list[str]) -> None:
    assert model_setting(spec) == words


def test_sides_apart_says_what_tells_two_specs_of_one_checkpoint_apart() -> None:
    off = "hf:/m/q,chat_template_kwargs=enable_thinking:false"
    assert sides_apart("hf:/m/q", off) == (["thinking default"], ["thinking off"])
    # Two spellings of one switch are compared as thinking, not as two unrelated options.
    assert sides_apart("hf:/m/q,chat_template_kwargs=enable_thinking:true", "hf:/m/q,"
                       "enable_thinking=false") == (["thinking on"], ["thinking off"])  # fmt: skip
    assert sides_apart(f"{URL},reasoning_effort=high", f"{URL},reasoning_effort=low") == (
        ["effort high"],
        ["effort low"],
    )
    # Other options as key=value; the run settings only one side changed follow.
    blind = RunSpec.model_validate({"formulate": {"blind": True}})
    assert sides_apart("random,seed=7", "random", blind, RunSpec()) == (
        ["seed=7", "blind"],
        ["seed default"],
    )
    assert sides_apart("random", "random") == ([], [])


def test_checkpoint_pair_finds_the_one_pair_of_one_checkpoint() -> None:
    on, off = "hf:/m/q", "hf:/m/q,enable_thinking=false"
    assert checkpoint(off) == checkpoint(on) == "hf:/m/q"
    assert checkpoint(f"{URL},reasoning_effort=high") == URL
    assert checkpoint_pair(["first", on, "random"], ["random", off]) == (on, off)
    models = ["first", off, "random", on]
    assert checkpoint_pair(models, models) == (off, on)  # one run: its order
    assert checkpoint_pair(["first"], ["random"]) is None
    # Two candidate pairs: no guess (the caller asks which).
    assert checkpoint_pair([on, "random"], [off, "random,seed=7"]) is None
