"""Reading orchestrator output safely: parse as data, reject code-like text, sanitize names.

Origin: APEx (Conti et al.) lets an LLM program experiments; lmmprobe keeps that program as
data. Orchestrator output is parsed as JSON into pydantic models (never evaluated), tool calls
resolve only through the tool registry with validated arguments
(`lmmprobe.tools.compose.validate_call`), and every free-text field (question, answer texts,
rationale, findings) is scanned for strings that look like code, shell syntax or file paths,
which are rejected as validation errors and fed back to the orchestrator to heal. File names
derived from orchestrator text go through `safe_name`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from lmmprobe.schema.text import MAX_NESTING, deeper_than

T = TypeVar("T", bound=BaseModel)

MAX_OUTPUT_CHARS = 100_000
"""Longest orchestrator output parsed (a longer one is rejected unread)."""

_SUSPICIOUS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"__\w*__|__import__"), "a Python dunder name"),
    (
        re.compile(
            r"\b(?:eval|exec|getattr|setattr|delattr|globals|locals|popen|spawn\w*|"
            r"subprocess|importlib|builtins|breakpoint)\s*\("
            # English words ("the door is open (ajar)") count only when glued to "(".
            r"|\b(?:open|compile|system|vars|input)\(",
        ),
        "a function call",
    ),
    (re.compile(r"\bimport\s+[A-Za-z_]|\bfrom\s+\w+(?:\.\w+)*\s+import\b"), "an import"),
    (re.compile(r"\bos\.\w+|\bsys\.\w+|\bsubprocess\b|\bshutil\.\w+"), "an os/sys reference"),
    (re.compile(r"\.\.[/\\]|[/\\]\.\.(?:[/\\]|$)"), "a path traversal ('../')"),
    (
        re.compile(r"(?:^|\s)(?:/(?:etc|bin|usr|var|tmp|home|root|proc|dev)\b|~[/\\])"),
        "a file path",
    ),
    (re.compile(r"\$\{|\$\(|`|\{\{|\{%"), "shell or template syntax"),
    (re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"), "control characters"),
)


class UnsafeOutputError(ValueError):
    """Orchestrator output that cannot be accepted; the message is fed back for healing."""


def _shown(value: str, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_text(value: str, where: str) -> None:
    """Reject a string that looks like code, shell or template syntax, or a file path.

    Raises:
        UnsafeOutputError: Naming the field and what it contained.

    """
    for pattern, what in _SUSPICIOUS:
        if pattern.search(value):
            raise UnsafeOutputError(
                f"{where}={_shown(value)} contains {what}; fields hold plain text "
                "(questions, answers, reasons), never code or file paths"
            )


def scan(value: Any, where: str = "output") -> None:
    """Apply `check_text` to every string (keys included) inside nested dicts and lists.

    Raises:
        UnsafeOutputError: The first suspicious string, with its location.

    """
    if isinstance(value, str):
        check_text(value, where)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(k, str):
                check_text(k, f"{where} key")
            scan(v, f"{where}.{k}")
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            scan(v, f"{where}[{i}]")


_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def load_json(text: str) -> Any:
    """Parse an orchestrator's text reply as JSON (a ```json fence around it is allowed).

    Raises:
        UnsafeOutputError: Too long, not JSON, or nested more than `MAX_NESTING` levels (the
            data loader's rule; past Python's recursion limit the decoder itself fails); the
            message quotes the parser's complaint.

    """
    if len(text) > MAX_OUTPUT_CHARS:
        raise UnsafeOutputError(f"the reply has {len(text)} characters; at most {MAX_OUTPUT_CHARS}")
    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text.strip()
    try:
        value = _decode(body)
    except json.JSONDecodeError as exc:
        # A reply with prose around one JSON object: take the outermost braces once.
        start, end = body.find("{"), body.rfind("}")
        if 0 <= start < end:
            # Still not JSON: the original error is the one worth reporting back.
            with contextlib.suppress(json.JSONDecodeError):
                return _decode(body[start : end + 1])
        raise UnsafeOutputError(
            f"the reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            "answer with one JSON object that follows the schema, nothing else"
        ) from exc
    return value


def _decode(body: str) -> Any:
    """`body` as JSON, nested at most `MAX_NESTING` levels (`scan` and pydantic recurse too).

    Raises:
        json.JSONDecodeError: Not JSON.
        UnsafeOutputError: Nested deeper (a reply of 49,000 ``[`` was a traceback, re-test 13 #7).

    """
    nested = UnsafeOutputError(
        f"the reply is JSON nested more than {MAX_NESTING} levels deep; answer with one flat "
        "JSON object that follows the schema"
    )
    try:
        value = json.loads(body)
    except RecursionError:
        raise nested from None
    if deeper_than(value):
        raise nested
    return value


def describe_validation(exc: ValidationError, model: type[BaseModel]) -> str:
    """A compact, actionable list of a pydantic validation error's problems."""
    problems = []
    for err in exc.errors()[:10]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(top level)"
        problems.append(f"{loc}: {err.get('msg')}")
    more = "" if len(exc.errors()) <= 10 else f" (and {len(exc.errors()) - 10} more)"
    return f"the {model.__name__} does not follow its schema: " + "; ".join(problems) + more


def parse_output(output: object, model: type[T]) -> T:
    """Turn orchestrator output (JSON text, a dict, or a model) into `model`, scanned.

    Every string in the output is checked with `check_text` before validation, so code-like
    text is rejected wherever it hides.

    Raises:
        UnsafeOutputError: Not JSON, code-like text, or not following the schema.

    """
    if isinstance(output, model):
        data: Any = output.model_dump(mode="json")
    elif isinstance(output, BaseModel):
        data = output.model_dump(mode="json")
    elif isinstance(output, str):
        data = load_json(output)
    else:
        data = output
    if not isinstance(data, dict):
        raise UnsafeOutputError(
            f"expected one JSON object (a {model.__name__}), got {type(data).__name__}"
        )
    scan(data)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UnsafeOutputError(describe_validation(exc, model)) from exc


_UNSAFE_CHARS = re.compile(r"[^a-z0-9]+")


def safe_name(text: str, *, limit: int = 40) -> str:
    """A file-name-safe slug of untrusted text, with a short hash so distinct texts differ.

    Only lowercase letters, digits and ``-`` survive; no separators, dots or traversal.
    """
    slug = _UNSAFE_CHARS.sub("-", text.lower()).strip("-")[:limit].strip("-") or "x"
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:8]
    return f"{slug}-{digest}"


def output_text(output: object, limit: int = 4000) -> str:
    """Orchestrator output as text for the transcript and rejections (truncated)."""
    if isinstance(output, str):
        text = output
    elif isinstance(output, BaseModel):
        text = output.model_dump_json()
    else:
        try:
            text = json.dumps(output, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(output)
    return text if len(text) <= limit else text[:limit] + " ...(truncated)"
