"""Matchers are registry entries: the built-ins read as before, and a matcher registered by a
user's module is chosen by name through `RunSpec` and a real run."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from lmmprobe.parse import MATCHERS, Extraction, unparsed
from lmmprobe.registry import RegistryError
from lmmprobe.run import execute_run
from lmmprobe.schema import FormulateConfig, RunSpec
from lmmprobe.store import Store

OPTIONS = ["red", "green", "blue"]
MARKS = ["A", "B", "C"]


def read(name: str, output: str, **config: float) -> Extraction:
    return MATCHERS.get(name)(output, OPTIONS, MARKS, FormulateConfig(**config))


def test_builtin_matchers_are_registered() -> None:
    assert {"lmmprobe", "reform", "dysca"} <= set(MATCHERS.names())
    assert all(MATCHERS.summary(n) for n in ("lmmprobe", "reform", "dysca"))


@pytest.mark.parametrize(
    ("name", "output", "index", "stage"),
    [
        ("lmmprobe", "(B)", 1, "mark"),
        ("lmmprobe", "blue", 2, "text"),
        ("lmmprobe", "gren", 1, "fuzzy"),
        ("lmmprobe", "I cannot tell", None, "unparsed"),
        ("reform", "(C) blue", 2, "mark"),
        ("reform", "green", 1, "text"),
        ("reform", "the green one", None, "unparsed"),
        ("reform", "(D)", None, "unparsed"),  # past the options: ReForm-Eval records raw text
        ("reform", "(c) or (A)", 2, "mark"),  # the first mark, either case
        ("reform", "(2)", 1, "mark"),  # digits count from 1, whatever marks were shown
        ("reform", "(z) then (A)", None, "unparsed"),  # the first mark decides, even out of range
        ("reform", "", None, "unparsed"),
        ("dysca", "(b)", 1, "mark"),
        ("dysca", "I think C", 2, "mark"),  # the last capital
        ("dysca", "bleu", 2, "fuzzy"),  # closest by edit distance
        ("dysca", "   ", 0, "fuzzy"),  # Dysca still picks the nearest (shortest) choice line
    ],
)
def test_builtin_matchers_read_as_their_rules(
    name: str, output: str, index: int | None, stage: str
) -> None:
    got = read(name, output)
    assert (got.index, got.stage) == (index, stage)


def test_fuzzy_threshold_comes_from_the_config() -> None:
    assert read("lmmprobe", "gren", fuzzy_threshold=99.0).stage == "unparsed"


@pytest.fixture
def from_the_end() -> Iterator[str]:
    """A matcher a user's module registers: it counts the mark from the last option."""

    @MATCHERS.register("from-the-end", summary="mark counted from the last option")
    def match(
        output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
    ) -> Extraction:
        for i, mark in enumerate(marks):
            if f"({mark})" in output:
                return Extraction(len(options) - 1 - i, "mark", mark)
        return unparsed("no_match")

    yield "from-the-end"
    MATCHERS.unregister("from-the-end")


def test_registered_matcher_is_chosen_by_name_in_a_run(tmp_path, from_the_end: str) -> None:
    spec = RunSpec.model_validate(
        {"models": ["first"], "data": "demo,n=12", "formulate": {"matcher": from_the_end}}
    )
    with Store(tmp_path / "db.sqlite") as store:
        outcome = execute_run(spec, store=store)
        asks = {s.sample_id: s for s in store.model_scores(outcome.run_id, "first")}
    choice = [s for s in outcome.load.samples if s.is_choice]
    assert choice
    for sample in choice:
        # "first" always answers "(A)", which this matcher reads as the last option shown.
        score = asks[sample.id]
        assert score.stage == "mark"
        assert score.prediction == len(sample.choices or []) - 1


def test_unknown_matcher_fails_before_the_run_starts(tmp_path) -> None:
    spec = RunSpec.model_validate({"models": ["first"], "formulate": {"matcher": "foo"}})
    with Store(tmp_path / "db.sqlite") as store:
        with pytest.raises(
            RegistryError,
            match="unknown matcher 'foo'; known: dysca, hallusionbench, lmmprobe, longvideobench, "
            "mme, mme-realworld, mvbench, pope, reform, tempcompass, tempcompass-caption-matching, "
            "tempcompass-captioning, tempcompass-yes-no, videomme, vlmevalkit",
        ):
            execute_run(spec, store=store)
        assert store.list_runs() == []


def test_benchmark_named_as_a_benchmarks_matcher_fails_before_the_run_starts(tmp_path) -> None:
    # `benchmark` is the run's choice of each benchmark's own matcher, not a matcher: given as
    # one benchmark's (a crafted spec), a run would stop at that benchmark's first answer.
    spec = RunSpec.model_validate(
        {
            "models": ["first"],
            "formulate": {"matcher": "benchmark", "matchers": {"mme": "benchmark"}},
        }
    )
    with Store(tmp_path / "db.sqlite") as store:
        with pytest.raises(
            RegistryError, match=r"unknown matcher 'benchmark'; (did you mean [^?]*\? )?known: "
        ):
            execute_run(spec, store=store)
        assert store.list_runs() == []


@pytest.mark.parametrize("index", [-1, 99])
def test_matcher_index_outside_the_options_is_an_error_not_an_answer(tmp_path, index: int) -> None:
    @MATCHERS.register("out-of-range")
    def match(
        output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
    ) -> Extraction:
        return Extraction(index, "mark", "A")

    try:
        spec = RunSpec.model_validate(
            {"models": ["first"], "data": "demo,n=4", "formulate": {"matcher": "out-of-range"}}
        )
        with Store(tmp_path / "db.sqlite") as store:
            with pytest.raises(ValueError, match=f"returned option index {index} for a request"):
                execute_run(spec, store=store)
            # The answers were stored before scoring failed: nothing is asked twice.
            assert store.conn.execute("SELECT count(*) FROM responses").fetchone()[0] > 0
    finally:
        MATCHERS.unregister("out-of-range")
