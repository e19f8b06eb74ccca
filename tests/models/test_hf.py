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
    m = ev.results["models"]["hf:tiny-llava,device=cpu"]["metrics"]
    assert m["error_rate"]["value"] == 0.0 and m["accuracy"]["n"] == 8
    ev2 = evaluate(
        models=["hf:tiny-llava,device=cpu"], data="demo,n=8,size=64", db=str(tmp_path / "db"),
        out=str(tmp_path / "o2"), formulate={"method": "likelihood"},
    )  # fmt: skip
    m2 = ev2.results["models"]["hf:tiny-llava,device=cpu"]["metrics"]
    assert m2["format_hit_rate"]["value"] == 1.0 and m2["error_rate"]["value"] == 0.0


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
