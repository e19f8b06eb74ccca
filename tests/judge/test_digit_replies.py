"""A judge reply that is a long run of digits is unreadable, never a failed judging step.

Re-test 20 of issue 34, #20: ``lmmprobe-open`` on a graded scale read a reply of 5,000 digits
(under `REPLY_LIMIT`) as a grade with ``int()``, which raises past Python's 4,300-digit limit:
the whole judging step failed ("judging failed: ValueError: Exceeds the limit (4300 digits)
... use sys.set_int_max_str_digits()"), the run `judging_failed`. A model repeating a digit is
a failure every judge model can show. Every protocol's reader is given such replies here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.console import lmmprobe_with_key
from tests.judge.test_hostile_replies import READERS

from lmmprobe.judge.protocol import REPLY_LIMIT
from lmmprobe.testing.openai_server import FakeOpenAIServer

DIGITS = 5_000  # past int()'s 4,300, under the reply limit
assert DIGITS < REPLY_LIMIT

REPLIES = {
    "digits": "9" * DIGITS,
    "grade: digits": "Grade: " + "7" * DIGITS,
    "digits / 10": "8" * DIGITS + "/10",
    "digits and digits": "9" * DIGITS + " " + "9" * DIGITS,
    "decimal": "0." + "9" * DIGITS,
    "zeros then 7": "0" * DIGITS + "7",
}


@pytest.mark.parametrize("reply", sorted(REPLIES))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_reply_of_many_digits_is_read_or_unreadable(reader: str, reply: str) -> None:
    READERS[reader](REPLIES[reply])  # any reading, or None: no exception


def test_a_graded_judge_answering_digits_leaves_the_answers_unjudged(tmp_path: Path) -> None:
    rows = tmp_path / "open.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"id": f"o{i}", "images": [], "question": "Colour?", "answer": ["red"]})
            + "\n"
            for i in range(3)
        ),
        encoding="utf-8",
    )
    with FakeOpenAIServer(reply_table=[("Grade the model", "9" * DIGITS), ("", "red")]) as server:
        done = lmmprobe_with_key(
            "run", "-m", f"openai:m@{server.base_url}", "--data", rows,
            "--judge", f"openai:judge@{server.base_url}", "--judge-scale", "1-10",
            "--judge-when", "always", "--db", tmp_path / "db", "--out", tmp_path / "o",
        )  # fmt: skip
    said = done.stdout + done.stderr
    assert "Exceeds the limit" not in said and "judging failed" not in said, said[-3000:]
    assert "replies could be read" in " ".join(said.split()), said[-3000:]  # unreadable, named
