"""CMMMU's answer reading and scoring, as its released evaluation code does them.

CMMMU (Zhang et al. 2024, arXiv:2401.20847) scores three kinds of question: multiple choice
(``选择``, one or several of four letters), true/false (``判断``, ``对`` or ``错``) and fill in
the blank (``填空``). Its evaluation code (CMMMU-Benchmark/CMMMU @ `CMMMU_COMMIT`,
``eval/utils/eval_utils.py`` ``evaluate_response``, driven by ``eval/eval_script.py``) reads a
response with rules of its own, here reproduced rule for rule:

- `cmmmu_multi_choice`: every ``(X)`` counted; none: every bare capital ``X`` counted; none:
  every occurrence of an option's text counted; the letters counted most often, joined in ABCD
  order (``"AC"``). Nothing found: the code draws a letter at random.
- `cmmmu_true_false`: the tails after key words (``是``, ``为``, ``判断``...) of each sentence,
  de-duplicated, those naming an ambiguity dropped, then counted as positive (``正确``, ``对``...)
  or negative (``错误``...): the larger count decides; a tie makes the code draw ``对`` or
  ``错`` at random.
- `cmmmu_fill_blank` / `cmmmu_fill_correct`: the tails after key words (and, in the last
  sentence, after ``=``), the numbers in them, each normalized (numbers rounded to 2 places;
  texts much longer than the gold dropped); right when a number equals the gold number or a
  text contains the gold text.

The draws come from Python's global stream, seeded once (``random.seed(42)``) when
``eval_utils`` is imported, in the order the script scores (its six disciplines in
`CMMMU_CATEGORIES` order, each in the answer file's order). `cmmmu_evaluate` replays that stream
from a local ``random.Random(42)`` (DESIGN: randomness is local), so the same answers count
right; it is CMMMU's figure as published (``--as-published``). The run metric
``cmmmu_accuracy`` never guesses: an answer the code would draw for is counted wrong.

Every function here is bounded by the text's length: the regular expressions of the number
reading are anchored so that a long run of digits is scanned once (see `_SCIENTIFIC`).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "CMMMU_CATEGORIES",
    "CMMMU_COMMIT",
    "CMMMU_SEED",
    "CMMMU_SUBCATEGORIES",
    "CmmmuItem",
    "CmmmuResult",
    "cmmmu_evaluate",
    "cmmmu_fill_blank",
    "cmmmu_fill_correct",
    "cmmmu_multi_choice",
    "cmmmu_normalize",
    "cmmmu_true_false",
]

CMMMU_COMMIT = "59a4776bc656638c0b07eef093c48ffef464fdcd"
"""The CMMMU-Benchmark/CMMMU commit whose ``eval/`` scripts are reproduced."""

CMMMU_SEED = 42
"""``random.seed(42)`` at the top of CMMMU's ``eval/utils/eval_utils.py``."""

CMMMU_CATEGORIES: dict[str, str] = {
    "艺术与设计": "Art & Design",
    "商业": "Business",
    "科学": "Science",
    "健康与医学": "Health & Medicine",
    "人文社会科学": "Humanities & Social Sciences",
    "技术与工程": "Technology & Engineering",
}
"""The six disciplines in ``eval_script.py``'s order (its ``category_list``), with the names
its table prints (``category_dict``)."""

CMMMU_SUBCATEGORIES: dict[str, tuple[str, ...]] = {
    "艺术与设计": ("艺术", "艺术理论", "设计", "音乐"),
    "商业": ("会计", "经济", "金融", "管理", "营销"),
    "科学": ("生物", "化学", "地理", "数学", "物理"),
    "健康与医学": ("基础医学", "临床医学", "诊断学与实验室医学", "制药", "公共卫生"),
    "人文社会科学": ("历史", "文献学", "社会学", "心理学"),
    "技术与工程": ("农业", "建筑学", "计算机科学", "电子学", "能源和电力", "材料", "机械工程"),
}
"""The 30 subjects of each discipline (lmms-eval's ``DOMAIN_CAT2SUB_CAT``, the paper's table)."""

MULTI_CHOICE = "选择"
TRUE_FALSE = "判断"
FILL_BLANK = "填空"

_LETTERS = ("A", "B", "C", "D")
_TRIVIAL = (":", ",", ".", "!", "?", ";", ":", "'")
_FILL_KEYS = (
    "是",
    "为",
    "所以",
    "等于",
    "方案",
    "选择",
    "正确答案",
    "因此",
    "最后",
    "答案",
    "结果",
)
_TF_KEYS = ("是", "为", "所以", "判断", "陈述", "说法", "表达", "答案", "结果")
_POSITIVE = ("正确", "对", "准确", "肯定", "对的")
_NEGATIVE = ("不对", "错误", "不正确", "不准确", "不合适", "否定", "错的", "错")
_AMBIGUOUS = ("对错", "是否正确", "否正确", "或者", "是否", "正确性", "对不")
_SENTENCES = re.compile(r"。|\n")

_COMMAS = re.compile(r"-?\d{1,3}(?:，\d{3})+")
# CMMMU's scientific pattern with "(?<!\d)" where the digits start: findall tried a match from
# every digit of a run, each scanning to the run's end (quadratic on a long run). A match can
# only start inside a run when one from the run's first digit would have taken it (the
# exponent decides, after the run), and no match ends inside a run, so the numbers are the
# same. The comma and simple patterns are CMMMU's own: each scans a run a bounded number of
# times (tests/metrics/test_cmmmu.py times them on long runs).
_SCIENTIFIC = re.compile(r"-?(?<!\d)\d+(?:\.\d+)?[eE][+-]?\d+")
_SIMPLE = re.compile(r"-?(?:\d+\.\d+|\.\d+|\d+)(?![eE][+-]?\d+)(?!，\d)")


def cmmmu_multi_choice(response: str, index2ans: Mapping[str, str]) -> str | None:
    """CMMMU's reading of a multiple-choice response (``get_multi_choice_prediction``).

    Args:
        response: The model's response.
        index2ans: The options by letter, A to D (an absent option is ``""``, as the script's
            ``data.get('optionN', '')``).

    Returns:
        The letters counted most often, in ABCD order (``"B"``, ``"AC"``); None where the
        released code draws a letter at random (nothing found).

    """
    for char in (",", ".", "!", "?", ";", ":", "'"):
        response = response.strip(char)
    response = f" {response} "
    counts: Counter[str] = Counter()
    for letter in _LETTERS:
        counts[letter] += response.count(f"({letter})")
    if not +counts:
        for letter in _LETTERS:
            counts[letter] += response.count(letter)
    if not +counts and response.split():
        for letter, text in index2ans.items():
            # An empty option text is found len + 1 times, as str.count finds it.
            counts[letter] += response.count(text)
    counts = +counts
    if not counts:
        return None
    top = max(counts.values())
    return "".join(c for c in _LETTERS if counts.get(c, 0) == top)


def _key_tails(response: str, keys: Sequence[str], last_keys: Sequence[str]) -> list[str]:
    """``get_key_subresponses``: per sentence, the shortest tail after one of the key words.

    The sentences are the response (``。`` stripped from both ends, then whitespace) split at
    ``。`` and line breaks; the last sentence also looks for `last_keys`. A tail replaces an
    empty one whatever its length (the script's ``if not shortest``). No tail at all: the
    response itself.
    """
    response = response.strip("。").strip()
    parts = _SENTENCES.split(response)
    tails: list[str] = []
    for i, part in enumerate(parts):
        shortest: str | None = None
        for key in (*keys, *last_keys) if i == len(parts) - 1 else keys:
            if key in part:
                tail = part.split(key)[-1].strip()
                if not shortest or len(tail) < len(shortest):
                    shortest = tail
        if shortest and shortest.strip() not in _TRIVIAL:
            tails.append(shortest)
    return tails or [response]


def _is_number(text: str) -> bool:
    """``check_is_number``: ``float`` reads the text once commas are dropped."""
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def _ascii_letters(text: str) -> int:
    """``count_letters``: the ASCII letters in the text."""
    return sum(1 for c in text if "a" <= c <= "z" or "A" <= c <= "Z")


def cmmmu_normalize(text: str, answer: str) -> list[str | float]:
    """``normalize_str``: a number rounded to 2 places, a text as it is, or nothing.

    A text more than 20 characters longer than `answer`, or with more than 2 ASCII letters
    more, is dropped (``[]``).
    """
    text = text.strip()
    if _is_number(text):
        return [round(float(text.replace(",", "")), 2)]
    if len(text) > len(answer) + 20 or _ascii_letters(text) > _ascii_letters(answer) + 2:
        return []
    return [text]


def cmmmu_fill_blank(response: str, answer: str) -> list[str | float]:
    """CMMMU's candidates for a fill-in-the-blank response (``get_fill_blank_prediction``).

    The key tails (`_key_tails` with ``=`` in the last sentence), then the numbers in each,
    each normalized against `answer` (`cmmmu_normalize`), duplicates dropped (the script's
    ``list(set(...))``, whose order does not change the verdict).
    """
    tails = _key_tails(response, _FILL_KEYS, ("=",))
    found: list[str] = list(tails)
    for tail in tails:
        found.extend(_COMMAS.findall(tail) + _SCIENTIFIC.findall(tail) + _SIMPLE.findall(tail))
    out: list[str | float] = []
    for text in found:
        out.extend(cmmmu_normalize(text, answer))
    return list(dict.fromkeys(out))


def cmmmu_fill_correct(answer: str, candidates: Iterable[str | float]) -> bool:
    """CMMMU's verdict on a fill-in-the-blank answer (``evaluate_response``).

    Right when a candidate number equals the gold number, or a candidate text contains the
    gold text.
    """
    golds = cmmmu_normalize(answer, answer)
    for c in candidates:
        if isinstance(c, str):
            if any(isinstance(g, str) and g in c for g in golds):
                return True
        elif c in golds:
            return True
    return False


def cmmmu_true_false(response: str) -> str | None:
    """CMMMU's reading of a true/false response: ``"对"``, ``"错"``, or None for a tie.

    The key tails (`_key_tails`), de-duplicated, those holding an ambiguous phrase dropped;
    each tail holding a positive word counts positive, else one holding a negative word counts
    negative (so ``不正确`` counts positive: ``正确`` is tested first, as in the script). None
    where the counts tie, where the released code draws ``对`` or ``错`` at random.
    """
    tails = dict.fromkeys(_key_tails(response, _TF_KEYS, ()))
    positive = negative = 0
    for tail in tails:
        if any(a in tail for a in _AMBIGUOUS):
            continue
        if any(w in tail for w in _POSITIVE):
            positive += 1
        elif any(w in tail for w in _NEGATIVE):
            negative += 1
    if positive > negative:
        return "对"
    if negative > positive:
        return "错"
    return None


@dataclass(frozen=True)
class CmmmuItem:
    """One answer as CMMMU's ``eval_script.py`` sees it (a response file's row, joined)."""

    id: str
    type: str
    """``选择``, ``判断`` or ``填空`` (any other type is scored as true/false, as the script)."""
    answer: str
    """The gold: letters (``"ACD"``), ``对``/``错``, or the blank's text."""
    response: str
    category: str
    """The discipline (one of `CMMMU_CATEGORIES`)."""
    index2ans: Mapping[str, str] = field(default_factory=dict)
    """A multiple-choice item's four options by letter."""


@dataclass
class CmmmuResult:
    """What ``eval_script.py`` computes for a file: readings, verdicts, draws and its table."""

    predicted: dict[str, str | list[str | float] | None] = field(default_factory=dict)
    """Each item's reading: letters, ``对``/``错``, fill candidates; None for an empty
    multiple-choice response (the script reads nothing and counts it wrong)."""
    correct: dict[str, bool] = field(default_factory=dict)
    guessed: dict[str, str] = field(default_factory=dict)
    """The items whose reading was drawn at random, with the draw."""
    categories: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per discipline, in the script's order: (right, items)."""

    @property
    def overall(self) -> tuple[int, int]:
        """(right, items) over every discipline."""
        return (
            sum(c for c, _ in self.categories.values()),
            sum(n for _, n in self.categories.values()),
        )


def cmmmu_evaluate(items: Iterable[CmmmuItem], rng: random.Random | None = None) -> CmmmuResult:
    """CMMMU's ``eval_script.py`` on response rows: readings, random draws and the table.

    Items are scored discipline by discipline in `CMMMU_CATEGORIES` order, each in the given
    order; an item of another discipline is scored nowhere (as the script, which asks for its
    six only). An empty multiple-choice response is read as nothing and wrong, with no draw;
    a multiple-choice response with nothing found draws ``rng.choice("ABCD")``, a true/false
    tie ``rng.choice(["对", "错"])``, in that order, from one stream.

    Args:
        items: The joined rows, in the answer file's order.
        rng: The stream; ``random.Random(CMMMU_SEED)`` (the script's) when None.

    """
    rng = rng if rng is not None else random.Random(CMMMU_SEED)
    by_category: dict[str, list[CmmmuItem]] = {c: [] for c in CMMMU_CATEGORIES}
    for item in items:
        if item.category in by_category:
            by_category[item.category].append(item)
    result = CmmmuResult()
    for category, rows in by_category.items():
        right = 0
        for item in rows:
            reading: str | list[str | float] | None
            if item.type == MULTI_CHOICE:
                reading = None
                if item.response and item.index2ans:
                    reading = cmmmu_multi_choice(item.response, item.index2ans)
                    if reading is None:
                        reading = rng.choice(list(_LETTERS))
                        result.guessed[item.id] = reading
                ok = reading == item.answer
            elif item.type == FILL_BLANK:
                reading = cmmmu_fill_blank(item.response, item.answer)
                ok = cmmmu_fill_correct(item.answer, reading)
            else:
                reading = cmmmu_true_false(item.response)
                if reading is None:
                    reading = rng.choice(["对", "错"])
                    result.guessed[item.id] = reading
                ok = reading == item.answer
            result.predicted[item.id] = reading
            result.correct[item.id] = ok
            right += ok
        result.categories[category] = (right, len(rows))
    return result
