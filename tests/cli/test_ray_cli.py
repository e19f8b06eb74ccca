"""``lmmprobe run --executor ray`` through the installed console script, as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


def _lmmprobe(*args: str | Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # a local instance
    return subprocess.run(
        [exe, *map(str, args)], capture_output=True, text=True, timeout=300, env=env
    )


def test_replica_options_without_ray_are_refused_before_anything_is_written(tmp_path):
    proc = _lmmprobe("run", "--replicas", "2", "--db", tmp_path / "db", "--out", tmp_path / "o")
    assert proc.returncode == 2
    assert "--replicas: used by the Ray executor only; add --executor ray" in proc.stderr
    assert "Traceback" not in proc.stderr and "validation error" not in proc.stderr
    assert not (tmp_path / "db").exists() and not (tmp_path / "o").exists()


def test_an_unknown_executor_names_the_accepted_ones(tmp_path):
    proc = _lmmprobe("run", "--executor", "dask", "--db", tmp_path / "db")
    assert proc.returncode == 2
    assert "unknown executor 'dask'" in proc.stderr and "ray:HOST:PORT" in proc.stderr
    assert not (tmp_path / "db").exists()


@pytest.mark.slow
def test_run_on_a_local_ray_instance_equals_the_local_executor(tmp_path):
    pytest.importorskip("ray")
    common = ["--model", "random,first", "--data", "demo,n=20", "--bootstrap", "0", "-q"]
    local = _lmmprobe("run", *common, "--db", tmp_path / "l.db", "--out", tmp_path / "l")
    assert local.returncode == 0, local.stderr
    remote = _lmmprobe(
        "run", *common, "--executor", "ray", "--replicas", "2", "--cpus-per-replica", "0.5",
        "--db", tmp_path / "r.db", "--out", tmp_path / "r",
    )  # fmt: skip
    assert remote.returncode == 0, remote.stderr
    assert "Traceback" not in remote.stderr
    # The run started its own Ray instance (Ray says so on stderr); the local run did not.
    assert "Started a local Ray instance" in remote.stderr
    assert "Ray" not in local.stderr
    for line in ("random: 20 requests, 0 from the store, 20 sent, 0 errors",
                 "first: 20 requests, 0 from the store, 20 sent, 0 errors"):  # fmt: skip
        assert line in remote.stdout
    metrics = [
        {m: r["metrics"] for m, r in json.loads((d / "results.json").read_text())["models"].items()}
        for d in (tmp_path / "l", tmp_path / "r")
    ]
    assert metrics[0] == metrics[1]
    q = "SELECT key, model, text FROM responses ORDER BY key"
    with sqlite3.connect(tmp_path / "l.db") as a, sqlite3.connect(tmp_path / "r.db") as b:
        assert a.execute(q).fetchall() == b.execute(q).fetchall()
        (spec,) = b.execute("SELECT spec FROM runs").fetchone()
    assert json.loads(spec)["executor"] == "ray" and json.loads(spec)["replicas"] == 2
