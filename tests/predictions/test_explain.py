"""`explain_file`: MMMU's guesses and published figure, the answer key, and the audit of a file.

The samples come from the real MMMU loader on a snapshot in its published schema (so their ids
carry lmmprobe's ``mmmu/`` prefix, as a benchmark loaded by name does); the rows are scored by
the run's own code.
"""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest
from tests.predictions.test_score_audit_cli import FILE_GOLD, ITEMS, _expected, _snapshot

from lmmprobe.data.base import load_source
from lmmprobe.predictions.explain import explain_file
from lmmprobe.predictions.imported import ImportedPrediction
from lmmprobe.run.scoring import score_response
from lmmprobe.schema import FormulateConfig, Request, Response, Sample, Score


@pytest.fixture
def joined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[tuple[Sample, ImportedPrediction]], list[Score]]:
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    samples = {s.id: s for s in load_source(f"mmmu,path={_snapshot(tmp_path)}").samples}
    rows, scores = [], []
    for n, (sid, gold, text) in enumerate(ITEMS, 1):
        sample = samples[f"mmmu/{sid}"]
        pred = ImportedPrediction(
            row=n, sample_id=sid, prediction=text, gold=FILE_GOLD.get(sid, gold)
        )
        request = Request(sample_id=sample.id, method="generate", messages=[], prompt="q")
        scores.append(
            score_response("m", sample, request, Response(key="k", text=text), FormulateConfig())
        )
        rows.append((sample, pred))
    return rows, scores


def test_guesses_published_figure_and_key(
    joined: tuple[list[tuple[Sample, ImportedPrediction]], list[Score]],
) -> None:
    rows, scores = joined
    e = explain_file("mmmu", rows, scores, path="out/", as_published=True)
    expected = _expected()
    assert e.published is not None and e.published.detail.overall == expected.overall
    assert e.guessed == sorted(expected.guessed) and len(e.guessed) == 3
    notes = e.notes()
    assert notes[0].startswith("mmmu answer key sha256:")
    assert notes[1].startswith(
        "out/ was evidently scored against MMMU answer_dict_val.json @ bf380a2"
    )
    assert "validation_Literature_10 (D there, C here)" in notes[1]
    assert "pick a random letter for 3 answers" in notes[2]


def test_audit_against_mmmu_script(
    joined: tuple[list[tuple[Sample, ImportedPrediction]], list[Score]],
) -> None:
    rows, scores = joined
    e = explain_file("mmmu", rows, scores, audit=True, n_boot=0)
    assert e.audit is not None
    expected = _expected()
    assert e.audit.n == 7
    assert e.audit.credit_b == sum(expected.correct.values())
    assert sum(c.net for c in e.audit.by_cause.values()) == e.audit.gap
    causes = {it.a.sample_id: it.cause for it in e.audit.items}
    assert causes["validation_Literature_10"] == "gold"
    right_guesses = {s for s in expected.guessed if expected.correct[s]}
    assert right_guesses  # seed 42 draws one right letter here
    assert {s for s, c in causes.items() if c == "random_fallback"} == right_guesses


def test_parsed_answers_are_never_guessed(
    joined: tuple[list[tuple[Sample, ImportedPrediction]], list[Score]],
) -> None:
    # MMMU's parsed-answers layout ({id: answer}, main_eval_only.py): compared as given.
    rows, scores = joined
    parsed_rows = [
        (
            s,
            ImportedPrediction(
                row=p.row, sample_id=p.sample_id, prediction="", fields={"parsed": ""}
            ),
        )
        for s, p in rows
    ]
    e = explain_file("mmmu", parsed_rows, scores, as_published=True)
    assert e.published is not None and not e.published.detail.guessed
    assert e.published.detail.overall == 0.0
