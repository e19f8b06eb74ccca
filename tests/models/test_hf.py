"""The hf: backend on tiny random-weight models built locally, through the public spec."""

from __future__ import annotations

import logging

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from lmmprobe import RunSpec, evaluate  # noqa: E402
from lmmprobe.data import load_source  # noqa: E402
from lmmprobe.formulate import formulate  # noqa: E402
from lmmprobe.models import load_model  # noqa: E402
from lmmprobe.models.tiny import TINY_ARCHS, tiny_model_path  # noqa: E402
from lmmprobe.run import request_key, run_model  # noqa: E402
from lmmprobe.schema import FormulateConfig, GenerationParams  # noqa: E402
from lmmprobe.store import Store  # noqa: E402


@pytest.fixture(scope="module", params=TINY_ARCHS)
def arch_model(request):
    path = tiny_model_path(request.param)
    model = load_model(f"hf:{path},device=cpu,dtype=float32,batch_size=4")
    return request.param, model


def requests_for(model, n=3, method="generate", max_new_tokens=4):
    samples = load_source(f"demo,n={n},size=64").samples
    cfg = FormulateConfig(method=method)
    out = []
    for s in samples:
        r = formulate(s, config=cfg, gen=GenerationParams(max_new_tokens=max_new_tokens))
        r.key = request_key(model.identity, r)
        out.append(r)
    return out


def test_loads_by_path_with_identity(arch_model):
    arch, model = arch_model
    assert model.identity.backend == "hf" and arch in model.identity.name
    assert model.identity.fingerprint and len(model.identity.fingerprint) == 32
    assert model.capabilities.likelihood


def test_generate_batched_equals_one_by_one(arch_model):
    _, model = arch_model
    reqs = requests_for(model, n=3)
    batched = [r.text for r in model.generate(reqs)]
    single = [model.generate([r])[0].text for r in reqs]
    assert all(isinstance(t, str) for t in batched)
    assert batched == single


def test_ranking_matches_naive_scoring(arch_model):
    _, model = arch_model
    for req in requests_for(model, n=2, method="likelihood"):
        fast = model.loglikelihood([req])[0]
        naive = model.naive_scores(req)
        assert fast.loglikelihoods == pytest.approx(naive, abs=1e-4)
        assert fast.token_counts and all(c >= 1 for c in fast.token_counts)


def test_resume_through_the_runner(arch_model, tmp_path):
    arch, model = arch_model
    samples = load_source("demo,n=4,size=64").samples
    spec = RunSpec(models=[arch], formulate={"method": "likelihood"})
    with Store(tmp_path / "db") as store:
        first = run_model(arch, model, samples, spec, store)
        again = run_model(arch, model, samples, spec, store)
    assert first.called == 4 and first.errors == 0
    assert again.called == 0 and again.cached == 4
    assert [s.prediction for s in first.scores] == [s.prediction for s in again.scores]


def test_alias_and_demo_end_to_end(tmp_path):
    ev = evaluate(
        models=["hf:tiny-llava,device=cpu"], data="demo,n=8,size=64", db=str(tmp_path / "db"),
        out=str(tmp_path / "o"), gen={"max_new_tokens": 4},
    )  # fmt: skip
    m = ev.results.models["hf:tiny-llava,device=cpu"].metrics
    assert m["error_rate"].value == 0.0 and m["accuracy"].n == 8
    ev2 = evaluate(
        models=["hf:tiny-llava,device=cpu"], data="demo,n=8,size=64", db=str(tmp_path / "db"),
        out=str(tmp_path / "o2"), formulate={"method": "likelihood"},
    )  # fmt: skip
    m2 = ev2.results.models["hf:tiny-llava,device=cpu"].metrics
    assert m2["format_hit_rate"].value == 1.0 and m2["error_rate"].value == 0.0


def test_out_of_memory_lowers_the_batch_size(tmp_path, caplog):
    model = load_model(f"hf:{tiny_model_path('llava')},device=cpu,batch_size=4")
    real = model.model.generate

    def limited(*args, **kwargs):
        if kwargs["input_ids"].shape[0] > 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(*args, **kwargs)

    model.model.generate = limited  # the transformers model stands in for a small GPU
    caplog.set_level(logging.WARNING)
    out = model.generate(requests_for(model, n=4))
    assert all(r.ok for r in out) and model._batch == 1
    assert "batch size lowered" in caplog.text


def test_too_many_images_is_a_typed_error():
    from lmmprobe.schema import ImageRef, Sample

    model = load_model(f"hf:{tiny_model_path('paligemma')},device=cpu")
    img = load_source("demo,n=1,size=64").samples[0].images[0]
    s = Sample(id="two", images=[img, ImageRef.from_recipe(img.renderer, img.recipe)], question="q?",
               choices=["a", "b"], answer=0)  # fmt: skip
    r = formulate(s)
    r.key = "k"
    out = model.generate([r])
    assert out[0].error is not None and out[0].error.type == "unsupported_input"


def test_ranking_multi_token_candidates_matches_naive(arch_model):
    from lmmprobe.schema import Sample

    _, model = arch_model
    img = load_source("demo,n=1,size=64").samples[0].images[0]
    s = Sample(
        id="long", images=[img], question="Describe the picture.", answer=0,
        choices=["a red star on gray", "blue", "two green squares and a circle"],
    )  # fmt: skip
    req = formulate(s, config=FormulateConfig(method="likelihood"))
    req.key = "k"
    fast = model.loglikelihood([req])[0]
    assert max(fast.token_counts) > 1 and min(fast.token_counts) >= 1
    assert fast.loglikelihoods == pytest.approx(model.naive_scores(req), abs=1e-4)


# -- every turn the key covers reaches the model ----------------------------------------------

SYSTEM = "Be brief."
HISTORY = [("user", "Is the picture a photo?"), ("assistant", "No, a drawing.")]


def _conversation(method: str = "generate", *, preamble: bool = True):
    """A request with a system prompt, the in-context example and two history turns."""
    from lmmprobe.schema import Sample, Turn

    img = load_source("demo,n=1,size=64").samples[0].images[0]
    history = [Turn(role=r, content=t) for r, t in HISTORY] if preamble else []
    s = Sample(
        id="talk", images=[img], question="What color is the shape?", choices=["red", "blue"],
        answer=0, history=history,
    )  # fmt: skip
    cfg = FormulateConfig(
        method="likelihood" if method == "loglikelihood" else "generate",
        system_prompt=SYSTEM if preamble else None,
        in_context_example=preamble,
    )
    req = formulate(s, config=cfg, gen=GenerationParams(max_new_tokens=3))
    req.key = f"talk-{method}-{preamble}"
    return req


def test_plain_prompt_layout():
    from lmmprobe.models.hf import plain_prompt
    from lmmprobe.schema import ContentPart, Message

    def msg(role, text, image=False):
        parts = [ContentPart(type="image", image=0)] if image else []
        return Message(role=role, content=[*parts, ContentPart(type="text", text=text)])

    question = [msg("user", "What is it?", image=True)]
    assert plain_prompt(question, images="<image>") == "<image>Question: What is it? Answer:"
    full = [msg("system", "Be brief."), msg("user", "Q1"), msg("assistant", "A1"),
            msg("user", "Q2"), msg("user", "Q3")]  # fmt: skip
    assert plain_prompt(full, response_prefix="The answer is") == (
        "System: Be brief.\nQuestion: Q1 Answer: A1\nQuestion: Q2\nQuestion: Q3 Answer: The answer is"
    )


@pytest.fixture(scope="module", params=TINY_ARCHS)
def plain_model(request):
    """Each architecture without a chat template, as original BLIP-2 and PaliGemma ship."""
    path = tiny_model_path(request.param, chat_template=False)
    model = load_model(f"hf:{path},device=cpu,dtype=float32,batch_size=2")
    assert not getattr(model.processor, "chat_template", None)
    assert not getattr(model.tokenizer, "chat_template", None)
    return model


def _sent_text(model, request) -> str:
    ids = model.prompt_inputs(request)["input_ids"][0]
    return str(model.tokenizer.decode(ids, skip_special_tokens=False))


def _assert_in_order(text: str, pieces: list[str]) -> None:
    pos = 0
    for piece in pieces:
        found = text.find(piece, pos)
        assert found >= 0, f"{piece!r} missing after position {pos} of {text!r}"
        pos = found + len(piece)


def test_templateless_prompt_sends_system_example_and_history(plain_model):
    model = plain_model
    for method in ("generate", "loglikelihood"):
        req = _conversation(method)
        roles = [m.role for m in req.messages]
        assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
        example_q, example_a = req.messages[1].text, req.messages[2].text  # ReForm-Eval's
        sent = _sent_text(model, req)
        _assert_in_order(sent, [
            f"System: {SYSTEM}\n", f"Question: {example_q} Answer: {example_a}\n",
            f"Question: {HISTORY[0][1]} Answer: {HISTORY[1][1]}\n",
            f"Question: {req.prompt} Answer:",
        ])  # fmt: skip


def test_templateless_generate_uses_the_whole_conversation(plain_model):
    model = plain_model
    full, bare = _conversation(), _conversation(preamble=False)
    out = model.generate([full, bare])
    assert all(r.ok for r in out)
    # The batch sent exactly the tokens `prompt_inputs` shows, preamble included.
    assert out[0].usage.prompt_tokens == model.prompt_inputs(full)["input_ids"].shape[1]
    assert out[1].usage.prompt_tokens == model.prompt_inputs(bare)["input_ids"].shape[1]
    assert out[0].usage.prompt_tokens > out[1].usage.prompt_tokens


def test_templateless_likelihood_uses_the_whole_conversation(plain_model):
    model = plain_model
    full, bare = _conversation("loglikelihood"), _conversation("loglikelihood", preamble=False)
    scored, plain = model.loglikelihood([full, bare])
    assert scored.ok and plain.ok
    assert scored.loglikelihoods == pytest.approx(model.naive_scores(full), abs=1e-4)
    # Random weights: a different prompt gives different scores (same when turns are dropped).
    assert scored.loglikelihoods != pytest.approx(plain.loglikelihoods, abs=1e-6)


def test_template_that_drops_or_rejects_a_turn_is_refused():
    model = load_model(f"hf:{tiny_model_path('llava')},device=cpu,dtype=float32")
    drops_system = (
        "{% for m in messages %}{% if m['role'] != 'system' %}"
        "{% for p in m['content'] %}{% if p['type'] == 'image' %}<image>"
        "{% else %}{{ p['text'] }}{% endif %}{% endfor %}\n{% endif %}{% endfor %}"
    )
    rejects_system = (
        "{% for m in messages %}{% if m['role'] == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% endif %}{% endfor %}"
    )
    for template, says in ((drops_system, "drops message 0 (system"),
                           (rejects_system, "rejects this conversation (System role")):  # fmt: skip
        model.processor.chat_template = template  # a checkpoint shipped with this template
        for method, call in (("generate", model.generate), ("loglikelihood", model.loglikelihood)):
            (out,) = call([_conversation(method)])
            assert out.error is not None and out.error.type == "unsupported_input"
            assert not out.error.retryable
            assert says in out.error.message and "formulate.system_prompt" in out.error.message
    # Without a system prompt the same template renders every turn, so the request runs.
    model.processor.chat_template = drops_system
    req = _conversation()
    req = req.model_copy(update={"messages": req.messages[1:]})
    assert model.generate([req])[0].ok
