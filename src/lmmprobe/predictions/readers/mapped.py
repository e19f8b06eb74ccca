"""Any JSON / JSONL / CSV / TSV / XLSX of predictions, read through a field mapping (lmmprobe's own).

``--field id=qid,prediction=answer,gold=gt_answers`` names the file's field (a dotted path
reaches into objects: ``doc.question_id``) for each of ours: ``id`` (joins the row to the
benchmark's local copy), ``prediction`` (the raw answer text), ``gold`` (optional; needed when
there is no ``id``), ``extraction`` and ``verdict`` (optional: the other tool's reading and
per-item verdict). Unmapped names default to ``id``, ``prediction`` and ``gold``. A top-level
JSON object is read as ``{id: prediction}`` or ``{id: {fields...}}``; when ``--field id=...``
is given, that field of each record is the id, not the object's key (pandas'
``to_json(orient="index")`` keys records by row number).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.predictions._rows import (
    as_text,
    as_verdict,
    dig,
    json_safe,
    need,
    prediction_text,
    row_error,
)
from lmmprobe.predictions._stream import (
    first_json_char,
    iter_json,
    iter_jsonl,
    iter_table,
    sha256_of,
)
from lmmprobe.predictions.imported import (
    READERS,
    ImportedPrediction,
    Origin,
    ReadOptions,
)

__all__ = ["MAPPED_FIELDS", "MappedFile"]

MAPPED_FIELDS = ("id", "prediction", "gold", "extraction", "verdict")
"""Our names a ``--field`` mapping may give."""

_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".xlsx")


def _rows(path: Path) -> Iterator[tuple[str, str | None, Any]]:
    """``(where, key, row)`` in file order, streamed."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        for n, value in iter_jsonl(path):
            yield f"{path}:{n}", None, value
    elif suffix == ".json":
        for n, key, value in iter_json(path):
            yield f"{path}:#{n}", key, value
    elif suffix in (".csv", ".tsv", ".xlsx"):
        # An .xlsx is read as VLMEvalKit's tables are: openpyxl's read-only mode, after the
        # workbook's zip directory and XML are checked against `XLSX_LIMITS` (`iter_table`).
        for n, value in iter_table(path):
            yield f"{path}:row {n}", None, value
    else:
        raise DataError(f"{path}: the mapped reader reads {', '.join(_SUFFIXES)} files")


def _gold(where: str, field: str, value: Any) -> str | list[str]:
    if isinstance(value, list):
        return [as_text(where, field, v) for v in value]
    return as_text(where, field, value)


class MappedFile:
    """A JSON / JSONL / CSV / TSV / XLSX of predictions with a field mapping (``--field``)."""

    tool = "mapped"

    def sniff(self, path: Path) -> bool:
        """Any file of a suffix it reads: the fallback when no other layout recognises it."""
        return path.is_file() and path.suffix.lower() in _SUFFIXES

    def origin(self, path: Path, options: ReadOptions) -> Origin:
        """The file's hash and the mapping used."""
        mapping = ",".join(f"{k}={v}" for k, v in sorted(options.field_map.items()))
        return Origin(self.tool, str(path), sha256_of(path), {"file": path.name, "fields": mapping})

    def read(self, path: Path, options: ReadOptions) -> Iterator[ImportedPrediction]:
        """One prediction per row, through the mapping.

        Raises:
            DataError: A mapping names a field we do not have; a row lacks its prediction, or
                both its id and its gold, or the id ``--field id=`` names; a gold, extraction
                or verdict field the user mapped is in no row; a value of the wrong type.

        """
        unknown = sorted(set(options.field_map) - set(MAPPED_FIELDS))
        if unknown:
            raise DataError(
                f"--field {', '.join(unknown)}: unknown; map any of {', '.join(MAPPED_FIELDS)}"
            )
        fm = {name: options.field_map.get(name, name) for name in MAPPED_FIELDS}
        # The optional fields the user mapped that no row has had yet: named at the end.
        unseen = {name for name in ("gold", "extraction", "verdict") if name in options.field_map}
        object_file = path.suffix.lower() == ".json" and first_json_char(path) == "{"
        for n, (where, key, value) in enumerate(_rows(path), start=1):
            if object_file and not isinstance(value, Mapping):
                row: Mapping[str, Any] = {fm["prediction"]: value}
            elif isinstance(value, Mapping):
                row = value
            else:
                raise row_error(where, "(row)", f"expected an object, got {type(value).__name__}")
            if key is not None and "id" in options.field_map:
                # A mapped id wins over the object's key, which may be a row number: joining
                # the key instead would pair predictions with the wrong samples, silently.
                try:
                    sid: str | None = as_text(where, fm["id"], dig(row, fm["id"]))
                except KeyError:
                    raise row_error(
                        where,
                        fm["id"],
                        f"missing: --field id={fm['id']} names a field this record (key "
                        f"{key!r}) lacks",
                    ) from None
            elif key is not None:
                sid = key
            else:
                try:
                    sid = as_text(where, fm["id"], dig(row, fm["id"]))
                except KeyError:
                    if "id" in options.field_map:
                        # A mapping the user gave that names nothing is a misspelling: read
                        # without ids, rows would be scored by their golds alone, and two
                        # answers to one item both counted.
                        raise row_error(
                            where,
                            fm["id"],
                            f"missing: --field id={fm['id']} names a field this record lacks",
                        ) from None
                    sid = None
            try:
                gold: str | list[str] | None = _gold(where, fm["gold"], dig(row, fm["gold"]))
                unseen.discard("gold")
            except KeyError:
                gold = None
            if sid is None and gold is None:
                raise row_error(
                    where,
                    fm["id"],
                    "missing: a row needs an id (to join the benchmark) or its "
                    f"gold ({fm['gold']}); map them with --field id=...,gold=...",
                )
            prediction, refused = prediction_text(
                where, fm["prediction"], need(where, row, fm["prediction"])
            )
            try:
                extraction: str | None = as_text(
                    where, fm["extraction"], dig(row, fm["extraction"])
                )
                unseen.discard("extraction")
            except KeyError:
                extraction = None
            try:
                verdict = as_verdict(where, fm["verdict"], dig(row, fm["verdict"]))
                unseen.discard("verdict")
            except KeyError:
                verdict = None
            yield ImportedPrediction(
                row=n,
                sample_id=sid,
                prediction=prediction,
                gold=gold,
                tool_extraction=extraction,
                tool_verdict=verdict,
                fields=json_safe(dict(row)),
                refused=refused,
            )
        if unseen:
            named = ", ".join(f"--field {k}={fm[k]}" for k in sorted(unseen))
            raise DataError(
                f"{path}: {named}: no row has this field (is it spelt as the file has it?)"
            )


READERS.register(
    "mapped", "Any JSON/JSONL/CSV/TSV/XLSX of predictions, with --field id=...,prediction=..."
)(MappedFile())
