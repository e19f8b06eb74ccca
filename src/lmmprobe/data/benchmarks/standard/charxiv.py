"""CharXiv (reasoning questions): the ``charxiv-reasoning`` benchmark definition.

Origin: Wang et al. 2024, CharXiv: Charting Gaps in Realistic Chart Understanding in Multimodal
LLMs (NeurIPS 2024 Datasets and Benchmarks, arXiv:2406.18521); questions, answers and metadata
in princeton-nlp/CharXiv's ``data/`` (cc-by-sa-4.0) at `CHARXIV_COMMIT`, the charts in the
``images.zip`` of the princeton-nlp/CharXiv dataset repository. One reasoning question per
chart (1,000 in val; the test answers are withheld). Prompt: ``src/reasoning_utils.py``
``build_reasoning_queries`` with ``src/constants.py`` ``REASONING_RESP_INST``; grading: the
judge protocol ``charxiv-reasoning-grade``; figures: ``src/get_stats.py``.

CharXiv's descriptive questions are not defined: their official grading puts up to five
answers of different charts in one judge prompt (``descriptive_utils.py``
``build_descriptive_grading_queries``: the answers grouped by question template, five a
prompt, in the data's order), so an answer's grading prompt depends on which other answers the
run holds; lmmprobe's judging step asks about one answer a prompt.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._fetch import local_dir_word
from lmmprobe.data.benchmarks.standard._choice import escape_braces
from lmmprobe.data.jsonl import read_json_file
from lmmprobe.schema import Sample

__all__ = ["CHARXIV_COMMIT", "CHARXIV_REASONING", "RESPONSE_INST", "reasoning_question"]

CHARXIV_COMMIT = "7ebe88f78dee387691551f071abcb2b9e1a8025b"
"""The princeton-nlp/CharXiv commit whose data, prompts, grading and statistics are cited."""

_MAX_FILE = 64 << 20  # the released files are under 1 MB

RESPONSE_INST = {
    1: """{}
    * Your final answer must be grounded to some text that is explicitly written and relevant to the question in the chart.
    * If you need to answer multiple terms, separate them with commas.
    * Unless specified in the question (such as answering with a letter), you are required to answer the full names of subplots and/or labels by default.
    """,
    2: """{}
    * If there are options in the question, your final answer must conform to one of the options.
    * If there are additional instructions in the question, follow them accordingly.
    * If there are neither options nor additional instructions, you are allowed to respond with a short phrase only.
    """,
    3: """{}
    * Your final answer must be grounded to a number that is exlicitly written and relevant to the question in the chart, even if it's an approximate value.
    * You are allowed to extract numbers within some text when needed.
    """,
    4: """{}
    {}
    """,
}
"""``src/constants.py`` ``REASONING_RESP_INST`` as Python reads it, by answer type."""

ANSWER_TYPES = {
    1: "Text-in-Chart",
    2: "Text-in-General",
    3: "Number-in-Chart",
    4: "Number-in-General",
}
"""``src/score_utils.py`` ``IDX2ANSTYPE``: ``inst_category`` to the figures' name."""
SOURCES = {1: "GPT-Sourced", 2: "GPT-Inspired", 3: "Completely Human"}
"""``IDX2SRC``: ``qa_source`` to the figures' name."""
SUBJECTS = {
    "cs": "Computer Science",
    "econ": "Economics",
    "eess": "Electrical Engineering and Systems Science",
    "math": "Mathematics",
    "physics": "Physics",
    "q-bio": "Quantitative Biology",
    "q-fin": "Quantitative Finance",
    "stat": "Statistics",
}
"""``DOMAIN2ABBR``: an arXiv category to the figures' subject."""
YEARS = {"20": "2020", "21": "2021", "22": "2022", "23": "2023"}
"""``NUM2YEAR``."""


def _number_instruction(answer: str) -> str:
    """``get_number_instruction``: an integer, or as many decimals as after the first dot."""
    parts = answer.split(".")
    if len(parts) == 1:
        return "* Your final answer must be an exact integer."
    return f"* Your final answer must be a number with {len(parts[1])} decimal places."


def reasoning_question(query: str, answer: str, inst_category: int) -> str:
    """``build_reasoning_queries``' question: the query with its answer type's instructions."""
    if inst_category in (1, 2, 3):
        return RESPONSE_INST[inst_category].format(query)
    return RESPONSE_INST[4].format(query, _number_instruction(answer))


_DIR = local_dir_word("charxiv-reasoning")
_IMAGES = local_dir_word("charxiv-reasoning/images")
_FETCH = (
    f"git clone https://github.com/princeton-nlp/CharXiv.git {_DIR} && git -C {_DIR} checkout "
    f"{CHARXIV_COMMIT} && wget -P {_IMAGES} "
    "https://huggingface.co/datasets/princeton-nlp/CharXiv/resolve/main/images.zip && "
    f'unzip "$LMMPROBE_DATA_DIR/charxiv-reasoning/images/images.zip" -d {_IMAGES}'
)
"""The README's setup: the repository at the pinned commit, its images.zip unpacked in
``images/`` (the README's ``cd images && wget ... && unzip``)."""


def _subplots(n: int) -> str:
    """``NUMSUBPLOTS2SUBPLOTTYPE``."""
    if n == 1:
        return "1 Subplot"
    return "2-4 Subplots" if 2 <= n <= 4 else "5+ Subplots"


def _rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each reasoning question joined with its chart's descriptive entry and metadata."""
    files = {
        name: root / "data" / f"{name}_{split}.json"
        for name in ("reasoning", "descriptive", "image_metadata")
    }
    docs = {n: read_json_file(p, what="a CharXiv data file", cap=_MAX_FILE, within=root)
            for n, p in files.items()}  # fmt: skip
    for name, doc in docs.items():
        if not isinstance(doc, dict):
            raise DataError(f"{files[name]}: expected an object keyed by figure id")
    reasoning = docs["reasoning"]
    for key, entry in reasoning.items():
        where = f"{files['reasoning']}:{key}"
        described = docs["descriptive"].get(key)
        meta = docs["image_metadata"].get(key)
        row = dict(entry) if isinstance(entry, dict) else {"entry": entry}
        row["num_subplots"] = described.get("num_subplots") if isinstance(described, dict) else None
        row["category"] = meta.get("category") if isinstance(meta, dict) else None
        row["year"] = meta.get("year") if isinstance(meta, dict) else None
        yield where, row


def _int(row: Mapping[str, Any], field: str, allowed: Mapping[int, str] | range) -> int:
    value = row.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        raise RowError(field, f"expected one of {sorted(allowed)[:8]}, got {str(value)[:80]!r}")
    return value


def _text(row: Mapping[str, Any], field: str) -> str:
    value = row.get(field)
    if not isinstance(value, str):
        raise RowError(field, f"expected text, got {str(value)[:80]!r}")
    return value


def _charxiv(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    figure = row.get("figure_id")
    if isinstance(figure, bool) or not isinstance(figure, int) or figure < 0:
        raise RowError("figure_id", f"expected a chart number, got {str(figure)[:80]!r}")
    query = _text(row, "query")
    answer = row.get("answer")
    if answer is None:
        raise RowError("answer", "no answer (CharXiv withholds the test split's)")
    answer = _text(row, "answer")
    category = _int(row, "inst_category", ANSWER_TYPES)
    source = _int(row, "qa_source", SOURCES)
    subplots = _int(row, "num_subplots", range(1, 1000))
    subject = row.get("category")
    if subject not in SUBJECTS:
        raise RowError("category", f"not an arXiv category CharXiv reports: {str(subject)[:80]!r}")
    year = row.get("year")
    if year not in YEARS:
        raise RowError("year", f"not a year CharXiv reports: {str(year)[:80]!r}")
    return Sample(
        id=str(figure),
        images=[image_ref(f"images/{figure}.jpg", ctx, "figure_id")],
        question=query,
        answer=[answer],
        formulation="open_ended",
        metadata={
            # What the grader quotes (the query without the instructions) and picks its rules by.
            "raw_question": query,
            "inst_category": category,
            # get_stats.py's figures: --by answer_type, source, subject, year, subplots.
            "answer_type": ANSWER_TYPES[category],
            "source": SOURCES[source],
            "subject": SUBJECTS[str(subject)],
            "year": YEARS[str(year)],
            "subplots": _subplots(subplots),
        },
        prompt=PromptTemplate(escape_braces(reasoning_question(query, answer, category))),
    )


CHARXIV_REASONING = benchmark(
    Benchmark(
        name="charxiv-reasoning",
        title="CharXiv (val, reasoning questions)",
        citation="Wang et al. 2024, CharXiv: Charting Gaps in Realistic Chart Understanding in "
        "Multimodal LLMs, NeurIPS 2024 Datasets and Benchmarks, arXiv:2406.18521",
        license="cc-by-sa-4.0 (princeton-nlp/CharXiv data/LICENSE)",
        formulation="open_ended",
        metric="charxiv_reasoning_accuracy",
        prompt=PromptTemplate(
            template="{question}",
            source=f"princeton-nlp/CharXiv @ {CHARXIV_COMMIT[:7]} src/reasoning_utils.py "
            "build_reasoning_queries with src/constants.py REASONING_RESP_INST (the query, then "
            "its answer type's instructions; number-in-general: the decimals the answer has)",
        ),
        to_sample=_charxiv,
        fetch=_FETCH,
        split="val",
        splits=("val",),
        size=1000,
        layout="files",
        read_files=_rows,
        judge="charxiv-reasoning-grade",
        notes=(
            "Scored only with --judge SPEC: charxiv-reasoning-grade asks the judge (GPT-4o in "
            "the paper) to extract the answer and score it 0 or 1 with CharXiv's prompt for "
            "the question's answer type; charxiv_reasoning_accuracy is the share scored 1 "
            "(get_stats.py's Overall Score). --by answer_type, source, subject, year and "
            "subplots give its other figures.",
            f"Data: princeton-nlp/CharXiv's data/ at {CHARXIV_COMMIT[:7]} (pinned by the "
            "clone); the images come from images.zip of the dataset repository's main, not "
            "pinned (the README downloads it so).",
            "The descriptive questions are not defined: their official grading puts five "
            "answers to different charts in one judge prompt (descriptive_utils.py), which "
            "lmmprobe's one-answer-a-prompt judging cannot reproduce.",
        ),
        schema_confirmed=f"princeton-nlp/CharXiv data/*_val.json @ {CHARXIV_COMMIT[:7]} "
        "(reasoning: figure_id, query, answer, inst_category, qa_source; descriptive: "
        "num_subplots; image_metadata: category, year)",
    )
)
