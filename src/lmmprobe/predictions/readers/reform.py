"""ReForm-Eval's prediction file: the JSON its ``run_loader_eval`` writes, one entry per prompt.

Layout from FudanDISC/ReForm-Eval @ df1cfa7b: a JSON list (JSON Lines and a ``{"data": [...]}``
object are read too) of ``{sample_id, answer, answer_options, prediction}`` entries, one per
duplicate (prompt wording) of a sample; ``prediction`` is the generated text, or the chosen
option's index under likelihood inference; caption entries carry ``references``, OCR and KIE
entries a text ``answer``. The file holds its items (the options and the gold index), not the
questions.

Each entry is one row (read an entry at a time, `iter_entries`): its id is the sample's id and
the entry's place among that sample's entries (``7#2``: ReForm-Eval asks a sample once per
prompt), its item is made from the entry itself (`ReformEvalFile.item`: a single choice among
``answer_options`` with ``answer`` the gold, or an open answer against ``references`` /
``answer``), and ReForm-Eval's own verdict rides along (`ImportedPrediction.tool_verdict`:
its first ``(X)`` mark, read without the options as ``metric_eval`` reads it). ReForm-Eval's
own figures (accuracy over its per-sample matrix, format-hit rate, instability) are its
``--as-published`` hook (`lmmprobe.predictions.as_published.reform`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.parse import reform_choice
from lmmprobe.parse.open_ended import reform_kie_correct, reform_ocr_correct
from lmmprobe.predictions._rows import as_text, json_safe, need, prediction_text, row_error
from lmmprobe.predictions._stream import (
    UnreadableFile,
    first_json_char,
    iter_entries,
    iter_json,
    iter_jsonl,
    sha256_of,
)
from lmmprobe.predictions.imported import READERS, ImportedPrediction, Origin, ReadOptions
from lmmprobe.schema import Sample
from lmmprobe.schema.text import shown_value

__all__ = ["REFORM_SETTINGS", "ReformEvalFile"]

REFORM_SETTINGS = ("formulation", "infer_method", "tokenizer")
"""`ReadOptions.settings` this reader takes (``score --formulation/--infer-method/--tokenizer``):
recorded in the origin, and read by the ``--as-published`` hook."""

_KEPT = ("sample_id", "answer", "answer_options", "prediction", "references")


def _looks_like_entry(value: Any) -> bool:
    # A single-choice or caption entry names itself; an OCR / KIE entry ({sample_id, answer,
    # prediction}) is any mapped file's shape, so it is read with --reader reform only.
    return (
        isinstance(value, dict)
        and "sample_id" in value
        and "prediction" in value
        and ("answer_options" in value or "references" in value)
        and not ("stage" in value and "model" in value)  # an lmmprobe export row
    )


class ReformEvalFile:
    """ReForm-Eval's prediction file (``run_loader_eval``'s JSON), an entry per prompt."""

    tool = "reform-eval"

    def sniff(self, path: Path) -> bool:
        """A JSON list or JSON Lines whose first entry is a single-choice or caption entry.

        A ``{"data": [...]}`` object, and OCR / KIE files, are read with ``--reader reform``:
        telling them apart would read an object whole or claim any ``{id, answer}`` file.
        """
        if not path.is_file() or path.suffix.lower() not in (".json", ".jsonl"):
            return False
        try:
            first = first_json_char(path)
            if first == "[":
                for _, _, value in iter_json(path):
                    return _looks_like_entry(value)
            elif first == "{":
                for _, value in iter_jsonl(path):
                    return _looks_like_entry(value)
        except UnreadableFile:
            raise  # the file itself is broken: say so, not that no layout fits
        except Exception:
            return False
        return False

    def origin(self, path: Path, options: ReadOptions) -> Origin:
        """The file's hash, and the settings it was read with (``--formulation``...)."""
        detail = {"layout": "run_loader_eval prediction JSON", "file": path.name}
        detail |= {k: options.settings[k] for k in REFORM_SETTINGS if k in options.settings}
        return Origin(self.tool, str(path), sha256_of(path), detail)

    def read(self, path: Path, options: ReadOptions) -> Iterator[ImportedPrediction]:
        """One row per entry, numbered per sample (``ID#K``); ReForm-Eval's verdict beside it.

        An entry that is not an object, lacks a field ReForm-Eval reads or holds a value it
        cannot use is left out, named in one line (``FILE:#N: FIELD: why``,
        `ImportedPrediction.skipped`), and the other entries are read: ReForm-Eval's own
        ``metric_eval`` would stop there (the ``--as-published`` figures leave it out alike).

        Raises:
            DataError: The file itself cannot be read (not JSON, an entry cut off).

        """
        formulation = options.settings.get("formulation")
        # The inference method given, else told by the first entry (an integer prediction:
        # likelihood), as the ``--as-published`` hook tells it (`reform_settings`): an entry
        # of the other kind is left out by both.
        method = options.settings.get("infer_method")
        seen: Counter[str] = Counter()
        for n, (where, value) in enumerate(iter_entries(path), start=1):
            if method is None:
                entry = value if isinstance(value, dict) else {}
                method = "likelihood" if type(entry.get("prediction")) is int else "generation"
            try:
                yield _entry_row(where, n, value, seen, formulation, method)
            except DataError as exc:
                yield ImportedPrediction(row=n, sample_id=None, prediction="", skipped=str(exc))

    def item(self, where: str, pred: ImportedPrediction) -> Sample:
        """The item an entry holds: its options and gold index, or its reference answers.

        The file holds no question: the item's question says so. A choice's options keep the
        file's order (the model saw ReForm-Eval's marks), never shuffled.

        Raises:
            DataError: The entry's options or gold do not make an item (named by file, row).

        """
        fields = pred.fields
        question = f"(ReForm-Eval entry {pred.row}: the file holds no question)"
        sample = str(fields.get("sample_id"))
        if "answer_options" in fields:
            options = fields["answer_options"]
            return Sample(
                id=str(pred.sample_id),
                question=question,
                choices=list(options),
                answer=int(fields["answer"]),
                formulation="single_choice",
                metadata={"fixed_options": True, "reform_sample": sample},
            )
        gold = pred.gold
        refs = gold if isinstance(gold, list) else [str(gold)]
        if not refs:
            raise row_error(f"{where}: row {pred.row}", "answer", "an empty list of answers")
        # lmmprobe's own rule for the formulation the file was read as (`_open_row`): OCR's
        # and KIE's containment, captions scored as a corpus; else an exact open answer.
        kind = fields.get("formulation")
        formulation = (
            "caption" if "references" in fields else kind if kind in ("ocr", "kie") else None
        )
        return Sample(
            id=str(pred.sample_id),
            question=question,
            answer=refs,
            formulation=formulation or "open_ended",
            metadata={"reform_sample": sample},
        )


def _entry_row(
    where: str, n: int, value: Any, seen: Counter[str], formulation: str | None, method: str
) -> ImportedPrediction:
    """Entry `n`'s row, its id numbered among its sample's entries so far (`seen`).

    Raises:
        DataError: The entry does not make a row (named ``FILE:#N: FIELD: why``); its sample
            is then not counted.

    """
    if not isinstance(value, dict):
        raise row_error(where, "(entry)", f"expected an object, got {type(value).__name__}")
    sid = as_text(where, "sample_id", need(where, value, "sample_id"))
    pred = need(where, value, "prediction")
    number = f"{sid}#{seen[sid] + 1}"
    if "answer_options" in value:
        if method == "likelihood" and type(pred) is not int:  # ReForm-Eval fails on the rest
            raise row_error(where, "prediction", f"expected an option index, got {pred!r}"[:200])
        if method == "generation" and not isinstance(pred, str):
            raise row_error(
                where,
                "prediction",
                f"generation-based evaluation needs the generated text, got {pred!r}"[:200]
                + " (option indices: --infer-method likelihood)",
            )
        row = _choice_row(where, n, number, value, pred)
    else:
        row = _open_row(where, n, number, value, pred, formulation)
    seen[sid] += 1
    return row


def _choice_row(
    where: str, n: int, sample_id: str, record: Mapping[str, Any], pred: Any
) -> ImportedPrediction:
    """A single-choice entry: the option texts, the gold index, ReForm-Eval's own verdict."""
    options = record["answer_options"]
    if (
        not isinstance(options, list)
        or len(options) < 2
        or not all(isinstance(o, str) for o in options)
    ):
        raise row_error(where, "answer_options", "expected a list of at least two option texts")
    raw = need(where, record, "answer")
    try:
        answer = int(raw)  # ReForm-Eval compares with int(answer): 2 and "2" both work
    except (TypeError, ValueError, OverflowError):
        raise row_error(where, "answer", f"expected an option index, got {raw!r}"[:200]) from None
    if not 0 <= answer < len(options):
        # The value as the file gave it (1e308 is int() to a 309-digit number), cut if long.
        shown = shown_value(str(raw) if isinstance(raw, int | float) else repr(raw), 40)
        raise row_error(where, "answer", f"{shown} is not an index of the {len(options)} options")
    if type(pred) is int:
        # Likelihood inference: the index of the option the model scored highest; its text is
        # what the model chose (an index past the options is no choice lmmprobe can read).
        index: int | None = pred
        text, refused = (options[pred] if 0 <= pred < len(options) else str(pred)), None
    else:
        text, refused = prediction_text(where, "prediction", pred, allow_number=False)
        index = reform_choice(text)  # no options, as metric_eval calls its metric
    chosen = options[index] if index is not None and 0 <= index < len(options) else None
    return ImportedPrediction(
        row=n,
        sample_id=sample_id,
        prediction=text,
        gold=options[answer],
        gold_names="text",
        tool_extraction=chosen,
        tool_verdict=float(index is not None and index == answer),
        refused=refused,
        fields=json_safe({k: record[k] for k in _KEPT if k in record} | {"answer": answer}),
    )


def _open_row(
    where: str,
    n: int,
    sample_id: str,
    record: Mapping[str, Any],
    pred: Any,
    formulation: str | None,
) -> ImportedPrediction:
    """A caption entry (its references) or an OCR / KIE entry (its answer or answers)."""
    if "references" in record:
        refs = record["references"]
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) for r in refs):
            raise row_error(where, "references", "expected a non-empty list of reference captions")
        gold: str | list[str] = list(refs)
    else:
        raw = need(where, record, "answer")
        if isinstance(raw, list) and raw and all(isinstance(a, str) for a in raw):
            gold = list(raw)
        else:
            gold = as_text(where, "answer", raw, allow_number=False)
    text, refused = prediction_text(where, "prediction", pred, allow_number=False)
    verdict: float | None = None
    if "references" not in record and refused is None:
        # ReForm-Eval's own rule, where the formulation says which (OCR and KIE files look
        # alike): what `lmmprobe.predictions.reform` counts.
        if formulation == "ocr":
            verdict = float(reform_ocr_correct(text, gold))
        elif formulation == "kie":
            verdict = float(reform_kie_correct(text, gold))
    return ImportedPrediction(
        row=n,
        sample_id=sample_id,
        prediction=text,
        gold=gold,
        tool_verdict=verdict,
        refused=refused,
        fields=json_safe(
            {k: record[k] for k in _KEPT if k in record}
            | ({"formulation": formulation} if formulation in ("ocr", "kie") else {})
        ),
    )


READERS.register(
    "reform",
    "ReForm-Eval's prediction JSON (run_loader_eval: answer_options, prediction, one per prompt)",
)(ReformEvalFile())
