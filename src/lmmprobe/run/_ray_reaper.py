"""Ends the processes of a local Ray instance once the driver that started it is gone.

Run by `lmmprobe.run._ray_local` as ``python -I _ray_reaper.py MARKER DRIVER_PID`` with a pipe
from the driver as its stdin; it imports nothing but the standard library (nor lmmprobe), so it
starts in milliseconds and weighs little. It reads stdin until end of file, which the kernel
delivers when the driver closes the pipe (its `LocalRay.shutdown`) or dies in any way,
SIGKILL included. Then it SIGKILLs every process of this user whose environment carries
``LMMPROBE_RAY_OWNER=MARKER``: the driver put that variable into its environment just before
starting Ray, so the GCS server, the raylet, the agents the raylet starts and the workers all
inherit it, and nothing else does.

Why: Ray ties only its direct children to the driver (``PR_SET_PDEATHSIG``). The dashboard
and runtime-env agents are the raylet's children; when the raylet dies they try to report it
to the GCS, which died too, and wait out a 60-second timeout before they exit.

Linux only (it reads ``/proc``); elsewhere it exits at once and Ray's own clean-up applies.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

SWEEP_S = 10.0
"""How long the reaper keeps looking for processes (one may start while it kills the rest)."""


def owned(marker: str, spare: set[int]) -> list[int]:
    """Process ids whose environment carries ``LMMPROBE_RAY_OWNER=marker`` (not `spare`)."""
    needle = f"LMMPROBE_RAY_OWNER={marker}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in spare:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:  # gone, or another user's: not ours
            continue
        if needle in env:
            found.append(int(name))
    return found


def sweep(marker: str, spare: set[int]) -> int:
    """SIGKILL the marked processes until none is left (or `SWEEP_S` passed); how many."""
    killed: set[int] = set()
    deadline = time.monotonic() + SWEEP_S
    while time.monotonic() < deadline:
        # Killed processes stay in /proc as zombies until reaped: skip those already signalled.
        alive = [p for p in owned(marker, spare) if p not in killed]
        if not alive:
            break
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        time.sleep(0.2)
    return len(killed)


def main(argv: list[str]) -> int:
    """Wait for the driver's pipe to close, then end what its Ray instance left running."""
    marker, driver = argv[1], int(argv[2])
    # A Ctrl-C in the driver's terminal is the driver's to handle; this waits for its end.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not os.path.isdir("/proc"):
        return 0
    while os.read(0, 4096):  # the driver never writes: this returns b"" when it is gone
        pass
    sweep(marker, {os.getpid(), driver})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
