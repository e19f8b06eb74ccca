"""``lmmprobe judge`` never judges an answer on another picture than the model saw (issue 34).

A run records each image file's SHA-256 (`Store.put_samples`). Judging the stored run later
with ``--judge-sees-image`` reads the files again (`Store.recorded_samples`): a file replaced
or removed since is that sample's problem, one line naming the file, its answers unjudged
with the reason; the other samples are judged as ever.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from tests.console import lmmprobe_with_key

from lmmprobe.testing.openai_server import FakeOpenAIServer

CHOICE_ASK = "Say which option the answer chose"


def _run(tmp: Path, url: str) -> tuple[Path, str, Path]:
    """A run over two samples with one image file each; its store, id and first image."""
    rows = []
    for sid, color in (("i1", (220, 20, 20)), ("i2", (20, 20, 220))):
        Image.new("RGB", (32, 32), color).save(tmp / f"{sid}.png")
        rows.append({"id": sid, "images": [str(tmp / f"{sid}.png")],
                     "question": f"Which animal is pictured in {sid}?", "choices": ["cat", "dog"],
                     "answer": 0})  # fmt: skip
    data, db = tmp / "rows.jsonl", tmp / "db"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = lmmprobe_with_key("run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q",
                             "--db", db, "--out", tmp / "o1")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    run_id = json.loads((tmp / "o1" / "results.json").read_text())["run_id"]
    return db, run_id, tmp / "i1.png"


def _judge(db: Path, run_id: str, url: str, out: Path) -> tuple[str, dict[str, Any]]:
    proc = lmmprobe_with_key("judge", run_id, "--db", db, "--judge", f"openai:judge@{url}",
                             "--judge-sees-image", "--out", out)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    return proc.stderr, model


TABLE = [(CHOICE_ASK, "A"), ("Which animal is pictured", "the cute one")]


@pytest.mark.parametrize("change", ["replaced", "removed"])
def test_a_changed_image_file_leaves_its_answer_unjudged(tmp_path: Path, change: str) -> None:
    with FakeOpenAIServer(reply_table=TABLE) as server:
        db, run_id, image = _run(tmp_path, server.base_url)
        seen = hashlib.sha256(image.read_bytes()).hexdigest()
        if change == "replaced":
            Image.new("RGB", (32, 32), (20, 220, 20)).save(image)
        else:
            image.unlink()
        server.reset_stats()
        plan = lmmprobe_with_key("judge", run_id, "--db", db, "--judge",
                                 f"openai:judge@{server.base_url}", "--judge-sees-image",
                                 "--dry-run")  # fmt: skip
        assert plan.returncode == 0, plan.stderr
        assert "1 judge call(s) would be sent" in plan.stdout, plan.stdout
        stderr, model = _judge(db, run_id, server.base_url, tmp_path / "o2")
        # Only the other sample's picture went to the judge.
        assert server.requests_total == 1
        assert len(server.received_images) == 1
    why = "changed since the run" if change == "replaced" else "cannot be read"
    lines = [line for line in stderr.splitlines() if str(image) in line]
    assert len(lines) == 1 and why in lines[0] and "'i1'" in lines[0], stderr
    assert model["judge"]["decided"] == {"rule": 0, "judge": 1, "unjudged": 1}
    (calls,) = model["judge"]["calls"].values()
    assert calls["unjudged"] == {"image changed": 1}
    assert model["metrics"]["judge_coverage"]["value"] == pytest.approx(0.5)
    with sqlite3.connect(db) as conn:
        reasons = dict(
            conn.execute(
                "SELECT sample_id, reason FROM judgements WHERE run_id <> ? AND judge <> ''",
                (run_id,),
            )
        )
        recorded = {
            sid: json.loads(doc)["images"][0]
            for sid, doc in conn.execute(
                "SELECT sample_id, sample FROM samples WHERE run_id <> ?", (run_id,)
            )
        }
    assert str(image) in reasons["i1"] and why in reasons["i1"]
    assert reasons["i2"] is None
    # The judged run records the picture the model saw, never the file's new content: the
    # viewer keeps refusing the changed file.
    assert recorded["i1"] == {"path": str(image), "sha256": seen}


def test_an_image_file_written_again_alike_is_judged(tmp_path: Path) -> None:
    with FakeOpenAIServer(reply_table=TABLE) as server:
        db, run_id, image = _run(tmp_path, server.base_url)
        image.write_bytes(image.read_bytes())  # touched, the same bytes
        server.reset_stats()
        stderr, model = _judge(db, run_id, server.base_url, tmp_path / "o2")
        assert server.requests_total == 2 and len(server.received_images) == 2
    assert "changed since the run" not in stderr
    assert model["judge"]["decided"] == {"rule": 0, "judge": 2, "unjudged": 0}
