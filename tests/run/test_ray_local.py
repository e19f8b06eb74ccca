"""The local Ray instance ``lmmprobe run --executor ray`` starts: loopback only, quiet, and gone
with its driver.

Each test runs the real console script as the driver (it starts its own local instance) on a
slow model, so the run is under way, with replicas working, while the test looks at every
process the driver started: their listening sockets, and whether any outlives a SIGKILL of it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.console import as_from_a_shell

pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")

LMMPROBE = Path(sys.executable).with_name("lmmprobe")
EXIT_WITHIN_S = 15
"""A bounded wait for Ray's processes to end after the driver is SIGKILLed (they linger ~60 s
without lmmprobe's reaper)."""


def _stored(db: Path) -> int:
    try:
        with sqlite3.connect(db) as c:
            return int(c.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def _tree(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


@pytest.fixture
def driver(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """``lmmprobe run --executor ray`` (a local instance), under way: some answers stored."""
    db = tmp_path / "run.db"
    env = {**os.environ, "HOME": str(tmp_path)}  # where Ray would write a token file
    for key in ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        env.pop(key, None)
    args = [str(LMMPROBE), "run", "--executor", "ray", "--replicas", "2",
            "--model", "first,delay=0.2,batch=1", "--data", "demo,n=200", "--db", str(db),
            "--out", str(tmp_path / "out"), "--bootstrap", "0", "-q"]  # fmt: skip
    proc = subprocess.Popen(
        args, preexec_fn=as_from_a_shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    seen: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 180
        while _stored(db) < 4:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run stored nothing"
            time.sleep(0.1)
        seen = _tree(proc.pid)
        yield proc, db
    finally:
        seen += _tree(proc.pid)
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
        for p in seen:  # leave nothing behind, whatever the test found
            with contextlib.suppress(psutil.Error):
                p.kill()


def _listening(procs: list[psutil.Process]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for p in procs:
        try:
            conns = p.net_connections(kind="inet")
            name = p.name()
        except psutil.Error:  # ended meanwhile
            continue
        for c in conns:
            if c.status == psutil.CONN_LISTEN:
                found.setdefault(f"{name} ({p.pid})", []).append(c.laddr.ip)
    return found


def _loopback(ip: str) -> bool:
    address = ipaddress.ip_address(ip.split("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def test_a_local_instance_listens_on_loopback_only_and_warns_of_nothing(driver, tmp_path):
    proc, _ = driver
    procs = _tree(proc.pid)
    names = {p.name() for p in procs}
    assert {"gcs_server", "raylet"} <= names, names
    assert any(n.startswith("ray::SyncReplica") for n in names), names  # the run's replicas
    listening = _listening(procs)
    assert any(k.startswith("gcs_server") for k in listening), listening  # not a vacuous check
    assert any(k.startswith("raylet") for k in listening), listening
    assert any(k.startswith("ray::") for k in listening), listening  # workers and agents
    exposed = {k: ips for k, ips in listening.items() if not all(map(_loopback, ips))}
    assert not exposed, f"listening beyond loopback: {exposed}"

    proc.send_signal(signal.SIGINT)  # the run stops as a user's Ctrl-C stops it
    _, err = proc.communicate(timeout=120)
    # Token authentication is on (Ray's default), configured rather than chosen by Ray: no
    # warning, and no token file written into the home folder.
    assert "Token authentication" not in err, err
    assert not (tmp_path / ".ray" / "auth_token").exists()


@pytest.mark.slow
def test_every_ray_process_ends_soon_after_its_driver_is_sigkilled(driver):
    proc, db = driver
    procs = _tree(proc.pid)
    names = {p.name() for p in procs}
    assert {"gcs_server", "raylet", "ray::DashboardAgent", "ray::RuntimeEnvAgent"} <= names
    assert any(n.startswith("ray::SyncReplica") for n in names), names
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _stored(db) < 400, "the run finished before it was killed"
    deadline = time.monotonic() + EXIT_WITHIN_S
    alive = procs
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    left = []
    for p in alive:
        with contextlib.suppress(psutil.Error):
            left.append(f"{p.name()} ({p.pid})")
    assert not left, f"still running {EXIT_WITHIN_S} s after the driver was killed: {left}"
