"""At exit, wait for Arrow's threads to drop the Python files they still hold (issue 34).

Why: `datasets` hands pyarrow Python file objects (its parquet reader: ``with open(file) as f:
make_fragment(f)``), and lmmprobe does too (`lmmprobe.data.files.decompressed`). pyarrow wraps
each in a C++ file that keeps a reference to it, and to the bytes read through it, and its
scans run on Arrow's own IO and CPU threads. Once the ``with`` block has closed the file, the
last of those references may still be dropped by one of those threads; dropping it takes the
GIL (pyarrow's ``OwnedRefNoGIL``: it checks ``Py_IsInitialized`` and then waits for the GIL).
When that happens while the interpreter finalizes, the thread is given the GIL after
finalization began and Python ends it with ``pthread_exit`` inside the C++ destructor:
``std::terminate``, "terminate called without an active exception", SIGABRT, after a run's
right output (about one ``run --dry-run --strict`` in 250 over a hub copy).

So, registered at exit once pyarrow is in use (`watch_arrow_files`), `wait_for_arrow_files`
finds the closed Python files nothing in Python refers to any more (what holds them is native
code: Arrow's readers) and waits, in short sleeps that give the GIL up, until those threads
have dropped them, at most `MAX_WAIT_S`. Finalization then starts with nothing left for
Arrow's threads to hand back to Python. With none pending, it returns at once.
"""

from __future__ import annotations

import atexit
import gc
import io
import itertools
import time
import weakref

__all__ = ["MAX_WAIT_S", "held_natively", "wait_for_arrow_files", "watch_arrow_files"]

MAX_WAIT_S = 10.0
"""The longest the exit waits for Arrow's threads, in all: a file a native object keeps for
good (not a thread about to drop it) costs at most this, once."""

POLL_S = 0.005
"""How long each sleep of the wait is: the GIL is free meanwhile, for the thread to drop it."""

MAX_FILES = 100
"""The most closed files looked into: each costs a pass over the heap (`gc.get_referrers`)."""

_FILE_TYPES = frozenset(
    {io.FileIO, io.BufferedReader, io.BufferedRandom, io.BufferedWriter, io.TextIOWrapper}
)
"""What ``open`` returns: the Python files `datasets` and lmmprobe hand pyarrow."""

_watching = False


def watch_arrow_files() -> None:
    """Have the exit wait for Arrow's threads (`wait_for_arrow_files`); registered once.

    Called where pyarrow or `datasets` is first imported (`lmmprobe.data.hf_dataset.
    import_datasets`, `lmmprobe.data.files.decompressed`). Registered then, the wait runs
    after the hooks registered later, and before the interpreter finalizes.
    """
    global _watching
    if not _watching:
        atexit.register(wait_for_arrow_files)
        _watching = True


def _closed(obj: io.IOBase) -> bool:
    try:
        return bool(obj.closed)
    except Exception:  # a wrapper whose raw file is gone (or a broken subclass): not ours
        return False


def held_natively() -> list[weakref.ref[io.IOBase]]:
    """Closed Python files that are alive though no Python object refers to them.

    Such a file is kept by native code alone: on a process reading through pyarrow, a C++
    file of Arrow's that a thread of its pool has yet to drop. Weak references, so looking
    keeps none of them alive. Objects `gc.freeze` moved aside (the CLI's, at its start) are
    not searched: a closed file only such an object refers to would be waited for, to the cap.
    """
    # Exact types, not isinstance(io.IOBase): an ABC check on each of 100,000 objects took
    # a third of a second at every exit.
    closed = [o for o in gc.get_objects() if type(o) in _FILE_TYPES and _closed(o)]
    held: list[weakref.ref[io.IOBase]] = []
    for obj in itertools.islice(closed, MAX_FILES):  # a slice would be one more referrer
        # The list above refers to every one; any other referrer is Python's own.
        if not any(r is not closed for r in gc.get_referrers(obj)):
            held.append(weakref.ref(obj))
    return held


def wait_for_arrow_files(max_wait_s: float = MAX_WAIT_S, poll_s: float = POLL_S) -> bool:
    """Wait until the closed files only native code holds are gone, at most `max_wait_s`.

    Returns:
        True when none is left (or none was pending); False when the cap was reached first.

    """
    pending = held_natively()
    deadline = time.monotonic() + max_wait_s
    while any(ref() is not None for ref in pending):
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_s)  # gives the GIL up: the thread takes it to drop its reference
    return True
