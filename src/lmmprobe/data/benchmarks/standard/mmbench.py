"""MMBench (dev, English): the ``mmbench`` benchmark definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    as_index,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import (
    LMMS_EVAL_COMMIT,
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._choice import LETTER_PROMPT, plain, present
from lmmprobe.schema import Sample

__all__ = ["MMBENCH", "MMBENCH_CIRCULAR_BASE"]

MMBENCH_CIRCULAR_BASE = 1_000_000
"""MMBench numbers the circular copies of question ``i`` as ``i + k * 1e6``."""


def _mmbench(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    try:
        index = int(row["index"])
    except (TypeError, ValueError) as exc:
        raise RowError("index", f"expected an integer, got {row['index']!r}") from exc
    letters = [c for c in "ABCD" if present(row.get(c))]
    if len(letters) < 2 or letters != list("ABCD"[: len(letters)]):
        raise RowError("A", f"options must be A, B[, C, D] in order; this row has {letters}")
    choices = [str(row[c]) for c in letters]
    hint = row.get("hint")
    return Sample(
        id=str(index),
        images=[image_ref(row["image"], ctx)],
        question=required_text(row, "question"),
        choices=choices,
        answer=as_index(row["answer"], choices),
        formulation="single_choice",
        context=str(hint) if present(hint) else None,
        metadata={
            "index": index,
            "circular_index": index % MMBENCH_CIRCULAR_BASE,
            # CircularEval needs one published copy per option (mmbench_circular checks it).
            "n_options": len(choices),
            "category": plain(row.get("category")),
            "l2_category": plain(row.get("L2-category", row.get("l2-category"))),
            "source": plain(row.get("source")),
        },
    )


MMBENCH = benchmark(
    Benchmark(
        name="mmbench",
        title="MMBench (dev, English)",
        citation="Liu et al. 2024, MMBench: Is Your Multi-modal Model an All-around Player? "
        "ECCV 2024, arXiv:2307.06281",
        license="unknown (see card)",
        formulation="single_choice",
        metric="mmbench_circular",
        prompt=PromptTemplate(
            template="{context}{question} There are several options:\n{options}\n\n"
            + LETTER_PROMPT,
            source=lmms_source(
                "mmbench/en_utils.py (mmbench_doc_to_text) and "
                "_default_template_mmbench_en_yaml (post_prompt)"
            ),
            context_format="{context} ",
        ),
        to_sample=_mmbench,
        include=("en/*", "README.md"),
        split="dev",
        splits=("dev", "test"),
        hub_id="lmms-lab/MMBench",
        revision="ac155b9c318a37ac5a75267b18cbca12cbcc6bab",
        config="en",
        size=4329,
        judge="mmbench-choice",
        notes=(
            "The published dev split holds every question once per rotation of its options "
            "(index i, i+1e6, i+2e6...): 4329 rows, about 1164 questions. mmbench_circular "
            "counts a question only if all its rows are right (CircularEval); do not add "
            "--circular, the rotations are already in the data. A question missing one of "
            "its copies (limit=, a partial copy) is left out of mmbench_circular (n counts "
            "the complete ones); with --repeats each repeat is its own CircularEval pass.",
            "With --judge SPEC the score is the official one: answers are read by the "
            "mmbench-choice protocol (VLMEvalKit's rules, then the judge's matching prompt for "
            "answers the rules cannot read); an answer the judge cannot match is unjudged and "
            "left out (VLMEvalKit guesses a random option). Without a judge, answers are read "
            "by lmmprobe's matcher (mark, then option text) and unread answers are wrong: not "
            "the official number.",
            "Pinned to the lmms-lab/MMBench commit whose card lists the en config (index as "
            "string); the repository's newest commit (56ba1af) adds the cc config.",
        ),
        circular=True,
        schema_confirmed="lmms-lab/MMBench card @ ac155b9 (config en: index string, question, "
        "hint, answer, A-D, category, image Image, source, L2-category, comment, split) + "
        "lmms-eval mmbench/en_utils.py + mmbench_evals.py (index % 1e6) @ " + LMMS_EVAL_COMMIT[:7],
    )
)
