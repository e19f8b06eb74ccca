"""The hf: backend and thinking: chat-template arguments, finish reasons, an opened think block.

Runs on ``hf:tiny-llava-think``, tiny-llava with a Qwen3-style thinking chat template.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.console import lmmprobe

pytest.importorskip("torch")
pytest.importorskip("transformers")

from lmmprobe.data import load_source
from lmmprobe.formulate import formulate
from lmmprobe.models import load_model
from lmmprobe.models.hf import HFModel
from lmmprobe.run import request_key
from lmmprobe.schema import FormulateConfig, GenerationParams, Request
from lmmprobe.store import Store

pytestmark = pytest.mark.usefixtures("hf_offline")

THINK = "hf:tiny-llava-think,device=cpu,dtype=float32"
OFF = f"{THINK},chat_template_kwargs=enable_thinking=false"


def _hf(spec: str) -> HFModel:
    model = load_model(spec)
    assert isinstance(model, HFModel)
    return model


def _requests(model: HFModel, n: int = 2, max_new_tokens: int = 4) -> list[Request]:
    out = []
    for s in load_source(f"demo,n={n},size=64").samples:
        r = formulate(
            s, config=FormulateConfig(), gen=GenerationParams(max_new_tokens=max_new_tokens)
        )
        r.key = request_key(model.identity, r)
        out.append(r)
    return out


def test_enable_thinking_reaches_the_template_and_the_identity() -> None:
    on, off, plain = _hf(THINK), _hf(OFF), _hf("hf:tiny-llava,device=cpu,dtype=float32")
    req = _requests(on, n=1)[0]
    assert on.render(req).endswith("ASSISTANT: <think>\n")
    assert off.render(req).endswith("ASSISTANT: <think>\n\n</think>\n\n")
    assert plain.render(req).endswith("ASSISTANT:")
    # One checkpoint, two model specs: the answers of one are never served for the other.
    assert on.identity.fingerprint == off.identity.fingerprint
    assert on.identity.cache_id() != off.identity.cache_id()
    assert off.identity.options["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in on.identity.options
    assert request_key(on.identity, req) != request_key(off.identity, req)


def test_text_starts_inside_the_opened_block_and_finish_reason_is_recorded() -> None:
    on, off = _hf(THINK), _hf(OFF)
    for resp in on.generate(_requests(on)):
        # The template opened the block: the model's turn, as stored, starts inside it.
        assert resp.text is not None and resp.text.startswith("<think>\n")
        assert resp.finish_reason == "length"  # random weights never say EOS in 4 tokens
        assert resp.usage is not None and resp.usage.completion_tokens == 4
    for resp in off.generate(_requests(off)):
        assert resp.text is not None and not resp.text.startswith("<think>")
        assert resp.finish_reason == "length"


def test_a_sequence_ending_in_eos_is_stop() -> None:
    model = _hf("hf:tiny-llava,device=cpu,dtype=float32")
    # Every token ends a sequence, so generation stops after its first token.
    model.model.generation_config.eos_token_id = list(
        range(model.model.config.text_config.vocab_size)
    )
    (resp,) = model.generate(_requests(model, n=1, max_new_tokens=8))
    assert resp.finish_reason == "stop"
    assert resp.usage is not None and resp.usage.completion_tokens is not None
    assert resp.usage.completion_tokens <= 1


def _lmmprobe(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return lmmprobe(*args, columns=132, timeout=600, HF_HUB_OFFLINE="1")


def test_thinking_on_and_off_are_two_models_of_one_run(tmp_path: Path) -> None:
    proc = _lmmprobe(
        "run", "-m", THINK, "-m", OFF, "--data", "demo,n=2,size=64", "--max-new-tokens", "4",
        "-q", "--db", tmp_path / "db", "--out", tmp_path / "o",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with Store(tmp_path / "db") as store:
        (run,) = store.list_runs()
        rows = list(store.iter_score_rows(run["id"]))
        stored = store.get_responses({row["key"] for row in rows})
    texts = {
        model: [stored[r["key"]].text for r in rows if r["model"] == model]
        for model in (THINK, OFF)
    }
    assert len(stored) == 4 and all(len(t) == 2 for t in texts.values())
    assert all(t is not None and t.startswith("<think>\n") for t in texts[THINK])
    assert not any(t is not None and t.startswith("<think>") for t in texts[OFF])
    # Four new tokens never close a think block: stored as stopped at the limit (layout 8),
    # and the thinking-on answers are scored as cut off, never read for a mark.
    assert {r.finish_reason for r in stored.values()} <= {"length", "stop"}
    stages = {r["model"]: {r2["stage"] for r2 in rows if r2["model"] == r["model"]} for r in rows}
    assert stages[THINK] == {"truncated"}


@pytest.mark.parametrize(
    ("option", "wanted"),
    [
        ("chat_template_kwargs=enable_thinking", "'enable_thinking' is not key=value"),
        ("chat_template_kwargs=tokenize=true", "may not set tokenize"),
    ],
)
def test_bad_chat_template_kwargs_is_one_line(tmp_path: Path, option: str, wanted: str) -> None:
    proc = _lmmprobe(
        "run", "-m", f"hf:tiny-llava,{option}", "--data", "demo,n=2", "-q",
        "--db", tmp_path / "db", "--out", tmp_path / "o",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert wanted in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
