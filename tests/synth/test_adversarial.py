"""Dysca's adversarial scenario: PGD on pixels against a tiny proxy through the hf backend."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from lmmprobe.formulate import formulate  # noqa: E402
from lmmprobe.models import load_model  # noqa: E402
from lmmprobe.schema import FormulateConfig, ImageRef, Sample  # noqa: E402
from lmmprobe.synth.adversarial import (  # noqa: E402
    AttackResult,
    PGDAttacker,
    PGDConfig,
    proxy_relation,
)

FAST = PGDConfig(epsilon=8 / 255, step_size=2 / 255, steps=4)


def _sample(**extra: object) -> Sample:
    return Sample(
        id="adv-1",
        question="What color is the shape in the image?",
        choices=["red", "blue", "green", "yellow"],
        answer=1,
        **extra,  # type: ignore[arg-type]
    )


def _image(size: tuple[int, int] = (40, 24)) -> Image.Image:
    rng = np.random.default_rng(7)
    return Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


@pytest.fixture(scope="module")
def attacker() -> PGDAttacker:
    return PGDAttacker("tiny-llava", FAST, device="cpu")


@pytest.fixture(scope="module")
def result(attacker: PGDAttacker) -> AttackResult:
    return attacker.attack(_sample(), _image(), seed=0)


def test_pgd_raises_the_proxy_loss_on_the_right_answer(
    attacker: PGDAttacker, result: AttackResult
) -> None:
    assert result.target == "(B)"  # the gold mark, as the default prompt asks for it
    assert result.loss_after > result.loss_before
    # Both losses are the proxy's, measured on the real pictures through its processor.
    assert attacker.loss(_sample(), _image()) == pytest.approx(result.loss_before, abs=1e-5)
    assert attacker.loss(_sample(), result.image) == pytest.approx(result.loss_after, abs=1e-5)


def test_perturbation_respects_epsilon(result: AttackResult) -> None:
    clean = np.asarray(_image(), dtype=np.int16)
    attacked = np.asarray(result.image, dtype=np.int16)
    assert result.image.mode == "RGB" and result.image.size == _image().size
    assert attacked.dtype == np.int16 and np.asarray(result.image).dtype == np.uint8
    change = np.abs(attacked - clean).max()
    assert 0 < change <= 8
    assert result.linf == pytest.approx(change / 255) and result.linf <= FAST.epsilon
    # The differentiable preprocessing tracks the PIL processor within about one pixel level.
    assert result.preprocess_gap < 0.05


def test_epsilon_is_honoured_after_rounding() -> None:
    # 3.6 levels: rounding a change of 3.6 up to 4 would leave the ball.
    attacker = PGDAttacker("tiny-llava", PGDConfig(epsilon=3.6 / 255, step_size=2 / 255, steps=2))
    out = attacker.attack(_sample(), _image(), seed=3)
    diff = np.abs(np.asarray(out.image, dtype=np.int16) - np.asarray(_image(), dtype=np.int16))
    assert diff.max() == 3 and out.linf <= 3.6 / 255


def test_deterministic_for_a_seed(attacker: PGDAttacker, result: AttackResult) -> None:
    again = attacker.attack(_sample(), _image(), seed=0)
    assert again.image.tobytes() == result.image.tobytes()
    assert again.loss_after == result.loss_after
    other = attacker.attack(_sample(), _image(), seed=1)
    assert other.image.tobytes() != result.image.tobytes()


def test_global_rng_untouched(attacker: PGDAttacker) -> None:
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    attacker.attack(_sample(), _image(), seed=5)
    assert torch.equal(torch.rand(3), expected)


def test_loss_is_the_runners_likelihood_of_the_gold_option() -> None:
    config = FormulateConfig(method="likelihood")
    attacker = PGDAttacker("tiny-llava", FAST, device="cpu", formulate_config=config)
    sample = _sample()
    assert attacker.target(sample) == "blue"
    model = load_model("hf:tiny-llava,device=cpu")
    asked = sample.model_copy(update={"images": [ImageRef.from_pil(_image())]})
    scores = model.loglikelihood([formulate(asked, config=config)])[0].loglikelihoods
    assert scores is not None
    assert attacker.loss(sample, _image()) == pytest.approx(-scores[1], abs=1e-4)
    mark = PGDAttacker("tiny-llava", FAST, formulate_config=FormulateConfig(method="mark_logprob"))
    assert mark.target(sample) == "B"


def test_dysca_prompt_and_true_false_targets(attacker: PGDAttacker) -> None:
    assert attacker.target(_sample(metadata={"prompt_style": "dysca"})) == "(B)"
    tf = Sample(id="tf", question="Is the shape red?", formulation="true_false", answer=0)
    assert attacker.target(tf) == "(A)"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -0.1}, "epsilon"),
        ({"epsilon": 0.5 / 255, "step_size": 0.1 / 255}, "below 1/255"),
        ({"epsilon": 1.5}, "epsilon"),
        ({"step_size": 0.0}, "step_size"),
        ({"step_size": 16 / 255}, "exceeds epsilon"),
        ({"steps": 0}, "steps"),
        ({"steps": 2.5}, "steps"),
    ],
)
def test_config_validation(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        PGDConfig(**kwargs)  # type: ignore[arg-type]


def test_default_config_is_dyscas() -> None:
    assert PGDConfig() == PGDConfig(epsilon=8 / 255, step_size=2 / 255, steps=10)


def test_rejects_what_it_cannot_attack(attacker: PGDAttacker) -> None:
    open_ended = Sample(id="o", question="What is it?", answer="a cat", formulation="open_ended")
    with pytest.raises(ValueError, match="choice"):
        attacker.attack(open_ended, _image())
    two = _sample(images=[ImageRef(path="a.png"), ImageRef(path="b.png")])
    with pytest.raises(ValueError, match="2 images"):
        attacker.attack(two, _image())
    with pytest.raises(ValueError, match="cannot differentiate through"):
        PGDAttacker("tiny-idefics3", FAST)
    with pytest.raises(ValueError, match="blind"):
        PGDAttacker("tiny-llava", FAST, formulate_config=FormulateConfig(blind=True))


def test_identity_and_white_box_versus_transfer(
    attacker: PGDAttacker, result: AttackResult
) -> None:
    ident = attacker.identity
    assert ident["proxy"] == "tiny-llava" and ident["name"] == "tiny-llava"
    assert ident["fingerprint"] and ident["epsilon"] == FAST.epsilon
    assert (ident["step_size"], ident["steps"]) == (FAST.step_size, FAST.steps)
    meta = attacker.sample_metadata(result)
    assert meta["proxy"] == "tiny-llava" and meta["loss_after"] == result.loss_after

    proxy_itself = load_model("hf:tiny-llava,device=cpu,dtype=float32").identity.model_dump()
    other = load_model("hf:tiny-blip2,device=cpu").identity.model_dump()
    baseline = load_model("random").identity.model_dump()
    assert proxy_relation(ident, proxy_itself) == "white-box"
    assert proxy_relation(meta, proxy_itself) == "white-box"
    assert proxy_relation(ident, other) == "transfer"
    assert proxy_relation(ident, baseline) == "transfer"
    # A record with only the spec, against identities without fingerprints (hub models).
    hub = {"backend": "hf", "name": "org/model", "revision": None, "fingerprint": None}
    assert proxy_relation({"proxy": "hf:org/model,dtype=bfloat16"}, hub) == "white-box"
    assert proxy_relation({"proxy": "hf:org/other"}, hub) == "transfer"
    assert proxy_relation({"proxy": "org/model", "revision": "v2"}, hub) == "transfer"
    with pytest.raises(ValueError, match="names no proxy"):
        proxy_relation({"epsilon": 0.03}, hub)


@pytest.mark.slow
@pytest.mark.parametrize("proxy", ["tiny-llava", "small-llava", "tiny-paligemma", "tiny-blip2"])
def test_default_attack_on_each_supported_proxy(proxy: str) -> None:
    attacker = PGDAttacker(proxy, device="cpu")
    image = _image((96, 64))
    for method in ("generate", "likelihood"):
        attacker.formulate_config = FormulateConfig(method=method)
        out = attacker.attack(_sample(), image, seed=0)
        assert out.loss_after > out.loss_before
        assert out.linf <= 8 / 255 and out.image.size == image.size
        assert out.preprocess_gap < 0.05
