"""The ``--as-published`` hooks fuzzed: the tool's figures, or one clean line, never a traceback.

Each hook reads another tool's file (MathVista's output JSON, VLMEvalKit's judged tables) with
the streamed, bounded readers; whatever the cells hold (numbers where text belongs, empty
cells, odd verdicts, ids VLMEvalKit cannot split), the result is figures or one `DataError`
line naming the file.
"""

from __future__ import annotations

import csv
import io
import json
import math
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmmprobe.data.base import DataError
from lmmprobe.predictions.as_published import Published, PublishedSource, find_published

FUZZ = settings(
    max_examples=80,
    deadline=5000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

cells = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=True)
    | st.sampled_from(
        [
            "Yes",
            "No",
            "Unknown",
            "True",
            "False",
            "a_b_c_d_e_f",
            "x,y",
            "",
            "['a', 'B c']",
            "[1]",
            "rec,ocr",
            "Doc-oriented VQA",
            "0.5",
            "[" * 200,
        ]
    )
    | st.text(max_size=12)
)
table_rows = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            name: cells
            for name in (
                "index",
                "answer",
                "extracted",
                "score",
                "hit",
                "category",
                "l2-category",
                "image_path",
                "split",
                "prediction",
            )
        },
    ),
    max_size=12,
)


def _check(path: Path, benchmark: str | None, tool: str) -> None:
    try:
        hook = find_published(tool, benchmark, path)
        published = hook.figure(PublishedSource(path, benchmark))
    except DataError as exc:
        message = str(exc)
        assert "\n" not in message, message
        assert str(path) in message or "--tool-version" in message, message
        return
    assert isinstance(published, Published)
    for table in published.tables:
        for row in table.rows:
            assert len(row) == len(table.columns)
    json.dumps(published.document())  # what `score --format json` writes


def _tsv(rows: list[dict[str, Any]]) -> str:
    names = sorted({k for r in rows for k in r} | {"index", "prediction"})
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", quoting=csv.QUOTE_ALL)
    writer.writerow(names)
    for r in rows:
        writer.writerow(["" if r.get(k) is None else r.get(k) for k in names])
    return out.getvalue()


@FUZZ
@given(
    rows=table_rows,
    name=st.sampled_from(
        [
            "Model_HallusionBench_auxmatch",
            "Model_POPE_auxmatch",
            "Model_MME_auxmatch",
            "Model_MMBench_DEV_EN_openai_result",
            "Model_SEEDBench_IMG_exact_matching_result",
            "Model_POPE",
            "Model_OCRBench",
            "Model_MMVet_gpt-4-turbo",
        ]
    ),
)
def test_vlmevalkit_tables_give_figures_or_one_line(rows: list[dict[str, Any]], name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}.tsv"
        path.write_text(_tsv(rows), encoding="utf-8")
        _check(path, None, "vlmevalkit")


records = st.dictionaries(
    st.text(max_size=4),
    st.fixed_dictionaries(
        {},
        optional={
            "true_false": cells,
            "question_type": cells | st.lists(cells, max_size=2),
            "answer_type": cells,
            "metadata": st.none()
            | st.fixed_dictionaries(
                {},
                optional={
                    k: cells | st.lists(cells, max_size=3)
                    for k in (
                        "language",
                        "source",
                        "category",
                        "task",
                        "context",
                        "grade",
                        "skills",
                    )
                },
            ),
        },
    )
    | cells,
    max_size=6,
)


@FUZZ
@given(data=records, version=st.sampled_from([None, "2023-10-03", "2024-02-12", "1999"]))
def test_mathvista_outputs_give_figures_or_one_line(
    data: dict[str, Any], version: str | None
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "output_model.json"
        text = json.dumps(data, allow_nan=True)
        path.write_text(text, encoding="utf-8")
        try:
            hook = find_published("mathvista", "mathvista", path)
            published = hook.figure(PublishedSource(path, "mathvista", tool_version=version))
        except DataError as exc:
            message = str(exc)
            assert "\n" not in message, message
            assert str(path) in message or "--tool-version" in message, message
            return
        average = published.tables[0].rows[0]
        assert average[3] == len(data)
        accuracy = average[1]
        assert isinstance(accuracy, str) or 0.0 <= float(accuracy) <= 1.0
        assert not (isinstance(accuracy, float) and math.isnan(accuracy))


def test_a_long_adversarial_cell_is_read_in_bounded_time() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "Model_HallusionBench_auxmatch.tsv"
        huge = "_" * 2_000_000
        path.write_text(
            "index\tcategory\tl2-category\tanswer\tprediction\textracted\tscore\n"
            f"{huge}\tVD\tchart\tYes\tyes\tYes\tTrue\n",
            encoding="utf-8",
        )
        _check(path, None, "vlmevalkit")
