"""Shared fixtures: a store path, small PNG and JSONL files written on the fly, and what the
tests of tiny random-weight checkpoints share (an offline hub, one build cache per session)."""

from __future__ import annotations

import compileall
import importlib.util
import json
import os
import random
import shutil
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

# Caches the libraries and lmmprobe itself would write under the user's home (the datasets
# cache, the hub cache, lmmprobe's tiny checkpoints and APEx images, matplotlib's font list),
# pointed at one temporary folder for the session: tests write only under temporary folders.
# Set before any test module imports `datasets` (it reads its cache path at import time), and
# inherited by the console scripts the CLI tests start.
_CACHE_VARIABLES = {
    "HF_HOME": "huggingface",
    "HF_DATASETS_CACHE": "huggingface/datasets",
    "LMMPROBE_CACHE": "lmmprobe",
    "XDG_CACHE_HOME": "xdg",
    "MPLCONFIGDIR": "matplotlib",
}
_session_cache: Path | None = None


# The suite's models are tiny: a forward pass is microseconds of arithmetic, and a second
# OpenMP thread only adds synchronisation. On a loaded 2-core machine it is far worse: threads
# spin waiting for a core (12 MiniLM passes took 15 s with 2 threads, 0.7 s with one). One
# thread per process, for the tests and the console scripts they start, changes no result
# (the parity tests already pin one thread).
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def _compile_lmmprobe() -> None:
    """Write lmmprobe's bytecode cache once, before any test starts a console script.

    The CLI tests start thousands of fresh ``lmmprobe`` processes. Where
    ``PYTHONDONTWRITEBYTECODE`` is set (this workplace's image sets it, and an editable install
    compiles nothing), Python never writes the ``.pyc`` files, so every one of those processes
    compiled the ~300 lmmprobe modules it imports again: 0.3 to 0.4 s of CPU a call, about 40%
    of a small ``lmmprobe run``. `compileall` writes them whatever that variable says; the
    processes then only read them (a file edited later is recompiled, as Python checks each
    file's modification time). A tree that cannot be written is left as it is.
    """
    spec = importlib.util.find_spec("lmmprobe")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(folder, quiet=2)


def pytest_configure(config: pytest.Config) -> None:
    """Point every cache at a temporary folder for the session (removed at the end).

    The controller (not each xdist worker) first writes lmmprobe's bytecode (`_compile_lmmprobe`).
    """
    if not hasattr(config, "workerinput"):
        _compile_lmmprobe()
    global _session_cache
    _session_cache = Path(tempfile.mkdtemp(prefix="lmmprobe-tests-cache-"))
    for variable, folder in _CACHE_VARIABLES.items():
        os.environ[variable] = str(_session_cache / folder)
    for variable in _THREAD_VARIABLES:
        os.environ.setdefault(variable, "1")


SLOW_LIST = Path(__file__).with_name("slow_tests.txt")
"""The tests `make test` leaves out as slow, by measured CPU (`benchmarks/suite_cpu.py`)."""


def listed_slow(path: Path = SLOW_LIST) -> set[str]:
    """The test ids `path` lists: one a line; lines starting with ``#`` and blank ones skipped.

    An id without ``[...]`` names every parametrized case of its test. (A comment is a whole
    line: a parameter's id may hold a ``#``.)
    """
    if not path.exists():
        return set()
    lines = (line.strip() for line in path.read_text("utf-8").splitlines())
    return {line for line in lines if line and not line.startswith("#")}


@pytest.hookimpl(tryfirst=True)  # before the -m expression deselects by mark
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests `slow_tests.txt` lists as slow (`make test` runs ``-m 'not slow'``).

    The list is measured, not guessed: `benchmarks/suite_cpu.py --write-slow` runs the suite,
    records each test's CPU (its own and its console scripts') and lists the costliest, keeping
    at least one test of every file in the fast suite. A mark in the code (``@pytest.mark.slow``)
    works as well; the list is for tests that are slow only by what they start.

    A file named on the command line (``pytest tests/x.py``, or one of its tests) runs whole:
    whoever names a file means its tests, listed or not. With ``-m`` given on the command line
    the marks stand (``pytest -m slow tests/x.py`` runs that file's slow tests).
    """
    slow = listed_slow()
    here = config.invocation_params.dir
    chosen_by_mark = any(
        arg == "-m" or (arg.startswith("-m") and not arg.startswith("--"))
        for arg in config.invocation_params.args
    )
    named = (
        set()
        if chosen_by_mark
        else {(here / arg.split("::", 1)[0]).resolve() for arg in config.args}
    )
    for item in items:
        if item.path.resolve() in named:
            continue
        if item.nodeid in slow or item.nodeid.split("[", 1)[0] in slow:
            item.add_marker(pytest.mark.slow)
            item.stash[_LISTED] = True
    stale = stale_listed(slow, items, config)
    workerinput = getattr(config, "workerinput", None)
    if stale and (workerinput is None or workerinput.get("workerid") == "gw0"):
        # One worker says it (each collects the same tests); pytest's warnings summary shows it.
        shown = ", ".join(stale[:10]) + (f" and {len(stale) - 10} more" if len(stale) > 10 else "")
        warnings.warn(
            StaleSlowListWarning(
                f"{SLOW_LIST.name}: {len(stale)} listed test(s) match no test collected from "
                f"their file, so they mark nothing (renamed or removed: write the list again "
                f"with benchmarks/suite_cpu.py --write-slow, or edit it): {shown}"
            ),
            stacklevel=1,
        )


class StaleSlowListWarning(pytest.PytestWarning):
    """A line of `slow_tests.txt` names a test its file, collected whole, no longer has."""


def stale_listed(slow: set[str], items: Sequence[pytest.Item], config: pytest.Config) -> list[str]:
    """The listed ids that match none of `items` though their file was collected whole, sorted.

    A case renamed (``test_x[old]`` now ``test_x[new]``) or a test removed leaves a line that
    marks nothing, and the case it meant goes back into the fast suite unnoticed. Only a file
    collected whole can tell: one given by node id (``tests/x.py::test_y``) is not, nor is a
    file not collected at all. ``-k`` and ``-m`` deselect after this hook, so they do not
    narrow what it sees.
    """
    here = config.invocation_params.dir
    narrowed = {(here / arg.split("::", 1)[0]).resolve() for arg in config.args if "::" in arg}
    ids = {item.nodeid for item in items}
    ids |= {nodeid.split("[", 1)[0] for nodeid in ids}
    whole = {item.nodeid.split("::", 1)[0] for item in items if item.path.resolve() not in narrowed}
    return sorted(n for n in slow if n not in ids and n.split("::", 1)[0] in whole)


_LISTED = pytest.StashKey[bool]()
"""Set on a test marked slow by the list (not by its code)."""

_CPU_LOG = os.environ.get("LMMPROBE_TEST_CPU_LOG")
"""Where `benchmarks/suite_cpu.py` has each test's wall and CPU seconds written (unset: nowhere)."""


if _CPU_LOG:

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        """Record the test's wall time and CPU: this process's and its finished children's."""
        import resource
        import time

        def cpu() -> tuple[float, float]:
            own = resource.getrusage(resource.RUSAGE_SELF)
            kids = resource.getrusage(resource.RUSAGE_CHILDREN)
            return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime

        wall, (own, kids) = time.perf_counter(), cpu()
        yield
        wall, (own2, kids2) = time.perf_counter() - wall, cpu()
        coded = item.get_closest_marker("slow") is not None and not item.stash.get(_LISTED, False)
        with open(_CPU_LOG, "a", encoding="utf-8") as log:  # one short append per test
            log.write(
                f"{item.nodeid}\t{wall:.3f}\t{own2 - own:.3f}\t{kids2 - kids:.3f}\t{int(coded)}\n"
            )


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the session's cache folder."""
    if _session_cache is not None:
        shutil.rmtree(_session_cache, ignore_errors=True)


PngWriter = Callable[..., Path]
JsonlWriter = Callable[[Path, Sequence[dict[str, Any] | str]], Path]


def _write_png(
    path: Path,
    size: tuple[int, int] = (8, 8),
    color: tuple[int, int, int] = (200, 30, 30),
    *,
    noise: int | None = None,
) -> Path:
    """Write an RGB PNG: one flat color, or seeded noise when `noise` is a seed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.new("RGB", size, color)
    if noise is not None:
        rng = random.Random(noise)
        im.putdata([tuple(rng.randrange(256) for _ in range(3)) for _ in range(size[0] * size[1])])
    im.save(path, format="PNG")
    return path


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any] | str]) -> Path:
    """Write one line per row: dicts as JSON, strings verbatim (blank lines, comments, junk)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def tmp_db(tmp_path: Path) -> Path:
    """A store path inside a folder that does not exist yet."""
    return tmp_path / "runs" / "lmmprobe.db"


@pytest.fixture
def write_png() -> PngWriter:
    """`write_png(path, size=(8, 8), color=(r, g, b), noise=None) -> path`."""
    return _write_png


@pytest.fixture
def write_jsonl() -> JsonlWriter:
    """`write_jsonl(path, rows) -> path`; dict rows become JSON, str rows are written as is."""
    return _write_jsonl


@pytest.fixture
def hf_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep transformers, diffusers and the hub client off the network for one test.

    Modules that load checkpoints use it for every test:
    ``pytestmark = pytest.mark.usefixtures("hf_offline")``.
    """
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def tiny_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache root for the tiny random-weight checkpoints built during the session.

    Pass it as ``cache_dir`` (`tiny_model_path`, `tiny_clip_path`, `tiny_bart_path`,
    `tiny_sdxl_path`, ...): each checkpoint is built once per session, away from the user's
    cache.
    """
    return tmp_path_factory.mktemp("tiny-cache")
