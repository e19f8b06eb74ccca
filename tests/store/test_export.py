"""Run exports: one row per score, with the prompt and the raw model output."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lmmprobe.formulate import formulate
from lmmprobe.schema import ErrorInfo, Request, Response, Sample, Score
from lmmprobe.store import Store, export_run, export_run_to_file

# Raw outputs a CSV writer must quote: commas, quotes, newlines, non-ASCII.
TEXTS = ["(A)", 'I think "blue", maybe', "line one\nline two", "rouge — rouge ☃"]


def _request(i: int) -> Request:
    sample = Sample(
        id=f"s{i}",
        question=f"Question {i}, with a comma?",
        choices=["red", "blue"],
        answer=i % 2,
        metadata={"subtask": "color"},
    )
    req = formulate(sample)
    req.key = f"key{i}"
    return req


@pytest.fixture
def store(tmp_db: Path) -> Iterator[Store]:
    with Store(tmp_db) as s:
        requests = [_request(i) for i in range(len(TEXTS) + 1)]
        responses = [Response(key=r.key, text=t) for r, t in zip(requests, TEXTS, strict=False)]
        responses.append(
            Response(
                key="key4", error=ErrorInfo(type="timeout", message="took too long", retryable=True)
            )
        )
        s.put_responses("first", requests, responses)
        s.create_run("run1", {}, "/out")
        scores = []
        for i, req in enumerate(requests):
            failed = i == len(TEXTS)
            scores.append(
                Score(
                    model="first",
                    sample_id=req.sample_id,
                    repeat=0,
                    key=req.key,
                    stage="error" if failed else "mark",
                    prediction=None if failed else 0,
                    correct=None if failed else (i % 2 == 0),
                    format_hit=not failed,
                    gold=i % 2,
                    gold_text=["red", "blue"][i % 2],
                    error_type="timeout" if failed else None,
                    metadata={"subtask": "color", "i": i},
                )
            )
        s.put_scores("run1", scores)
        s.create_run("other", {}, "/out2")
        yield s


def _prompts() -> list[str]:
    return [_request(i).prompt for i in range(len(TEXTS) + 1)]


def test_jsonl_export(store: Store) -> None:
    out = io.StringIO()
    n = export_run(store, "run1", "jsonl", out)
    lines = out.getvalue().splitlines()
    assert n == len(lines) == len(TEXTS) + 1
    rows = [json.loads(line) for line in lines]
    assert [r["sample_id"] for r in rows] == [f"s{i}" for i in range(len(TEXTS) + 1)]
    assert [r["prompt"] for r in rows] == _prompts()
    assert [r["text"] for r in rows] == [*TEXTS, None]
    assert rows[-1]["error_type"] == "timeout"
    assert rows[-1]["error_message"] == "took too long"
    assert rows[-1]["correct"] is None
    assert rows[0]["correct"] is True
    assert rows[1]["correct"] is False
    assert rows[2]["metadata"] == {"subtask": "color", "i": 2}
    assert rows[1]["gold"] == 1
    assert rows[1]["gold_text"] == "blue"


def test_csv_export(store: Store) -> None:
    out = io.StringIO(newline="")
    n = export_run(store, "run1", "csv", out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue(), newline="")))
    assert n == len(rows) == len(TEXTS) + 1
    assert [r["prompt"] for r in rows] == _prompts()
    assert [r["text"] for r in rows[:-1]] == TEXTS
    assert rows[-1]["text"] == ""
    assert rows[-1]["error_type"] == "timeout"
    assert json.loads(rows[2]["metadata"]) == {"subtask": "color", "i": 2}
    assert {"model", "sample_id", "repeat", "key", "stage", "correct", "gold"} <= set(rows[0])


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_to_file(store: Store, tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"out.{fmt}"
    n = export_run_to_file(store, "run1", fmt, path)  # type: ignore[arg-type]
    assert n == len(TEXTS) + 1
    with open(path, encoding="utf-8", newline="") as f:
        rows = [json.loads(line) for line in f] if fmt == "jsonl" else list(csv.DictReader(f))
    assert len(rows) == n
    assert [r["text"] for r in rows[:-1]] == TEXTS
    assert [r["prompt"] for r in rows] == _prompts()


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_run_without_scores_exports_nothing(store: Store, fmt: str) -> None:
    out = io.StringIO()
    assert export_run(store, "other", fmt, out) == 0  # type: ignore[arg-type]
    if fmt == "jsonl":
        assert out.getvalue().strip() == ""
    else:  # a header alone is fine, data rows are not
        assert list(csv.DictReader(io.StringIO(out.getvalue()))) == []
