"""HallusionBench (image questions): the ``hallusionbench`` benchmark definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import (
    LMMS_EVAL_COMMIT,
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._choice import plain
from lmmprobe.schema import Sample

__all__ = ["HALLUSIONBENCH"]


def _hallusion(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    gold = str(row["gt_answer"]).strip()
    if gold not in ("0", "1"):
        raise RowError("gt_answer", f"expected '1' (yes) or '0' (no), got {row['gt_answer']!r}")
    keys = ("category", "subcategory", "set_id", "figure_id", "question_id")
    meta = {k: str(row[k]) for k in keys}
    meta.update(
        gt_answer=gold,
        visual_input=str(row.get("visual_input")),
        gt_answer_details=plain(row.get("gt_answer_details")),
    )
    image = row.get("image")
    # A choice between yes and no that is never shown (the prompt is the question alone):
    # the ``hallusionbench`` matcher reads the answer's yes or no for the answer rates.
    return Sample(
        id="_".join(meta[k] for k in keys),
        images=[image_ref(image, ctx)] if image is not None else [],
        question=required_text(row, "question"),
        choices=["yes", "no"],
        answer=0 if gold == "1" else 1,
        formulation="single_choice",
        metadata=meta,
    )


HALLUSIONBENCH = benchmark(
    Benchmark(
        name="hallusionbench",
        title="HallusionBench (image questions)",
        citation="Guan et al. 2024, HallusionBench: An Advanced Diagnostic Suite for Entangled "
        "Language Hallucination and Visual Illusion in Large Vision-Language Models, CVPR 2024, "
        "arXiv:2310.14566",
        license="bsd-3-clause (tianyi-lab/HallusionBench repository); card: unknown",
        formulation="single_choice",
        metric="hallusionbench_qacc",
        prompt=PromptTemplate(
            template="{question}",
            source=lmms_source(
                "hallusion_bench/hallusion_bench_image.yaml and evaluate_hb.py "
                "(hb_doc_to_text: the question alone)"
            ),
        ),
        to_sample=_hallusion,
        split="image",
        splits=("image", "non_image"),
        hub_id="lmms-lab/HallusionBench",
        revision="ea5fd49f1b711d12cc8b0ec75be0c0593e17befe",
        size=951,
        matcher="hallusionbench",
        judge="hallusionbench-correct",
        notes=(
            "hallusionbench_qacc, _facc and _aacc are HallusionBench's question-pair, figure "
            "and question accuracies (its utils.py). With --judge SPEC they are the official ones: "
            "the hallusionbench-correct protocol asks the judge whether each answer agrees "
            "with the reference (its utils.py prompt and reading). Without a judge lmmprobe "
            "reads yes/no by rule (not the official number): only an answer stating uncertainty ('I cannot tell', 'not sure', "
            "'hard to say'...) is 'unclear' (the judge's verdict for an answer unclear about "
            "the answer; right for a visual-supplement question asked without its figure); "
            "an answer with both yes and no, or neither, is unread and wrong.",
            "accuracy reads each answer's yes or no by the same rule (matcher hallusionbench; "
            "the options yes and no are never shown): an answer stating uncertainty, or with "
            "both or neither, is unparsed, and where a judge read it (--judge, or lmms-eval's "
            "recorded verdicts) the judge's verdict decides it (the judged headline).",
            "With --repeats each repeat is scored as its own run and the accuracies are "
            "averaged over repeats.",
            "split=non_image holds the 178 visual-supplement questions asked without a figure.",
        ),
        schema_confirmed="lmms-lab/HallusionBench card (category, subcategory, visual_input, "
        "set_id, figure_id, sample_note, question_id, question, gt_answer_details, gt_answer, "
        "filename, image Image; splits image 951, non_image 178) + lmms-eval "
        "hallusion_bench/evaluate_hb.py @ " + LMMS_EVAL_COMMIT[:7],
    )
)
