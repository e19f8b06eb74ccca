"""HEMM's yes/no datasets: what a user sees for sentence answers.

IRFL, Winoground, Hateful Memes and NY Cartoon are open-ended items whose gold is "yes" or
"no". HEMM's official figure is BARTScore (``hemm_bart_score``), which must stay HEMM's: the
model's own sentence scored against the reference. The run table's first column,
``accuracy`` (lmmprobe's; HEMM has none for these sets), reads what the answer says (lmmprobe's
yes/no reading), so "Yes, it is." counts where the gold is yes (it compared the whole answer
with "yes" or "no" before, and read 0.0 on items half of which are yes).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tests.console import lmmprobe
from tests.data.benchmarks.test_hemm_fixtures import build

from lmmprobe.metrics.generation import hemm_bart_scores
from lmmprobe.testing.openai_server import FakeOpenAIServer

TINY_BART = Path(__file__).resolve().parents[2] / "parity" / "data" / "hemm_metrics_tiny_bart"
ANSWER = "Yes, it is."


def test_sentence_answers_count_in_accuracy_and_bartscore_stays_hemms(tmp_path: Path) -> None:
    folder = tmp_path / "copy"
    build("hemm-hatefulmemes", folder)  # two memes: gold yes, then no
    (tmp_path / "nodata").mkdir()
    with FakeOpenAIServer(reply_table=[("", ANSWER)]) as server:
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}",
            "--data", f"hemm-hatefulmemes,path={folder}",
            "--db", tmp_path / "db", "--out", tmp_path / "out", "--bootstrap", "0",
            OPENAI_API_KEY="test-key", LMMPROBE_BART_MODEL=str(TINY_BART),
            LMMPROBE_DATA_DIR=str(tmp_path / "nodata"), HF_HUB_OFFLINE="1",
            HF_DATASETS_CACHE=str(tmp_path / "datasets-cache"),
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (model,) = json.loads((tmp_path / "out" / "results.json").read_text())["models"].values()
    metrics = model["metrics"]
    # HEMM's BARTScore of the model's own sentences (the parity-tested reproduction).
    hemm = float(np.mean(hemm_bart_scores([ANSWER, ANSWER], ["yes", "no"], TINY_BART)))
    assert metrics["hemm_bart_score"]["value"] == hemm
    # The first meme's gold is yes: "Yes, it is." is right there, wrong on the second.
    assert metrics["accuracy"]["value"] == pytest.approx(1 / 2)
