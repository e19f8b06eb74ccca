"""The tool registry: named image tools with argument schemas derived from their signatures.

An orchestrator (APEx's LLM, or a person) sees each tool's name, kind, one-line summary,
docstring and JSON argument schema, and asks for a call as ``{"tool": name, "args": {...}}``.
Calls resolve through this registry and their arguments are validated against the schema
(unknown arguments, wrong types and out-of-range values are rejected, with a message that says
what the schema allows), so nothing a model writes is ever evaluated.

Two kinds of tool share the mechanism, as in APEx (Conti et al.): *select* tools make the
starting image of a sample (``fn(rng, context, **args) -> SelectedImage``, registered with
`select_tool`) and *transform* tools change it (``fn(image, rng, **args) -> image``, registered
with `tool`).
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast, get_type_hints

from PIL import Image
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from lmmprobe.registry import Registry

ToolFn = Callable[..., Image.Image]
F = TypeVar("F", bound=Callable[..., Any])
ToolKind = Literal["select", "transform"]
KINDS: tuple[ToolKind, ...] = ("select", "transform")


class ToolCallError(ValueError):
    """A tool call named an unknown tool or gave arguments its schema rejects."""


@dataclass(frozen=True)
class SelectedImage:
    """The result of a select call.

    Attributes:
        image: The RGB image.
        class_name: The class the image shows (the drawn or retrieved class, which may differ
            from the requested name; `note` then says how).
        source: ``"generated"`` or ``"retrieved"``.
        note: Why the image is not exactly what was asked (a fallback, a near match), or None.
        path: Where a retrieved image comes from (a file, or ``DATASET[split]:row``); None for
            generated images.

    """

    image: Image.Image
    class_name: str
    source: Literal["generated", "retrieved"]
    note: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A registered image tool.

    Attributes:
        name: Registry name (APEx's tool names).
        summary: One line shown to the orchestrator.
        fn: A transform is ``fn(image, rng, **args) -> image``; a select tool is
            ``fn(rng, context, **args) -> SelectedImage``. `rng` is the call's seeded random source.
        args: Pydantic model of the arguments (from the signature after the first two).
        kind: ``"transform"`` (changes an image) or ``"select"`` (makes the starting image).

    """

    name: str
    summary: str
    fn: Callable[..., Any]
    args: type[BaseModel]
    kind: ToolKind = "transform"

    @property
    def doc(self) -> str:
        """The tool's full docstring."""
        return inspect.getdoc(self.fn) or ""

    def schema(self) -> dict[str, Any]:
        """JSON schema of the arguments (types, defaults, bounds, descriptions)."""
        return self.args.model_json_schema()

    def describe(self) -> dict[str, Any]:
        """What an orchestrator is shown: name, kind, summary, docstring and argument schema."""
        return {
            "name": self.name,
            "kind": self.kind,
            "summary": self.summary,
            "doc": self.doc,
            "schema": self.schema(),
        }

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments after validation, defaults filled in.

        Raises:
            ToolCallError: An unknown, missing or invalid argument; the message names it and
                what the schema allows.

        """
        try:
            return self.args.model_validate(dict(args)).model_dump()
        except ValidationError as exc:
            raise ToolCallError(describe_validation_error(self, exc)) from exc

    def __call__(self, image: Image.Image, *, seed: int = 0, **args: Any) -> Image.Image:
        """Validate `args` and apply a transform; the same seed gives the same image.

        Raises:
            ToolCallError: Invalid arguments, or this is a select tool.

        """
        if self.kind != "transform":
            raise ToolCallError(
                f"{self.name} is a select tool: it makes an image rather than changing one; "
                "call it through ToolSpec.select or lmmprobe.tools.compose"
            )
        parsed = self.validate(args)
        rng = random.Random(f"{self.name}:{seed}")
        return cast(Image.Image, self.fn(image.convert("RGB"), rng, **parsed))

    def select(self, context: object, *, seed: int = 0, **args: Any) -> SelectedImage:
        """Validate `args` and run a select tool; the same seed gives the same image.

        `context` is the call's `lmmprobe.tools.select.SelectContext`, passed to the tool as is
        (typed loosely here: the select module builds on this one, not the other way round).

        Raises:
            ToolCallError: Invalid arguments, a request the tool cannot serve, or this is a
                transform.

        """
        if self.kind != "select":
            raise ToolCallError(f"{self.name} is a transform: it needs an image to change")
        parsed = self.validate(args)
        rng = random.Random(f"{self.name}:{seed}")
        return cast(SelectedImage, self.fn(rng, context, **parsed))


TOOLS: Registry[ToolSpec] = Registry(
    "image tool",
    # A built-in tool is a function in a module of lmmprobe.tools, registered with its
    # decorator (generated, select, transforms); every module is imported on the first lookup.
    discover=("lmmprobe.tools",),
)
"""Image tools by name; the modules of `lmmprobe.tools` (which import this one to register their
tools with `tool` and `select_tool`) are imported on the first lookup or listing."""


def _register(name: str, summary: str, kind: ToolKind) -> Callable[[F], F]:
    def deco(fn: F) -> F:
        hints = get_type_hints(fn, include_extras=True)
        fields: dict[str, Any] = {}
        for pname, param in list(inspect.signature(fn).parameters.items())[2:]:
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (hints[pname], default)
        model = create_model(f"{name}Args", __config__=ConfigDict(extra="forbid"), **fields)
        TOOLS.register(name, summary=summary)(ToolSpec(name, summary, fn, model, kind))
        return fn

    return deco


def tool(name: str, summary: str) -> Callable[[ToolFn], ToolFn]:
    """Register ``fn(image, rng, **args)`` as a transform tool, deriving its argument schema.

    Each argument must be annotated (``Annotated[float, Field(ge=0, description=...)]`` gives
    bounds and a description) and have a default or be required.
    """
    return _register(name, summary, "transform")


def select_tool(name: str, summary: str) -> Callable[[F], F]:
    """Register ``fn(rng, context, **args) -> SelectedImage`` as a select tool.

    Arguments after ``rng, context`` are annotated as for `tool`; `context` is the
    `lmmprobe.tools.select.SelectContext` of the call (renderer, retrieval collection, size).
    """
    return _register(name, summary, "select")


def get_tool(name: str, kind: ToolKind | None = None) -> ToolSpec:
    """The registered tool `name` (of `kind`, when given).

    Raises:
        ToolCallError: No such tool (of that kind); the message lists the known ones.

    """
    try:
        spec = TOOLS.get(name)
    except LookupError as exc:
        raise ToolCallError(
            f"unknown {kind or 'image'} tool {shown(name)}; known: {', '.join(tool_names(kind))}"
        ) from exc
    if kind is not None and spec.kind != kind:
        raise ToolCallError(
            f"{name} is a {spec.kind} tool, not a {kind} tool; {kind} tools: "
            f"{', '.join(tool_names(kind))}"
        )
    return spec


def tool_names(kind: ToolKind | None = None) -> list[str]:
    """Registered tool names (of `kind`, when given), sorted."""
    return [n for n in TOOLS.names() if kind is None or TOOLS.get(n).kind == kind]


def call_tool(image: Image.Image, call: Mapping[str, Any], *, seed: int = 0) -> Image.Image:
    """Apply ``{"tool": name, "args": {...}}`` to an image after validating it.

    Raises:
        ToolCallError: Unknown tool, malformed call or rejected arguments.

    """
    if not isinstance(call, Mapping) or not isinstance(call.get("tool"), str):
        raise ToolCallError(f"a tool call needs a 'tool' name, got {call!r}")
    args = call.get("args", {})
    if not isinstance(args, Mapping):
        raise ToolCallError(f"{call['tool']}: 'args' must be an object")
    return get_tool(call["tool"], "transform")(image, seed=seed, **dict(args))


def tool_catalog(kind: ToolKind | None = None) -> list[dict[str, Any]]:
    """What an orchestrator is shown per tool: name, kind, summary, docstring, argument schema."""
    return [TOOLS.get(n).describe() for n in tool_names(kind)]


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to `limit` characters, for quoting untrusted input in messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _field_rule(schema: Mapping[str, Any]) -> str:
    """A short human reading of one property's JSON schema ("number, -360 ≤ x ≤ 360")."""
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    if "const" in schema:
        return f"exactly {schema['const']!r}"
    if "anyOf" in schema:
        return " or ".join(_field_rule(s) for s in schema["anyOf"])
    parts = [str(schema.get("type", "value"))]
    bounds = [
        ("minimum", "≥"),
        ("exclusiveMinimum", ">"),
        ("maximum", "≤"),
        ("exclusiveMaximum", "<"),
        ("minLength", "length ≥"),
        ("maxLength", "length ≤"),
    ]
    parts += [f"{sym} {schema[key]}" for key, sym in bounds if key in schema]
    if "pattern" in schema:
        parts.append(f"matching {schema['pattern']}")
    return ", ".join(parts)


def describe_validation_error(spec: ToolSpec, exc: ValidationError) -> str:
    """An actionable message for rejected arguments: what was wrong and what is allowed.

    Each problem names the argument, the reason, and the argument's rule from the schema; an
    unknown argument lists the known ones.
    """
    props: dict[str, Any] = spec.schema().get("properties", {})
    known = ", ".join(props) or "(none)"
    problems: list[str] = []
    for err in exc.errors():
        loc = err.get("loc", ())
        arg = str(loc[0]) if loc else "?"
        if err.get("type") == "extra_forbidden":
            problems.append(f"unknown argument {arg!r} (known arguments: {known})")
            continue
        rule = _field_rule(props[arg]) if arg in props else ""
        if err.get("type") == "missing":
            problems.append(f"missing required argument {arg!r} ({rule})")
            continue
        problems.append(
            f"argument {arg!r}={shown(err.get('input'))}: {err.get('msg')} (allowed: {rule})"
        )
    return f"{spec.name}: invalid arguments: " + "; ".join(problems)
