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

Both files are read an entry at a time, in step (`lmmprobe.predictions._stream`, the engine the
other tools' readers share: Dysca's released list holds 617,000 questions). What is held is a
tally per majority and question type, and the captions of one batch awaiting their embeddings;
never the entries. An entry pair Dysca's code could not use (a field missing, a caption that is
not text, an entry that is not an object) is left out with one line naming the file, the entry
and the field (``problems``), and the others are scored; the figures are then over the entries
read (``vqa_num`` counts them), and a note says how many were left out.

The released ``__main__`` cannot run as published: it passes ``args.file_model_result`` (the
parser defines ``file_model_output``) and writes to ``args.evaluation_result`` (defined:
``evaluation_score``), both AttributeErrors; the figures here are what its loop would print.
The reference embeds on ``cuda:0``; parity is established against it run on CPU.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lmmprobe.data.base import DataError
from lmmprobe.parse.dysca import (
    DyscaReading,
    dysca_bound_problem,
    dysca_choice_lines,
    dysca_read,
)
from lmmprobe.predictions._stream import EntryProblems, first_json_char, iter_json

if TYPE_CHECKING:
    from lmmprobe.metrics.embedding import SentenceEmbedder

__all__ = ["CAPTION_BATCH", "DYSCA_MAJORITIES", "dysca_entries", "score_dysca_files"]

DYSCA_MAJORITIES: tuple[str, ...] = (
    "movie", "action", "tv show", "profession", "landmark", "anime", "clothes", "celebrity",
    "food", "plant", "age", "gender", "emotion", "race", "animal", "object", "style", "text",
    "background", "color", "face",
)  # fmt: skip
"""The question majorities ``Dysca_compute.py``'s ``__main__`` reports, in its order."""

MULTI_CHOICE = "multi choice"
TRUE_OR_FALSE = "true or false"
IMAGE_CAPTION = "image caption"
_TYPES = (MULTI_CHOICE, TRUE_OR_FALSE, IMAGE_CAPTION)
_CHOICE_TYPES = (MULTI_CHOICE, TRUE_OR_FALSE)

CAPTION_BATCH = 1024
"""Captions embedded at a time. Each text is embedded on its own (`dysca_similarities`), so
the batch does not change a similarity; the sums take them in file order, as the reference."""

_MAX_OTHERS = 50
"""Distinct unknown question types / majorities named in a note; more are counted together."""

_MISSING = object()


@dataclass
class _Tally:
    """One majority's (or every entry's) figures as the reference computes them."""

    choice: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    """Multi-choice questions and right answers, then true-or-false ones."""
    caption_sum: float = 0.0
    """Similarities summed in file order from 0.0, as the reference accumulates them."""
    captions: int = 0

    def figures(self) -> tuple[float, float, float]:
        """The three scores of ``calculate_result`` over these entries."""
        mc_n, mc_right, tf_n, tf_right = self.choice
        caption = 0.0 if self.captions == 0 else round(self.caption_sum / self.captions * 100, 2)
        return _rate(mc_right, mc_n), _rate(tf_right, tf_n), caption


@dataclass
class _Quirk:
    """Choice answers read by one of Dysca's quirks, and how many of them counted right."""

    n: int = 0
    right: int = 0


@dataclass
class _Tallies:
    """What the scorer keeps of a whole file."""

    n: int = 0
    overall: _Tally = field(default_factory=_Tally)
    by_majority: list[_Tally] = field(default_factory=lambda: [_Tally() for _ in DYSCA_MAJORITIES])
    typed: Counter[str] = field(default_factory=Counter)
    """Entries of each of the three question types (for the "absent" note)."""
    choice: int = 0
    empty: _Quirk = field(default_factory=_Quirk)
    outside: _Quirk = field(default_factory=_Quirk)
    outside_letters: Counter[str] = field(default_factory=Counter)
    fuzzy: _Quirk = field(default_factory=_Quirk)
    capital: _Quirk = field(default_factory=_Quirk)
    non_string: int = 0
    no_choices: int = 0
    blank: int = 0
    other_types: Counter[str] = field(default_factory=Counter)
    other_majorities: Counter[str] = field(default_factory=Counter)
    pending: list[tuple[int | None, str, str]] = field(default_factory=list)
    """Captions awaiting their embeddings: (majority index, answer, reference)."""

    def majority(self, value: Any) -> int | None:
        """The index of `value` among `DYSCA_MAJORITIES` (compared with ``==``), or None."""
        for k, qm in enumerate(DYSCA_MAJORITIES):
            if value == qm:
                return k
        _bounded_count(self.other_majorities, str(value))
        return None


def _bounded_count(counter: Counter[str], key: str) -> None:
    if key in counter or len(counter) < _MAX_OTHERS:
        counter[key[:200]] += 1
    else:
        counter["(other values)"] += 1


def _rate(correct: int, total: int) -> float:
    return 0.0 if total == 0 else round(correct / total * 100, 2)


def dysca_entries(path: Path, role: str) -> Iterator[tuple[str, Any]]:
    """The entries of a Dysca JSON list, an entry at a time, each named ``FILE:#N``.

    `role` names the file in errors (``ground-truth``, ``model-output``).

    Raises:
        DataError: The file is not a JSON list, or an entry is malformed (`iter_json`).

    """
    first = first_json_char(path)
    # "": empty or not text; `iter_json` names which (the line and byte that do not decode).
    if first not in ("[", ""):
        got = {"{": "a JSON object", "": "nothing"}.get(first, f"text starting {first!r}")
        raise DataError(
            f"{path}: the Dysca {role} file must be a JSON list of entries; cannot read it as "
            f"JSON: got {got}"
        )
    for n, _, value in iter_json(path):
        yield f"{path}:#{n}", value


def _field(where: str, entry: Any, name: str) -> Any:
    if not isinstance(entry, dict):
        raise DataError(f"{where}: expected an object, got {type(entry).__name__}")
    if name not in entry:
        raise DataError(f"{where}: {name}: missing required field")
    return entry[name]


def _add(tallies: _Tallies, gt_at: str, gt: Any, out_at: str, out: Any) -> None:
    """Score one entry pair into `tallies`.

    Raises:
        DataError: A field the reference reads is missing or unusable (nothing is counted).

    """
    # The reference reads these four fields (and the output's answer) for every entry.
    majority = _field(gt_at, gt, "question_majority")
    qtype = _field(gt_at, gt, "question_type")
    instruction = _field(gt_at, gt, "instruction")
    expected = _field(gt_at, gt, "answer")
    answer = _field(out_at, out, "answer")
    reading: DyscaReading | None = None
    if qtype in _CHOICE_TYPES:
        if not isinstance(instruction, str):
            raise DataError(f"{gt_at}: instruction: expected a string")
        lines = dysca_choice_lines(instruction)
        # Bounded before Dysca's edit distances run against every line (exact within bounds).
        problem = dysca_bound_problem(answer, lines)
        if problem:
            raise DataError(f"{gt_at if problem.startswith('instruction') else out_at}: {problem}")
        reading = dysca_read(answer, lines)
    elif qtype == IMAGE_CAPTION:
        for where, value in ((out_at, answer), (gt_at, expected)):
            if not isinstance(value, str):
                raise DataError(
                    f"{where}: answer: a caption answer must be a string (Dysca embeds it as "
                    f"text), got {type(value).__name__}"
                )
    # Counted only once the entry is known to be usable.
    tallies.n += 1
    k = tallies.majority(majority)
    if qtype in _TYPES:
        tallies.typed[qtype] += 1
    else:
        _bounded_count(tallies.other_types, str(qtype))
    if reading is not None:
        correct = reading.text == expected
        slot = 0 if qtype == MULTI_CHOICE else 2
        for tally in (tallies.overall, *([] if k is None else [tallies.by_majority[k]])):
            tally.choice[slot] += 1
            tally.choice[slot + 1] += correct
        tallies.choice += 1
        tallies.non_string += not isinstance(answer, str)
        tallies.no_choices += qtype == MULTI_CHOICE and "Choices:\n" not in instruction
        # As the notes count them: each quirk on its own (Levenshtein less the two above).
        quirks = [
            tallies.empty if reading.empty_output else None,
            tallies.outside if reading.letter_outside_options else None,
            tallies.capital if reading.step == "capital" else None,
        ]
        if reading.letter_outside_options:
            tallies.outside_letters[reading.extraction[:20]] += 1
        if reading.step == "levenshtein" and not (
            reading.empty_output or reading.letter_outside_options
        ):
            quirks.append(tallies.fuzzy)
        for q in quirks:
            if q is not None:
                q.n += 1
                q.right += correct
    elif qtype == IMAGE_CAPTION:
        tallies.blank += not answer.strip()
        tallies.pending.append((k, answer, expected))


def _embed(tallies: _Tallies, embedder: SentenceEmbedder | None) -> None:
    """Embed the captions awaiting it and add their similarities, in file order."""
    if not tallies.pending:
        return
    from lmmprobe.metrics.embedding import dysca_similarities

    batch, tallies.pending = tallies.pending, []
    sims = dysca_similarities([c[1] for c in batch], [c[2] for c in batch], embedder)
    for (k, _, _), sim in zip(batch, sims, strict=True):
        for tally in (tallies.overall, *([] if k is None else [tallies.by_majority[k]])):
            tally.caption_sum += sim
            tally.captions += 1


def score_dysca_files(
    output_path: str | Path,
    ground_truth_path: str | Path,
    *,
    embedder: SentenceEmbedder | None = None,
) -> dict[str, Any]:
    """Score a model-output file against Dysca's ground truth, as ``Dysca_compute.py`` does.

    Both files are read an entry at a time, in step.

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
        ``avg_tf``, ``avg_ic``; None where the reference divides by zero), ``notes`` (plain
        sentences on the reference's quirks that decided outcomes), ``skipped`` and
        ``problems`` (entry pairs left out for bad input, each named ``FILE:#N: FIELD: why``,
        the first 20).

    Raises:
        DataError: A file is unreadable, not a JSON list or malformed (named by its entry), the
            two differ in length (the reference asserts they do not), or no entry pair could
            be read (naming the first left out).

    """
    out_path, gt_path = Path(output_path), Path(ground_truth_path)
    tallies = _Tallies()
    problems = EntryProblems()
    pairs = zip_longest(dysca_entries(gt_path, "ground-truth"), dysca_entries(out_path, "model-output"),
                        fillvalue=_MISSING)  # fmt: skip
    counted = 0
    for truth, output in pairs:
        if truth is _MISSING or output is _MISSING:
            # One ran out: count the rest of the other, to name both lengths.
            longer = 1 + sum(1 for _ in pairs)
            n_gt = counted + (0 if truth is _MISSING else longer)
            n_out = counted + (0 if output is _MISSING else longer)
            raise DataError(
                f"{out_path} has {n_out} entries but {gt_path} has {n_gt}; Dysca scores output "
                "entry i against ground-truth entry i, so they must be aligned"
            )
        counted += 1
        try:
            _add(tallies, *truth, *output)  # type: ignore[misc]
        except DataError as exc:
            problems.add(exc)
            continue
        if len(tallies.pending) >= CAPTION_BATCH:
            _embed(tallies, embedder)
    if problems.count and not tallies.n:
        raise DataError(
            f"{problems.lines[0]} (no entry of the files could be read: {problems.count} left out)"
        )
    _embed(tallies, embedder)

    mc, tf, ic = tallies.overall.figures()
    overall: dict[str, Any] = {
        "question_majority": None,
        "vqa_num": tallies.n,
        "multi_choice_accuracy": mc,
        "true_or_false_accuracy": tf,
        "caption_score": ic,
        "average": round((mc + tf + ic) / 3, 2),
    }
    by_majority: dict[str, dict[str, float]] = {}
    sums, zeros = [0.0, 0.0, 0.0], [0, 0, 0]
    for qm, tally in zip(DYSCA_MAJORITIES, tallies.by_majority, strict=True):
        qmc, qtf, qic = tally.figures()
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
    notes = _notes(tallies, by_majority, averages, problems)
    return {
        "format": "dysca",
        "overall": overall,
        "by_question_majority": by_majority,
        "averages": averages,
        "notes": notes,
        "skipped": problems.count,
        "problems": problems.lines,
    }


def _count(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def _notes(
    tallies: _Tallies,
    by_majority: dict[str, dict[str, float]],
    averages: dict[str, float | None],
    problems: EntryProblems,
) -> list[str]:
    """Plain sentences on where a quirk of Dysca's code decided an outcome."""
    notes: list[str] = []
    if problems.count:
        notes.append(
            f"{_count(problems.count, 'entry', 'entries')} left out for bad input (each named "
            f"under problems): Dysca's code stops at the first; the figures are over the "
            f"other {tallies.n}."
        )
    total = tallies.choice

    def tally(quirk: _Quirk) -> tuple[str, str]:
        return f"{quirk.n} of {total}", f"{quirk.right} of them counted correct"

    if tallies.empty.n:
        share, right = tally(tallies.empty)
        notes.append(
            f"{share} multiple-choice/true-or-false answers were empty or whitespace only; "
            f"Dysca still picks the choice line nearest by edit distance (the shortest), "
            f"and {right}."
        )
    if tallies.outside.n:
        share, right = tally(tallies.outside)
        shown = ", ".join(f"{k} ({v})" for k, v in sorted(tallies.outside_letters.items()))
        notes.append(
            f"{share} choice answers named a letter outside the options ({shown}); Dysca "
            f"matches that single letter against the '(X) text' choice lines by edit distance "
            f"(ties to the last line), and {right}."
        )
    if tallies.fuzzy.n:
        share, right = tally(tallies.fuzzy)
        notes.append(
            f"{share} choice answers held no (x) mark and no capital letter and were read by "
            f"Dysca's Levenshtein fallback against the '(X) text' choice lines, and {right}."
        )
    if tallies.capital.n:
        share, right = tally(tallies.capital)
        notes.append(
            f"{share} choice answers had no (x) mark and were read by their last capital "
            f"letter (any capital counts, e.g. the 'I' of 'I think'), and {right}."
        )
    non_string = tallies.non_string
    if non_string:
        notes.append(
            f"{_count(non_string, 'choice answer')} in the output file "
            f"{'is' if non_string == 1 else 'are'} not a string; Dysca reads str(answer)."
        )
    if tallies.no_choices:
        notes.append(
            f"{tallies.no_choices} multiple-choice instructions have no 'Choices:\\n' line (as "
            "Dysca's pqa_postprocess.py writes them); Dysca then reads the question line as "
            "choice (A), so each letter names the option listed before it."
        )
    blank = tallies.blank
    if blank:
        notes.append(
            f"{_count(blank, 'caption answer')} {'is' if blank == 1 else 'are'} empty or "
            "whitespace only; Dysca embeds them like any text and scores their similarity "
            "(lmmprobe's own free-form score gives them 0)."
        )
    other_types = tallies.other_types
    if other_types:
        shown = ", ".join(f"{k!r} ({v})" for k, v in sorted(other_types.items()))
        many = sum(other_types.values())
        notes.append(
            f"{_count(many, 'entry', 'entries')} {'has' if many == 1 else 'have'} a "
            f"question_type Dysca does not score ({shown}); they count in vqa_num and in no "
            "score."
        )
    other_majorities = tallies.other_majorities
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
        if not tallies.typed[qtype]
    ]
    if absent and tallies.n:
        notes.append(
            f"There are no {' or '.join(absent)} questions; Dysca's overall average still "
            "divides by 3, counting each missing score as 0.0."
        )
    for key, slot, label in (
        ("avg_mc", 0, "multi_choice_accuracy"),
        ("avg_tf", 1, "true_or_false_accuracy"),
        ("avg_ic", 2, "caption_score"),
    ):
        if averages[key] is None:
            notes.append(
                f"{key} is None: every majority's {label} is 0, where Dysca's __main__ divides "
                "by zero (ZeroDivisionError)."
            )
            continue
        zero_with_questions = [
            qm
            for qm, t in zip(DYSCA_MAJORITIES, tallies.by_majority, strict=True)
            if by_majority[qm][f"{qm}_{label}"] == 0
            and (t.captions if slot == 2 else t.choice[2 * slot])
        ]
        if zero_with_questions:
            notes.append(
                f"{key} leaves out {', '.join(zero_with_questions)}: their {label} is 0 though "
                "they have such questions, and Dysca's __main__ averages only non-zero values."
            )
    return notes
