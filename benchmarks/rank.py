"""Likelihood ranking: naive per-candidate scoring vs lmmprobe's cached-prompt ranking.

Naive scoring (what ReForm-Eval and APEx do) runs one full forward pass, image included, per
candidate. lmmprobe encodes image and prompt once per sample and scores every candidate from the
prompt's key/value cache in one batch. Both run side by side on the same model and samples, on
a small random-weight LLaVA (text hidden 256, 4 layers, 64 image tokens) built locally.
Also prints generation throughput at batch 1 and batch 8.

Usage: python benchmarks/rank.py [--samples 50] [--device cpu]
"""

from __future__ import annotations

import argparse
import time

import torch

from lmmprobe.data import load_source
from lmmprobe.formulate import formulate
from lmmprobe.models import load_model
from lmmprobe.models.tiny import tiny_model_path
from lmmprobe.run import request_key
from lmmprobe.schema import FormulateConfig, GenerationParams, Sample

WORDS = ["red", "blue", "green", "yellow", "purple", "orange", "white", "black", "circle", "square"]
# Multi-token options exercise the second pass over the cached prompt (single-token options are
# scored from the prompt's last position alone).
PHRASES = [
    "a red star on gray",
    "two blue squares",
    "three green circles in a row",
    "one yellow hexagon",
    "purple diamonds and a black triangle",
    "four white stars",
]


def ranking_requests(model, n: int, k: int, words: list[str] = WORDS) -> list:
    base = load_source(f"demo,n={n},size=128").samples
    out = []
    for i, s in enumerate(base):
        choices = [words[(i + j) % len(words)] for j in range(k)]
        q = Sample(id=s.id, images=s.images, question=s.question, choices=choices, answer=0)
        r = formulate(q, config=FormulateConfig(method="likelihood"))
        r.key = request_key(model.identity, r)
        out.append(r)
    return out


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=50)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32")
    args = ap.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    path = tiny_model_path("llava", size="small")
    model = load_model(f"hf:{path},device={args.device},dtype={args.dtype},batch_size=8")
    warm = ranking_requests(model, 2, 4)
    model.loglikelihood(warm)
    model.naive_scores(warm[0])
    print(f"{'candidates':>10} {'naive s':>8} {'lmmprobe s':>10} {'speedup':>8} {'samples/s':>10}")
    speed: dict[str, float] = {}
    for label, k, words in (("4", 4, WORDS), ("10", 10, WORDS), ("4 multi", 4, PHRASES)):
        reqs = ranking_requests(model, args.samples, k, words)
        naive = timed(lambda reqs=reqs: [model.naive_scores(r) for r in reqs])
        fast = timed(lambda reqs=reqs: [model.loglikelihood([r]) for r in reqs])
        speed[label] = naive / fast
        sps = args.samples / fast
        print(f"{label:>10} {naive:>8.2f} {fast:>10.2f} {speed[label]:>8.1f} {sps:>10.1f}")
    gen = {}
    for b in (1, 8):
        reqs = ranking_requests(model, 16, 4)
        for r in reqs:
            r.method = "generate"
            r.gen = GenerationParams(max_new_tokens=16)
        model._batch = b
        t0 = time.perf_counter()
        out = model.generate(reqs)
        dt = time.perf_counter() - t0
        tokens = sum((r.usage.completion_tokens or 0) for r in out if r.usage)
        gen[b] = tokens / dt
        print(f"generation batch {b}: {tokens} tokens in {dt:.2f} s = {gen[b]:.1f} tokens/s")
    print(
        f"speedup_at_4={speed['4']:.1f} speedup_at_10={speed['10']:.1f} "
        f"speedup_at_4_multitoken={speed['4 multi']:.1f} "
        f"gen_tok_s_b1={gen[1]:.1f} gen_tok_s_b8={gen[8]:.1f}"
    )


if __name__ == "__main__":
    main()
