"""Official scores of the open-ended, OCR and caption benchmarks, one answer at a time.

Each function reproduces the benchmark's released evaluation code, quirks included; the parity
tests (``tests/parity/test_benchmark_open.py``) compare them with outputs of that code run on
generated inputs. The run metrics that aggregate them live in
`lmmprobe.metrics.builtin.benchmark_open`.

- `vqa_accuracy`: the official VQA evaluation (Antol et al., 2015; ``vqaEval.py`` of
  GT-Vision-Lab/VQA), which expects answers already cleaned by its challenge's processing.
- `vqa_accuracy_lmms_eval`: the same formula with every answer normalized first, as lmms-eval's
  VQAv2 task computes it on a model's raw reply (VQAv2's run metric).
- `vqa_accuracy_evalai`: the same 10-annotator formula with EvalAI's answer processor (mmf's,
  the TextVQA evaluation's), as lmms-eval's TextVQA / VizWiz / OK-VQA tasks compute it.
- `relaxed_correct`: ChartQA's relaxed accuracy (Masry et al., 2022; Methani et al., 2020), as
  Pix2Struct, Qwen-VL and lmms-eval implement it.
- `ocrbench_correct` and `ocrbench_totals`: OCRBench's scoring (Liu et al., 2023,
  arXiv:2305.07895; ``OCRBench/example.py`` of Yuliang-Liu/MultimodalOCR).
- `gqa_exact_match`: lmms-eval's ``exact_match`` with ``ignore_case`` and
  ``ignore_punctuation``, the GQA task's metric.

ANLS (DocVQA) is `lmmprobe.metrics.text.anls`; captions use `lmmprobe.metrics.text.caption_scores`.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence
from fractions import Fraction

from lmmprobe.parse.open_ended import normalize_vqa_answer

__all__ = [
    "OCRBENCH_CATEGORIES",
    "OCRBENCH_RECOGNITION",
    "evalai_normalize",
    "gqa_exact_match",
    "ocrbench_correct",
    "ocrbench_totals",
    "relaxed_correct",
    "vqa_accuracy",
    "vqa_accuracy_evalai",
    "vqa_accuracy_lmms_eval",
]


def _answers(answers: Sequence[str], what: str) -> list[str]:
    # A bare string is a Sequence[str] of characters: scoring against each letter is wrong.
    if isinstance(answers, str):
        raise TypeError(f"{what}: expected a list of reference answers, got the text {answers!r}")
    out = list(answers)
    if not out:
        raise ValueError(f"{what}: needs at least one reference answer")
    return out


def _one_line(text: str) -> str:
    return text.replace("\n", " ").replace("\t", " ").strip()


def _leave_one_out(prediction: str, answers: list[str]) -> list[float]:
    # Each annotator in turn is left out; the answer scores min(1, matches among the others / 3).
    # The annotations carry distinct answer ids, so "the others" are the other positions.
    scores = []
    for i in range(len(answers)):
        matching = sum(1 for j, a in enumerate(answers) if j != i and a == prediction)
        scores.append(min(1.0, matching / 3))
    return scores


def vqa_accuracy(prediction: str, answers: Sequence[str]) -> float:
    r"""VQA accuracy of one answer, exactly as the official VQA evaluation computes it.

    Line breaks and tabs become spaces and the texts are stripped. Then, **only when the
    references are not all identical**, the prediction and every reference are normalized with
    VQA's ``processPunctuation`` and ``processDigitArticle`` (`normalize_vqa_answer`); when all
    references agree, the prediction must equal them as written (``"Two"`` does not match ten
    ``"2"``). Each of the references is left out in turn: the answer scores
    ``min(1, #other references equal to it / 3)``; the result is the mean of these scores (the
    familiar ``min(#humans that said it / 3, 1)`` averaged over the 10 subsets of 9).

    Source: ``VQAEval.evaluate`` of ``PythonEvaluationTools/vqaEvaluation/vqaEval.py``,
    GT-Vision-Lab/VQA (the per-question ``avgGTAcc``, before the evaluation's rounding to two
    decimals of a percentage). Non-ASCII digits next to commas and periods are treated as
    Python 3 treats ``\d`` (VQA's Python 2 code sees only ASCII digits there).

    The script scores answers the VQA challenge has already cleaned; a model's raw reply is
    scored with `vqa_accuracy_lmms_eval` (VQAv2) or `vqa_accuracy_evalai` (OK-VQA), as
    lmms-eval, whose prompts the benchmarks use, scores it.

    Args:
        prediction: The model's answer.
        answers: The annotators' answers (10 in VQAv2 and OK-VQA).

    Returns:
        The accuracy in ``[0, 1]``, a multiple of 1/30.

    Raises:
        TypeError: `answers` is a string.
        ValueError: `answers` is empty.

    """
    refs = [_one_line(a) for a in _answers(answers, "vqa_accuracy")]
    pred = _one_line(prediction)
    if len(set(refs)) > 1:
        refs = [normalize_vqa_answer(a) for a in refs]
        pred = normalize_vqa_answer(pred)
    scores = _leave_one_out(pred, refs)
    return sum(scores) / len(scores)


def _exact_mean(scores: list[float]) -> float:
    # statistics.mean (lmms-eval's) sums exactly, as fractions, and rounds once; so does this.
    return float(sum((Fraction(s) for s in scores), Fraction(0)) / len(scores))


def vqa_accuracy_lmms_eval(prediction: str, answers: Sequence[str]) -> float:
    """VQAv2's accuracy of a model's raw reply, as lmms-eval scores its ``vqav2`` tasks.

    The prediction and every reference are always normalized with VQA's punctuation, digit,
    article and contraction rules (`normalize_vqa_answer`, which lowercases: ``"Yes"``,
    ``"yes."`` and ``"Two"`` match ten ``"yes"`` / ``"2"``); then each reference is left out in
    turn and the answer scores ``min(1, #other references equal to it / 3)``; the result is the
    exact mean of these scores. Unlike `vqa_accuracy` (``vqaEval.py``, whose inputs the VQA
    challenge has already cleaned), the normalization does not depend on whether the annotators
    agree. Unlike `vqa_accuracy_evalai`, commas and question marks are not deleted and ``'s`` is
    not split off before that normalization.

    Source: ``vqav2_process_results`` of lmms-eval ``lmms_eval/tasks/vqav2/utils.py``
    (``process_punctuation`` and ``process_digit_article`` of its ``EvalAIAnswerProcessor``).
    Its "other answers" are the answer records different from the one left out; VQAv2's records
    carry distinct ``answer_id`` values, so they are the other positions, as here.

    Args:
        prediction: The model's reply.
        answers: The annotators' answers (10 in VQAv2).

    Returns:
        The accuracy in ``[0, 1]``.

    Raises:
        TypeError: `answers` is a string.
        ValueError: `answers` is empty.

    """
    refs = [normalize_vqa_answer(a) for a in _answers(answers, "vqa_accuracy_lmms_eval")]
    return _exact_mean(_leave_one_out(normalize_vqa_answer(prediction), refs))


def evalai_normalize(text: str) -> str:
    """EvalAI's answer processor (mmf / pythia ``EvalAIAnswerProcessor``), used by TextVQA.

    Lowercase; commas and question marks deleted; ``'s`` split off as ``" 's"``; line breaks and
    tabs to spaces; stripped; then VQA's punctuation, number-word, article and contraction rules
    (`normalize_vqa_answer`). Because commas are gone before the punctuation step, VQA's
    "digit-comma-digit" exception never applies here.
    """
    tokenized = text.lower().replace(",", "").replace("?", "").replace("'s", " 's").strip()
    return normalize_vqa_answer(tokenized)


def vqa_accuracy_evalai(prediction: str, answers: Sequence[str]) -> float:
    """10-annotator VQA accuracy with every text normalized by `evalai_normalize`.

    Unlike `vqa_accuracy`, the prediction and references are always normalized (EvalAI's answer
    processor, which also lowercases first and drops commas and question marks). The score is
    the mean over left-out references of ``min(1, #other references equal / 3)``, averaged with
    `statistics.mean`'s exact arithmetic.

    Source: lmms-eval ``textvqa_process_results`` (``lmms_eval/tasks/textvqa/utils.py``; the
    same computation scores ``vizwiz_vqa`` and ``ok_vqa``, ``ok_vqa_process_results``). Its answer processor is copied from mmf,
    whose ``TextVQAAccuracyEvaluator`` (the TextVQA challenge's) applies the same formula but
    averages with a float sum, which can differ in the last bit.

    Args:
        prediction: The model's answer.
        answers: The annotators' answers (10 in TextVQA and VizWiz).

    Returns:
        The accuracy in ``[0, 1]``.

    Raises:
        TypeError: `answers` is a string.
        ValueError: `answers` is empty.

    """
    refs = [evalai_normalize(a) for a in _answers(answers, "vqa_accuracy_evalai")]
    pred = evalai_normalize(prediction)
    return _exact_mean(_leave_one_out(pred, refs))


def _chart_float(text: str) -> float | None:
    try:
        if text.endswith("%"):
            return float(text.rstrip("%")) / 100.0
        return float(text)
    except ValueError:
        return None


def relaxed_correct(prediction: str, target: str, max_relative_change: float = 0.05) -> bool:
    """ChartQA's relaxed correctness: numbers within 5% of the gold, other answers exact.

    Both texts are read as numbers with Python's ``float`` (so ``" 12 "``, ``"1e3"``, ``"nan"``
    and ``"1_000"`` are numbers; a trailing ``%`` divides by 100 after every trailing ``%`` is
    removed). When both are numbers and the gold is not 0, the answer is right when
    ``|pred - gold| / |gold| <= max_relative_change``; otherwise the lowercased texts must be
    equal (so a gold of ``"0"`` needs the text ``"0"``).

    Source: ``relaxed_correctness`` of lmms-eval ``lmms_eval/tasks/chartqa/utils.py`` (taken from
    Qwen-VL ``eval_mm/evaluate_vqa.py``, which follows Pix2Struct), end of section 5.1 of
    Masry et al. 2022 (ChartQA, arXiv:2203.10244).
    """
    pred = _chart_float(prediction)
    gold = _chart_float(target)
    if pred is not None and gold:
        return abs(pred - gold) / abs(gold) <= max_relative_change
    return prediction.lower() == target.lower()


OCRBENCH_RECOGNITION: tuple[str, ...] = (
    "Regular Text Recognition",
    "Irregular Text Recognition",
    "Artistic Text Recognition",
    "Handwriting Recognition",
    "Digit String Recognition",
    "Non-Semantic Text Recognition",
)
"""The six text-recognition categories (50 questions each), summed as "Text Recognition"."""

OCRBENCH_CATEGORIES: dict[str, int] = {
    **dict.fromkeys(OCRBENCH_RECOGNITION, 50),
    "Scene Text-centric VQA": 200,
    "Doc-oriented VQA": 200,
    "Key Information Extraction": 200,
    "Handwritten Mathematical Expression Recognition": 100,
}
"""OCRBench's question types with their number of questions (1,000 in all)."""


def ocrbench_correct(prediction: str, answers: str | Sequence[str], dataset: str) -> bool:
    """Whether OCRBench's released scoring counts an answer right (1 point).

    A reference is found when it occurs as a substring of the prediction after both are
    lowercased, stripped and line breaks turned into spaces; for the HME100k (handwritten
    mathematical expression) questions, case is kept and every space is removed instead. Any
    reference found scores the question. An empty reference is found in any prediction.

    Source: the scoring loop of ``OCRBench/example.py``, Yuliang-Liu/MultimodalOCR.

    Args:
        prediction: The model's answer.
        answers: The reference, or a list of acceptable references.
        dataset: The question's source dataset (OCRBench's ``dataset_name``/``dataset``).

    """
    refs = [answers] if isinstance(answers, str) else list(answers)
    if dataset == "HME100k":
        pred = prediction.strip().replace("\n", " ").replace(" ", "")
        return any(a.strip().replace("\n", " ").replace(" ", "") in pred for a in refs)
    pred = prediction.lower().strip().replace("\n", " ")
    return any(a.lower().strip().replace("\n", " ") in pred for a in refs)


def ocrbench_totals(results: Iterable[tuple[str, bool]]) -> dict[str, int]:
    """OCRBench's score sheet from ``(question type, correct)`` pairs.

    Returns:
        Points per question type (every type of `OCRBENCH_CATEGORIES`, 0 when absent), then
        ``"Text Recognition"`` (the six recognition types) and ``"Final Score"`` (all, out of
        1,000 for the full benchmark).

    Raises:
        ValueError: A question type OCRBench does not have.

    """
    totals = dict.fromkeys(OCRBENCH_CATEGORIES, 0)
    for category, correct in results:
        if category not in totals:
            raise ValueError(
                f"OCRBench question type {category!r} is not one of {sorted(OCRBENCH_CATEGORIES)}"
            )
        totals[category] += int(correct)
    totals["Text Recognition"] = sum(totals[c] for c in OCRBENCH_RECOGNITION)
    totals["Final Score"] = sum(totals[c] for c in OCRBENCH_CATEGORIES)
    return totals


_PUNCTUATION_TABLE = str.maketrans("", "", string.punctuation)


def _em_text(text: str) -> str:
    # numpy's fixed-width unicode arrays, which lmms-eval's exact_match goes through, drop
    # trailing NUL characters.
    return text.rstrip("\x00").lower().translate(_PUNCTUATION_TABLE)


def gqa_exact_match(prediction: str, answer: str) -> bool:
    """GQA's score in lmms-eval: exact match ignoring case and ASCII punctuation.

    The prediction is stripped (lmms-eval strips generated text before its metrics); both texts
    are lowercased and lose every character of ``string.punctuation``; inner and surrounding
    whitespace left by removed marks still counts (``"yes ."`` is not ``"yes"``).

    Source: ``exact_match_hf_evaluate`` of lmms-eval ``lmms_eval/api/metrics.py`` (ported from
    Hugging Face evaluate's ``exact_match``), called with ``ignore_case`` and
    ``ignore_punctuation`` as ``lmms_eval/tasks/gqa/gqa.yaml`` sets, after ``ConfigurableTask
    .process_results`` strips the generation.
    """
    return _em_text(prediction.strip()) == _em_text(answer)
