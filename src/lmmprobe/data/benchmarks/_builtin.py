"""Imports the built-in benchmark definitions (each module registers its benchmarks).

A definition module not present in this version of lmmprobe is skipped, so the registry works
while definitions are added; any other import error is raised, naming the module.
"""

from __future__ import annotations

import importlib

MODULES = (
    "lmmprobe.data.benchmarks.standard_choice",
    "lmmprobe.data.benchmarks.standard_open",
    "lmmprobe.data.benchmarks.hemm",
)

for _module in MODULES:
    try:
        importlib.import_module(_module)
    except ModuleNotFoundError as _exc:
        if _exc.name != _module:
            raise
