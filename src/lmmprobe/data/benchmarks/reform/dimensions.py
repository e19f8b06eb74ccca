"""ReForm-Eval's 8 dimension suites as one table: ``reform-eval-<dimension>`` for each row.

A dimension suite runs its datasets (the members, in the order of ReForm-Eval's README, "Data
Usage") from one clone of ReForm-Eval-Data; the suites differ only in their members, so they
are the rows of one table. `TABLE` follows the README's dimension order, as
`lmmprobe.data.benchmarks.reform_common.DIMENSIONS` does.
"""

from __future__ import annotations

from lmmprobe.data.benchmarks.base import Benchmark
from lmmprobe.data.benchmarks.reform_common import dimension_suite

__all__ = ["TABLE", "TABLE_DEFINITIONS"]

TABLE: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "coarse",
        (
            "reform-eval-flowers102",
            "reform-eval-cifar10",
            "reform-eval-imagenet1k",
            "reform-eval-pets37",
            "reform-eval-vizwiz-yesno",
            "reform-eval-vizwiz-singlechoice",
            "reform-eval-tdiuc-sport",
            "reform-eval-tdiuc-scene",
            "reform-eval-medic",
        ),
    ),
    (
        "fine",
        (
            "reform-eval-mscoco-mci",
            "reform-eval-mscoco-goi",
            "reform-eval-mscoco-mos",
            "reform-eval-tdiuc-color",
            "reform-eval-tdiuc-utility",
            "reform-eval-tdiuc-position",
            "reform-eval-tdiuc-detection",
            "reform-eval-tdiuc-counting",
            "reform-eval-refcoco",
            "reform-eval-mscoco-oc",
        ),
    ),
    (
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
    ),
    (
        "spatial",
        (
            "reform-eval-clevr",
            "reform-eval-vsr",
            "reform-eval-mp3d",
        ),
    ),
    (
        "cross-modal",
        (
            "reform-eval-mscoco-itm",
            "reform-eval-mscoco-its",
            "reform-eval-wikihow",
            "reform-eval-winoground",
            "reform-eval-snli-ve",
            "reform-eval-mocheg",
        ),
    ),
    (
        "description",
        (
            "reform-eval-mscoco-caption",
            "reform-eval-textcaps",
            "reform-eval-nocaps",
            "reform-eval-flickr30k",
        ),
    ),
    (
        "dialogue",
        (
            "reform-eval-vqa-mt",
            "reform-eval-visdial",
        ),
    ),
    (
        "reasoning",
        (
            "reform-eval-vqav2",
            "reform-eval-gqa",
            "reform-eval-whoops",
            "reform-eval-okvqa",
            "reform-eval-scienceqa",
            "reform-eval-vizwiz",
            "reform-eval-viquae",
            "reform-eval-k-viquae",
            "reform-eval-a-okvqa",
            "reform-eval-a-okvqra",
            "reform-eval-a-okvqar",
            "reform-eval-imagenetvc",
        ),
    ),
)
"""Each dimension's slug and its members' benchmark names."""

TABLE_DEFINITIONS: tuple[Benchmark, ...] = tuple(
    dimension_suite(slug, members) for slug, members in TABLE
)
"""The registered definitions, one per row of `TABLE`."""
