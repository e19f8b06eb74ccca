"""The official scores of the multiple-choice and yes/no benchmarks, as their released code computes them.

Each function here reproduces one published evaluation script exactly (the parity tests in
``tests/parity/test_benchmark_choice.py`` compare them with outputs of that code); the run
metrics that apply them to a run's rows live in `lmmprobe.metrics.builtin.benchmark_choice`.

- MME (Fu et al. 2023; ``tools/eval_tool/calculation.py`` of BradyFU/Awesome-Multimodal-Large-
  Language-Models, branch Evaluation): an answer is read as yes/no from its first four
  characters (`lmmprobe.parse.mme.mme_read`, which the ``mme`` matcher shares); per subtask,
  score = accuracy x 100 + accuracy+ x 100, where accuracy+ is the share of images whose two
  questions are both right; perception and cognition are sums of their subtasks' scores.
- POPE (Li et al. 2023; ``evaluate.py`` of RUCAIBox/POPE): the first sentence is kept and read
  as "no" when one of its words is ``No``, ``not`` or ``no``, otherwise "yes"
  (`lmmprobe.parse.pope.pope_read`, which the ``pope`` matcher shares); accuracy,
  precision, recall and F1 of "yes", and the share of "yes" answers.
- HallusionBench (Guan et al. 2024; ``utils.py`` of tianyi-lab/HallusionBench): per question
  (aAcc), per figure (fAcc: every question about the figure right) and per question pair (qAcc:
  the question right on every figure). The released code asks GPT-4 whether an answer agrees
  with the reference; lmmprobe reads yes/no by rule (`hallusion_correctness`) until a judge
  exists, and only an answer stating uncertainty is "unclear".
- MMMU (Yue et al. 2024; ``mmmu/utils/eval_utils.py`` of MMMU-Benchmark/MMMU): the rule-based
  reading of a multiple-choice answer and of an open answer, and their verdicts. Where the
  released code picks a random letter (nothing could be read), lmmprobe leaves the answer
  unread and wrong: lmmprobe never scores a random option.
- MMMU-Pro (Yue et al. 2024; ``mmmu-pro/evaluate.py`` of MMMU-Benchmark/MMMU): its own
  ``parse_multi_choice_response``, MMMU's with three changes (a unique option letter after the
  last ``Answer:`` first; a letter followed by a space or by ``.`` without a space before it).
  Where it picks a random letter, lmmprobe leaves the answer unread and wrong.
- MathVista (Lu et al. 2024; ``evaluation/extract_answer.py`` and ``calculate_score.py`` of
  lupantech/MathVista): the rule-based part of answer extraction (the released code then asks
  GPT-4), normalization to the answer type, and exact equality. Where the rules read nothing
  from a multiple-choice answer, a bare option letter is read (as GPT-4 would) and anything
  else is unread and wrong, never sent to the nearest option (`mathvista_read`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from lmmprobe.parse.hallusionbench import hallusion_yes_no
from lmmprobe.parse.mme import mme_read
from lmmprobe.parse.pope import pope_read

__all__ = [
    "MME_COGNITION",
    "MME_PERCEPTION",
    "MMMU_MAX_GOLDS",
    "HallusionRow",
    "PopeCounts",
    "hallusion_correctness",
    "hallusion_scores",
    "mathvista_correct",
    "mathvista_extract",
    "mathvista_normalize",
    "mathvista_read",
    "mme_read",
    "mme_subtask_score",
    "mmmu_is_number",
    "mmmu_multi_choice",
    "mmmu_open_correct",
    "mmmu_parse_open",
    "mmmu_pro_multi_choice",
    "pope_read",
    "pope_scores",
]

MME_PERCEPTION: tuple[str, ...] = (
    "existence",
    "count",
    "position",
    "color",
    "posters",
    "celebrity",
    "scene",
    "landmark",
    "artwork",
    "OCR",
)
"""MME's perception subtasks (its ``eval_type_dict``)."""

MME_COGNITION: tuple[str, ...] = (
    "commonsense_reasoning",
    "numerical_calculation",
    "text_translation",
    "code_reasoning",
)
"""MME's cognition subtasks."""


# --------------------------------------------------------------------------- MME


def mme_subtask_score(pairs: Sequence[Sequence[tuple[str, str]]]) -> tuple[float, float, float]:
    """One MME subtask's (score, accuracy, accuracy+) from its images' question pairs.

    Args:
        pairs: Per image, its (gold "yes"/"no", model answer) rows (two per image in MME).

    Returns:
        score = (accuracy + accuracy+) x 100; accuracy over questions, accuracy+ over images.

    """
    right = total = both = 0
    for pair in pairs:
        hits = sum(1 for gold, answer in pair if mme_read(answer) == gold.lower())
        right += hits
        total += len(pair)
        both += hits == len(pair)
    acc = right / total
    acc_plus = both / len(pairs)
    return acc * 100 + acc_plus * 100, acc, acc_plus


# --------------------------------------------------------------------------- POPE


@dataclass(frozen=True)
class PopeCounts:
    """POPE's confusion counts ("yes" is the positive class) and the scores made of them."""

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def n(self) -> int:
        """All answers."""
        return self.tp + self.fp + self.tn + self.fn

    @property
    def accuracy(self) -> float:
        """(TP + TN) / all."""
        return (self.tp + self.tn) / self.n

    @property
    def precision(self) -> float:
        """TP / (TP + FP); NaN when no answer is "yes" (the released script divides by zero)."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else math.nan

    @property
    def recall(self) -> float:
        """TP / (TP + FN); NaN when no gold answer is "yes"."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else math.nan

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall; NaN when either is undefined or both are 0."""
        p, r = self.precision, self.recall
        if math.isnan(p) or math.isnan(r) or p + r == 0:
            return math.nan
        return 2 * p * r / (p + r)

    @property
    def yes_ratio(self) -> float:
        """Share of answers read as "yes"."""
        return (self.tp + self.fp) / self.n


def pope_scores(rows: Sequence[tuple[str, str]]) -> PopeCounts:
    """POPE's counts from (gold label, model answer) rows; a gold label other than "no" is yes."""
    tp = fp = tn = fn = 0
    for label, answer in rows:
        gold_yes = label != "no"
        said_yes = pope_read(answer) == "yes"
        if said_yes and gold_yes:
            tp += 1
        elif said_yes:
            fp += 1
        elif gold_yes:
            fn += 1
        else:
            tn += 1
    return PopeCounts(tp, fp, tn, fn)


# --------------------------------------------------------------------------- HallusionBench


def hallusion_correctness(answer: str, gold: str) -> str:
    """Rule-based stand-in for HallusionBench's GPT-4 check: "1" right, "0" wrong, "2" unclear.

    The answer is read by `lmmprobe.parse.hallusionbench.hallusion_yes_no`: "2" for an answer
    stating uncertainty ("I cannot tell", "not sure", "hard to say"...), as the judge's
    "unclear" is for an answer unclear about the answer; an answer read as neither yes nor no
    is wrong ("0"). ``gold`` is the dataset's ``gt_answer`` ("1" yes, "0" no).
    """
    said = hallusion_yes_no(answer)
    if said == "unclear":
        return "2"
    if said is None:
        return "0"
    return "1" if ("1" if said == "yes" else "0") == str(gold).strip() else "0"


@dataclass(frozen=True)
class HallusionRow:
    """One HallusionBench question with its verdict ("1" right, "0" wrong, "2" unclear)."""

    category: str
    subcategory: str
    set_id: str
    figure_id: str
    question_id: str
    correctness: str


def _hallusion_correct(r: HallusionRow) -> int:
    # A visual-supplement question asked without its figure counts as right when the model
    # says it cannot tell (the released `assign_correctness`).
    if r.category == "VS" and int(r.figure_id) == 0:
        return 1 if r.correctness in ("1", "2") else 0
    return 1 if r.correctness == "1" else 0


def hallusion_scores(rows: Sequence[HallusionRow]) -> dict[str, tuple[int, int]]:
    """HallusionBench's (right, total) per question (aAcc), figure (fAcc) and pair (qAcc)."""
    per_question: dict[str, int] = {}
    figures: dict[str, list[int]] = {}
    pairs: dict[str, list[int]] = {}
    for r in rows:
        c = _hallusion_correct(r)
        key = "_".join([r.category, r.subcategory, r.set_id, r.figure_id, r.question_id])
        if key in per_question:
            raise ValueError(f"HallusionBench question {key} appears twice")
        per_question[key] = c
        if not (r.category == "VS" and r.figure_id == "0"):
            fig = figures.setdefault(
                "_".join([r.category, r.subcategory, r.set_id, r.figure_id]), [0, 0]
            )
            fig[0] += c
            fig[1] += 1
        pair = pairs.setdefault(
            "_".join([r.category, r.subcategory, r.set_id, r.question_id]), [0, 0]
        )
        pair[0] += c
        pair[1] += 1
    return {
        "aAcc": (sum(per_question.values()), len(per_question)),
        "fAcc": (sum(1 for c, t in figures.values() if c == t), len(figures)),
        "qAcc": (sum(1 for c, t in pairs.values() if c == t), len(pairs)),
    }


# --------------------------------------------------------------------------- MMMU


def mmmu_multi_choice(response: str, index2ans: Mapping[str, str]) -> str | None:
    """MMMU's reading of a multiple-choice answer: a letter of ``index2ans``, or None.

    Marks in brackets ``(B)`` first, then a bare letter between spaces, then (for answers
    longer than five words) an option text; several candidates: the last one in the answer.
    None where the released code picks a random letter.
    """
    return _mmmu_reading(response, index2ans, bare=(" {} ",))


def mmmu_pro_multi_choice(response: str, index2ans: Mapping[str, str]) -> str | None:
    """MMMU-Pro's reading of a multiple-choice answer: a letter of ``index2ans``, or None.

    ``parse_multi_choice_response`` of MMMU-Pro's ``evaluate.py``: the one option letter found
    in the text after the last ``Answer:`` (several or none: go on); then MMMU's steps with its
    own bare-letter tests: ``(B)``; else ``B `` (a letter followed by a space, wherever it
    stands, so the ``B `` ending "PLAN B " counts); else ``B.``; else, for answers longer than
    five words, an option text. Several candidates: the last one, where "last" looks for
    `` B `` between spaces (a candidate found only as ``B.`` or ``xB `` is at -1, and the
    first of equal positions wins, as numpy's argmax). None where the released code picks a
    random letter.
    """
    last = response.rfind("Answer:")
    if last != -1:
        tail = response[last + len("Answer:") :].strip()
        named = [c for c in index2ans if c in tail]
        if len(named) == 1:
            return named[0]
    return _mmmu_reading(response, index2ans, bare=("{} ", "{}."))


def _mmmu_reading(
    response: str, index2ans: Mapping[str, str], *, bare: tuple[str, ...]
) -> str | None:
    """The steps MMMU's and MMMU-Pro's readers share.

    They differ only in `bare`: the patterns (``str.format`` of a letter) tried in turn for a
    letter standing without brackets.
    """
    all_choices = list(index2ans)
    for char in (",", ".", "!", "?", ";", ":", "'"):
        response = response.strip(char)
    response = f" {response} "
    candidates = [c for c in all_choices if f"({c})" in response]
    bracketed = bool(candidates)
    by_text = False
    for pattern in bare:
        if not candidates:
            candidates = [c for c in all_choices if pattern.format(c) in response]
    if not candidates and len(response.split()) > 5:
        candidates = [c for c, text in index2ans.items() if text.lower() in response.lower()]
        by_text = bool(candidates)
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    if by_text:
        starts = [response.lower().rfind(index2ans[c].lower()) for c in candidates]
    elif bracketed:
        starts = [response.rfind(f"({c})") for c in candidates]
    else:
        starts = [response.rfind(f" {c} ") for c in candidates]
    return candidates[starts.index(max(starts))]  # first of ties, as numpy's argmax


def mmmu_is_number(text: str) -> bool:
    """MMMU's ``check_is_number``: a text ``normalize_str`` turns into a float (commas dropped)."""
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def _normalize(text: str) -> list[str | float]:
    text = text.strip()
    if mmmu_is_number(text):
        return [round(float(text.replace(",", "")), 2)]
    text = text.lower()
    return [" " + text, text + " "] if len(text) == 1 else [text]


_COMMAS = re.compile(r"-?\b\d{1,3}(?:,\d{3})+\b")
# MMMU's patterns, each with "(?<!\d)" where a number's digits start: findall tried a match
# from every digit of a run, each scanning to the run's end (quadratic: 40,000 digits and a
# letter took 51 s). A match from inside a run fails wherever one from its first digit fails
# (what follows the run decides), and no match ends inside a run, so the numbers found are
# the same.
_SCIENTIFIC = re.compile(r"-?(?<!\d)\d+(?:\.\d+)?[eE][+-]?\d+")
_SIMPLE = re.compile(r"-?(?:(?<!\d)\d+\.\d+|\.\d+|(?<!\d)\d+\b)(?![eE][+-]?\d+)(?![,\d])")
_KEYS = ("could be ", "so ", "is ", "thus ", "therefore ", "final ", "answer ", "result ")


def _key_responses(response: str) -> list[str]:
    response = response.strip().strip(".").lower()
    parts = re.split(r"\.\s(?=[A-Z])|\n", response)
    found = []
    for i, part in enumerate(parts):
        keys = (*_KEYS, "=") if i == len(parts) - 1 else _KEYS
        shortest: str | None = None
        for key in keys:
            if key in part:
                tail = part.split(key)[-1].strip()
                if not shortest or len(tail) < len(shortest):
                    shortest = tail
        if shortest and shortest.strip() not in (":", ",", ".", "!", "?", ";", "'"):
            found.append(shortest)
    return found or [response]


def mmmu_parse_open(response: str) -> list[str | float]:
    """MMMU's reading of an open answer: the candidate strings and numbers it may state."""
    keys = _key_responses(response)
    preds: list[str] = list(keys)
    for k in keys:
        preds.extend(_COMMAS.findall(k) + _SCIENTIFIC.findall(k) + _SIMPLE.findall(k))
    out: list[str | float] = []
    for p in preds:
        out.extend(_normalize(p))
    return list(dict.fromkeys(out))


MMMU_MAX_GOLDS = 64
"""The most golds an MMMU open answer read from another tool's file is judged against (MMMU's
items have a handful): ``eval_open`` tests each text candidate against each gold, so the
readers refuse a longer list in one line rather than spend golds x candidates on it."""


def mmmu_open_correct(gold: str | Sequence[str], preds: Sequence[str | float]) -> bool:
    """MMMU's verdict on an open answer: a number equal to, or a string containing, a gold one.

    As ``eval_open`` decides it, in time linear in the candidates: MMMU tests each candidate
    against every gold (``pred in norm_answers``: candidates × golds); here the numbers are
    looked up in a set (the same equality), and a text given in place of the candidate list
    (iterated character by character, as MMMU's loop does) is looked at once: a one-character
    candidate contains a gold only when the gold is that character or empty. Each text
    candidate is still tested against each text gold, so the golds must be few (the readers
    bound them).
    """
    golds: list[str | float] = []
    for g in [gold] if isinstance(gold, str) else gold:
        golds.extend(_normalize(g))
    texts = [g for g in golds if isinstance(g, str)]
    if isinstance(preds, str):
        if not preds:
            return False  # no character to test
        chars = set(preds)
        return any(g == "" or (len(g) == 1 and g in chars) for g in texts)
    numbers = {g for g in golds if not isinstance(g, str)}
    for p in preds:
        if isinstance(p, str):
            if any(g in p for g in texts):
                return True
        else:
            try:
                if p in numbers:
                    return True
            except TypeError:  # an unhashable candidate (a list): equal to no number
                if p in golds:
                    return True
    return False


# --------------------------------------------------------------------------- MathVista

_QUICK_OPEN = 'The answer is "'
_QUICK_CLOSE = '".'


def _quick_extract(response: str) -> str | None:
    r"""``re.search(r'The answer is "(.*)"\.', response).group(1)``, in linear time; None if none.

    The released pattern retries its greedy ``.*`` from every ``The answer is "`` on a line,
    which takes time quadratic in a line repeating the phrase. The match it finds is the first
    line's where the phrase is followed by a later ``".``: the text from its first phrase to
    the line's last ``".`` (``.`` stops at ``\n`` only, as here).
    """
    for line in response.split("\n"):
        start = line.find(_QUICK_OPEN)
        if start < 0:
            continue
        inner = start + len(_QUICK_OPEN)
        end = line.rfind(_QUICK_CLOSE)
        if end >= inner:
            return line[inner:end]
    return None


def mathvista_extract(
    response: str, question_type: str, answer_type: str, choices: Sequence[str] | None
) -> str:
    """The rule-based part of MathVista's answer extraction (``quick_extract``), else ``""``.

    The released code asks GPT-4 when these rules fail; lmmprobe stops at the rules.
    """
    if response == "":
        return ""
    if question_type == "multi_choice" and choices is not None and response in choices:
        return response
    if answer_type == "integer":
        try:
            return str(int(response))
        except ValueError:
            pass
    if answer_type == "float":
        try:
            return str(float(response))
        except ValueError:
            pass
    found = _quick_extract(response)
    return found if found is not None else ""


def mathvista_normalize(
    extraction: str,
    choices: Sequence[str] | None,
    question_type: str,
    answer_type: str,
    precision: float | None,
) -> str | None:
    """MathVista's ``normalize_extracted_answer``: a choice text, or the number/list as text.

    A multiple-choice extraction that is no option letter goes to the nearest choice by
    Levenshtein distance (first of ties), so even an empty one gets a choice, as released;
    `mathvista_read` never passes it an empty multiple-choice extraction.
    """
    if question_type == "multi_choice":
        text = extraction.strip()
        letter = re.findall(r"\(([a-zA-Z])\)", text)
        if letter:
            text = letter[0].upper()
        opts = list(choices or [])
        letters = [chr(ord("A") + i) for i in range(len(opts))]
        if text in letters:
            return opts[letters.index(text)]
        distances = [Levenshtein.distance(text, c) for c in opts]
        return opts[distances.index(min(distances))]
    if answer_type == "integer":
        try:
            return str(int(float(extraction)))
        except (ValueError, OverflowError):
            return None
    if answer_type == "float":
        try:
            # int(None) fails in the reference too: no precision, no reading.
            return str(round(float(extraction), int(precision)))  # type: ignore[arg-type]
        except (ValueError, OverflowError, TypeError):
            return None
    if answer_type == "list":
        return str(extraction)
    return None


# A reply that is only an option letter, bare or marked: "B", "(B)", "B.", "B)", "(b)".
_LETTER_REPLY = re.compile(r"^\s*(?:\(([A-Za-z])\)|([A-Z])[.)]?)\s*$")


def mathvista_read(
    response: str,
    choices: Sequence[str] | None,
    question_type: str,
    answer_type: str,
    precision: float | None,
) -> str | None:
    """The reading of a MathVista answer in lmmprobe: the normalized answer, or None if unread.

    MathVista's rules (`mathvista_extract`, `mathvista_normalize`) with two departures for
    multiple-choice questions, both where the released code would hand the answer to GPT-4:
    a reply that is only an option letter ("B", "(B)", "B.") is read as that option (GPT-4's
    extraction reads it), and an answer the rules leave empty is unread (None) instead of
    going to the nearest option by edit distance: lmmprobe never scores an option the model
    did not give. A letter beyond the options is unread too.
    """
    extraction = mathvista_extract(response, question_type, answer_type, choices)
    if question_type == "multi_choice" and extraction.strip() == "":
        found = _LETTER_REPLY.match(response)
        letter = (found.group(1) or found.group(2)).upper() if found else None
        if letter is None or ord(letter) - ord("A") >= len(choices or []):
            return None
        extraction = letter
    return mathvista_normalize(extraction, choices, question_type, answer_type, precision)


def mathvista_correct(
    response: str,
    answer: str,
    choices: Sequence[str] | None,
    question_type: str,
    answer_type: str,
    precision: float | None,
) -> bool:
    """MathVista's verdict with lmmprobe's rule-based reading (`mathvista_read`) == answer."""
    normalized = mathvista_read(response, choices, question_type, answer_type, precision)
    return normalized is not None and normalized == answer


def mathvista_judged_correct(
    extraction: str,
    answer: str,
    choices: Sequence[str] | None,
    question_type: str,
    answer_type: str,
    precision: float | None,
) -> bool:
    """MathVista's verdict on an extraction (a judge's, or its rules'): normalized == answer.

    ``calculate_score.py``: `mathvista_normalize` then exact match. An empty multiple-choice
    extraction is wrong, not sent to the nearest option (as in `mathvista_read`).
    """
    if question_type == "multi_choice" and extraction.strip() == "":
        return False
    normalized = mathvista_normalize(extraction, choices, question_type, answer_type, precision)
    return normalized is not None and normalized == answer
