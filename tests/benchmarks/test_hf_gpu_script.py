"""The GPU benchmark script (benchmarks/hf_gpu.py), proven on the CPU with the tiny shape."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from benchmarks.hf_gpu import write_folder

from lmmprobe.data import load_source

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "hf_gpu.py"
KEYS = [
    "gen_b1_req_s", "gen_b1_tok_s", "gen_b8_req_s", "gen_b8_tok_s", "gen_b32_req_s",
    "gen_b32_tok_s", "lik_shared_req_s", "lik_naive_req_s", "lik_speedup", "lik_top1_agree",
    "lik_max_diff", "lik_check", "peak_gpu_mem_gb", "build_s",
]  # fmt: skip


def _script(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip


# "device" is the script's default; "disk" (the backend loading the saved folder, as every other
# hf test's checkpoint is loaded) takes three times as long and runs under -m slow.
@pytest.mark.parametrize("weights", ["device", pytest.param("disk", marks=pytest.mark.slow)])
def test_tiny_run_ends_with_every_figure_and_rankings_agree(tmp_path: Path, weights: str) -> None:
    # device: weights built in place and handed to the backend; disk: the backend loads them.
    args = ["--shape", "tiny", "--device", "cpu", "--samples", "4", "--max-new-tokens", "4"]
    done = _script(tmp_path, *args, "--weights", weights)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    figures = dict(pair.split("=", 1) for pair in lines[-1].split())
    assert list(figures) == KEYS
    # The backend's cached-prompt ranking and the naive per-option passes pick the same option
    # for every request, and their log-likelihoods agree within the bf16 tolerance.
    assert figures["lik_top1_agree"] == "4/4"
    assert figures["lik_check"] == "ok"
    assert float(figures["lik_max_diff"]) <= 0.1
    assert figures["peak_gpu_mem_gb"] == "na"
    assert all(float(figures[k]) > 0 for k in KEYS if k.endswith(("_req_s", "_tok_s")))
    assert "generate batch 32" in done.stdout and "(lowered: OOM)" not in done.stdout


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_cuda_asked_without_a_device_skips_with_a_message(tmp_path: Path) -> None:
    done = _script(tmp_path)  # the default: --shape 7b --device cuda
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("skipped: --device cuda asked") and not done.stderr


def test_7b_shape_is_llava_1_5_7b(tmp_path: Path) -> None:
    # Built on the meta device: the shapes, without 14 GB of memory.
    from transformers import AutoModelForImageTextToText, AutoProcessor

    config = write_folder("7b", tmp_path)
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(config, dtype=torch.bfloat16)
    params = sum(p.numel() for p in model.parameters())
    assert 7.0e9 < params < 7.1e9  # LLaVA-1.5-7B: 7.06 B
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    assert model.config.text_config.vocab_size == 32064
    processor = AutoProcessor.from_pretrained(tmp_path)
    image = load_source("demo,n=1").samples[0].images[0].load().convert("RGB")
    inputs = processor(
        text=["USER: <image>\nWhat? ASSISTANT:"], images=[[image]], return_tensors="pt"
    )
    assert int((inputs["input_ids"] == config.image_token_index).sum()) == 576  # (336 / 14) ** 2
