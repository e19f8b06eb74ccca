"""Numbers do not move: four runs recorded before the structural rework give the same metrics.

The baselines in ``baseline/`` are the ``results.json`` files (and an APEx ``report.json``) that
lmmprobe wrote at commit fd22f92 for: the default demo run, a synthetic set (60 items, clean +
corruption + print attack, with breakdowns), a ReForm-Eval JSON file (``make_reform_fixture.py``)
and an APEx rules campaign. Each is run again here through the console script; every metric value
the baseline holds must be present at the same place with the same value (new fields may be
added). Identity fields (run ids, times, paths, the manifest) are not compared.

One baseline was re-recorded on purpose since: ``synth.results.json``, when print-attack words
were kept whole on the image (issue 15, D). The print-attack images changed, so the ``random``
model, which seeds each answer on the request key (image hash included), answers those rows
differently: 82 of its values moved (e.g. accuracy 0.375 -> 0.372); ``first`` and every clean
and corruption figure stayed identical. The file as first recorded is kept in ``baseline/v1/``
for the results-format migration test.

Five values of ``synth.results.json`` moved on purpose in issue 23 (item 14, one definition of
each count): Dysca's SC and the scenario deltas are computed from per-style and per-scenario
accuracy, which had counted a free-form question's empty answer (a baseline gives one to every
description question) as a wrong answer while accuracy itself left it out. They now use
accuracy's definition (`lmmprobe.metrics.outcome`): random's SC 22.45 -> 50.51 and its deltas
-7.78 -> -11.67 (corruption) and -2.74 -> -4.11 (print attack); first's SC 217.77 -> 489.99 and
print-attack delta 1.23 -> 1.85 (the deltas grow by 3/2: one question in three no longer dilutes
them). Every accuracy, rate and count stayed identical.

Dysca's caption score (``dysca_caption_score``) was taken out of ``synth.results.json`` on purpose
in issue 34 (walkthrough item 1): both models are baselines that write no free-form text, and
Dysca's figure of empty answers alone (8.14 for each, the similarity of "" to the references) is
no longer computed (`tests/cli/test_synth_cli.py` checks that it is absent). Every other value
stayed identical.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.invariants.make_reform_fixture import write as write_reform

BASELINE = Path(__file__).parent / "baseline"
CLI = [sys.executable, "-m", "lmmprobe.cli.main"]


def lmmprobe(*args: str | Path) -> None:
    done = subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def leaves(doc: Any, path: str = "") -> dict[str, Any]:
    """Every scalar in `doc` by its JSON path."""
    if isinstance(doc, dict):
        out: dict[str, Any] = {}
        for key, value in doc.items():
            out.update(leaves(value, f"{path}/{key}"))
        return out
    if isinstance(doc, list):
        out = {}
        for i, value in enumerate(doc):
            out.update(leaves(value, f"{path}[{i}]"))
        return out
    return {path: doc}


def assert_same_numbers(expected: Any, actual: Any, what: str) -> None:
    # Latencies are measurements of this machine, not results.
    want = {p: v for p, v in leaves(expected).items() if "latency" not in p}
    got = leaves(actual)
    missing = sorted(set(want) - set(got))
    assert not missing, f"{what}: {len(missing)} values gone, e.g. {missing[:5]}"
    moved = [(p, want[p], got[p]) for p in want if want[p] != got[p]]
    assert not moved, f"{what}: {len(moved)} values moved, e.g. {moved[:5]}"


def results(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


@pytest.mark.parametrize("name", ["demo", "synth", "reform"])
def test_run_metrics_unchanged(tmp_path: Path, name: str) -> None:
    db, out = tmp_path / "store.db", tmp_path / "out"
    if name == "demo":
        lmmprobe("run", "--db", db, "--out", out, "-q")
    elif name == "synth":
        data = tmp_path / "synthset"
        lmmprobe("synth", "generate", "--n", "60", "--size", "128", "--scenarios",
                 "clean,corruption,print_attack", "--out", data, "--overwrite")  # fmt: skip
        lmmprobe("run", "--data", f"synth:{data}", "--db", db, "--out", out,
                 "--by", "subtask", "--by", "scenario", "-q")  # fmt: skip
    else:
        data = write_reform(tmp_path / "reformdata")
        lmmprobe("run", "--data", f"reform:{data}", "--db", db, "--out", out, "-q")
    before = results(BASELINE / f"{name}.results.json")
    after = results(out / "results.json")
    assert_same_numbers(before["models"], after["models"], name)
    assert after["data"]["samples"] == before["data"]["samples"]


def test_apex_campaign_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "apex"
    lmmprobe("apex", "Can models identify rotated images?", "-m", "random", "-m", "first",
             "--out", out, "--cache-dir", tmp_path / "cache", "--seed", "4",
             "--max-experiments", "3", "--unknown", "--images-per-answer", "3",
             "--image-size", "32", "--bootstrap", "50", "-q")  # fmt: skip
    before = results(BASELINE / "apex.report.json")
    after = results(out / "report.json")
    assert len(after["experiments"]) == len(before["experiments"])
    for old, new in zip(before["experiments"], after["experiments"], strict=True):
        assert_same_numbers(old["results"], new["results"], f"experiment {old['index']}")
        assert new["dataset"]["fingerprint"] == old["dataset"]["fingerprint"]
    assert_same_numbers(before["conclusions"], after["conclusions"], "conclusions")
