r"""OCRBench v2's scoring, as its released evaluation code does it.

OCRBench v2 (Fu et al. 2024, arXiv:2501.00321) asks 10,000 questions of 30 task types (21
English, 9 Chinese). Its evaluation (Yuliang-Liu/MultimodalOCR @ `OCRBENCH_V2_COMMIT`,
``OCRBench_v2/eval_scripts/``) scores each answer by its task type (``eval.py``
``process_predictions``, reproduced by `score_item`) and then averages (``get_score.py``,
`ocrbench_v2_summary`): the mean score of each of eight English and five Chinese capability
groups (`EN_GROUPS`, `CN_GROUPS`), and each language's overall score, the mean of its groups'
means. A question the code marks ``ignore`` (a translation with an empty reference, a table
question without text) is left out of the averages.

The task types and their rules (the modules named hold them):

=================================== =========================================================
task type                            score
=================================== =========================================================
VQA-like English types               containment under 5 words, else ANLS >= 0.5
                                     (``eval``: ``multiple choice`` letters, ``case sensitive``)
cognition / reasoning VQA cn         the same without spaces (``cn_vqa_evaluation``)
text counting en                     containment or the first number's regression credit
formula recognition en / cn          containment with spaces removed (cn: ``\text{}`` dropped)
table parsing en / cn                TEDS of the HTML (or markdown) table (``apted``, ``lxml``)
chart parsing en                     TEDS of the dict answers drawn as tables
document parsing en / cn             STEDS of headings and lines (``zss``)
key information extraction / mapping mean F1 over keys, best over the gold's combinations
VQA with position en                 half VQA score, half box IoU
text grounding en                    box IoU
text spotting en                     RRC end-to-end H-mean at IoU 0.5
page OCR types, translation cn,      mean of BLEU, METEOR, word-set F1, 1 - edit distance
handwritten 简答 cn                  (``nltk`` with WordNet, ``jieba``)
handwritten answer extraction cn     the letters joined any of ten ways, contained
=================================== =========================================================
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lmmprobe.metrics._ocrbench_v2_ocr import (
    extract_bounding_boxes_robust,
    page_ocr_score,
    spotting_evaluation,
)
from lmmprobe.metrics._ocrbench_v2_rules import (
    calculate_iou,
    cn_math_expression_evaluation,
    cn_vqa_evaluation,
    counting_evaluation,
    extract_coordinates,
    handwritten_choice,
    math_expression_evaluation,
    multiple_choice,
    vqa_evaluation,
    vqa_evaluation_case_sensitive,
    vqa_with_position_evaluation,
)
from lmmprobe.metrics._ocrbench_v2_struct import (
    TreeTooLarge,
    compute_f1_score,
    convert_markdown_table_to_html,
    convert_str_to_dict,
    convert_str_to_multi_dict,
    dict_to_html,
    doc_parsing_evaluation,
    generate_combinations,
    html_table_body,
    teds,
    wrap_html_table,
)

__all__ = [
    "CN_GROUPS",
    "EN_GROUPS",
    "OCRBENCH_V2_COMMIT",
    "TASK_TYPES",
    "OcrbenchV2Item",
    "OcrbenchV2Summary",
    "group_of",
    "ocrbench_v2_summary",
    "reference_dict",
    "score_item",
]

OCRBENCH_V2_COMMIT = "794c36d6423cf1d5764081128bcaeb46b240def6"
"""The Yuliang-Liu/MultimodalOCR commit whose ``OCRBench_v2/eval_scripts`` are reproduced."""

EN_GROUPS: dict[str, tuple[str, ...]] = {
    "text_recognition": (
        "text recognition en", "fine-grained text recognition en", "full-page OCR en",
    ),
    "text_detection": ("text grounding en", "VQA with position en"),
    "text_spotting": ("text spotting en",),
    "relationship_extraction": ("key information extraction en", "key information mapping en"),
    "element_parsing": (
        "document parsing en", "chart parsing en", "table parsing en", "formula recognition en",
    ),
    "mathematical_calculation": ("math QA en", "text counting en"),
    "visual_text_understanding": ("document classification en", "cognition VQA en", "diagram QA en"),
    "knowledge_reasoning": (
        "reasoning VQA en", "science QA en", "APP agent en", "ASCII art classification en",
    ),
}  # fmt: skip
"""``get_score.py``'s English groups (its order) and the task types of each."""

CN_GROUPS: dict[str, tuple[str, ...]] = {
    "text_recognition": ("full-page OCR cn",),
    "relationship_extraction": ("key information extraction cn", "handwritten answer extraction cn"),
    "element_parsing": ("document parsing cn", "table parsing cn", "formula recognition cn"),
    "visual_text_understanding": ("cognition VQA cn",),
    "knowledge_reasoning": ("reasoning VQA cn", "text translation cn"),
}  # fmt: skip
"""``get_score.py``'s Chinese groups (its order) and the task types of each."""

TASK_TYPES: tuple[str, ...] = tuple(
    t for groups in (EN_GROUPS, CN_GROUPS) for types in groups.values() for t in types
)
"""The 30 task types (``type``) eval.py scores; any other stops it."""

_GROUP_OF = {
    t: (lang, g)
    for lang, groups in (("en", EN_GROUPS), ("cn", CN_GROUPS))
    for g, types in groups.items()
    for t in types
}

_VQA_EN = {
    "APP agent en", "ASCII art classification en", "math QA en", "reasoning VQA en",
    "science QA en", "text recognition en", "document classification en", "cognition VQA en",
    "diagram QA en",
}  # fmt: skip


def group_of(task_type: str) -> tuple[str, str]:
    """(language ``en``/``cn``, group) of a task type.

    Raises:
        ValueError: Not one of `TASK_TYPES`.

    """
    try:
        return _GROUP_OF[task_type]
    except KeyError:
        raise ValueError(f"not an OCRBench v2 task type: {task_type[:80]!r}") from None


@dataclass(frozen=True)
class OcrbenchV2Item:
    """One question as OCRBench_v2.json holds it (the fields eval.py reads).

    Attributes:
        type: The task type (one of `TASK_TYPES`).
        question: The question (some rules read it: ``简答``, ``html`` / ``markdown``).
        answers: ``answers`` as released: a list of texts, numbers, a dict (chart parsing,
            key information) or, for text grounding, the box.
        eval: ``eval`` where it is given (``multiple choice``, ``case sensitive``, counting's
            ``exact match`` / ``regression``); None where absent.
        bbox: ``bbox`` (VQA with position: the box; text spotting: a polygon per text).
        content: ``content`` (text spotting: the text of each polygon).

    """

    type: str
    question: str
    answers: Any
    eval: str | None = None
    bbox: Any = None
    content: Any = None


def _is_nan(value: Any) -> bool:
    """eval.py's ``is_nan_value`` for a text or number answer."""
    if value is None:
        return True
    if isinstance(value, str):
        return value.lower() == "nan"
    return isinstance(value, float) and math.isnan(value)


def _vqa(item: OcrbenchV2Item, predict: str, cn: bool) -> float:
    answers = item.answers if isinstance(item.answers, list) else [item.answers]
    if item.eval == "multiple choice":
        if len(answers) != 1:
            raise ValueError(f"a multiple-choice question has {len(answers)} answers, not 1")
        return multiple_choice(predict, answers[0])
    if item.eval == "case sensitive":
        return vqa_evaluation_case_sensitive(predict, item.answers)
    if item.eval is not None:
        raise ValueError(f"no such evaluation method: {item.eval[:80]!r}")
    return (cn_vqa_evaluation if cn else vqa_evaluation)(predict, item.answers)


def _table(item: OcrbenchV2Item, predict: str, markdown_allowed: bool) -> float:
    """Table parsing.

    TEDS of the HTML answer (its ``<body``/``<table`` on), or of the markdown tables where the
    (English) question asks for markdown.
    """
    gold = item.answers[0]
    if not markdown_allowed or "html" in item.question.lower():
        body = html_table_body(predict)
        if body is None:
            return 0
        try:
            return teds(wrap_html_table(body), wrap_html_table(gold))
        except TreeTooLarge:
            raise  # not a failure of TEDS: ours, past its bound (scored 0 with a warning)
        except Exception:  # eval.py: any failure of TEDS on an HTML table scores 0
            return 0
    if "markdown" in item.question.lower():
        return teds(convert_markdown_table_to_html(predict), convert_markdown_table_to_html(gold))
    # Neither word in the question: eval.py leaves the score unset and stops later.
    raise ValueError("a table question names neither html nor markdown")


def _kie(item: OcrbenchV2Item, predict: str, cn: bool) -> float:
    if len(item.answers) != 1:
        raise ValueError(f"a key information question has {len(item.answers)} answers, not 1")
    gold: Any = item.answers[0]
    if cn:
        parsed = reference_dict(gold)
        gold = {k: v if isinstance(v, list) else [v] for k, v in parsed.items()}
    combos = generate_combinations(gold)
    pred = convert_str_to_dict(predict)
    return max((compute_f1_score(pred, c) for c in combos), default=0)


def reference_dict(gold: Any) -> dict[Any, Any]:
    """A Chinese key information reference read as eval.py reads it (``ast.literal_eval``).

    Raises:
        ValueError: It is not a Python dict literal (eval.py stops there: a ``SyntaxError``
            or an ``AttributeError``), named with its start.

    """
    try:
        parsed = ast.literal_eval(gold)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        parsed = None
    if not isinstance(parsed, dict):
        raise ValueError(f"the reference is not a Python dict literal: {str(gold)[:80]!r}")
    return parsed


def _ocr(predict: str, gold: str) -> float:
    return 0 if not predict else page_ocr_score(predict, gold)


def score_item(item: OcrbenchV2Item, predict: str) -> tuple[float, bool]:
    """One answer's score by its task type, as eval.py ``process_predictions`` gives it.

    Args:
        item: The question.
        predict: The model's answer.

    Returns:
        (score in [0, 1], ignored): an ignored question (eval.py's ``ignore``) is left out
        of every average.

    Raises:
        ValueError: The question is malformed where eval.py stops (an unknown task type or
            ``eval`` method, a wrong number of answers).
        MetricUnavailable: A library the task type's rule needs is missing.

    """
    kind = item.type
    group_of(kind)
    if kind in _VQA_EN:
        return _vqa(item, predict, cn=False), False
    if kind in ("cognition VQA cn", "reasoning VQA cn"):
        return _vqa(item, predict, cn=True), False
    if kind == "handwritten answer extraction cn":
        if "简答" in item.question:
            return page_ocr_score(predict, item.answers[0]), False
        if len(item.answers) != 1:
            raise ValueError(f"a handwritten answer has {len(item.answers)} answers, not 1")
        return handwritten_choice(predict, item.answers[0]), False
    if kind == "formula recognition cn":
        return (
            0 if _is_nan(predict) else cn_math_expression_evaluation(predict, item.answers)
        ), False
    if kind == "text counting en":
        return counting_evaluation(predict, item.answers, item.eval), False
    if kind == "formula recognition en":
        return math_expression_evaluation(predict, item.answers), False
    if kind in ("table parsing en", "table parsing cn"):
        if kind == "table parsing en" and not (
            isinstance(item.answers, list) and len(item.answers) == 1
        ):
            raise ValueError("a table question has more than one answer")
        return _table(item, predict, markdown_allowed=kind.endswith("en")), False
    if kind == "chart parsing en":
        pred = convert_str_to_multi_dict(predict) if predict else {}
        return (teds(dict_to_html(pred), dict_to_html(item.answers[0])) if pred else 0), False
    if kind in ("document parsing en", "document parsing cn"):
        return doc_parsing_evaluation(predict, item.answers[0]), False
    if kind in ("key information extraction en", "key information mapping en"):
        return _kie(item, predict, cn=False), False
    if kind == "key information extraction cn":
        return _kie(item, predict, cn=True), False
    if kind == "VQA with position en":
        return vqa_with_position_evaluation(
            convert_str_to_dict(predict), item.answers, item.bbox
        ), False
    if kind == "text translation cn":
        if not predict:
            return 0, False
        if not item.answers[0]:
            return 0, True
        return page_ocr_score(predict, item.answers[0]), False
    if kind in ("fine-grained text recognition en", "full-page OCR en", "full-page OCR cn"):
        return _ocr(predict, item.answers[0]), False
    if kind == "text grounding en":
        box = extract_coordinates(predict)
        return (calculate_iou(box, item.answers) if box else 0), False
    # text spotting en
    boxes = extract_bounding_boxes_robust(predict)
    return (spotting_evaluation(boxes, item.bbox, item.content) if boxes else 0), False


@dataclass(frozen=True)
class OcrbenchV2Summary:
    """``get_score.py``'s figures.

    Attributes:
        en: Each English group's mean score and count (groups with no question left out).
        cn: The same for the Chinese groups.
        en_overall: The mean of the English groups' means (None without any).
        cn_overall: The same for Chinese.

    """

    en: dict[str, tuple[float, int]]
    cn: dict[str, tuple[float, int]]
    en_overall: float | None
    cn_overall: float | None


def ocrbench_v2_summary(scored: Iterable[tuple[str, float]]) -> OcrbenchV2Summary:
    """``get_score.py``: the group means and each language's overall mean of them.

    Args:
        scored: (task type, score) of every question not ignored.

    Returns:
        The figures get_score.py prints.

    """
    sums: dict[tuple[str, str], list[float]] = {}
    for kind, score in scored:
        sums.setdefault(group_of(kind), []).append(score)

    def figures(lang: str, groups: Mapping[str, Any]) -> dict[str, tuple[float, int]]:
        return {
            g: (sum(sums[(lang, g)]) / len(sums[(lang, g)]), len(sums[(lang, g)]))
            for g in groups
            if sums.get((lang, g))
        }

    en, cn = figures("en", EN_GROUPS), figures("cn", CN_GROUPS)
    return OcrbenchV2Summary(
        en,
        cn,
        sum(v for v, _ in en.values()) / len(en) if en else None,
        sum(v for v, _ in cn.values()) / len(cn) if cn else None,
    )
