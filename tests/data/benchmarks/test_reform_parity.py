"""Parity of every ReForm-Eval dataset's formulation with ReForm-Eval's own dataset classes.

``reform_parity/expected.json`` is what FudanDISC/ReForm-Eval @ df1cfa7b's
``build.load_reform_dataset`` made of the clone ``reform_parity/make_expected.py`` writes
(command in that file): per dataset, per sample, the question, options, gold, instruct and a
hash of the image's pixels, boxes drawn. lmmprobe reads the same clone through each
``reform-eval-*`` definition and must give the same sample, except where ReForm-Eval draws at
random at load time (documented in docs/definitions.md): a caption question (lmmprobe asks entry
0 of the same list) and TDIUC's / MSCOCO-OC's three distractors (lmmprobe draws them from the
same list, seeded per question).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.data.base import load_source
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.data.benchmarks.reform_common import SETS
from lmmprobe.run.scoring import score_response
from lmmprobe.schema import FormulateConfig, Request, Response, Sample

HERE = Path(__file__).parent / "reform_parity"
sys.path.insert(0, str(HERE))
from make_expected import pixels, write_clone  # noqa: E402

EXPECTED: dict[str, list[dict[str, Any]]] = json.loads(
    (HERE / "expected.json").read_text(encoding="utf-8")
)
DRAWN = {"tdiuc", "counting"}
BENCHMARKS.names()  # the definitions register (and fill SETS) when the registry is first read


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reform") / "ReForm-Eval-Data"
    write_clone(root)
    return root


def test_every_dataset_was_run_by_reform_eval() -> None:
    assert sorted(EXPECTED) == sorted(SETS) and len(SETS) == 61


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_samples_are_reform_evals(name: str, clone: Path) -> None:
    spec = SETS[name]
    rows = EXPECTED[name]
    listed = rows[0].get("instruction_list") if rows else None
    if listed is not None:
        rows = rows[1:]
    got = load_source(f"{name},path={clone}")
    assert not got.problems, [str(p) for p in got.problems]
    assert len(got.samples) == len(rows)
    for sample, want in zip(got.samples, rows, strict=True):
        assert sample.id == f"{name}/{want['id']}"
        assert pixels(sample.images[0].load()) == want["pixels"], "image (boxes, crop)"
        assert sample.metadata.get("instruct") == want["instruct"]
        if listed is not None:
            # ReForm-Eval draws the caption question from its list; lmmprobe asks entry 0.
            assert want["question"] in listed and sample.question == listed[0]
        else:
            assert sample.question == want["question"]
        if sample.choices is None:
            assert want["options"] is None
            refs = want["answer"] if isinstance(want["answer"], list) else [want["answer"]]
            assert sample.answer == refs
            continue
        gold = sample.choices[int(sample.answer)]  # type: ignore[arg-type]
        assert gold == want["options"][int(want["answer"])]
        if spec.family in DRAWN and want["options"] != ["yes", "no"]:
            # make_choices: three distractors then the answer, from the same list.
            assert len(sample.choices) == len(want["options"]) == 4
            assert sample.choices[-1] == gold and gold not in sample.choices[:-1]
        else:
            assert sample.choices == want["options"]
            assert sample.answer == int(want["answer"])


def _verdict(sample: Sample, output: str) -> bool | None:
    """How a run scores `output` for `sample` with ``--matcher reform`` (options as released)."""
    options = sample.choices or []
    request = Request(
        key="k", sample_id=sample.id, repeat=0, method="generate", messages=[], prompt="?",
        options=options, marks=[chr(ord("A") + j) for j in range(len(options))],
        order=list(range(len(options))),
    )  # fmt: skip
    response = Response(key="k", text=output, latency_s=0.0)
    return score_response("m", sample, request, response, FormulateConfig(matcher="reform")).correct


@pytest.mark.parametrize("name", sorted(n for n, rows in EXPECTED.items() if rows[-1]["verdicts"]))
def test_a_run_scores_as_reform_evals_metric(name: str, clone: Path) -> None:
    # SingleChoice: SingleChoiceMetric; OCROpenEnded: OCROpenEndedMetric; KIEOpenEnded:
    # KIEOpenEndedMetric (metrics.get_metric of the dataset's formulation), on the same outputs.
    rows = EXPECTED[name]
    samples = load_source(f"{name},path={clone}").samples
    for sample, want in zip(samples, rows, strict=True):
        if SETS[name].family in DRAWN and sample.choices != want["options"]:
            continue  # distractors drawn apart: the verdicts are about other options
        for output, verdict in want["verdicts"]:
            assert _verdict(sample, output) == bool(verdict), (sample.id, output)


def test_the_drawn_distractors_are_reproducible(clone: Path) -> None:
    first = load_source(f"reform-eval-tdiuc-color,path={clone}").samples
    again = load_source(f"reform-eval-tdiuc-color,path={clone}").samples
    assert [s.choices for s in first] == [s.choices for s in again]
