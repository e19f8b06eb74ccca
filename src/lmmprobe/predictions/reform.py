"""Scoring ReForm-Eval prediction files exactly as its ``run_loader_eval.metric_eval`` does.

ReForm-Eval's file is a JSON list (JSONL is accepted too) of ``{sample_id, answer,
answer_options, prediction}`` entries, one per duplicate (prompt) of a sample; ``prediction`` is
the generated text (generation-based inference) or the chosen option index (likelihood-based);
caption entries carry ``references``.

Every figure but one is ReForm-Eval's own, computed as ``metric_eval`` computes it (the one:
``anls_docvqa`` of OCR / KIE files, which ReForm-Eval does not compute, named by its origin):

- the metric is called per entry WITHOUT the options, so a generated answer counts only through
  its first ``(X)`` mark (`lmmprobe.parse.reform_choice`); an answer that merely repeats an
  option's text is unmatched;
- accuracy is ``np.mean`` of the per-sample matrix of 0/1 results (equal to the mean over
  entries when every sample has as many entries);
- the format-hit rate is the share of entries for which the metric returned a prediction: any
  mark, in range or not; every likelihood index; every OCR / KIE answer;
- instability (single choice) is ``entropy_calculation`` of ``utils/run_utils.py``: per sample,
  the natural-log entropy of the predicted categories (the option's text, or the raw prediction
  when nothing was read or the index is past the options), averaged over samples;
- OCR and KIE use `reform_ocr_correct` and `reform_kie_correct`.

Where one of ReForm-Eval's quirks decided outcomes, the result's ``notes`` say so, with counts.
Where ReForm-Eval's own evaluation would stop with an error (a ragged per-sample matrix, a KIE
list answer), the figure lmmprobe gives and the reason are stated in a note too.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from lmmprobe.data.base import DataError
from lmmprobe.data.rows import nesting_reason, too_deep
from lmmprobe.metrics.text import CaptionTokenizer
from lmmprobe.parse import reform_choice
from lmmprobe.parse.open_ended import (
    kie_correct_strict,
    normalize_vqa_answer,
    normalize_vqa_answer_uncapped,
    ocr_correct_words,
    reform_kie_correct,
    reform_ocr_clean,
    reform_ocr_correct,
)
from lmmprobe.predictions._stream import open_text

FileFormulation = Literal["single_choice", "generation", "ocr", "kie"]
InferMethod = Literal["generation", "likelihood"]


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """A JSON list (or ``{"data": [...]}``) or JSON lines, as a list of objects.

    Raises:
        DataError: The file is not JSON, or an entry is not an object (with its position).

    """
    # In the encoding its byte-order mark names (a UTF-16 file PowerShell wrote); other bytes
    # that are not UTF-8 are one error naming the file, line and offset.
    with open_text(Path(path)) as fh:
        text = fh.read()
    stripped = text.lstrip()
    try:
        if stripped.startswith(("[", "{")) and not _looks_like_jsonl(stripped):
            data = json.loads(text)
            # A {"data": [...]} wrapper, a list, or one object (a JSON-lines file of one row).
            records = data.get("data", [data]) if isinstance(data, dict) else data
        else:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not JSON or JSON lines: {exc}") from exc
    except RecursionError:
        raise DataError(f"{path}: {nesting_reason()}") from None
    if not isinstance(records, list):
        raise DataError(f"{path}: expected a list of predictions")
    for i, r in enumerate(records, start=1):
        if not isinstance(r, dict):
            raise DataError(f"{path}:#{i}: expected an object, got {type(r).__name__}")
        deep = too_deep(r)
        if deep is not None:
            raise DataError(f"{path}:#{i}: {deep}: {nesting_reason()}")
    return records


def _looks_like_jsonl(text: str) -> bool:
    first = text.split("\n", 1)[0].strip()
    try:
        return isinstance(json.loads(first), dict) and "\n" in text.strip()
    except (json.JSONDecodeError, RecursionError):
        return False


def _require(path: str | Path, i: int, r: dict[str, Any], *fields: str) -> None:
    for f in fields:
        if f not in r:
            raise DataError(f"{path}:#{i}: {f}: missing required field")


def _sample_key(path: str | Path, i: int, r: dict[str, Any]) -> Hashable:
    # The raw value, as ReForm-Eval keys its dictionaries: 1 and "1" are different samples.
    key = r["sample_id"]
    if not isinstance(key, Hashable):
        raise DataError(f"{path}:#{i}: sample_id: expected a string or number, got {key!r}")
    return key


def _answer_index(path: str | Path, i: int, value: Any) -> int:
    # ReForm-Eval compares with int(answer): an index or its text ("2") both work.
    try:
        return int(value)
    except (TypeError, ValueError):
        raise DataError(f"{path}:#{i}: answer: expected an option index, got {value!r}") from None


def reform_instability(categories: Mapping[Any, Sequence[Hashable]]) -> float:
    """ReForm-Eval's instability: mean over samples of the entropy of predicted categories.

    Per sample, the probabilities are the counts of each distinct category (in order of first
    appearance) over the sample's entries, and the entropy is summed as
    ``sum([-p * log(p) ...])`` with the natural log; the result is the plain average over
    samples. Source: ``entropy_calculation`` in ReForm-Eval's ``utils/run_utils.py``, with the
    same order of floating-point operations, so results agree to the last digit.

    Args:
        categories: Per sample, the predicted category of each entry.

    Returns:
        The mean entropy (nats).

    """
    per_sample = []
    for preds in categories.values():
        n = len(preds)
        dist = [count / n for count in Counter(preds).values()]
        per_sample.append(sum([-1 * p * math.log(p) for p in dist]))
    return sum(per_sample) / len(per_sample)


def _accuracy(per_sample: Mapping[Any, Sequence[int]], n: int, notes: list[str]) -> float | None:
    if n == 0:
        return None
    lengths = sorted({len(v) for v in per_sample.values()})
    if len(lengths) > 1:
        notes.append(
            f"Samples have different numbers of entries ({lengths[0]} to {lengths[-1]}): "
            "ReForm-Eval's metric_eval stops there (np.mean over a ragged per-sample matrix "
            f"raises); the accuracy given is the mean over all {n} entries, which is what that "
            "mean gives when every sample has as many entries."
        )
    # np.mean of a 0/1 matrix: an exact sum divided once, as here.
    return sum(sum(v) for v in per_sample.values()) / n


def _share(k: int, n: int) -> str:
    return f"{k} of {n}"


def score_single_choice_file(
    records: Sequence[dict[str, Any]],
    infer_method: InferMethod = "generation",
    path: str | Path = "<predictions>",
) -> tuple[dict[str, Any], list[str]]:
    """ReForm-Eval single-choice metrics for one prediction file, and notes on quirks.

    Args:
        records: The file's entries.
        infer_method: ``generation`` (predictions are texts) or ``likelihood`` (indices).
        path: Named in errors.

    Returns:
        ``({"n", "samples", "accuracy", "format_hit_rate", "instability"}, notes)``.

    Raises:
        DataError: An entry lacks a field or holds a value ReForm-Eval's evaluation cannot use
            (with its position).

    """
    per_sample: dict[Hashable, list[int]] = defaultdict(list)
    categories: dict[Hashable, list[Any]] = defaultdict(list)
    hits = out_of_range = negative = text_only = 0
    for i, r in enumerate(records, start=1):
        _require(path, i, r, "sample_id", "answer", "answer_options", "prediction")
        key = _sample_key(path, i, r)
        answer = _answer_index(path, i, r["answer"])
        pred = r["prediction"]
        options = r["answer_options"]
        if infer_method == "likelihood":
            if type(pred) is not int:  # ReForm-Eval fails on anything else, bool included
                raise DataError(f"{path}:#{i}: prediction: expected an option index, got {pred!r}")
            index: int | None = pred
            negative += pred < 0
        else:
            if not isinstance(pred, str):
                raise DataError(
                    f"{path}:#{i}: prediction: generation-based evaluation needs the generated "
                    f"text, got {pred!r} (option indices: --infer-method likelihood)"
                )
            index = reform_choice(pred)  # no options, as metric_eval calls the metric
            if index is None and isinstance(options, list) and pred in options:
                text_only += 1
        per_sample[key].append(int(index is not None and index == answer))
        label: Any = pred
        if index is not None:
            hits += 1
            try:  # Python indexing, as theirs: a negative index counts from the end
                label = options[index]
            except (IndexError, KeyError, TypeError):
                out_of_range += 1
        categories[key].append(label)
    n = len(records)
    notes: list[str] = []
    if out_of_range:
        notes.append(
            f"{_share(out_of_range, n)} answers name an option past the last one (e.g. '(E)' "
            "with four options): counted as format hits and wrong, with the raw prediction as "
            "their category for instability, as ReForm-Eval's metric_eval does."
        )
    if text_only:
        notes.append(
            f"{_share(text_only, n)} answers repeat an option's text without an (X) mark: "
            "unmatched (wrong, not a format hit), because ReForm-Eval's metric_eval calls its "
            "metric without the options; for instability they share that option's category."
        )
    if negative:
        notes.append(
            f"{_share(negative, n)} likelihood predictions are negative: Python's indexing maps "
            "them to options counted from the end for instability, as in ReForm-Eval; they are "
            "format hits and wrong."
        )
    try:
        instability = reform_instability(categories) if categories else None
    except TypeError as exc:  # an unhashable option value
        raise DataError(
            f"{path}: answer_options: values must be texts or numbers ({exc})"
        ) from None
    metrics = {
        "n": n,
        "samples": len(per_sample),
        "accuracy": _accuracy(per_sample, n, notes),
        "format_hit_rate": hits / n if n else None,
        "instability": instability,
    }
    return metrics, notes


def score_single_choice(
    records: Sequence[dict[str, Any]],
    infer_method: InferMethod = "generation",
    path: str | Path = "<predictions>",
) -> dict[str, Any]:
    """ReForm-Eval single-choice metrics for one prediction file, with ``notes`` on quirks.

    The notes (a list of sentences, under ``"notes"``) say where a quirk of ReForm-Eval's code
    decided outcomes; `score_single_choice_file` returns them apart.
    """
    metrics, notes = score_single_choice_file(records, infer_method, path)
    return metrics | {"notes": notes}


def _texts(path: str | Path, i: int, field: str, value: Any, lists: bool) -> str | list[str]:
    if isinstance(value, str):
        return value
    if lists and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    wanted = "text or a list of texts" if lists else "text"
    raise DataError(f"{path}:#{i}: {field}: ReForm-Eval's metric needs {wanted}, got {value!r}")


def _score_ocr_kie(
    records: Sequence[dict[str, Any]], formulation: str, path: str | Path
) -> tuple[dict[str, Any], list[str]]:
    from lmmprobe.metrics import text

    per_sample: dict[Hashable, list[int]] = defaultdict(list)
    anls_total = 0.0
    lists = lists_decided = empty = spacing = boundary = periods = 0
    ocr = formulation == "ocr"
    for i, r in enumerate(records, start=1):
        _require(path, i, r, "sample_id", "prediction", "answer")
        key = _sample_key(path, i, r)
        # OCR joins list predictions and answers; KIE takes a list of answers, not predictions.
        pred = _texts(path, i, "prediction", r["prediction"], lists=ocr)
        truth = _texts(path, i, "answer", r["answer"], lists=True)
        if ocr:
            correct = reform_ocr_correct(pred, truth)
        else:
            assert isinstance(pred, str)
            correct = reform_kie_correct(pred, truth)
        per_sample[key].append(int(correct))
        pred_text = pred if isinstance(pred, str) else " ".join(pred)
        answers = truth if isinstance(truth, list) else [truth]
        anls_total += text.anls(pred_text, answers)
        if isinstance(truth, list):
            lists += 1
            if ocr:
                lists_decided += correct != any(reform_ocr_correct(pred, a) for a in truth)
            continue
        # Which quirk, if any, decided this entry (compared with lmmprobe's own rule).
        if ocr:
            if reform_ocr_clean(truth) == "":
                empty += correct
            elif correct != ocr_correct_words(pred_text, truth):
                spacing += 1
        elif normalize_vqa_answer(truth) == "":
            empty += correct
        elif correct != kie_correct_strict(pred_text, truth):
            capped = normalize_vqa_answer(truth) != normalize_vqa_answer_uncapped(truth) or (
                normalize_vqa_answer(pred_text) != normalize_vqa_answer_uncapped(pred_text)
            )
            periods += capped
            boundary += not capped
    n = len(records)
    notes: list[str] = []
    what = "OCR" if ocr else "KIE"
    if empty:
        why = (
            "the ground truth cleans to nothing (its pattern \\b\\b matches any prediction "
            "holding a letter or digit)"
            if ocr
            else "the reference normalizes to empty"
        )
        notes.append(
            f"{_share(empty, n)} {what} answers counted correct because {why}, as ReForm-Eval does."
        )
    if spacing:
        notes.append(
            f"{_share(spacing, n)} OCR answers scored differently than whole-word matching would "
            "score them, because ReForm-Eval's pattern needs the ground truth's exact whitespace "
            "(runs of spaces, tabs, line breaks, leading or trailing spaces), as ReForm-Eval does."
        )
    if boundary:
        notes.append(
            f"{_share(boundary, n)} KIE answers scored differently than lmmprobe's strict KIE, "
            "because the ground truth starts or ends with a non-word character ($, %, ...) "
            "where ReForm-Eval's \\b needs a word character beside it, as ReForm-Eval does."
        )
    if periods:
        notes.append(
            f"{_share(periods, n)} KIE answers decided by VQA's cap of 32 period removals "
            "(re.UNICODE passed as re.sub's count), as ReForm-Eval does."
        )
    if lists and ocr:
        notes.append(
            f"{_share(lists, n)} OCR answers are lists: joined with spaces into one ground truth, "
            f"as OCROpenEndedMetric does ({lists_decided} scored differently than matching any "
            "one item)."
        )
    if lists and not ocr:
        notes.append(
            f"{_share(lists, n)} KIE answers are lists: correct when any item matches, as "
            "KIEOpenEndedMetric's list branch decides; ReForm-Eval's metric_eval itself stops "
            "on such entries (that branch returns a bare 0/1 it cannot unpack)."
        )
    metrics = {
        "n": n,
        "accuracy": _accuracy(per_sample, n, notes),
        # metric_eval counts every OCR / KIE entry as a format hit: their metric always
        # returns the (normalized) prediction.
        "format_hit_rate": 1.0 if n else None,
        # Not ReForm-Eval's: lmmprobe adds DocVQA's ANLS, named by its origin in the output.
        "anls_docvqa": anls_total / n if n else None,
    }
    return metrics, notes


def score_open_ended_file(
    records: Sequence[dict[str, Any]],
    formulation: FileFormulation,
    path: str | Path = "<predictions>",
    *,
    tokenizer: CaptionTokenizer = "none",
) -> tuple[dict[str, Any], list[str]]:
    """OCR / KIE metrics (ReForm-Eval's rules) or caption metrics, and notes on quirks.

    ``anls_docvqa`` (ANLS as the DocVQA/ST-VQA evaluation script computes it,
    `lmmprobe.metrics.text.anls`, over the answer list) is given beside ReForm-Eval's figures;
    ReForm-Eval does not compute it. Captions: ``tokenizer="none"`` feeds raw strings, as
    ReForm-Eval's own evaluation does; ``"ptb"`` runs pycocoevalcap's PTB tokenizer first.

    Raises:
        DataError: An entry lacks a field or holds a value ReForm-Eval's metric cannot use.

    """
    if formulation in ("ocr", "kie"):
        return _score_ocr_kie(records, formulation, path)
    from lmmprobe.metrics import text

    preds: dict[str, str] = {}
    refs: dict[str, list[str]] = {}
    for i, r in enumerate(records, start=1):
        _require(path, i, r, "sample_id", "prediction")
        got = r.get("references")
        # As ReForm-Eval's GenerationMetric reads them: a text prediction and a list of texts.
        if not isinstance(got, list) or not got or not all(isinstance(x, str) for x in got):
            raise DataError(
                f"{path}:#{i}: references: expected a non-empty list of reference captions, "
                f"got {got!r}"
            )
        if not isinstance(r["prediction"], str):
            raise DataError(
                f"{path}:#{i}: prediction: expected the caption text, got {r['prediction']!r}"
            )
        key = f"{r['sample_id']}#{i}"
        preds[key] = r["prediction"]
        refs[key] = list(got)
    return {"n": len(preds), **text.caption_scores(preds, refs, tokenizer=tokenizer)}, []


def score_open_ended(
    records: Sequence[dict[str, Any]],
    formulation: FileFormulation,
    path: str | Path = "<predictions>",
    *,
    tokenizer: CaptionTokenizer = "none",
) -> dict[str, Any]:
    """OCR / KIE accuracy, or caption metrics, for one prediction file, with ``notes``.

    See `score_open_ended_file` (which returns the notes apart).
    """
    metrics, notes = score_open_ended_file(records, formulation, path, tokenizer=tokenizer)
    return metrics | {"notes": notes}
