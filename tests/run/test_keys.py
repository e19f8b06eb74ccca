"""Cache keys: one serializer of exactly what changes a model's output, and planned requests.

A stored response is found by its key. Two requests that would send different things must
never share a key (one would be answered with the other's stored response), and requests that
send the same thing should (a re-run, another sample with the same question and image).
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from lmmprobe.formulate import formulate, render_options
from lmmprobe.formulate.ask import Ask
from lmmprobe.formulate.prompt import Formulator
from lmmprobe.models.base import ModelIdentity
from lmmprobe.run import plan_requests, request_key
from lmmprobe.run.keys import ask_key
from lmmprobe.schema import (
    ContentPart,
    FormulateConfig,
    GenerationParams,
    ImageRef,
    Message,
    Request,
    RunSpec,
    Sample,
    Turn,
    register_renderer,
)

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


def _request(**kw: Any) -> Request:
    fields: dict[str, Any] = {
        "sample_id": "s",
        "method": "generate",
        "messages": [
            Message(role="system", content=[ContentPart(type="text", text="Be brief.")]),
            Message(
                role="user",
                content=[ContentPart(type="image", image=0), ContentPart(type="text", text="Q?")],
            ),
        ],
        "prompt": "Q?",
        "images": [ImageRef.from_pil(Image.new("RGB", (2, 2), (1, 2, 3)))],
    }
    fields.update(kw)
    return Request(**fields)


def _user(*texts: str) -> list[Message]:
    return [Message(role="user", content=[ContentPart(type="text", text=t) for t in texts])]


def test_key_leaves_out_sample_repeat_and_scorer_fields() -> None:
    base = request_key(IDENT, _request())
    same = _request(sample_id="other", repeat=3, options=["a"], marks=["A"], order=[0], key="stale")
    assert request_key(IDENT, same) == base
    # An equal image through another (equal) picture object: keyed by content.
    again = _request(images=[ImageRef.from_pil(Image.new("RGB", (2, 2), (1, 2, 3)))])
    assert request_key(IDENT, again) == base
    ident = ModelIdentity(backend="x", name="m")
    assert request_key(ident, _request()) == request_key(ident.cache_id(), _request())


def test_everything_sent_changes_the_key() -> None:
    other_image = ImageRef.from_pil(Image.new("RGB", (2, 2), (9, 9, 9)))
    variants: list[tuple[str, Request]] = [
        ("identity", _request()),
        ("method", _request(method="likelihood", candidates=["a"])),
        ("system text", _request(messages=[*_user("Q?")])),
        ("role", _request(messages=[Message(role="assistant", content=[
            ContentPart(type="text", text="Q?")])])),
        ("text", _request(messages=_user("Q!"))),
        ("image", _request(images=[other_image])),
        ("no image", _request(images=[])),
        ("image part", _request(messages=[Message(role="user", content=[
            ContentPart(type="image", image=1), ContentPart(type="text", text="Q?")])])),
        ("candidates", _request(candidates=["red"])),
        ("no candidates", _request(candidates=[])),
        ("prefix", _request(response_prefix="(")),
        ("empty prefix", _request(response_prefix="")),
        ("max tokens", _request(gen=GenerationParams(max_new_tokens=5))),
        ("temperature", _request(gen=GenerationParams(temperature=0.5))),
        ("top_p", _request(gen=GenerationParams(top_p=0.9))),
        ("seed", _request(gen=GenerationParams(seed=1))),
    ]  # fmt: skip
    keys = {request_key(IDENT, _request())}
    keys.add(request_key("backend=y|name=x|rev=1", variants[0][1]))
    for _, req in variants[1:]:
        keys.add(request_key(IDENT, req))
    assert len(keys) == len(variants) + 1


def test_key_format_is_unchanged() -> None:
    # Stored answers are found by these keys, and the random baseline draws its answer from
    # them: a new key format re-asks every stored request and moves the baseline's numbers.
    # (Values of the format as first written, when likelihood was spelled "loglikelihood".)
    assert request_key(IDENT, _request()) == "0c26ecb96f870a679fc268ee62de016d"
    likelihood = _request(method="likelihood", candidates=["red", "blue"])
    assert request_key(IDENT, likelihood) == "9b315feadb3482806256eeca759a719b"


def test_every_request_field_is_keyed_or_deliberately_left_out() -> None:
    # A field added to Request or GenerationParams must be placed here on purpose: into
    # request_key if it changes what a model returns, or into the left-out set if it does not.
    keyed = {"method", "messages", "images", "candidates", "response_prefix", "gen", "video"}
    left_out = {"key", "sample_id", "repeat", "prompt", "options", "marks", "order"}
    assert set(Request.model_fields) == keyed | left_out
    assert set(GenerationParams.model_fields) == {"max_new_tokens", "temperature", "top_p", "seed"}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"candidates": ["ab", "c"]}, {"candidates": ["a", "bc"]}),
        ({"candidates": ['a", "b']}, {"candidates": ["a", "b"]}),
        ({"messages": _user("ab", "c")}, {"messages": _user("a", "bc")}),
        ({"messages": _user('x"]]')}, {"messages": _user("x")}),
        ({"response_prefix": "null"}, {"response_prefix": None}),
        ({"messages": _user("\x00")}, {"messages": _user("")}),
        ({"messages": _user("\ud800")}, {"messages": _user("\ud801")}),  # lone surrogates
    ],
)
def test_no_text_shifts_into_another_field(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert request_key(IDENT, _request(**a)) != request_key(IDENT, _request(**b))


register_renderer("test-keys-box", "1", lambda r: Image.new("RGB", (r["size"], r["size"])))


def _png_b64(color: tuple[int, int, int]) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (3, 3), color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


@pytest.mark.parametrize("kind", ["path", "recipe", "data_b64"])
def test_updated_image_copy_gets_a_new_hash_and_key(
    kind: str, tmp_path: Path, write_png: Any
) -> None:
    first, second = tmp_path / "a.png", tmp_path / "b.png"
    write_png(first, color=(1, 1, 1))
    write_png(second, color=(2, 2, 2))
    ref, update, fresh = {
        "path": (ImageRef.from_path(first), {"path": str(second)}, ImageRef.from_path(second)),
        "recipe": (
            ImageRef.from_recipe("test-keys-box", {"size": 3}),
            {"recipe": {"size": 4}},
            ImageRef.from_recipe("test-keys-box", {"size": 4}),
        ),
        "data_b64": (
            ImageRef.from_base64(_png_b64((1, 1, 1))),
            {"data_b64": _png_b64((2, 2, 2))},
            ImageRef.from_base64(_png_b64((2, 2, 2))),
        ),
    }[kind]
    req = _request(images=[ref])
    key = request_key(IDENT, req)  # hashes `ref`, which remembers its hash
    copied = ref.model_copy(update=update)
    assert copied.content_hash() != ref.content_hash()
    assert request_key(IDENT, _request(images=[copied])) != key
    # The copy names the same content as a reference built from scratch.
    assert copied.content_hash() == fresh.content_hash()
    # A request copied with the new image is keyed anew too.
    moved = req.model_copy(update={"images": [copied]})
    assert request_key(IDENT, moved) != key


@pytest.mark.parametrize("cfg", CONFIGS)
@pytest.mark.parametrize("gen", [GenerationParams(), GenerationParams(temperature=0.7)])
def test_planned_requests_are_keyed(cfg: dict[str, Any], gen: GenerationParams) -> None:
    spec = RunSpec(models=["x"], formulate=FormulateConfig(**cfg), gen=gen, seed=3, repeats=5)
    ident = ModelIdentity(backend="x", name="x")
    rows = plan_requests(_samples() * 2, spec, ident)
    for _, ask in rows:
        request = ask.to_request()
        assert ask.key == request.key == request_key(ident, request)
    # Different samples and repeats are really keyed apart (the check above is not vacuous).
    assert len({ask.key for _, ask in rows}) >= len(_samples())


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


@pytest.mark.parametrize(
    "text", ["", "3:abc", "\x00", "line\nbreak", "caf\u00e9 \U0001f600", "lone \ud800 surrogate"]
)
def test_ask_key_is_the_key_of_the_request_it_builds(text: str) -> None:
    # The runner keys asks without building their requests; the key must be the request's
    # whatever the texts hold (length-prefix look-alikes, NUL, lone surrogates).
    red = _samples()[0].images[0]
    for images, preamble, candidates, prefix in [
        ([], (), None, None),
        ([red, red], (("system", text), ("user", "Hi"), ("assistant", text)), [text, "B"], text),
    ]:
        ask = Ask(
            sample_id="s", repeat=1, method="likelihood" if candidates else "generate",
            prompt=text, images=images, candidates=candidates, options=None, marks=None,
            order=None, response_prefix=prefix, gen=GenerationParams(seed=4), preamble=preamble,
        )  # fmt: skip
        assert ask_key(IDENT, ask) == request_key(IDENT, ask.to_request())
