"""The compare page's figures against a hand computation (and against ``lmmprobe compare``)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from math import comb
from pathlib import Path

import pytest

from lmmprobe.store import Store

from .conftest import Row, choice_sample, client, write_run

LMMPROBE = str(Path(sys.executable).with_name("lmmprobe"))

# Right (1) / wrong (0) per sample for each side; sample 11 is an error on side B.
A = [1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1]
B = [1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, None]


@pytest.fixture
def two_runs(tmp_path: Path) -> Path:
    db = tmp_path / "c.db"
    samples = [choice_sample(i) for i in range(len(A))]

    def rows(model: str, verdicts: list[int | None]) -> list[Row]:
        out = []
        for s, v in zip(samples, verdicts, strict=True):
            assert isinstance(s.answer, int)
            if v is None:
                out.append(Row(model, s, None, None, None, stage="error", error="timeout"))
            else:
                pred = s.answer if v else (s.answer + 1) % 3
                out.append(Row(model, s, f"({'ABC'[pred]})", pred, bool(v)))
        return out

    with Store(db) as store:
        write_run(store, "run-a", ["mA"], samples, rows("mA", A))
        write_run(store, "run-b", ["mB"], samples, rows("mB", B))
    return db


def test_two_runs_compared_as_by_hand(two_runs: Path) -> None:
    pairs = [(a, b) for a, b in zip(A, B, strict=True) if b is not None]
    n = len(pairs)
    acc_a = sum(a for a, _ in pairs) / n
    acc_b = sum(b for _, b in pairs) / n
    a_only = sum(1 for a, b in pairs if a and not b)
    b_only = sum(1 for a, b in pairs if b and not a)
    # Exact two-sided McNemar: the binomial test of the discordant pairs at 1/2.
    d = a_only + b_only
    p = min(1.0, 2 * sum(comb(d, k) for k in range(min(a_only, b_only) + 1)) / 2**d)
    with client(two_runs) as c:
        got = c.get(
            "/api/compare",
            params={"run_a": "run-a", "model_a": "mA", "run_b": "run-b", "model_b": "mB"},
        ).json()
        page = c.get(
            "/compare",
            params={"run_a": "run-a", "model_a": "mA", "run_b": "run-b", "model_b": "mB"},
        ).text
    assert got["n"] == n == 11
    assert got["accuracy_a"] == pytest.approx(acc_a)
    assert got["accuracy_b"] == pytest.approx(acc_b)
    assert got["difference"] == pytest.approx(acc_a - acc_b)
    assert (got["a_only_correct"], got["b_only_correct"]) == (a_only, b_only) == (5, 1)
    assert got["mcnemar_p"] == pytest.approx(p)
    assert got["agreement"] == pytest.approx((n - d) / n)
    assert got["left_out"] == {"error": 1}
    assert got["same_data"] is True
    assert got["low"] <= got["difference"] <= got["high"]
    assert [x["sample_id"] for x in got["differ"]] == [
        f"s{i:03d}" for i, (a, b) in enumerate(zip(A, B, strict=True)) if b is not None and a != b
    ]
    # The page shows the same figures.
    assert f"{acc_a:.3f}" in page and f"{acc_b:.3f}" in page
    assert f"{acc_a - acc_b:+.3f}" in page and f"p = {p:.3g}" in page
    assert f"{(n - d) / n:.3f}" in page
    assert "6 answers differ" in page
    # The same comparison as `lmmprobe compare` prints (one implementation for both).
    cli = subprocess.run(
        [LMMPROBE, "compare", "run-a", "run-b", "-m", "mA", "-m", "mB", "--db", str(two_runs),
         "--format", "json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    printed = json.loads(cli.stdout)
    for key in ("n", "accuracy_a", "accuracy_b", "difference", "low", "high", "mcnemar_p"):
        assert printed[key] == got[key], key


def test_two_models_of_one_run_and_paging_of_differences(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    samples = [choice_sample(i) for i in range(120)]
    rows = []
    for s in samples:
        assert isinstance(s.answer, int)
        rows.append(Row("x", s, "(A)", s.answer, True))
        rows.append(Row("y", s, "(B)", (s.answer + 1) % 3, False))
    with Store(db) as store:
        write_run(store, "r", ["x", "y"], samples, rows)
    with client(db) as c:
        first = c.get("/compare", params={"run_a": "r"}).text  # models picked: x vs y
        assert "120 answers differ" in first and "showing 1–50" in first
        assert 'rel="next"' in first
        last = c.get("/api/compare", params={"run_a": "r", "offset": 100}).json()
        assert last["differ_total"] == 120 and len(last["differ"]) == 20
        assert last["differ"][0]["sample_id"] == "s100"
        same = c.get("/compare", params={"run_a": "r", "model_a": "x", "model_b": "x"})
        assert "same model of the same run" in same.text
        unknown = c.get("/api/compare", params={"run_a": "r", "model_a": "zz", "model_b": "x"})
        assert unknown.status_code == 422 and "no scores for model 'zz'" in unknown.json()["detail"]
        assert c.get("/compare", params={"run_a": "nope"}).status_code == 404


def test_runs_older_than_the_pickers_and_the_runs_list_stay_reachable(
    two_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pickers and the runs list show the newest runs only (500 each; 1 here): an older run
    # named in the address is compared all the same, and the runs list pages to it.
    from lmmprobe.serve import compare, runs

    monkeypatch.setattr(compare, "_PICKER_RUNS", 1)
    monkeypatch.setattr(runs, "RUNS_PAGE", 1)
    with client(two_runs) as c:
        got = c.get(
            "/api/compare",
            params={"run_a": "run-a", "model_a": "mA", "run_b": "run-b", "model_b": "mB"},
        )
        assert got.status_code == 200 and got.json()["n"] == 11
        assert c.get("/compare", params={"run_a": "nope"}).status_code == 404
        first = c.get("/")
        assert "Showing runs 1–1 of 2" in first.text and 'href="/?offset=1"' in first.text
        older = c.get("/api/runs", params={"offset": 1}).json()
        assert older["total"] == 2 and [r["id"] for r in older["runs"]] == ["run-a"]
        assert "run-a" in c.get("/?offset=1").text


def test_comparisons_of_two_stores_are_never_mixed(two_runs: Path, tmp_path: Path) -> None:
    # Same run ids and models in another store, with every answer right on both sides.
    other = tmp_path / "other" / "c.db"
    samples = [choice_sample(i) for i in range(len(A))]
    right = {m: [Row(m, s, "(A)", s.answer, True) for s in samples] for m in ("mA", "mB")}  # type: ignore[arg-type]
    with Store(other) as store:
        write_run(store, "run-a", ["mA"], samples, right["mA"])
        write_run(store, "run-b", ["mB"], samples, right["mB"])
    for db in (two_runs, other):  # the runs' stamps alike too: only the file tells them apart
        conn = sqlite3.connect(db)
        conn.execute("UPDATE runs SET updated_at = 1")
        conn.commit()
        conn.close()
    params = {"run_a": "run-a", "model_a": "mA", "run_b": "run-b", "model_b": "mB"}
    with client(two_runs) as c:
        first = c.get("/api/compare", params=params).json()
    with client(other) as c:
        second = c.get("/api/compare", params=params).json()
    assert first["differ"]
    assert second["differ"] == []
