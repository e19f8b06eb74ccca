"""Dysca's robustness metrics: question-type and covariate-shift sensitivity, scenario deltas.

The formulas follow Dysca (Zhang et al., 2024, "Dysca: A Dynamic and Scalable Benchmark for
Evaluating Perception Ability of LVLMs"):

- Sensitivity to question type. True/false accuracy is rescaled so chance (50%) maps to 0 and
  perfect to 100, ``TFSQ = (S_tf - 50) / 50 * 100``; multiple-choice accuracy (4 options, chance
  25%) likewise, ``MCSQ = (S_mc - 25) / 75 * 100``. ``SQ`` is the population variance of the
  two, ``((TFSQ - m)^2 + (MCSQ - m)^2) / 2`` with ``m = (TFSQ + MCSQ) / 2``: 0 when the model
  is equally good above chance at both question types.
- Sensitivity to covariate shift. ``SC = sum_i (S_i - mean)^2 / N``, the population variance
  of the accuracies over the N image styles.

Every score here is a percentage (0-100), as in the paper. Accuracies computed from `Score`
rows follow the project's semantics: failed requests (errors) are not answers and are left out;
unparsed answers are answers, and wrong ones; rows without a per-answer verdict
(``correct is None``, e.g. free-form descriptions judged by similarity) are left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from lmmprobe.metrics.outcome import row_outcome
from lmmprobe.schema import Score

__all__ = [
    "MULTIPLE_CHOICE",
    "TRUE_FALSE",
    "accuracy_by",
    "accuracy_percent",
    "blind_gap",
    "covariate_shift_of",
    "covariate_shift_sensitivity",
    "covariate_shift_sensitivity_from_scores",
    "question_type_sensitivity",
    "question_type_sensitivity_from_scores",
    "question_type_sensitivity_of",
    "scenario_deltas",
    "scenario_deltas_of",
    "scores_by",
]

TRUE_FALSE = "true_false"
"""``metadata["question_type"]`` of true/false questions."""

MULTIPLE_CHOICE = "multiple_choice"
"""``metadata["question_type"]`` of (4-option) multiple-choice questions."""

# Chance levels Dysca normalizes by: a coin flip for true/false, one in four options for
# multiple choice.
_TF_CHANCE = 50.0
_MC_CHANCE = 25.0


def _check_percent(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value) or not 0.0 <= value <= 100.0:
        raise ValueError(f"{name} must be a percentage in [0, 100], got {value!r}")
    return value


def question_type_sensitivity(tf_score: float, mc_score: float) -> dict[str, float]:
    """Dysca's sensitivity to question type from true/false and multiple-choice accuracy.

    Args:
        tf_score: True/false accuracy S_tf in percent (0-100).
        mc_score: Multiple-choice accuracy S_mc in percent (0-100).

    Returns:
        ``{"TFSQ": ..., "MCSQ": ..., "SQ": ...}``: the chance-normalized scores
        ``TFSQ = (S_tf - 50) / 50 * 100`` and ``MCSQ = (S_mc - 25) / 75 * 100``, and their
        population variance ``SQ`` (Dysca, Zhang et al.). Below-chance accuracy gives negative
        TFSQ/MCSQ, as the formulas do.

    Raises:
        ValueError: A score is not a finite number in [0, 100] (a fraction such as 0.75 passed
            by mistake still passes; callers give percentages).

    """
    s_tf = _check_percent("tf_score", tf_score)
    s_mc = _check_percent("mc_score", mc_score)
    tfsq = (s_tf - _TF_CHANCE) / (100.0 - _TF_CHANCE) * 100.0
    mcsq = (s_mc - _MC_CHANCE) / (100.0 - _MC_CHANCE) * 100.0
    m = (tfsq + mcsq) / 2.0
    sq = ((tfsq - m) ** 2 + (mcsq - m) ** 2) / 2.0
    return {"TFSQ": tfsq, "MCSQ": mcsq, "SQ": sq}


def covariate_shift_sensitivity(scores_by_style: Mapping[str, float]) -> float:
    """Dysca's sensitivity to covariate shift: the variance of accuracy over image styles.

    Args:
        scores_by_style: Accuracy in percent (0-100) per style.

    Returns:
        ``SC = sum_i (S_i - mean)^2 / N`` over the N styles (population variance, as in Dysca,
        Zhang et al.); 0 for a single style.

    Raises:
        ValueError: No styles are given, or a score is not a finite number in [0, 100].

    """
    if not scores_by_style:
        raise ValueError("covariate_shift_sensitivity needs at least one style's score")
    values = np.array(
        [_check_percent(f"score of style {style!r}", s) for style, s in scores_by_style.items()],
        dtype=np.float64,
    )
    return float(np.mean((values - values.mean()) ** 2))


def _verdict(score: Score) -> bool | None:
    """Whether a row counts as right (True), wrong (False), or not at all (None).

    By `lmmprobe.metrics.outcome.row_outcome`: unparsed and truncated answers are wrong; errors and rows
    without a verdict (captions, free-form descriptions, empty or not) do not count.
    """
    outcome = row_outcome(score)
    if outcome in ("correct", "wrong", "unparsed", "truncated"):
        return outcome == "correct"
    return None


def _accuracy(scores: Sequence[Score]) -> float | None:
    verdicts = [v for v in map(_verdict, scores) if v is not None]
    if not verdicts:
        return None
    return 100.0 * sum(verdicts) / len(verdicts)


def accuracy_percent(scores: Sequence[Score]) -> float | None:
    """Accuracy in percent over the answered rows that have a verdict.

    Args:
        scores: Rows of one model.

    Returns:
        100 x correct / judged rows, where errors and ``correct is None`` rows are left out and
        unparsed rows count as wrong; None when no row is judged.

    """
    return _accuracy(scores)


def scores_by(scores: Sequence[Score], key: str) -> dict[str, float]:
    """Accuracy in percent per value of one metadata key.

    Args:
        scores: Rows of one model.
        key: Metadata key to group by, e.g. ``"style"``, ``"subtask"``, ``"scenario"``.

    Returns:
        ``{str(metadata[key]): accuracy}`` in sorted label order. Rows lacking the key are
        left out (they belong to no group), and so is any group with no judged row (only
        errors or ``correct is None`` rows), since its accuracy is undefined.

    """
    # One pass counting judged and right rows per group, with `_verdict` written inline: this
    # runs over every row of a run for each breakdown.
    judged: dict[str, int] = {}
    right: dict[str, int] = {}
    for s in scores:
        meta = s.metadata
        if key not in meta or s.error_type is not None:
            continue
        # `row_outcome` written inline: no verdict (errors are None too) is not judged, and a
        # judged unparsed answer is wrong.
        verdict = s.correct
        if verdict is None or s.stage == "error":
            continue
        ok = verdict and s.stage != "unparsed"
        label = str(meta[key])
        judged[label] = judged.get(label, 0) + 1
        if ok:
            right[label] = right.get(label, 0) + 1
    return accuracy_by(judged, right)


def accuracy_by(judged: Mapping[str, int], right: Mapping[str, int]) -> dict[str, float]:
    """`scores_by`'s accuracies from its counts: judged and right rows per label.

    Args:
        judged: Judged rows per label (each label with at least one).
        right: Right rows per label (labels without any may be missing).

    Returns:
        ``{label: accuracy in percent}`` in sorted label order.

    """
    return {label: 100.0 * right.get(label, 0) / judged[label] for label in sorted(judged)}


def question_type_sensitivity_from_scores(
    scores: Sequence[Score], *, key: str = "question_type"
) -> dict[str, float]:
    """`question_type_sensitivity` of a run's rows.

    Args:
        scores: Rows of one model; ``metadata[key]`` is ``"true_false"`` or
            ``"multiple_choice"`` (other question types, e.g. free-form, are ignored).
        key: Metadata key holding the question type.

    Returns:
        ``{"TFSQ", "MCSQ", "SQ"}`` from the true/false and multiple-choice accuracies, plus
        ``"S_tf"`` and ``"S_mc"``, the accuracies themselves.

    Raises:
        ValueError: The rows hold no judged true/false or no judged multiple-choice answer.

    """
    return question_type_sensitivity_of(scores_by(scores, key), key=key)


def question_type_sensitivity_of(
    by_type: Mapping[str, float], *, key: str = "question_type"
) -> dict[str, float]:
    """`question_type_sensitivity_from_scores` of the accuracies per question type (`scores_by`).

    Raises:
        ValueError: No accuracy of true/false or of multiple-choice questions.

    """
    missing = [t for t in (TRUE_FALSE, MULTIPLE_CHOICE) if t not in by_type]
    if missing:
        raise ValueError(
            f"question-type sensitivity needs judged rows with metadata[{key!r}] in "
            f"{{{TRUE_FALSE!r}, {MULTIPLE_CHOICE!r}}}; none for {', '.join(map(repr, missing))} "
            f"(found: {sorted(by_type) or 'nothing'})"
        )
    s_tf, s_mc = by_type[TRUE_FALSE], by_type[MULTIPLE_CHOICE]
    return {**question_type_sensitivity(s_tf, s_mc), "S_tf": s_tf, "S_mc": s_mc}


def covariate_shift_sensitivity_from_scores(
    scores: Sequence[Score], *, key: str = "style"
) -> float:
    """`covariate_shift_sensitivity` over the styles found in a run's rows.

    Args:
        scores: Rows of one model with ``metadata[key]`` naming the image style.
        key: Metadata key holding the style.

    Returns:
        The population variance of per-style accuracy (percent squared).

    Raises:
        ValueError: No row has a style and a verdict.

    """
    return covariate_shift_of(scores_by(scores, key), key=key)


def covariate_shift_of(by_style: Mapping[str, float], *, key: str = "style") -> float:
    """`covariate_shift_sensitivity_from_scores` of the accuracies per style (`scores_by`).

    Raises:
        ValueError: No style has an accuracy.

    """
    if not by_style:
        raise ValueError(f"covariate-shift sensitivity needs judged rows with metadata[{key!r}]")
    return covariate_shift_sensitivity(by_style)


def scenario_deltas(
    scores: Sequence[Score], baseline: str = "clean", *, key: str = "scenario"
) -> dict[str, float]:
    """Accuracy change of each Dysca scenario relative to the clean one.

    Dysca evaluates the same questions under four scenarios (clean, corruption, print attack,
    adversarial attack); the drop from clean measures robustness.

    Args:
        scores: Rows of one model with ``metadata[key]`` naming the scenario.
        baseline: Scenario the others are compared with.
        key: Metadata key holding the scenario.

    Returns:
        ``{scenario: accuracy(scenario) - accuracy(baseline)}`` in percentage points, for every
        scenario with judged rows except the baseline; negative means worse than clean.

    Raises:
        ValueError: The baseline scenario has no judged row.

    """
    return scenario_deltas_of(scores_by(scores, key), baseline, key=key)


def scenario_deltas_of(
    by_scenario: Mapping[str, float], baseline: str = "clean", *, key: str = "scenario"
) -> dict[str, float]:
    """`scenario_deltas` of the accuracies per scenario (`scores_by`).

    Raises:
        ValueError: The baseline scenario has no accuracy.

    """
    if baseline not in by_scenario:
        raise ValueError(
            f"no judged rows with metadata[{key!r}] == {baseline!r} to compare against "
            f"(found: {sorted(by_scenario) or 'nothing'})"
        )
    base = by_scenario[baseline]
    return {name: acc - base for name, acc in by_scenario.items() if name != baseline}


def blind_gap(normal: Sequence[Score], blind: Sequence[Score]) -> float:
    """Accuracy gained from seeing the image: a normal run's accuracy minus a blind run's.

    Dysca's blind setting asks the questions as text only; a small gap means the questions can
    be answered without looking, i.e. they leak.

    Args:
        normal: Rows of the run with images.
        blind: Rows of the same model on the same questions without images.

    Returns:
        ``accuracy(normal) - accuracy(blind)`` in percentage points.

    Raises:
        ValueError: Either run has no judged row.

    """
    acc_normal, acc_blind = _accuracy(normal), _accuracy(blind)
    if acc_normal is None or acc_blind is None:
        empty = "normal" if acc_normal is None else "blind"
        raise ValueError(f"the {empty} run has no judged rows (all errors or no verdicts)")
    return acc_normal - acc_blind
