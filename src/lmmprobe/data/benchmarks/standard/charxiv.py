"""CharXiv: the ``charxiv-reasoning`` and ``charxiv-descriptive`` benchmark definitions.

Origin: Wang et al. 2024, CharXiv: Charting Gaps in Realistic Chart Understanding in Multimodal
LLMs (NeurIPS 2024 Datasets and Benchmarks, arXiv:2406.18521); questions, answers and metadata
in princeton-nlp/CharXiv's ``data/`` (cc-by-sa-4.0) at `CHARXIV_COMMIT`, the charts in the
``images.zip`` of the princeton-nlp/CharXiv dataset repository. One reasoning question per
chart (1,000 in val; the test answers are withheld). Prompt: ``src/reasoning_utils.py``
``build_reasoning_queries`` with ``src/constants.py`` ``REASONING_RESP_INST``; grading: the
judge protocol ``charxiv-reasoning-grade``; figures: ``src/get_stats.py``.

The descriptive questions (four per chart, 4,000 in val, each from one of 19 templates):
prompt ``src/descriptive_utils.py`` ``build_descriptive_quries`` (``descriptive_query_helper``
with ``DESCRIPTIVE_RESP_INST``); grading: the judge protocol ``charxiv-descriptive-grade``,
whose prompts grade up to five answers of one template at a time, grouped over the whole run by
the judging step; figures: ``get_stats.py``'s descriptive statistics.
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

__all__ = [
    "CHARXIV_COMMIT",
    "CHARXIV_DESCRIPTIVE",
    "CHARXIV_REASONING",
    "DESCRIPTIVE_INST",
    "RESPONSE_INST",
    "descriptive_question",
    "reasoning_question",
]

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


def _fetch(name: str) -> str:
    """The README's setup into ``$LMMPROBE_DATA_DIR/NAME``.

    The repository at the pinned commit, its images.zip unpacked in ``images/`` (the README's
    ``cd images && wget ... && unzip``).
    """
    where, images = local_dir_word(name), local_dir_word(f"{name}/images")
    return (
        f"git clone https://github.com/princeton-nlp/CharXiv.git {where} && git -C {where} "
        f"checkout {CHARXIV_COMMIT} && wget -P {images} "
        "https://huggingface.co/datasets/princeton-nlp/CharXiv/resolve/main/images.zip && "
        f'unzip "$LMMPROBE_DATA_DIR/{name}/images/images.zip" -d {images}'
    )


def _subplots(n: int) -> str:
    """``NUMSUBPLOTS2SUBPLOTTYPE``."""
    if n == 1:
        return "1 Subplot"
    return "2-4 Subplots" if 2 <= n <= 4 else "5+ Subplots"


_NOT_AN_OBJECT = "\0not an object"
"""The row key holding an entry that is not a JSON object (no JSON key of CharXiv's is this)."""


def _an_object(row: Mapping[str, Any]) -> None:
    """Refuse a row made from an entry that is not an object, naming what it is instead."""
    if _NOT_AN_OBJECT in row:
        kind = type(row[_NOT_AN_OBJECT]).__name__
        raise RowError("(entry)", f"expected an object, got {kind}")


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
        row = dict(entry) if isinstance(entry, dict) else {_NOT_AN_OBJECT: entry}
        row["num_subplots"] = described.get("num_subplots") if isinstance(described, dict) else None
        row["category"] = meta.get("category") if isinstance(meta, dict) else None
        row["year"] = meta.get("year") if isinstance(meta, dict) else None
        yield where, row


def _int(row: Mapping[str, Any], field: str, allowed: Mapping[int, str] | range) -> int:
    value = row.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        raise RowError(field, f"expected {_allowed(allowed)}, got {str(value)[:80]!r}")
    return value


def _allowed(allowed: Mapping[int, str] | range) -> str:
    """The values a field takes, as a message says them: ``1 to 19``, never a cut list.

    The templates 1 to 19 were shown ``[1, ..., 8]``, which read as the whole list.
    """
    keys = sorted(allowed)
    if keys == list(range(keys[0], keys[-1] + 1)):
        return f"a number from {keys[0]} to {keys[-1]}"
    return f"one of {', '.join(map(str, keys[:8]))}" + (", ..." if len(keys) > 8 else "")


def _text(row: Mapping[str, Any], field: str) -> str:
    value = row.get(field)
    if not isinstance(value, str):
        raise RowError(field, f"expected text, got {str(value)[:80]!r}")
    return value


def _charxiv(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    _an_object(row)
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
        fetch=_fetch("charxiv-reasoning"),
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
            "The descriptive questions are charxiv-descriptive.",
        ),
        schema_confirmed=f"princeton-nlp/CharXiv data/*_val.json @ {CHARXIV_COMMIT[:7]} "
        "(reasoning: figure_id, query, answer, inst_category, qa_source; descriptive: "
        "num_subplots; image_metadata: category, year)",
    )
)


# --------------------------------------------------------------------------- descriptive

DESCRIPTIVE_INST: dict[int, str] = {
    1: """{}what is its title?
    * Your final answer should be the most relevant title of the plot that is explicitly written.
    * If the plot does not have an explicit title or contains only a letter, answer 'Not Applicable'.
\x20\x20\x20\x20""",
    2: """{}what is the label of the x-axis?
    * Your final answer should be the label of the x-axis that is explicitly written, including the case when x-axis is shared across multiple subplots. When the x-axis is present on both the top and bottom of the plot, answer the label of the x-axis at the bottom.
    * If the plot does not have an explicit x-axis label, answer 'Not Applicable'.
\x20\x20\x20\x20""",
    3: """{}what is the label of the y-axis?
    * Your final answer should be the label of the y-axis that is explicitly written, including the case when y-axis is shared across multiple subplots. When the y-axis is present on both the left and right of the plot, answer the label of the y-axis at the left.
    * If the plot does not have an explicit y-axis label, answer 'Not Applicable'.""",
    4: """{}what is the leftmost labeled tick on the x-axis?
    * Your final answer should be the tick value on the x-axis that is explicitly written, including the case when x-axis is shared across multiple subplots. When the x-axis is present on both the top and bottom of the plot, answer based on the axis at the bottom. Ignore units or scales that are written separately from the tick, such as units and scales from the axis label or the corner of the plot.""",
    5: """{}what is the rightmost labeled tick on the x-axis?
    * Your final answer should be the tick value on the x-axis that is explicitly written, including the case when x-axis is shared across multiple subplots. When the x-axis is present on both the top and bottom of the plot, answer based on the axis at the bottom. Ignore units or scales that are written separately from the tick, such as units and scales from the axis label or the corner of the plot.""",
    6: """{}what is the spatially lowest labeled tick on the y-axis?
    * Your final answer should be the tick value on the y-axis that is explicitly written, including the case when y-axis is shared across multiple subplots. When the y-axis is present on both the left and right of the plot, based on the axis at the left. Ignore units or scales that are written separately from the tick, such as units and scales from the axis label or the corner of the plot.""",
    7: """{}what is the spatially highest labeled tick on the y-axis?
    * Your final answer should be the tick value on the y-axis that is explicitly written, including the case when y-axis is shared across multiple subplots. When the y-axis is present on both the left and right of the plot, based on the axis at the left. Ignore units or scales that are written separately from the tick, such as units and scales from the axis label or the corner of the plot.""",
    8: """{}what is difference between consecutive numerical tick values on the x-axis?
    * Your final answer should be the difference between consecutive numerical tick values of the x-axis, including the case when x-axis is shared across multiple subplots. When the x-axis is present on both the top and bottom of the plot, answer based on the axis at the bottom. Ignore units or scales that are written separately from the tick, such as units and scales from the axis label or the corner of the plot.
    * If the plot does not have an explicit x-axis tick value, or if the tick values are not numerical, or if the difference is not constant between all consecutive tick values, answer "Not Applicable".""",
    9: """{}what is difference between consecutive numerical tick values on the y-axis?
    * Your final answer should be the difference between consecutive numerical tick values of the y-axis, including the case when y-axis is shared across multiple subplots. When the y-axis is present on both the left and right of the plot, answer based on the axis at the left. Ignore units or scales that are written separately from the tick, such as units and scales from the axis label or the corner of the plot.
    * If the plot does not have an explicit y-axis tick value, or if the tick values are not numerical, or if the difference is not constant between all consecutive tick values, answer "Not Applicable".""",
    10: """{}how many lines are there?
    * Your final answer should be the number of lines in the plot. Ignore grid lines, tick marks, and any vertical or horizontal auxiliary lines.
    * If the plot does not contain any lines or is not considered a line plot, answer "Not Applicable".""",
    11: """{}do any lines intersect?
    * Your final answer should be "Yes" if any lines intersect, and "No" otherwise. Ignore grid lines, tick marks, and any vertical or horizontal auxiliary lines.
    * If the plot does not contain any lines or is not considered a line plot, answer "Not Applicable".""",
    12: """{}how many discrete labels are there in the legend?
    * Your final answer should account for only labels relevant to the plot in the legend, even if the legend is located outside the plot.\x20
    * If the plot does not have a legend or no legend is not considered relevant to this plot, answer "Not Applicable".""",
    13: """{}what are the names of the labels in the legend?
    * You should write down the labels from top to bottom, then from left to right and separate the labels with commas. Your final answer should account for only labels relevant to the plot in the legend, even if the legend is located outside the plot.
    * If the plot does not have a legend or no legend is not considered relevant to this plot, answer "Not Applicable".""",
    14: """{}what is the difference between the maximum and minimum values of the tick labels on the continuous legend (i.e., colorbar)?
    * You should remove the percentage sign (if any) in your answer.
    * If the plot does not have an explicit colorbar-based continuous legend or the legend is not considered relevant to this subplot, answer "Not Applicable".""",
    15: """{}what is the maximum value of the tick labels on the continuous legend (i.e., colorbar)?
    * You should remove the percentage sign (if any) in your answer.\x20
    * If the plot does not have an explicit colorbar-based continuous legend or the legend is not considered relevant to this subplot, answer "Not Applicable".""",
    16: """{}what is the general trend of data from left to right?
    * Your final answer should be within a few words, such as "increases", "increases then stabilizes".""",
    17: """{}What is the total number of explicitly labeled ticks across all axes?
    * Your final answer should be the total number of explicitly labeled ticks across all axes, including the case when any axis is shared across multiple subplots.""",
    18: """What is the layout of the subplots?
    * Your final answer should follow "n by m" format, where n is the number of rows and m is the number of columns.
    * If the plot does not contain subplots, answer "1 by 1".""",
    19: """What is the number of subplots?
    * Your final answer should be the total number of subplots in the plot.
    * If the plot does not contain subplots, answer "1".""",
}
"""``src/constants.py`` ``DESCRIPTIVE_RESP_INST`` as Python reads it, by question template
(a line's trailing spaces written ``\\x20``, which the formatter would strip)."""

QUESTION_TYPES = {
    **dict.fromkeys([1, 2, 3, 4, 5, 6, 7], "Information Extraction"),
    **dict.fromkeys([8, 9, 13, 14, 15], "Enumeration"),
    **dict.fromkeys([11, 16, 18], "Pattern Recognition"),
    **dict.fromkeys([10, 12, 19], "Counting"),
    **dict.fromkeys([17], "Compositionality"),
}
"""``src/score_utils.py`` ``QNUM2QTYPE``: a template to the figures' question category."""


def descriptive_question(qid: int, subplot_loc: Any) -> str:
    """``descriptive_query_helper``: template `qid`'s question about the subplot at `subplot_loc`.

    Templates 18 and 19 (the layout, the number of subplots) name no subplot; a location ``[0,
    ...]`` is the one plot, ``[row, column]`` a subplot of a grid, a text a subplot named so.

    Raises:
        RowError: `subplot_loc` is none of these.

    """
    if qid in (18, 19):
        return DESCRIPTIVE_INST[qid]
    if isinstance(subplot_loc, list) and subplot_loc:
        if subplot_loc[0] == 0:
            prefix = "For the current plot, "
        elif len(subplot_loc) >= 2:
            prefix = f"For the subplot at row {subplot_loc[0]} and column {subplot_loc[1]}, "
        else:
            raise RowError("subplot_loc", f"expected [row, column], got {str(subplot_loc)[:80]}")
    elif isinstance(subplot_loc, str):
        prefix = f"For {subplot_loc}, "
    else:
        raise RowError("subplot_loc", f"expected a list or text, got {str(subplot_loc)[:80]!r}")
    return DESCRIPTIVE_INST[qid].format(prefix)


def _descriptive_rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each chart's descriptive questions, one row each, with the chart's metadata.

    In the data's order (the order ``preprocess_descriptive_grading_queries`` groups them in):
    chart by chart, a chart's questions in order.
    """
    files = {
        name: root / "data" / f"{name}_{split}.json" for name in ("descriptive", "image_metadata")
    }
    docs = {n: read_json_file(p, what="a CharXiv data file", cap=_MAX_FILE, within=root)
            for n, p in files.items()}  # fmt: skip
    for name, doc in docs.items():
        if not isinstance(doc, dict):
            raise DataError(f"{files[name]}: expected an object keyed by figure id")
    for key, entry in docs["descriptive"].items():
        where = f"{files['descriptive']}:{key}"
        meta = docs["image_metadata"].get(key)
        if not isinstance(entry, dict):
            yield where, {_NOT_AN_OBJECT: entry}
            continue
        qids, answers = entry.get("qids"), entry.get("answers")
        if not isinstance(qids, list):
            yield where, {**entry, "qids": qids}  # the row's reader names the field
            continue
        for i, qid in enumerate(qids):
            row = {
                "figure_id": entry.get("figure_id"),
                "index": i,
                "qid": qid,
                "answer": answers[i] if isinstance(answers, list) and i < len(answers) else None,
                "subplot_loc": entry.get("subplot_loc"),
                "num_subplots": entry.get("num_subplots"),
                "category": meta.get("category") if isinstance(meta, dict) else None,
                "year": meta.get("year") if isinstance(meta, dict) else None,
            }
            yield f"{where}[{i}]", row


def _described(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    _an_object(row)
    figure = row.get("figure_id")
    if isinstance(figure, bool) or not isinstance(figure, int) or figure < 0:
        raise RowError("figure_id", f"expected a chart number, got {str(figure)[:80]!r}")
    if "index" not in row:
        raise RowError("qids", f"expected a list of templates, got {str(row.get('qids'))[:80]!r}")
    qid = _int(row, "qid", DESCRIPTIVE_INST)
    answer = row.get("answer")
    if answer is None:
        raise RowError("answers", "no answer (CharXiv withholds the test split's)")
    answer = _text(row, "answer")
    subplots = _int(row, "num_subplots", range(1, 1000))
    subject = row.get("category")
    if subject not in SUBJECTS:
        raise RowError("category", f"not an arXiv category CharXiv reports: {str(subject)[:80]!r}")
    year = row.get("year")
    if year not in YEARS:
        raise RowError("year", f"not a year CharXiv reports: {str(year)[:80]!r}")
    question = descriptive_question(qid, row.get("subplot_loc"))
    return Sample(
        # build_descriptive_quries' key: the grading groups and get_stats.py read it.
        id=f"{figure}_{row['index']}",
        images=[image_ref(f"images/{figure}.jpg", ctx, "figure_id")],
        question=question,
        answer=[answer],
        formulation="open_ended",
        metadata={
            # The template picks the grading prompt's question and rubric, and its group.
            "qid": qid,
            # get_stats.py's figures: --by template, question_type, subject, year, subplots.
            "template": f"Q{qid}",
            "question_type": QUESTION_TYPES[qid],
            "subject": SUBJECTS[str(subject)],
            "year": YEARS[str(year)],
            "subplots": _subplots(subplots),
        },
        prompt=PromptTemplate(escape_braces(question)),
    )


CHARXIV_DESCRIPTIVE = benchmark(
    Benchmark(
        name="charxiv-descriptive",
        title="CharXiv (val, descriptive questions)",
        citation="Wang et al. 2024, CharXiv: Charting Gaps in Realistic Chart Understanding in "
        "Multimodal LLMs, NeurIPS 2024 Datasets and Benchmarks, arXiv:2406.18521",
        license="cc-by-sa-4.0 (princeton-nlp/CharXiv data/LICENSE)",
        formulation="open_ended",
        metric="charxiv_descriptive_accuracy",
        prompt=PromptTemplate(
            template="{question}",
            source=f"princeton-nlp/CharXiv @ {CHARXIV_COMMIT[:7]} src/descriptive_utils.py "
            "build_descriptive_quries with descriptive_query_helper and src/constants.py "
            "DESCRIPTIVE_RESP_INST (the subplot named, then the template's question and "
            "instructions)",
        ),
        to_sample=_described,
        fetch=_fetch("charxiv-descriptive"),
        split="val",
        splits=("val",),
        size=4000,
        layout="files",
        read_files=_descriptive_rows,
        judge="charxiv-descriptive-grade",
        notes=(
            "Scored only with --judge SPEC: charxiv-descriptive-grade asks the judge (GPT-4o "
            "in the paper) to extract and score up to five answers of one question template "
            "in one prompt, grouped over the whole run in the data's order as evaluate.py "
            "groups them, so an answer's grading prompt quotes the other answers of its group; "
            "charxiv_descriptive_accuracy is the share scored 1 (get_stats.py's Overall "
            "Score). --by template, question_type, subject, year and subplots give its other "
            "figures.",
            "A reply missing any answer's keys, or scoring one outside 0 and 1, is refused "
            "whole as evaluate.py refuses it: every answer of its group is unjudged and counts "
            "0, as get_stats.py counts the -1 the script stores after its retries.",
            f"Data: princeton-nlp/CharXiv's data/ at {CHARXIV_COMMIT[:7]} (pinned by the "
            "clone); the images come from images.zip of the dataset repository's main, not "
            "pinned (the README downloads it so).",
        ),
        schema_confirmed=f"princeton-nlp/CharXiv data/*_val.json @ {CHARXIV_COMMIT[:7]} "
        "(descriptive: figure_id, qids, answers, subplot_loc, num_subplots; image_metadata: "
        "category, year)",
    )
)
