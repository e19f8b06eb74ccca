"""OCRBench v2: the ``ocrbench-v2`` benchmark definition.

Origin: Fu et al. 2024, OCRBench v2: An Improved Benchmark for Evaluating Large Multimodal
Models on Visual Text Localization and Reasoning, arXiv:2501.00321. 10,000 questions of 30 task
types (21 English, 9 Chinese) released on Google Drive as ``OCRBench_v2/OCRBench_v2.json`` with
the images under ``EN_part/`` and ``CN_part/`` (Yuliang-Liu/MultimodalOCR ``OCRBench_v2/README.md``
@ `OCRBENCH_V2_COMMIT`); scoring ``OCRBench_v2/eval_scripts/eval.py`` and ``get_score.py``
(`lmmprobe.metrics.ocrbench_v2`). The release ships no inference code and no prompt: the README
asks for the model's answer to each item's ``question`` (its sample predictions were made with
VLMEvalKit, whose prompt was not checked here), so the question is the whole prompt.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks.standard._choice import escape_braces
from lmmprobe.data.jsonl import read_json_file
from lmmprobe.metrics.ocrbench_v2 import (
    OCRBENCH_V2_COMMIT,
    TASK_TYPES,
    group_of,
    reference_dict,
)
from lmmprobe.schema import Sample

__all__ = ["OCRBENCH_V2", "OCRBENCH_V2_DRIVE_ID"]

OCRBENCH_V2_DRIVE_ID = "1Hk1TMu--7nr5vJ7iaNwMQZ_Iw9W_KI3C"
"""The Google Drive file the README links (the zip holding OCRBench_v2/)."""

_MAX_FILE = 256 << 20  # the whole annotation file (10,000 items) is far below this
_EVAL_METHODS = {
    # eval.py reads ``eval`` on these types only; any other value there stops it.
    "multiple choice", "case sensitive", "exact match", "regression",
}  # fmt: skip


def _rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each item of ``OCRBench_v2.json`` (a JSON list), where ``file:index``."""
    path = root / "OCRBench_v2.json"
    doc = read_json_file(path, what="the OCRBench v2 annotation file", cap=_MAX_FILE, within=root)
    if not isinstance(doc, list):
        raise DataError(f"{path}: expected a JSON list of items, got {type(doc).__name__}")
    for i, item in enumerate(doc):
        yield f"{path}:{i}", item if isinstance(item, dict) else {"item": item}


def _ocrbench_v2(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    kind = row.get("type")
    if kind not in TASK_TYPES:
        raise RowError("type", f"not one of OCRBench v2's 30 task types: {str(kind)[:80]!r}")
    question = row.get("question")
    if not isinstance(question, str):
        raise RowError("question", f"expected text, got {str(question)[:80]!r}")
    answers = row.get("answers")
    if kind == "text grounding en":
        if not (isinstance(answers, list) and len(answers) == 4):
            raise RowError("answers", f"expected a box [x1, y1, x2, y2], got {str(answers)[:80]!r}")
    elif not isinstance(answers, list) or not answers:
        raise RowError("answers", f"expected a non-empty list, got {str(answers)[:80]!r}")
    method = row.get("eval")
    if "eval" in row and method not in _EVAL_METHODS:
        raise RowError("eval", f"not an evaluation method eval.py knows: {str(method)[:80]!r}")
    if kind == "key information extraction cn":
        try:
            reference_dict(answers[0])  # eval.py reads it so, and stops where it cannot
        except ValueError as exc:
            raise RowError("answers", str(exc)) from None
    if kind == "chart parsing en" and not isinstance(answers[0], dict):
        raise RowError("answers", "chart parsing expects its answer as a dict")
    if kind == "text spotting en" and not (
        isinstance(row.get("bbox"), list) and isinstance(row.get("content"), list)
    ):
        raise RowError("bbox", "text spotting expects bbox and content lists")
    sid = row.get("id")
    if sid is None or isinstance(sid, bool) or not str(sid).strip():
        raise RowError("id", f"expected an id, got {sid!r}")
    lang, group = group_of(kind)
    fields = {k: row[k] for k in ("question", "answers", "eval", "bbox", "content") if k in row}
    return Sample(
        id=str(sid),
        images=[image_ref(row.get("image_path"), ctx, "image_path")],
        question=question,
        answer=[a if isinstance(a, str) else json.dumps(a, ensure_ascii=False) for a in answers],
        formulation="open_ended",
        metadata={
            # --by type gives eval.py's per-type table, --by group get_score.py's groups.
            "type": kind,
            "group": f"{lang}/{group}",
            "language": lang,
            "dataset_name": str(row.get("dataset_name")),
            # What the task type's rule reads, as released (answers may be dicts or boxes).
            "ocrbench_v2": json.dumps(fields, ensure_ascii=False),
        },
        prompt=PromptTemplate(escape_braces(question)),
    )


OCRBENCH_V2 = benchmark(
    Benchmark(
        name="ocrbench-v2",
        groups=("chinese",),
        title="OCRBench v2 (English and Chinese)",
        citation="Fu et al. 2024, OCRBench v2: An Improved Benchmark for Evaluating Large "
        "Multimodal Models on Visual Text Localization and Reasoning, arXiv:2501.00321",
        license="research use only, not commercial (OCRBench_v2/README.md Copyright Statement)",
        formulation="open_ended",
        metric="ocrbench_v2",
        prompt=PromptTemplate(
            template="{question}",
            source=f"Yuliang-Liu/MultimodalOCR @ {OCRBENCH_V2_COMMIT[:7]} OCRBench_v2/README.md "
            "(the model's answer to each item's question; no inference code or prompt beyond it)",
        ),
        to_sample=_ocrbench_v2,
        fetch=(
            'mkdir -p "$LMMPROBE_DATA_DIR" && gdown '
            f"https://drive.google.com/uc?id={OCRBENCH_V2_DRIVE_ID} "
            '-O "$LMMPROBE_DATA_DIR"/OCRBench_v2.zip && unzip -q '
            '"$LMMPROBE_DATA_DIR"/OCRBench_v2.zip -d "$LMMPROBE_DATA_DIR" && mv '
            '"$LMMPROBE_DATA_DIR"/OCRBench_v2 "$LMMPROBE_DATA_DIR"/ocrbench-v2'
        ),
        split="test",
        splits=("test",),
        size=10000,
        layout="files",
        read_files=_rows,
        notes=(
            "Two official figures, as OCRBench v2's get_score.py prints them: ocrbench_v2 "
            "(English Overall Score) and ocrbench_v2_cn (Chinese Overall Score), each the "
            "mean of its capability groups' mean scores (8 English, 5 Chinese); --by group "
            "gives those groups, --by type eval.py's 30 task types, --by language the two "
            "halves.",
            "Every task type is scored by its own rule in eval.py (containment / ANLS, "
            "counting, TEDS of tables and charts, STEDS of documents, key-value F1, box IoU, "
            "RRC end-to-end spotting, BLEU/METEOR/F1/edit distance of page OCR): pip install "
            "'lmmprobe[ocrbench]' and NLTK's WordNet (`python -m nltk.downloader wordnet`); a "
            "language whose rules miss a library refuses its figure, naming it.",
            "Where eval.py stops on an answer (its rule raises, so it prints no figure at all), "
            "that answer scores 0 here and a warning names the sample.",
            "Data: the Google Drive file the README links (OCRBench_v2/ with OCRBench_v2.json); "
            "not pinned: Drive keeps no revisions. The Hub copy ling99/OCRBench_v2 is not read: "
            "it stores eval and dict answers differently from the JSON the scripts read.",
        ),
        schema_confirmed=f"Yuliang-Liu/MultimodalOCR @ {OCRBENCH_V2_COMMIT[:7]} "
        "OCRBench_v2/README.md (dataset_name, type, id, image_path, question, answers) + "
        "eval_scripts/eval.py (eval, bbox, content); the Drive file itself was not readable here",
    )
)
