"""``lmmprobe compare`` on two specs of one model (issue 25, item 6: thinking on vs off).

Two settings of one checkpoint are two model specs differing in an option (``hf:PATH`` and
``hf:PATH,chat_template_kwargs=enable_thinking:false``). The ``random`` baseline with and
without ``seed=7`` is such a pair that runs offline: the comparison pairs their answers on the
samples both scored, finds the pair without ``--model`` where it is the only one, names each
side by what sets it apart, and its McNemar p-value is scipy's exact binomial test on the same
discordant counts. Everything goes through the installed console script.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.console import lmmprobe

from lmmprobe.store import Store

SEEDED = "random,seed=7"


def _lmmprobe(*args: str | Path, columns: int = 80) -> subprocess.CompletedProcess[str]:
    return lmmprobe(*args, columns=columns)


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def _run_id(db: Path, out: Path, *models: str) -> str:
    flags = [f for m in models for f in ("-m", m)]
    _ok(_lmmprobe("run", *flags, "-d", "demo,n=60", "-q", "--db", db, "--out", out))
    return str(json.loads((out / "results.json").read_text())["run_id"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Run ``a`` (random, first), ``b`` (first, random seed 7), ``one`` (all three)."""
    tmp = tmp_path_factory.mktemp("settings")
    db = tmp / "db"
    ids = {
        "a": _run_id(db, tmp / "a", "random", "first"),
        "b": _run_id(db, tmp / "b", "first", SEEDED),
        "one": _run_id(db, tmp / "one", "first", "random", SEEDED),
    }
    return db, ids


def _verdicts(db: Path, run: str, model: str) -> dict[str, int]:
    with Store(db) as store:
        return {
            r["sample_id"]: int(r["correct"])
            for r in store.iter_score_rows(run)
            if r["model"] == model and not r["error_type"]
        }


def _expected(db: Path, run_a: str, run_b: str) -> dict[str, Any]:
    """The paired figures recomputed from the store, McNemar's p from scipy."""
    stats = pytest.importorskip("scipy.stats")
    a, b = _verdicts(db, run_a, "random"), _verdicts(db, run_b, SEEDED)
    x, y = np.array([[a[s], b[s]] for s in sorted(a.keys() & b.keys())]).T
    only_a, only_b = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
    assert only_a + only_b > 0  # the two seeds answer differently: the test has teeth
    return {
        "n": len(x),
        "difference": float(x.mean() - y.mean()),
        "a_only_correct": only_a,
        "b_only_correct": only_b,
        "both_correct": int(((x == 1) & (y == 1)).sum()),
        "both_wrong": int(((x == 0) & (y == 0)).sum()),
        "mcnemar_p": float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue),
    }


def _check(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert (got["model_a"], got["model_b"]) == ("random", SEEDED)
    assert got["n"] == want["n"] == 60
    assert got["difference"] == pytest.approx(want["difference"])
    assert got["low"] <= got["difference"] <= got["high"] and got["level"] == 0.95
    for key in ("a_only_correct", "b_only_correct", "both_correct", "both_wrong"):
        assert got[key] == want[key], key
    assert got["mcnemar_p"] == pytest.approx(want["mcnemar_p"], rel=1e-12)
    assert got["differ_total"] == want["a_only_correct"] + want["b_only_correct"]
    # Each side named by what sets it apart: the option one spec has and the other lacks.
    assert (got["setting_a"], got["setting_b"]) == (["seed default"], ["seed=7"])


def test_two_runs_of_one_model_differing_by_an_option(runs) -> None:
    db, ids = runs
    want = _expected(db, ids["a"], ids["b"])
    # Named once: run b has no plain ``random``, but one spec of its checkpoint.
    once = json.loads(
        _ok(_lmmprobe("compare", ids["a"], ids["b"], "-m", "random", "--db", db, "-f", "json"))
    )
    _check(once, want)
    twice = _lmmprobe(
        "compare", ids["a"], ids["b"], "-m", "random", "-m", SEEDED, "--db", db, "-f", "json"
    )
    assert json.loads(_ok(twice)) == once


def test_one_run_holding_both_specs_is_compared_without_naming_them(runs) -> None:
    db, ids = runs
    # Three models, one pair of one checkpoint: that pair, in the run's order.
    got = json.loads(_ok(_lmmprobe("compare", ids["one"], "--db", db, "-f", "json")))
    _check(got, _expected(db, ids["one"], ids["one"]))


def test_the_table_names_the_sides_and_counts_the_pairs(runs) -> None:
    db, ids = runs
    got = json.loads(_ok(_lmmprobe("compare", ids["one"], "--db", db, "-f", "json")))
    out = _ok(_lmmprobe("compare", ids["one"], "--db", db, "--limit", "2"))
    assert all(len(line) <= 80 for line in out.splitlines()), out
    assert "random  [seed default]" in out and f"{SEEDED}  [seed=7]" in out
    assert f"only A right: {got['a_only_correct']}, only B right: {got['b_only_correct']}" in out
    assert f"both right: {got['both_correct']}, both wrong: {got['both_wrong']}" in out
    assert f"p = {got['mcnemar_p']:.3g}" in out


def test_a_spec_with_no_kin_in_the_other_run_is_still_refused(runs) -> None:
    db, ids = runs
    proc = _lmmprobe("compare", ids["b"], ids["a"], "-m", "nosuch", "--db", db)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"run {ids['b']} has no scores for model 'nosuch'" in " ".join(proc.stderr.split())
