"""Joining or starting Ray fails in one bounded line (re-test 13 #2, #3), never a hang or a traceback."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from tests.console import lmmprobe

ray = pytest.importorskip("ray")

from lmmprobe.run.ray_executor import RayExecutor  # noqa: E402


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_cluster_address_where_nothing_listens_is_refused_in_one_line(
    tmp_path: Path, how: str
) -> None:
    """Ray's own join retried such an address for ever (killed at 200 s, Ray's warnings only)."""
    address = f"127.0.0.1:{_closed_port()}"
    args = ["run", "-m", "random", "--data", "demo,n=2", "--db", str(tmp_path / "db"), "-q"]
    if how == "flag":
        done = lmmprobe(*args, "--executor", f"ray:{address}", timeout=120)
    else:
        done = lmmprobe(*args, "--executor", "ray", timeout=120, RAY_ADDRESS=address)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: cannot join the Ray cluster at {address}: nothing answers at {address} "
        "(Connection refused); start one with `ray start --head` or check the address"
    ]


def test_a_local_instance_that_cannot_start_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray raises a bare Exception when its node times out (under a memory limit, say)."""
    if ray.is_initialized():
        pytest.skip("Ray is already running in this process")

    def node_times_out(*_: object, **__: object) -> None:
        raise Exception("The current node timed out during startup.")  # as ray.init does

    monkeypatch.setattr(ray, "init", node_times_out)
    with pytest.raises(ValueError, match=r"^cannot start a local Ray instance: The current node"):
        RayExecutor().connect()
