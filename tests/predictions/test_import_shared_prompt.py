"""An import whose rows ask the same question keeps every row's own answer.

A run asks rows that send the same prompt once and shares the answer; the rows of another
tool's file were each answered on their own. Re-test 3 of issue 34 found the import storing
only the last such row's text, which export, show, the web app and a judge then read for all.
"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image
from tests.console import lmmprobe


def test_rows_asking_the_same_question_keep_their_own_answers(tmp_path: Path) -> None:
    png = tmp_path / "red.png"
    Image.new("RGB", (8, 8), (255, 0, 0)).save(png)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(
            json.dumps(
                {"id": f"s{i}", "images": [str(png)], "question": "What colour?",
                 "choices": ["red", "blue", "green"], "answer": 0}
            ) + "\n"
            for i in range(4)
        )
    )  # fmt: skip
    answers = ["A", "B", "C", "red"]
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "".join(json.dumps({"qid": f"s{i}", "pred": p}) + "\n" for i, p in enumerate(answers))
    )
    db = str(tmp_path / "db.sqlite")
    lmmprobe("import", preds, "--benchmark", rows, "--field", "id=qid,prediction=pred",
             "--model", "m", "--db", db)  # fmt: skip
    out = tmp_path / "out.jsonl"
    lmmprobe("export", "latest", "--format", "jsonl", "-o", out, "--db", db)
    exported = {d["sample_id"]: d for d in map(json.loads, out.read_text().splitlines())}
    assert {k: d["text"] for k, d in exported.items()} == dict(
        zip([f"s{i}" for i in range(4)], answers, strict=True)
    )
    assert [exported[f"s{i}"]["correct"] for i in range(4)] == [True, False, False, True]
    # The export's texts read again give the import's own figure (0.5), not the last answer's.
    rescored = json.loads(
        lmmprobe("score", out, "--matcher", "lmmprobe", "--format", "json").stdout
    )
    assert rescored["models"]["m"]["accuracy"]["value"] == 0.5
