"""`compare` of runs whose sample ids hold odd digits (re-test 20 #12).

The natural sort of sample ids converted every piece `str.isdigit` accepts: "²" (after a
number, as in ``x1²``) made ``int()`` raise, and an id of 5,000 digits passed Python's
integer-string limit; `compare` (the terminal, ``--format json`` and the web app's page, and
``score --audit``) ended in a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.console import lmmprobe

from lmmprobe.metrics.paired import natural_key

IDS = ["x1²", "²", "1" * 5_000, "٣", "s10", "s2"]


def _import(tmp_path: Path, model: str, answer: str) -> str:
    path = tmp_path / f"{model}.jsonl"
    rows = [{"id": i, "prediction": answer, "gold": "A"} for i in IDS]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = lmmprobe("import", path, "--reader", "mapped", "--model", model,
                    "--field", "id=id,prediction=prediction,gold=gold",
                    "--db", tmp_path / "db", "--out", tmp_path / model)  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / model / "results.json").read_text(encoding="utf-8"))
    return str(results["run_id"])


def test_runs_with_odd_digit_ids_are_compared(tmp_path: Path) -> None:
    a, b = _import(tmp_path, "ma", "A"), _import(tmp_path, "mb", "B")
    for fmt in ("table", "json"):
        proc = lmmprobe("compare", a, b, "-m", "ma", "-m", "mb", "--db", tmp_path / "db",
                        "-f", fmt, columns=200)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["n"] == len(IDS)


def test_the_natural_order_is_kept_for_plain_ids() -> None:
    assert sorted(["s10", "s2", "s1"], key=natural_key) == ["s1", "s2", "s10"]
    assert sorted(IDS, key=natural_key)  # every key compares with every other
