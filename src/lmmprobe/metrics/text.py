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

# The per-answer matchers live with the other answer readers in `parse`; they are re-exported
# here because they are also metrics in their own right.
from lmmprobe.parse.open_ended import kie_correct, normalize_vqa_answer, ocr_correct

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
