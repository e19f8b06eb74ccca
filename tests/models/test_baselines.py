"""Reference baselines: `first` answers the first shown option, `random` is seeded by key."""

from __future__ import annotations

import pytest

from lmmprobe.formulate import formulate
from lmmprobe.models import Model, UnsupportedInputError, load_model
from lmmprobe.schema import FormulateConfig, Request, Sample

CHOICES = ["red", "blue", "green", "yellow", "purple"]


def _sample(i: int) -> Sample:
    return Sample(id=f"s{i}", question="Which color?", choices=CHOICES, answer=i % 5)


def requests(
    n: int = 6,
    *,
    method: str = "generate",
    marks: str = "upper",
    repeats: int = 1,
    prefix: str = "k",
) -> list[Request]:
    cfg = FormulateConfig(method=method, option_marks=marks)  # type: ignore[arg-type]
    out = []
    for i in range(n):
        for r in range(repeats):
            req = formulate(_sample(i), repeat=r, config=cfg, seed=1)
            req.key = f"{prefix}{i}-{r}"
            out.append(req)
    return out


def _model(spec: str) -> Model:
    model = load_model(spec)
    assert isinstance(model, Model)
    return model


# --- first ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("marks", "expected"), [("upper", "(A)"), ("lower", "(a)"), ("number", "(1)")]
)
def test_first_answers_first_displayed_mark(marks: str, expected: str) -> None:
    reqs = requests(4, marks=marks, repeats=3)
    out = _model("first").generate(reqs)
    assert [r.text for r in out] == [expected] * len(reqs)
    assert all(r.ok for r in out)


def test_first_likelihood_ranks_candidate_zero_highest() -> None:
    reqs = requests(4, method="likelihood", repeats=3)
    out = _model("first").loglikelihood(reqs)
    for req, resp in zip(reqs, out, strict=True):
        assert req.candidates is not None
        lls = resp.loglikelihoods
        assert lls is not None
        assert len(lls) == len(req.candidates)
        assert max(range(len(lls)), key=lls.__getitem__) == 0
        assert all(lls[0] > x for x in lls[1:])
        assert resp.token_counts == [1] * len(lls)


def test_first_open_ended_answers_empty_text() -> None:
    s = Sample(id="o", question="Describe.", answer="a ball", formulation="open_ended")
    req = formulate(s)
    req.key = "o"
    (resp,) = _model("first").generate([req])
    assert resp.text == ""
    assert resp.key == "o"


# --- random --------------------------------------------------------------------------------------


def test_random_answers_a_displayed_mark() -> None:
    reqs = requests(20, marks="lower", repeats=2)
    for req, resp in zip(reqs, _model("random").generate(reqs), strict=True):
        assert req.marks is not None
        assert resp.text in {f"({m})" for m in req.marks}


@pytest.mark.parametrize("seed", [0, 5])
def test_random_deterministic_per_key_and_seed(seed: int) -> None:
    reqs = requests(20)
    a = [r.text for r in _model(f"random,seed={seed}").generate(reqs)]
    b = [r.text for r in _model(f"random,seed={seed}").generate(list(reversed(reqs)))]
    assert a == list(reversed(b))  # depends on the key, not on batch position
    la = [
        r.loglikelihoods
        for r in _model(f"random,seed={seed}").loglikelihood(requests(20, method="likelihood"))
    ]
    lb = [
        r.loglikelihoods
        for r in _model(f"random,seed={seed}").loglikelihood(requests(20, method="likelihood"))
    ]
    assert la == lb


def test_random_varies_across_keys_and_seeds() -> None:
    reqs = requests(40)
    a = [r.text for r in _model("random,seed=0").generate(reqs)]
    b = [r.text for r in _model("random,seed=1").generate(reqs)]
    assert len(set(a)) > 1
    assert a != b
    lls = [
        r.loglikelihoods for r in _model("random").loglikelihood(requests(40, method="likelihood"))
    ]
    winners = {max(range(len(x)), key=x.__getitem__) for x in lls if x}
    assert len(winners) > 1


def test_random_same_key_same_answer_whatever_the_request() -> None:
    reqs = requests(1, prefix="same")
    other = requests(1, prefix="same")
    other[0] = other[0].model_copy(update={"sample_id": "different"})
    m = _model("random,seed=2")
    assert m.generate(reqs)[0].text == m.generate(other)[0].text


# --- both ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["first", "random", "random,seed=9"])
@pytest.mark.parametrize("method", ["generate", "likelihood"])
def test_one_response_per_request_in_order(spec: str, method: str) -> None:
    reqs = requests(7, method=method, repeats=2)
    model = _model(spec)
    out = model.generate(reqs) if method == "generate" else model.loglikelihood(reqs)
    assert [r.key for r in out] == [r.key for r in reqs]
    assert all(r.ok for r in out)
    assert model.generate([]) == []


@pytest.mark.parametrize("spec", ["first", "random"])
def test_loglikelihood_needs_candidates(spec: str) -> None:
    reqs = requests(1)  # generate requests carry no candidates
    with pytest.raises(UnsupportedInputError):
        _model(spec).loglikelihood(reqs)
