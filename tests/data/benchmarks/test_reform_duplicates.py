"""Parity of a run's repeats with ReForm-Eval's duplicates, dataset by dataset.

``reform_parity/duplicates.json`` is what FudanDISC/ReForm-Eval @ df1cfa7b's
``build.load_reform_dataset`` asks on each of 5 duplicates (``random_instruct``,
``shuffle_options``), under generation and likelihood inference, of the clone
``reform_parity/make_duplicates.py`` writes (command in that file). lmmprobe reads the same
clone through each ``reform-eval-*`` definition and plans repeat ``r`` of 5 of each sample
(`Formulator` with ``repeats=5``): its prompt must be the class's instruct and question for
duplicate ``r`` (the options rendered as ReForm-Eval renders them, in lmmprobe's order; under
likelihood, the instruct and question with no options), and its options the same multiset with
the same gold text. ReForm-Eval's option orders are unseeded draws, so orders are not compared;
TDIUC's and MSCOCO-OC's distractors are unseeded draws too (only the gold and the count are
compared), and where ReForm-Eval's own gold text changes between duplicates of one item (its
in-place shuffle of the stored options, the gold index kept) the gold is not compared.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.data.base import load_source
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.data.benchmarks.reform_common import SETS, WORDINGS
from lmmprobe.formulate import duplicates as formulate_duplicates
from lmmprobe.formulate.prompt import Formulator
from lmmprobe.schema import FormulateConfig, Sample

HERE = Path(__file__).parent / "reform_parity"
sys.path.insert(0, str(HERE))
from make_duplicates import write_wide_clone  # noqa: E402

FOUND: dict[str, dict[str, list[dict[str, Any]]]] = json.loads(
    (HERE / "duplicates.json").read_text(encoding="utf-8")
)
DRAWN = {"tdiuc", "counting"}
REPEATS = 5
BENCHMARKS.names()  # the definitions register (and fill SETS) when the registry is first read


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reform-wide") / "ReForm-Eval-Data"
    write_wide_clone(root)
    return root


def _by_id(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    # The duplicated dataset lists each item's duplicates together, duplicate r at r.
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        out[row["id"]].append(row)
    return out


def _expected_prompt(want: dict[str, Any], options: list[str] | None, likelihood: bool) -> str:
    text = want["question"]
    if options is not None and not likelihood:
        shown = "; ".join(f"({chr(ord('A') + j)}) {o}" for j, o in enumerate(options))
        text += f" Options: {shown}."
    return f"{want['instruct']} {text}" if want["instruct"] else text


def test_the_data_and_the_formulator_name_the_same_key() -> None:
    # data cannot import formulate (layers): each names the metadata key.
    assert WORDINGS == formulate_duplicates.WORDINGS


def test_every_dataset_and_method_was_run() -> None:
    assert sorted(FOUND) == sorted(SETS) and len(SETS) == 61
    choice = [n for n, s in SETS.items() if s.formulation == "SingleChoice"]
    assert all("likelihood" in FOUND[n] for n in choice) and len(choice) == 42


@pytest.mark.parametrize("method", ["generate", "likelihood"])
@pytest.mark.parametrize("name", sorted(FOUND))
def test_each_repeat_asks_reform_evals_duplicate(name: str, method: str, clone: Path) -> None:
    reference = FOUND[name].get("generation" if method == "generate" else "likelihood")
    if reference is None:
        pytest.skip("ReForm-Eval has no likelihood inference for open-ended formulations")
    spec = SETS[name]
    samples: list[Sample] = load_source(f"{name},path={clone}").samples
    wanted = _by_id(reference)
    assert len(samples) == len(wanted)
    formulator = Formulator(FormulateConfig(method=method), seed=0, repeats=REPEATS)
    likelihood = method == "likelihood"
    for sample in samples:
        duplicates = wanted[sample.id.split("/", 1)[1]]
        assert len(duplicates) == REPEATS
        golds = {d["gold"] for d in duplicates}
        for repeat, want in enumerate(duplicates):
            ask = formulator.ask(sample, repeat)
            assert ask.prompt == _expected_prompt(want, ask.options, likelihood), (
                sample.id,
                repeat,
            )
            if want["options"] is None:
                assert ask.options is None
                continue
            assert ask.options is not None and ask.order is not None
            gold = ask.options[ask.order.index(int(sample.answer))]  # type: ignore[arg-type]
            if len(golds) == 1:
                assert gold == want["gold"]
            if spec.family in DRAWN and sorted(want["options"]) != ["no", "yes"]:
                assert len(ask.options) == len(want["options"]) == 4
            else:
                assert sorted(ask.options) == sorted(want["options"])
            if likelihood:
                assert ask.candidates == ask.options and ask.method == "likelihood"


def test_repeats_shuffle_every_duplicate_seeded(clone: Path) -> None:
    sample = load_source(f"reform-eval-cifar10,path={clone}").samples[0]
    orders = [Formulator(seed=3, repeats=REPEATS).ask(sample, r).order for r in range(REPEATS)]
    again = [Formulator(seed=3, repeats=REPEATS).ask(sample, r).order for r in range(REPEATS)]
    assert orders == again  # reproducible, where ReForm-Eval's random.shuffle is not
    assert len({tuple(o or ()) for o in orders}) > 1
    # One repeat keeps the released order, as ReForm-Eval's README command (one duplicate).
    assert Formulator(seed=3).ask(sample, 0).order == [0, 1, 2, 3]


def test_one_caption_duplicate_draws_its_wording_seeded(clone: Path) -> None:
    # With one duplicate the caption classes draw the question with random.choice.
    sample = load_source(f"reform-eval-mscoco-caption,path={clone}").samples[0]
    wordings = SETS["reform-eval-mscoco-caption"].questions
    asked = {Formulator(seed=s).ask(sample, 0).prompt for s in range(20)}
    assert asked <= set(wordings) and len(asked) > 1
    assert Formulator(seed=1).ask(sample, 0).prompt == Formulator(seed=1).ask(sample, 0).prompt
