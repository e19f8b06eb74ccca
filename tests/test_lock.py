"""Installs are reproducible: everything `make` installs is pinned by requirements.lock.

`make` installs lmmprobe with the extras the Makefile names under `-c requirements.lock`. If
pyproject.toml gains a dependency (or an extra) the lock does not pin, a fresh clone resolves
whatever is newest that day; this test walks the installed dependency tree of lmmprobe with
those extras and fails, naming the package, until `make lock` has pinned it. It also checks that
the environment the suite runs in has the locked versions.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).parents[1]


def _locked() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = Version(version)
    return pins


def _make_extras() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(r"^EXTRAS := (.+)$", makefile, flags=re.M)
    assert match, "the Makefile names the extras it installs in EXTRAS"
    return set(match.group(1).strip().split(","))


def _installed_tree(root: str, extras: set[str]) -> dict[str, Version]:
    """Every distribution `root[extras]` pulls in, by canonical name, with its installed version."""
    found: dict[str, Version] = {}
    todo = [(root, frozenset(extras))]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, wanted = todo.pop()
        if (name, wanted) in seen:
            continue
        seen.add((name, wanted))
        dist = metadata.distribution(name)
        found[canonicalize_name(name)] = Version(dist.version)
        for spec in dist.requires or []:
            req = Requirement(spec)
            environments = [{"extra": e} for e in wanted] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in environments):
                todo.append((req.name, frozenset(req.extras)))
    return found


def test_everything_make_installs_is_locked_at_the_installed_version() -> None:
    pins = _locked()
    tree = _installed_tree("lmmprobe", _make_extras())
    tree.pop("lmmprobe")
    unpinned = sorted(set(tree) - set(pins))
    assert not unpinned, f"not in requirements.lock (run `make lock`): {unpinned}"
    # A local label (torch's +cpu) is the build, not the release the lock pins.
    moved = {
        name: (str(pins[name]), str(v)) for name, v in tree.items() if v.public != str(pins[name])
    }
    assert not moved, f"installed versions differ from requirements.lock (lock, installed): {moved}"


def test_fetch_commands_run_with_what_make_installs() -> None:
    # Issue 34, item 16: `lmmprobe data show dysca` printed a `gdown` command, and nothing
    # installed gdown. Each program a fetch command runs from PyPI is in an extra `make`
    # installs, pinned by the lock.
    from lmmprobe.data.benchmarks import BENCHMARKS
    from lmmprobe.data.benchmarks._describe import describe

    from_pypi = {"gdown": "gdown", "hf": "huggingface-hub"}  # program -> distribution
    commands = [describe(BENCHMARKS.get(n))["fetch"] or "" for n in BENCHMARKS.names()]
    used = {
        from_pypi[word]
        for command in commands
        for part in re.split(r"&&|\|\||;|\|", command)
        if (word := part.split()[0] if part.split() else "") in from_pypi
    }
    assert "gdown" in used
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    declared = {
        canonicalize_name(Requirement(spec).name)
        for extra in _make_extras()
        for spec in extras[extra]
        if not spec.startswith("lmmprobe[")
    }
    pins = _locked()
    for dist in used:
        name = canonicalize_name(dist)
        assert name in declared or name in pins, f"{dist}: no extra installs it"
        assert name in pins, f"{dist}: not in requirements.lock"
    assert canonicalize_name("gdown") in declared
