"""The shell command that fetches a benchmark's hub repository: ``hf download``, quoted once.

A definition names its dataset repository, pinned revision and file patterns once
(`Benchmark.hub_id`, ``revision``, ``include``); the printed command and the automatic download
(`lmmprobe.data.benchmarks.load.download_snapshot`) are both made from those fields, so they
cannot disagree. Every value is quoted with `shlex.quote`: a pattern such as ``en/*`` reaches
``hf`` as one word and is never expanded by the shell.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

DATA_DIR_ENV = "LMMPROBE_DATA_DIR"
"""The variable whose folder holds the local copies (``$LMMPROBE_DATA_DIR/NAME``)."""


def local_dir_word(name: str) -> str:
    """``"$LMMPROBE_DATA_DIR/NAME"`` as one shell word: the variable expands, nothing else does."""
    quoted = shlex.quote(name)
    if quoted == name:  # plain names (all built-in ones) read naturally inside double quotes
        return f'"${DATA_DIR_ENV}/{name}"'
    return f'"${DATA_DIR_ENV}"/{quoted}'


def hf_download(name: str, hub: str, revision: str | None, include: Sequence[str] = ()) -> str:
    """The ``hf download`` command that puts dataset repo `hub` into ``$LMMPROBE_DATA_DIR/NAME``.

    Args:
        name: The benchmark's name (its folder under ``$LMMPROBE_DATA_DIR``).
        hub: The dataset repository (``lmms-lab/MMBench``).
        revision: The pinned commit; None leaves ``--revision`` out (the repository's main).
        include: Glob patterns of the files to take, one ``--include`` each (empty: every file).

    Returns:
        One line a POSIX shell reads as exactly these arguments.

    """
    words = ["hf", "download", shlex.quote(hub), "--repo-type", "dataset"]
    if revision:
        words += ["--revision", shlex.quote(revision)]
    for pattern in include:
        words += ["--include", shlex.quote(pattern)]
    words += ["--local-dir", local_dir_word(name)]
    return " ".join(words)
