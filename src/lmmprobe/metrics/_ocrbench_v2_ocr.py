"""OCRBench v2's text reading scores: page OCR (BLEU, METEOR, F1, edit distance) and spotting.

Reproduces ``eval_scripts/page_ocr_metric.py`` and ``spotting_metric.py`` (with the Robust
Reading Competition's end-to-end script ``spotting_eval/script.py`` it runs) at
`OCRBENCH_V2_COMMIT`. Page OCR uses the reference's libraries: NLTK's sentence BLEU, METEOR
(with WordNet) and set F-measure, jieba's segmentation where either text holds a Chinese
character; the character edit distance is rapidfuzz's (the unit-cost distance
``nltk.edit_distance`` computes). METEOR is NLTK's, given a stemmer and a WordNet reader that
remember each word's answer (`_CachedStemmer`, `_CachedWordNet`): the same figures, each
distinct word looked up once. Spotting scores the answer's ``[x1, y1, x2, y2, text]`` boxes
against the gold boxes as that script does with IoU > 0.5 and the transcription match; every box
is an axis-parallel rectangle with integer corners there, so its polygon areas (``Polygon3``)
are the rectangles' exact integer areas computed here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import Levenshtein

from lmmprobe.metrics.text import MetricUnavailable

__all__ = [
    "ITEM",
    "bracketed_items",
    "cal_per_metrics",
    "extract_bounding_boxes_robust",
    "nltk_ready",
    "page_ocr_score",
    "spotting_evaluation",
]

_EXTRA = "pip install 'lmmprobe[ocrbench]'"
_CHINESE = re.compile(r"[\u4e00-\u9fa5]")


def nltk_ready() -> None:
    """Check NLTK, its WordNet corpus (METEOR's synonyms) and jieba are there.

    Raises:
        MetricUnavailable: One is missing, with the command that installs it.

    """
    try:
        import jieba  # noqa: F401
        import nltk
    except ImportError as exc:
        raise MetricUnavailable(
            f"OCRBench v2's page OCR scores need nltk and jieba: {_EXTRA}"
        ) from exc
    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        try:
            nltk.data.find("corpora/wordnet.zip")
        except LookupError as exc:
            raise MetricUnavailable(
                "OCRBench v2's METEOR needs NLTK's WordNet corpus: run "
                "`python -m nltk.downloader wordnet` (or set NLTK_DATA to a folder holding "
                "corpora/wordnet)"
            ) from exc


_WORDS_REMEMBERED = 200_000
"""Distinct words whose stem and WordNet synsets are kept (least recently used dropped past it)."""


class _CachedStemmer:
    """NLTK's Porter stemmer (METEOR's default), each word's stem computed once.

    METEOR stems every word of both texts, and a stem takes about 50 microseconds: a runaway
    answer repeating a page (a million characters, ~150,000 words) spent seconds stemming the
    same few hundred words. A stem depends on the word alone, so remembering it changes nothing.
    """

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self.stem = lru_cache(maxsize=_WORDS_REMEMBERED)(PorterStemmer().stem)


class _Lemma:
    """A lemma as METEOR reads it: its name alone."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class _Synonyms:
    """The lemmas of all a word's synsets, as one synset METEOR's synonym step reads."""

    __slots__ = ("_lemmas",)

    def __init__(self, names: Sequence[str]) -> None:
        self._lemmas = tuple(_Lemma(n) for n in names)

    def lemmas(self) -> tuple[_Lemma, ...]:
        return self._lemmas


class _CachedWordNet:
    """NLTK's WordNet reader as METEOR's synonym step asks it, each word looked up once.

    METEOR asks ``synsets(word)`` for every answer word left unmatched (morphology included,
    about 30 microseconds) and takes the names of their lemmas that hold no ``_``, plus the word
    itself: the one thing it reads of them. Here a word's answer is those names, found once and
    given as one synset holding them (none where it has none), so the set METEOR builds for each
    occurrence is the set WordNet gives, without walking every synset and lemma again.
    """

    def __init__(self) -> None:
        from nltk.corpus import wordnet

        self._wordnet = wordnet
        self.synsets = lru_cache(maxsize=_WORDS_REMEMBERED)(self._synonyms)

    def _synonyms(self, word: str) -> tuple[_Synonyms, ...]:
        names = dict.fromkeys(
            lemma.name()
            for synset in self._wordnet.synsets(word)
            for lemma in synset.lemmas()
            if "_" not in lemma.name()
        )
        return (_Synonyms(list(names)),) if names else ()


@lru_cache(maxsize=1)
def _meteor_helpers() -> tuple[_CachedStemmer, _CachedWordNet]:
    # Built once, after `nltk_ready` has found NLTK and WordNet: their caches serve every answer.
    return _CachedStemmer(), _CachedWordNet()


def cal_per_metrics(pred: str, gt: str) -> dict[str, float | None]:
    """``cal_per_metrics``: BLEU, METEOR, F-measure, precision, recall and edit distance.

    Words are jieba's where either text holds a character in U+4E00..U+9FA5, else the texts
    split on whitespace. F-measure, precision and recall are NLTK's over the two word sets
    (None where one is empty). The edit distance is over characters, divided by the longer
    text's length.

    Raises:
        MetricUnavailable: NLTK, jieba or WordNet is missing.
        ZeroDivisionError: Both texts are empty (the script fails there too).

    """
    nltk_ready()
    import jieba
    from nltk.metrics import f_measure, precision, recall
    from nltk.translate import meteor_score
    from nltk.translate.bleu_score import sentence_bleu

    if _CHINESE.search(gt) or _CHINESE.search(pred):
        reference, hypothesis = jieba.lcut(gt), jieba.lcut(pred)
    else:
        reference, hypothesis = gt.split(), pred.split()
    ref_set, hyp_set = set(reference), set(hypothesis)
    stemmer, wordnet = _meteor_helpers()
    return {
        "bleu": sentence_bleu([reference], hypothesis),
        # NLTK's own METEOR (defaults otherwise), its per-word lookups remembered.
        "meteor": meteor_score.meteor_score(
            [reference], hypothesis, stemmer=stemmer, wordnet=wordnet
        ),
        "f_measure": f_measure(ref_set, hyp_set),
        "precision": precision(ref_set, hyp_set),
        "recall": recall(ref_set, hyp_set),
        "edit_dist": Levenshtein.distance(pred, gt) / max(len(pred), len(gt)),
    }


def page_ocr_score(pred: str, gt: str) -> float:
    """eval.py's OCR score: the mean of BLEU, METEOR, F-measure and 1 - edit distance.

    A missing figure (NLTK's F-measure of an empty word set) counts 0, as eval.py's
    ``get_value_or_zero`` counts it; the few task types that add the figures without it stop
    with a TypeError there instead, where this gives the same 0.
    """
    m = cal_per_metrics(pred, gt)
    bleu, meteor, f1, dist = (m[k] or 0.0 for k in ("bleu", "meteor", "f_measure", "edit_dist"))
    return (bleu + meteor + f1 + (1 - dist)) / 4


# --------------------------------------------------------------------------- spotting

ITEM = r"[\[\(]\s*([^\[\]\(\)]*?)\s*[\]\)]"
"""``extract_bounding_boxes_robust``'s pattern of a bracketed item (`bracketed_items`)."""
_BRACKET = re.compile(r"[\[\]\(\)]")


def bracketed_items(text: str) -> list[str]:
    r"""``re.findall(ITEM, text)`` in time linear in the text.

    The pattern's lazy group and the spaces after it overlap, so the engine rescans a long run
    of spaces from each of its characters. Its matches are each opening bracket whose next
    bracket closes, the text between them stripped of surrounding whitespace (the pattern's
    ``\s`` is what ``str.strip`` strips).
    """
    marks = [(m.start(), m.group()) for m in _BRACKET.finditer(text)]
    found, k = [], 0
    while k < len(marks):
        at, mark = marks[k]
        if mark in "[(" and k + 1 < len(marks) and marks[k + 1][1] in "])":
            found.append(text[at + 1 : marks[k + 1][0]].strip())
            k += 2
        else:
            k += 1
    return found


def _box(parts: Sequence[Any]) -> list[Any] | None:
    """One ``x1, y1, x2, y2, text`` item as the script keeps it, or None."""
    coords = [str(p).strip() for p in parts[:4]]
    text = str(parts[4]).replace("\n", "").strip().strip('"').strip("'")
    try:
        x1, y1, x2, y2 = (int(c) for c in coords)
    except ValueError:
        return None
    if not all(0 <= v <= 1000 for v in (x1, y1, x2, y2)):
        return None
    return [x1, y1, x2, y2, text]


def extract_bounding_boxes_robust(predict: str) -> list[list[Any]] | None:
    """``extract_bounding_boxes_robust``.

    The answer's boxes, read as a Python list literal (its items of at least five elements),
    else each bracketed ``x1, y1, x2, y2, text``; boxes outside 0..1000 or met before are
    dropped; None when none is left.
    """
    try:
        data: Any = ast.literal_eval(predict)
    except Exception:  # the script's broad except: any failure falls to the pattern
        data = None
    results: list[list[Any]] = []
    seen: set[tuple[Any, ...]] = set()

    def keep(parts: Sequence[Any]) -> None:
        box = _box(parts)
        if box is not None and tuple(box) not in seen:
            seen.add(tuple(box))
            results.append(box)

    if data is not None:
        if isinstance(data, (list, tuple)):
            for item in data:
                if isinstance(item, (list, tuple)) and len(item) >= 5:
                    keep(item)
    else:
        for item in bracketed_items(predict):
            parts = item.split(",", 4)
            if len(parts) >= 5:
                keep(parts)
    return results or None


_SPECIAL = "!?.:,*\"()·[]/'"
# x1,y1,...,x4,y4,transcription (rrc_evaluation_funcs_1_1.get_tl_line_values, LTRB off).
_LINE = re.compile(r"^\s*" + r"\s*,\s*".join([r"(-?[0-9]+)"] * 8) + r"\s*,(.*)$")
_QUOTED = re.compile(r'^\s*"(.*)"\s*$')


def _transcription(text: str) -> str:
    """The text as the RRC reader gets it back from its ``x1,...,y4,text`` line."""
    quoted = _QUOTED.match(text)
    return quoted.group(1).replace("\\\\", "\\").replace('\\"', '"') if quoted else text


def _lines(boxes: Sequence[tuple[int, int, int, int, str]]) -> list[tuple[tuple[int, ...], str]]:
    r"""The boxes through the script's text file: lines split on newlines, ``\r`` dropped."""
    text = "\n".join(
        f"{x1},{y1},{x2},{y1},{x2},{y2},{x1},{y2},{rec}" for x1, y1, x2, y2, rec in boxes
    )
    out = []
    for line in text.split("\n"):
        line = line.replace("\r", "")
        if not line:
            continue
        match = _LINE.match(line)
        if match is None:
            raise ValueError(f"the spotting file's line is not x1,...,y4,text: {line[:80]!r}")
        points = tuple(int(match.group(i)) for i in range(1, 9))
        out.append((points, _transcription(match.group(9))))
    return out


def _rect(points: tuple[int, ...]) -> tuple[int, int, int, int]:
    # The script's polygon (x1,y1),(x2,y1),(x2,y2),(x1,y2): the rectangle of its corners.
    return points[0], points[1], points[4], points[5]


def _area(r: tuple[int, int, int, int]) -> int:
    return abs(r[2] - r[0]) * abs(r[3] - r[1])


def _intersection(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> int:
    w = min(max(a[0], a[2]), max(b[0], b[2])) - max(min(a[0], a[2]), min(b[0], b[2]))
    h = min(max(a[1], a[3]), max(b[1], b[3])) - max(min(a[1], a[3]), min(b[1], b[3]))
    return w * h if w > 0 and h > 0 else 0


def _iou(det: tuple[int, int, int, int], gt: tuple[int, int, int, int]) -> float:
    inter = _intersection(det, gt)
    union = _area(det) + _area(gt) - inter
    return inter / union if union else 0.0


def _transcription_match(gt: str, det: str) -> bool:
    """``transcription_match`` (special characters allowed at the gold's ends only)."""
    if gt == det:
        return True
    first, last = _SPECIAL.find(gt[0]) > -1, _SPECIAL.find(gt[-1]) > -1
    if first and gt[1:] == det:
        return True
    if last and gt[:-1] == det:
        return True
    return first and last and gt[1:-1] == det


def spotting_evaluation(prediction: Sequence[Sequence[Any]], bboxes: Any, contents: Any) -> float:
    """``spotting_evaluation``: the end-to-end H-mean of the answer's boxes on one image.

    The gold boxes are each polygon's bounding rectangle; an answer box with x1 >= x2 or
    y1 >= y2 is dropped; a gold text ``###`` is don't-care (an answer box mostly inside it is
    dropped too); a pair matches at IoU > 0.5 (first free gold, then first free answer box) and
    counts when the upper-cased texts match.

    Raises:
        ValueError: A gold text is empty while an answer's is not, or a text breaks the
            script's line format (the script stops on both).

    """
    dets = [
        (int(x1), int(y1), int(x2), int(y2), str(rec))
        for x1, y1, x2, y2, rec in prediction
        if not (x1 >= x2 or y1 >= y2)
    ]
    gts = []
    for bbox, rec in zip(bboxes, contents, strict=False):
        xs, ys = bbox[0::2], bbox[1::2]
        gts.append((min(xs), min(ys), max(xs), max(ys), rec))
    if not dets or not gts:
        return 0
    gt_lines, det_lines = _lines(gts), _lines(dets)
    gt_rects = [_rect(p) for p, _ in gt_lines]
    det_rects = [_rect(p) for p, _ in det_lines]
    dont_care = [i for i, (_, t) in enumerate(gt_lines) if t == "###"]
    det_dont_care = set()
    for d, rect in enumerate(det_rects):
        for g in dont_care:
            area = _area(rect)
            if area and _intersection(gt_rects[g], rect) / area > 0.5:
                det_dont_care.add(d)
                break
    gt_used, det_used, correct = set(), set(), 0
    for g, grect in enumerate(gt_rects):
        for d, drect in enumerate(det_rects):
            if g in gt_used or d in det_used or g in dont_care or d in det_dont_care:
                continue
            if _iou(drect, grect) > 0.5:
                gt_used.add(g)
                det_used.add(d)
                gt_text, det_text = gt_lines[g][1].upper(), det_lines[d][1].upper()
                if gt_text != det_text and not gt_text:
                    raise ValueError("a gold spotting text is empty (the RRC script fails there)")
                correct += _transcription_match(gt_text, det_text)
    care_gt = len(gt_lines) - len(dont_care)
    care_det = len(det_lines) - len(det_dont_care)
    recall = correct / care_gt if care_gt else 0.0
    precision = correct / care_det if care_det else 0.0
    return 0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)
