"""Every registered benchmark is complete, one per file (or a table row), found without a list (issue 24).

The checks run over `BENCHMARKS.names()`, so a benchmark added as a file is checked without
editing this file: a reader, a prompt citing its source, a registered run metric (or ``needs``
saying why there is none), a row in the docs table, and a fetch command.
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lmmprobe.data.base import BENCHMARK_FOLDERS, SOURCES
from lmmprobe.data.benchmarks import BENCHMARKS, Benchmark, PromptTemplate, benchmark
from lmmprobe.metrics.run_metric import RUN_METRICS
from lmmprobe.registry import discover_modules

DOCS = Path(__file__).parents[3] / "docs" / "benchmarks.md"
SRC = Path(importlib.import_module("lmmprobe").__file__ or "").parent


def _docs_rows() -> dict[str, list[str]]:
    """The docs table's cells by benchmark name (name, title, ..., metric, ..., needs)."""
    rows = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        found = re.match(r"^\| `([^`]+)` \|(.*)\|$", line)
        if found:
            rows[found.group(1)] = [c.strip() for c in found.group(2).split(" | ")]
    return rows


@pytest.mark.parametrize("name", BENCHMARKS.names())
def test_benchmark_is_complete(name: str) -> None:
    b = BENCHMARKS.get(name)
    assert b.title and b.citation and b.license, name
    # A reader: rows to samples (a suite's members are registered benchmarks instead).
    assert callable(b.to_sample)
    if b.layout == "files" and not b.members:
        assert callable(b.read_files)
    for member in b.members:
        assert member in BENCHMARKS, f"{name}: member {member} is not registered"
    # The official prompt, with its source cited, and placeholders the loader fills.
    assert b.prompt.source.strip(), f"{name}: the prompt cites no source"
    b.prompt.template.format(question="q", options="o", context="c")
    # The metric computing the official score is registered; none only with `needs`.
    if b.metric is None:
        assert b.needs, f"{name}: no metric and nothing saying why"
    else:
        assert b.metric in RUN_METRICS, f"{name}: metric {b.metric} is not registered"
    # A row in the docs table, saying the same metric and needs.
    row = _docs_rows().get(name)
    assert row is not None, (
        f"{name}: no row in docs/benchmarks.md (run lmmprobe.data.benchmarks._table)"
    )
    assert row[4] == (f"`{b.metric}`" if b.metric else "-")
    assert row[7] == (b.needs or "-")
    # A fetch command a shell can read (a suite's says its members' are), and a hub
    # benchmark's downloads its hub repository.
    assert b.fetch.strip(), name
    if not b.members:
        shlex.split(b.fetch)
    if b.hub_id is not None:
        assert b.fetch.startswith(f"hf download {shlex.quote(b.hub_id)} "), name
        # Pinned to a commit, or its notes say why not.
        if b.revision is None:
            assert any("pinned" in note for note in b.notes), f"{name}: unpinned, no note why"
        else:
            assert re.fullmatch(r"[0-9a-f]{40}", b.revision), f"{name}: {b.revision}"


def test_each_discovered_module_defines_its_benchmarks_and_together_all_of_them() -> None:
    # One benchmark per module, or one family whose variants differ only in configuration
    # (MMMU-Pro's three settings): issue 37 keeps such a family in one file.
    found: dict[str, str] = {}
    for package in BENCHMARK_FOLDERS:
        for module in discover_modules(package):
            loaded = importlib.import_module(module)
            defined = {v.name for v in vars(loaded).values() if isinstance(v, Benchmark)}
            # A family differing only in configuration is one table module (docs/benchmarks.md,
            # "Where shared benchmark code lives"): TABLE_DEFINITIONS, the definitions its
            # rows make.
            table = getattr(loaded, "TABLE_DEFINITIONS", None)
            if table is not None:
                assert not defined, f"{module}: a table module defines nothing beside its table"
                rows = {b.name for b in table}
                assert len(rows) >= 2, f"{module}: a table of one row is a file of its own"
            else:
                # A family with its own reading may define its variants in one file (MMMU-Pro).
                assert defined, f"{module} defines no benchmark"
                rows = defined
            for name in rows:
                assert name not in found, f"{name} is defined in {found[name]} and {module}"
                found[name] = module
    assert sorted(found) == BENCHMARKS.names()
    # Every benchmark is a source of its name: the sources discover the benchmark folders too.
    assert BENCHMARKS.discover == BENCHMARK_FOLDERS
    assert set(BENCHMARK_FOLDERS) <= set(SOURCES.discover)


def test_a_misspelt_metric_is_refused_when_the_benchmark_registers() -> None:
    b = Benchmark(
        name="toy-misspelt",
        title="t",
        citation="c",
        license="l",
        formulation="open_ended",
        metric="acuracy",
        prompt=PromptTemplate("{question}", "s"),
        to_sample=lambda row, ctx: None,
        fetch="f",
    )
    with pytest.raises(ValueError) as err:
        benchmark(b)
    message = str(err.value)
    assert message.startswith(
        "benchmark 'toy-misspelt': metric 'acuracy' is not a registered run metric; did you "
        "mean accuracy"
    )
    assert message.endswith("? (`lmmprobe list metrics` shows them)")
    assert "toy-misspelt" not in BENCHMARKS and "toy-misspelt" not in SOURCES


def test_no_metric_needs_a_reason() -> None:
    fields = dict(name="toy-gen", title="t", citation="c", license="l", formulation="open_ended",
                  prompt=PromptTemplate("{question}", "s"), to_sample=lambda row, ctx: None,
                  fetch="f")  # fmt: skip
    with pytest.raises(ValueError, match="toy-gen: give metric"):
        Benchmark(metric=None, **fields)  # type: ignore[arg-type]
    assert Benchmark(metric=None, needs="an image generator", **fields).metric is None  # type: ignore[arg-type]


def _hub(**fields: object) -> Benchmark:
    base: dict[str, object] = dict(
        name="toy-hub", title="t", citation="c", license="l", formulation="open_ended",
        metric="accuracy", prompt=PromptTemplate("{question}", "s"),
        to_sample=lambda row, ctx: None, hub_id="org/toy", revision="abc",
    )  # fmt: skip
    return Benchmark(**{**base, **fields})  # type: ignore[arg-type]


def test_the_fetch_command_is_made_from_the_hub_id_once() -> None:
    made = 'hf download org/toy --repo-type dataset --revision abc --local-dir "$LMMPROBE_DATA_DIR/toy-hub"'
    assert _hub().fetch == made
    # Later steps follow the download, in the copy's folder.
    assert _hub(after_download="unzip x.zip").fetch == (
        made + ' && cd "$LMMPROBE_DATA_DIR/toy-hub" && unzip x.zip'
    )
    # Writing the download again is refused, pinned or not (the pin would be written twice).
    for fetch in ("hf download org/toy --repo-type dataset --local-dir x",
                  "hf download org/toy --revision abc --local-dir x && unzip y"):  # fmt: skip
        with pytest.raises(ValueError, match="toy-hub: fetch repeats the download of hub_id"):
            _hub(fetch=fetch)
    # Another ref of the repository differs in kind (HEMM's Winoground: the parquet branch).
    other = "hf download org/toy --repo-type dataset --revision refs/convert/parquet --local-dir x"
    assert _hub(fetch=other).fetch == other
    # A copy under another name gets its own command, not the original's folder.
    original = _hub()
    copy = Benchmark(**{**original.__dict__, "name": "toy-copy"})
    assert copy.fetch == made.replace("toy-hub", "toy-copy")
    with pytest.raises(ValueError, match="after_download follows the download made from hub_id"):
        _hub(hub_id=None, fetch="f", after_download="unzip x.zip")
    with pytest.raises(ValueError, match="with fetch given, write every step in fetch"):
        _hub(fetch=other, after_download="unzip x.zip")


# --- a benchmark is a file: dropped into the folder, found; broken, named ---------------------


def _copy_with(tmp_path: Path, files: dict[str, str]) -> dict[str, str]:
    """lmmprobe's sources copied under `tmp_path` plus `files` (relative to the package)."""
    root = tmp_path / "src"
    shutil.copytree(SRC, root / "lmmprobe", ignore=shutil.ignore_patterns("__pycache__"))
    for relative, text in files.items():
        (root / "lmmprobe" / relative).write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "LMMPROBE_"))}
    env.update(PYTHONPATH=str(root), HF_HUB_OFFLINE="1", COLUMNS="200")
    return env


def _lmmprobe(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run(
        [exe, *args], capture_output=True, text=True, timeout=300, env=env, check=False
    )


NEW_BENCHMARK = '''"""A benchmark added as one file."""

from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, benchmark

DROPPED = benchmark(
    Benchmark(
        name="toy-dropped",
        title="Toy dropped in",
        citation="test fixture",
        license="mit",
        formulation="open_ended",
        metric="{metric}",
        prompt=PromptTemplate("{{question}}", "tests/data/benchmarks/test_every_benchmark.py"),
        to_sample=lambda row, ctx: None,
        hub_id="org/dropped",
    )
)
'''


def test_a_benchmark_file_dropped_into_the_folder_is_found_without_editing_a_list(
    tmp_path: Path,
) -> None:
    env = _copy_with(
        tmp_path, {"data/benchmarks/standard/dropped.py": NEW_BENCHMARK.format(metric="accuracy")}
    )
    proc = _lmmprobe("data", "show", "toy-dropped", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Toy dropped in" in proc.stdout
    assert "hf download org/dropped" in proc.stdout  # its fetch command, made from hub_id
    listed = _lmmprobe("data", "list", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "toy-dropped" in listed.stdout and "mmbench" in listed.stdout


def test_a_broken_benchmark_file_fails_naming_the_file_and_what_is_wrong(tmp_path: Path) -> None:
    env = _copy_with(
        tmp_path, {"data/benchmarks/hemm/dropped.py": NEW_BENCHMARK.format(metric="hemm_bart")}
    )
    proc = _lmmprobe("data", "list", env=env)
    assert proc.returncode != 0
    assert "lmmprobe.data.benchmarks.hemm.dropped failed to import" in proc.stderr
    assert "metric 'hemm_bart' is not a registered run metric" in proc.stderr
    assert "did you mean hemm_bart_score" in proc.stderr
