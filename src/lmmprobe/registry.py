"""One registry mechanism for models, data sources and (later) tools and metrics.

Entries are registered with a decorator under a name, or lazily by import path so that an
optional backend's dependencies are imported only when it is used. A lazy entry lists the
modules it needs and the extra that installs them; a missing one fails with the exact
``pip install`` to run.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


class RegistryError(LookupError):
    """An unknown name, or a known one whose optional dependencies are missing."""


@dataclass(frozen=True)
class _LazyEntry:
    target: str  # "package.module:attribute"
    requires: tuple[str, ...]
    extra: str | None
    summary: str


@dataclass
class Registry(Generic[T]):
    """A named collection of factories.

    Attributes:
        kind: What the registry holds ("model backend", "data source"), used in messages.

    """

    kind: str
    _eager: dict[str, T] = field(default_factory=dict)
    _lazy: dict[str, _LazyEntry] = field(default_factory=dict)
    _summaries: dict[str, str] = field(default_factory=dict)

    def register(self, name: str, summary: str = "") -> Callable[[T], T]:
        """Decorator registering `obj` under `name` (replacing an earlier entry)."""

        def deco(obj: T) -> T:
            self._eager[name] = obj
            self._summaries[name] = (
                summary or (getattr(obj, "__doc__", "") or "").strip().split("\n")[0]
            )
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

    def names(self) -> list[str]:
        """All registered names, sorted."""
        return sorted(set(self._eager) | set(self._lazy))

    def summary(self, name: str) -> str:
        """The one-line summary of an entry."""
        return self._summaries.get(name, "")

    def missing_requirements(self, name: str) -> list[str]:
        """Modules a lazy entry needs that are not installed (empty when ready)."""
        entry = self._lazy.get(name)
        if entry is None or name in self._eager:
            return []
        return [m for m in entry.requires if importlib.util.find_spec(m) is None]

    def install_hint(self, name: str) -> str | None:
        """The pip command installing a lazy entry's dependencies, if it has an extra."""
        entry = self._lazy.get(name)
        if entry is None or entry.extra is None:
            return None
        return f"pip install 'lmmprobe[{entry.extra}]'"

    def get(self, name: str) -> T:
        """Return the entry, importing a lazy one.

        Raises:
            RegistryError: Unknown name, missing dependency (with the pip command), or an
                entry whose module is not part of this lmmprobe version.

        """
        if name in self._eager:
            return self._eager[name]
        entry = self._lazy.get(name)
        if entry is None:
            known = ", ".join(self.names()) or "(none)"
            raise RegistryError(f"unknown {self.kind} {name!r}; known: {known}")
        missing = self.missing_requirements(name)
        if missing:
            hint = self.install_hint(name) or f"pip install {' '.join(missing)}"
            raise RegistryError(
                f"the {self.kind} {name!r} needs {', '.join(missing)}, which "
                f"{'is' if len(missing) == 1 else 'are'} not installed; run: {hint}"
            )
        module_name, _, attr = entry.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                raise RegistryError(
                    f"the {self.kind} {name!r} is reserved but not available in this version of "
                    f"lmmprobe ({module_name} is missing)"
                ) from exc
            raise
        obj: T = getattr(module, attr)
        self._eager[name] = obj
        return obj
