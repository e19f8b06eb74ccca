"""``synth generate --recipe dysca`` tried offline, through the console script (issue 34, item 11).

An uncached hub id cost 36 s of the hub client's retries (each warning printed twice) and
ended in a doubled full stop; the files of the failed attempt then blocked the retry with
the Python API's wording. Now the id is refused at once as ``hf:`` models are, a failed
attempt leaves the folder as it was, and ``--diffusion-model tiny`` runs the recipe on a tiny
random SDXL built here.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from tests.console import lmmprobe
from tests.hub_server import Answer, LoopbackHub

DYSCA = ("synth", "generate", "--recipe", "dysca", "--renderer", "diffusion", "--n", "1")


def _closed_port() -> str:
    """An address on loopback where nothing listens (a Hub that refuses connections)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize(
    "env", [{"HF_HUB_OFFLINE": "1"}, {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "closed"}]
)
def test_an_uncached_hub_id_is_refused_at_once_and_leaves_no_folder(
    tmp_path: Path, env: dict[str, str]
) -> None:
    env = {k: _closed_port() if v == "closed" else v for k, v in env.items()}
    out = tmp_path / "runs" / "X"
    result = lmmprobe(*DYSCA, "--diffusion-model", "some/uncached-id", "--out", out, **env)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()  # one line: no retries, no warnings
    assert line.startswith(
        "error: diffusion model some/uncached-id is not in the Hugging Face cache and the Hub "
        "cannot be reached ("
    )
    assert "--diffusion-model tiny" in line and ".." not in line
    # `hf`, or the copy beside lmmprobe by its path where .venv/bin is not on PATH (re-test 20b #9)
    fetch = line.rpartition("with: ")[2]
    program, _, rest = fetch.partition(" ")
    assert rest == "download some/uncached-id --local-dir ./checkpoints/uncached-id", line
    assert program == "hf" or (os.path.isabs(program) and program.endswith("/hf")), line
    assert _left(tmp_path) == []  # not X, nor the runs/ folder made for it


def test_a_failed_generate_leaves_the_folder_as_it_was_and_says_overwrite(
    tmp_path: Path,
) -> None:
    out = tmp_path / "set"
    made = lmmprobe("synth", "generate", "--n", "2", "--size", "32", "--out", out)
    assert made.returncode == 0, made.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    failed = lmmprobe(
        *DYSCA, "--diffusion-model", "a/b", "--out", out, "--overwrite", HF_HUB_OFFLINE="1"
    )
    assert failed.returncode == 2 and "a/b is not in the Hugging Face cache" in failed.stderr
    assert _left(tmp_path) == ["set"]
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    refused = lmmprobe(*DYSCA, "--diffusion-model", "a/b", "--out", out, HF_HUB_OFFLINE="1")
    assert refused.returncode == 2
    assert "set holds a synthetic dataset: pass --overwrite to replace it" in refused.stderr
    assert "overwrite=True" not in refused.stderr
    # A procedural set that succeeds replaces it.
    made = lmmprobe("synth", "generate", "--n", "1", "--size", "32", "--out", out, "--overwrite")
    assert made.returncode == 0, made.stderr
    assert _left(out) == ["dysca.json", "images", "manifest.json", "samples.jsonl"]
    assert _left(tmp_path) == ["set"]
    # A folder holding anything else is never replaced, with the flag or without.
    (out / "mine.txt").write_text("keep")
    for flags in ((), ("--overwrite",)):
        refused = lmmprobe("synth", "generate", "--n", "1", "--size", "32", "--out", out, *flags)
        assert refused.returncode == 2 and "not a synthetic dataset (mine.txt)" in refused.stderr
    assert (out / "mine.txt").read_text() == "keep"


@pytest.mark.slow
def test_a_generate_failing_half_way_keeps_the_old_folder(tmp_path: Path) -> None:
    out = tmp_path / "set"
    made = lmmprobe("synth", "generate", "--n", "1", "--size", "32", "--out", out)
    assert made.returncode == 0, made.stderr
    # The PGD proxy cannot be loaded once the first images are drawn and written.
    failed = lmmprobe(
        "synth", "generate", "--n", "2", "--size", "32", "--scenarios", "clean,adversarial",
        "--proxy", "hf:nobody/no-proxy", "--out", out, "--overwrite", HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert failed.returncode == 2 and "hf:nobody/no-proxy is not in the" in failed.stderr
    assert _left(tmp_path) == ["set"]
    assert _left(out) == ["dysca.json", "images", "manifest.json", "samples.jsonl"]
    nested = tmp_path / "new" / "deeper" / "set"
    failed = lmmprobe(
        "synth", "generate", "--n", "2", "--size", "32", "--scenarios", "clean,adversarial",
        "--proxy", "hf:nobody/no-proxy", "--out", nested, HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert failed.returncode == 2 and _left(tmp_path) == ["set"]


@pytest.mark.slow
def test_the_tiny_pipeline_runs_the_dysca_recipe_offline(tiny_cache: Path, tmp_path: Path) -> None:
    pytest.importorskip("diffusers")
    out = tmp_path / "X"
    refused = lmmprobe(*DYSCA, "--diffusion-model", "some/uncached-id", "--out", out)
    assert refused.returncode == 2 and not out.exists()
    # The retry the message offers works at once, on the same --out.
    result = lmmprobe(
        *DYSCA, "--diffusion-model", "tiny", "--tasks", "animal,text", "--size", "32",
        "--out", out, HF_HUB_OFFLINE="1", LMMPROBE_CACHE=str(tiny_cache),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Loading" not in result.stderr and "truncated" not in result.stderr
    # Importing diffusers printed transformers' three notices that torchvision is missing
    # (it falls back to the PIL image processors, which is what lmmprobe uses): not the user's.
    assert "torchvision" not in result.stderr and "[transformers]" not in result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    renderer = manifest["renderer"]
    assert (renderer["model"], renderer["pipeline"]) == ("tiny", "StableDiffusionXLPipeline")
    assert renderer["revision"].startswith("sha256:")
    rows = (out / "samples.jsonl").read_text().splitlines()
    assert len(rows) == manifest["counts"]["samples"] > 0
    assert f"lmmprobe run --data synth:{out}" in result.stdout
    # The text item's noise image fails the OCR check: "wrote 45 samples" stood beside "asked 46
    # questions" unexplained. The summary now says where the difference went.
    ocr, post = manifest["filters"]
    assert ocr["name"] == "ocr" and ocr["dropped_items"] == 1
    kept, asked = post["questions_kept"], post["questions_asked"]
    assert kept == len(rows) < asked  # one scenario: one sample per kept question
    assert f"wrote {kept} samples" in result.stdout
    assert "filter ocr: dropped 1 item\n" in result.stdout
    assert (
        f"asked {asked} of {post['questions_drawn']} questions; {asked - kept} of them "
        f"{'was on an item a filter' if asked - kept == 1 else 'were on items the filters'} "
        f"dropped, {kept} kept"
    ) in result.stdout


class _BusyHub(LoopbackHub):
    """A Hub that answers every request 503 (busy), asking to retry at once."""

    def answer(self, path: str, query: str, body: bytes) -> Answer:
        return 503, b'{"error":"busy"}', {"Retry-After": "0"}


@pytest.mark.slow
def test_the_hub_clients_warnings_are_printed_once(tmp_path: Path) -> None:
    pytest.importorskip("diffusers")
    with _BusyHub() as hub:
        result = lmmprobe(
            *DYSCA, "--diffusion-model", "org/busy", "--out", tmp_path / "X",
            HF_ENDPOINT=hub.url, HF_HUB_OFFLINE="0",
        )  # fmt: skip
    assert result.returncode == 2
    retries = [line for line in result.stderr.splitlines() if "[Retry 1/" in line]
    assert len(retries) == 1, result.stderr
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "cannot load a diffusers text-to-image pipeline from 'org/busy'" in error
    assert ".." not in error
    assert not (tmp_path / "X").exists()
