"""Cost of OCRBench v2's page OCR score on runaway answers: NLTK's METEOR plain and remembered.

Scores one long answer of each shape with `lmmprobe.metrics.ocrbench_v2.score_item` (the page
OCR types: BLEU, METEOR, word-set F-measure and edit distance, jieba words for Chinese) twice,
side by side: with METEOR given NLTK's own stemmer and WordNet reader (``plain``: every word
stemmed and looked up in WordNet again, as before re-test 16 #7) and as lmmprobe scores it
(``remembered``: each distinct word once). The shapes:

- ``repeat en``: a model repeating a page until its tokens run out (a few hundred words over
  and over);
- ``distinct en``: every word new (six random letters each): nothing to remember, the worst
  case for the lookups;
- ``repeat cn``: a Chinese page repeated (jieba's segmentation of the whole answer dominates).

Both figures of each shape must be equal (checked). WordNet is loaded before timing. The last
line gives each shape's seconds, remembered, and the speed-up on the repeated English page.

Usage: python benchmarks/ocrbench_v2_page_ocr.py [--chars 1000000]
"""

from __future__ import annotations

import argparse
import random
import string
import time
import warnings
from collections.abc import Callable
from typing import Any

import lmmprobe.metrics._ocrbench_v2_ocr as ocr
from lmmprobe.metrics.ocrbench_v2 import OcrbenchV2Item, score_item

_PAGE = (
    "Chapter one. The running houses of the old town stood by the river, and the table of "
    "contents lists the pages where each of them is drawn."
)


def _shapes(chars: int) -> dict[str, tuple[str, str, str]]:
    """Each shape's task type, reference and answer of about `chars` characters."""
    rng = random.Random(0)
    words = (
        "".join(rng.choice(string.ascii_lowercase) for _ in range(6)) for _ in range(chars // 7 + 1)
    )
    cn_page = "第一章老城的房子在河边每一页都画着它们"
    return {
        "repeat en": ("full-page OCR en", _PAGE, (_PAGE + " ") * (chars // (len(_PAGE) + 1))),
        "distinct en": ("full-page OCR en", _PAGE, " ".join(words)[:chars]),
        "repeat cn": ("full-page OCR cn", cn_page, cn_page * (chars // len(cn_page))),
    }


def _plain() -> tuple[Any, Any]:
    from nltk.corpus import wordnet
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer(), wordnet


def _timed(
    helpers: Callable[[], tuple[Any, Any]], kind: str, gold: str, answer: str
) -> tuple[float, float]:
    """Seconds of one score with METEOR's stemmer and WordNet from `helpers`, and the score."""
    ocr._meteor_helpers.cache_clear()
    saved = ocr._meteor_helpers
    ocr._meteor_helpers = helpers  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        score, _ = score_item(OcrbenchV2Item(kind, "Read the page.", [gold]), answer)
        return time.perf_counter() - start, float(score)
    finally:
        ocr._meteor_helpers = saved


def main() -> None:
    """Score every shape both ways and print the table and the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=1_000_000, help="Answer length.")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # BLEU's zero-overlap warnings
    ocr.nltk_ready()
    from nltk.corpus import wordnet

    wordnet.synsets("page")  # the corpus loads once (about 13 s), outside the timings
    print(f"{'shape':<12} {'chars':>9} {'plain s':>8} {'remembered s':>13} {'score':>10}")
    seconds: dict[str, float] = {}
    speedup = 0.0
    for name, (kind, gold, answer) in _shapes(args.chars).items():
        plain_s, plain_score = _timed(_plain, kind, gold, answer)
        ours_s, ours_score = _timed(ocr._meteor_helpers, kind, gold, answer)
        assert ours_score == plain_score, (name, ours_score, plain_score)
        seconds[name] = ours_s
        if name == "repeat en":
            speedup = plain_s / ours_s
        print(f"{name:<12} {len(answer):>9} {plain_s:>8.2f} {ours_s:>13.2f} {ours_score:>10.6f}")
    print(
        " ".join(f"{n.replace(' ', '_')}_s={s:.2f}" for n, s in seconds.items())
        + f" repeat_en_speedup={speedup:.1f}"
    )


if __name__ == "__main__":
    main()
