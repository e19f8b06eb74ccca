"""Runs that differ by one setting are told apart (issue 23, item 15).

Runs of one model that differ only by ``--blind``, ``--circular``, ``--repeats`` or
``--prompt-style`` get distinct names and colours in the report and distinct rows in
``lmmprobe runs``; everything goes through the installed console script.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from tests.console import lmmprobe

from lmmprobe.report.settings import run_setting, setting_label
from lmmprobe.schema import RunSpec

SETTINGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "blind": ("--blind",),
    "circular": ("--circular",),
    "repeats 2": ("--repeats", "2"),
    "prompt reform": ("--prompt-style", "reform"),
}


def _lmmprobe(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return lmmprobe(*args)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """One store with a run of ``random`` per setting: setting → run id."""
    root = tmp_path_factory.mktemp("labels")
    db = root / "lmmprobe.db"
    ids: dict[str, str] = {}
    for name, flags in SETTINGS.items():
        out = root / name.replace(" ", "-")
        proc = _lmmprobe("run", "-m", "random", "--limit", "12", "-q", "--bootstrap", "20",
                         "--db", db, "--out", out, *flags)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        ids[name] = json.loads((out / "results.json").read_text())["run_id"]
    return db, ids


def test_run_setting_names_what_a_run_changed() -> None:
    assert run_setting(RunSpec()) == []
    spec = RunSpec.model_validate(
        {"repeats": 3, "formulate": {"method": "likelihood", "blind": True}}
    )
    assert run_setting(spec) == ["blind", "likelihood", "repeats 3"]
    assert (
        setting_label("hf:x", spec.model_dump(mode="json")) == "hf:x [blind, likelihood, repeats 3]"
    )
    assert setting_label("random", None) == "random"


def test_runs_list_tells_runs_apart(store: tuple[Path, dict[str, str]]) -> None:
    db, ids = store
    proc = _lmmprobe("runs", "--db", db, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    listed = {r["id"]: r["setting"] for r in json.loads(proc.stdout)}
    assert {ids[name]: listed[ids[name]] for name in SETTINGS} == {
        ids[name]: ([] if name == "default" else [name]) for name in SETTINGS
    }
    table = _lmmprobe("runs", "--db", db).stdout
    for name in SETTINGS:
        if name != "default":
            assert f"random [{name}]" in table
    # Each run shows its model once, labelled by its own setting.
    labels = re.findall(r"random(?: \[[^\]]+\])?", table)
    assert sorted(labels) == sorted(
        "random" if n == "default" else f"random [{n}]" for n in SETTINGS
    )


def test_serve_runs_list_names_settings(store: tuple[Path, dict[str, str]]) -> None:
    from tests.serve.conftest import client

    db, ids = store
    with client(db) as c:
        runs = {r["id"]: r["setting"] for r in c.get("/api/runs").json()["runs"]}
        page = c.get("/").text
        run_page = c.get(f"/runs/{ids['blind']}").text
        compare = c.get("/compare", params={"run_a": ids["default"], "run_b": ids["blind"]}).text
    assert runs[ids["blind"]] == ["blind"] and runs[ids["default"]] == []
    assert "[repeats 2]" in page and "[prompt reform]" in page
    assert "[blind]" in run_page
    assert f"{ids['blind']} · demo [blind]</option>" in compare  # the run pickers


def _blob(html: str) -> dict:
    match = re.search(
        r'<script type="application/json" id="lmmprobe-data">(.*?)</script>', html, re.S
    )
    assert match
    return json.loads(match.group(1))


def test_report_names_and_colours_each_setting_apart(
    store: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db, ids = store
    out = tmp_path / "r.html"
    proc = _lmmprobe("report", *ids.values(), "--db", db, "-o", out)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    radar = next(f for k, f in _blob(page)["figures"].items() if k.startswith("fig-radar-"))
    colours = {t["name"]: t["line"]["color"] for t in radar["data"]}
    names = {name: f"M1 random {name}" if name != "default" else "M1 random" for name in SETTINGS}
    assert set(colours) == set(names.values())  # one distinct name per run, no r1/r2
    assert len(set(colours.values())) == len(colours)  # and one distinct colour each
    assert colours[names["default"]] != colours[names["blind"]]
    # The Markdown and JSON leaderboards name the entries by model and setting too.
    md = _lmmprobe("report", *ids.values(), "--db", db, "-f", "md").stdout
    assert "random [blind]" in md and "random [circular]" in md
