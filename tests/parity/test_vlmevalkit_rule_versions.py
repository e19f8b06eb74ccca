"""Every version of VLMEvalKit's ``can_infer`` against the reference code of that version.

- vlmevalkit_rule_versions.json.gz: 3,590 answers (hand-made edge cases where the versions part,
  and seeded random ones) with what ``vlmeval/utils/matching_util.py`` ``can_infer`` read at
  every commit of each version (generate/vlmevalkit_rule_versions.py), with the ``VERBOSE``
  environment variable unset and set (``+verbose``): 2023-11-25, 2023-12-25, 2024-01-08,
  2024-02-04, 2025-08-04 and 2026-06-17.
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
    with pytest.raises(
        ValueError, match=r"'2023-12-01'.*2023-11-25, 2023-12-25, 2024-01-08, .*NAME\+verbose"
    ):
        can_infer("A", {"A": "cat", "B": "dog"}, "2023-12-01")


def test_the_december_2023_rules_read_a_letter_among_a_to_e_whatever_the_options() -> None:
    # can_infer_option(answer, num_choice=5): the item's options were never passed to it.
    two = {"A": "cat", "B": "dog"}
    assert can_infer("D", two, "2023-12-25") == "D"
    assert can_infer("D", two, "2024-01-08") is None
    assert can_infer("F", {**two, "F": "fig"}, "2023-12-25") is None
    refusal = "Sorry, I can't help with images of people yet."
    assert [can_infer(refusal, two, v) for v in ("2023-11-25", "2023-12-25")] == ["E", "Z"]


def test_under_verbose_a_lone_letter_beside_the_article_a_is_not_read() -> None:
    # os.environ.get('VERBOSE', 0): any text set, "0" included, turns the check on.
    choices = {"A": "a cat", "B": "a dog"}
    assert can_infer("A dog is what I see", choices, "2024-02-04") == "A"
    assert can_infer("A dog is what I see", choices, "2024-02-04+verbose") == "B"  # its text
    assert can_infer("A dog", choices, "2024-02-04+verbose") == "A"  # three words at most


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
    # Before 2024-01-08 a lone letter is looked for among A to E whatever the options.
    letters = set(choices) | (set("ABCDE") if RULE_VERSIONS[version].letters else set())
    assert got is None or got == "Z" or got in letters


@pytest.mark.parametrize("version", list(RULE_VERSIONS))
def test_every_version_reads_long_hostile_answers_in_bounded_time(version: str) -> None:
    choices = {"A": "a cat", "B": "a dog", "C": "answer", "D": "is"}
    bounded_each(
        {
            f"{version} on {name}": partial(can_infer, shape(100_000), choices, version)
            for name, shape in SHAPES.items()
        }
    )
