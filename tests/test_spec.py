"""The one spec grammar, ``name[:target][,key=value...]`` (`lmmprobe.spec`), and its callers.

Every spec a user writes (``--model``, ``--data``, ``--retrieval``, ``--orchestrator``) is read
by `parse_spec`; a spec that breaks the grammar gets the same one-line error from each caller.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmmprobe.apex.orchestrators.llm import parse_spec as parse_orchestrator
from lmmprobe.data import parse_source_spec
from lmmprobe.models import parse_model_spec
from lmmprobe.spec import KEY, Spec, SpecError, format_spec, parse_spec
from lmmprobe.tools import open_collection


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("random", Spec("random")),
        ("demo,n=1000,seed=3", Spec("demo", None, {"n": "1000", "seed": "3"})),
        # A target may hold colons and @ (URLs, drive letters, devices in values).
        (
            "openai:meta-llama/Llama-3.2-11B-Vision-Instruct@https://api.together.xyz/v1,"
            "key_env=TOGETHER_API_KEY,max_requests=500",
            Spec(
                "openai",
                "meta-llama/Llama-3.2-11B-Vision-Instruct@https://api.together.xyz/v1",
                {"key_env": "TOGETHER_API_KEY", "max_requests": "500"},
            ),
        ),
        ("openai:m@http://user:pw@host:8000/v1", Spec("openai", "m@http://user:pw@host:8000/v1")),
        (
            "hf:/models/idefics3-8b,device=cuda:1",
            Spec("hf", "/models/idefics3-8b", {"device": "cuda:1"}),
        ),
        ("hf:C:/models/x", Spec("hf", "C:/models/x")),
        # A value is split at its first "=", and may be empty.
        ("first,note=a=b,empty=", Spec("first", None, {"note": "a=b", "empty": ""})),
        # Spaces around each part are ignored; "name:" is an empty target.
        (" random , seed = 3 ", Spec("random", None, {"seed": "3"})),
        ("hf: ./ckpt ", Spec("hf", "./ckpt")),
        ("hf:", Spec("hf", "")),
        (
            "demo,scenario=clean+corruption+print_attack",
            Spec("demo", None, {"scenario": "clean+corruption+print_attack"}),
        ),
    ],
)
def test_documented_specs_parse(text: str, expected: Spec) -> None:
    assert parse_spec(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "random,",
            "model spec 'random,': has an empty option (a stray comma?); options are key=value",
        ),
        (
            "first,delay",
            "model spec 'first,delay': option 'delay' has no '='; options are key=value",
        ),
        (
            "first,=3",
            "model spec 'first,=3': option '=3' has no key before '='; options are key=value",
        ),
        (
            "hf:x,my-key=1",
            # The value of an option named as a key is hidden even in an error (`_secrets`).
            "model spec 'hf:x,my-key=[redacted]': option 'my-key=[redacted]' has key 'my-key', "
            "not a name (letters, digits, _); options are key=value",
        ),
        (
            "random,seed=1,seed=2",
            "model spec 'random,seed=1,seed=2': option 'seed=2' repeats key 'seed'; each option is given once",
        ),
        ("", "model spec '': has no name (expected name[:target][,key=value...])"),
        (":x", "model spec ':x': has no name (expected name[:target][,key=value...])"),
    ],
)
def test_a_broken_spec_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(text, "model")
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)  # callers that caught ValueError still do


# -- every caller reads the grammar the same way, and says the same ------------------------------

_CALLERS: dict[str, tuple[str, Callable[[str], object], str]] = {
    # caller: (kind, call, prefix): the spec as written is prefix + head + options
    "model": ("model", parse_model_spec, "hf:./ckpt"),
    "data": ("data", parse_source_spec, "demo"),
    "retrieval": ("retrieval", open_collection, "hf:./saved"),
    "orchestrator": ("orchestrator", parse_orchestrator, "m@http://127.0.0.1:9/v1"),
}


@pytest.mark.parametrize("caller", sorted(_CALLERS))
@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (",timeout", "option 'timeout' has no '='; options are key=value"),
        (",=3", "option '=3' has no key before '='; options are key=value"),
        (
            ",timeout=1,timeout=2",
            "option 'timeout=2' repeats key 'timeout'; each option is given once",
        ),
        (",", "has an empty option (a stray comma?); options are key=value"),
    ],
)
def test_every_caller_gives_the_same_error(caller: str, options: str, problem: str) -> None:
    kind, call, head = _CALLERS[caller]
    written = head + options
    # The orchestrator's spec is what follows "openai:" on the command line.
    shown = f"openai:{written}" if caller == "orchestrator" else written
    with pytest.raises(ValueError) as info:
        call(written)
    assert str(info.value) == f"{kind} spec {shown!r}: {problem}"


def test_data_keeps_its_jsonl_path_shortcut() -> None:
    assert parse_source_spec("bench.jsonl") == ("jsonl", "bench.jsonl", {})
    assert parse_source_spec("runs/my.jsonl,limit=3") == ("jsonl", "runs/my.jsonl", {"limit": "3"})
    assert parse_source_spec("demo:extra,n=2") == ("demo", "extra", {"n": "2"})


# -- round trips -------------------------------------------------------------------------------

_NO_COMMA = st.characters(blacklist_characters=",", blacklist_categories=("Cs",))
_names = st.text(
    st.characters(blacklist_characters=",:", blacklist_categories=("Cs",)), min_size=1
).filter(lambda s: s.strip() == s and s != "")
_targets = st.none() | st.text(_NO_COMMA).filter(lambda s: s.strip() == s)
_keys = st.from_regex(KEY, fullmatch=True)
_values = st.text(_NO_COMMA).filter(lambda s: s.strip() == s)


@given(_names, _targets, st.dictionaries(_keys, _values, max_size=5))
def test_format_then_parse_gives_the_parts_back(
    name: str, target: str | None, options: dict[str, str]
) -> None:
    text = format_spec(name, target, options)
    parsed = parse_spec(text)
    assert parsed == Spec(name, target, options)
    assert list(parsed.options) == list(options)  # in the order written
    assert str(parsed) == text


@given(st.text(st.characters(blacklist_categories=("Cs",))))
def test_any_text_parses_or_is_a_spec_error_and_parsed_specs_reprint_stably(text: str) -> None:
    try:
        parsed = parse_spec(text)
    except SpecError as exc:
        assert str(exc).startswith(f"the spec {text!r}")
        return
    assert parse_spec(str(parsed)) == parsed
