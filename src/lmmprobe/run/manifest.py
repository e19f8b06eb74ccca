"""Reproducibility manifest: versions, model identities, data fingerprint, prompts, seeds, commit."""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from lmmprobe._file_kind import open_regular_file
from lmmprobe._version import __version__
from lmmprobe.data import FINGERPRINT_VERSION
from lmmprobe.formulate import CHOICE_INSTRUCTION, OPEN_INSTRUCTION
from lmmprobe.models.base import ModelIdentity
from lmmprobe.registry import installed_plugins
from lmmprobe.schema import RunSpec

KEY_LIBRARIES = (
    "pydantic", "numpy", "pillow", "rapidfuzz", "typer", "rich", "torch", "transformers",
    "openai", "datasets", "scipy",
)  # fmt: skip


def library_versions() -> dict[str, str | None]:
    """Installed versions of the libraries that can change results (None when absent)."""
    out: dict[str, str | None] = {}
    for name in KEY_LIBRARIES:
        known = _found_versions.get(name)
        if known is None:
            with contextlib.suppress(PackageNotFoundError):
                known = _found_versions[name] = version(name)
        out[name] = known
    return out


# Versions found so far in this process. Each lookup scans the installed distributions (about
# 2 ms); a running process keeps the modules it imported whatever is installed later, so a
# version once found stays. Absent libraries are looked up again (they may be installed since).
_found_versions: dict[str, str] = {}


def git_commit(path: Path | None = None) -> str | None:
    """Commit of the git checkout holding lmmprobe's source (None outside a checkout).

    ``+dirty`` is appended when tracked files have uncommitted changes.
    """
    where = path or Path(__file__).resolve().parents[1]
    try:
        # Both commands run at once: each is a process start, most of the cost.
        procs: list[subprocess.Popen[str]] = []
        try:
            for args in (["rev-parse", "HEAD"], ["status", "--porcelain", "--untracked-files=no"]):
                procs.append(
                    subprocess.Popen(
                        ["git", *args],
                        cwd=where,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        text=True,
                    )
                )
            head, status = procs
            out, _ = head.communicate(timeout=5)
            dirty, _ = status.communicate(timeout=5)
        finally:
            for proc in procs:  # whatever failed, no git process is left behind
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return out.strip() + ("+dirty" if dirty.strip() else "")


_MAX_UNTRACKED = 1_000
"""Untracked files of the package hashed by `source_changes` (past it: each name, not bytes)."""


NO_SOURCE_CHANGES = hashlib.sha256(b"").hexdigest()
"""`source_changes` of a package with no change of its own: its code is the commit's (a
checkout may still be ``+dirty`` from an edited README or test)."""


def source_changes(path: Path | None = None) -> str | None:
    """SHA-256 of lmmprobe's uncommitted source (`NO_SOURCE_CHANGES`: none; None: not known).

    None outside a checkout, or when git fails or takes too long.

    `git_commit`'s ``+dirty`` says the code is not the commit's, not which code it is: two
    runs of a checkout edited between them record the same commit. This hashes the package's
    changes against ``HEAD`` (``git diff HEAD``) and its untracked, not ignored files (a new
    module), so a run recorded with it (`lmmprobe.store.reuse` compares it) tells them apart.
    """
    where = path or Path(__file__).resolve().parents[1]
    try:
        diff = subprocess.run(
            ["git", "diff", "HEAD", "--no-ext-diff", "--no-color", "--binary", "--", "."],
            cwd=where, capture_output=True, timeout=10, check=False,
        )  # fmt: skip
        others = subprocess.run(
            ["git", "ls-files", "--others", "--exclude-standard", "-z", "--", "."],
            cwd=where, capture_output=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    if diff.returncode != 0 or others.returncode != 0:
        return None
    names = sorted(n for n in others.stdout.split(b"\0") if n)
    if not diff.stdout and not names:
        return NO_SOURCE_CHANGES
    h = hashlib.sha256(diff.stdout)
    budget = [_MOST_READ]
    for n, name in enumerate(names):
        h.update(b"\0" + name + b"\0")
        if n < _MAX_UNTRACKED:
            with contextlib.suppress(OSError):
                _hash_file(h, where / name.decode("utf-8", "surrogateescape"), budget)
    return h.hexdigest()


_MOST_HASHED = 1 << 24
"""Bytes of one untracked file that `source_changes` hashes (past it: its size and mtime)."""

_MOST_READ = 1 << 26
"""Bytes of all untracked files that `source_changes` reads, in name order (a file that does not
fit in what is left: its size and mtime). A thousand untracked data files of 16 MiB were 16 GiB
read on every run from the checkout, about 0.7 s a GiB from the page cache (re-test 18)."""


def _hash_file(h: Any, path: Path, budget: list[int]) -> None:
    """Add an untracked file's bytes to `h`, read a piece at a time, and take them from `budget`.

    Regular files only, the largest (or those past what is left of `budget[0]`) by their size
    and modification time: an untracked link to ``/dev/zero`` (or a FIFO) in the package was
    read whole, a ``MemoryError`` (or a wait forever) out of every run, and a large data file
    held in memory (re-test 17).

    Raises:
        OSError: It cannot be opened, or is no regular file (`open_regular_file`).

    """
    with open_regular_file(path, "source") as f:
        info = os.fstat(f.fileno())
        if info.st_size > min(_MOST_HASHED, budget[0]):
            h.update(b"%d:%d" % (info.st_size, info.st_mtime_ns))
            return
        budget[0] -= info.st_size
        while piece := f.read(1 << 20):
            h.update(piece)


def _later(ask: Callable[[Path | None], str | None], path: Path | None) -> Future[str | None]:
    """`ask(path)` (a git subprocess) started in a background thread: the caller's work overlaps it."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lmmprobe-git")
    try:
        return pool.submit(ask, path)
    finally:
        pool.shutdown(wait=False)  # the thread ends with its one task


def source_changes_later(path: Path | None = None) -> Future[str | None]:
    """`source_changes` started in a background thread, as `git_commit_later` is."""
    return _later(source_changes, path)


def git_commit_later(path: Path | None = None) -> Future[str | None]:
    """`git_commit` started in a background thread, so the caller's work overlaps it."""
    return _later(git_commit, path)


def build_manifest(
    spec: RunSpec,
    identities: dict[str, ModelIdentity],
    data_fingerprint: str,
    n_samples: int,
    *,
    commit: Future[str | None] | None = None,
    places: str | None = None,
) -> dict[str, Any]:
    """Everything needed to repeat a run: same manifest + same seed gives the same requests.

    `commit` is a `git_commit_later` started earlier; without it the commit is looked up here.
    `places` is the data's `lmmprobe.data.image_places` (where its image files are), recorded
    under ``data`` when given.
    """
    return {
        "lmmprobe": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "libraries": library_versions(),
        "git_commit": commit.result() if commit is not None else git_commit(),
        # Recorded with option secrets redacted, as the spec keying them is.
        "models": {spec_: ident.recorded() for spec_, ident in identities.items()},
        "data": {
            "spec": spec.data,
            "fingerprint": data_fingerprint,
            "fingerprint_version": FINGERPRINT_VERSION,
            "samples": n_samples,
            **({"image_places": places} if places is not None else {}),
        },
        "prompts": {
            "formulate": spec.formulate.model_dump(),
            "default_choice_instruction": CHOICE_INSTRUCTION,
            "default_open_instruction": OPEN_INSTRUCTION,
        },
        "generation": spec.gen.model_dump(),
        "seed": spec.seed,
        "repeats": spec.repeats,
        **_video_entry(spec),
        **_plugins_entry(),
    }


def _plugins_entry() -> dict[str, Any]:
    """The installed plugin packages and their versions (`installed_plugins`), where there are any.

    All of them, not only those whose entries the spec names: a run also finds entries while
    it runs (the ``auto`` prompt style picks one per model, ``--matcher benchmark`` each
    benchmark's matcher), and a package installed since can add a name such a lookup finds.
    A plugin upgraded between two identical runs is then a difference in their manifests,
    which `lmmprobe.store.reuse` compares: its new code scores again. None installed: nothing
    recorded, the manifest of a run without plugins as before.
    """
    plugins = installed_plugins()
    return {"plugins": plugins} if plugins else {}


def _video_entry(spec: RunSpec) -> dict[str, Any]:
    """The run's frame policy and the decoder that samples frames, where the run sets one.

    Each sample's frames (times and pixel hashes) are in its stored JSON and in the data
    fingerprint; a run without ``--frames`` samples each video with its own policy, recorded
    there too (``sampled_with``), and adds nothing here.
    """
    if spec.frames is None:
        return {}
    return {"video": {"frames": spec.frames, "decoder": video_decoder()}}


def video_decoder() -> str | None:
    """The video decoding library and version (None where PyAV is not installed)."""
    av = _found_versions.get("av")
    if av is None:
        with contextlib.suppress(PackageNotFoundError):
            av = _found_versions["av"] = version("av")
    return None if av is None else f"PyAV {av}"
