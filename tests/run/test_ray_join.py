"""Joining or starting Ray fails in one bounded line (re-test 13 #2, #3), never a hang or a
traceback; resources Ray cannot reserve are refused before it starts (#4)."""

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


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--cpus-per-replica", "1e-300", "finer than Ray reserves: give 0 or a multiple of 0.0001"),
        ("--cpus-per-replica", "0.00015", "finer than Ray reserves"),
        ("--gpus-per-replica", "inf", "must be a finite number, 0 or more"),
        # NaN was "Input should be greater than or equal to 0" (typer's range check), and a
        # negative value worded so apart from infinity: one rule, worded once.
        ("--gpus-per-replica", "nan", "must be a finite number, 0 or more (got nan)"),
        ("--cpus-per-replica", "-1", "must be a finite number, 0 or more (got -1.0)"),
    ],
)
def test_resources_ray_cannot_reserve_are_refused_before_it_starts(
    tmp_path: Path, flag: str, value: str, says: str
) -> None:
    # Ray refused 1e-300 only once its instance had started (20 s), naming no option.
    db = tmp_path / "db"
    done = lmmprobe("run", "-m", "random", "--data", "demo,n=2", "--db", db, "-q",
                    "--executor", "ray", flag, value)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "Started a local Ray instance" not in done.stderr
    assert f"error: {flag}: {says}" in done.stderr
    assert not db.exists()


def test_arena_judge_refuses_a_nan_cpu_share_in_the_rules_words(tmp_path: Path) -> None:
    done = lmmprobe("arena", "judge", "--judge", "random", "--db", tmp_path / "db",
                    "--executor", "ray", "--cpus-per-replica", "nan")  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    says = "error: --cpus-per-replica: cpus_per_replica=nan: must be a finite number, 0 or more"
    assert says in done.stderr


def test_arena_judge_refuses_a_cpu_share_ray_cannot_reserve(tmp_path: Path) -> None:
    done = lmmprobe("arena", "judge", "--judge", "random", "--db", tmp_path / "db",
                    "--executor", "ray", "--cpus-per-replica", "0.00001")  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert (
        "error: --cpus-per-replica: cpus_per_replica=1e-05: finer than Ray reserves" in done.stderr
    )
