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

A file is read an entry at a time (`lmmprobe.predictions._stream.iter_entries`, the engine the
other tools' readers share): what is held is a small tally per sample (its entry count, hits and
the count of each predicted category, a long category by its digest), never the entries;
caption files alone keep their texts, as CIDEr's document frequencies are over the whole file.
An entry ReForm-Eval's evaluation could not use (a missing field, a value of the wrong type) is
left out with one line naming the file, the entry and the field (``problems``), and the other
entries are scored; the figures are then over the entries read, and a note says how many were
left out. A file none of whose entries can be read is an error naming the first.

Where one of ReForm-Eval's quirks decided outcomes, the result's ``notes`` say so, with counts.
Where ReForm-Eval's own evaluation would stop with an error (a ragged per-sample matrix, a KIE
list answer), the figure lmmprobe gives and the reason are stated in a note too.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lmmprobe.data.base import DataError
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
from lmmprobe.predictions._stream import EntryProblems, iter_entries

FileFormulation = Literal["single_choice", "generation", "ocr", "kie"]
InferMethod = Literal["generation", "likelihood"]


Entry = tuple[str, Any]
"""One entry of a file: where it is (``FILE:#N`` or ``FILE:LINE``) and its decoded value."""


def read_records(path: str | Path) -> Iterator[Entry]:
    """The entries of a ReForm-Eval file, an entry at a time (`iter_entries`).

    A JSON list, JSON Lines, or a ``{"data": [...]}`` object (one object alone is one entry).

    Raises:
        DataError: The file is not JSON or JSON lines, or an entry is malformed, past the
            element bounds or cut off (named by its position or line).

    """
    return iter_entries(Path(path))


def numbered(records: Iterable[Any], path: str | Path = "<predictions>") -> Iterator[Entry]:
    """Records held in memory as entries named ``PATH:#N`` (N from 1)."""
    for i, r in enumerate(records, start=1):
        yield f"{path}:#{i}", r


def _record(where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _require(where: str, r: dict[str, Any], *fields: str) -> None:
    for f in fields:
        if f not in r:
            raise DataError(f"{where}: {f}: missing required field")


def _sample_key(where: str, r: dict[str, Any]) -> Hashable:
    # The raw value, as ReForm-Eval keys its dictionaries: 1 and "1" are different samples.
    key = r["sample_id"]
    if not isinstance(key, Hashable):
        raise DataError(f"{where}: sample_id: expected a string or number, got {key!r}"[:300])
    return key


def _answer_index(where: str, value: Any) -> int:
    # ReForm-Eval compares with int(answer): an index or its text ("2") both work.
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise DataError(f"{where}: answer: expected an option index, got {value!r}"[:300]) from None


def _category(where: str, label: Any) -> Hashable:
    """An entry's predicted category as a small key that is equal exactly where labels are.

    A text by its digest (a raw prediction may be long; texts never equal numbers, so digests
    and numbers keep Python's equality: 1, 1.0 and True one category, as ReForm-Eval's
    ``Counter``); a number, boolean or None as itself.
    """
    if isinstance(label, str):
        return hashlib.blake2b(label.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    if not isinstance(label, Hashable):
        raise DataError(
            f"{where}: answer_options: the option predicted must be a text or a number "
            f"(ReForm-Eval counts it as a category), got {type(label).__name__}"
        )
    return label


@dataclass
class _Sample:
    """What is kept of one sample: its entries' count and hits, its categories' counts."""

    n: int = 0
    hits: int = 0
    categories: Counter[Hashable] = field(default_factory=Counter)


def _skipped_note(problems: EntryProblems, n: int) -> list[str]:
    if not problems.count:
        return []
    return [
        f"{problems.count} {'entry' if problems.count == 1 else 'entries'} left out for bad "
        "input (each named under problems): "
        f"ReForm-Eval's evaluation stops at the first; the figures are over the other {n}."
    ]


def _none_read(problems: EntryProblems) -> DataError:
    return DataError(
        f"{problems.lines[0]} (no entry of the file could be read: {problems.count} left out)"
    )


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
    return _instability(Counter(preds) for preds in categories.values())


def _instability(counts: Iterable[Counter[Hashable]]) -> float:
    """`reform_instability` from each sample's category counts (in order of first appearance)."""
    per_sample = []
    for counter in counts:
        n = sum(counter.values())
        dist = [count / n for count in counter.values()]
        per_sample.append(sum([-1 * p * math.log(p) for p in dist]))
    return sum(per_sample) / len(per_sample)


def _accuracy(lengths: Iterable[int], hits: int, n: int, notes: list[str]) -> float | None:
    if n == 0:
        return None
    distinct = sorted(set(lengths))
    if len(distinct) > 1:
        notes.append(
            f"Samples have different numbers of entries ({distinct[0]} to {distinct[-1]}): "
            "ReForm-Eval's metric_eval stops there (np.mean over a ragged per-sample matrix "
            f"raises); the accuracy given is the mean over all {n} entries, which is what that "
            "mean gives when every sample has as many entries."
        )
    # np.mean of a 0/1 matrix: an exact sum divided once, as here.
    return hits / n


def _share(k: int, n: int) -> str:
    return f"{k} of {n}"


def score_single_choice_file(
    records: Iterable[dict[str, Any]] | None = None,
    infer_method: InferMethod = "generation",
    path: str | Path = "<predictions>",
    *,
    entries: Iterable[Entry] | None = None,
) -> tuple[dict[str, Any], list[str], EntryProblems]:
    """ReForm-Eval single-choice metrics for one prediction file, notes on quirks, entries left out.

    Args:
        records: The file's entries, held in memory (named ``PATH:#N``).
        infer_method: ``generation`` (predictions are texts) or ``likelihood`` (indices).
        path: Named in errors.
        entries: The file's entries as read (`read_records`), in place of `records`.

    Returns:
        ``({"n", "samples", "accuracy", "format_hit_rate", "instability"}, notes, problems)``:
        an entry lacking a field or holding a value ReForm-Eval's evaluation cannot use is left
        out and named in `problems`; the figures are over the others.

    Raises:
        DataError: No entry could be read (naming the first left out).

    """
    stream = entries if entries is not None else numbered(records or (), path)
    samples: dict[Hashable, _Sample] = {}
    problems = EntryProblems()
    n = correct = hits = out_of_range = negative = text_only = 0
    for where, value in stream:
        try:
            r = _record(where, value)
            _require(where, r, "sample_id", "answer", "answer_options", "prediction")
            key = _sample_key(where, r)
            answer = _answer_index(where, r["answer"])
            pred = r["prediction"]
            options = r["answer_options"]
            read_text = False
            if infer_method == "likelihood":
                if type(pred) is not int:  # ReForm-Eval fails on anything else, bool included
                    raise DataError(
                        f"{where}: prediction: expected an option index, got {pred!r}"[:300]
                    )
                index: int | None = pred
            else:
                if not isinstance(pred, str):
                    raise DataError(
                        f"{where}: prediction: generation-based evaluation needs the generated "
                        f"text, got {pred!r} (option indices: --infer-method likelihood)"[:300]
                    )
                index = reform_choice(pred)  # no options, as metric_eval calls the metric
                read_text = index is None and isinstance(options, list) and pred in options
            label: Any = pred
            past = False
            if index is not None:
                try:  # Python indexing, as theirs: a negative index counts from the end
                    label = options[index]
                except (IndexError, KeyError, TypeError):
                    past = True
            category = _category(where, label)
        except DataError as exc:
            problems.add(exc)
            continue
        sample = samples.setdefault(key, _Sample())
        sample.n += 1
        sample.hits += int(index is not None and index == answer)
        sample.categories[category] += 1
        n += 1
        correct += int(index is not None and index == answer)
        hits += index is not None
        out_of_range += past
        text_only += read_text
        negative += infer_method == "likelihood" and pred < 0
    if problems.count and not n:
        raise _none_read(problems)
    notes: list[str] = _skipped_note(problems, n)
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
    metrics = {
        "n": n,
        "samples": len(samples),
        "accuracy": _accuracy((s.n for s in samples.values()), correct, n, notes),
        "format_hit_rate": hits / n if n else None,
        "instability": _instability(s.categories for s in samples.values()) if samples else None,
    }
    return metrics, notes, problems


def score_single_choice(
    records: Iterable[dict[str, Any]],
    infer_method: InferMethod = "generation",
    path: str | Path = "<predictions>",
) -> dict[str, Any]:
    """ReForm-Eval single-choice metrics for entries held in memory, with ``notes`` on quirks.

    The notes (a list of sentences, under ``"notes"``) say where a quirk of ReForm-Eval's code
    decided outcomes; `score_single_choice_file` returns them apart. Entries left out for bad
    input are named under ``"problems"`` (absent when none is).
    """
    metrics, notes, problems = score_single_choice_file(records, infer_method, path)
    return metrics | {"notes": notes} | _problems(problems)


def _problems(problems: EntryProblems) -> dict[str, Any]:
    return {"problems": problems.lines, "skipped": problems.count} if problems.count else {}


def _texts(where: str, field: str, value: Any, lists: bool) -> str | list[str]:
    if isinstance(value, str):
        return value
    if lists and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    wanted = "text or a list of texts" if lists else "text"
    raise DataError(f"{where}: {field}: ReForm-Eval's metric needs {wanted}, got {value!r}"[:300])


def _score_ocr_kie(
    entries: Iterable[Entry], formulation: str
) -> tuple[dict[str, Any], list[str], EntryProblems]:
    from lmmprobe.metrics import text

    per_sample: dict[Hashable, list[int]] = {}  # [entries, correct]
    problems = EntryProblems()
    n = correct_total = 0
    anls_total = 0.0
    lists = lists_decided = empty = spacing = boundary = periods = 0
    ocr = formulation == "ocr"
    for where, value in entries:
        try:
            r = _record(where, value)
            _require(where, r, "sample_id", "prediction", "answer")
            key = _sample_key(where, r)
            # OCR joins list predictions and answers; KIE takes a list of answers, not predictions.
            pred = _texts(where, "prediction", r["prediction"], lists=ocr)
            truth = _texts(where, "answer", r["answer"], lists=True)
        except DataError as exc:
            problems.add(exc)
            continue
        if ocr:
            correct = reform_ocr_correct(pred, truth)
        else:
            assert isinstance(pred, str)
            correct = reform_kie_correct(pred, truth)
        tally = per_sample.setdefault(key, [0, 0])
        tally[0] += 1
        tally[1] += int(correct)
        n += 1
        correct_total += int(correct)
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
    if problems.count and not n:
        raise _none_read(problems)
    notes: list[str] = _skipped_note(problems, n)
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
        "accuracy": _accuracy((t[0] for t in per_sample.values()), correct_total, n, notes),
        # metric_eval counts every OCR / KIE entry as a format hit: their metric always
        # returns the (normalized) prediction.
        "format_hit_rate": 1.0 if n else None,
        # Not ReForm-Eval's: lmmprobe adds DocVQA's ANLS, named by its origin in the output.
        "anls_docvqa": anls_total / n if n else None,
    }
    return metrics, notes, problems


def score_open_ended_file(
    records: Iterable[dict[str, Any]] | None,
    formulation: FileFormulation,
    path: str | Path = "<predictions>",
    *,
    tokenizer: CaptionTokenizer = "none",
    entries: Iterable[Entry] | None = None,
) -> tuple[dict[str, Any], list[str], EntryProblems]:
    """OCR / KIE metrics (ReForm-Eval's rules) or caption metrics, notes, entries left out.

    ``anls_docvqa`` (ANLS as the DocVQA/ST-VQA evaluation script computes it,
    `lmmprobe.metrics.text.anls`, over the answer list) is given beside ReForm-Eval's figures;
    ReForm-Eval does not compute it. Captions: ``tokenizer="none"`` feeds raw strings, as
    ReForm-Eval's own evaluation does; ``"ptb"`` runs pycocoevalcap's PTB tokenizer first.
    `entries` (as `read_records` gives them) take the place of `records` held in memory. An
    entry lacking a field or holding a value ReForm-Eval's metric cannot use is left out and
    named in the problems returned.

    Raises:
        DataError: No entry could be read (naming the first left out).

    """
    stream = entries if entries is not None else numbered(records or (), path)
    if formulation in ("ocr", "kie"):
        return _score_ocr_kie(stream, formulation)
    from lmmprobe.metrics import text

    # CIDEr's document frequencies are over every caption of the file: the texts are kept.
    preds: dict[str, str] = {}
    refs: dict[str, list[str]] = {}
    problems = EntryProblems()
    for i, (where, value) in enumerate(stream, start=1):
        try:
            r = _record(where, value)
            _require(where, r, "sample_id", "prediction")
            got = r.get("references")
            # As ReForm-Eval's GenerationMetric reads them: a text prediction and a list of texts.
            if not isinstance(got, list) or not got or not all(isinstance(x, str) for x in got):
                raise DataError(
                    f"{where}: references: expected a non-empty list of reference captions, "
                    f"got {got!r}"[:300]
                )
            if not isinstance(r["prediction"], str):
                raise DataError(
                    f"{where}: prediction: expected the caption text, got {r['prediction']!r}"[:300]
                )
        except DataError as exc:
            problems.add(exc)
            continue
        key = f"{r['sample_id']}#{i}"
        preds[key] = r["prediction"]
        refs[key] = list(got)
    if problems.count and not preds:
        raise _none_read(problems)
    scores = text.caption_scores(preds, refs, tokenizer=tokenizer)
    return {"n": len(preds), **scores}, _skipped_note(problems, len(preds)), problems


def score_open_ended(
    records: Iterable[dict[str, Any]],
    formulation: FileFormulation,
    path: str | Path = "<predictions>",
    *,
    tokenizer: CaptionTokenizer = "none",
) -> dict[str, Any]:
    """OCR / KIE accuracy, or caption metrics, for entries held in memory, with ``notes``.

    See `score_open_ended_file` (which returns the notes apart); entries left out are named
    under ``"problems"`` (absent when none is).
    """
    metrics, notes, problems = score_open_ended_file(
        records, formulation, path, tokenizer=tokenizer
    )
    return metrics | {"notes": notes} | _problems(problems)
