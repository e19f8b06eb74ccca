"""The tool registry: named image tools with argument schemas derived from their signatures.

An orchestrator (APEx's LLM, or a person) sees each tool's name, one-line summary, docstring and
JSON argument schema, and asks for a call as ``{"tool": name, "args": {...}}``. Calls resolve
through this registry and their arguments are validated against the schema (unknown arguments,
wrong types and out-of-range values are rejected), so nothing a model writes is ever evaluated.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, get_type_hints

from PIL import Image
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from lmmprobe.registry import Registry

ToolFn = Callable[..., Image.Image]


class ToolCallError(ValueError):
    """A tool call named an unknown tool or gave arguments its schema rejects."""


@dataclass(frozen=True)
class ToolSpec:
    """A registered image tool.

    Attributes:
        name: Registry name (APEx's tool names).
        summary: One line shown to the orchestrator.
        fn: ``fn(image, rng, **args) -> image``; `rng` is the call's seeded random source.
        args: Pydantic model of the arguments (from the signature after ``image, rng``).

    """

    name: str
    summary: str
    fn: ToolFn
    args: type[BaseModel]

    @property
    def doc(self) -> str:
        """The tool's full docstring."""
        return inspect.getdoc(self.fn) or ""

    def schema(self) -> dict[str, Any]:
        """JSON schema of the arguments (types, defaults, bounds, descriptions)."""
        return self.args.model_json_schema()

    def __call__(self, image: Image.Image, *, seed: int = 0, **args: Any) -> Image.Image:
        """Validate `args` and apply the tool; the same seed gives the same image."""
        try:
            parsed = self.args.model_validate(args)
        except ValidationError as exc:
            raise ToolCallError(f"{self.name}: invalid arguments: {exc}") from exc
        rng = random.Random(f"{self.name}:{seed}")
        return self.fn(image.convert("RGB"), rng, **parsed.model_dump())


TOOLS: Registry[ToolSpec] = Registry("image tool")


def tool(name: str, summary: str) -> Callable[[ToolFn], ToolFn]:
    """Register ``fn(image, rng, **args)`` as an image tool, deriving its argument schema.

    Each argument must be annotated (``Annotated[float, Field(ge=0, description=...)]`` gives
    bounds and a description) and have a default or be required.
    """

    def deco(fn: ToolFn) -> ToolFn:
        hints = get_type_hints(fn, include_extras=True)
        fields: dict[str, Any] = {}
        for pname, param in list(inspect.signature(fn).parameters.items())[2:]:
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (hints[pname], default)
        model = create_model(f"{name}Args", __config__=ConfigDict(extra="forbid"), **fields)
        TOOLS.register(name, summary=summary)(ToolSpec(name, summary, fn, model))
        return fn

    return deco


def get_tool(name: str) -> ToolSpec:
    """The registered tool `name`.

    Raises:
        ToolCallError: No such tool.

    """
    _load_builtin()
    try:
        return TOOLS.get(name)
    except LookupError as exc:
        raise ToolCallError(str(exc)) from exc


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
    return get_tool(call["tool"])(image, seed=seed, **dict(args))


def tool_catalog() -> list[dict[str, Any]]:
    """What an orchestrator is shown: name, summary, docstring and argument schema per tool."""
    _load_builtin()
    return [
        {"name": n, "summary": t.summary, "doc": t.doc, "schema": t.schema()}
        for n in TOOLS.names()
        for t in [TOOLS.get(n)]
    ]


def _load_builtin() -> None:
    import lmmprobe.tools.transforms  # noqa: F401  (registers APEx's transform tools)
