"""A benchmark run in the web app: its samples show and filter by benchmark and split."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest
from datasets import Dataset, Features, Image, Value
from tests.data.benchmarks.conftest import tiny_png, write_hub_snapshot

from lmmprobe.api import evaluate

from .conftest import client


@pytest.fixture
def mme_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A real run of `first` on an MME fixture (its published schema) loaded by name."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets-cache")
    rows = {
        "question_id": ["existence/1.png", "existence/1.png"],
        "image": [{"bytes": tiny_png((i, 80, 160)), "path": f"{i}.png"} for i in range(2)],
        "question": ["Is there a cat? Please answer yes or no.", "Is there a dog?"],
        "answer": ["Yes", "No"],
        "category": ["existence", "existence"],
    }
    feats = Features({k: (Image() if k == "image" else Value("string")) for k in rows})
    folder = write_hub_snapshot(tmp_path / "mme", {"test": Dataset.from_dict(rows, features=feats)})
    db = tmp_path / "db.sqlite"
    ev = evaluate(
        models=["first"],
        data=f"mme,path={folder}",
        db=str(db),
        out=str(tmp_path / "o"),
        bootstrap=0,
    )
    return db, ev.run_id


def test_a_benchmark_sample_shows_its_benchmark_and_split(mme_run: tuple[Path, str]) -> None:
    db, run_id = mme_run
    with client(db) as c:
        page = c.get(f"/runs/{run_id}/samples/mme/existence/1.png/0")
        assert page.status_code == 200
        assert "<dt>benchmark</dt>" in page.text and "<dt>split</dt>" in page.text
        assert "<dt>category</dt>" in page.text
        rows = c.get(f"/api/runs/{run_id}/samples?key=benchmark&value=mme").json()["rows"]
        assert len(rows) == 2
        assert c.get(f"/api/runs/{run_id}/samples?key=split&value=test").json()["rows"]
        # The recorded sample (typed prompt and tag) rebuilds the request that was answered.
        one = c.get(f"/api/runs/{run_id}/samples/mme/existence/1.png/0").json()
        assert one["sample"]["benchmark"] == {
            "name": "mme",
            "split": "test",
            "metric": "mme_perception",
        }
        assert one["answers"][0]["sent"]["turns"] is not None
