"""Tool composition: one select call, then any list of transforms, seeded; and call validation.

Origin: APEx (Conti et al., "Automatic benchmarking of large multimodal models via iterative
experiment programming"). Each answer of an APEx experiment is produced by an image select call
followed by transform calls; the ground truth of an image is the answer whose tools made it.
The orchestrator (an LLM) writes these calls, so they are untrusted text: here a call is data
(`ToolCall`: a registry name and JSON arguments), checked by `validate_call` before anything
runs. A name must be a plain registry name (letters and digits, e.g. ``RotateImage``); dotted
module paths, code, path separators and over-long strings are rejected, as is any string
argument that looks like code or a file path (``__import__(...)``, ``os.system(...)``,
``../``), with a message saying what was wrong so the orchestrator can fix its call. Nothing is
imported, evaluated or opened on the orchestrator's behalf.

`compose` runs a validated select call with the experiment seed and transform *i* (1-based)
with a seed derived from ``(seed, i)``, so a sample is reproducible from its calls and seed, and
reordering or adding transforms does not reseed the select call. The `provenance` of the result
records every call with its full arguments (defaults filled in), seeds and the renderer.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lmmprobe.tools.registry import (
    KINDS,
    ToolCallError,
    ToolKind,
    get_tool,
    shown,
    tool_catalog,
)
from lmmprobe.tools.select import SelectContext, active_context

__all__ = [
    "MAX_STRING",
    "ComposedImage",
    "ToolCall",
    "catalog",
    "compose",
    "derive_seed",
    "validate_call",
]

MAX_STRING = 200
"""Longest string accepted anywhere in a call (tool schemas may allow less)."""

_MAX_ITEMS = 32
_MAX_DEPTH = 3
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]{0,63}")
# Text an orchestrator has no reason to put in an image-tool argument: Python dunders and
# calls of dangerous builtins, shell and template syntax, and file paths.
_SUSPICIOUS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"__\w*__|__import__"), "a Python dunder name"),
    (
        re.compile(
            r"\b(?:eval|exec|compile|open|getattr|setattr|globals|locals|vars|"
            r"system|popen|spawn\w*|subprocess|importlib|builtins)\s*\(",
        ),
        "a function call",
    ),
    (re.compile(r"\bimport\s+[A-Za-z_]|\bfrom\s+\w+\s+import\b"), "an import statement"),
    (re.compile(r"\bos\.\w+|\bsys\.\w+|\bsubprocess\b"), "a reference to os/sys/subprocess"),
    (re.compile(r"\.\.[/\\]|[/\\]\.\.(?:[/\\]|$)"), "a path traversal ('../')"),
    (re.compile(r"^\s*(?:/|~[/\\]|[A-Za-z]:[/\\]|\\\\)"), "an absolute file path"),
    (re.compile(r"\$\{|\$\(|`|\{\{|\{%"), "shell or template syntax"),
    (re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"), "control characters"),
)


class ToolCall(BaseModel):
    """One tool call as an orchestrator writes it: ``{"tool": NAME, "args": {...}}``."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(
        description="The tool's registry name, exactly as listed in the catalog "
        "(e.g. 'RotateImage')."
    )
    args: dict[str, Any] = Field(
        default_factory=dict,
        description="The tool's arguments by name, as its JSON schema describes them.",
    )


@dataclass(frozen=True)
class ComposedImage:
    """An image made by one select call and its transforms.

    Attributes:
        image: The final RGB image.
        class_name: The class the select call produced (before any transform).
        provenance: JSON-ready record: seed, renderer (name and, for a diffusion renderer,
            its identity), image size, collection, the select call (tool, args, seed, source,
            class, note, path) and each transform (tool, args, seed).

    """

    image: Image.Image
    class_name: str
    provenance: dict[str, Any]


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise ToolCallError(f"a tool name must be a string, got {shown(name)}")
    if len(name) > 64:
        raise ToolCallError(
            f"tool name of {len(name)} characters; names are short registry names such as "
            "'RotateImage' (see the catalog)"
        )
    if _NAME.fullmatch(name):
        return name
    if "." in name and re.fullmatch(r"[\w.]+", name):
        why = "a dotted module path"
    elif any(c in name for c in "/\\"):
        why = "a file path"
    elif any(c in name for c in "()'\";"):
        why = "code"
    else:
        why = "not a plain name"
    raise ToolCallError(
        f"tool name {shown(name)} is {why}; a call names one registry tool with letters and "
        "digits only, e.g. 'RotateImage' (see the catalog)"
    )


def _check_value(tool: str, where: str, value: Any, depth: int = 0) -> None:
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise ToolCallError(
                f"{tool}: argument {where} is {len(value)} characters long; at most "
                f"{MAX_STRING} are accepted"
            )
        for pattern, what in _SUSPICIOUS:
            if pattern.search(value):
                raise ToolCallError(
                    f"{tool}: argument {where}={shown(value)} contains {what}; arguments are "
                    "plain values (words, numbers, colors), never code or file paths"
                )
    elif isinstance(value, Mapping | list | tuple):
        if depth >= _MAX_DEPTH or len(value) > _MAX_ITEMS:
            raise ToolCallError(f"{tool}: argument {where} is nested too deep or too long")
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        for key, item in items:
            _check_value(tool, f"{where}[{shown(key)}]", item, depth + 1)
            if isinstance(value, Mapping):
                _check_value(tool, f"{where} key", key, depth + 1)
    elif value is not None and not isinstance(value, bool | int | float):
        raise ToolCallError(
            f"{tool}: argument {where} is a {type(value).__name__}; arguments are JSON values"
        )


def validate_call(call: ToolCall | Mapping[str, Any], kind: ToolKind | None = None) -> ToolCall:
    """Check a call an orchestrator wrote, and return it with its arguments validated.

    Args:
        call: A `ToolCall` or a mapping ``{"tool": NAME, "args": {...}}``.
        kind: ``"select"`` or ``"transform"``: the kind of tool the call must name (None: any).

    Returns:
        The call with its arguments as the tool's schema parses them, defaults filled in.

    Raises:
        ToolCallError: The message says what to change: a malformed call; a tool name that is
            not a plain registry name (dotted module path, code, path, too long); an unknown
            tool or one of the wrong kind (known tools listed); an unknown, missing or invalid
            argument (with the schema's rule); or a string argument that is over-long or looks
            like code or a file path.

    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    if isinstance(call, ToolCall):
        parsed = call
    else:
        if not isinstance(call, Mapping):
            raise ToolCallError(
                f'a tool call is an object {{"tool": NAME, "args": {{...}}}}, got {shown(call)}'
            )
        _check_name(call.get("tool"))
        try:
            parsed = ToolCall.model_validate(dict(call))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'call'}: {e['msg']}" for e in exc.errors()
            )
            raise ToolCallError(
                f'malformed tool call ({problems}); write {{"tool": NAME, "args": {{...}}}}'
            ) from exc
    name = _check_name(parsed.tool)
    for key, value in parsed.args.items():
        _check_value(name, repr(key), key)
        _check_value(name, repr(key), value)
    spec = get_tool(name, kind)
    return ToolCall(tool=name, args=spec.validate(parsed.args))


def derive_seed(seed: int, position: int) -> int:
    """The seed of the call at `position` (0: the select call) in a composition seeded `seed`."""
    if position == 0:
        return seed
    digest = hashlib.sha256(f"lmmprobe.compose:{seed}:{position}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def compose(
    select: ToolCall | Mapping[str, Any],
    transforms: Sequence[ToolCall | Mapping[str, Any]],
    *,
    seed: int,
    context: SelectContext,
) -> ComposedImage:
    """Make an image: a select call, then each transform in order.

    Args:
        select: The select call (TextToImageGeneration or TextToImageRetrieval).
        transforms: Transform calls, applied in order (may be empty).
        seed: The sample's seed: the select call uses it, transform *i* (1-based) uses
            ``derive_seed(seed, i)``.
        context: Renderer, retrieval collection and image size.

    Returns:
        The image, the selected class, and the provenance of every call.

    Raises:
        ToolCallError: Any call is invalid (checked before any is run), or a tool cannot serve
            its request.

    """
    select_call = validate_call(select, "select")
    transform_calls = [validate_call(t, "transform") for t in transforms]
    selected = get_tool(select_call.tool, "select").select(context, seed=seed, **select_call.args)
    image = selected.image
    steps: list[dict[str, Any]] = []
    with active_context(context, subject=selected.class_name):
        for position, call in enumerate(transform_calls, start=1):
            call_seed = derive_seed(seed, position)
            image = get_tool(call.tool, "transform")(image, seed=call_seed, **call.args)
            steps.append({"tool": call.tool, "args": call.args, "seed": call_seed})
    provenance: dict[str, Any] = {
        "seed": seed,
        "renderer": context.renderer_name,
        "renderer_identity": context.renderer_identity,
        "size": context.size,
        "collection": context.collection.source if context.collection else None,
        "select": {
            "tool": select_call.tool,
            "args": select_call.args,
            "seed": seed,
            "source": selected.source,
            "class_name": selected.class_name,
            "note": selected.note,
            "path": selected.path,
        },
        "transforms": steps,
    }
    return ComposedImage(
        image=image.convert("RGB"), class_name=selected.class_name, provenance=provenance
    )


def catalog(kind: ToolKind | None = None) -> list[dict[str, Any]]:
    """What an orchestrator is shown: per tool its name, kind, summary, docstring, JSON schema.

    Args:
        kind: ``"select"`` or ``"transform"`` to list one kind; None lists all.

    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    return tool_catalog(kind)
