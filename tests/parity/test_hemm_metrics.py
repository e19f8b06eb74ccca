"""HEMM's text metrics against the reference code (BARTScorer, HEMM's metrics, bert-score).

The data come from tests/parity/generate/hemm_metrics.py, run on the tiny random-weight
checkpoints committed beside them. The scores come out of float32 torch kernels, so they are
compared within `F32_TOLERANCE` (tests/parity/_floats.py says why), not bit for bit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.parity._floats import close_tree  # noqa: E402

from lmmprobe.metrics.generation import (  # noqa: E402
    bart_score,
    hemm_bart_score,
    hemm_bert_score,
)

DATA = Path(__file__).parent / "data"
BART = DATA / "hemm_metrics_tiny_bart"
BERT = DATA / "hemm_metrics_tiny_bert"
pytestmark = pytest.mark.usefixtures("hf_offline")


def _cases(name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads((DATA / name).read_text(encoding="utf-8"))["cases"]
    return cases


@pytest.fixture(autouse=True)
def one_thread() -> Any:
    # The generator ran with one thread: the same kernels give the closest float32 sums.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_bart_score_matches_bartscorer() -> None:
    cases = _cases("hemm_metrics_bartscore.json")
    diffs = []
    for case in cases:
        x = case["input"]
        got = bart_score(x["sources"], x["targets"], BART, batch_size=x["batch_size"], device="cpu")
        if not close_tree(got, case["expected"]):
            diffs.append((x, case["expected"], got))
    assert not diffs, f"{len(diffs)} of {len(cases)} differ, first: {diffs[:3]}"


def test_hemm_bart_score_matches_hemm() -> None:
    cases = _cases("hemm_metrics_hemm_bartscore.json")
    diffs = []
    for case in cases:
        x = case["input"]
        got = hemm_bart_score(x["predictions"], x["references"], BART, device="cpu")
        if not close_tree(got, case["expected"]):
            diffs.append((x, case["expected"], got))
    assert not diffs, f"{len(diffs)} of {len(cases)} differ, first: {diffs[:3]}"


def test_hemm_bert_score_matches_bert_score_as_hemm_calls_it() -> None:
    cases = _cases("hemm_metrics_hemm_bertscore.json")
    diffs = []
    for case in cases:
        x, want = case["input"], case["expected"]
        got = hemm_bert_score(x["predictions"], x["references"], BERT, num_layers=2, device="cpu")
        have = {
            "precision": got.items.precision,
            "recall": got.items.recall,
            "f1": got.items.f1,
            "mean_precision": got.precision,
            "mean_recall": got.recall,
            "mean_f1": got.f1,
        }
        # NaN (a text of only special tokens: bert-score divides 0 by 0) must match NaN.
        if not close_tree(have, want):
            diffs.append((x, want, have))
    assert not diffs, f"{len(diffs)} of {len(cases)} differ, first: {diffs[:2]}"
