"""What a path a user gave is, when it is not a regular file: the one wording every reader uses.

A FIFO or a device such as ``/dev/zero`` would hang a read or never end it, so every reader of
a file a user points at takes regular files only; a path that is something else is named as
what it is (``ff/zero.yaml: a character device, not a regular file; ...``), never called
missing. A file on a kernel filesystem (``/proc``, ``/sys``, debugfs...) is no data file
either, though it says it is regular: ``/proc/kmsg`` blocks a read forever, so it is refused as
"a kernel file" (`kernel_file`). `open_regular_file` refuses so when it opens a file (checking
what it opened, so a file swapped since an earlier ``stat`` is caught too; through
`lmmprobe.data.files.open_regular` and a row's image check); the readers that
check a path before opening it (`lmmprobe._mapping_file`, the JSONL and ReForm-Eval sources, a
row's image, ``lmmprobe elo``, APEx's replay) ask `not_regular_file` first.

Kept below every package (it needs nothing of lmmprobe's), as `lmmprobe._mapping_file`, which
asks it, is.
"""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path
from typing import IO

__all__ = [
    "NotRegularFile",
    "file_kind",
    "kernel_file",
    "not_regular_file",
    "not_regular_message",
    "open_regular_file",
]

KERNEL_FILESYSTEMS = frozenset(
    {
        "proc", "sysfs", "debugfs", "tracefs", "securityfs", "configfs", "cgroup", "cgroup2",
        "bpf", "pstore", "efivarfs", "fusectl", "binfmt_misc",
    }
)  # fmt: skip
"""Filesystems whose files the kernel makes up as they are read: none is a data file."""

KERNEL_FILE = "a kernel file"
"""What `file_kind` calls a file on one of `KERNEL_FILESYSTEMS`."""


@functools.cache
def _kernel_devices() -> frozenset[int]:
    """The device numbers (``st_dev``) of the kernel filesystems mounted (none off Linux)."""
    try:
        with open("/proc/self/mountinfo", "rb") as f:
            text = f.read(1 << 24).decode("utf-8", "replace")
    except OSError:
        return frozenset()
    devices: set[int] = set()
    for line in text.splitlines():
        # ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
        fields = line.split()
        if "-" not in fields[3:]:
            continue
        kind = fields[fields.index("-", 3) + 1 :][:1]
        major, _, minor = fields[2].partition(":")
        if kind and kind[0] in KERNEL_FILESYSTEMS and major.isdigit() and minor.isdigit():
            devices.add(os.makedev(int(major), int(minor)))
    return frozenset(devices)


def kernel_file(info: os.stat_result) -> bool:
    """Whether the file `info` (``os.stat``'s) describes lies on a kernel filesystem."""
    return info.st_dev in _kernel_devices()


def file_kind(mode: int, info: os.stat_result | None = None) -> str:
    """What a file of `mode` (``os.stat``'s ``st_mode``) is, in words: ``"a FIFO"``...

    With `info` (its whole ``os.stat``), a regular file on a kernel filesystem is
    `KERNEL_FILE`.
    """
    if info is not None and stat.S_ISREG(mode) and kernel_file(info):
        return KERNEL_FILE
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a plain file"


def not_regular_message(path: Path | str, kind: str, what: str) -> str:
    """The one line refusing `path`, which is `kind` (`file_kind`), as a file of `what`."""
    return (
        f"{path}: {kind}, not a regular file; lmmprobe reads {what} from regular files only "
        "(copy the data into one)"
    )


def not_regular_file(path: Path | str, what: str, *, shown: str | None = None) -> str | None:
    """`not_regular_message` for `path` when it exists (links followed) and is no regular file.

    A file on a kernel filesystem (`kernel_file`) is no regular file here.

    Args:
        path: The path a user gave.
        what: What the file should hold (``"settings"``, ``"data rows"``).
        shown: How the message names the file (a row's image as the row wrote it), if not as
            `path`.

    Returns:
        The message; None when `path` is a regular file or does not exist (or cannot be
        looked at), which the caller says in its own words.

    """
    try:
        info = os.stat(path)
    except (OSError, ValueError):  # missing, a broken link, no permission, a NUL in the name
        return None
    if stat.S_ISREG(info.st_mode) and not kernel_file(info):
        return None
    return not_regular_message(
        path if shown is None else shown, file_kind(info.st_mode, info), what
    )


class NotRegularFile(OSError):
    """`open_regular_file` found no regular file: its message is `not_regular_message`'s."""


def open_regular_file(path: Path | str, what: str, *, shown: str | None = None) -> IO[bytes]:
    """`path` opened for reading as bytes, when what was opened is a regular file.

    The check is made on the opened file (``fstat``), so a file swapped for a FIFO or a device
    after an earlier ``stat`` is still refused; the open itself is non-blocking, so a FIFO no
    one writes to is refused at once instead of waiting for a writer forever.

    Args:
        path: The file.
        what: What it should hold (``"images"``, ``"predictions"``), for the message.
        shown: How the message names the file, if not as `path`.

    Raises:
        NotRegularFile: It is a FIFO, a device, a socket, a folder or a kernel file.
        OSError: It cannot be opened (missing, no permission).

    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        # A kernel file (/proc/kmsg) says it is regular and may block a read forever.
        if not stat.S_ISREG(info.st_mode) or kernel_file(info):
            kind = file_kind(info.st_mode, info)
            raise NotRegularFile(not_regular_message(path if shown is None else shown, kind, what))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
