"""OCRBench v2's short-answer rules: containment / ANLS, counting, formulas, boxes.

Each function reproduces one function of OCRBench v2's ``eval_scripts/`` at `OCRBENCH_V2_COMMIT`
(``vqa_metric.py``, ``IoUscore_metric.py``), quirks included; the docstrings name them. The
Levenshtein distance of ``vqa_metric.levenshtein_distance`` is the plain unit-cost one, computed
here by rapidfuzz. Every function is linear (or quadratic, for the edit distance) in the text.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rapidfuzz.distance import Levenshtein

__all__ = [
    "calculate_iou",
    "cn_math_expression_evaluation",
    "cn_vqa_evaluation",
    "counting_evaluation",
    "extract_coordinates",
    "handwritten_choice",
    "math_expression_evaluation",
    "multiple_choice",
    "vqa_evaluation",
    "vqa_evaluation_case_sensitive",
    "vqa_with_position_evaluation",
]


def _text(value: Any) -> str:
    """A number answer as the scripts turn it into text (``str(answers[j])``)."""
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def _anls_term(predict: str, answer: str) -> float:
    """``1 - levenshtein / max length`` (0 distance over two empty texts)."""
    length = max(len(predict), len(answer))
    return 1.0 - (0.0 if length == 0 else Levenshtein.distance(predict, answer) / length)


def _contain_or_anls(
    predict: str, answers: Any, norm: Any, short: Any, anls_when_short_fails: bool
) -> float:
    """The shared shape of the three VQA rules.

    A list of answers: a short answer (`short`) contained in the answer scores 1; a long one
    scores its ANLS term where it is at least 0.5 and above the score so far. One answer given
    as text (not a list): the same for `vqa_evaluation`; where `anls_when_short_fails` (the
    case-sensitive and Chinese rules) a short answer not contained falls back to its ANLS term
    and a long one scores 0, as those functions' text branches do.
    """
    score = 0.0
    if isinstance(answers, list):
        for raw in answers:
            answer = norm(_text(raw))
            predict = norm(_text(predict))
            if short(answer):
                if answer in predict:
                    score = 1
            else:
                value = _anls_term(predict, answer)
                if value >= 0.5 and value > score:
                    score = value
        return score
    answer, predict = norm(answers), norm(predict)
    if short(answer):
        if answer in predict:
            return 1
        if not anls_when_short_fails:
            return 0
    elif anls_when_short_fails:
        # The case-sensitive and Chinese rules score nothing for one long text answer.
        return 0
    value = _anls_term(predict, answer)
    return value if value >= 0.5 else 0


def _lower(text: str) -> str:
    return text.lower().strip().replace("\n", " ")


def vqa_evaluation(predict: str, answers: Any) -> float:
    """``vqa_metric.vqa_evaluation``.

    Lowercased containment for answers under 5 words, else ANLS (kept from 0.5).
    """
    return _contain_or_anls(predict, answers, _lower, lambda a: len(a.split()) < 5, False)


def cn_vqa_evaluation(predict: str, answers: Any) -> float:
    """``cn_vqa_evaluation``.

    As `vqa_evaluation` with every space removed; short means fewer than 4 comma-separated
    parts.
    """
    return _contain_or_anls(
        predict,
        answers,
        lambda t: _lower(t).replace(" ", ""),
        lambda a: len(a.split(",")) < 4,
        True,
    )


def vqa_evaluation_case_sensitive(predict: str, answers: Any) -> float:
    """``vqa_evaluation_case_sensitive``: `vqa_evaluation` without lowercasing."""
    return _contain_or_anls(
        predict,
        answers,
        lambda t: t.strip().replace("\n", " "),
        lambda a: len(a.split()) < 5,
        True,
    )


def multiple_choice(predict: Any, answer: str) -> float:
    """eval.py's ``multiple choice``: the answer's letters alone equal the gold."""
    if not isinstance(predict, str):
        return 0
    return 1 if "".join(c for c in predict if c.isalpha()) == answer else 0


_FIRST_NUMBER = re.compile(r"\d+")


def _first_number(text: str) -> int | None:
    match = _FIRST_NUMBER.search(text)
    return int(match.group()) if match else None


def _regression(number: int | None, answer: str) -> float:
    """Counting's regression credit: ``1 - |n - a| / a`` above 0.5, 0 for n outside (0, 2a)."""
    if not number:
        return 0
    gold = int(answer)
    if number <= 0 or number >= 2 * gold:
        return 0
    iou = 1 - abs(number - gold) / gold
    return iou if iou > 0.5 else 0


def counting_evaluation(predict: str, answers: Any, eval_method: str | None) -> float:
    """``counting_evaluation``.

    ``exact match`` (containment; a list's answers are looked for in the answer as given, case
    and all) or ``regression`` (the first number's credit).
    """
    processed = _lower(predict)
    if isinstance(answers, list):
        best, score = 0.0, 0.0
        for raw in answers:
            answer = _lower(_text(raw))
            if eval_method == "exact match":
                score = 1 if answer in predict else 0
            elif eval_method == "regression":
                score = _regression(_first_number(processed), answer)
            # Another method keeps the previous answer's score, as the loop does.
            best = max(best, score)
        return best
    answer = _lower(answers)
    if eval_method == "exact match":
        return 1 if answer in processed else 0
    if eval_method == "regression":
        return _regression(_first_number(processed), answer)
    return 0


def _no_space(text: str) -> str:
    return text.strip().replace("\n", " ").replace(" ", "")


def math_expression_evaluation(predict: str, answers: Any) -> float:
    """``math_expression_evaluation``: an answer contained once all spaces are removed."""
    if not isinstance(answers, list):
        answers = [answers]
    return 1 if any(_no_space(a) in _no_space(predict) for a in answers) else 0


_TEXT_TAG = re.compile(r"\\text\{([^{}]*)\}")


def cn_math_expression_evaluation(predict: str, answers: Sequence[str]) -> float:
    r"""``cn_math_expression_evaluation``.

    `math_expression_evaluation` after ``\text{x}`` becomes ``x`` in both (one answer).
    """
    if len(answers) != 1:
        raise ValueError(f"formula recognition cn expects one answer, got {len(answers)}")
    return math_expression_evaluation(
        _TEXT_TAG.sub(r"\1", predict), [_TEXT_TAG.sub(r"\1", answers[0])]
    )


_JOINERS = ("", ".", ". ", ",", ", ", "、", ";", "; ", " ", "和")


def handwritten_choice(predict: str, answer: str) -> float:
    """eval.py's non-``简答`` handwritten answers: the letters joined any of ten ways, contained."""
    if len(answer) > 1:
        return 1 if any(j.join(answer) in predict for j in _JOINERS) else 0
    return 1 if answer in predict else 0


def calculate_iou(box1: Any, box2: Any) -> float:
    """``IoUscore_metric.calculate_iou``.

    Two ``[x1, y1, x2, y2]`` boxes (``int()`` of each coordinate; any that fails scores 0).
    """
    try:
        a = [int(c) for c in box1]
        b = [int(c) for c in box2]
        inter = max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(
            0, min(a[3], b[3]) - max(a[1], b[1])
        )
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    except (TypeError, ValueError, IndexError, OverflowError):
        return 0
    return inter / union if union != 0 else 0


_BOX = re.compile(r"[\(\[]\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*[\)\]]")


def extract_coordinates(text: str) -> list[int] | None:
    """``extract_coordinates``.

    The last ``(x1, y1, x2, y2)`` / ``[...]`` with every coordinate in 0..1000 (a box met again
    moves to the end).
    """
    boxes: list[tuple[int, ...]] = []
    for match in _BOX.finditer(text):
        box = tuple(int(g) for g in match.groups())
        if all(0 <= n <= 1000 for n in box):
            boxes = [b for b in boxes if b != box]
            boxes.append(box)
    return list(boxes[-1]) if boxes else None


def vqa_with_position_evaluation(predict: Mapping[str, str], answers: Any, bbox: Any) -> float:
    """``vqa_with_position_evaluation``.

    Half `vqa_evaluation` of the ``answer`` key, half IoU of the ``bbox`` key (read as a Python
    literal; unreadable scores 0).
    """
    content = vqa_evaluation(predict["answer"], answers) if "answer" in predict else 0.0
    box = 0.0
    if "bbox" in predict:
        try:
            box = calculate_iou(ast.literal_eval(predict["bbox"]), bbox)
        except Exception:  # the script's bare except: anything unreadable scores 0
            box = 0
    return 0.5 * content + 0.5 * box
