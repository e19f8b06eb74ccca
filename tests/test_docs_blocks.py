"""Every code block of README.md and docs/*.md that a user would run, run as written.

The Python blocks run in a fresh interpreter in an empty folder. The shell blocks run in
document order in one shared folder, as a reader following the page would: the README's JSONL
example is `my.jsonl`, `latest` is the run a block above made. A command that needs what this
machine cannot have (a GPU checkpoint, a hosted API, the Hugging Face Hub, a cluster, a
placeholder such as RUN_A) is listed in `NOT_RUN` with the reason; any other command is run,
so a new command in the docs is run by default and fails the test if it does not work.

The README's "Extending lmmprobe" blocks (each headed by its file name) are run together by
tests/test_readme_extending.py; the `make` commands by .ci/run and the fresh-clone check.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LMMPROBE = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(lang: str) -> list[Block]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M):
            if m.group(1) == lang:
                line = text.count("\n", 0, m.start()) + 1
                found.append(Block(page, line, lang, m.group(2)))
    return found


def _uncommented(line: str) -> str:
    """`line` without its shell comment (a `#` outside quotes that starts a word)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def commands(block: Block) -> list[str]:
    """The block's commands: continuation lines joined, comments and blank lines dropped."""
    joined = block.text.replace("\\\n", " ")
    return [
        " ".join(c.split()) for line in joined.splitlines() if (c := _uncommented(line).strip())
    ]


# Commands documented for the reader's own setting, with why they cannot run here. Keyed by
# the command as `commands` normalizes it (shlex-joined, comments dropped).
NOT_RUN = {
    "lmmprobe run --data dysca,path=Dysca/ -m MODEL --by subtask,question_type --by scenario --by style": "Dysca's released set (Google Drive) and a placeholder model (tests/data/benchmarks/test_dysca.py runs it on Dysca's own generator output)",
    "lmmprobe runs validity RUN_A RUN_B --by subtask": "placeholder run ids (tests/data/benchmarks/test_dysca.py runs it)",
    "make demo": "the README's main job: run by the fresh-clone check",
    ".venv/bin/lmmprobe synth generate --recipe dysca --renderer diffusion --diffusion-model stabilityai/stable-diffusion-xl-base-1.0 --n 2500 --seed 2024 --out dysca/": "an SDXL checkpoint (tests/synth/test_dysca_recipe.py runs it on a tiny pipeline)",
    "make test": "the README's test command: what .ci/run runs",
    ". .venv/bin/activate": "changes the reader's shell; each command here runs the venv's script by its path",
    "pip install 'lmmprobe[ray]'": "an install, done by make",
    ".venv/bin/lmmprobe run --data synth:bench/ -m hf:/models/llava --by subtask --by scenario": "a local 7B checkpoint",
    ".venv/bin/lmmprobe run --data mmbench -m openai:gpt-4o-mini@https://api.openai.com/v1": "the Hub and a hosted API",
    ".venv/bin/lmmprobe run --data textvqa,split=validation,limit=200 -m hf:llava-hf/llava-1.5-7b-hf": "the Hub",
    "lmmprobe run --data mmbench -m openai:gpt-4o-mini@https://api.openai.com/v1": "the Hub and a hosted API",
    "lmmprobe run --data textvqa,split=validation,limit=200 -m hf:llava-hf/llava-1.5-7b-hf": "the Hub",
    "lmmprobe run --data hemm -m ...": "placeholder model",
    "lmmprobe run --data ocrbench-v2 -m MODEL --by group": "a local copy from Google Drive and a placeholder model (tests/data/benchmarks/test_ocrbench_v2.py runs it on the release layout)",
    "lmmprobe run --data ocrbench-v2 -m MODEL --by type": "the same copy and placeholder model (tests/data/benchmarks/test_ocrbench_v2.py)",
    "lmmprobe run --data cmmmu -m MODEL --by category": "the Hub and a placeholder model (tests/data/benchmarks/test_cmmmu.py runs it on a local copy)",
    "lmmprobe score Yi-VL-34B-response.jsonl --benchmark cmmmu --field prediction=response --as-published": "CMMMU's val copy from the Hub (tests/data/benchmarks/test_cmmmu.py runs it on a local copy)",
    "lmmprobe run --data mathvista -m openai:gpt-4o-mini@https://api.openai.com/v1 --judge openai:gpt-4o@https://api.openai.com/v1": "the Hub and a hosted API (model and judge)",
    "lmmprobe run --data llava-wild -m hf:llava-hf/llava-1.5-7b-hf --judge vllm:Qwen/Qwen2.5-72B-Instruct": "the Hub and a served 72B judge",
    "export LMMPROBE_BART_MODEL=/path/to/bart-large-cnn": "a local BART checkpoint",
    ".venv/bin/lmmprobe run --data hemm -m MODEL_A -m MODEL_B --by task": "placeholder models and the Hub",
    ".venv/bin/lmmprobe run --data reform:ReForm-Eval-Data/VQA_v2.json": "ReForm-Eval's released data (tests/data/test_reform.py reads its schema)",
    ".venv/bin/lmmprobe run --data 'hf:./mmbench_dev,split=dev,options=choices,answer=answer'": "a saved datasets copy (tests/data/test_hf_dataset.py)",
    ".venv/bin/lmmprobe score preds.json": "the reader's prediction file (formats: tests/test_predictions.py)",
    ".venv/bin/lmmprobe score preds.json --infer-method likelihood": "the reader's prediction file",
    ".venv/bin/lmmprobe score captions.json --formulation generation": "the reader's prediction file",
    ".venv/bin/lmmprobe score captions.json --formulation generation --tokenizer ptb": "the reader's prediction file and Java",
    ".venv/bin/lmmprobe score kie.json --formulation kie --format json": "the reader's prediction file",
    ".venv/bin/lmmprobe score outputs.json --ground-truth Dysca.json": "the reader's Dysca outputs (tests/test_predictions.py)",
    "lmmprobe score outputs/llava1.5_13b --benchmark mmmu --as-published": "MMMU's released data and the reader's output folder (tests/predictions/test_score_audit_cli.py builds both)",
    "lmmprobe score results/random/output_random_guess.json --benchmark mathvista --as-published --tool-version 2023-10-03": "MathVista's released output and a local MathVista copy (tests/parity/test_mathvista_published.py builds both)",
    "LMMPROBE_DATA_DIR=/empty HF_HUB_OFFLINE=1 lmmprobe score Model_MMBench_DEV_EN_openai_result.xlsx --benchmark mmbench": "a VLMEvalKit table (tests/predictions/test_file_items.py scores one with no copy)",
    "lmmprobe run --data openvlm -m ...": "placeholder models (tests/data/benchmarks/test_leaderboard_set.py runs the set)",
    "lmmprobe run --data openvlm-main -m ...": "placeholder models",
    "lmmprobe run --data videomme -m hf:Qwen/Qwen2.5-VL-7B-Instruct --by duration": "the Hub and a 7B checkpoint (tests/data/benchmarks/test_video_benchmarks.py runs a local copy)",
    "lmmprobe run --data videomme-subtitles -m ...": "placeholder model (tests/data/benchmarks/test_video_benchmarks.py)",
    "lmmprobe run --data mvbench -m ... --response-prefix 'Best option:(' --by task_type": "placeholder model (tests/data/benchmarks/test_video_benchmarks.py)",
    "lmmprobe run --data mvbench -m ... --frames 8,16,32": "placeholder model (tests/metrics/test_frame_sensitivity.py runs a sweep)",
    ".venv/bin/lmmprobe run --data synth:vbench/ -m hf:/models/qwen2.5-vl --by subtask --frames 8,16": "a local video checkpoint (tests/synth/test_video.py runs a video set with the first baseline)",
    "lmmprobe score Model_HallusionBench_auxmatch.xlsx --as-published": "the reader's VLMEvalKit table (tests/parity/test_vlmevalkit_published.py runs it on a generated one)",
    "lmmprobe score vila_13b/vila_13b_MME.xlsx --as-published": "the reader's VLMEvalKit work folder (tests/parity/test_vlmevalkit_released.py runs it on the released VILA-13B one)",
    "lmmprobe score vila_13b/vila_13b_MMStar_acc.csv --benchmark mmstar --as-published": "the reader's VLMEvalKit work folder (tests/parity/test_vlmevalkit_released.py)",
    "lmmprobe score vila_13b --benchmark pope --audit": "the reader's VLMEvalKit work folder (tests/parity/test_vlmevalkit_released.py)",
    "lmmprobe score samples_mmmu_val.jsonl --benchmark mmmu --audit": "MMMU's released data and the reader's lmms-eval log (tests/predictions/test_score_audit_cli.py)",
    "lmmprobe score preds.json --as-published": "the reader's ReForm-Eval file (tests/predictions/test_reform_reader.py)",
    "lmmprobe import preds.json --model llava": "the reader's ReForm-Eval file (tests/predictions/test_reform_reader.py)",
    "lmmprobe score out.json --ground-truth Dysca.json --as-published": "the reader's Dysca outputs (tests/predictions/test_dysca_reader.py)",
    "lmmprobe import out.json --ground-truth Dysca.json --model llava": "the reader's Dysca outputs (tests/predictions/test_dysca_reader.py)",
    "lmmprobe score results/llava1.5_13b --benchmark mmmu": "the reader's MMMU outputs and a local MMMU copy (tests/predictions/test_score_and_import_cli.py)",
    "lmmprobe import results/llava1.5_13b --benchmark mmmu --model llava-1.5-13b": "the reader's MMMU outputs and a local MMMU copy (tests/predictions/test_score_and_import_cli.py)",
    "lmmprobe score answers.jsonl --benchmark textvqa --field id=question_id,prediction=answer": "the reader's answers and a local TextVQA copy (tests/predictions/test_score_and_import_cli.py)",
    '.venv/bin/lmmprobe apex "Can models recognize vehicles under heavy blur?" -m hf:/models/llava --orchestrator openai:gpt-4o-mini --max-experiments 5 --images-per-answer 20': "a local checkpoint and a hosted orchestrator",
    '.venv/bin/lmmprobe apex "Can models identify rotated images?" -m hf:/models/other --orchestrator replay:apex-rot/report.json': "a local checkpoint",
    ".venv/bin/lmmprobe run -m hf:./my-checkpoint": "a local checkpoint",
    ".venv/bin/lmmprobe run -m openai:gpt-4o@http://localhost:8000/v1": "a local server (tests/models/test_openai*.py use a loopback fake)",
    ".venv/bin/lmmprobe run -m vllm:Qwen/Qwen2.5-VL-7B-Instruct,max_model_len=16384,gpu_memory_utilization=0.85": "vLLM, a GPU and the Hub (tests/models/test_served.py serves a fake)",
    ".venv/bin/lmmprobe run -m 'vllm:/models/qwen3-vl-8b-thinking,tensor_parallel_size=2,reasoning_parser=qwen3,args=--enable-prefix-caching'": "vLLM, two GPUs and a local checkpoint",
    ".venv/bin/lmmprobe run -m sglang:/models/glm-4.5v,tensor_parallel_size=4,reasoning_parser=glm45": "SGLang, four GPUs and a local checkpoint",
    ".venv/bin/lmmprobe run --method likelihood ...": "placeholder arguments",
    ".venv/bin/lmmprobe compare RUN_A RUN_B": "placeholder run ids",
    ".venv/bin/lmmprobe report RUN_A RUN_B --out report.html": "placeholder run ids",
    ".venv/bin/lmmprobe report RUN_A RUN_B --cards cards.yaml --out report.html": "placeholder run ids",
    ".venv/bin/lmmprobe serve": "serves until stopped (tests/serve start it on loopback)",
    ".venv/bin/lmmprobe elo votes.jsonl": "the reader's votes file (tests/holistic, tests/serve)",
    ".venv/bin/lmmprobe elo battles.jsonl": "votes cast in the arena (tests/serve/test_arena_cli.py)",
    ".venv/bin/lmmprobe arena judge --judge openai:gpt-4o-mini@https://api.openai.com/v1 --judge-sees-image": "a hosted API (tests/cli/test_arena_judge.py uses a loopback fake)",
    "ray start --head": "a cluster",
    "ray start --head --port=6379": "a cluster",
    "ray start --address=HEAD_IP:6379": "a cluster",
}
NOT_RUN_PREFIXES = {
    ".venv/bin/lmmprobe run -m hf:llava-hf/": "the Hub",
    ".venv/bin/lmmprobe run -m hf:/models/": "a local checkpoint on a GPU",
    ".venv/bin/lmmprobe run -m hf:google/": "the Hub",
    ".venv/bin/lmmprobe run -m 'hf:google/": "the Hub",
    ".venv/bin/lmmprobe run -m 'hf:/models/": "a local checkpoint on several GPUs",
    ".venv/bin/lmmprobe run -m openai:": "a model server or hosted API",
    ".venv/bin/lmmprobe run -m 'openai:": "a hosted API",
    "OPENAI_API_KEY=": "a hosted API",
    "MY_PROVIDER_KEY=": "a hosted API",
    ".venv/bin/lmmprobe run --data mmbench -m hf:/models/": "the Hub and a local checkpoint",
    "lmmprobe run -m hf:./ckpt": "a local checkpoint (the Ray executor: tests/run/test_ray*.py)",
    "lmmprobe run -m hf:/models/": "a local checkpoint on a cluster",
    "lmmprobe run ... ": "placeholder arguments",
}


# Documented commands that take a minute or more here (a 1,000-image synthetic set, a tiny
# checkpoint's weights, an APEx campaign): run by the slow test, in document order, each group
# with what it needs from the group above it.
SLOW = [
    ".venv/bin/lmmprobe synth generate --n 1000 --out bench/ --workers 2 --scenarios clean,corruption,print_attack",
    ".venv/bin/lmmprobe synth show bench/",
    ".venv/bin/lmmprobe synth generate --video --n 200 --out vbench/ --workers 2 --scenarios clean,corruption",
    ".venv/bin/lmmprobe synth generate --recipe dysca --renderer diffusion --diffusion-model tiny --n 1 --out dysca-try/",
    ".venv/bin/lmmprobe run -m hf:tiny-llava --method likelihood --response-prefix 'The answer is'",
    '.venv/bin/lmmprobe apex "Can models identify rotated images?" -m hf:tiny-llava -m random --out apex-rot/',
    ".venv/bin/lmmprobe report apex-rot/ --out apex.html",
]


def not_run_reason(command: str) -> str | None:
    if command in NOT_RUN:
        return NOT_RUN[command]
    return next((why for p, why in NOT_RUN_PREFIXES.items() if command.startswith(p)), None)


def _prepare(folder: Path) -> None:
    """What the pages tell the reader to have: the JSONL example, its images, a class folder."""
    (jsonl,) = [b for b in blocks("json") if '"question"' in b.text]
    (folder / "my.jsonl").write_text(jsonl.text, encoding="utf-8")
    for row in map(json.loads, jsonl.text.splitlines()):
        for image in row["images"]:
            (folder / image).parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (32, 32), "orange").save(folder / image)
    for label, colour in [
        ("daisy", "white"),
        ("iris", "blue"),
        ("rose", "red"),
        ("tulip", "yellow"),
    ]:
        (folder / "flowers" / label).mkdir(parents=True)
        for i in range(3):
            Image.new("RGB", (16, 16), colour).save(folder / "flowers" / label / f"{i}.png")


def _shell(command: str) -> str:
    """The command with the docs' `.venv/bin/lmmprobe` / `lmmprobe` made this venv's script."""
    assert LMMPROBE is not None, "pip install -e . installs the lmmprobe console script"
    command = command.replace(".venv/bin/lmmprobe", shlex.quote(LMMPROBE))
    return re.sub(r"(^|&& )lmmprobe ", lambda m: f"{m.group(1)}{shlex.quote(LMMPROBE)} ", command)


def _run_in_order(folder: Path, wanted: Callable[[str], bool]) -> int:
    """Run the documented commands `wanted` selects, in page order, in `folder`."""
    _prepare(folder)
    ran, failed = 0, []
    for block in blocks("bash"):
        for command in commands(block):
            if not_run_reason(command) is not None or not wanted(command):
                continue
            proc = subprocess.run(
                _shell(command), shell=True, cwd=folder, capture_output=True, text=True,
                timeout=900,
            )  # fmt: skip
            ran += 1
            if proc.returncode != 0:
                failed.append(f"{block.where}: {command}\n{proc.stderr[-1500:]}")
    assert not failed, "\n\n".join(failed)
    return ran


def test_every_shell_block_runs_in_document_order(tmp_path: Path) -> None:
    ran = _run_in_order(tmp_path, lambda command: command not in SLOW)
    assert ran >= 25, f"only {ran} documented commands ran"


@pytest.mark.slow
def test_the_slow_documented_commands_run(tmp_path: Path) -> None:
    assert _run_in_order(tmp_path, lambda command: command in SLOW) == len(SLOW)


def test_commands_not_run_are_still_in_the_docs() -> None:
    # A stale entry would hide nothing, but it says the tables no longer describe the pages.
    documented = {c for lang in ("bash", "sh") for b in blocks(lang) for c in commands(b)}
    assert not (set(NOT_RUN) | set(SLOW)) - documented, (set(NOT_RUN) | set(SLOW)) - documented


# Python blocks not run here, by a line they contain, with why.
PYTHON_NOT_RUN = {
    'RayExecutor(address="auto"': "a Ray cluster and a local checkpoint ./ckpt (tests/run/test_ray*.py)",
}


def _python_blocks() -> list[Block]:
    # A block headed by its file name ("# my_source.py") is an "Extending" file: those run
    # together in tests/test_readme_extending.py.
    return [
        b
        for b in blocks("python")
        if not re.match(r"# [\w/]+\.py\n", b.text)
        and not any(line in b.text for line in PYTHON_NOT_RUN)
    ]


def test_python_blocks_are_run_or_say_why_not() -> None:
    every = blocks("python")
    extending = [b for b in every if re.match(r"# [\w/]+\.py\n", b.text)]
    assert len(extending) == 5 and len(_python_blocks()) >= 2
    assert len(every) == len(extending) + len(_python_blocks()) + len(PYTHON_NOT_RUN)


@pytest.mark.parametrize("block", _python_blocks(), ids=lambda b: b.where)
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", block.text], cwd=tmp_path, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, f"{block.where}\n{done.stdout}{done.stderr}"
