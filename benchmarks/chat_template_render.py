"""Cost of rendering the hf backend's chat template in its bounded child process.

The `hf:` backend renders each prompt through the checkpoint's chat template in a child process
of the model's own (`lmmprobe.models._chat_render`), under time, memory and length bounds. This
measures, side by side in one run, on tiny-llava (built locally, `lmmprobe.models.tiny`):

- start: seconds from a fresh renderer's first render until its child answers (a new
  interpreter that imports transformers and loads the processor), ``--starts`` times, and the
  child's CPU seconds (which a loaded machine inflates less than the wall time); paid once per
  model, and again after each render killed past its time bound. Side by side: the child the
  backend starts (without torch: ``light``, as the processor is transformers' own) and one
  with torch (what every child was before, and still is for a checkpoint's own processor code);
- per render: the same conversation rendered by ``processor.apply_chat_template(...,
  tokenize=False)`` in this process and through the bounded child, for a short question with an
  image and for a long conversation (a system prompt and 20 turns, about 12,000 characters);
  the two renderings are checked to be equal;
- for scale: generation on tiny-llava (the cheapest model there is: 4 new tokens, batch 8),
  per request, so the render's overhead can be read as a share of a request's time. Real
  checkpoints take far longer per request; the share only falls.

Prints a table, then one line of ``name=value`` figures.

Usage: python benchmarks/chat_template_render.py [--renders 200] [--starts 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

from lmmprobe.data import load_source
from lmmprobe.formulate import formulate
from lmmprobe.models import load_model
from lmmprobe.models._chat_render import ChatTemplateRenderer, processor_classes
from lmmprobe.models.hf import HFModel
from lmmprobe.models.tiny import tiny_model_path
from lmmprobe.run import request_key
from lmmprobe.schema import GenerationParams


def _conversations() -> dict[str, list[dict[str, Any]]]:
    def turn(role: str, text: str, image: bool = False) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"type": "image"}] if image else []
        return {"role": role, "content": [*parts, {"type": "text", "text": text}]}

    long = [turn("system", "You answer questions about pictures. " * 20)]
    for i in range(10):
        long.append(turn("user", f"Question {i} about the picture: " + "what is shown? " * 30))
        long.append(turn("assistant", "A drawing of shapes on a gray ground. " * 12))
    long.append(turn("user", "And the color of the star?", image=True))
    return {"short": [turn("user", "What color is the shape?", image=True)], "long": long}


def _children_cpu_s() -> float:
    """CPU seconds (user and system) of this process's children that have ended."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _per_call_ms(fn: Callable[[], object], n: int) -> float:
    fn()  # warm
    started = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - started) / n * 1000


def main() -> None:
    """Measure and print the table and the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=200)
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()

    path = tiny_model_path("llava")
    model = load_model(f"hf:{path},device=cpu,dtype=float32,batch_size=8")
    assert isinstance(model, HFModel)
    template = model.chat_template
    assert template
    kwargs = model.template_arguments(template)

    figures: dict[str, float] = {}
    rows = []
    for kind, classes in (("light", processor_classes(model.processor)), ("torch", None)):
        starts, cpu = [], []
        for _ in range(args.starts):
            fresh = ChatTemplateRenderer(str(path), {"trust_remote_code": False}, classes=classes)
            before = _children_cpu_s()
            started = time.perf_counter()
            fresh.render(_conversations()["short"], **kwargs)
            starts.append(time.perf_counter() - started)
            assert fresh.light is (kind == "light"), f"the {kind} child did not start as one"
            fresh.close()  # waited for: its CPU time is counted now
            cpu.append(_children_cpu_s() - before)
        prefix = "" if kind == "light" else "torch_"
        figures[f"{prefix}start_s"] = statistics.median(starts)
        figures[f"{prefix}start_cpu_s"] = statistics.median(cpu)
        rows.append((kind, figures[f"{prefix}start_s"], figures[f"{prefix}start_cpu_s"]))
    print(f"{'what':<36} {'in process':>12} {'bounded':>12} {'overhead':>12}")
    for kind, start_s, start_cpu_s in rows:
        label = f"start {kind}, wall (s, median of {args.starts})"
        print(f"{label:<36} {'-':>12} {start_s:>12.2f}")
        print(f"{'start ' + kind + ', child CPU (s)':<36} {'-':>12} {start_cpu_s:>12.2f}")
    for name, conversation in _conversations().items():
        inline = str(model.processor.apply_chat_template(conversation, tokenize=False, **kwargs))
        bounded = model.renderer.render(conversation, **kwargs)
        assert bounded == inline, f"{name}: the bounded render differs"
        here = _per_call_ms(
            lambda c=conversation: model.processor.apply_chat_template(c, tokenize=False, **kwargs),
            args.renders,
        )
        there = _per_call_ms(
            lambda c=conversation: model.renderer.render(c, **kwargs), args.renders
        )
        label = f"render {name} ({len(inline):,} chars, ms)"
        print(f"{label:<36} {here:>12.3f} {there:>12.3f} {there - here:>12.3f}")
        figures[f"{name}_in_process_ms"] = here
        figures[f"{name}_bounded_ms"] = there

    samples = load_source("demo,n=8,size=64").samples
    requests = []
    for sample in samples:
        request = formulate(sample, gen=GenerationParams(max_new_tokens=4))
        request.key = request_key(model.identity, request)
        requests.append(request)
    model.generate(requests)  # weights loaded, warm
    started = time.perf_counter()
    model.generate(requests)
    generate_ms = (time.perf_counter() - started) / len(requests) * 1000
    overhead = figures["short_bounded_ms"] - figures["short_in_process_ms"]
    print(f"{'generate tiny-llava (ms/request)':<36} {generate_ms:>12.2f}")
    print(f"{'render overhead / request':<36} {overhead / generate_ms:>12.1%}")
    figures["generate_ms_per_request"] = generate_ms
    figures["overhead_share_tiny"] = overhead / generate_ms
    model.close()
    print(" ".join(f"{k}={v:.4g}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
