"""MathVista's output JSON: ``output_MODEL.json``, an object of records keyed by ``pid``.

Layout from lupantech/MathVista @ 53d5258 (``evaluation/generate_response.py`` writes each
problem with its ``response``; ``evaluation/extract_answer.py`` adds ``extraction``, read from
the response by an OpenAI model (``--azure_openai_model`` / GPT-4 in the paper);
``evaluation/calculate_score.py`` adds the normalized ``prediction`` and ``true_false``), as in
the repository's ``results/*/output_*.json``. The stored ``extraction`` is a recorded judge
answer: it rides along (``tool_extraction``, ``tool_judged``) and no judge is called.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lmmprobe.predictions._rows import (
    as_text,
    as_verdict,
    json_safe,
    need,
    prediction_text,
    row_error,
)
from lmmprobe.predictions._stream import UnreadableFile, first_json_char, iter_json, sha256_of
from lmmprobe.predictions.imported import (
    READERS,
    ImportedPrediction,
    Origin,
    ReadOptions,
)
from lmmprobe.schema.text import shown_value

__all__ = ["MathVistaOutputs"]


class MathVistaOutputs:
    """MathVista's ``output_*.json``: ``{pid: {..., "response", "extraction", "true_false"}}``."""

    tool = "mathvista"

    def sniff(self, path: Path) -> bool:
        """An object whose first record has ``pid``/``query`` and ``response``."""
        if not path.is_file() or path.suffix.lower() != ".json" or first_json_char(path) != "{":
            return False
        try:
            for _, key, value in iter_json(path):
                return (
                    key is not None
                    and isinstance(value, dict)
                    and "response" in value
                    and ("pid" in value or "query" in value)
                )
        except UnreadableFile:
            raise  # the file itself is broken: say so, not that no layout fits
        except Exception:
            return False
        return False

    def origin(self, path: Path, options: ReadOptions) -> Origin:
        """The file's hash and the extraction judge (GPT-4, MathVista's)."""
        return Origin(
            self.tool,
            str(path),
            sha256_of(path),
            # The file does not name its extraction model (extract_answer.py takes it from
            # --azure_openai_model): the paper's and the released results' is GPT-4.
            {"layout": "output_*.json keyed by pid", "file": path.name, "judge": "gpt-4"},
        )

    def read(self, path: Path, options: ReadOptions) -> Iterator[ImportedPrediction]:
        """One prediction per pid; ``response`` is the answer text, ``answer`` the gold."""
        for n, key, value in iter_json(path):
            where = f"{path}:#{n} (pid {shown_value(str(key))})"
            if not isinstance(value, dict):
                raise row_error(
                    where, "(record)", f"expected an object, got {type(value).__name__}"
                )
            record: dict[str, Any] = value
            response, refused = prediction_text(where, "response", need(where, record, "response"))
            pid = as_text(where, "pid", record.get("pid", key))
            if pid != key:
                raise row_error(
                    where,
                    "pid",
                    f"{shown_value(pid)!r} differs from its key {shown_value(str(key))!r}",
                )
            extraction = record.get("extraction")
            if extraction is not None:
                extraction = as_text(where, "extraction", extraction)
            gold = record.get("answer")
            yield ImportedPrediction(
                row=n,
                sample_id=pid,
                prediction=response,
                gold=None if gold is None else as_text(where, "answer", gold),
                tool_extraction=extraction,
                # A present but empty or null extraction is a failed judge call: recorded
                # as judged, and unjudged (`lmmprobe.predictions.scoring.recorded_judgement`).
                tool_judged="extraction" in record,
                tool_verdict=as_verdict(where, "true_false", record.get("true_false")),
                refused=refused,
                fields=json_safe(
                    {
                        k: record[k]
                        # The record's item too (MathVista's own row): scored with no copy
                        # of MathVista, the items are read from it (`file_items`).
                        for k in (
                            "pid",
                            "response",
                            "extraction",
                            "prediction",
                            "true_false",
                            "answer",
                            "question",
                            "choices",
                            "unit",
                            "precision",
                            "question_type",
                            "answer_type",
                            "metadata",
                            "query",
                        )
                        if k in record
                    }
                ),
            )


READERS.register("mathvista", "MathVista's output_*.json (responses, GPT extractions, true_false)")(
    MathVistaOutputs()
)
