"""What sets a run apart from a default run: ``blind``, ``likelihood``, ``repeats 3``, ...

Two runs of one model that differ only by ``--blind``, ``--method``, ``--repeats``,
``--circular`` or ``--prompt-style`` would otherwise look the same wherever a run is named by
its model: the runs list (``lmmprobe runs``, ``lmmprobe serve``), the report's legends and its
colours. `run_setting` names the settings a run changed from the defaults, in a fixed order, and
`setting_label` adds them to a model spec: ``random [blind]``, ``hf:x [likelihood, repeats 3]``.

A spec is read as a mapping (a run's stored spec, decoded) as well as a `RunSpec`, so listings
that read the store's JSON columns name runs the way the report does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.schema import FormulateConfig, GenerationParams, RunSpec

__all__ = ["run_setting", "setting_label"]

_FORMULATE_DEFAULTS: dict[str, Any] = FormulateConfig().model_dump()
_GEN_DEFAULTS: dict[str, Any] = GenerationParams().model_dump()

# Formulation settings named in words (the rest, when changed, show as ``name=value``).
_NAMED = ("blind", "method", "circular", "prompt_style")
# Settings that do not change what a model is asked or how its answers are read.
_IGNORED = frozenset({"likelihood_reduction"})


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 24 else text[:23] + "\u2026"


def run_setting(spec: RunSpec | Mapping[str, Any] | None) -> list[str]:
    """The settings of a run that differ from a default run's, as short words.

    Args:
        spec: The run's spec (a `RunSpec`, or its stored JSON decoded); None or a damaged spec
            gives no words.

    Returns:
        E.g. ``["blind", "likelihood", "repeats 3", "circular", "prompt dysca"]``: blind, the
        inference method, repeats, CircularEval and the prompt style first, then any other
        changed formulation or generation setting as ``name=value``.

    """
    if spec is None:
        return []
    doc = spec.model_dump() if isinstance(spec, RunSpec) else spec
    form = doc.get("formulate") if isinstance(doc.get("formulate"), Mapping) else {}
    gen = doc.get("gen") if isinstance(doc.get("gen"), Mapping) else {}
    assert isinstance(form, Mapping) and isinstance(gen, Mapping)
    words: list[str] = []
    if form.get("blind"):
        words.append("blind")
    method = form.get("method")
    if method not in (None, _FORMULATE_DEFAULTS["method"]):
        words.append(str(method))
    repeats = doc.get("repeats")
    if isinstance(repeats, int) and repeats > 1:
        words.append(f"repeats {repeats}")
    if form.get("circular"):
        words.append("circular")
    style = form.get("prompt_style")
    if style not in (None, _FORMULATE_DEFAULTS["prompt_style"]):
        words.append(f"prompt {_short(style)}")
    for name, default in _FORMULATE_DEFAULTS.items():
        if name in _NAMED or name in _IGNORED or name not in form:
            continue
        value = form[name]
        if value != default:
            words.append(name if value is True else f"{name}={_short(value)}")
    for name, default in _GEN_DEFAULTS.items():
        if name in gen and gen[name] != default:
            words.append(f"{name}={_short(gen[name])}")
    return words


def setting_label(model: str, spec: RunSpec | Mapping[str, Any] | None) -> str:
    """`model` followed by its run's settings in brackets, when the run changed any.

    ``random`` in a blind run → ``random [blind]``; in a default run → ``random``.
    """
    words = run_setting(spec)
    return f"{model} [{', '.join(words)}]" if words else model
