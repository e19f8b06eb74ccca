"""Dysca's model outputs, read beside its ground truth: ``Dysca_compute.py``'s two JSON lists.

Layout from Robin-WZQ/Dysca @ ac202cb (``evaluate_LVLMs/Dysca_compute.py``): the ground truth
(``Dysca.json``: ``instruction``, ``question_type``, ``question_majority``, ``answer``) and the
model's output list, entry ``i`` answering ground-truth entry ``i`` (each with ``answer``).
The output file alone does not say what it answers: the ground truth is given with
``--ground-truth`` (`ReadOptions.settings` ``ground_truth``), recorded in the origin.

Both lists are read an entry at a time, in step. Each pair is one row (its id its place,
``1``, ``2``...): its item is the ground truth's (`DyscaOutputs.item`: a single choice among the
instruction's ``(X)`` lines, the gold the line Dysca compares with; a caption an open answer),
with ``question_majority`` and ``question_type`` as breakdown keys; Dysca's own verdict on a
choice rides along (`ImportedPrediction.tool_verdict`, read by `lmmprobe.parse.dysca.dysca_read`).
Dysca's figures (its rounded percentages per majority, the caption similarity) are its
``--as-published`` hook (`lmmprobe.predictions.as_published.dysca`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import zip_longest
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.parse.dysca import dysca_bound_problem, dysca_choice_lines, dysca_read
from lmmprobe.predictions._rows import as_text, json_safe, need, prediction_text, row_error
from lmmprobe.predictions._stream import sha256_of
from lmmprobe.predictions.dysca import dysca_entries
from lmmprobe.predictions.imported import READERS, ImportedPrediction, Origin, ReadOptions
from lmmprobe.schema import Sample

__all__ = ["DyscaOutputs", "ground_truth_of"]

_CHOICE_TYPES = ("multi choice", "true or false")
_LINE = re.compile(r"\(([A-Z])\) ")
_GT_KEPT = ("instruction", "question_type", "question_majority", "answer")


def ground_truth_of(path: Path, options: ReadOptions) -> Path:
    """The ground-truth file `options` name for the outputs at `path`.

    Raises:
        DataError: None is named (the outputs alone do not say what they answer).

    """
    given = options.settings.get("ground_truth")
    if not given:
        raise DataError(
            f"{path}: a Dysca output file is scored against Dysca's ground truth: give it with "
            "--ground-truth Dysca.json"
        )
    return Path(given)


class DyscaOutputs:
    """Dysca's model-output JSON list, aligned entry by entry with its ground truth."""

    tool = "dysca"

    def sniff(self, path: Path) -> bool:
        """Never by itself: an output list of ``{answer}`` is any file's shape (``--ground-truth``)."""
        return False

    def origin(self, path: Path, options: ReadOptions) -> Origin:
        """The outputs' hash, and the ground truth they were read against (its hash too)."""
        truth = ground_truth_of(path, options)
        return Origin(
            self.tool,
            str(path),
            sha256_of(path),
            {
                "layout": "Dysca_compute.py model output, aligned with its ground truth",
                "file": path.name,
                "ground_truth": str(truth),
                "ground_truth_sha256": sha256_of(truth),
            },
        )

    def read(self, path: Path, options: ReadOptions) -> Iterator[ImportedPrediction]:
        """One row per entry pair, in step; the two lists must have one length.

        An entry pair Dysca's code would stop on (an entry that is not an object, a field
        missing or of no use) is left out, named in one line (``FILE:#N: FIELD: why``,
        `ImportedPrediction.skipped`), and the other pairs are read, as the ``--as-published``
        figures count them.

        Raises:
            DataError: A list is not a JSON list, or the lists differ in length.

        """
        truth_path = ground_truth_of(path, options)
        pairs = zip_longest(
            dysca_entries(truth_path, "ground-truth"), dysca_entries(path, "model-output")
        )
        for n, (truth, output) in enumerate(pairs, start=1):
            if truth is None or output is None:
                raise DataError(
                    f"{path} and {truth_path} differ in length (one ends at entry {n - 1}): "
                    "Dysca scores output entry i against ground-truth entry i"
                )
            try:
                yield _row(n, truth, output)
            except DataError as exc:
                yield ImportedPrediction(row=n, sample_id=None, prediction="", skipped=str(exc))

    def item(self, where: str, pred: ImportedPrediction) -> Sample:
        """The ground truth's item: a single choice among its ``(X)`` lines, or an open answer."""
        fields = pred.fields
        instruction = str(fields.get("instruction", ""))
        metadata = {
            k: str(fields[k]) for k in ("question_majority", "question_type") if k in fields
        }
        gold = str(pred.gold)
        if fields.get("question_type") in _CHOICE_TYPES:
            lines = [ln for ln in dysca_choice_lines(instruction) if _LINE.match(ln)]
            texts = [ln.partition(" ")[2] for ln in lines]
            if len(texts) >= 2 and gold in texts:
                question = instruction.split("Choices:\n")[0].split("\n(A) ")[0].strip()
                return Sample(
                    id=str(pred.sample_id),
                    question=question or instruction,
                    choices=texts,
                    answer=texts.index(gold),
                    formulation="single_choice",
                    metadata=metadata | {"fixed_options": True},
                )
        return Sample(
            id=str(pred.sample_id),
            question=instruction or f"(Dysca entry {pred.row})",
            answer=[gold],
            formulation="open_ended",
            metadata=metadata,
        )


def _row(n: int, truth: tuple[str, Any], output: tuple[str, Any]) -> ImportedPrediction:
    gt_at, gt = truth
    out_at, out = output
    for where, entry in ((gt_at, gt), (out_at, out)):
        if not isinstance(entry, dict):
            raise row_error(where, "(entry)", f"expected an object, got {type(entry).__name__}")
    qtype = need(gt_at, gt, "question_type")
    instruction = as_text(gt_at, "instruction", need(gt_at, gt, "instruction"))
    expected = as_text(gt_at, "answer", need(gt_at, gt, "answer"))
    answer = need(out_at, out, "answer")
    text, refused = prediction_text(out_at, "answer", "" if answer is None else answer)
    verdict: float | None = None
    if qtype in _CHOICE_TYPES:
        # Dysca's own reading: its letter, mark or nearest line, compared with ==.
        lines = dysca_choice_lines(instruction)
        # Bounded before Dysca's edit distances run against every line (exact within bounds).
        problem = dysca_bound_problem(answer, lines)
        if problem:
            field, _, why = problem.partition(": ")
            raise row_error(gt_at if field == "instruction" else out_at, field, why)
        verdict = float(dysca_read(answer, lines).text == expected)
    return ImportedPrediction(
        row=n,
        sample_id=str(n),
        prediction=text,
        gold=expected,
        gold_names="text",
        tool_verdict=verdict,
        refused=refused,
        fields=json_safe({k: gt[k] for k in _GT_KEPT if k in gt} | {"output": answer}),
    )


READERS.register(
    "dysca",
    "Dysca's model-output JSON, aligned with its ground truth (--ground-truth Dysca.json)",
)(DyscaOutputs())
