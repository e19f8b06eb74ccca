"""What the open-ended, OCR and caption benchmark definitions of this folder share.

TextVQA (val), DocVQA (val), ChartQA (test), OCRBench, VQAv2 (val), GQA (testdev balanced),
OK-VQA (val2014), VizWiz-VQA (val), COCO Caption (2017 val), NoCaps (val) and Flickr30k (test)
are one file each, as lmms-eval loads them: the ``lmms-lab/*`` copies on the Hugging Face Hub
(lmms-eval's task files moved to identical ``lmms-lab-encoder/*`` copies in July 2026),
``echo840/OCRBench`` for OCRBench. Each definition keeps every reference answer in
``Sample.answer``, words the prompt as lmms-eval's task does (cited), and names the run metric
computing the official score (`lmmprobe.metrics.builtin.benchmark_open`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    PromptTemplate,
    RowContext,
    RowError,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import (
    lmms_source,
)
from lmmprobe.schema import Sample

SHORT_ANSWER = "\nAnswer the question using a single word or phrase."

UNANSWERABLE = "\nWhen the provided information is insufficient, respond with 'Unanswerable'."

CAPTION_PROMPT = "Provide a one-sentence caption for the provided image."

LMMS_ENCODER = (
    "lmms-eval's task files now load the identical copy lmms-lab-encoder/{repo} (moved there "
    "in July 2026); either works."
)


def answer_texts(row: Mapping[str, Any], field: str) -> list[str]:
    """A list of reference texts, kept as written (empty strings included: they are answers)."""
    value = row[field]
    if not isinstance(value, list) or not value:
        raise RowError(field, f"expected a non-empty list of answers, got {value!r}")
    bad = [v for v in value if not isinstance(v, str)]
    if bad:
        raise RowError(field, f"expected text answers, got {bad[0]!r}")
    return list(value)


def row_id(row: Mapping[str, Any], field: str) -> str:
    """The row's id in `field`, as text (`RowError` if it is missing or empty)."""
    value = row[field]
    if value is None or isinstance(value, bool) or (isinstance(value, str) and not value):
        raise RowError(field, f"expected an id, got {value!r}")
    return str(value)


def open_sample(
    sid: str,
    row: Mapping[str, Any],
    ctx: RowContext,
    question: str,
    answers: list[str],
    formulation: str,
    **metadata: Any,
) -> Sample:
    """A one-image open-ended sample; metadata values that are None are left out."""
    return Sample(
        id=sid,
        images=[image_ref(row["image"], ctx)],
        question=question,
        answer=answers,
        formulation=formulation,
        metadata={k: v for k, v in metadata.items() if v is not None},
    )


CAPTION_NOTE = (
    "Scored as COCO's caption evaluation scores it (and lmms-eval's caption tasks): BLEU-4, "
    "ROUGE-L and CIDEr over the whole run after the PTB tokenizer (needs Java); METEOR, "
    "which starts its own Java process, is left out of the run metrics."
)


def caption_sample(
    sid: str, row: Mapping[str, Any], ctx: RowContext, refs_field: str, **metadata: Any
) -> Sample:
    """A caption sample: the caption prompt, every reference caption of `refs_field`."""
    return open_sample(
        sid, row, ctx, CAPTION_PROMPT, answer_texts(row, refs_field), "caption", **metadata
    )


CAPTION_TEMPLATE = PromptTemplate(
    template=CAPTION_PROMPT,
    source=lmms_source(
        "coco_cap/utils.py coco_doc_to_text; nocaps/_default_template_nocaps_yaml; "
        "flickr30k/utils.py flickr_doc_to_text (the same sentence)"
    ),
)
