"""Correctness of open-ended answers: ReForm-Eval's OCR and KIE rules.

OCR (ReForm-Eval, Li et al., 2023): keep ASCII letters, digits and whitespace, lowercase, and
count the answer correct when the ground truth occurs in the prediction as whole words. KIE:
normalize both with the official VQA answer normalization (Antol et al., 2015), then the same
whole-word containment. Edge cases where ReForm-Eval's code departs from its own definition are
noted where they are handled.
"""

from __future__ import annotations

import re

__all__ = ["kie_correct", "normalize_vqa_answer", "ocr_correct"]


# --------------------------------------------------------------------------------------------
# OCR (ReForm-Eval)

# ReForm-Eval's class is ASCII-only: accented and non-Latin letters are erased, not kept.
_OCR_DROP = re.compile(r"[^a-zA-Z0-9\s]")


def _ocr_tokens(text: str) -> list[str]:
    return _OCR_DROP.sub("", text).lower().split()


def ocr_correct(prediction: str, ground_truth: str) -> bool:
    r"""Whether an OCR answer is correct under ReForm-Eval's open-ended OCR rule.

    Both texts lose every character that is not an ASCII letter, digit or whitespace (the
    character is deleted, so ``"state-of-the-art"`` becomes ``"stateoftheart"``) and are
    lowercased. The answer is correct when the ground truth's words occur in the prediction as
    a contiguous run of whole words: ``"stop"`` is found in ``"The sign says STOP."`` but not in
    ``"stopped"``.

    Source: ReForm-Eval, ``OCROpenEndedMetric`` (``remove_special_chars`` then a ``\b``-bounded
    regex search). Departures: runs of whitespace count as one separator (their regex needed the
    exact spacing of a multi-word ground truth, so a line break between two words was a miss),
    and a ground truth left empty by the cleaning (e.g. ``"!!!"`` or non-Latin text) is never
    matched (their empty pattern matched any prediction containing a word).

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
# VQA answer normalization and KIE (ReForm-Eval)

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
# look-ahead, so in effect a period goes unless a digit follows it; we reproduce the effect.
# (VQA also passes re.UNICODE as the `count` argument, capping removals at 32; not reproduced.)
_PERIOD = re.compile(r"\.(?!\d)")
_DIGIT_COMMA_DIGIT = re.compile(r"\d,\d")


def _vqa_punctuation(text: str) -> str:
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
    return _PERIOD.sub("", out)


def normalize_vqa_answer(text: str) -> str:
    r"""Normalize an answer the way the official VQA evaluation does.

    Steps, in VQA's order: tabs and newlines become spaces and the text is stripped; the
    punctuation marks ``; / [ ] " { } ( ) = + \ _ - > < @ ` , ? !`` are deleted when they touch a
    space or when the text contains a digit-comma-digit group (so ``"1,000"`` becomes
    ``"1000"``), and replaced by a space otherwise; periods are deleted unless a digit follows;
    the text is lowercased and split on whitespace; number words ``zero`` … ``ten`` (and
    ``none``) become digits; the articles ``a``, ``an``, ``the`` are dropped; contractions
    written without their apostrophe are restored from VQA's table (``"dont"`` → ``"don't"``);
    words are joined by single spaces. Apostrophes, colons, ``$``, ``%`` and other marks outside
    the list are kept.

    Source: ``processPunctuation`` and ``processDigitArticle`` of the VQA evaluation
    (``vqaEval.py``, GT-Vision-Lab/VQA), as copied into ReForm-Eval's ``KIEOpenEndedMetric``.
    The period rule is what VQA's regular expression does (its look-behind is mistyped as a
    look-ahead), not what its comment intends; VQA's cap of 32 period removals (``re.UNICODE``
    passed as ``count``) is not reproduced.

    Args:
        text: An answer or ground truth.

    Returns:
        The normalized text; empty when nothing but articles and removed marks remained.

    """
    cleaned = _vqa_punctuation(text.replace("\n", " ").replace("\t", " ").strip())
    words = [_NUMBER_WORDS.get(w, w) for w in cleaned.lower().split()]
    return " ".join(_CONTRACTIONS.get(w, w) for w in words if w not in _ARTICLES)


def kie_correct(prediction: str, ground_truth: str) -> bool:
    r"""Whether a key-information-extraction answer is correct under ReForm-Eval's KIE rule.

    Both texts are normalized with `normalize_vqa_answer`; the answer is correct when the
    normalized ground truth occurs in the normalized prediction as whole words (not inside a
    longer word: ``"5"`` is found in ``"total 5 items"``, not in ``"15"``).

    Source: ReForm-Eval, ``KIEOpenEndedMetric`` (VQA normalization, then a ``\b``-bounded
    regex search). Departures: "whole word" is tested as "no word character right before or
    after the match" instead of with ``\b``, which differ only when the ground truth starts or
    ends with a non-word character (their ``\b50%\b`` could not find ``"50%"`` in
    ``"save 50% now"``); an empty normalized ground truth is never matched.

    Args:
        prediction: The model's answer.
        ground_truth: The reference value.

    Returns:
        True when the normalized ground truth occurs as whole words in the normalized prediction.

    """
    gt = normalize_vqa_answer(ground_truth)
    if not gt:
        return False
    pattern = rf"(?<!\w){re.escape(gt)}(?!\w)"
    return re.search(pattern, normalize_vqa_answer(prediction)) is not None
