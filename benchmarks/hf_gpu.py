"""The hf backend on a GPU: a 7B-shaped random-weight LLaVA in bf16, generation and ranking.

Builds a LLaVA (`LlavaForConditionalGeneration`) from a config, without downloading anything:
``--shape 7b`` has LLaVA-1.5-7B's shapes (Llama-2-7B text model: hidden 4096, 32 layers, 32
heads, intermediate 11008, vocabulary 32064; CLIP ViT-L/14-336 vision tower: hidden 1024, 24
layers, 16 heads, 336 px, patch 14, so 576 image tokens; two-layer GELU projector; ~7.06 B
parameters), ``--shape tiny`` lmmprobe's tiny LLaVA's (`lmmprobe.models.tiny`), which runs on a
CPU in seconds. Weights are random and created directly on ``--device`` in ``--dtype``
(`from_config` under a `torch.device` context with ``dtype=``), so a 7B model never exists in
fp32 or on the CPU. The tokenizer and chat template are the tiny LLaVA's; the image processor
takes the shape's image size.

Everything is measured through lmmprobe's ``hf`` backend, on demo samples
(``demo,n=SAMPLES``) asked through the runner (`lmmprobe.run.run_model`, a fresh store, every
request sent): the folder holding the config and processor loads as
``hf:FOLDER,device=...,dtype=...,batch_size=B``, and the weights built on the device are handed
to the backend (`HFModel.model`) instead of being read from a file (``--weights disk`` saves them
and lets the backend load them instead, which costs a 14 GB write and read at 7B).

- Generation: SAMPLES requests at batch 1, 8 and 32, greedy, ``--max-new-tokens`` (32) each;
  requests/s and generated tokens/s (generated tokens as the backend counts them: a random
  model may stop early at an end-of-sequence token). Each batch size runs one untimed batch
  first; a batch the backend lowers after running out of memory is flagged (``gen_bN_oom_lowered``).
- Likelihood ranking: the backend's ranking (image and prompt encoded once per sample, every
  option scored from the prompt's key/value cache) against a naive reference written here (one
  full forward pass, image included, per option over prompt + option, summing the option
  tokens' log-probabilities), timed on the same requests. The two must agree: every option's
  log-likelihood within the dtype's tolerance (`TOLERANCE`, nats per option token: rounding
  differs between one pass over the prompt and a cached continuation) and the same top
  option, except where the naive scores' top two are within that tolerance (a tie at this
  precision). The script exits 1 after printing its figures when they do not.

Prints a table, then one line of ``name=value`` figures. ``--device cuda`` without a CUDA
device prints ``skipped: ...`` and exits 0 (so ``make bench`` passes on a CPU machine).

Measured on one H200 (2026-11-30, torch 2.11 + CUDA 13.0, transformers 5.24) at ``--shape 7b
--samples 32``, both timings as calls on one warmed backend: 100-125 s in all (build 7-8 s,
warm-up 14-16 s). Two runs on two fresh machines:

==================  ===========  ===========
measurement         run 1        run 2
==================  ===========  ===========
generate batch 1    0.92 req/s   1.10 req/s   (29.4 / 35.1 tokens/s)
generate batch 8    8.11 req/s   9.55 req/s   (259 / 306 tokens/s)
generate batch 32   23.2 req/s   23.6 req/s   (743 / 756 tokens/s)
rank, shared        27.7 req/s   25.9 req/s   (1.15 / 1.24 s for 32)
rank, naive         8.24 req/s   8.51 req/s   (3.89 / 3.76 s for 32)
lik_speedup         3.37x        3.04x
==================  ===========  ===========

Rankings agree on 32/32 with max |shared - naive| 0 nats; peak GPU memory 25.5 GiB. An
earlier version of this script timed the shared ranking through the runner (the chat-template
renderer's start, planning and the store included) against bare forward passes and printed
``lik_speedup=0.50`` (2.47 vs 4.90 req/s) on the same GPU; that figure measured the runner's
set-up, not the ranking. Run it with ``timeout 300`` where device time is short. ``--shape tiny
--device cpu --samples 4`` takes seconds.

Usage: python benchmarks/hf_gpu.py [--shape 7b|tiny] [--device cuda] [--dtype bfloat16]
    [--samples 64] [--max-new-tokens 32] [--batches 1,8,32] [--weights device|disk]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from lmmprobe.data import load_source
from lmmprobe.models import load_model
from lmmprobe.models.tiny import seeded, tiny_model_path
from lmmprobe.run import plan_requests, run_model
from lmmprobe.schema import FormulateConfig, GenerationParams, Request, RunSpec, Sample
from lmmprobe.store import Store

if TYPE_CHECKING:
    from lmmprobe.models.hf import HFModel

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
TOLERANCE = {"bfloat16": 0.1, "float16": 0.02, "float32": 1e-3}
"""Allowed |shared - naive| log-likelihood difference, in nats per option token.

A CPU proxy with the 7B shape's depth (32 text layers, 24 vision layers, 576 image tokens) but
narrow layers differed by at most 0.006 nats per token in bfloat16 over 8 samples.
"""

# LLaVA-1.5-7B (llava-hf/llava-1.5-7b-hf): Llama-2-7B over CLIP ViT-L/14 at 336 px.
LLAVA_7B_TEXT: dict[str, Any] = {
    "model_type": "llama",
    "vocab_size": 32064,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-5,
    "tie_word_embeddings": False,
}
LLAVA_7B_VISION: dict[str, Any] = {
    "model_type": "clip_vision_model",
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "image_size": 336,
    "patch_size": 14,
    "projection_dim": 768,
    "hidden_act": "quick_gelu",
}


class _BatchWatch(logging.Handler):
    """Notices the backend lowering its batch size after running out of memory."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lowered: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "batch size lowered" in message:
            self.lowered.append(message)


def llava_7b_config(tokenizer: Any) -> Any:
    """LLaVA-1.5-7B's config, its special token ids those of `tokenizer` (the tiny one's)."""
    from transformers import LlavaConfig

    vision = LLAVA_7B_VISION
    side = int(vision["image_size"]) // int(vision["patch_size"])
    return LlavaConfig(
        vision_config=dict(vision),
        text_config={
            **LLAVA_7B_TEXT,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        image_seq_length=side * side,
        projector_hidden_act="gelu",
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
    )


def write_folder(shape: str, folder: Path) -> Any:
    """Write the shape's config and processor (tiny tokenizer and template) to `folder`.

    Returns:
        The config.

    """
    from transformers import AutoConfig, AutoProcessor, CLIPImageProcessorPil, LlavaProcessor

    tiny = tiny_model_path("llava")
    processor = AutoProcessor.from_pretrained(tiny)  # type: ignore[no-untyped-call]
    if shape == "tiny":
        config = AutoConfig.from_pretrained(tiny)
    else:
        tokenizer = processor.tokenizer
        config = llava_7b_config(tokenizer)
        size = int(LLAVA_7B_VISION["image_size"])
        processor = LlavaProcessor(  # type: ignore[no-untyped-call]
            image_processor=CLIPImageProcessorPil(
                size={"shortest_edge": size}, crop_size={"height": size, "width": size}
            ),
            tokenizer=tokenizer,
            patch_size=int(LLAVA_7B_VISION["patch_size"]),
            vision_feature_select_strategy="default",
            num_additional_image_tokens=1,  # CLIP's class token, dropped again by "default"
            chat_template=tokenizer.chat_template,
        )
    processor.save_pretrained(folder)
    config.save_pretrained(folder)
    return config


def build_weights(config: Any, device: str, dtype: torch.dtype, tokenizer: Any) -> Any:
    """Random weights created on `device` in `dtype` (never fp32 on the CPU first)."""
    from transformers import AutoModelForImageTextToText

    with seeded(), torch.device(device):
        model = AutoModelForImageTextToText.from_config(config, dtype=dtype)  # type: ignore[no-untyped-call]
    gen = model.generation_config
    gen.bos_token_id = tokenizer.bos_token_id
    gen.eos_token_id = tokenizer.eos_token_id
    gen.pad_token_id = tokenizer.pad_token_id
    model.eval()
    model.requires_grad_(False)
    return model


def naive_loglikelihoods(backend: Any, request: Request) -> list[float]:
    """One full forward pass per option over prompt + option; the option tokens' summed log-probs.

    The option continues the prompt as the backend's ranking joins it (a space unless the
    prompt ends in one); its tokens are those the full text has after the prompt's.
    """
    prompt = backend.render(request)
    images = [ref.load().convert("RGB") for ref in request.images]
    tokenizer = backend.tokenizer
    head = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    joiner = "" if not prompt or prompt[-1].isspace() else " "
    scores = []
    with torch.inference_mode():
        for option in request.candidates or []:
            text = prompt + joiner + option
            full = tokenizer(text, add_special_tokens=False)["input_ids"]
            if full[: len(head)] != head or len(full) <= len(head):
                raise RuntimeError(f"option {option!r} does not tokenize as a continuation")
            ids = full[len(head) :]
            tokenizer.padding_side = "right"
            kwargs: dict[str, Any] = {"text": [text], "return_tensors": "pt"}
            if images:
                kwargs["images"] = [images]
            inputs = backend.processor(**kwargs).to(backend.device)
            start = int(inputs["input_ids"].shape[1]) - len(ids)
            if inputs["input_ids"][0, start:].tolist() != ids:
                raise RuntimeError(f"option {option!r}: tokens differ inside the full text")
            logits = backend.model(**inputs).logits[0, start - 1 : -1].float()
            logp = torch.log_softmax(logits, dim=-1)
            target = torch.tensor(ids, device=logp.device)
            scores.append(float(logp.gather(1, target[:, None]).sum()))
    return scores


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _argmax(values: Sequence[float]) -> int:
    return max(range(len(values)), key=values.__getitem__)


def _spec(folder: Path, args: argparse.Namespace, batch: int) -> str:
    return f"hf:{folder},device={args.device},dtype={args.dtype},batch_size={batch}"


def _backend(spec: str, weights: Any) -> HFModel:
    # Imported here: transformers is most of the script's start-up, and without CUDA it only
    # says it skips.
    from lmmprobe.models.hf import HFModel

    backend = load_model(spec)
    assert isinstance(backend, HFModel)
    if weights is not None:
        backend.model = weights  # the weights built on the device, instead of a file
    return backend


def _run(spec: str, backend: Any, samples: list[Sample], run: RunSpec, store: Store) -> Any:
    outcome = run_model(spec, backend, samples, run, store)
    if outcome.errors:
        raise RuntimeError(f"{outcome.errors} of {outcome.requests} requests failed ({spec})")
    return outcome


@dataclass
class Figures:
    """What one run measured."""

    build_s: float
    warm_s: float
    params: int
    generation: dict[int, tuple[int, float, int, bool]] = field(default_factory=dict)
    """Batch size -> (requests, seconds, generated tokens, batch lowered after OOM)."""
    shared_s: float = 0.0
    naive_s: float = 0.0
    requests: int = 0
    agree: int = 0
    tie_flips: int = 0
    max_diff: float = 0.0
    disagree: list[str] = field(default_factory=list)


def compare(
    requests: Sequence[Request],
    shared: dict[str, Any],
    naive: list[list[float]],
    tol: float,
    figures: Figures,
) -> None:
    """Record how far the backend's and the naive log-likelihoods are apart, and top options."""
    for r, ref in zip(requests, naive, strict=True):
        got = shared[r.key]
        ll, counts = got.loglikelihoods or [], got.token_counts or []
        for a, b, n in zip(ll, ref, counts, strict=True):
            figures.max_diff = max(figures.max_diff, abs(a - b) / max(1, n))
        top = sorted(ref, reverse=True)
        if _argmax(ll) == _argmax(ref):
            figures.agree += 1
        elif len(top) > 1 and top[0] - top[1] <= 2 * tol:
            figures.tie_flips += 1  # a tie at this precision: either order is right
        else:
            figures.disagree.append(r.sample_id)
    figures.requests = len(requests)


def measure(args: argparse.Namespace, batches: list[int], tmp: Path) -> Figures:
    """Build the model, then time generation per batch size and both rankings."""
    watch = _BatchWatch()
    logging.getLogger("lmmprobe.models.hf").addHandler(watch)
    folder = tmp / f"llava-{args.shape}"
    t0 = time.perf_counter()
    config = write_folder(args.shape, folder)
    tokenizer = _backend(_spec(folder, args, 1), None).tokenizer
    weights = build_weights(config, args.device, DTYPES[args.dtype], tokenizer)
    _sync(args.device)
    build_s = time.perf_counter() - t0
    params = sum(p.numel() for p in weights.parameters())
    if args.weights == "disk":
        weights.save_pretrained(folder)
        del weights
        weights = None
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
    samples = load_source(f"demo,n={args.samples}").samples
    gen_run = RunSpec(
        models=["hf"],
        data="demo",
        no_cache=True,  # every timed run sends every request
        bootstrap=0,
        formulate=FormulateConfig(method="generate"),
        gen=GenerationParams(max_new_tokens=args.max_new_tokens),
    )
    lik_run = gen_run.model_copy(update={"formulate": FormulateConfig(method="likelihood")})
    with Store(tmp / "bench.db") as store:
        # Warm-up (and, with --weights disk, the backend's own load): kernels, allocator.
        spec = _spec(folder, args, 1)
        first = _backend(spec, weights)
        t0 = time.perf_counter()
        _run(spec, first, samples[:2], gen_run, store)
        _run(spec, first, samples[:2], lik_run, store)
        _sync(args.device)
        figures = Figures(build_s=build_s, warm_s=time.perf_counter() - t0, params=params)
        if weights is None:
            weights = first.model  # loaded from disk by the backend; shared by the others
        for b in batches:
            spec = _spec(folder, args, b)
            backend = _backend(spec, weights)
            if b > 1:  # one batch of this size first: its shapes' kernels and memory
                _run(spec, backend, samples[:b], gen_run, store)
            lowered = len(watch.lowered)
            _sync(args.device)
            t0 = time.perf_counter()
            out = _run(spec, backend, samples, gen_run, store)
            _sync(args.device)
            dt = time.perf_counter() - t0
            gen = (out.requests, dt, out.completion_tokens, len(watch.lowered) > lowered)
            figures.generation[b] = gen
        spec = _spec(folder, args, 8)
        backend = _backend(spec, weights)
        asks = plan_requests(samples, lik_run, backend.identity)
        requests = [ask.to_request() for _, ask in asks]
        # Both rankings are timed as calls on one warmed backend: the backend's chat-template
        # renderer starts on its first render, and each path's first pass compiles its shapes'
        # kernels. (Timing the runner against bare forward passes, as this script once did,
        # charged the shared path with the renderer's start, the store and the planning.)
        backend.loglikelihood(requests[:2])
        naive_loglikelihoods(backend, requests[0])
        _sync(args.device)
        t0 = time.perf_counter()
        ranked = backend.loglikelihood(requests)
        _sync(args.device)
        figures.shared_s = time.perf_counter() - t0
        shared = {r.key: got for r, got in zip(requests, ranked, strict=True)}
        t0 = time.perf_counter()
        naive = [naive_loglikelihoods(backend, r) for r in requests]
        _sync(args.device)
        figures.naive_s = time.perf_counter() - t0
    compare(requests, shared, naive, TOLERANCE[args.dtype], figures)
    return figures


def report(args: argparse.Namespace, f: Figures) -> bool:
    """Print the table and the figures line; whether the rankings passed their check."""
    tol = TOLERANCE[args.dtype]
    ok = not f.disagree and f.max_diff <= tol
    n = f.requests
    print(
        f"hf backend, LLaVA {args.shape} ({f.params / 1e6:,.1f} M parameters, random), "
        f"{args.dtype} on {args.device}; weights {args.weights}; built in {f.build_s:.1f} s, "
        f"warm-up {f.warm_s:.1f} s"
    )
    print(f"{'measurement':<24} {'requests':>8} {'seconds':>8} {'req/s':>8} {'tokens/s':>9}")
    for b, (reqs, dt, tokens, lowered) in f.generation.items():
        label = f"generate batch {b}" + (" (lowered: OOM)" if lowered else "")
        print(f"{label:<24} {reqs:>8} {dt:>8.2f} {reqs / dt:>8.2f} {tokens / dt:>9.1f}")
    for label, dt in (("rank shared prompt", f.shared_s), ("rank naive per option", f.naive_s)):
        print(f"{label:<24} {n:>8} {dt:>8.2f} {n / dt:>8.2f} {'':>9}")
    print(
        f"rankings: top option agrees on {f.agree}/{n} ({f.tie_flips} ties at this precision "
        f"ordered the other way); max |shared - naive| {f.max_diff:.2e} nats per option token "
        f"(tolerance {tol:g} at {args.dtype})"
    )
    if f.disagree:
        print(f"error: shared and naive rankings disagree on {f.disagree[:10]}", file=sys.stderr)
    if f.max_diff > tol:
        print(f"error: log-likelihoods differ by {f.max_diff:.3g} > {tol:g}", file=sys.stderr)
    figures: dict[str, str] = {}
    for b, (reqs, dt, tokens, lowered) in f.generation.items():
        figures[f"gen_b{b}_req_s"] = f"{reqs / dt:.2f}"
        figures[f"gen_b{b}_tok_s"] = f"{tokens / dt:.1f}"
        if lowered:
            figures[f"gen_b{b}_oom_lowered"] = "1"
    peak = torch.cuda.max_memory_allocated() / 2**30 if args.device.startswith("cuda") else None
    figures.update(
        lik_shared_req_s=f"{n / f.shared_s:.2f}",
        lik_naive_req_s=f"{n / f.naive_s:.2f}",
        lik_speedup=f"{f.naive_s / f.shared_s:.2f}",
        lik_top1_agree=f"{f.agree}/{n}",
        lik_max_diff=f"{f.max_diff:.2e}",
        lik_check="ok" if ok else "failed",
        peak_gpu_mem_gb="na" if peak is None else f"{peak:.1f}",
        build_s=f"{f.build_s:.1f}",
    )
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", choices=("7b", "tiny"), default="7b")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="bfloat16")
    ap.add_argument("--samples", type=int, default=64, help="requests per measurement")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--batches", default="1,8,32", help="generation batch sizes")
    ap.add_argument("--weights", choices=("device", "disk"), default="device")
    args = ap.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(
            f"skipped: --device {args.device} asked and torch {torch.__version__} sees no CUDA "
            "device; run on a GPU machine, or check the script with --shape tiny --device cpu"
        )
        return 0
    if args.samples < 1 or args.max_new_tokens < 1:
        ap.error("--samples and --max-new-tokens must be at least 1")
    try:
        batches = [int(b) for b in args.batches.split(",")]
    except ValueError:
        ap.error(f"--batches {args.batches!r}: integers joined by commas, e.g. 1,8,32")
    if any(b < 1 for b in batches):
        ap.error(f"--batches {args.batches!r}: every batch size must be at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        figures = measure(args, batches, Path(tmp))
    return 0 if report(args, figures) else 1


if __name__ == "__main__":
    sys.exit(main())
