"""ReForm-Eval's released JSON format.

Origin: ReForm-Eval (Li et al., 2023, "ReForm-Eval: Evaluating Large Vision Language Models via
Unified Re-Formulation of Task-Oriented Benchmarks", https://github.com/FudanDISC/ReForm-Eval,
code Apache-2.0). The benchmark re-formulates 61 existing datasets, each under its own license
(COCO, VisDial, MEDIC, ...); check the license of the dataset you load, not only ReForm-Eval's.

Format: a JSON list of entries, or an object whose ``data`` key holds that list (an optional
``dataset_name`` is kept as ``metadata["dataset"]``). Each entry has

- ``sample_id`` (int or str): becomes the sample id; must be unique in the file.
- ``image``: a path relative to the JSON file (or to the ``image_dir=`` option), base64 image
  data as ReForm-Eval-Data stores it, or a list of either.
- ``question`` (str).
- ``answer_options`` (list): the options of a single-choice question.
- ``answer``: for single choice the option index, as an int or a digit string (ReForm writes
  ``str(index)``) or the option text itself; for generation tasks the reference text(s).
- ``references`` (list of str, optional): caption references; they become the open-ended answer.
- ``history`` (optional): earlier rounds, ``{"from": "human"|"gpt"|..., "value": ...}`` or
  ``{"role": "user"|"assistant"|..., "content": ...}``.
- anything else (``instruct``, ``question_type``, ...) is kept in ``metadata``, as is the
  original answer when it was not a plain index (``metadata["original_answer"]``).

Problems are reported as ``FILE:N: field: reason`` with N the 1-based position of the entry in
the list, the way the JSONL source names a line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lmmprobe._file_kind import not_regular_file
from lmmprobe.data.base import SOURCES, DataError, SampleStream, streaming
from lmmprobe.data.hf_dataset import image_from_base64
from lmmprobe.data.rows import RowError, check_image, require_object, stream_rows, to_sample
from lmmprobe.schema import ImageRef, Sample, Turn
from lmmprobe.schema.text import ascii_integer

FORMULATIONS = ("single_choice", "open_ended")
OPTIONS = frozenset({"image_dir", "formulation"})
REQUIRED = ("sample_id", "image", "question")
ROLES: dict[str, Literal["system", "user", "assistant"]] = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "bot": "assistant",
    "model": "assistant",
    "system": "system",
}
# ReForm-Eval's names of Sample fields, for problems found when the sample is validated.
_FIELD_NAMES = {"id": "sample_id", "choices": "answer_options"}
# Fields turned into Sample fields; everything else in an entry is kept as metadata.
_CONSUMED = frozenset({"sample_id", "image", "question", "answer", "history", "references"})
# Base64 text, optionally as a data URI. Paths contain "." or "_" and never match.
_BASE64 = re.compile(r"(data:image/[\w.+-]+;base64,)?[A-Za-z0-9+/\s]{32,}={0,2}")


@dataclass(frozen=True)
class _Context:
    """What every entry of one file is parsed with."""

    base: Path
    formulation: str | None
    dataset: str | None


def _is_file(path: Path) -> bool:
    # A base64 image is far longer than a file name may be, and the OS refuses to stat it.
    try:
        return path.is_file()
    except OSError:
        return False


def _image(base: Path, value: Any, field: str) -> ImageRef:
    if isinstance(value, str) and value and not _is_file(base / value):
        match = _BASE64.fullmatch(value)
        if match:
            try:
                return image_from_base64(value[match.end(1) :] if match.group(1) else value)
            except ValueError as exc:
                raise RowError(field, f"not an image file, and {exc}") from exc
        shown = value if len(value) <= 80 else f"{value[:77]}..."
        raise RowError(field, f"image file not found: {shown} (looked in {base})")
    return check_image(base, value, field)


def _images(base: Path, value: Any) -> list[ImageRef]:
    if isinstance(value, list):
        if not value:
            raise RowError("image", "expected at least one image")
        return [_image(base, v, f"image[{i}]") for i, v in enumerate(value)]
    return [_image(base, value, "image")]


def _options(entry: dict[str, Any]) -> list[str]:
    value = entry.get("answer_options")
    if value is None:
        raise RowError("answer_options", "missing required field for a single-choice entry")
    if not isinstance(value, list):
        raise RowError("answer_options", f"expected a list of option texts, got {value!r}")
    options = []
    for i, opt in enumerate(value):
        # Counting tasks list numbers as options; they are asked as text all the same.
        if isinstance(opt, bool) or not isinstance(opt, str | int | float):
            raise RowError(f"answer_options[{i}]", f"expected option text, got {opt!r}")
        options.append(str(opt))
    return options


def _choice_index(value: Any, options: list[str]) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip()
        # A digit string is an index: ReForm writes str(index), even for numeric options.
        # ASCII digits only: "²" passes isdigit() and int() refuses it; "٣" is no index.
        index = ascii_integer(text, signed=False)
        if index is not None:
            return index
        if text in options:
            return options.index(text)
    raise RowError("answer", f"expected an option index or one of answer_options, got {value!r}")


def _texts(value: Any, field: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise RowError(field, f"expected reference text(s), got {value!r}")
    return value


def _references(entry: dict[str, Any]) -> list[str]:
    if "references" in entry:
        return _texts(entry["references"], "references")
    if "answer" not in entry:
        raise RowError("answer", "missing required field (or give references)")
    answer = entry["answer"]
    options = entry.get("answer_options")
    is_index = (isinstance(answer, int) and not isinstance(answer, bool)) or (
        isinstance(answer, str) and ascii_integer(answer.strip(), signed=False) is not None
    )
    if isinstance(options, list) and is_index:
        # A single-choice entry asked open-ended: its gold option text is the reference.
        index = _choice_index(answer, [])
        if not 0 <= index < len(options):
            raise RowError("answer", f"index {index} is out of range for answer_options")
        return [str(options[index])]
    return _texts(answer, "answer")


def _history(value: Any) -> list[Turn]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RowError("history", f"expected a list of turns, got {type(value).__name__}")
    return [_turn(i, t) for i, t in enumerate(value)]


def _turn(index: int, turn: Any) -> Turn:
    field = f"history[{index}]"
    if not isinstance(turn, dict):
        raise RowError(field, f"expected an object with from/value, got {turn!r}")
    role_key = "from" if "from" in turn else "role"
    text_key = "value" if "value" in turn else "content"
    role = turn.get(role_key)
    role = ROLES.get(role.lower()) if isinstance(role, str) else None
    if role is None:
        known = ", ".join(ROLES)
        raise RowError(f"{field}.{role_key}", f"unknown role {turn.get(role_key)!r} ({known})")
    text = turn.get(text_key)
    if not isinstance(text, str):
        raise RowError(f"{field}.{text_key}", f"expected text, got {text!r}")
    return Turn(role=role, content=text)


def _same_answer(raw: Any, answer: int | list[str]) -> bool:
    # "2" for index 2, or "a cat" for ["a cat"], says nothing the sample does not already hold.
    return raw == answer or [raw] == answer or (isinstance(raw, str) and raw.strip() == str(answer))


def _sample_id(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str) or value == "":
        raise RowError("sample_id", f"expected a non-empty string or an integer, got {value!r}")
    return str(value)


def parse_entry(entry: Any, ctx: _Context) -> Sample:
    """Turn one ReForm-Eval entry into a Sample.

    Raises:
        RowError: The entry is invalid; carries the field and reason.

    """
    entry = require_object(entry, REQUIRED)
    formulation = ctx.formulation or (
        "single_choice" if entry.get("answer_options") is not None else "open_ended"
    )
    consumed = set(_CONSUMED)
    choices: list[str] | None = None
    if formulation == "single_choice":
        if "answer" not in entry:
            raise RowError("answer", "missing required field")
        choices = _options(entry)
        answer: int | list[str] = _choice_index(entry["answer"], choices)
        consumed.add("answer_options")
    else:
        answer = _references(entry)
    metadata = {k: v for k, v in entry.items() if k not in consumed}
    if ctx.dataset is not None:
        metadata.setdefault("dataset", ctx.dataset)
    if "answer" in entry and not _same_answer(entry["answer"], answer):
        metadata["original_answer"] = entry["answer"]
    data = {
        "id": _sample_id(entry["sample_id"]),
        "images": _images(ctx.base, entry["image"]),
        "question": entry["question"],
        "choices": choices,
        "answer": answer,
        "formulation": formulation,
        "history": _history(entry.get("history")),
        "metadata": metadata,
    }
    return to_sample(data, _FIELD_NAMES)


def _read_entries(path: Path) -> tuple[list[Any], str | None]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8-sig"))
    except RecursionError as exc:  # one document: a deep value stops the whole file
        raise DataError(f"{path}: not a valid JSON file: nested too deeply to read") from exc
    except ValueError as exc:  # bad JSON, bad UTF-8, an integer past Python's digit limit
        raise DataError(f"{path}: not a valid JSON file: {exc}") from exc
    if isinstance(doc, list):
        return doc, None
    if isinstance(doc, dict) and isinstance(doc.get("data"), list):
        name = doc.get("dataset_name")
        return doc["data"], name if isinstance(name, str) else None
    raise DataError(f"{path}: expected a JSON list of entries or an object with a 'data' list")


def _context(target: str | None, options: dict[str, str]) -> tuple[Path, _Context]:
    if not target:
        raise DataError("the reform source needs a path: reform:PATH.json[,image_dir=DIR]")
    unknown = sorted(set(options) - OPTIONS)
    if unknown:
        raise DataError(f"the reform source has no option(s) {unknown}; known: {sorted(OPTIONS)}")
    path = Path(target)
    unreadable = not_regular_file(path, "data rows")  # a FIFO, a device, a kernel file
    if unreadable or not path.is_file():
        raise DataError(unreadable or f"data file not found: {path}")
    formulation = options.get("formulation")
    if formulation is not None and formulation not in FORMULATIONS:
        raise DataError(
            f"reform: formulation={formulation!r}; use one of {', '.join(FORMULATIONS)}"
        )
    base = path.parent
    if "image_dir" in options:
        base = Path(options["image_dir"])
        if not base.is_dir():
            raise DataError(f"reform: image_dir {base} is not a folder")
    # Resolved now, so image references stay valid if the working folder changes later.
    return path, _Context(base=base.resolve(), formulation=formulation, dataset=None)


def stream_reform(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> SampleStream:
    """A ReForm-Eval JSON file's samples one at a time; invalid entries are FILE:N: field: reason.

    The file is one JSON document, decoded whole when called; its entries become samples as
    the stream is read (the samples, with their checked images, are not all held).
    """
    path, ctx = _context(target, options)
    entries, dataset = _read_entries(path)
    ctx = _Context(base=ctx.base, formulation=ctx.formulation, dataset=dataset)
    return SampleStream(
        str(path),
        lambda report: stream_rows(
            report,
            enumerate(entries, start=1),
            lambda _, entry: parse_entry(entry, ctx),
            strict=strict,
            limit=limit,
            id_field="sample_id",
            unit="entry",
        ),
    )


load_reform = SOURCES.register(
    "reform",
    summary="reform:PATH.json[,image_dir=DIR,formulation=...]  ReForm-Eval's JSON format",
)(streaming(stream_reform))
"""Load a ReForm-Eval JSON file; invalid entries are reported as FILE:N: field: reason."""
