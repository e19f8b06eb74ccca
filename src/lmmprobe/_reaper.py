"""Ends the processes a driver started (a local Ray instance, a model server) once it is gone.

It sits at the bottom of the package (it imports nothing of lmmprobe's) because two layers use
it: `run` for its local Ray instance and `models` for a served model's server. Run by
`lmmprobe.run._ray_local` as ``python -I _reaper.py MARKER DRIVER_PID`` with a pipe
from the driver as its stdin (and by `lmmprobe.models._local_server`, for a model server, as
``... MARKER DRIVER_PID VARIABLE``: the processes marked ``VARIABLE=MARKER``); it imports nothing but the standard library (nor lmmprobe), so it
starts in milliseconds and weighs little. It waits for end of file on that pipe, which the
kernel delivers when the driver closes it (`LocalRay.shutdown`) or dies in any way, SIGKILL
included; then it SIGKILLs every process of the instance.

Which processes: the driver put ``LMMPROBE_RAY_OWNER=MARKER`` into its environment just before
starting Ray, so the GCS server, the raylet and the workers inherit it, and nothing else does.
The agents the raylet starts inherit it too but then overwrite their environment's memory with
their process title (``ray::DashboardAgent``), so they cannot be told by it: while it waits,
the reaper looks every `POLL_S` seconds for the marked processes and remembers them and all
their descendants (by process id and start time, so a reused id is never killed). When the
driver dies, the raylet dies with it and its children lose their parent: only that memory
still knows them.

Why: Ray ties only its direct children to the driver (``PR_SET_PDEATHSIG``). The dashboard
and runtime-env agents are the raylet's children; when the raylet dies they try to report it
to the GCS, which died too, and wait out a 60-second timeout before they exit.

Linux only (it reads ``/proc``); elsewhere it exits at once and Ray's own clean-up applies.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time

POLL_S = 1.0
"""How often the reaper looks for new processes of the instance while the driver lives."""
SWEEP_S = 10.0
"""How long the reaper keeps killing after the driver is gone (one may start meanwhile)."""

Stat = tuple[int, int, bool]
"""A process's parent id, start time (clock ticks after boot) and whether it is a zombie."""


def _stat(pid: int) -> Stat | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:  # ended meanwhile
        return None
    fields = data[data.rindex(b")") + 2 :].split()  # the name, in parentheses, may hold spaces
    return int(fields[1]), int(fields[19]), fields[0] == b"Z"


def _marked(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return needle in f.read().split(b"\0")
    except OSError:  # ended, or another user's: not ours
        return False


class Tracker:
    """The processes of one instance: marked ones and their descendants, as last seen."""

    def __init__(self, marker: str, spare: set[int], variable: str = "LMMPROBE_RAY_OWNER") -> None:
        self.needle = f"{variable}={marker}".encode()
        self.spare = spare
        self.known: dict[int, int] = {}  # pid -> start time
        self._checked: dict[tuple[int, int], bool] = {}  # (pid, start) -> marked

    def scan(self) -> dict[int, Stat]:
        """Look at every process once; remember the instance's; return what was seen."""
        procs: dict[int, Stat] = {}
        for name in os.listdir("/proc"):
            if name.isdigit() and (st := _stat(int(name))) is not None:
                procs[int(name)] = st
        checked: dict[tuple[int, int], bool] = {}
        ours = set()
        for pid, (_, start, _) in procs.items():
            key = (pid, start)
            mark = self._checked.get(key)
            checked[key] = _marked(pid, self.needle) if mark is None else mark
            if checked[key] or self.known.get(pid) == start:
                ours.add(pid)
        self._checked = checked  # only processes that still exist
        grown = True
        while grown:  # and every descendant of one of them
            grown = False
            for pid, (ppid, _, _) in procs.items():
                if pid not in ours and ppid in ours:
                    ours.add(pid)
                    grown = True
        for pid in ours - self.spare:
            self.known[pid] = procs[pid][1]
        self.known = {p: s for p, s in self.known.items() if p in procs and procs[p][1] == s}
        return procs

    def sweep(self) -> int:
        """SIGKILL the instance's processes until none is left (or `SWEEP_S` passed)."""
        killed: set[tuple[int, int]] = set()
        deadline = time.monotonic() + SWEEP_S
        while time.monotonic() < deadline:
            procs = self.scan()
            alive = [p for p, s in self.known.items() if (p, s) not in killed and not procs[p][2]]
            if not alive:
                break
            for pid in alive:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                killed.add((pid, self.known[pid]))
            time.sleep(0.1)
        return len(killed)


def main(argv: list[str]) -> int:
    """Follow the instance while the driver's pipe is open, then end what it left running."""
    marker, driver = argv[1], int(argv[2])
    variable = argv[3] if len(argv) > 3 else "LMMPROBE_RAY_OWNER"
    # A Ctrl-C in the driver's terminal is the driver's to handle; this waits for its end.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not os.path.isdir("/proc"):
        return 0
    tracker = Tracker(marker, {os.getpid(), driver}, variable)
    while True:
        tracker.scan()
        ready, _, _ = select.select([0], [], [], POLL_S)
        # The driver never writes: readable means end of file, the driver is gone.
        if ready and not os.read(0, 4096):
            break
    tracker.sweep()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
