"""Judge prompt templates of one's own (``--judge-prompt FILE``), checked before any call.

A template is a text file with ``{placeholder}`` fields (Python's `str.format` syntax; ``{{``
and ``}}`` are literal braces). The generic open-ended protocol (``lmmprobe-open``) fills:

- ``{question}``: the question asked (required);
- ``{answer}``: the model's answer, thinking split off, as a delimited block (required): between
  ``<model_answer id="ID">`` and ``</model_answer id="ID">`` lines, ID found nowhere in the
  answer, any exact such tag inside it neutralised (`lmmprobe.judge.protocol.delimit`), so an
  answer cannot pass words of its own off as the template's; say in the template that the block
  is data to grade, not instructions, and ends only at the closing tag with its id;
- ``{reference}``: the reference answer(s), ``; ``-joined, or ``(none)``;
- ``{rubric}``: the row's ``rubric`` metadata, or ``(none)``;
- ``{instruction}``: how to reply on the chosen scale (``--judge-scale``), the same sentence
  the built-in template ends with; without it, say yourself how the judge should reply (the
  reply is read on the scale all the same).

An unknown placeholder, a missing required one, a placeholder used more than
`MAX_PLACEHOLDER_USES` times, or a malformed field fails before the run with one line naming
the file and the placeholder. (Each use copies its value into every judge prompt: a template
repeating ``{answer}`` thousands of times would make each prompt thousands of answers long.) The file must be a regular file of at most
`MAX_TEMPLATE_BYTES` (a FIFO would hold the run forever, a link to ``/dev/zero`` would fill the
memory): anything else fails the same way, naming the file.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from lmmprobe.data.files import FileTooLarge, UnreadableFile, read_regular
from lmmprobe.schema.benchmark import MAX_PLACEHOLDER_USES, placeholder_uses

__all__ = [
    "MAX_PLACEHOLDER_USES",
    "MAX_TEMPLATE_BYTES",
    "OPEN_FIELDS",
    "OPEN_REQUIRED",
    "JudgeTemplate",
    "TemplateError",
    "load_template",
]

OPEN_FIELDS = ("question", "answer", "reference", "rubric", "instruction")
"""Every placeholder a template of ``lmmprobe-open`` may use."""
OPEN_REQUIRED = ("question", "answer")
"""The placeholders a template of ``lmmprobe-open`` must use."""
MAX_TEMPLATE_BYTES = 1024 * 1024
"""The largest template read: a judge prompt is a few kilobytes."""


class TemplateError(ValueError):
    """A judge prompt template cannot be used (the message names the file and placeholder)."""


@dataclass(frozen=True)
class JudgeTemplate:
    """A checked template: its text and a short hash naming it in the protocol version."""

    text: str
    source: str

    @property
    def digest(self) -> str:
        """12 hex characters of the text's SHA-256 (part of the protocol version)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:12]


def check_template(
    text: str, source: str, fields: tuple[str, ...], required: tuple[str, ...]
) -> JudgeTemplate:
    """`text` as a template, after checking its placeholders.

    Raises:
        TemplateError: A placeholder is unknown, has a format spec or conversion, is used more
            than `MAX_PLACEHOLDER_USES` times, a required one is missing, or a brace is
            unmatched.

    """
    # The one rule for templates from outside (`lmmprobe.schema.benchmark.placeholder_uses`),
    # which data rows' prompt templates follow too.
    try:
        used = placeholder_uses(text, fields)
    except ValueError as exc:
        raise TemplateError(f"{source}: {exc}") from None
    for name, count in used.items():
        if count > MAX_PLACEHOLDER_USES:
            raise TemplateError(
                f"{source}: placeholder {{{name}}} is used {count:,} times; a template may use "
                f"each placeholder at most {MAX_PLACEHOLDER_USES} times (every use copies the "
                "value into each judge prompt)"
            )
    for name in required:
        if name not in used:
            raise TemplateError(f"{source}: missing required placeholder {{{name}}}")
    return JudgeTemplate(text, source)


def load_template(path: str | Path) -> JudgeTemplate:
    """Read and check a template of ``lmmprobe-open`` (module docstring).

    Raises:
        TemplateError: The file is not a regular file, is larger than `MAX_TEMPLATE_BYTES`,
            cannot be read as UTF-8 text, or its placeholders are wrong.

    """
    path = Path(path)
    try:
        raw = _read_regular(path)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateError(f"{path}: cannot read the judge prompt template: {exc}") from exc
    return check_template(text, str(path), OPEN_FIELDS, OPEN_REQUIRED)


def _read_regular(path: Path) -> bytes:
    """The bytes of `path`, a regular file of at most `MAX_TEMPLATE_BYTES`.

    Raises:
        TemplateError: It is not a regular file, or is too large.
        OSError: It cannot be opened or read.

    """
    try:
        return read_regular(path, MAX_TEMPLATE_BYTES, what="a judge prompt template")
    except FileTooLarge:
        raise TemplateError(
            f"{path}: larger than {MAX_TEMPLATE_BYTES // 1024} KiB; a judge prompt template is "
            "a few kilobytes: is it the right file?"
        ) from None
    except UnreadableFile as exc:  # named as what it is: "a FIFO, not a regular file; ..."
        raise TemplateError(str(exc)) from None
