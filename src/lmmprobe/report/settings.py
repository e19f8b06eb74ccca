"""What sets a run apart from a default run: ``blind``, ``likelihood``, ``repeats 3``, ...

Two runs of one model that differ only by ``--blind``, ``--method``, ``--repeats``,
``--circular`` or ``--prompt-style`` would otherwise look the same wherever a run is named by
its model: the runs list (``lmmprobe runs``, ``lmmprobe serve``), the report's legends and its
colours. `run_setting` names the settings a run changed from the defaults, in a fixed order, and
`setting_label` adds them to a model spec: ``random [blind]``, ``hf:x [likelihood, repeats 3]``.

A spec is read as a mapping (a run's stored spec, decoded) as well as a `RunSpec`, so listings
that read the store's JSON columns name runs the way the report does.

A model's own options set it apart too: two specs of one checkpoint with thinking on and off
(``hf:PATH`` and ``hf:PATH,chat_template_kwargs=enable_thinking:false``, or
``openai:M@URL,reasoning_effort=high``) are named by `model_setting` (``thinking off``,
``effort high``), and `sides_apart` names what tells the two sides of a comparison apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from lmmprobe.models.baselines import likelihood_stand_ins
from lmmprobe.schema import FormulateConfig, GenerationParams, RunSpec
from lmmprobe.spec import SpecError, parse_spec

__all__ = [
    "judged_budget_message",
    "model_setting",
    "origin_setting",
    "run_notes",
    "run_setting",
    "setting_label",
    "sides_apart",
]

_FORMULATE_DEFAULTS: dict[str, Any] = FormulateConfig().model_dump()
_GEN_DEFAULTS: dict[str, Any] = GenerationParams().model_dump()

# Formulation settings named in words (the rest, when changed, show as ``name=value``).
_NAMED = ("blind", "method", "circular", "prompt_style")
# Settings that do not change what a model is asked or how its answers are read.
_IGNORED = frozenset({"likelihood_reduction"})


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 24 else text[:23] + "\u2026"


def run_notes(
    spec: RunSpec, models: Iterable[str], labels: Mapping[str, str] | None = None
) -> list[str]:
    """What a reader of a run's figures must know that the figures cannot say.

    One note today: baselines run with ``--method likelihood``. Likelihood is a white-box
    method; the baselines accept it so the likelihood path runs without a model
    (`lmmprobe.models.baselines.likelihood_stand_ins`), so their figures read no model.
    ``results.json`` records the notes (``notes``), results.md, the terminal and the report
    show them.

    Args:
        spec: The run's spec.
        models: Its model specs.
        labels: Model spec → the name to give it (the terminal's short labels); the spec
            itself without one.

    Returns:
        The notes, each one sentence; none for most runs.

    """
    if spec.formulate.method != "likelihood":
        return []
    pretend = likelihood_stand_ins(models)
    if not pretend:
        return []
    names = ", ".join((labels or {}).get(s, s) for s in pretend)
    are = "is a baseline" if len(pretend) == 1 else "are baselines"
    return [
        f"{names} {are} with no model: --method likelihood reads a model's log-likelihoods (a "
        "white-box method), and theirs are made up (random: seeded random scores; first: the "
        "first option scores highest); use a white-box backend such as hf:PATH for likelihood "
        "figures"
    ]


def origin_setting(manifest: Any) -> list[str]:
    """``imported from TOOL (sha256 1a2b3c4d)`` for a run of imported predictions, else [].

    `manifest` is a run's manifest (a dict, or the report's `Manifest`, whose extra fields hold
    the ``origin`` that `lmmprobe import` records); anything else names nothing.
    """
    if manifest is not None and not isinstance(manifest, Mapping):
        manifest = getattr(manifest, "model_extra", None) or {}
    origin = manifest.get("origin") if isinstance(manifest, Mapping) else None
    if not isinstance(origin, Mapping):
        return []
    return [f"imported from {origin.get('tool')} (sha256 {str(origin.get('sha256'))[:8]})"]


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


# Model options that switch thinking, set its effort or budget, or say how it is read. Keys are
# the request options the backends take (Chat Completions' ``reasoning_effort``, the
# ``enable_thinking`` / ``thinking_budget`` of Qwen3-style chat templates, alone or inside
# ``chat_template_kwargs``) and the scoring option ``think=`` (which tags hold the thinking).
_SWITCHES = frozenset({"enable_thinking", "thinking"})
_BUDGETS = frozenset({"thinking_budget", "max_thinking_tokens", "thinking_token_budget"})
_ON_OFF = {
    **dict.fromkeys(("true", "1", "yes", "on", "enabled", "enable"), "on"),
    **dict.fromkeys(("false", "0", "no", "off", "disabled", "disable", "none"), "off"),
}
# Inside chat_template_kwargs (``enable_thinking:false``, ``{"enable_thinking": false}``...):
# a key, a few separator characters, a word. Bounded repeats keep it linear in the value.
_IN_KWARGS = re.compile(r"(enable_thinking|thinking_budget)[\W_]{0,4}(\w+)", re.IGNORECASE)


def _thinking_parts(key: str, value: str) -> list[tuple[str, str]]:
    """(family, value) pairs an option says about thinking: ``("thinking", "off")``..."""
    k = key.lower()
    if k in _SWITCHES:
        return [("thinking", _ON_OFF.get(value.lower(), _short(value)))]
    if k == "reasoning_effort":
        return [("effort", _short(value))]
    if k in _BUDGETS:
        return [("thinking budget", _short(value))]
    if k == "think":
        return [("think", _short(value))]
    if k == "chat_template_kwargs":
        parts: list[tuple[str, str]] = []
        for name, word in _IN_KWARGS.findall(value):
            if name.lower() == "enable_thinking":
                parts.append(("thinking", _ON_OFF.get(word.lower(), _short(word))))
            else:
                parts.append(("thinking budget", _short(word)))
        return parts
    return []


def _options(model: str) -> dict[str, str]:
    try:
        return dict(parse_spec(model, "model").options)
    except SpecError:
        return {}  # a stored spec that no longer parses names no option


def model_setting(model: str) -> list[str]:
    """What a model spec's options say about thinking, as short words.

    Args:
        model: A model spec, e.g. ``hf:PATH,chat_template_kwargs=enable_thinking:false``.

    Returns:
        E.g. ``["thinking off"]``, ``["effort high"]``, ``["thinking budget 512"]`` or
        ``["think off"]`` (the ``think=`` reading option); ``[]`` for a spec without such an
        option (or one that does not parse).

    """
    return [
        f"{family} {value}"
        for key, value in _options(model).items()
        for family, value in _thinking_parts(key, value)
    ]


def sides_apart(
    model_a: str,
    model_b: str,
    spec_a: RunSpec | Mapping[str, Any] | None = None,
    spec_b: RunSpec | Mapping[str, Any] | None = None,
) -> tuple[list[str], list[str]]:
    """What sets side A of a comparison apart from side B, and B from A, as short words.

    The model options whose values differ come first: thinking options in words (``thinking
    off`` against ``thinking default`` where B leaves the template's default), any other as
    ``key=value`` (``key default`` on the side without it); then the run settings only one
    side's run changed (`run_setting`).

    Args:
        model_a: Model spec of side A.
        model_b: Model spec of side B.
        spec_a: Side A's run spec (a `RunSpec` or its stored JSON), if known.
        spec_b: Side B's run spec, likewise.

    Returns:
        ``(words of A, words of B)``: ``(["thinking off"], ["thinking default"])`` for
        ``hf:x,enable_thinking=false`` against ``hf:x``; empty lists when nothing differs.

    """
    opts_a, opts_b = _options(model_a), _options(model_b)
    words_a: list[str] = []
    words_b: list[str] = []
    # Thinking is compared as a whole: ``enable_thinking=false`` on one side and
    # ``chat_template_kwargs=enable_thinking:true`` on the other are thinking off against on.
    fam_a = {f: v for k, x in opts_a.items() for f, v in _thinking_parts(k, x)}
    fam_b = {f: v for k, x in opts_b.items() for f, v in _thinking_parts(k, x)}
    for family in dict.fromkeys([*fam_a, *fam_b]):
        xa, xb = fam_a.get(family, "default"), fam_b.get(family, "default")
        if xa != xb:
            words_a.append(f"{family} {xa}")
            words_b.append(f"{family} {xb}")
    told = bool(words_a)
    for key in dict.fromkeys([*opts_a, *opts_b]):
        va, vb = opts_a.get(key), opts_b.get(key)
        if va == vb:
            continue
        thinking = any(_thinking_parts(key, v) for v in (va, vb) if v is not None)
        if thinking and told:
            continue  # already said in words
        words_a.append(f"{key} default" if va is None else f"{key}={_short(va)}")
        words_b.append(f"{key} default" if vb is None else f"{key}={_short(vb)}")
    run_a, run_b = run_setting(spec_a), run_setting(spec_b)
    words_a += [w for w in run_a if w not in run_b]
    words_b += [w for w in run_b if w not in run_a]
    return words_a, words_b


def judged_budget_message(message: str, source: str) -> str:
    """A budget error of stored run `source` as a run judged from it shows it.

    The stored message is the source run's (``... ($6.0000 spent by this run); re-run to
    continue``): a run made by ``lmmprobe judge`` holds those rows as recorded, spent nothing
    on them, and running ``judge`` again answers none of them (re-test 20 #18). The spending
    is named as `source`'s and the advice is to resume it.
    """
    message = message.replace("by this run", f"by run {source}")
    head, sep, _ = message.rpartition("; re-run")
    if sep:
        message = (
            f"{head}; resume run {source} with the command that started it to answer these, "
            "then judge its new run"
        )
    return message
