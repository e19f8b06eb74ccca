"""Correctness of open-ended answers: ReForm-Eval's OCR and KIE rules, and lmmprobe's own.

Two families, never substituted for one another:

- ReForm-Eval's (Li et al., 2023), reproduced exactly, quirks included: `reform_ocr_correct`
  (``OCROpenEndedMetric``) and `reform_kie_correct` (``KIEOpenEndedMetric``), on top of the
  official VQA answer normalization `normalize_vqa_answer` (Antol et al., 2015).
- lmmprobe's own, the default of a run: `ocr_correct_words` and `kie_correct_strict`. They keep
  ReForm-Eval's idea (clean, then whole-word containment) but not the edge cases where its code
  departs from that idea: a ground truth cleaned to nothing matches nothing, whitespace runs are
  one separator, "whole word" means no word character on either side.

A run uses ReForm-Eval's rules when its matcher is ``reform`` (`lmmprobe.run.scoring`), and
ReForm-Eval prediction files are always scored with them (`lmmprobe.predictions.reform`).

lmmprobe's yes/no reading (`read_yes_no`, ours) reads what an answer says to a yes/no question
("Yes, it is." says yes): the HallusionBench figures and matcher read answers with it, and so
does a run's ``accuracy`` on an open-ended sample whose gold is yes or no and whose metadata
asks for it (``yes_no_reading``: HEMM's yes/no datasets; `lmmprobe.run.scoring`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

__all__ = [
    "kie_correct_strict",
    "normalize_vqa_answer",
    "normalize_vqa_answer_uncapped",
    "ocr_correct_words",
    "read_yes_no",
    "reform_kie_correct",
    "reform_ocr_clean",
    "reform_ocr_correct",
]


# --------------------------------------------------------------------------------------------
# OCR

# ReForm-Eval's class is ASCII-only: accented and non-Latin letters are erased, not kept. The
# `\s` is Unicode-aware, so every kind of whitespace survives the cleaning.
_OCR_DROP = re.compile(r"[^a-zA-Z0-9\s]")


def reform_ocr_clean(text: str) -> str:
    """ReForm-Eval's OCR cleaning: drop all but ASCII letters, digits, whitespace; lowercase.

    Whitespace is kept as it is (not collapsed or stripped), as in ReForm-Eval.
    """
    return _OCR_DROP.sub("", text).lower()


def _joined(value: str | Sequence[str], what: str) -> str:
    # ReForm-Eval joins a list with single spaces and uses any other value as text; a value
    # that is neither made their metric fail, so it is refused here rather than converted.
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(value)
    raise TypeError(f"{what}: expected text or a list of texts, got {value!r}")


def reform_ocr_correct(prediction: str | Sequence[str], ground_truth: str | Sequence[str]) -> bool:
    r"""Whether an OCR answer is correct under ReForm-Eval's ``OCROpenEndedMetric``, exactly.

    A list (prediction or ground truth) is first joined with single spaces into one text, so a
    list of acceptable answers becomes ONE ground truth that must appear as a whole. Both texts
    go through `reform_ocr_clean`; the answer is correct when the regular expression
    ``<ground truth>`` is found in the prediction.

    Quirks reproduced (they decide outcomes): a ground truth cleaned to the empty string
    (``"!!!"``, ``"-"``, non-Latin text) gives the pattern ````, found in any prediction
    holding a letter or digit; the ground truth's whitespace must appear exactly (two spaces or a
    tab between its words need the same in the prediction); a ground truth cleaned to leading or
    trailing whitespace needs a word character beside that whitespace.

    Source: ReForm-Eval ``metrics/ocropenended.py``, ``OCROpenEndedMetric.__call__``
    (``remove_special_chars``, ``has_word``).

    Args:
        prediction: The model's answer (text, or a list of texts).
        ground_truth: The reference (text, or a list of texts).

    Returns:
        True when ReForm-Eval's metric scores the answer 1.

    Raises:
        TypeError: A value is neither text nor a list of texts (ReForm-Eval's metric fails too).

    """
    gt = reform_ocr_clean(_joined(ground_truth, "ground_truth"))
    pred = reform_ocr_clean(_joined(prediction, "prediction"))
    return re.search(r"\b" + re.escape(gt) + r"\b", pred) is not None


def _ocr_tokens(text: str) -> list[str]:
    return reform_ocr_clean(text).split()


def ocr_correct_words(prediction: str, ground_truth: str) -> bool:
    """Whether an OCR answer is correct under lmmprobe's whole-word rule (ours, a run's default).

    Both texts are cleaned as ReForm-Eval cleans them (`reform_ocr_clean`: only ASCII letters,
    digits and whitespace kept, so ``"state-of-the-art"`` becomes ``"stateoftheart"``; then
    lowercased) and split into words; the answer is correct when the ground truth's words occur
    in the prediction as a contiguous run of whole words: ``"stop"`` is found in ``"The sign
    says STOP."`` but not in ``"stopped"``.

    Why it differs from `reform_ocr_correct`: any run of whitespace is one separator (a line
    break between two words of the answer still matches), and a ground truth with no word left
    after cleaning is never matched (ReForm-Eval's empty pattern matches nearly everything).
    Several acceptable answers are tried one by one by the caller, not joined.

    Args:
        prediction: The model's answer.
        ground_truth: The reference text.

    Returns:
        True when the cleaned ground truth occurs as whole words in the cleaned prediction.

    """
    gt = _ocr_tokens(ground_truth)
    if not gt:
        return False
    # Tokens hold letters and digits only, so space-padded containment is whole-word matching.
    return f" {' '.join(gt)} " in f" {' '.join(_ocr_tokens(prediction))} "


# --------------------------------------------------------------------------------------------
# VQA answer normalization and KIE

# The official VQA contraction table, in "key=value" pairs. Its capitalised keys ("Id've",
# "I'dve", "Im", "Ive") are left out: VQA looks words up after lowercasing them, so those keys
# never matched. The reversed entry somebody'd=somebodyd is VQA's own and kept, so normalized
# answers stay identical to theirs.
_CONTRACTIONS_TABLE = """
    aint=ain't arent=aren't cant=can't couldve=could've couldnt=couldn't
    couldn'tve=couldn't've couldnt've=couldn't've didnt=didn't doesnt=doesn't dont=don't
    hadnt=hadn't hadnt've=hadn't've hadn'tve=hadn't've hasnt=hasn't havent=haven't hed=he'd
    hed've=he'd've he'dve=he'd've hes=he's howd=how'd howll=how'll hows=how's isnt=isn't
    itd=it'd itd've=it'd've it'dve=it'd've itll=it'll let's=let's maam=ma'am
    mightnt=mightn't mightnt've=mightn't've mightn'tve=mightn't've mightve=might've
    mustnt=mustn't mustve=must've neednt=needn't notve=not've oclock=o'clock
    oughtnt=oughtn't ow's'at='ow's'at 'ows'at='ow's'at 'ow'sat='ow's'at shant=shan't
    shed've=she'd've she'dve=she'd've she's=she's shouldve=should've shouldnt=shouldn't
    shouldnt've=shouldn't've shouldn'tve=shouldn't've somebody'd=somebodyd
    somebodyd've=somebody'd've somebody'dve=somebody'd've somebodyll=somebody'll
    somebodys=somebody's someoned=someone'd someoned've=someone'd've
    someone'dve=someone'd've someonell=someone'll someones=someone's
    somethingd=something'd somethingd've=something'd've something'dve=something'd've
    somethingll=something'll thats=that's thered=there'd thered've=there'd've
    there'dve=there'd've therere=there're theres=there's theyd=they'd theyd've=they'd've
    they'dve=they'd've theyll=they'll theyre=they're theyve=they've twas='twas wasnt=wasn't
    wed've=we'd've we'dve=we'd've weve=we've werent=weren't whatll=what'll whatre=what're
    whats=what's whatve=what've whens=when's whered=where'd wheres=where's whereve=where've
    whod=who'd whod've=who'd've who'dve=who'd've wholl=who'll whos=who's whove=who've
    whyll=why'll whyre=why're whys=why's wont=won't wouldve=would've wouldnt=wouldn't
    wouldnt've=wouldn't've wouldn'tve=wouldn't've yall=y'all yall'll=y'all'll
    y'allll=y'all'll yall'd've=y'all'd've y'alld've=y'all'd've y'all'dve=y'all'd've
    youd=you'd youd've=you'd've you'dve=you'd've youll=you'll youre=you're youve=you've
"""
_CONTRACTIONS: dict[str, str] = {
    key: value for key, _, value in (pair.partition("=") for pair in _CONTRACTIONS_TABLE.split())
}

# VQA maps "none" to "0" too: "how many ...? none" is a count.
_NUMBER_WORDS: dict[str, str] = {
    word: str(i)
    for i, word in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    )
} | {"none": "0"}

_ARTICLES = frozenset({"a", "an", "the"})

_VQA_PUNCT: tuple[str, ...] = tuple(';/[]"{}()=+\\_-><@`,?!')

# VQA meant to keep periods inside numbers ("3.5"), but its look-behind is written as a
# look-ahead that can never fail, so in effect a period goes unless a digit follows it.
_PERIOD = re.compile(r"\.(?!\d)")
_DIGIT_COMMA_DIGIT = re.compile(r"\d,\d")
# VQA passes re.UNICODE (32) where `re.sub` takes its `count`: at most 32 periods are removed.
_VQA_PERIOD_CAP = int(re.UNICODE)


def _vqa_punctuation(text: str, period_cap: int) -> str:
    out = text
    # VQA's rule, applied to the whole text at once: a mark touching a space, or any mark in a
    # text containing a digit-comma-digit group, is deleted; otherwise it becomes a space.
    # The tests look at the original text, not the text rewritten so far.
    has_number_comma = _DIGIT_COMMA_DIGIT.search(text) is not None
    for mark in _VQA_PUNCT:
        if has_number_comma or f"{mark} " in text or f" {mark}" in text:
            out = out.replace(mark, "")
        else:
            out = out.replace(mark, " ")
    return _PERIOD.sub("", out, count=period_cap)


def _vqa_words(cleaned: str) -> str:
    words = [_NUMBER_WORDS.get(w, w) for w in cleaned.lower().split()]
    return " ".join(_CONTRACTIONS.get(w, w) for w in words if w not in _ARTICLES)


def normalize_vqa_answer(text: str) -> str:
    r"""Normalize an answer exactly as the official VQA evaluation (and ReForm-Eval's KIE) does.

    Steps, in VQA's order: tabs and newlines become spaces and the text is stripped; the
    punctuation marks ``; / [ ] " { } ( ) = + \ _ - > < @ ` , ? !`` are deleted when they touch a
    space or when the text contains a digit-comma-digit group (so ``"1,000"`` becomes
    ``"1000"``), and replaced by a space otherwise; the first 32 periods not followed by a digit
    are deleted; the text is lowercased and split on whitespace; number words ``zero`` … ``ten``
    (and ``none``) become digits; the articles ``a``, ``an``, ``the`` are dropped; contractions
    written without their apostrophe are restored from VQA's table (``"dont"`` → ``"don't"``);
    words are joined by single spaces. Apostrophes, colons, ``$``, ``%`` and other marks outside
    the list are kept.

    Quirks reproduced: the period rule is what VQA's regular expression does (its look-behind
    is mistyped as a look-ahead), not what its comment intends; only 32 periods are removed
    because VQA passes ``re.UNICODE`` (= 32) as ``re.sub``'s ``count``; the table's capitalised
    keys (``"Im"``) never match, since words are lowercased first.

    Source: ``processPunctuation`` and ``processDigitArticle`` of the VQA evaluation
    (``vqaEval.py``, GT-Vision-Lab/VQA), as copied into ReForm-Eval's ``KIEOpenEndedMetric``.

    Args:
        text: An answer or ground truth.

    Returns:
        The normalized text; empty when nothing but articles and removed marks remained.

    """
    stripped = text.replace("\n", " ").replace("\t", " ").strip()
    return _vqa_words(_vqa_punctuation(stripped, _VQA_PERIOD_CAP))


def normalize_vqa_answer_uncapped(text: str) -> str:
    """`normalize_vqa_answer` without VQA's cap of 32 period removals (lmmprobe's, for strict KIE).

    Every period not followed by a digit is deleted, as VQA's code intends; the two differ only
    on texts with more than 32 such periods.
    """
    stripped = text.replace("\n", " ").replace("\t", " ").strip()
    return _vqa_words(_vqa_punctuation(stripped, 0))


def _reform_has_word(sentence: str, word: str) -> bool:
    # ReForm-Eval's has_word: \b on both sides, even when `word` is empty or starts or ends
    # with a non-word character.
    return re.search(r"\b" + re.escape(word) + r"\b", sentence) is not None


def reform_kie_correct(prediction: str, ground_truth: str | Sequence[str]) -> bool:
    r"""Whether a KIE answer is correct under ReForm-Eval's ``KIEOpenEndedMetric``, exactly.

    Both texts are normalized with `normalize_vqa_answer`; the answer is correct when the
    regular expression ``<ground truth>`` is found in the normalized prediction. A list of
    ground truths is tried in order and any match counts (the metric's list branch).

    Quirks reproduced (they decide outcomes): a ground truth that normalizes to the empty string
    (``"? ? ?"``, ``"/A"``, ``"-"``, ``"the"``) gives the pattern ````, found in any
    prediction holding a word character; ```` next to a ground truth's leading or trailing
    non-word character demands a word character on the other side of it (``"50%"`` is not found
    in ``"save 50% now"``, ``"$5"`` not in ``"costs $5"``); only 32 periods are removed.

    Source: ReForm-Eval ``metrics/ocropenended.py``, ``KIEOpenEndedMetric.__call__``
    (``processPunctuation``, ``processDigitArticle``, ``has_word``). ReForm-Eval's
    ``metric_eval`` cannot use the list branch (it returns a bare 0/1 that it fails to unpack);
    `lmmprobe.predictions.reform` says so when a file has list answers.

    Args:
        prediction: The model's answer.
        ground_truth: The reference value, or a list of acceptable values.

    Returns:
        True when ReForm-Eval's metric scores the answer 1.

    Raises:
        TypeError: A value is not text (or, for the ground truth, a list of texts).

    """
    if not isinstance(prediction, str):
        raise TypeError(f"prediction: expected text, got {prediction!r}")
    if isinstance(ground_truth, str):
        truths: Sequence[str] = [ground_truth]
    elif isinstance(ground_truth, list) and all(isinstance(g, str) for g in ground_truth):
        truths = ground_truth
    else:
        raise TypeError(f"ground_truth: expected text or a list of texts, got {ground_truth!r}")
    pred = normalize_vqa_answer(prediction)
    return any(_reform_has_word(pred, normalize_vqa_answer(gt)) for gt in truths)


def kie_correct_strict(prediction: str, ground_truth: str) -> bool:
    """Whether a KIE answer is correct under lmmprobe's strict KIE rule (ours, a run's default).

    Both texts are normalized with `normalize_vqa_answer_uncapped`; the answer is correct when
    the normalized ground truth occurs in the normalized prediction with no word character
    right before or after it (``"5"`` is found in ``"total 5 items"``, not in ``"15"``;
    ``"50%"`` is found in ``"save 50% now"``).

    Why it differs from `reform_kie_correct`: a ground truth that normalizes to nothing
    (``"? ? ?"``, ``"-"``) is never matched instead of matching any answer; "whole word" is "no
    word character beside the match", so ground truths starting or ending with ``$``, ``%`` and
    the like can be found; every period is normalized, not only the first 32.

    Args:
        prediction: The model's answer.
        ground_truth: The reference value.

    Returns:
        True when the normalized ground truth occurs as whole words in the normalized prediction.

    """
    gt = normalize_vqa_answer_uncapped(ground_truth)
    if not gt:
        return False
    pattern = rf"(?<!\w){re.escape(gt)}(?!\w)"
    return re.search(pattern, normalize_vqa_answer_uncapped(prediction)) is not None


# --------------------------------------------------------------------------------------------
# Yes/no answers (ours)

# Phrases by which an answer says it cannot tell. HallusionBench's judge (GPT-4, asked for
# "correct", "incorrect" or "unclear") gives "unclear" only to an answer that is unclear about
# the answer; an answer the rules cannot read is not thereby uncertain.
_UNSURE = re.compile(
    r"\b(?:can ?not|can[’']t|unable to|impossible to|not possible to|no way to)\s+"
    r"(?:be\s+)?(?:tell|say|determine|determined|know|answer|answered|confirm|confirmed|"
    r"judge|decide|verify|verified)\b"
    r"|\b(?:not sure|unsure|uncertain|unclear|hard to (?:say|tell)|difficult to (?:say|tell)"
    r"|(?:do not|don[’']t) know|not (?:enough|sufficient) information|insufficient information"
    r"|not clear)\b",
    re.IGNORECASE,
)


def read_yes_no(answer: str) -> Literal["yes", "no", "unclear"] | None:
    """What an answer says by lmmprobe's rule: ``yes``, ``no``, ``unclear`` or None (unread).

    ``unclear`` only for an answer stating uncertainty ("I cannot tell", "not sure", "hard to
    say"...), as HallusionBench's judge's "unclear" is for an answer unclear about the answer.
    Otherwise the first sentence is read by its explicit words: ``yes`` when it has the word
    yes, ``no`` when it has no or not; an answer with both or neither is unread (None). Never
    a guess: "It is hateful." says neither.
    """
    if _UNSURE.search(answer):
        return "unclear"
    first = answer.split(".")[0] if "." in answer else answer
    words = {w.strip(",;:!?\"'()").lower() for w in first.split()}
    says_yes, says_no = "yes" in words, bool(words & {"no", "not"})
    if says_yes == says_no:
        return None
    return "yes" if says_yes else "no"
