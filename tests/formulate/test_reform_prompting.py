"""ReForm-Eval prompt construction: instruction pools, random marks, example turn, prefix, rotations."""

from __future__ import annotations

from lmmprobe.data import load_source
from lmmprobe.formulate import CHOICE_POOL, OPEN_POOL, formulate, mark_style
from lmmprobe.models.base import ModelIdentity
from lmmprobe.run import plan_requests, request_key
from lmmprobe.schema import FormulateConfig, RunSpec, Sample

SAMPLE = Sample(id="s", question="What color?", choices=["red", "blue", "green", "white"], answer=1)


def test_pools_have_five_instructions():
    assert len(CHOICE_POOL) >= 5 and len(OPEN_POOL) >= 5
    assert len(set(CHOICE_POOL)) == len(CHOICE_POOL)


def test_instruction_pool_rotates_with_the_repeat():
    cfg = FormulateConfig(instruction_pool=True)
    prompts = [formulate(SAMPLE, repeat=r, config=cfg).prompt for r in range(10)]
    for r, p in enumerate(prompts):
        assert p.endswith(CHOICE_POOL[r % 5].format(mark="A"))
    assert formulate(SAMPLE, repeat=3).prompt.endswith(CHOICE_POOL[0].format(mark="A"))


def test_random_marks_are_seeded_per_request():
    cfg = FormulateConfig(option_marks="random")
    styles = {mark_style(SAMPLE, r, cfg, seed=0) for r in range(30)}
    assert styles == {"upper", "lower", "number"}
    a = [formulate(SAMPLE, repeat=r, config=cfg).marks for r in range(10)]
    b = [formulate(SAMPLE, repeat=r, config=cfg).marks for r in range(10)]
    assert a == b
    req = formulate(SAMPLE, repeat=4, config=cfg)
    assert f"({req.marks[0]}) {req.options[0]}" in req.prompt


def test_in_context_example_turn():
    req = formulate(SAMPLE, config=FormulateConfig(in_context_example=True, option_marks="lower"))
    user, assistant, question = req.messages
    assert user.role == "user" and user.text.startswith("can you see the image?")
    assert "(a) yes; (b) no; (c) not sure; (d) maybe" in user.text
    assert assistant.role == "assistant" and assistant.text == "(a) yes"
    assert question.role == "user" and "What color?" in question.text
    lik = formulate(SAMPLE, config=FormulateConfig(in_context_example=True, method="likelihood"))
    assert lik.messages[1].text == "yes" and "Options" not in lik.messages[0].text


def test_response_prefix_is_sent_and_keyed():
    plain = formulate(SAMPLE)
    pre = formulate(SAMPLE, config=FormulateConfig(response_prefix="The answer is"))
    assert pre.response_prefix == "The answer is" and plain.response_prefix is None
    ident = ModelIdentity(backend="x", name="x")
    assert request_key(ident, plain) != request_key(ident, pre)


def test_circular_asks_every_rotation():
    spec = RunSpec(models=["x"], repeats=2, formulate=FormulateConfig(circular=True))
    rows = plan_requests([SAMPLE], spec, ModelIdentity(backend="x", name="x"))
    orders = [r.order for _, r in rows]
    assert orders == [[0, 1, 2, 3], [1, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]]
    golds = {r.order.index(SAMPLE.answer) for _, r in rows}
    assert golds == {0, 1, 2, 3}  # the right answer visits every position


def test_demo_open_ended_pool():
    s = Sample(id="o", question="Describe it.", answer=["a star"], formulation="open_ended")
    cfg = FormulateConfig(instruction_pool=True)
    assert [formulate(s, repeat=r, config=cfg).prompt.split("\n")[-1] for r in range(5)] == list(
        OPEN_POOL
    )
    assert load_source("demo,n=1").samples  # the demo still formulates with defaults


def test_blind_setting_sends_no_images():
    from lmmprobe.schema import ImageRef

    s = SAMPLE.model_copy(update={"images": [ImageRef.from_recipe(*_demo_recipe())]})
    seen = formulate(s)
    blind = formulate(s, config=FormulateConfig(blind=True))
    assert len(seen.images) == 1 and blind.images == []
    assert all(p.type == "text" for m in blind.messages for p in m.content)
    assert blind.prompt == seen.prompt
    ident = ModelIdentity(backend="x", name="x")
    assert request_key(ident, blind) != request_key(ident, seen)


def _demo_recipe():
    img = load_source("demo,n=1").samples[0].images[0]
    return img.renderer, img.recipe


def test_dysca_prompt_style():
    req = formulate(SAMPLE, config=FormulateConfig(prompt_style="dysca"))
    lines = req.prompt.split("\n")
    assert lines[0] == "Question: What color?"
    assert lines[1:5] == ["(A) red", "(B) blue", "(C) green", "(D) white"]
    assert lines[5].startswith(
        "Hint: Please answer the question and provide the correct option letter"
    )
    assert lines[-1] == "Your answer is:"
