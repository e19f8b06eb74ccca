"""Model specs and the registry: known names, lazy optional backends, install hints."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.console import lmmprobe
from tests.fresh_python import run_fresh
from tests.plugin_dist import plugin_path

from lmmprobe.models import Model, list_models, load_model, parse_model_spec
from lmmprobe.registry import Registry, RegistryError


def _installed(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


# --- parse_model_spec ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("random", ("random", None, {})),
        ("first,delay=0", ("first", None, {"delay": "0"})),
        ("first,delay=0.01,batch=8", ("first", None, {"delay": "0.01", "batch": "8"})),
        ("random, seed = 3 ", ("random", None, {"seed": "3"})),
        ("hf:./ckpt,dtype=float32", ("hf", "./ckpt", {"dtype": "float32"})),
        ("hf:org/model", ("hf", "org/model", {})),
        (
            "openai:gpt-4o@http://localhost:8000/v1",
            ("openai", "gpt-4o@http://localhost:8000/v1", {}),
        ),
        ("openai:gpt@http://h,temperature=0", ("openai", "gpt@http://h", {"temperature": "0"})),
        ("first,note=a=b", ("first", None, {"note": "a=b"})),
        ("hf:", ("hf", "", {})),
    ],
)
def test_parse_model_spec(spec: str, expected: tuple[object, ...]) -> None:
    assert parse_model_spec(spec) == expected


@pytest.mark.parametrize("spec", ["first,delay", "first,=3", "random,", "hf:x,dtype"])
def test_malformed_option_is_value_error(spec: str) -> None:
    with pytest.raises(ValueError, match="key=value"):
        parse_model_spec(spec)
    with pytest.raises(ValueError):
        load_model(spec)


# --- load_model ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec", ["random", "first", "first,delay=0", "random,seed=4", "random,batch=2,delay=0"]
)
def test_load_baselines(spec: str) -> None:
    model = load_model(spec)
    assert isinstance(model, Model)
    assert model.identity.backend == spec.split(",")[0]
    assert model.capabilities.likelihood


def test_baseline_options_reach_the_model() -> None:
    model = load_model("random,seed=4,batch=2")
    assert model.identity.options == {"seed": 4}
    assert model.capabilities.max_batch_size == 2


def test_delay_does_not_change_identity() -> None:
    assert load_model("first,delay=0").identity == load_model("first").identity
    assert load_model("random,seed=1").identity != load_model("random,seed=2").identity


def test_unknown_backend_lists_known_names() -> None:
    with pytest.raises(RegistryError) as info:
        load_model("nosuchbackend:x")
    message = str(info.value)
    assert "nosuchbackend" in message
    for name in ("first", "random", "hf", "openai"):
        assert name in message


@pytest.mark.parametrize(
    ("spec", "requires", "hint"),
    [
        ("hf:x", ("torch", "transformers"), "pip install 'lmmprobe[hf]'"),
        ("openai:gpt@http://h", ("openai",), "pip install 'lmmprobe[api]'"),
    ],
)
def test_missing_optional_dependency_gives_install_command(
    spec: str, requires: tuple[str, ...], hint: str
) -> None:
    if _installed(*requires):
        pytest.skip(f"{', '.join(requires)} installed")
    with pytest.raises(RegistryError) as info:
        load_model(spec)
    assert hint in str(info.value)
    rows = {name: status for name, status, _ in list_models()}
    assert hint in rows[spec.split(":")[0]]


def test_list_models_marks_baselines_ready() -> None:
    rows = {name: (status, summary) for name, status, summary in list_models()}
    assert {"first", "random", "hf", "openai"} <= set(rows)
    assert rows["first"][0] == "ready"
    assert rows["random"][0] == "ready"
    # Built-ins only: other test modules register stand-ins of their own.
    assert all(rows[name][1] for name in ("first", "random", "hf", "openai"))


@pytest.mark.parametrize(
    "spec", ["random,foo=1", "first,temperature=0", "random:target", "first:x", "random,seed=abc"]
)
def test_bad_baseline_option_is_value_error(spec: str) -> None:
    with pytest.raises(ValueError):
        load_model(spec)


# --- Registry ------------------------------------------------------------------------------------


def test_registry_register_and_get() -> None:
    reg: Registry[object] = Registry("widget")

    @reg.register("b", summary="the b widget")
    def b() -> str:
        """Make b."""
        return "b"

    @reg.register("a")
    def a() -> str:
        """Make a.

        More text.
        """
        return "a"

    assert reg.get("b") is b
    assert reg.names() == ["a", "b"]
    assert reg.summary("b") == "the b widget"
    assert reg.summary("a") == "Make a."
    with pytest.raises(RegistryError, match="unknown widget 'c'; known: a, b"):
        reg.get("c")


def test_registry_lazy_entry_missing_dependency() -> None:
    reg: Registry[object] = Registry("widget")
    reg.register_lazy(
        "fancy", "json:dumps", requires=("lmmprobe_no_such_dep_xyz",), extra="fancy", summary="s"
    )
    assert reg.missing_requirements("fancy") == ["lmmprobe_no_such_dep_xyz"]
    with pytest.raises(RegistryError) as info:
        reg.get("fancy")
    assert "pip install 'lmmprobe[fancy]'" in str(info.value)
    assert "lmmprobe_no_such_dep_xyz" in str(info.value)


def test_registry_lazy_entry_without_extra_names_the_module() -> None:
    reg: Registry[object] = Registry("widget")
    reg.register_lazy("plain", "json:dumps", requires=("lmmprobe_no_such_dep_xyz",))
    with pytest.raises(RegistryError, match="pip install lmmprobe_no_such_dep_xyz"):
        reg.get("plain")


def test_registry_lazy_entry_imports_on_use() -> None:
    import json

    reg: Registry[object] = Registry("widget")
    reg.register_lazy("dumps", "json:dumps", requires=("json",))
    assert reg.names() == ["dumps"]
    assert reg.missing_requirements("dumps") == []
    assert reg.get("dumps") is json.dumps


def test_registry_lazy_entry_for_absent_module() -> None:
    reg: Registry[object] = Registry("widget")
    reg.register_lazy("gone", "lmmprobe.models.no_such_module:load")
    with pytest.raises(RegistryError, match="not available"):
        reg.get("gone")


# --- entry-point plugins ---------------------------------------------------------------------------


def write_plugin(
    root: Path, dist: str, group: str, entries: dict[str, str], modules: dict[str, str]
) -> Path:
    """Install a tiny plugin distribution under `root`: its modules and a dist-info whose
    entry_points.txt declares `entries` in `group` (what pip writes for a pyproject's
    ``[project.entry-points]`` table)."""
    for name, source in modules.items():
        (root / f"{name}.py").write_text(source, encoding="utf-8")
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = [f"[{group}]", *(f"{name} = {target}" for name, target in entries.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_plugin_is_listed_before_import_and_loaded_on_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = "lmmprobe_plugin_shiny_xyz"
    write_plugin(
        tmp_path,
        "lmmprobe-widgets-xyz",
        "lmmprobe.test_widgets",
        {"shiny": f"{module}:make"},
        {module: "def make():\n    return 'shiny!'\n"},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg: Registry[Callable[[], str]] = Registry("widget", entry_point_group="lmmprobe.test_widgets")

    @reg.register("plain")
    def plain() -> str:
        return "plain"

    assert reg.names() == ["plain", "shiny"]
    assert module not in sys.modules  # listed from its metadata, not imported
    assert reg.origin("shiny") == "plugin (lmmprobe-widgets-xyz)"
    assert reg.origin("plain") == "built-in"
    assert reg.get("shiny")() == "shiny!"
    rows = {e.name: e for e in reg.entries()}
    assert rows["shiny"].status == "ready" and rows["shiny"].origin.startswith("plugin")


def test_builtin_keeps_its_name_over_a_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = "lmmprobe_plugin_clash_xyz"
    write_plugin(
        tmp_path,
        "lmmprobe-clash-xyz",
        "lmmprobe.test_clash",
        {"plain": f"{module}:make"},
        {module: "def make():\n    return 'plugin'\n"},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg: Registry[Callable[[], str]] = Registry("widget", entry_point_group="lmmprobe.test_clash")
    reg.register("plain")(lambda: "built-in")
    assert reg.get("plain")() == "built-in"
    assert reg.origin("plain") == "built-in"


@pytest.mark.parametrize(
    ("source", "target", "why"),
    [
        (
            "raise RuntimeError('needs a licence key')\n",
            "make",
            "RuntimeError: needs a licence key",
        ),
        ("def other():\n    pass\n", "make", "AttributeError"),
    ],
)
def test_broken_plugin_names_its_package_and_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, target: str, why: str
) -> None:
    module = f"lmmprobe_plugin_broken_{len(why)}_xyz"
    write_plugin(
        tmp_path,
        "lmmprobe-broken-xyz",
        "lmmprobe.test_broken",
        {"bad": f"{module}:{target}"},
        {module: source},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg: Registry[object] = Registry("widget", entry_point_group="lmmprobe.test_broken")
    assert reg.names() == ["bad"]  # a broken plugin does not break listing
    with pytest.raises(RegistryError) as info:
        reg.get("bad")
    message = str(info.value)
    assert "widget 'bad'" in message and "lmmprobe-broken-xyz" in message
    assert f"lmmprobe.test_broken: bad = {module}:{target}" in message
    assert why in message and "fix or uninstall lmmprobe-broken-xyz" in message


def test_model_plugin_resolves_through_load_model_in_a_fresh_process(tmp_path: Path) -> None:
    module = "lmmprobe_plugin_model_xyz"
    write_plugin(
        tmp_path,
        "lmmprobe-model-xyz",
        "lmmprobe.models",
        {"plugged": f"{module}:load"},
        {
            module: "from lmmprobe.models.baselines import FirstBaseline\n"
            "def load(target, options):\n    return FirstBaseline(target, options)\n"
        },
    )
    script = (
        "from lmmprobe.models import list_models, load_model\n"
        "print(sorted(n for n, _, _ in list_models()))\n"
        "print(load_model('plugged').identity.backend)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    listed, backend = proc.stdout.splitlines()
    assert "'plugged'" in listed and "'first'" in listed
    assert backend == "first"


# --- built-in entries load on first use, once, for every thread -------------------------------------


def test_models_registry_resolves_builtins_without_a_helper_call() -> None:
    # Nothing but the registry itself: no load_model or list_models first.
    lines = run_fresh(
        "from lmmprobe.models import MODELS\n"
        "print(MODELS.get('random').__name__)\n"
        "print(' '.join(MODELS.names()))\n"
        "print(MODELS.install_hint('hf'))\n"
    )
    assert lines[0] == "RandomBaseline"
    assert {"first", "random", "hf", "openai"} <= set(lines[1].split())
    assert lines[2] == "pip install 'lmmprobe[hf]'"


def test_models_registry_membership_loads_builtins() -> None:
    lines = run_fresh(
        "from lmmprobe.models.base import MODELS\nprint('first' in MODELS, 'openai' in MODELS)\n"
    )
    assert lines == ["True True"]


def _write_slow_registry(root: Path, tag: str) -> tuple[str, str]:
    """Modules `reg_<tag>` (a registry) and `builtin_<tag>` (its slow built-in module)."""
    reg_module, builtin_module = f"lmmprobe_test_reg_{tag}", f"lmmprobe_test_builtin_{tag}"
    (root / f"{reg_module}.py").write_text(
        "from lmmprobe.registry import Registry\n"
        f"REG = Registry('widget', builtins=({builtin_module!r},))\n",
        encoding="utf-8",
    )
    (root / f"{builtin_module}.py").write_text(
        "import time\n"
        f"from {reg_module} import REG\n"
        "REG.register('a')(lambda: 'a')\n"
        "time.sleep(0.3)\n"
        # A lookup on the loading thread, while loading: re-entrant, sees what is there so far.
        "assert REG.names() == ['a'], REG.names()\n"
        "REG.register('b')(lambda: 'b')\n",
        encoding="utf-8",
    )
    return reg_module, builtin_module


def test_first_lookup_from_many_threads_sees_the_whole_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reg_module, builtin_module = _write_slow_registry(tmp_path, "threads")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        reg: Registry[Callable[[], str]] = importlib.import_module(reg_module).REG
        seen: list[object] = []
        start = threading.Barrier(8)

        def lookup(i: int) -> None:
            start.wait()
            try:
                seen.append(reg.names() if i % 2 else reg.get("b")())
            except Exception as exc:  # recorded: the assertion below shows it
                seen.append(exc)

        threads = [threading.Thread(target=lookup, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert sorted(map(repr, seen)) == sorted([repr(["a", "b"])] * 4 + [repr("b")] * 4)
    finally:
        sys.modules.pop(reg_module, None)
        sys.modules.pop(builtin_module, None)


def test_failed_builtin_import_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = "lmmprobe_test_builtin_flaky"
    (tmp_path / f"{module}.py").write_text("raise ImportError('not yet')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg: Registry[object] = Registry("widget", builtins=(module,))
    try:
        with pytest.raises(ImportError, match="not yet"):
            reg.names()
        (tmp_path / f"{module}.py").write_text("", encoding="utf-8")
        sys.modules.pop(module, None)
        importlib.invalidate_caches()
        reg.register("late")(object())
        assert reg.names() == ["late"]
    finally:
        sys.modules.pop(module, None)


def test_hub_ids_whose_organisation_starts_with_tiny_are_not_taken_for_aliases() -> None:
    from lmmprobe.models._builtin import check_hf_target

    check_hf_target("tiny-org/some-model")  # a hub id: left to the hub checks, not refused here
    with pytest.raises(ValueError, match="did you mean hf:tiny-llava"):
        check_hf_target("tiny-lava")


# --- discovered packages: every module of a folder, no list -------------------------------------


def _package(root: Path, name: str, modules: dict[str, str]) -> None:
    """A package `name` under `root` whose modules append their name to `<name>_seen.SEEN`."""
    (root / f"{name}_seen.py").write_text("SEEN: list[str] = []\n", encoding="utf-8")
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text("", encoding="utf-8")
    for module, body in modules.items():
        head = f"from {name}_seen import SEEN\nSEEN.append({module!r})\n"
        (folder / f"{module}.py").write_text(head + body, encoding="utf-8")


@pytest.fixture
def discovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Registry[object]]]:
    """Make a package on sys.path and a registry discovering it; forget both afterwards."""
    made: list[str] = []

    def make(name: str, modules: dict[str, str]) -> Registry[object]:
        _package(tmp_path, name, modules)
        made.append(name)
        return Registry("widget", discover=(name,))

    monkeypatch.syspath_prepend(str(tmp_path))
    yield make
    for name in made:
        for key in [k for k in sys.modules if k == name or k.startswith(f"{name}.")]:
            sys.modules.pop(key)
        sys.modules.pop(f"{name}_seen", None)


def test_every_module_of_a_discovered_package_is_imported_in_name_order(
    discovered: Callable[..., Registry[object]],
) -> None:
    # The modules register into the registry they find on the package (no list names them).
    body = "import {pkg}\n{pkg}.REG.register(__name__.rsplit('.', 1)[1])(object())\n"
    reg = discovered(
        "lmmprobe_test_disc",
        {
            "zebra": body.format(pkg="lmmprobe_test_disc"),
            "alpha": body.format(pkg="lmmprobe_test_disc"),
            "_helper": "raise RuntimeError('a private module is never imported by discovery')\n",
        },
    )
    import lmmprobe_test_disc  # type: ignore[import-not-found]
    import lmmprobe_test_disc_seen  # type: ignore[import-not-found]

    lmmprobe_test_disc.REG = reg
    assert reg.names() == ["alpha", "zebra"]
    assert lmmprobe_test_disc_seen.SEEN == ["alpha", "zebra"]  # sorted, on every machine
    assert "zebra" in reg  # imported once: a second lookup imports nothing more
    assert lmmprobe_test_disc_seen.SEEN == ["alpha", "zebra"]


def test_a_broken_discovered_module_raises_naming_it(
    discovered: Callable[..., Registry[object]],
) -> None:
    reg = discovered("lmmprobe_test_broken", {"fine": "", "typo": "x = undefined_name\n"})
    with pytest.raises(RegistryError) as err:
        reg.names()
    assert str(err.value) == (
        "the widget module lmmprobe_test_broken.typo failed to import: "
        "NameError: name 'undefined_name' is not defined"
    )
    # Never skipped: the next lookup fails the same way instead of answering without it.
    with pytest.raises(RegistryError, match=re.escape("lmmprobe_test_broken.typo")):
        reg.get("fine")


def test_discovering_a_module_or_a_missing_package_says_which(
    discovered: Callable[..., Registry[object]],
) -> None:
    with pytest.raises(
        RegistryError, match=re.escape("lmmprobe.registry is a module, not a package")
    ):
        Registry("widget", discover=("lmmprobe.registry",)).names()
    with pytest.raises(RegistryError, match="the package lmmprobe_no_such_pkg failed to import"):
        Registry("widget", discover=("lmmprobe_no_such_pkg",)).names()


def test_a_plugin_whose_metadata_gives_no_name_breaks_no_command(tmp_path: Path) -> None:
    """Re-test 18: a ``.dist-info`` whose METADATA is empty (an interrupted install) declaring an
    entry point had ``dist.name`` None: every ``lmmprobe run`` and ``list`` ended in a
    TypeError traceback. Its entries are listed as an unknown distribution's, and runs record it."""
    site = tmp_path / "site"
    info = site / "zzplug-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[lmmprobe.matchers]\nzz-nameless = zzplug_nameless_mod:match\n", encoding="utf-8"
    )
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        '{"id": "q0", "images": [], "question": "Pick?", "choices": ["x", "y"], "answer": 0}\n'
    )
    env = plugin_path(site)
    listed = lmmprobe("list", "matchers", **env)
    assert listed.returncode == 0, listed.stderr
    assert "zz-nameless" in listed.stdout and "unknown distribution" in listed.stdout
    done = lmmprobe("run", "-m", "random", "--data", rows, "--db", tmp_path / "db", **env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (manifest,) = sqlite3.connect(tmp_path / "db").execute("SELECT manifest FROM runs").fetchone()
    assert json.loads(manifest)["plugins"] == {"unknown distribution": None}
