"""VLMEvalKit's prediction tables: ``MODEL_DATASET.xlsx`` / ``.tsv`` / ``.csv``.

Layout from open-compass/VLMEvalKit @ e8e78f0: ``vlmeval/inference.py`` writes the dataset's
own columns (``index``, ``question``, ``A``..., ``answer``, ``category``, ``l2-category``...)
plus ``prediction`` (and ``thinking`` when ``SPLIT_THINK`` is set: ``prediction`` then holds
the answer after ``</think>`` and ``thinking`` what came before), through
``vlmeval/smp/file.py``'s ``dump`` (xlsx by default, ``PRED_FORMAT=tsv``); its evaluation
writes ``MODEL_DATASET_JUDGE_result.xlsx`` (``_openai_result`` for GPT judges, ``_exact_matching``
without one) with ``GT``, ``hit`` and ``log`` columns (``vlmeval/dataset/utils/multiple_choice.py``).
``hit`` is read as the tool's verdict; the judge named in the file name as its judge.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from lmmprobe.predictions._rows import as_text, as_verdict, json_safe, need, row_error
from lmmprobe.predictions._stream import iter_table, sha256_of
from lmmprobe.predictions.imported import (
    READERS,
    ImportedPrediction,
    Origin,
    ReadOptions,
)

__all__ = ["VLMEvalKitTable"]

_RESULT = re.compile(r"^(?P<stem>.+)_(?P<judge>[^_]+)_result$")
_TABLES = (".xlsx", ".tsv", ".csv")


class VLMEvalKitTable:
    """A VLMEvalKit prediction (or judged result) table with ``index`` and ``prediction``."""

    tool = "vlmevalkit"

    def sniff(self, path: Path) -> bool:
        """A table whose header has ``index`` and ``prediction``."""
        if not path.is_file() or path.suffix.lower() not in _TABLES:
            return False
        try:
            for _, row in iter_table(path):
                return "index" in row and "prediction" in row
        except Exception:
            return False
        return False

    def origin(self, path: Path, options: ReadOptions) -> Origin:
        """The file's hash, its ``MODEL_DATASET`` stem and the judge its name records."""
        detail = {"file": path.name, "stem": path.stem}
        m = _RESULT.match(path.stem)
        if m:
            detail["stem"] = m["stem"]
            detail["judge"] = m["judge"]
        return Origin(self.tool, str(path), sha256_of(path), detail)

    def read(self, path: Path, options: ReadOptions) -> Iterator[ImportedPrediction]:
        """One prediction per table row; ``index`` joins it to the benchmark."""
        judged = _RESULT.match(path.stem) is not None
        for n, row in iter_table(path):
            where = f"{path}:row {n}"
            index = as_text(where, "index", need(where, row, "index"))
            if not index:
                raise row_error(where, "index", "empty")
            prediction = as_text(where, "prediction", need(where, row, "prediction"))
            gold = row.get("GT", row.get("answer"))
            hit = as_verdict(where, "hit", row.get("hit")) if "hit" in row else None
            yield ImportedPrediction(
                row=n,
                sample_id=index,
                prediction=prediction,
                gold=None if gold is None else as_text(where, "answer", gold),
                tool_verdict=hit,
                tool_judged=judged and hit is not None,
                fields=json_safe(
                    {k: v for k, v in row.items() if k not in ("image", "image_path") and k}
                ),
            )


READERS.register("vlmevalkit", "VLMEvalKit's prediction tables (MODEL_DATASET.xlsx/.tsv/.csv)")(
    VLMEvalKitTable()
)
