"""A VLMEvalKit table is read with the ``can_infer`` of the version that wrote it (issue 36, item 4).

The tables under ``fixtures/vlmevalkit/rule_versions/`` were written by VLMEvalKit's own
``mcq_vanilla_eval`` as of 2024-08-30 (open-compass/VLMEvalKit @ 0719911, whose ``can_infer``
has the 2024-02-04 rules) on an MMStar-shaped table whose answers the later rules read
otherwise; ``expected.json`` holds what its readers returned for each row (see ``generate.py``
there). Read with today's rules, a few rows' readings contradict the file's own ``hit``; read
with the rules the file's own verdicts point to, none does, and the audit files the items where
lmmprobe reads as today's rules do under "rule version".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import own_datasets_cache  # noqa: F401 (a fixture)

from lmmprobe.parse.vlmevalkit import LATEST_RULES, RULE_VERSIONS, can_infer
from lmmprobe.predictions.audit import Verdict, cause_of
from lmmprobe.predictions.imported import READERS, ImportedPrediction, ReadOptions
from lmmprobe.predictions.readers._vlmevalkit_log import RuleTally

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

HERE = Path(__file__).parent / "fixtures" / "vlmevalkit" / "rule_versions"
EXPECTED: dict[str, Any] = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
TABLES = list(EXPECTED["tables"])
JUDGED = HERE / "Model_MMStar_openai_result.xlsx"


def _read(
    path: Path, version: str | None = None
) -> tuple[dict[str, str], list[ImportedPrediction]]:
    reader = READERS.get("vlmevalkit")
    options = ReadOptions(tool_version=version)
    origin = reader.origin(path, options)
    return dict(origin.detail), list(reader.read(path, options))


def _contradicting(rows: list[ImportedPrediction]) -> list[int]:
    """Rows whose reading does not give the file's own hit (or that have no reading)."""
    return [
        p.row
        for p in rows
        if p.tool_extraction is None or (p.tool_extraction == p.gold) != (p.tool_verdict == 1.0)
    ]


@pytest.mark.parametrize("name", TABLES)
def test_a_2024_table_is_read_with_the_rules_its_own_verdicts_point_to(name: str) -> None:
    detail, rows = _read(HERE / name)
    assert (detail["rule_version"], detail["rule_version_from"]) == ("2024-02-04", "verdicts")
    read = EXPECTED["tables"][name]["read"]
    got = {p.sample_id: (p.tool_extraction, p.tool_decided_by) for p in rows}
    assert got == {k: (v["opt"], v["by"]) for k, v in read.items()}
    assert not _contradicting(rows)


@pytest.mark.parametrize("name", TABLES)
def test_todays_rules_contradict_the_files_own_hit_on_some_rows(name: str) -> None:
    # What lmmprobe did before: the log re-read with the rules of today.
    _, rows = _read(HERE / name, LATEST_RULES)
    assert len(_contradicting(rows)) >= 6


def test_each_row_whose_reading_changed_names_the_version_and_todays_reading() -> None:
    _, rows = _read(JUDGED)
    changed = [p for p in rows if p.tool_rule_version is not None]
    assert changed and all(p.tool_rule_version == "2024-02-04" for p in changed)
    for p in rows:
        choices = {k: str(p.fields[k]) for k in "ABCD"}
        today = can_infer(p.prediction, choices)
        then = can_infer(p.prediction, choices, "2024-02-04")
        assert (p.tool_rule_version is not None) == (today != then)
        if p.tool_rule_version is not None:
            assert p.tool_reading_latest == today


def test_a_version_given_is_read_with_and_an_unknown_one_refused() -> None:
    detail, rows = _read(JUDGED, "2025-08-04")
    assert (detail["rule_version"], detail["rule_version_from"]) == ("2025-08-04", "given")
    assert _contradicting(rows)
    with pytest.raises(ValueError, match=r"'2023-12-01'.*2023-12-25, 2024-01-08, 2024-02-04"):
        _read(JUDGED, "2023-12-01")


def test_a_table_whose_rows_tell_no_version_apart_is_read_with_the_latest() -> None:
    tally = RuleTally()
    tally.add("Match Log: B. ", "B", {"A": "cat", "B": "dog"}, "B", True)
    choice = tally.choose()
    assert (choice.version, choice.told) == (LATEST_RULES, "latest")
    # A 2024-02-04 refusal read as Z by its rules tells it from 2024-01-08's.
    tally.add(
        "Match Log: Cannot determine the answer. ",
        "Cannot determine the answer",
        {"A": "cat", "B": "dog"},
        "B",
        False,
    )
    choice = tally.choose()
    assert (choice.version, choice.telling, choice.contradicted) == ("2026-06-17", 1, 0)
    # Each version's +verbose twin reads these answers alike: the plain one, the default, wins.
    assert choice.alike == (
        "2024-02-04+verbose", "2024-02-04", "2025-08-04+verbose", "2025-08-04",
        "2026-06-17+verbose",
    )  # fmt: skip


def test_rows_read_as_only_december_2023_rules_read_tell_those_rules() -> None:
    # A lone "E" among four options: the December rules looked among A to E whatever the
    # options (and the file's hit says E was read and wrong); later rules read nothing.
    four = {"A": "cat", "B": "dog", "C": "cow", "D": "pig"}
    tally = RuleTally()
    tally.add("Match Log: E. ", "E", four, "A", False)
    tally.add("Match Log: A. ", "A", four, "A", True)
    choice = tally.choose()
    assert (choice.version, choice.told, choice.contradicted) == ("2023-12-25", "verdicts", 0)
    # A refusal its rules read as the letter E, right where E is the gold: the first version.
    five = {**four, "E": "none"}
    refusal = "Sorry, I can't help with images of people yet."
    tally.add(f"Match Log: {refusal}. ", refusal, five, "E", True)
    assert tally.choose().version == "2023-11-25"


def test_rows_only_the_verbose_check_reproduces_tell_that_the_run_had_verbose_set() -> None:
    # "I see it: A dog": a lone A among more than three words is skipped under VERBOSE,
    # and the option text "a dog" read; without it the letter A is read.
    choices = {"A": "a cat", "B": "a dog"}
    tally = RuleTally()
    tally.add("Match Log: I see it: A dog. ", "I see it: A dog", choices, "B", True)
    choice = tally.choose()
    assert (choice.version, choice.contradicted) == ("2026-06-17+verbose", 0)
    assert "2026-06-17" not in choice.alike
    tally = RuleTally()
    tally.add("Match Log: I see it: A dog. ", "I see it: A dog", choices, "B", False)
    assert tally.choose().version == "2026-06-17"


def test_rule_version_is_the_cause_where_todays_rules_read_as_the_other_side() -> None:
    ours = Verdict("q1", 0.0, raw="A is right because", reading=None)
    theirs = Verdict("q1", 1.0, raw="A is right because", reading="cat", rule_version="2024-02-04")
    assert cause_of(ours, theirs) == "rule_version"
    # Today's rules would read "dog" where lmmprobe read nothing: not the version's doing.
    other = Verdict(
        "q1", 1.0, raw="A is right because", reading="cat", rule_version="2024-02-04",
        latest_reading="dog",
    )  # fmt: skip
    assert cause_of(ours, other) == "extraction"


def _offline(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "nodata").mkdir(exist_ok=True)
    return {
        "LMMPROBE_DATA_DIR": str(tmp_path / "nodata"),
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_CACHE": str(tmp_path / "hf-home" / "hub"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(tmp_path / "cli-datasets-cache"),
    }


def test_score_names_the_rule_version_and_audits_its_items_under_it(tmp_path: Path) -> None:
    done = lmmprobe(
        "score", JUDGED, "--benchmark", "mmstar", "--audit", "--as-published",
        "--format", "json", **_offline(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert any(
        "can_infer of 2024-02-04, told from the file's own verdicts" in n for n in doc["notes"]
    )
    causes = doc["audit"]["causes"]
    assert causes["rule_version"]["items"] == 6, causes
    # The tool's own figure is its recorded hits, whichever rules made them.
    overall = doc["as_published"]["tables"][0]["rows"][0]
    assert overall["none"] == EXPECTED["tables"][JUDGED.name]["overall"]
    text = lmmprobe(
        "score", JUDGED, "--benchmark", "mmstar", "--audit", "--tool-version", "2024-02-04",
        **_offline(tmp_path),
    )  # fmt: skip
    assert text.returncode == 0, text.stderr
    out = " ".join(text.stdout.split())  # as read, whatever the terminal's wrapping
    assert "can_infer of 2024-02-04 (--tool-version)" in out
    assert "rule version (the tool's rules of the version that wrote the file" in out


def test_an_unknown_tool_version_is_refused_in_one_line(tmp_path: Path) -> None:
    done = lmmprobe(
        "score", JUDGED, "--benchmark", "mmstar", "--tool-version", "2023-12-01",
        **_offline(tmp_path),
    )  # fmt: skip
    assert done.returncode != 0
    assert "--tool-version '2023-12-01'" in done.stderr
    assert "2023-11-25, 2023-12-25, 2024-01-08, 2024-02-04, 2025-08-04, 2026-06-17" in done.stderr


DECEMBER = Path(__file__).parent / "fixtures" / "vlmevalkit" / "december_2023"
"""CircularEval tables written by VLMEvalKit's evaluation of December 2023 (README.md there)."""


@pytest.mark.parametrize("version", ["2023-11-25", "2023-12-25"])
def test_a_december_2023_circular_table_is_told_from_its_own_logs(version: str) -> None:
    # Its logs name what the rules read from each group's first answer (a lone E among four
    # options read as E; a refusal as E, then Z): only that version reads them so.
    detail, rows = _read(DECEMBER / version / "Model_MMBench_DEV_EN_openai_result.xlsx")
    assert (detail["rule_version"], detail["rule_version_from"]) == (version, "verdicts")
    assert "it reproduces 4 " in detail["rule_version_note"]
    assert len(rows) == 5


def test_a_december_2023_exact_matching_table_tells_no_version() -> None:
    # December's exact matching logged every group alike, without reading any answer.
    detail, _ = _read(DECEMBER / "2023-12-25" / "Model_MMBench_DEV_EN_exact_matching_result.xlsx")
    assert (detail["rule_version"], detail["rule_version_from"]) == (LATEST_RULES, "latest")


def test_a_lone_e_alone_tells_december_but_not_which_of_its_two_versions() -> None:
    four = {"A": "cat", "B": "dog", "C": "cow", "D": "pig"}
    tally = RuleTally()
    log = "Failed in Prefetching Rolling 0: Answer is A, Prediction is E, Pre-fetched is E. "
    tally.add(log, "E", four, "A", False)
    choice = tally.choose()
    assert (choice.version, choice.told, choice.contradicted) == ("2023-12-25", "verdicts", 0)
    assert "2023-11-25" in choice.alike  # the tie is named, never hidden
    assert "2023-11-25" in choice.note("t.xlsx")
    # The judge asked on copy 0 of "B or E": the December rules read nothing there (two of A-E).
    tally.add("Failed in Rolling 0: Answer is B; Prediction is B or E; Pre-fetched is A; "
              "Match Log is A.\n", "B or E", four, "B", False)  # fmt: skip
    assert tally.choose().contradicted == 0
    assert tally.choose().version == "2023-12-25"


@pytest.mark.parametrize("version", ["2023-11-25", "2023-12-25"])
def test_score_names_the_december_version_it_told(version: str, tmp_path: Path) -> None:
    table = DECEMBER / version / "Model_MMBench_DEV_EN_openai_result.xlsx"
    done = lmmprobe(
        "score", table, "--benchmark", "mmbench", "--as-published", "--format", "json",
        **_offline(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    notes = json.loads(done.stdout)["notes"]
    assert any(f"can_infer of {version}, told from the file's own verdicts" in n for n in notes)


def test_a_random_draw_of_e_beside_four_options_tells_the_first_version() -> None:
    # Before 2023-12-25 the draw after three unreadable replies took E beside the options
    # (Z since): with the lone E above, the tie between the December versions is settled.
    four = {"A": "cat", "B": "dog", "C": "cow", "D": "pig"}
    tally = RuleTally()
    log = "Failed in Prefetching Rolling 0: Answer is A, Prediction is E, Pre-fetched is E. "
    tally.add(log, "E", four, "A", False)
    drawn = (
        "Failed in Rolling 0: Answer is B; Prediction is hmm; Pre-fetched is {}; "
        "Match Log is Failed to predict, thus randomly generate one. .\n"
    )
    tally.add(drawn.format("E"), "hmm", four, "B", False)
    choice = tally.choose()
    assert (choice.version, choice.contradicted) == ("2023-11-25", 0)
    assert "2023-12-25" not in choice.alike
    later = RuleTally()
    later.add(drawn.format("Z"), "hmm", four, "B", False)
    assert "2023-11-25" not in (later.choose().version, *later.choose().alike)


_PIECES = st.sampled_from([
    "Failed in Prefetching Rolling ", "Rolling 0 Matched.\n", "Failed in Rolling 0: Answer is ",
    "Rolling 0: Answer is ", "Succeed During Pre-fetching", "; Match Log is ", "Pre-fetched is ",
    ", Prediction is ", "Answer is A", "E", "Z", "0", "99999", "²", ": ", ". ", ".\n", " ",
])  # fmt: skip


@given(log=st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=12).map("".join),
       prediction=st.sampled_from(["E", "Z", "B or E", "A", "nan", ""]))  # fmt: skip
@settings(max_examples=300, deadline=None)
def test_a_tally_takes_any_log_without_failing(log: str, prediction: str) -> None:
    # A log in no format, or one VLMEvalKit cannot have written, tells nothing (the reader
    # names it where it reads the row); it never stops the tally.
    tally = RuleTally()
    tally.add(log, prediction, {"A": "cat", "B": "dog", "C": "cow", "D": "pig"}, "A", False)
    tally.add(log * 5_000, prediction * 5_000, {"A": "cat", "B": "dog"}, "B", True)
    assert tally.choose().version in RULE_VERSIONS
