"""A data row's own prompt template, benchmark tag, history and options are checked at load.

Each is that row's problem, named FILE:LINE and the field, in the dry run and before any
request of a real run; the other rows run. (Re-test 11 of issue 34, items 20, 22, 21 and 9.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe

from lmmprobe.schema.benchmark import (
    MAX_PLACEHOLDER_USES,
    REFERENCE_METRICS,
    TEMPLATE_FIELDS,
    placeholder_uses,
    template_uses,
)
from lmmprobe.schema.sample import MAX_OPTIONS, MAX_PROMPT_CHARS, MAX_TURNS

GOOD = {"id": "good", "images": [], "question": "Fine?", "choices": ["x", "y"], "answer": 0}


def _rows(tmp_path: Path, bad: dict[str, Any]) -> Path:
    path = tmp_path / "rows.jsonl"
    rows = [GOOD, {**GOOD, "id": "bad", "question": "Q?", **bad}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def _dry_run(tmp_path: Path, bad: dict[str, Any], *extra: str) -> tuple[str, str]:
    """The dry run over a good row and `bad`: what it says of the bad row, and its stdout."""
    path = _rows(tmp_path, bad)
    out = lmmprobe(
        "run", "-m", "random", "--data", path, "--db", tmp_path / "db.sqlite", "--dry-run", *extra
    )
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    # The good row is still planned; the bad one is skipped, named by file and line.
    assert "skipped 1 invalid row(s)" in out.stderr
    lines = [ln.strip() for ln in out.stderr.splitlines() if f"{path}:2: " in ln]
    assert len(lines) == 1, out.stderr
    return lines[0].removeprefix(f"{path}:2: "), out.stdout


def _template(template: str, **more: str) -> dict[str, Any]:
    return {"metadata": {"prompt_template": template, "prompt_style": "benchmark", **more}}


@pytest.mark.parametrize(
    ("template", "said"),
    [
        # A format spec padded a 507-byte file's prompts to 600 MB each (a MemoryError).
        ("{question:>600000000}", "placeholder {question} takes no format spec or conversion"),
        ("{question.__class__.__mro__}", "unknown placeholder {question.__class__.__mro__}"),
        ("{question[0]}", "unknown placeholder {question[0]}"),
        ("{question!r}", "placeholder {question} takes no format spec or conversion"),
        ("{0}", "unknown placeholder {0}"),
        ("{nope}", "unknown placeholder {nope}; the placeholders are {question}, {options}"),
        ("{question:{question}}", "takes no format spec"),
        ("{question", "not a valid template"),
        ("{question}" * (MAX_PLACEHOLDER_USES + 1), "is used 9 times"),
    ],
)
def test_a_rows_prompt_template_is_checked_at_load_as_that_rows_problem(
    tmp_path: Path, template: str, said: str
) -> None:
    problem, stdout = _dry_run(tmp_path, _template(template))
    assert problem.startswith("metadata.prompt_template: ")
    assert said in problem
    assert "1 request(s) would be sent" in stdout


def test_a_rows_option_format_is_held_to_the_same_rule(tmp_path: Path) -> None:
    bad = _template("{question}\n{options}", option_format="{text:>50000000}")
    problem, _ = _dry_run(tmp_path, bad)
    assert problem == (
        "metadata.option_format: placeholder {text} takes no format spec or conversion"
    )


def test_a_bare_template_of_ones_own_is_used(tmp_path: Path) -> None:
    path = _rows(tmp_path, _template("Look: {question}\n{options}\nPick one."))
    out = lmmprobe("run", "-m", "random", "--data", path, "--db", tmp_path / "db.sqlite")
    assert out.returncode == 0, out.stderr
    assert "invalid row" not in out.stderr


def test_the_judge_prompt_rule_is_the_data_templates_rule() -> None:
    fields = ("question", "answer")
    assert placeholder_uses("{question} {answer} {question}", fields) == {
        "question": 2,
        "answer": 1,
    }
    with pytest.raises(ValueError, match="takes no format spec"):
        placeholder_uses("{answer:>9}", fields)


def test_a_tag_its_answer_cannot_be_scored_by_is_refused_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    tag = {"benchmark": "bx", "split": "test", "metric": "anls"}
    problem, stdout = _dry_run(tmp_path, _template("{question}", **tag))
    assert problem.startswith("metadata.metric: 'anls' scores open-ended answers")
    assert "1 request(s) would be sent" in stdout
    # The real run asks the good row and completes, where it used to pay then fail.
    path = _rows(tmp_path, _template("{question}", **tag))
    out = lmmprobe("run", "-m", "random", "--data", path, "--db", tmp_path / "db.sqlite")
    assert out.returncode == 0, out.stderr
    assert "(complete)" in out.stdout
    assert "metadata.metric" in out.stderr


def test_an_open_ended_row_may_carry_a_reference_metric(tmp_path: Path) -> None:
    tag = {"benchmark": "bx", "split": "test", "metric": "anls"}
    bad = {**_template("{question}", **tag), "choices": None, "answer": ["a b"]}
    path = _rows(tmp_path, bad)
    out = lmmprobe("run", "-m", "random", "--data", path, "--db", tmp_path / "db.sqlite")
    assert out.returncode == 0, out.stderr
    assert "invalid row" not in out.stderr
    assert "anls" in REFERENCE_METRICS


def test_a_long_tag_is_refused_and_shortened_when_named(tmp_path: Path) -> None:
    tag = {"benchmark": "x" * 100_000, "split": "test"}
    problem, _ = _dry_run(tmp_path, _template("{question}", **tag))
    assert problem.startswith("metadata.benchmark: 100,000 characters ('xxx")
    assert len(problem) < 300


def test_history_turns_are_bounded(tmp_path: Path) -> None:
    turns = [{"role": "user", "content": "x"}] * (MAX_TURNS + 1)
    problem, _ = _dry_run(tmp_path, {"history": turns})
    assert problem == (
        f"history: {MAX_TURNS + 1} turns, more than the {MAX_TURNS} one sample may carry "
        "before its question"
    )


def test_options_are_bounded_whatever_the_marks(tmp_path: Path) -> None:
    # Number marks have no 26-letter stop; --circular made N options N prompts of N options.
    bad = {"choices": [f"o{i}" for i in range(2000)]}
    problem, _ = _dry_run(tmp_path, bad, "--circular", "--marks", "number")
    assert problem == (
        f"choices: 2,000 options, more than the {MAX_OPTIONS} lmmprobe asks about in one question"
    )


def test_one_requests_prompt_text_is_bounded(tmp_path: Path) -> None:
    size = MAX_PROMPT_CHARS // 4 + 1
    bad = {"choices": [c * size for c in "ABCD"]}
    problem, _ = _dry_run(tmp_path, bad, "--circular")
    assert problem.startswith("its prompt is ")
    assert f"more than the {MAX_PROMPT_CHARS:,} one request may hold" in problem


def test_reference_metrics_are_the_open_benchmark_metrics_that_read_references() -> None:
    from lmmprobe.metrics.builtin import benchmark_open as bo

    assert {bo.VQA, bo.VQA_EVALAI, bo.ANLS, bo.RELAXED, bo.GQA, bo.OCRBENCH, bo.COCO} == (
        REFERENCE_METRICS
    )


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}!:.[]0aqustion", max_size=40))
def test_any_template_is_allowed_bare_or_refused_with_a_value_error(text: str) -> None:
    try:
        used = template_uses(text, TEMPLATE_FIELDS)
    except ValueError:
        return
    assert set(used) <= set(TEMPLATE_FIELDS)
    # What passes fills without a surprise: no spec, attribute or index to follow.
    text.format(question="q", options="o", context="c")
