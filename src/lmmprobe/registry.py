"""One registry mechanism for models, data sources, matchers, prompt styles, metrics and tools.

Entries are registered with a decorator under a name, or lazily by import path so that an
optional backend's dependencies are imported only when it is used. A lazy entry lists the
modules it needs and the extra that installs them; a missing one fails with the exact
``pip install`` to run.

A registry may name the modules holding its built-in entries (imported on first lookup, so
nothing is loaded before it is needed), packages whose every module is imported then (adding a
built-in is adding a file to such a package, no list to edit), and an entry-point group through which other packages
add entries: a plugin package declares, in its ``pyproject.toml``,

.. code-block:: toml

    [project.entry-points."lmmprobe.matchers"]
    strict = "my_package.matchers:strict_matcher"

and after ``pip install`` the name ``strict`` resolves like a built-in one. Plugins are found
once, on the registry's first lookup or listing, and imported only when their entry is used;
a built-in entry wins over a plugin of the same name.

lmmprobe declares some of its own entries the same way (the ``synth`` data source, which lives in
a layer above the registry that holds it): an entry point of lmmprobe's own distribution is listed
as ``built-in``, with the first line of its target's docstring (read from the source, without
importing it) as its summary.

An entry may carry a tag (``benchmark`` for the data sources that are benchmarks), so a caller
can tell kinds of entry apart without importing the code that registered them.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import importlib.util
import pkgutil
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_SHOWN = 40
"""How much of an unknown name an error quotes (as `lmmprobe.schema.text.SHOWN_CHARS`)."""


class RegistryError(LookupError):
    """An unknown name, a missing optional dependency, or a plugin that fails to load."""


_OWN_DISTRIBUTION = __name__.partition(".")[0]  # "lmmprobe": its entry points are built-ins


def _canonical(dist: str) -> str:
    # Distribution names compare as PEP 503 normalises them (lmmprobe, LMMProbe, lmm_probe...).
    return re.sub(r"[-_.]+", "-", dist).lower()


_UNKNOWN_DISTRIBUTION = "unknown distribution"


def _dist_name(ep: EntryPoint) -> str:
    """The name of the distribution declaring `ep`, or "unknown distribution".

    A ``.dist-info`` folder whose METADATA gives no ``Name`` (an empty file an interrupted
    install left) has ``dist.name`` None: that stopped every command with a traceback (re-test 18).
    """
    name = ep.dist.name if ep.dist is not None else None
    return name if isinstance(name, str) else _UNKNOWN_DISTRIBUTION


def _docstring_summary(target: str) -> str:
    """First docstring line of ``module:attribute``, read from the source without importing it.

    Its closing period is dropped. Empty when the module's source or the attribute cannot be found (a compiled module, a name
    bound by assignment): the listing then shows no summary rather than importing the entry.
    """
    module, _, attr = target.partition(":")
    try:
        spec = importlib.util.find_spec(module.strip())
    except (ImportError, ValueError):
        return ""
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return ""
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name == attr.strip()
        ):
            # Summaries are written without a closing period; docstring lines end with one.
            return (ast.get_docstring(node) or "").strip().split("\n")[0].removesuffix(".")
    return ""


@lru_cache(maxsize=4)
def _entry_points(path: tuple[str, ...]) -> dict[str, tuple[EntryPoint, ...]]:
    # One scan of the installed distributions serves every registry (each scan reads every
    # package's metadata). Keyed by sys.path: what is installed changes with it.
    found = entry_points()  # every group at once; `select` then works on what was read
    return {group: tuple(found.select(group=group)) for group in found.groups}


def installed_plugins() -> dict[str, str | None]:
    """Every installed plugin package and its version, by its name, sorted.

    A plugin package is a distribution other than lmmprobe that declares an entry point in one
    of lmmprobe's groups (``lmmprobe.matchers``, ``lmmprobe.sources``...); names are PEP 503
    normalised, as registry origins compare them. Found in the scan the registries discover
    their plugins from, so it is the installation whose entries they resolve. The version is
    None where the package's metadata gives none.
    """
    found: dict[str, str | None] = {}
    for group, eps in _entry_points(tuple(sys.path)).items():
        if not group.startswith(f"{_OWN_DISTRIBUTION}."):
            continue
        for ep in eps:
            name = _canonical(_dist_name(ep))
            if ep.dist is None or name == _OWN_DISTRIBUTION:
                continue
            found[name] = ep.dist.version
    return dict(sorted(found.items()))


def discover_modules(package: str) -> list[str]:
    """The importable modules of `package`, by full name, sorted; ``_private`` ones left out.

    A subpackage counts as a module (its ``__init__`` is what is imported); its own modules are
    not walked. Sorted so that entries register in the same order on every machine.

    Raises:
        RegistryError: `package` cannot be imported or is a module, not a package.

    """
    try:
        found = importlib.import_module(package)
    except Exception as exc:
        raise RegistryError(
            f"the package {package} failed to import: {type(exc).__name__}: {exc}"
        ) from exc
    path = getattr(found, "__path__", None)
    if path is None:
        raise RegistryError(f"{package} is a module, not a package: there is nothing to discover")
    names = sorted(info.name for info in pkgutil.iter_modules(path))
    return [f"{package}.{name}" for name in names if not name.startswith("_")]


@dataclass(frozen=True)
class _LazyEntry:
    target: str  # "package.module:attribute"
    requires: tuple[str, ...]
    extra: str | None
    summary: str
    plugin: str | None = None  # the distribution that declared it, for plugin entries
    documented: bool = False  # summary still to be read from the target's docstring


@dataclass(frozen=True)
class EntryInfo:
    """One entry as a listing shows it.

    Attributes:
        name: Registry name.
        summary: One line describing it.
        status: ``ready``, or what to install first (``needs: pip install ...``).
        origin: ``built-in``, or ``plugin (DIST)`` for an entry declared by another package.

    """

    name: str
    summary: str
    status: str
    origin: str


def did_you_mean(name: str, known: list[str]) -> str:
    """``did you mean X? `` for a misspelt `name` close to one of `known`, else nothing.

    A typo (``-m randm``, ``--matcher refrom``) is named with the entry meant, as a misspelt
    benchmark already was; a long name is not compared (difflib's cost grows with it).
    """
    if len(name) > _SHOWN:
        return ""
    by_folded = {entry.casefold(): entry for entry in known}
    close = difflib.get_close_matches(name.casefold(), list(by_folded), n=3, cutoff=0.6)
    return f"did you mean {', '.join(by_folded[c] for c in close)}? " if close else ""


@dataclass
class Registry(Generic[T]):
    """A named collection of factories (or other objects), found by name.

    Attributes:
        kind: What the registry holds ("model backend", "matcher"), used in messages.
        entry_point_group: Entry-point group through which installed packages add entries
            (e.g. ``lmmprobe.matchers``); None for no plugins.
        builtins: Modules whose import registers the built-in entries; imported on the first
            lookup or listing.
        discover: Packages whose every submodule is imported on the first lookup or listing,
            after `builtins` (see `discover_modules`): a module registers its entries, so adding
            one is adding a file.

    """

    kind: str
    entry_point_group: str | None = None
    builtins: tuple[str, ...] = ()
    discover: tuple[str, ...] = ()
    _eager: dict[str, T] = field(default_factory=dict, init=False, repr=False)
    _lazy: dict[str, _LazyEntry] = field(default_factory=dict, init=False, repr=False)
    _summaries: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    _tags: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    _loaded: bool = field(default=False, init=False, repr=False)
    _loading: bool = field(default=False, init=False, repr=False, compare=False)
    # Re-entrant: importing a built-in module registers (and may look up) entries on the
    # thread that is loading.
    _lock: threading.RLock = field(
        default_factory=threading.RLock, init=False, repr=False, compare=False
    )

    def register(self, name: str, summary: str = "", *, tag: str | None = None) -> Callable[[T], T]:
        """Decorator registering `obj` under `name` (replacing an earlier entry).

        Args:
            name: Registry name.
            summary: One line shown in listings (default: the first line of the docstring).
            tag: What kind of entry this is, when a registry holds several (see `tagged`).

        """

        def deco(obj: T) -> T:
            self._eager[name] = obj
            self._lazy.pop(name, None)  # replaced: no longer imported from elsewhere
            self._summaries[name] = (
                summary or (getattr(obj, "__doc__", "") or "").strip().split("\n")[0]
            )
            if tag is None:
                self._tags.pop(name, None)
            else:
                self._tags[name] = tag
            return obj

        return deco

    def register_lazy(
        self,
        name: str,
        target: str,
        *,
        requires: tuple[str, ...] = (),
        extra: str | None = None,
        summary: str = "",
    ) -> None:
        """Register `name` as ``module:attribute``, imported on first use.

        Args:
            name: Registry name.
            target: Import path ``package.module:attribute``.
            requires: Top-level modules the entry needs (checked before importing).
            extra: The lmmprobe extra that installs them, for the error message.
            summary: One line shown in listings.

        """
        self._lazy[name] = _LazyEntry(target, requires, extra, summary)
        self._summaries[name] = summary

    def unregister(self, name: str) -> None:
        """Remove an entry (a plugin host replacing one, a test cleaning up); no-op if absent."""
        self._eager.pop(name, None)
        self._lazy.pop(name, None)
        self._summaries.pop(name, None)
        self._tags.pop(name, None)

    def _load(self) -> None:
        """Import the built-in modules and discover plugins, once.

        Thread-safe: a thread that finds the registry not yet loaded waits for the load in
        progress, so no thread sees a partly loaded registry. The loading thread itself may look
        names up while a built-in module registers its entries (it then sees what is registered
        so far).
        """
        if self._loaded:
            return
        with self._lock:
            if self._loaded or self._loading:  # loaded meanwhile, or re-entered while loading
                return
            self._loading = True
            try:
                for module in self.builtins:
                    importlib.import_module(module)
                for package in self.discover:
                    for module in discover_modules(package):
                        self._import_discovered(module)
                if self.entry_point_group is not None:
                    self._discover(self.entry_point_group)
                self._loaded = True  # only now: other threads skip the lock from here on
            finally:
                self._loading = False

    def _import_discovered(self, module: str) -> None:
        # A discovered module is a built-in that nobody listed: if it cannot be imported, the
        # registry would silently lack its entries, so the failure names the module instead.
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise RegistryError(
                f"the {self.kind} module {module} failed to import: {type(exc).__name__}: {exc}"
            ) from exc

    def _discover(self, group: str) -> None:
        for ep in _entry_points(tuple(sys.path)).get(group, ()):
            if ep.name in self._eager or ep.name in self._lazy:
                continue  # a built-in (or an earlier plugin) keeps its name
            dist = _dist_name(ep)
            if _canonical(dist) == _OWN_DISTRIBUTION:
                # lmmprobe's own entry (declared in its pyproject.toml): a built-in, documented
                # by its docstring, which `summary` reads when first asked.
                self._lazy[ep.name] = _LazyEntry(ep.value, (), None, "", documented=True)
                self._summaries[ep.name] = ""
                continue
            summary = f"plugin {ep.value}"
            self._lazy[ep.name] = _LazyEntry(ep.value, (), None, summary, plugin=dist)
            self._summaries[ep.name] = summary

    def names(self) -> list[str]:
        """All registered names (built-in, registered and plugins), sorted."""
        self._load()
        return sorted(set(self._eager) | set(self._lazy))

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._eager or name in self._lazy

    def summary(self, name: str) -> str:
        """The one-line summary of an entry."""
        self._load()
        entry = self._lazy.get(name)
        if entry is not None and entry.documented and name not in self._eager:
            self._summaries[name] = _docstring_summary(entry.target)
            self._lazy[name] = _LazyEntry(entry.target, entry.requires, entry.extra, "")
        return self._summaries.get(name, "")

    def tag(self, name: str) -> str | None:
        """The tag an entry was registered with, or None."""
        self._load()
        return self._tags.get(name)

    def tagged(self, tag: str) -> list[str]:
        """The names registered with `tag`, sorted."""
        self._load()
        return sorted(n for n, t in self._tags.items() if t == tag)

    def origin(self, name: str) -> str:
        """``built-in``, or ``plugin (DIST)`` when an installed package declared the entry."""
        self._load()
        entry = self._lazy.get(name)
        if entry is None or entry.plugin is None:
            return "built-in"
        return f"plugin ({entry.plugin})"

    def missing_requirements(self, name: str) -> list[str]:
        """Modules a lazy entry needs that are not installed (empty when ready)."""
        self._load()
        entry = self._lazy.get(name)
        if entry is None or name in self._eager:
            return []
        return [m for m in entry.requires if importlib.util.find_spec(m) is None]

    def install_hint(self, name: str) -> str | None:
        """The pip command installing a lazy entry's dependencies, if it has an extra."""
        self._load()
        entry = self._lazy.get(name)
        if entry is None or entry.extra is None:
            return None
        return f"pip install 'lmmprobe[{entry.extra}]'"

    def entries(self) -> list[EntryInfo]:
        """Every entry with its summary, readiness and origin, sorted by name (for listings)."""
        rows = []
        for name in self.names():
            missing = self.missing_requirements(name)
            hint = self.install_hint(name) or f"pip install {' '.join(missing)}"
            status = "ready" if not missing else f"needs: {hint}"
            rows.append(EntryInfo(name, self.summary(name), status, self.origin(name)))
        return rows

    def unknown(self, name: str) -> RegistryError:
        """The error for a name that is not registered, listing the known ones.

        A long name is quoted cut (its length said), as every echo of a value is: a pasted
        100,000-character ``--matcher`` made a 100 KB error line.
        """
        known = ", ".join(self.names()) or "(none)"
        shown = (
            repr(name)
            if len(name) <= _SHOWN
            else f"{name[:_SHOWN]!r}... ({len(name):,} characters)"
        )
        return RegistryError(
            f"unknown {self.kind} {shown}; {did_you_mean(name, self.names())}known: {known}"
        )

    def get(self, name: str) -> T:
        """Return the entry, importing a lazy one.

        Raises:
            RegistryError: Unknown name (the message lists the known ones), missing dependency
                (with the pip command), a plugin that fails to import, or an entry whose
                module is not part of this lmmprobe version.

        """
        obj = self._eager.get(name)
        if obj is not None:
            return obj
        self._load()
        if name in self._eager:
            return self._eager[name]
        entry = self._lazy.get(name)
        if entry is None:
            raise self.unknown(name)
        missing = self.missing_requirements(name)
        if missing:
            hint = self.install_hint(name) or f"pip install {' '.join(missing)}"
            raise RegistryError(
                f"the {self.kind} {name!r} needs {', '.join(missing)}, which "
                f"{'is' if len(missing) == 1 else 'are'} not installed; run: {hint}"
            )
        loaded: T = self._import(name, entry)
        self._eager[name] = loaded
        return loaded

    def _import(self, name: str, entry: _LazyEntry) -> Any:
        module_name, _, attr = entry.target.partition(":")
        if entry.plugin is not None:
            # A plugin is someone else's code: whatever goes wrong while importing it is
            # reported as that package's problem, with the line that declared it.
            declared = f"{self.entry_point_group}: {name} = {entry.target}"
            try:
                obj: Any = importlib.import_module(module_name.strip())
                for part in attr.strip().split(".") if attr.strip() else ():
                    obj = getattr(obj, part)
            except Exception as exc:
                raise RegistryError(
                    f"the {self.kind} {name!r} comes from the plugin package {entry.plugin} "
                    f"(entry point {declared}), which failed to load: "
                    f"{type(exc).__name__}: {exc}; fix or uninstall {entry.plugin}"
                ) from exc
            return obj
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                raise RegistryError(
                    f"the {self.kind} {name!r} is reserved but not available in this version of "
                    f"lmmprobe ({module_name} is missing)"
                ) from exc
            raise
        return getattr(module, attr)
