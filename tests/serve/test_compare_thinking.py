"""Serve's compare page on thinking on vs off of one checkpoint (issue 25, item 6).

Two runs of one checkpoint, thinking on in one and off in the other, each beside another
model: the page picks the pair of one checkpoint by itself, names the sides (``thinking
default`` / ``thinking off``), and shows the paired difference, the 2x2 pair counts and
McNemar's p, equal to scipy's exact binomial test on the same discordant counts. A run made by
the console script gives the page the same figures as ``lmmprobe compare``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lmmprobe.store import Store

from .conftest import Row, choice_sample, client, write_run

LMMPROBE = str(Path(sys.executable).with_name("lmmprobe"))

ON = "hf:/models/qwen3-vl"
OFF = "hf:/models/qwen3-vl,chat_template_kwargs=enable_thinking:false"

# Right (1) / wrong (0) / cut off inside its thinking (None: stage truncated, counted wrong).
THINK_ON = [1, 1, 1, 1, 0, 1, 1, None, 1, 0, 1, None, 1, 1]
THINK_OFF = [1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0]


@pytest.fixture
def thinking_runs(tmp_path: Path) -> Path:
    db = tmp_path / "t.db"
    samples = [choice_sample(i) for i in range(len(THINK_ON))]

    def rows(model: str, verdicts: list[int | None], other: str) -> list[Row]:
        out = []
        for s, v in zip(samples, verdicts, strict=True):
            assert isinstance(s.answer, int)
            out.append(Row(other, s, "(A)", 0, s.answer == 0))
            if v is None:
                text = "<think>the shape is round, so it could be (A) but wait"
                out.append(Row(model, s, text, None, False, stage="truncated"))
                continue
            pred = s.answer if v else (s.answer + 1) % 3
            out.append(Row(model, s, f"<think>it is ({'ABC'[pred]})</think>({'ABC'[pred]})",
                           pred, bool(v)))  # fmt: skip
        return out

    with Store(db) as store:
        write_run(store, "run-on", ["first", ON], samples, rows(ON, THINK_ON, "first"))
        write_run(store, "run-off", ["random", OFF], samples, rows(OFF, THINK_OFF, "random"))
    return db


def test_thinking_on_and_off_paired_and_named(thinking_runs: Path) -> None:
    stats = pytest.importorskip("scipy.stats")
    on = [0 if v is None else v for v in THINK_ON]  # a cut-off answer is a wrong one
    off = THINK_OFF
    only_on = sum(1 for a, b in zip(on, off, strict=True) if a and not b)
    only_off = sum(1 for a, b in zip(on, off, strict=True) if b and not a)
    p = float(stats.binomtest(only_on, only_on + only_off, 0.5).pvalue)
    with client(thinking_runs) as c:
        # No model named: the runs share none, and hold one pair of one checkpoint.
        got = c.get("/api/compare", params={"run_a": "run-on", "run_b": "run-off"}).json()
        page = c.get("/compare", params={"run_a": "run-on", "run_b": "run-off"}).text
    assert (got["model_a"], got["model_b"]) == (ON, OFF)
    assert (got["setting_a"], got["setting_b"]) == (["thinking default"], ["thinking off"])
    assert got["n"] == len(on)
    assert got["difference"] == pytest.approx((sum(on) - sum(off)) / len(on))
    assert got["low"] <= got["difference"] <= got["high"]
    assert (got["a_only_correct"], got["b_only_correct"]) == (only_on, only_off) == (5, 1)
    both = sum(1 for a, b in zip(on, off, strict=True) if a and b)
    assert (got["both_correct"], got["both_wrong"]) == (both, len(on) - both - 6) == (5, 3)
    assert got["mcnemar_p"] == pytest.approx(p, rel=1e-12)
    # The answer cut off inside its thinking is named so where the sides differ.
    cut = next(d for d in got["differ"] if d["sample_id"] == "s007")
    assert cut["a"].startswith("(cut off) <think>") and not cut["a_correct"]
    # The page: the sides' labels, the pair counts, the difference and the p-value.
    assert '<span class="badge setting-a">thinking default</span>' in page
    assert '<span class="badge setting-b">thinking off</span>' in page
    assert f'id="only-a"><b>{only_on}</b>' in page and f'id="only-b"><b>{only_off}</b>' in page
    assert f'id="both-right">{both}<' in page
    assert f"{got['difference']:+.3f}" in page and f"p = {p:.3g}" in page


def test_the_page_gives_the_console_scripts_figures(tmp_path: Path) -> None:
    db = tmp_path / "db"
    subprocess.run(
        [LMMPROBE, "run", "-m", "first", "-m", "random", "-m", "random,seed=7",
         "-d", "demo,n=40", "-q", "--db", str(db), "--out", str(tmp_path / "o")],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    cli = subprocess.run(
        [LMMPROBE, "compare", "latest", "--db", str(db), "--format", "json"],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    printed = json.loads(cli.stdout)
    run = printed["run_a"]
    with client(db) as c:
        got = c.get("/api/compare", params={"run_a": run}).json()  # the pair picked by itself
        page = c.get("/compare", params={"run_a": run}).text
    assert (got["model_a"], got["model_b"]) == ("random", "random,seed=7")
    for key in ("n", "difference", "low", "high", "a_only_correct", "b_only_correct",
                "both_correct", "both_wrong", "mcnemar_p", "setting_a", "setting_b"):  # fmt: skip
        assert got[key] == printed[key], key
    assert '<span class="badge setting-b">seed=7</span>' in page
    assert f"p = {got['mcnemar_p']:.3g}" in page


def test_the_report_names_the_thinking_setting(thinking_runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    subprocess.run(
        [LMMPROBE, "report", "run-on", "run-off", "--db", str(thinking_runs), "-o", str(out)],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    page = out.read_text(encoding="utf-8")
    # A spec cut short still says what its option does: the name ends in the setting.
    assert "qwen3-vl,chat_templat… thinking off" in page
