"""Every version of VLMEvalKit's ``can_infer`` against the reference code of that version.

- vlmevalkit_rule_versions.json.gz: 3,490 answers (hand-made edge cases where the versions part,
  and seeded random ones) with what ``vlmeval/utils/matching_util.py`` ``can_infer`` read at
  every commit of each version (generate/vlmevalkit_rule_versions.py): 2024-01-08, 2024-02-04,
  2025-08-04 and 2026-06-17.
"""

from __future__ import annotations

import gzip
import json
from functools import cache, partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.bounded import SHAPES, bounded_each

from lmmprobe.parse.vlmevalkit import LATEST_RULES, RULE_VERSIONS, can_infer

DATA = Path(__file__).parent / "data" / "vlmevalkit_rule_versions.json.gz"


@cache
def _doc() -> dict[str, Any]:
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def test_each_version_is_pinned_to_the_commits_that_read_as_it_does() -> None:
    ref = _doc()["reference"]
    assert ref["repository"] == "open-compass/VLMEvalKit"
    assert list(ref["versions"]) == list(RULE_VERSIONS)
    for name, version in RULE_VERSIONS.items():
        assert ref["versions"][name][0].startswith(version.commit)
    # The latest version is the one every other part of lmmprobe reads with (e8e78f0's).
    assert ref["versions"][LATEST_RULES][-1].startswith("e8e78f0")


@pytest.mark.parametrize("version", list(RULE_VERSIONS))
def test_every_answer_is_read_as_that_versions_can_infer_reads_it(version: str) -> None:
    differ = [
        (case["answer"][:80], case["choices"], got, case["read"][version])
        for case in _doc()["cases"]
        if (got := can_infer(case["answer"], case["choices"], version)) != case["read"][version]
    ]
    assert not differ, differ[:5]


def test_the_corpus_holds_answers_on_which_each_pair_of_versions_parts() -> None:
    # Without them the test above would not tell the versions apart.
    assert all(n >= 50 for n in _doc()["differ"].values()), _doc()["differ"]


def test_an_unknown_version_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"'2023-12-01'.*2024-01-08, 2024-02-04"):
        can_infer("A", {"A": "cat", "B": "dog"}, "2023-12-01")


_LETTERS = st.sampled_from(["A", "B", "C", "D", "Z", "(A)", "**B**", "answer is C", " "])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(_LETTERS, st.text(max_size=20)), max_size=40),
    st.lists(st.text(max_size=15), min_size=1, max_size=5),
    st.sampled_from(list(RULE_VERSIONS)),
)
def test_any_answer_reads_as_one_of_its_options_z_or_nothing(
    parts: list[str], texts: list[str], version: str
) -> None:
    choices = {chr(65 + i): t for i, t in enumerate(texts)}
    got = can_infer(" ".join(parts), choices, version)
    assert got is None or got == "Z" or got in choices


@pytest.mark.parametrize("version", list(RULE_VERSIONS))
def test_every_version_reads_long_hostile_answers_in_bounded_time(version: str) -> None:
    choices = {"A": "a cat", "B": "a dog", "C": "answer", "D": "is"}
    bounded_each(
        {
            f"{version} on {name}": partial(can_infer, shape(100_000), choices, version)
            for name, shape in SHAPES.items()
        }
    )
