"""MMMU's output layout: ``MODEL/SUBJECT/output.json`` folders, or one JSON of parsed answers.

Layout from MMMU-Benchmark/MMMU @ bb0b95a (``mmmu/run_llava.py`` writes per subject a list of
records ``{id, question_type, answer, all_choices, index2ans, response}``, as in
``mmmu/example_outputs/llava1.5_13b/Art/output.json``; ``mmmu/main_eval_only.py`` reads one
object of parsed answers ``{id: answer}``, as ``mmmu/example_outputs/llava1.5_13b_val.json``,
against ``answer_dict_val.json``). Parsed answers carry no raw response: the parsed answer is
both the prediction and MMMU's own reading (``tool_extraction``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lmmprobe.predictions._rows import as_text, json_safe, need, prediction_text, row_error
from lmmprobe.predictions._stream import UnreadableFile, first_json_char, iter_json, sha256_of
from lmmprobe.predictions.imported import (
    READERS,
    ImportedPrediction,
    Origin,
    ReadOptions,
)
from lmmprobe.schema.text import shown_path, shown_value

__all__ = ["MMMUOutputs"]


def _outputs(path: Path) -> list[Path]:
    """The ``SUBJECT/output.json`` files of a model folder, sorted; [path] for one file.

    A subject's ``output.json`` that is a broken or looping link is listed too (``glob`` left
    it out, as if the subject had no file: the run scored the others without a word), so that
    reading it names it.
    """
    if path.is_dir():
        return sorted(
            sub / "output.json" for sub in path.glob("*") if os.path.lexists(sub / "output.json")
        )
    return [path]


def _first(path: Path) -> tuple[str | None, Any]:
    for _, key, value in iter_json(path):
        return key, value
    return None, None


class MMMUOutputs:
    """MMMU's ``output.json`` records (with ``response``) or parsed answers ``{id: answer}``."""

    tool = "mmmu"

    def sniff(self, path: Path) -> bool:
        """A folder of ``*/output.json``, an ``output.json`` list, or ``{validation_X_N: str}``."""
        try:
            if path.is_dir():
                return bool(_outputs(path))
            if path.suffix.lower() != ".json":
                return False
            opener = first_json_char(path)
            key, value = _first(path)
            if opener == "[":
                return isinstance(value, dict) and {"id", "response", "question_type"} <= set(value)
            return (
                opener == "{"
                and isinstance(value, str | list)
                and isinstance(key, str)
                and key.split("_", 1)[0] in ("dev", "validation", "test")
            )
        except UnreadableFile:
            raise  # the file itself is broken: say so, not that no layout fits
        except Exception:
            return False

    def origin(self, path: Path, options: ReadOptions) -> Origin:
        """The hash of the file (of every ``SUBJECT/output.json``, by name, for a folder)."""
        files = _outputs(path)
        if path.is_dir():
            return Origin(
                self.tool,
                str(path),
                sha256_of(path, files),
                {
                    "layout": "MODEL/SUBJECT/output.json",
                    "model": path.name,
                    "subjects": str(len(files)),
                },
            )
        layout = "output.json" if first_json_char(path) == "[" else "parsed answers {id: answer}"
        return Origin(self.tool, str(path), sha256_of(path), {"layout": layout, "file": path.name})

    def read(self, path: Path, options: ReadOptions) -> Iterator[ImportedPrediction]:
        """Records in file order (subjects sorted by name); rows count across the files."""
        row = 0
        # A subject's file must be a regular file inside the model folder: a link out of it
        # (to /dev/zero, say) or a FIFO is refused by name, never read.
        within = path if path.is_dir() else None
        for file in _outputs(path):
            if first_json_char(file, within) == "{":
                for n, key, value in iter_json(file, within):
                    row += 1
                    where = f"{shown_path(file)}:#{n} (id {shown_value(str(key))})"
                    if isinstance(value, list):  # MMMU's multi-answer open questions
                        value = ", ".join(as_text(where, "answer", v) for v in value)
                    text, refused = prediction_text(where, "answer", value)
                    yield ImportedPrediction(
                        row=row,
                        sample_id=key,
                        prediction=text,
                        tool_extraction=text if refused is None else None,
                        fields={"id": key, "parsed": json_safe(value)},
                        refused=refused,
                    )
                continue
            for n, _, value in iter_json(file, within):
                row += 1
                where = f"{shown_path(file)}:#{n}"
                if not isinstance(value, dict):
                    raise row_error(
                        where, "(record)", f"expected an object, got {type(value).__name__}"
                    )
                record: dict[str, Any] = value
                sid = as_text(where, "id", need(where, record, "id"), allow_number=False)
                where = f"{shown_path(file)}:#{n} (id {shown_value(sid)})"
                response, refused = prediction_text(
                    where, "response", need(where, record, "response")
                )
                gold = record.get("answer")
                if isinstance(gold, list):
                    gold_v: str | list[str] | None = [as_text(where, "answer", g) for g in gold]
                else:
                    gold_v = None if gold is None else as_text(where, "answer", gold)
                yield ImportedPrediction(
                    row=row,
                    sample_id=sid,
                    prediction=response,
                    gold=gold_v,
                    fields=json_safe(
                        {
                            k: record[k]
                            # all_choices and index2ans too: with no copy of MMMU, the
                            # items are made from them (`file_items`).
                            for k in (
                                "id",
                                "question_type",
                                "answer",
                                "response",
                                "all_choices",
                                "index2ans",
                            )
                            if k in record
                        }
                    ),
                    refused=refused,
                )


READERS.register(
    "mmmu", "MMMU's MODEL/SUBJECT/output.json folders, or parsed answers {id: answer}"
)(MMMUOutputs())
