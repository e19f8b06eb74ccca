"""lmms-eval's ``--log_samples`` output: ``DATE_samples_TASK.jsonl`` (and ``DATE_results.json``).

Layout from EvolvingLMMs-Lab/lmms-eval @ 75571cf: ``lmms_eval/evaluator.py`` logs one record
per document, ``{doc_id, doc (its non-media fields), target, arguments, resps (raw, per
request), filtered_resps (after the task's filters and reasoning-tag stripping), token_counts,
doc_hash, ...}`` updated with the task's per-sample metric values (a number, or a dict such as
MMMU's ``{id, parsed_pred, answer, ...}``); ``lmms_eval/loggers/evaluation_tracker.py`` writes
them as ``{date_id}_samples_{task}.jsonl`` beside ``{date_id}_results.json``.

The prediction is the raw response (``resps``), read by lmmprobe as a run reads a model's
output; the filtered one and the per-sample metric ride along as the tool's reading and
verdict. The id joined to the benchmark is the document's ``id`` / ``pid`` / ``question_id`` /
``index`` (the first present), or ``--field id=doc.FIELD``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.predictions._rows import as_text, as_verdict, dig, json_safe, need, row_error
from lmmprobe.predictions._stream import iter_jsonl, sha256_of
from lmmprobe.predictions.imported import (
    READERS,
    ImportedPrediction,
    Origin,
    ReadOptions,
)

__all__ = ["LmmsEvalSamples"]

_ID_FIELDS = ("id", "pid", "question_id", "index")
_LOGGED = frozenset(
    {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "token_counts",
     "doc_hash", "prompt_hash", "target_hash", "input_media"}
)  # fmt: skip
_NAME = re.compile(r"^(?P<date>.*?)_?samples_(?P<task>.+)$")
_READINGS = ("parsed_pred", "extraction", "pred", "prediction")
_VERDICTS = ("true_false", "hit", "correct", "score", "acc", "exact_match")


def _first_text(value: Any) -> Any:
    # resps is one list per request ([[text]]); filtered_resps one value per request ([text]).
    while isinstance(value, list) and value:
        value = value[0]
    return value


def _metric(row: Mapping[str, Any], where: str) -> tuple[str | None, float | None, str | None]:
    """The first per-sample metric: its name, verdict and (for dict metrics) the tool's reading."""
    for name, value in row.items():
        if name in _LOGGED:
            continue
        if isinstance(value, bool | int | float):
            return name, as_verdict(where, name, value), None
        if isinstance(value, dict):
            reading = next((value[k] for k in _READINGS if k in value), None)
            verdict = next((value[k] for k in _VERDICTS if k in value), None)
            text = (
                None
                if reading is None
                else json.dumps(reading)
                if isinstance(reading, list | dict)
                else str(reading)
            )
            return name, as_verdict(where, f"{name}.verdict", verdict), text
    return None, None, None


class LmmsEvalSamples:
    """lmms-eval's ``samples_TASK.jsonl``: one logged document per line."""

    tool = "lmms-eval"

    def sniff(self, path: Path) -> bool:
        """A ``.jsonl`` whose first record has ``doc_id`` and ``resps``."""
        if not path.is_file() or path.suffix.lower() != ".jsonl":
            return False
        try:
            for _, value in iter_jsonl(path):
                return isinstance(value, dict) and "doc_id" in value and "resps" in value
        except Exception:
            return False
        return False

    def origin(self, path: Path, options: ReadOptions) -> Origin:
        """Hash, task (from the name) and, from ``DATE_results.json`` beside it, model and version."""
        detail: dict[str, str] = {"file": path.name}
        m = _NAME.match(path.stem)
        if m:
            detail["task"] = m["task"]
            results = path.with_name(f"{m['date']}_results.json") if m["date"] else None
            if results is not None and results.is_file():
                detail.update(_results_detail(results, m["task"]))
        return Origin(self.tool, str(path), sha256_of(path), detail)

    def read(self, path: Path, options: ReadOptions) -> Iterator[ImportedPrediction]:
        """One prediction per logged document."""
        id_field = options.field_map.get("id")
        for n, row in iter_jsonl(path):
            where = f"{path}:{n}"
            if not isinstance(row, dict):
                raise row_error(where, "(record)", f"expected an object, got {type(row).__name__}")
            doc = need(where, row, "doc")
            if not isinstance(doc, dict):
                raise row_error(where, "doc", f"expected an object, got {type(doc).__name__}")
            if id_field:
                sid = as_text(where, id_field, need(where, row, id_field))
            else:
                found = next((f for f in _ID_FIELDS if f in doc), None)
                sid = (
                    as_text(where, f"doc.{found}", doc[found])
                    if found
                    else as_text(where, "doc_id", need(where, row, "doc_id"))
                )
            resps = need(where, row, "resps")
            prediction = as_text(where, "resps", _first_text(resps))
            filtered = _first_text(row.get("filtered_resps"))
            name, verdict, reading = _metric(row, where)
            if reading is None and isinstance(filtered, str) and filtered != prediction:
                reading = filtered
            target = row.get("target")
            gold: str | list[str] | None
            if isinstance(target, list):
                gold = [as_text(where, "target", t) for t in target]
            else:
                gold = None if target is None else as_text(where, "target", target)
            yield ImportedPrediction(
                row=n,
                sample_id=sid,
                prediction=prediction,
                gold=gold,
                tool_extraction=reading,
                tool_verdict=verdict,
                fields=json_safe(
                    {
                        "doc_id": row.get("doc_id"),
                        "target": target,
                        "filtered_resps": row.get("filtered_resps"),
                        **({name: row[name]} if name else {}),
                    }
                ),
            )


def _results_detail(path: Path, task: str) -> dict[str, str]:
    """Model, lmms-eval version and the task's published figures from ``DATE_results.json``."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out: dict[str, str] = {"results_file": path.name}
    for key in ("model_name", "lmms_eval_version", "git_hash"):
        if isinstance(doc.get(key), str):
            out[key] = doc[key]
    config = doc.get("config")
    if isinstance(config, dict) and "model" in config and "model_name" not in out:
        out["model_name"] = str(config["model"])
    try:
        figures = dig(doc, f"results.{task}")
    except KeyError:
        figures = None
    if isinstance(figures, dict):
        out["results"] = json.dumps(json_safe(figures), sort_keys=True)[:2000]
    return out


READERS.register("lmms-eval", "lmms-eval's --log_samples output (DATE_samples_TASK.jsonl)")(
    LmmsEvalSamples()
)
