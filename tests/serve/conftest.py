"""Stores for the serve tests: a real demo evaluation, and runs written through `Store`."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from PIL import Image

import lmmprobe
from lmmprobe.schema import ImageRef, Request, Response, Sample, Score, Usage
from lmmprobe.serve.app import create_app
from lmmprobe.store import Store

HOSTILE = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "{{7*7}}",
)


def client(db: Path, **kwargs: object) -> TestClient:
    """A test client of the app over `db`, addressed as loopback (the host check's rule)."""
    return TestClient(create_app(db, **kwargs), base_url="http://127.0.0.1")  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store holding one real `lmmprobe.evaluate` run on the demo (random and first)."""
    root = tmp_path_factory.mktemp("demo")
    ev = lmmprobe.evaluate(
        db=str(root / "lmmprobe.db"), limit=24, models=["random", "first"], out=str(root / "out")
    )
    return root / "lmmprobe.db", ev.run_id


@pytest.fixture
def demo(demo_db: tuple[Path, str]) -> Iterator[tuple[TestClient, str]]:
    """A client of the app over the demo store, and the run id."""
    db, run_id = demo_db
    with client(db) as c:
        yield c, run_id


def png_b64(color: tuple[int, int, int] = (200, 30, 30), size: tuple[int, int] = (40, 30)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


@dataclass
class Row:
    """One model's answer to one sample, for `write_run`."""

    model: str
    sample: Sample
    text: str | None
    prediction: int | None
    correct: bool | None
    stage: str = "mark"
    error: str | None = None
    finish_reason: str | None = None
    completion_tokens: int | None = None


def write_run(
    store: Store,
    run_id: str,
    models: Sequence[str],
    samples: Sequence[Sample],
    rows: Sequence[Row],
    *,
    fingerprint: str = "fp",
    finish: bool = True,
    max_new_tokens: int | None = None,
) -> None:
    """Record a run through the store's own API, as the runner does: run, samples, answers, scores.

    `max_new_tokens` is recorded in the run's spec (``gen``) when given.
    """
    spec: dict[str, object] = {"data": "hand", "models": list(models)}
    if max_new_tokens is not None:
        spec["gen"] = {"max_new_tokens": max_new_tokens}
    store.create_run(run_id, spec, str(store.path.parent / run_id))
    store.update_run(
        run_id, manifest={"data": {"fingerprint": fingerprint, "samples": len(samples)}}
    )
    store.put_samples(run_id, samples)
    for model in models:
        mine = [r for r in rows if r.model == model]
        requests = [
            Request(
                key=f"{run_id}-{model}-{r.sample.id}",
                sample_id=r.sample.id,
                method="generate",
                messages=[],
                prompt=f"PROMPT {r.sample.question}",
            )
            for r in mine
        ]
        responses = [
            Response(
                key=req.key,
                text=r.text,
                error=None
                if r.error is None
                else {"type": r.error, "message": "it failed", "retryable": True},
                finish_reason=r.finish_reason,
                usage=Usage(completion_tokens=r.completion_tokens),
            )
            for req, r in zip(requests, mine, strict=True)
        ]
        store.put_responses(model, requests, responses)
        scores = [
            Score(
                model=model,
                sample_id=r.sample.id,
                repeat=0,
                key=req.key,
                stage=r.stage,  # type: ignore[arg-type]
                prediction=r.prediction,
                prediction_text=None
                if r.prediction is None or r.sample.choices is None
                else r.sample.choices[r.prediction],
                correct=r.correct,
                format_hit=r.stage == "mark",
                gold=r.sample.answer,
                gold_text=r.sample.gold_text,
                error_type=r.error,
                metadata=r.sample.metadata,
                formulation=r.sample.formulation,
            )
            for req, r in zip(requests, mine, strict=True)
        ]
        store.put_scores(run_id, scores)
    if finish:
        store.update_run(run_id, status="complete")


def choice_sample(i: int, *, question: str | None = None, **metadata: object) -> Sample:
    return Sample(
        id=f"s{i:03d}",
        question=question or f"Which colour is shape {i}?",
        choices=["red", "green", "blue"],
        answer=i % 3,
        images=[ImageRef.from_base64(png_b64())],
        metadata={"subtask": "colour" if i % 2 else "shape", **metadata},
    )
