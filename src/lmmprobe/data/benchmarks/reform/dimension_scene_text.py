"""The ReForm-Eval dimension suite ``reform-eval-scene-text``: its datasets, from one clone."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import dimension_suite

__all__ = ["DIMENSION_SCENE_TEXT"]

DIMENSION_SCENE_TEXT = dimension_suite(
    "scene-text",
    (
        "reform-eval-grounded-ic15",
        "reform-eval-ic15",
        "reform-eval-grounded-cocotext",
        "reform-eval-cocotext",
        "reform-eval-grounded-textocr",
        "reform-eval-textocr",
        "reform-eval-cute80",
        "reform-eval-iiit5k",
        "reform-eval-wordart",
        "reform-eval-funsd",
        "reform-eval-poie",
        "reform-eval-sroie",
        "reform-eval-textvqa",
        "reform-eval-docvqa",
        "reform-eval-ocr-vqa",
    ),
)
