"""The hf: chat template, rendered in a child process under time, memory and length bounds.

Parity first: on every tiny checkpoint the tests build (`models/tiny.py`) and several message
shapes, the bounded render is exactly what ``processor.apply_chat_template(..., tokenize=False)``
renders in this process, a template's refusal included. Then hostile templates (a checkpoint's
template is outside text): loops inside loops, a string of 4 GB, a rendering past a prompt's
length, an error that is not Jinja's. Each is that sample's one error, naming the checkpoint
folder and its chat template, within a bound (`tests.bounded.within`), and the next sample
still renders.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.bounded import within
from tests.console import lmmprobe

pytest.importorskip("torch")
pytest.importorskip("transformers")

from jinja2 import TemplateError

from lmmprobe.data import load_source
from lmmprobe.formulate import formulate
from lmmprobe.models import load_model
from lmmprobe.models._chat_render import (
    ChatTemplateRenderer,
    TemplateFailed,
    TemplateRejected,
    processor_classes,
)
from lmmprobe.models.hf import HFModel
from lmmprobe.models.tiny import TINY_ARCHS, tiny_model_path
from lmmprobe.schema import FormulateConfig, GenerationParams, Sample, Turn

pytestmark = pytest.mark.usefixtures("hf_offline")

# Every tiny checkpoint with a chat template: each architecture, small-llava, and the thinking
# template with its argument on, off and unset.
CHECKPOINTS: dict[str, tuple[dict[str, Any], str]] = {
    **{arch: ({"arch": arch}, "") for arch in TINY_ARCHS},
    "small-llava": ({"arch": "llava", "size": "small"}, ""),
    "llava-think": ({"arch": "llava", "thinking": True}, ""),
    "llava-think-on": (
        {"arch": "llava", "thinking": True},
        ",chat_template_kwargs=enable_thinking=true",
    ),
    "llava-think-off": (
        {"arch": "llava", "thinking": True},
        ",chat_template_kwargs=enable_thinking=false",
    ),
}


def _user(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(parts)}


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


IMAGE = {"type": "image"}
SHAPES: dict[str, list[dict[str, Any]]] = {
    "text": [_user(_text("What is shown?"))],
    "empty text": [_user(_text(""))],
    "image": [_user(IMAGE, _text("What color is the shape?"))],
    "two images": [_user(IMAGE, IMAGE, _text("Which is larger?"))],
    "image after text": [_user(_text("Look:"), IMAGE, _text("what is it?"))],
    "system": [
        {"role": "system", "content": [_text("Be brief.")]},
        _user(IMAGE, _text("Count the shapes.")),
    ],
    "multi-turn": [
        _user(IMAGE, _text("Is it a photo?")),
        {"role": "assistant", "content": [_text("No, a drawing.")]},
        _user(_text("What color is it?")),
    ],
    "system and multi-turn": [
        {"role": "system", "content": [_text("Answer with a letter.")]},
        _user(_text("Example: 2+2? A. 4 B. 5")),
        {"role": "assistant", "content": [_text("A")]},
        _user(IMAGE, _text("Which shape? A. star B. circle")),
    ],
    "two user turns": [_user(_text("First.")), _user(IMAGE, _text("Second."))],
    "template-like text": [_user(_text("{{ 7 * 7 }} {% raw %} </s> <image> \ud800 ü 猫"))],
}
TEXT = SHAPES["text"]


def _in_process(model: HFModel, conversation: list[dict[str, Any]]) -> tuple[str, str]:
    """What the processor renders in this process: ("ok", text) or ("rejected", message)."""
    template = model.chat_template
    assert template
    try:
        return "ok", str(
            model.processor.apply_chat_template(
                conversation, tokenize=False, **model.template_arguments(template)
            )
        )
    except TemplateError as exc:
        return "rejected", str(exc)


def _bounded(model: HFModel, conversation: list[dict[str, Any]]) -> tuple[str, str]:
    template = model.chat_template
    assert template
    try:
        return "ok", model.renderer.render(conversation, **model.template_arguments(template))
    except TemplateRejected as exc:
        return "rejected", str(exc)


# Each parity check loads its checkpoint and starts a render child (seconds each on a loaded
# machine). The fast suite keeps every distinct template: each architecture's, and the thinking
# template with its argument passed (off: the branch the others do not take). Under -m slow:
# small-llava (llava's template on larger weights) and the thinking template unset and on (one
# branch, the same prompt).
SLOW_CHECKPOINTS = ("small-llava", "llava-think", "llava-think-on")


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(name, marks=pytest.mark.slow) if name in SLOW_CHECKPOINTS else name
        for name in CHECKPOINTS
    ],
)
def checkpoint(request: pytest.FixtureRequest, tiny_cache: Path) -> Any:
    build, options = CHECKPOINTS[request.param]
    build = dict(build)
    path = tiny_model_path(build.pop("arch"), cache_dir=tiny_cache, **build)
    model = load_model(f"hf:{path},device=cpu,dtype=float32{options}")
    assert isinstance(model, HFModel) and model.chat_template
    yield model
    model.close()


def test_the_bounded_render_is_what_the_processor_renders(checkpoint: HFModel) -> None:
    model = checkpoint
    outcomes = {name: _bounded(model, conv) for name, conv in SHAPES.items()}
    assert outcomes == {name: _in_process(model, conv) for name, conv in SHAPES.items()}
    assert outcomes["image"][0] == "ok" and outcomes["text"][1]
    assert model.renderer.starts == 1  # one child for them all


def _formulated(method: str, *, preamble: bool) -> Any:
    img = load_source("demo,n=1,size=64").samples[0].images[0]
    history = [Turn(role="user", content="Is it a photo?"), Turn(role="assistant", content="No.")]
    sample = Sample(
        id="talk", images=[img], question="What color is the shape?", choices=["red", "blue"],
        answer=0, history=history if preamble else [],
    )  # fmt: skip
    cfg = FormulateConfig(
        method=method, system_prompt="Be brief." if preamble else None,
        in_context_example=preamble,
    )  # fmt: skip
    request = formulate(sample, config=cfg, gen=GenerationParams(max_new_tokens=2))
    request.key = f"{method}-{preamble}"
    return request


def test_a_prompt_the_backend_renders_is_the_processors(checkpoint: HFModel) -> None:
    model = checkpoint
    for method in ("generate", "likelihood"):
        for preamble in (True, False):
            request = _formulated(method, preamble=preamble)
            assert not request.response_prefix
            kind, wanted = _in_process(model, model.conversation(request))
            if kind == "ok":
                assert model.render(request) == wanted
            else:  # this template refuses a system turn: refused alike, with its words
                with pytest.raises(Exception, match="rejects this conversation") as refused:
                    model.render(request)
                assert wanted in str(refused.value)


@pytest.fixture(scope="module")
def llava(tiny_cache: Path) -> Any:
    model = load_model(f"hf:{tiny_model_path('llava', cache_dir=tiny_cache)},device=cpu")
    yield model
    model.close()


texts = st.text(max_size=300)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(system=texts, question=texts, answer=texts)
@example(system="{{ raise_exception('x') }}", question="{% for %}", answer="\ud800\udfff")
def test_any_message_text_renders_as_in_process(
    llava: HFModel, system: str, question: str, answer: str
) -> None:
    conversation = [
        {"role": "system", "content": [_text(system)]},
        _user(IMAGE, _text(question)),
        {"role": "assistant", "content": [_text(answer)]},
        _user(_text(question)),
    ]
    assert _bounded(llava, conversation) == _in_process(llava, conversation)


# -- hostile templates ------------------------------------------------------------------------

NORMAL = (
    "{% for m in messages %}{% for p in m['content'] %}{{ p.get('text', '<image>') }}"
    "{% endfor %}\n{% endfor %}ASSISTANT:"
)


HOSTILE = {
    "loop": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "did not render within 1 s",
    ),
    "huge": ("{{ 'x' * 4000000000 }}", "needed more than 2,048 MiB to render"),
    "long": ("{{ 'x' * 5000000 }}", "rendered 5,000,000 characters, more than the 4,194,304"),
    "overflow": ("{{ range(10 ** 20) }}", "failed on this conversation (OverflowError"),
}
# Each hostile body runs only when the question holds its word; other questions render normally.
TEMPLATE = (
    "{% set question = messages[-1]['content'][-1]['text'] %}"
    + "".join(
        f"{{% {'if' if i == 0 else 'elif'} '{word}' in question %}}{body}"
        for i, (word, (body, _)) in enumerate(HOSTILE.items())
    )
    + f"{{% else %}}{NORMAL}{{% endif %}}"
)


def _asking(words: list[str]) -> list[Any]:
    samples = load_source(f"demo,n={len(words)},size=64").samples
    out = []
    for word, sample in zip(words, samples, strict=True):
        sample = sample.model_copy(update={"question": f"{sample.question} {word}"})
        request = formulate(sample, gen=GenerationParams(max_new_tokens=2))
        request.key = word
        out.append(request)
    return out


@pytest.fixture()
def hostile(tiny_cache: Path) -> Any:
    path = tiny_model_path("llava", cache_dir=tiny_cache)
    model = load_model(f"hf:{path},device=cpu,batch_size=8,chat_template_timeout=1")
    model.processor.chat_template = TEMPLATE  # as a checkpoint would ship it
    yield model
    model.close()


@pytest.mark.parametrize("word", list(HOSTILE))
def test_a_hostile_template_is_that_samples_error_and_the_next_renders(
    hostile: HFModel, word: str
) -> None:
    requests = _asking(["fine", word, "also-fine"])
    # Unbounded, "loop" runs for hours and "huge" takes 4 GB; bounded, seconds (a restart).
    out = within(120, hostile.generate, requests)
    assert [r.ok for r in out] == [True, False, True]
    error = out[1].error
    assert error is not None and error.type == "unsupported_input" and not error.retryable
    says = HOSTILE[word][1]
    assert f"the chat template of {hostile.opts.path} {says}" in error.message, error.message
    # Rendered once in the batch, not once per split: one restart after a kill, none else.
    assert hostile.renderer.starts == (2 if word == "loop" else 1)
    assert within(60, hostile.render, requests[2]).endswith("ASSISTANT:")


def _run_with_template_prefix(
    tiny_cache: Path, tmp_path: Path, prefix: str
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """`lmmprobe run` of three questions on a checkpoint whose template starts with `prefix`."""
    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_model_path("llava", cache_dir=tiny_cache), folder)
    shipped = folder / "chat_template.jinja"
    shipped.write_text(prefix + shipped.read_text(encoding="utf-8"), encoding="utf-8")
    from PIL import Image

    Image.new("RGB", (32, 32), "blue").save(tmp_path / "a.png")
    rows = [
        {"id": id_, "images": ["a.png"], "question": q, "choices": ["yes", "no"], "answer": 0}
        for id_, q in (("calm", "Is it blue?"), ("boom", "What goes boom?"), ("after", "Red?"))
    ]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    proc = lmmprobe(
        "run", "-d", data, "-m", f"hf:{folder},device=cpu,chat_template_timeout=1",
        "--max-new-tokens", "2", "--db", tmp_path / "s.db", "--out", tmp_path / "out",
        timeout=600, columns=1000,
    )  # fmt: skip
    return folder, proc


def test_a_run_goes_on_past_a_checkpoint_whose_template_loops(
    tiny_cache: Path, tmp_path: Path
) -> None:
    loops = HOSTILE["loop"][0]
    folder, proc = _run_with_template_prefix(
        tiny_cache,
        tmp_path,
        f"{{% if 'boom' in messages[-1]['content'][-1]['text'] %}}{loops}{{% endif %}}",
    )
    assert proc.returncode == 0, proc.stderr
    assert "3 sent, 1 errors" in proc.stdout
    line = f"unsupported_input x1: sample boom: the chat template of {folder} did not render"
    assert line in proc.stdout


def test_a_template_that_renders_a_lone_surrogate_fails_only_that_sample(
    tiny_cache: Path, tmp_path: Path
) -> None:
    # Jinja reads "\ud800" in a string literal as a lone surrogate: the tokenizer cannot
    # encode it, and it used to fail the whole batch ("internal x3: TypeError: TextEncodeInput").
    folder, proc = _run_with_template_prefix(
        tiny_cache,
        tmp_path,
        "{% if 'boom' in messages[-1]['content'][-1]['text'] %}{{ '\\ud800' }}{% endif %}",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 sent, 1 errors" in proc.stdout, proc.stdout
    line = (
        f"unsupported_input x1: sample boom: the chat template of {folder} rendered a lone "
        "surrogate (U+D800 at character 1)"
    )
    assert line in proc.stdout, proc.stdout


def test_the_bounds_are_options(tiny_cache: Path) -> None:
    path = tiny_model_path("llava", cache_dir=tiny_cache)
    model = load_model(f"hf:{path},device=cpu,chat_template_timeout=0.5,chat_template_memory=300")
    assert isinstance(model, HFModel)
    limits = model.renderer.limits
    assert (limits.timeout_s, limits.memory_mib) == (0.5, 300)
    with model, pytest.raises(TemplateFailed, match="more than 300 MiB"):
        within(60, lambda: model.renderer.render(TEXT, chat_template="{{ 'x' * 400000000 }}"))
    for bad in ("chat_template_timeout=0", "chat_template_timeout=nan", "chat_template_memory=1",
                "chat_template_memory=lots", "chat_template_timeout=-1",
                # Every render would fail and restart the renderer (seconds a sample).
                "chat_template_timeout=1e-300", "chat_template_timeout=0.01"):  # fmt: skip
        with pytest.raises(ValueError, match="hf backend: chat_template_"):
            load_model(f"hf:{path},{bad}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _gone(pid: int, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def test_the_renderer_ends_with_its_model(tiny_cache: Path) -> None:
    path = tiny_model_path("llava", cache_dir=tiny_cache)
    model = load_model(f"hf:{path},device=cpu")
    assert isinstance(model, HFModel)
    conversation = TEXT
    model.renderer.render(conversation, **model.template_arguments(str(model.chat_template)))
    pid = model.renderer._proc.pid  # type: ignore[union-attr]
    model.close()
    assert not _alive(pid)  # closed: waited for
    model.renderer.render(conversation, **model.template_arguments(str(model.chat_template)))
    pid = model.renderer._proc.pid  # type: ignore[union-attr]
    del model  # dropped: its finalizer ends the child
    assert _gone(pid)


def test_the_renderer_ends_when_its_process_is_killed(tiny_cache: Path, tmp_path: Path) -> None:
    path = tiny_model_path("llava", cache_dir=tiny_cache)
    script = (
        "import os, sys\n"
        "from lmmprobe.models import load_model\n"
        f"m = load_model('hf:{path},device=cpu')\n"
        "m.renderer.render([{'role': 'user', 'content': []}], chat_template='x')\n"
        "print(m.renderer._proc.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        child = int(within(300, proc.stdout.readline))
        assert _alive(child)
        proc.send_signal(signal.SIGKILL)  # no finalizer, no atexit: the child's watch ends it
        proc.wait()
        assert _gone(child)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


# -- a child without torch --------------------------------------------------------------------


def _maps(pid: int) -> str:
    """The files mapped into process `pid` (Linux), to tell whether it loaded torch's library."""
    try:
        return Path(f"/proc/{pid}/maps").read_text(encoding="utf-8", errors="replace")
    except OSError:
        pytest.skip("no /proc/<pid>/maps here")


def test_the_renderer_of_a_transformers_processor_starts_without_torch(tiny_cache: Path) -> None:
    path = tiny_model_path("llava", cache_dir=tiny_cache)
    with load_model(f"hf:{path},device=cpu") as model:
        assert isinstance(model, HFModel)
        assert _bounded(model, TEXT) == _in_process(model, TEXT)
        assert (model.renderer.light, model.renderer.starts) == (True, 1)
        assert model.renderer.classes == processor_classes(model.processor)
        assert model.renderer.classes is not None and set(model.renderer.classes) == {
            "processor", "tokenizer", "image_processor"
        }  # fmt: skip
        child = model.renderer._proc
        assert child is not None
        assert "libtorch" not in _maps(child.pid)  # seconds less to start, a fifth the memory


def test_a_child_without_torch_that_loads_other_classes_gives_way_to_one_with_torch(
    tiny_cache: Path,
) -> None:
    path = tiny_model_path("llava", cache_dir=tiny_cache)
    with load_model(f"hf:{path},device=cpu") as model:
        assert isinstance(model, HFModel)
        arguments = model.template_arguments(str(model.chat_template))
        wanted = _in_process(model, TEXT)[1]
    # As the parent would see a processor class that, without torch, loads differently.
    classes = {"processor": "transformers.SomeOtherProcessor"}
    renderer = ChatTemplateRenderer(str(path), {"trust_remote_code": False}, classes=classes)
    try:
        assert within(300, lambda: renderer.render(TEXT, **arguments)) == wanted
        assert (renderer.light, renderer.starts) == (False, 1)  # the declined one not counted
        assert renderer._proc is not None and "libtorch" in _maps(renderer._proc.pid)
        renderer.close()
        assert within(300, lambda: renderer.render(TEXT, **arguments)) == wanted
        assert (renderer.light, renderer.starts) == (False, 2)  # straight to torch, remembered
    finally:
        renderer.close()


def test_a_processor_from_a_checkpoints_own_code_gets_a_child_with_torch() -> None:
    class RemoteProcessor:  # defined outside transformers, as trust_remote_code loads one
        tokenizer = None

    # No classes to match: its renderer starts the child with torch (remote code may import it).
    assert processor_classes(RemoteProcessor()) is None


def test_the_renderer_runs_no_module_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `python -m` put the working folder first on the child's path: a hashlib.py where a user
    # runs lmmprobe was executed by the child (re-test of the image worker, which starts alike).
    marker = tmp_path / "ran"
    (tmp_path / "hashlib.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nraise ImportError('not the real hashlib')\n"
    )
    monkeypatch.chdir(tmp_path)
    renderer = ChatTemplateRenderer(str(tmp_path / "no-such-checkpoint"), {})
    try:
        with pytest.raises(RuntimeError, match="could not load its processor"):
            renderer.render([{"role": "user", "content": "hi"}])
    finally:
        renderer.close()
    assert not marker.exists(), "the renderer's child ran hashlib.py from the working folder"
