"""MMMU's figure as its released script computes it, random letters included (``--as-published``).

Parsed answers (``{id: answer}``, the input of ``mmmu/main_eval_only.py``) are scored as that
script scores them: a multiple-choice answer compared as it is (no parsing, no random letter),
an open one parsed by ``parse_open_response``.

MMMU's ``mmmu/main_parse_and_eval.py`` (MMMU-Benchmark/MMMU @ bb0b95a) reads each answer with
``parse_multi_choice_response`` / ``parse_open_response`` (``mmmu/utils/eval_utils.py``), and
where a multiple-choice answer holds nothing it can read, it picks ``random.choice(all_choices)``
from Python's global random stream, seeded once (``random.seed(42)``) when ``eval_utils`` is
imported. Which letter an item gets therefore depends on every guess drawn before it in that
process: the subjects in ``CAT_SHORT2LONG`` order (``--subject ALL``), each subject's
``output.json`` in list order. Its overall figure is ``calculate_ins_level_acc``: the
subjects' accuracies weighted by their sizes.

lmmprobe's own MMMU figure (``mmmu_accuracy``) counts an unreadable answer wrong; this module
says how many items the released code would have guessed (`mmmu_guessed`) and reproduces its
figure exactly (`mmmu_as_published`): the same seed, the same order and the same stream, drawn
from a local ``random.Random(seed)`` (whose ``choice`` advances it exactly as the module-level
``random.choice`` advances the global one). The parity test
(``tests/parity/test_mmmu_published.py``) compares both with the script's own output.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from lmmprobe.metrics.benchmark_choice import (
    mmmu_multi_choice,
    mmmu_open_correct,
    mmmu_parse_open,
)

__all__ = [
    "MMMU_DOMAINS",
    "MMMU_SEED",
    "MMMU_SUBJECTS",
    "MmmuItem",
    "MmmuPublished",
    "mmmu_as_published",
    "mmmu_guessed",
    "mmmu_subject",
]

MMMU_SEED = 42
"""``random.seed(42)`` at the top of MMMU's ``eval_utils.py``."""

MMMU_SUBJECTS: tuple[str, ...] = (
    "Accounting", "Agriculture", "Architecture_and_Engineering", "Art", "Art_Theory",
    "Basic_Medical_Science", "Biology", "Chemistry", "Clinical_Medicine", "Computer_Science",
    "Design", "Diagnostics_and_Laboratory_Medicine", "Economics", "Electronics",
    "Energy_and_Power", "Finance", "Geography", "History", "Literature", "Manage", "Marketing",
    "Materials", "Math", "Mechanical_Engineering", "Music", "Pharmacy", "Physics", "Psychology",
    "Public_Health", "Sociology",
)  # fmt: skip
"""The 30 subjects in the order ``--subject ALL`` evaluates them (``CAT_SHORT2LONG``'s values,
``mmmu/utils/data_utils.py``)."""

MMMU_DOMAINS: Mapping[str, tuple[str, ...]] = {
    "Art and Design": ("Art", "Art_Theory", "Design", "Music"),
    "Business": ("Accounting", "Economics", "Finance", "Manage", "Marketing"),
    "Science": ("Biology", "Chemistry", "Geography", "Math", "Physics"),
    "Health and Medicine": (
        "Basic_Medical_Science", "Clinical_Medicine", "Diagnostics_and_Laboratory_Medicine",
        "Pharmacy", "Public_Health",
    ),
    "Humanities and Social Science": ("History", "Literature", "Sociology", "Psychology"),
    "Tech and Engineering": (
        "Agriculture", "Architecture_and_Engineering", "Computer_Science", "Electronics",
        "Energy_and_Power", "Materials", "Mechanical_Engineering",
    ),
}  # fmt: skip
"""MMMU's disciplines and their subjects (``DOMAIN_CAT2SUB_CAT``)."""


def mmmu_subject(sample_id: str) -> str:
    """The subject of an MMMU id: ``validation_Art_Theory_12`` → ``Art_Theory`` (as MMMU splits)."""
    return "_".join(sample_id.split("_")[1:-1])


@dataclass(frozen=True)
class MmmuItem:
    """One entry of MMMU's ``output.json`` (the fields its evaluation reads)."""

    id: str
    question_type: str
    """``multiple-choice`` or anything else (an open question)."""
    answer: str | list[str]
    """The gold: an option letter, or the open answer(s)."""
    response: str
    """The model's answer text."""
    all_choices: tuple[str, ...] = ()
    """The option letters (multiple-choice), the sequence the random letter is drawn from."""
    index2ans: Mapping[str, str] = field(default_factory=dict)
    """Option letter → option text (multiple-choice)."""
    parsed: bool = False
    """The response is already MMMU's parsed answer (``main_eval_only.py``'s input,
    ``{id: answer}``): a multiple-choice answer is compared as it is, never parsed or guessed."""

    @property
    def multiple_choice(self) -> bool:
        """Whether MMMU reads it as a multiple-choice answer."""
        return self.question_type == "multiple-choice"


@dataclass(frozen=True)
class MmmuPublished:
    """MMMU's figures as the released script gives them."""

    parsed: Mapping[str, str | list[str | float]]
    """Each item's reading: a letter (guessed ones included) or the open answer's candidates."""
    correct: Mapping[str, bool]
    """Each item's verdict (its ``judge``: Correct / Wrong)."""
    guessed: Mapping[str, str]
    """The items whose letter was drawn at random, with the letter drawn."""
    subjects: Mapping[str, tuple[float, int]]
    """Per subject, in evaluation order: (accuracy, items), as its ``result.json``."""
    overall: float
    """``calculate_ins_level_acc`` over the subjects (the headline figure, unrounded)."""
    domains: Mapping[str, tuple[float, int]]
    """Per discipline: (accuracy, items) over its subjects present."""


def _ins_level(results: Iterable[tuple[float, int]]) -> float:
    # calculate_ins_level_acc: sum of acc * n over sum of n, in the given order (float order
    # matters to the last bit).
    acc = 0.0
    n = 0
    for a, k in results:
        acc += a * k
        n += k
    return acc / n if n else 0


def mmmu_guessed(items: Iterable[MmmuItem]) -> list[str]:
    """The ids of the multiple-choice items MMMU's parser cannot read: it would guess them."""
    return [
        it.id
        for it in items
        if it.multiple_choice
        and not it.parsed
        and mmmu_multi_choice(it.response, it.index2ans) is None
    ]


def mmmu_as_published(
    by_subject: Mapping[str, Sequence[MmmuItem]], *, seed: int = MMMU_SEED
) -> MmmuPublished:
    """MMMU's figure exactly as ``main_parse_and_eval.py --subject ALL`` computes it.

    Args:
        by_subject: Each subject's items in its ``output.json`` order (subject names as MMMU's
            folders: ``Art_Theory``). Subjects that are not among MMMU's 30 are never read by
            the script, so they are left out here too.
        seed: The global seed its ``eval_utils`` sets at import.

    Returns:
        Readings, verdicts, the guessed letters and the per-subject, per-discipline and
        overall accuracies.

    """
    rng = random.Random(seed)
    parsed: dict[str, str | list[str | float]] = {}
    correct: dict[str, bool] = {}
    guessed: dict[str, str] = {}
    subjects: dict[str, tuple[float, int]] = {}
    for subject in MMMU_SUBJECTS:
        items = by_subject.get(subject)
        if items is None:
            continue  # "Skipping X for not found": no draw
        right = 0
        for it in items:
            if it.multiple_choice and it.parsed:
                # main_eval_only.py: "parsed_pred = parsed_pred", then eval_multi_choice.
                golds = it.answer if isinstance(it.answer, list) else [it.answer]
                ok = it.response in golds
                parsed[it.id] = it.response
            elif it.multiple_choice:
                letter = mmmu_multi_choice(it.response, it.index2ans)
                if letter is None:
                    letter = rng.choice(list(it.all_choices))
                    guessed[it.id] = letter
                golds = it.answer if isinstance(it.answer, list) else [it.answer]
                ok = letter in golds
                parsed[it.id] = letter
            else:
                preds = mmmu_parse_open(it.response)
                ok = mmmu_open_correct(it.answer, preds)
                parsed[it.id] = preds
            correct[it.id] = ok
            right += ok
        # evaluate() returns acc 0 for an empty subject (and its caller then fails); an empty
        # folder cannot be scored by the script either.
        subjects[subject] = (right / len(items) if items else 0.0, len(items))
    domains = {
        name: (
            _ins_level(subjects[s] for s in members if s in subjects),
            sum(subjects[s][1] for s in members if s in subjects),
        )
        for name, members in MMMU_DOMAINS.items()
    }
    return MmmuPublished(
        parsed=parsed,
        correct=correct,
        guessed=guessed,
        subjects=subjects,
        overall=_ins_level(subjects.values()),
        domains=domains,
    )
