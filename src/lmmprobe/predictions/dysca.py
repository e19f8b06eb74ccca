"""Scoring Dysca files exactly as Dysca's ``evaluate_LVLMs/Dysca_compute.py`` does.

Inputs: Dysca's ground-truth JSON (a list of entries with ``instruction``, ``question_type``,
``question_majority`` and ``answer``, as its ``pqa_postprocess.py`` writes ``Dysca.json``) and a
model-output JSON list aligned with it entry by entry (each with ``answer``).

What is reproduced (``DyscaDataset.calculate_result`` and the ``__main__`` of the reference):

- ``overall``: ``calculate_result(question_majority=None)``: ``vqa_num`` (every entry, whatever
  its question type), ``multi_choice_accuracy``, ``true_or_false_accuracy`` (each
  ``round(correct / total * 100, 2)``, 0.0 without such questions), ``caption_score``
  (``round(sum of per-item round(similarity, 2) / n * 100, 2)``) and ``average``
  (``round((mc + tf + caption) / 3, 2)``: always divided by 3, even when a type is absent).
- ``by_question_majority``: ``calculate_result(question_majority=qm)`` for the 21 majorities
  ``__main__`` lists, with its key names (``{qm}_multi_choice_accuracy``, ...). Entries of any
  other majority (Dysca's own generator writes ``expression``, the list says ``emotion``) count
  only overall.
- ``averages``: ``avg_mc``, ``avg_tf``, ``avg_ic`` as ``__main__`` prints them: the sum over the
  21 majorities divided by the number whose value is not 0, rounded to 2. A majority with
  questions that were all answered wrong is left out like one without questions. Where every
  value is 0 the reference divides by zero; here the average is None and a note says so.
- Choice answers are read with `lmmprobe.parse.dysca.dysca_read` (``normalize_extracted_answer``)
  against the choice lines parsed from each entry's instruction and compared with ``==``.
  Captions use `lmmprobe.metrics.embedding.dysca_similarities` (empty answers embedded too).

The released ``__main__`` cannot run as published: it passes ``args.file_model_result`` (the
parser defines ``file_model_output``) and writes to ``args.evaluation_result`` (defined:
``evaluation_score``), both AttributeErrors; the figures here are what its loop would print.
The reference embeds on ``cuda:0``; parity is established against it run on CPU.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lmmprobe.data.base import DataError
from lmmprobe.data.rows import nesting_reason, too_deep
from lmmprobe.parse.dysca import DyscaReading, dysca_choice_lines, dysca_read
from lmmprobe.predictions._stream import open_text

if TYPE_CHECKING:
    from lmmprobe.metrics.embedding import SentenceEmbedder

__all__ = ["DYSCA_MAJORITIES", "score_dysca_files"]

DYSCA_MAJORITIES: tuple[str, ...] = (
    "movie", "action", "tv show", "profession", "landmark", "anime", "clothes", "celebrity",
    "food", "plant", "age", "gender", "emotion", "race", "animal", "object", "style", "text",
    "background", "color", "face",
)  # fmt: skip
"""The question majorities ``Dysca_compute.py``'s ``__main__`` reports, in its order."""

MULTI_CHOICE = "multi choice"
TRUE_OR_FALSE = "true or false"
IMAGE_CAPTION = "image caption"
_CHOICE_TYPES = (MULTI_CHOICE, TRUE_OR_FALSE)


@dataclass
class _Item:
    """One ground-truth entry as the reference scores it."""

    majority: Any
    question_type: Any
    correct: bool = False
    similarity: float = 0.0
    reading: DyscaReading | None = None
    blank_answer: bool = False


def _read_list(path: Path, role: str) -> list[dict[str, Any]]:
    try:
        with open_text(path) as fh:  # a regular file only, in the encoding its mark names
            data = json.loads(fh.read())
    except RecursionError:
        raise DataError(f"{path}: the Dysca {role} file is {nesting_reason()}") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read the Dysca {role} file as JSON: {exc}") from exc
    if not isinstance(data, list):
        raise DataError(f"{path}: the Dysca {role} file must be a JSON list of entries")
    for i, entry in enumerate(data, start=1):
        if not isinstance(entry, dict):
            raise DataError(f"{path}:#{i}: expected an object, got {type(entry).__name__}")
        deep = too_deep(entry)
        if deep is not None:
            raise DataError(f"{path}:#{i}: {deep}: {nesting_reason()}")
    return data


def _field(path: Path, i: int, entry: dict[str, Any], name: str) -> Any:
    if name not in entry:
        raise DataError(f"{path}:#{i}: {name}: missing required field")
    return entry[name]


def _rate(correct: int, total: int) -> float:
    return 0.0 if total == 0 else round(correct / total * 100, 2)


def _figures(items: Sequence[_Item]) -> tuple[int, float, float, float]:
    """``vqa_num`` and the three scores of ``calculate_result`` over these items."""
    mc = [it.correct for it in items if it.question_type == MULTI_CHOICE]
    tf = [it.correct for it in items if it.question_type == TRUE_OR_FALSE]
    # Summed in file order from 0.0, as the reference accumulates them.
    caption_sum, caption_n = 0.0, 0
    for it in items:
        if it.question_type == IMAGE_CAPTION:
            caption_sum += it.similarity
            caption_n += 1
    caption = 0.0 if caption_n == 0 else round(caption_sum / caption_n * 100, 2)
    return len(items), _rate(sum(mc), len(mc)), _rate(sum(tf), len(tf)), caption


def score_dysca_files(
    output_path: str | Path,
    ground_truth_path: str | Path,
    *,
    embedder: SentenceEmbedder | None = None,
) -> dict[str, Any]:
    """Score a model-output file against Dysca's ground truth, as ``Dysca_compute.py`` does.

    Args:
        output_path: The model's JSON list, entry ``i`` answering ground-truth entry ``i``
            (each with ``answer``).
        ground_truth_path: Dysca's ground-truth JSON (``Dysca.json``).
        embedder: all-MiniLM-L6-v2 embedder for caption questions; defaults to a shared one
            (loaded only when the file has caption questions).

    Returns:
        A JSON-serializable dict: ``format`` ("dysca"), ``overall`` (``question_majority``,
        ``vqa_num``, ``multi_choice_accuracy``, ``true_or_false_accuracy``, ``caption_score``,
        ``average``), ``by_question_majority`` (majority -> ``{qm}_multi_choice_accuracy``,
        ``{qm}_true_or_false_accuracy``, ``{qm}_caption_score``), ``averages`` (``avg_mc``,
        ``avg_tf``, ``avg_ic``; None where the reference divides by zero) and ``notes``
        (plain sentences on the reference's quirks that decided outcomes).

    Raises:
        DataError: A file is unreadable or not a JSON list, the two differ in length (the
            reference asserts they do not), or an entry lacks a field the reference reads or
            holds one it cannot use (named as ``FILE:#N: FIELD``, N counting from 1).

    """
    out_path, gt_path = Path(output_path), Path(ground_truth_path)
    truth = _read_list(gt_path, "ground-truth")
    outputs = _read_list(out_path, "model-output")
    if len(truth) != len(outputs):
        raise DataError(
            f"{out_path} has {len(outputs)} entries but {gt_path} has {len(truth)}; Dysca "
            "scores output entry i against ground-truth entry i, so they must be aligned"
        )
    items: list[_Item] = []
    captions: list[tuple[int, str, str]] = []
    non_string = 0
    for i, (gt, out) in enumerate(zip(truth, outputs, strict=True), start=1):
        # The reference reads these four fields (and the output's answer) for every entry.
        majority = _field(gt_path, i, gt, "question_majority")
        qtype = _field(gt_path, i, gt, "question_type")
        instruction = _field(gt_path, i, gt, "instruction")
        expected = _field(gt_path, i, gt, "answer")
        answer = _field(out_path, i, out, "answer")
        item = _Item(majority, qtype)
        if qtype in _CHOICE_TYPES:
            if not isinstance(instruction, str):
                raise DataError(f"{gt_path}:#{i}: instruction: expected a string")
            non_string += not isinstance(answer, str)
            item.reading = dysca_read(answer, dysca_choice_lines(instruction))
            item.correct = item.reading.text == expected
        elif qtype == IMAGE_CAPTION:
            for path, name, value in ((out_path, "answer", answer), (gt_path, "answer", expected)):
                if not isinstance(value, str):
                    raise DataError(
                        f"{path}:#{i}: {name}: a caption answer must be a string (Dysca embeds "
                        f"it as text), got {type(value).__name__}"
                    )
            item.blank_answer = not answer.strip()
            captions.append((len(items), answer, expected))
        items.append(item)
    if captions:
        from lmmprobe.metrics.embedding import dysca_similarities

        sims = dysca_similarities([c[1] for c in captions], [c[2] for c in captions], embedder)
        for (k, _, _), sim in zip(captions, sims, strict=True):
            items[k].similarity = sim

    n, mc, tf, ic = _figures(items)
    overall: dict[str, Any] = {
        "question_majority": None,
        "vqa_num": n,
        "multi_choice_accuracy": mc,
        "true_or_false_accuracy": tf,
        "caption_score": ic,
        "average": round((mc + tf + ic) / 3, 2),
    }
    by_majority: dict[str, dict[str, float]] = {}
    sums, zeros = [0.0, 0.0, 0.0], [0, 0, 0]
    for qm in DYSCA_MAJORITIES:
        _, qmc, qtf, qic = _figures([it for it in items if it.majority == qm])
        by_majority[qm] = {
            f"{qm}_multi_choice_accuracy": qmc,
            f"{qm}_true_or_false_accuracy": qtf,
            f"{qm}_caption_score": qic,
        }
        for k, value in enumerate((qmc, qtf, qic)):
            sums[k] += value
            zeros[k] += value == 0
    averages: dict[str, float | None] = {}
    for k, name in enumerate(("avg_mc", "avg_tf", "avg_ic")):
        kept = len(DYSCA_MAJORITIES) - zeros[k]
        averages[name] = round(sums[k] / kept, 2) if kept else None
    notes = _notes(items, truth, by_majority, averages, non_string)
    return {
        "format": "dysca",
        "overall": overall,
        "by_question_majority": by_majority,
        "averages": averages,
        "notes": notes,
    }


def _count(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def _notes(
    items: Sequence[_Item],
    truth: Sequence[dict[str, Any]],
    by_majority: dict[str, dict[str, float]],
    averages: dict[str, float | None],
    non_string: int,
) -> list[str]:
    """Plain sentences on where a quirk of Dysca's code decided an outcome."""
    notes: list[str] = []
    choice = [it for it in items if it.reading is not None]
    total = len(choice)

    def tally(selected: list[_Item]) -> tuple[str, str]:
        right = sum(it.correct for it in selected)
        return f"{len(selected)} of {total}", f"{right} of them counted correct"

    empty = [it for it in choice if it.reading and it.reading.empty_output]
    if empty:
        share, right = tally(empty)
        notes.append(
            f"{share} multiple-choice/true-or-false answers were empty or whitespace only; "
            f"Dysca still picks the choice line nearest by edit distance (the shortest), "
            f"and {right}."
        )
    outside = [it for it in choice if it.reading and it.reading.letter_outside_options]
    if outside:
        share, right = tally(outside)
        letters = Counter(it.reading.extraction for it in outside if it.reading)
        shown = ", ".join(f"{k} ({v})" for k, v in sorted(letters.items()))
        notes.append(
            f"{share} choice answers named a letter outside the options ({shown}); Dysca "
            f"matches that single letter against the '(X) text' choice lines by edit distance "
            f"(ties to the last line), and {right}."
        )
    fuzzy = [
        it
        for it in choice
        if it.reading
        and it.reading.step == "levenshtein"
        and not it.reading.empty_output
        and not it.reading.letter_outside_options
    ]
    if fuzzy:
        share, right = tally(fuzzy)
        notes.append(
            f"{share} choice answers held no (x) mark and no capital letter and were read by "
            f"Dysca's Levenshtein fallback against the '(X) text' choice lines, and {right}."
        )
    capital = [it for it in choice if it.reading and it.reading.step == "capital"]
    if capital:
        share, right = tally(capital)
        notes.append(
            f"{share} choice answers had no (x) mark and were read by their last capital "
            f"letter (any capital counts, e.g. the 'I' of 'I think'), and {right}."
        )
    if non_string:
        notes.append(
            f"{_count(non_string, 'choice answer')} in the output file "
            f"{'is' if non_string == 1 else 'are'} not a string; Dysca reads str(answer)."
        )
    no_choices = sum(
        1
        for gt, it in zip(truth, items, strict=True)
        if it.question_type == MULTI_CHOICE and "Choices:\n" not in gt["instruction"]
    )
    if no_choices:
        notes.append(
            f"{no_choices} multiple-choice instructions have no 'Choices:\\n' line (as Dysca's "
            "pqa_postprocess.py writes them); Dysca then reads the question line as choice (A), "
            "so each letter names the option listed before it."
        )
    blank = sum(1 for it in items if it.question_type == IMAGE_CAPTION and it.blank_answer)
    if blank:
        notes.append(
            f"{_count(blank, 'caption answer')} {'is' if blank == 1 else 'are'} empty or "
            "whitespace only; Dysca embeds them like any text and scores their similarity "
            "(lmmprobe's own free-form score gives them 0)."
        )
    other_types = Counter(
        str(it.question_type)
        for it in items
        if it.question_type not in (MULTI_CHOICE, TRUE_OR_FALSE, IMAGE_CAPTION)
    )
    if other_types:
        shown = ", ".join(f"{k!r} ({v})" for k, v in sorted(other_types.items()))
        notes.append(
            f"{_count(sum(other_types.values()), 'entry', 'entries')} "
            f"{'has' if sum(other_types.values()) == 1 else 'have'} a question_type Dysca does not score "
            f"({shown}); they count in vqa_num and in no score."
        )
    other_majorities = Counter(
        str(it.majority) for it in items if it.majority not in DYSCA_MAJORITIES
    )
    if other_majorities:
        shown = ", ".join(f"{k!r} ({v})" for k, v in sorted(other_majorities.items()))
        notes.append(
            f"{sum(other_majorities.values())} entries have a question_majority outside the 21 "
            f"that Dysca's __main__ reports ({shown}); they count only in the overall figures."
        )
    absent = [
        name
        for name, qtype in (
            ("multiple-choice", MULTI_CHOICE),
            ("true-or-false", TRUE_OR_FALSE),
            ("caption", IMAGE_CAPTION),
        )
        if not any(it.question_type == qtype for it in items)
    ]
    if absent and items:
        notes.append(
            f"There are no {' or '.join(absent)} questions; Dysca's overall average still "
            "divides by 3, counting each missing score as 0.0."
        )
    for key, qtype, label in (
        ("avg_mc", MULTI_CHOICE, "multi_choice_accuracy"),
        ("avg_tf", TRUE_OR_FALSE, "true_or_false_accuracy"),
        ("avg_ic", IMAGE_CAPTION, "caption_score"),
    ):
        if averages[key] is None:
            notes.append(
                f"{key} is None: every majority's {label} is 0, where Dysca's __main__ divides "
                "by zero (ZeroDivisionError)."
            )
            continue
        zero_with_questions = [
            qm
            for qm in DYSCA_MAJORITIES
            if by_majority[qm][f"{qm}_{label}"] == 0
            and any(it.majority == qm and it.question_type == qtype for it in items)
        ]
        if zero_with_questions:
            notes.append(
                f"{key} leaves out {', '.join(zero_with_questions)}: their {label} is 0 though "
                "they have such questions, and Dysca's __main__ averages only non-zero values."
            )
    return notes
