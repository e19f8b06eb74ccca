"""Open-ended answer metrics: OCR and KIE correctness, ANLS, and caption scores.

The OCR and KIE definitions follow ReForm-Eval (Li et al., 2023, "ReForm-Eval: Evaluating
Large Vision Language Models via Unified Re-Formulation of Task-Oriented Benchmarks",
arXiv:2310.02569; code: ``metrics/ocropenended.py`` of github.com/FudanDISC/ReForm-Eval).
KIE answers are normalized as in the official VQA evaluation (Antol et al., 2015;
``vqaEval.py`` of github.com/GT-Vision-Lab/VQA), which ReForm-Eval reuses. ANLS is the
ST-VQA / DocVQA metric (Biten et al., 2019, arXiv:1905.13648). Caption scores come from
pycocoevalcap (Chen et al., 2015, "Microsoft COCO Captions", arXiv:1504.00325), the library
ReForm-Eval uses, fed without its PTB tokenizer.

Where this module departs from ReForm-Eval's code, it does so only in edge cases where that
code's result contradicts its own stated definition; each departure is named in the docstring
of the function concerned.
"""

from __future__ import annotations

import functools
import logging
import re
import shutil
from collections.abc import Mapping, Sequence
from typing import Any

from rapidfuzz.distance import Levenshtein

__all__ = [
    "CAPTION_METRICS",
    "MetricUnavailable",
    "anls",
    "caption_scores",
    "kie_correct",
    "normalize_vqa_answer",
    "ocr_correct",
]

logger = logging.getLogger(__name__)

CAPTION_METRICS: tuple[str, ...] = (
    "BLEU-1",
    "BLEU-2",
    "BLEU-3",
    "BLEU-4",
    "METEOR",
    "ROUGE-L",
    "CIDEr",
)
"""Keys `caption_scores` can return, in this order (METEOR only when Java is available)."""

_INSTALL_HINT = "pip install 'lmmprobe[metrics]'"


class MetricUnavailable(RuntimeError):
    """A metric cannot be computed here because something it needs is missing.

    Raised when the optional library behind a metric is not installed (the message carries
    ``pip install 'lmmprobe[metrics]'``), or when METEOR is explicitly requested and no Java
    runtime is found or the METEOR process fails.
    """


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


# --------------------------------------------------------------------------------------------
# ANLS (ST-VQA, DocVQA)


def _anls_text(text: str) -> str:
    # The ST-VQA/DocVQA evaluation scripts lowercase, strip and collapse inner whitespace.
    return " ".join(text.strip().lower().split())


def anls(prediction: str, ground_truths: Sequence[str], threshold: float = 0.5) -> float:
    """Normalized Levenshtein similarity of one answer, the per-sample term of ANLS.

    For each ground truth ``g``, ``NL = levenshtein(p, g) / max(len(p), len(g))`` on texts that
    are lowercased, stripped and whitespace-collapsed; the sample scores
    ``max over g of (1 - NL if NL < threshold else 0)``. ANLS is the mean of this over samples.
    Two empty texts have distance 0 (similarity 1).

    Source: Biten et al., "Scene Text Visual Question Answering", ICCV 2019 (arXiv:1905.13648),
    section 4; the same definition and threshold 0.5 are used by DocVQA (Mathew et al., 2021).

    Args:
        prediction: The model's answer.
        ground_truths: Accepted answers (at least one). A bare string counts as one answer.
        threshold: Normalized distances at or above this score 0; in ``(0, 1]``.

    Returns:
        The similarity in ``[0, 1]``.

    Raises:
        ValueError: No ground truth is given, or `threshold` is outside ``(0, 1]``.

    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    # A str is a Sequence[str] of characters; scoring against each letter would be silently wrong.
    gts = [ground_truths] if isinstance(ground_truths, str) else list(ground_truths)
    if not gts:
        raise ValueError("anls needs at least one ground truth")
    pred = _anls_text(prediction)
    best = 0.0
    for raw in gts:
        gt = _anls_text(raw)
        longest = max(len(pred), len(gt))
        nl = Levenshtein.distance(pred, gt) / longest if longest else 0.0
        if nl < threshold:
            best = max(best, 1.0 - nl)
    return best


# --------------------------------------------------------------------------------------------
# Caption scores (pycocoevalcap)

_CAPTION_PUNCT = re.compile(r"[^\w\s]")


def _caption_text(text: str) -> str:
    # Stand-in for the PTB tokenizer: lowercase, punctuation as a separator, single spaces
    # (pycocoevalcap's ROUGE-L splits on " " exactly, so the spacing must be single).
    return " ".join(_CAPTION_PUNCT.sub(" ", text.lower()).split())


@functools.cache
def _warn_meteor_skipped(reason: str) -> None:
    # Cached so a run scoring many subsets logs the reason once, not once per call.
    logger.warning("METEOR left out of the caption scores: %s", reason)


def _find_java() -> str | None:
    return shutil.which("java")


def _meteor_line_safe(text: str) -> str:
    # METEOR's stdio protocol is line-based with " ||| " separators: a newline or "|||" inside
    # a caption would desynchronise it (and hang the reader). pycocoevalcap only guards the
    # hypothesis, and only against "|||".
    return " ".join(text.replace("|||", " ").split())


def _meteor(gts: dict[str, list[str]], res: dict[str, list[str]]) -> float:
    try:
        from pycocoevalcap.meteor.meteor import Meteor  # type: ignore[import-untyped]
    except ImportError as exc:
        raise MetricUnavailable(
            f"METEOR needs pycocoevalcap ({exc}); run: {_INSTALL_HINT}"
        ) from exc
    safe_gts = {k: [_meteor_line_safe(r) for r in v] for k, v in gts.items()}
    safe_res = {k: [_meteor_line_safe(r) for r in v] for k, v in res.items()}
    try:
        scorer: Any = Meteor()  # starts `java -jar meteor-1.5.jar` with 2 GB of heap
    except OSError as exc:
        raise MetricUnavailable(f"could not start the METEOR Java process: {exc}") from exc
    try:
        score, _ = scorer.compute_score(safe_gts, safe_res)
    except (OSError, ValueError) as exc:
        raise MetricUnavailable(f"the METEOR Java process failed: {exc!r}") from exc
    finally:
        # pycocoevalcap 1.2 takes a lock in compute_score and releases it only on success; its
        # __del__ takes the lock again, so after a failure it would block forever. Stop the
        # process and free the lock here; __del__ then has nothing left to wait for.
        scorer.meteor_p.kill()
        scorer.meteor_p.wait()
        if scorer.lock.locked():
            scorer.lock.release()
    return float(score)


def caption_scores(
    predictions: Mapping[str, str],
    references: Mapping[str, Sequence[str]],
    *,
    meteor: bool | None = None,
    tokenize: bool = True,
) -> dict[str, float]:
    """Corpus-level caption metrics: BLEU-1..4, METEOR, ROUGE-L and CIDEr(-D).

    Computed with pycocoevalcap's scorers, as ReForm-Eval does, without its PTB tokenizer (a
    Java program). With ``tokenize=True`` each caption is lowercased, punctuation becomes a
    word separator, and whitespace is collapsed; ``tokenize=False`` feeds the raw strings, split
    on whitespace by the scorers, which is exactly what ReForm-Eval's code does.

    The definitions are the scorers': BLEU (Papineni et al., 2002) is corpus-level, with the
    "closest reference length" brevity penalty and pycocoevalcap's tiny smoothing, so a perfect
    match gives 1 up to ~1e-9; ROUGE-L (Lin, 2004) is the mean over images of the LCS F-measure
    with beta 1.2 against the best-matching reference; CIDEr is CIDEr-D (Vedantam et al., CVPR
    2015: TF-IDF n-grams, n = 1..4, clipping, Gaussian length penalty sigma 6, scaled by 10),
    whose IDF comes from the references of the images scored together, so it depends on the
    corpus and is 0 for a corpus of one image; METEOR is Meteor 1.5 (Denkowski and Lavie,
    2014) run with ``-l en -norm``.

    Args:
        predictions: Image id → the model's caption.
        references: Image id → its reference captions (at least one each); the same ids as
            `predictions`.
        meteor: None (default): include METEOR when a Java runtime is found, else omit it and
            log one warning. True: METEOR is required; raise `MetricUnavailable` when it cannot
            be computed. False: skip it (it starts a Java process, several seconds).
        tokenize: Apply the simple tokenization described above (default) or not.

    Returns:
        Scores keyed by the names in `CAPTION_METRICS`; BLEU, METEOR and ROUGE-L lie in
        ``[0, 1]``, CIDEr in ``[0, 10]``.

    Raises:
        ValueError: No predictions, ids that differ between the two mappings, or an image
            without references.
        MetricUnavailable: pycocoevalcap is not installed, or METEOR was required and no Java
            runtime is found or its process fails.

    """
    try:
        from pycocoevalcap.bleu.bleu import Bleu  # type: ignore[import-untyped]
        from pycocoevalcap.cider.cider import Cider  # type: ignore[import-untyped]
        from pycocoevalcap.rouge.rouge import Rouge  # type: ignore[import-untyped]
    except ImportError as exc:
        raise MetricUnavailable(
            f"caption metrics need pycocoevalcap ({exc}); run: {_INSTALL_HINT}"
        ) from exc

    if not predictions:
        raise ValueError("caption_scores needs at least one prediction")
    if set(predictions) != set(references):
        extra = sorted(set(predictions) - set(references))[:5]
        missing = sorted(set(references) - set(predictions))[:5]
        raise ValueError(
            "predictions and references must cover the same image ids; "
            f"without references: {extra}, without a prediction: {missing} (first 5 each)"
        )
    prep = _caption_text if tokenize else str
    res: dict[str, list[str]] = {}
    gts: dict[str, list[str]] = {}
    for image_id, caption in predictions.items():
        refs = references[image_id]
        if isinstance(refs, str) or not refs:
            raise ValueError(
                f"image {image_id!r}: references must be a non-empty list of captions, got {refs!r}"
            )
        res[image_id] = [prep(caption)]
        gts[image_id] = [prep(r) for r in refs]

    bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    rouge, _ = Rouge().compute_score(gts, res)
    cider, _ = Cider().compute_score(gts, res)
    scores = {f"BLEU-{n}": float(bleu[n - 1]) for n in range(1, 5)}

    if meteor is not False:
        if _find_java() is None:
            reason = (
                "no Java runtime on PATH (METEOR 1.5 is a Java program); install one, e.g. "
                "apt-get install default-jre, or pass meteor=False"
            )
            if meteor:
                raise MetricUnavailable(f"METEOR was requested but there is {reason}")
            _warn_meteor_skipped(reason)
        elif meteor:
            scores["METEOR"] = _meteor(gts, res)
        else:
            try:
                scores["METEOR"] = _meteor(gts, res)
            except MetricUnavailable as exc:
                _warn_meteor_skipped(str(exc))

    scores["ROUGE-L"] = float(rouge)
    scores["CIDEr"] = float(cider)
    return {name: scores[name] for name in CAPTION_METRICS if name in scores}
