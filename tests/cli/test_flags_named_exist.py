"""Every ``--flag`` the docs and the benchmark notes name exists on some command.

docs/benchmarks.md and the notes ``data show realworldqa`` / ``data show mmstar`` print named
``--option-marks``, an option no command has (it is ``--marks``). The options are collected from
the typer app itself, so a renamed option fails here until the text follows it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main
from tests.console import lmmprobe, subcommands

from lmmprobe.cli.main import app
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.testing.openai_server.__main__ import _parser

ROOT = Path(__file__).parents[2]
# Ours are kebab-case; a flag with an underscore is another program's (``--log_samples``).
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9_]*(?:-[a-z0-9_]+)*")

# Flags of other programs the docs quote, by program.
OTHER_TOOLS = frozenset(
    {
        # vLLM's and SGLang's server flags (README: what a vllm:/sglang: spec passes on).
        *("--tensor-parallel-size", "--tp-size", "--max-model-len", "--context-length"),
        *("--gpu-memory-utilization", "--mem-fraction-static", "--max-num-seqs"),
        *("--max-running-requests", "--dtype", "--revision", "--trust-remote-code"),
        *("--enable-prefix-caching", "--reasoning-parser", "--model-path", "--port"),
        # The README's example of args= passed on as written, and of secret-looking flags.
        *("--any", "--more", "--key", "--hf-token", "--auth", "--passwd", "--secret"),
        # The secret rule's examples: abbreviations refused, look-alikes that pass.
        *("--a", "--api", "--api-key-1", "--hf-tok", "--secretkey"),
        *("--max-num-batched-tokens", "--ssl-keyfile"),
        # `hf download`, `pip install`, `ray start`.
        *("--repo-type", "--include", "--local-dir", "--index-url", "--head", "--address"),
        # Benchmark scripts under benchmarks/ (README's table of measurements).
        *("--setup", "--shape", "--device", "--store", "--old-src", "--extra", "--sizes"),
        *("--write-slow", "--fast-share"),  # benchmarks/suite_cpu.py
        *("--old-sizes", "--fake-api", "--images", "--parallel", "--profile", "--no-lmms-eval"),
        "--rounds",  # benchmarks/vs_lmms_eval.py
        *("--samples", "--clips", "--h264-gop"),
        "--subject",  # MMMU's main_parse_and_eval.py (docs/audit.md)
        "--mode",  # MMMU-Pro's infer_transformers.py, CharXiv's evaluate.py (docs/benchmarks.md)
    }
)


def _options(command: Any) -> Iterator[str]:
    for param in getattr(command, "params", []):
        yield from (*param.opts, *param.secondary_opts)
    for sub in subcommands(command).values():
        yield from _options(sub)


# The typer app's options, and the fake OpenAI server's (`python -m lmmprobe.testing.openai_server`).
OPTIONS = frozenset(_options(typer.main.get_command(app))) | {
    option for action in _parser()._actions for option in action.option_strings
}


def _texts() -> Iterator[tuple[str, str]]:
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
    for name in BENCHMARKS.names():
        yield f"lmmprobe data show {name}", "\n".join(BENCHMARKS.get(name).notes)


def test_the_options_are_collected() -> None:
    assert {"--marks", "--max-cost", "--db", "--judge"} <= OPTIONS


def test_every_flag_named_in_the_docs_exists() -> None:
    unknown = sorted(
        {
            f"{where}: {flag}"
            for where, text in _texts()
            for flag in FLAG.findall(text)
            if flag not in OPTIONS and flag not in OTHER_TOOLS and "_" not in flag
        }
    )
    assert unknown == []


def test_the_notes_data_show_prints_name_marks() -> None:
    for name in ("realworldqa", "mmstar"):
        shown = lmmprobe("data", "show", name, columns=200)
        assert shown.returncode == 0, shown.stderr
        text = " ".join(shown.stdout.split())
        assert "--option-marks" not in text and "--marks say" in text, text
