"""A row's ``video``: read, its path resolved, and its frames sampled as the row is loaded.

A row gives ``"video": "clip.mp4"`` or an object ``{"path" | "url", "start", "end",
"frames" | "fps", "max_frames"}``: the file (relative to the data file) or URL, the clip in
seconds, and the row's own frame policy (``frames: 8``; ``fps: 1, max_frames: 32``). The
frames are sampled when the row loads (`VideoRef.resolved`), under the run's policy where the
run gives one (`frame_policy`; a run of several samples each: the first gives the frames, the
others the clip's `VideoRef.alternates`), else the row's own, else ``frames=8``: a video that cannot be
read or decoded is that row's problem, ``FILE:LINE: video: video PATH: why``, and the other
rows load. Sampled clips are remembered for the process (by path, size, modification time,
clip and policy), so data read again chunk by chunk does not decode them again.
"""

from __future__ import annotations

import contextlib
import os
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lmmprobe.data.base import DataError
from lmmprobe.data.rows import RowError
from lmmprobe.schema.video import FramePolicy, VideoRef

VIDEO_FIELDS = ("path", "url", "start", "end", "frames", "fps", "max_frames")

_RUN_POLICIES: ContextVar[tuple[FramePolicy, ...]] = ContextVar(
    "lmmprobe_frame_policies", default=()
)

_REMEMBERED = 4096
"""Sampled clips kept for the process: each is a few hundred bytes (times and hashes)."""
_resolved: OrderedDict[tuple[Any, ...], VideoRef] = OrderedDict()


@contextlib.contextmanager
def frame_policy(policies: FramePolicy | Sequence[FramePolicy] | None) -> Iterator[None]:
    """Within the block, every video row loaded is sampled with the run's `policies`.

    Args:
        policies: The run's frame policy or policies (``--frames``), which override each row's
            own: the first gives the video's `VideoRef.frames`, each other its
            `VideoRef.alternates` entry (a run sweeping policies). None or none: its own.

    """
    if isinstance(policies, FramePolicy):
        policies = [policies]
    token = _RUN_POLICIES.set(tuple(policies or ()))
    try:
        yield
    finally:
        _RUN_POLICIES.reset(token)


def check_video(base: Path, value: Any, field: str = "video") -> VideoRef:
    """The row's video, its path resolved against `base` and its frames sampled.

    Raises:
        RowError: The value is malformed (naming ``video.FIELD``), or the video cannot be
            read or decoded (the message names the file and why).
        DataError: PyAV is not installed (every video row would fail alike), with the command
            that installs it.

    """
    if isinstance(value, str):
        value = {"path": value}
    if not isinstance(value, dict):
        raise RowError(
            field,
            "expected a path or an object {path | url, start, end, frames | fps, max_frames}",
        )
    unknown = sorted(set(value) - set(VIDEO_FIELDS))
    if unknown:
        raise RowError(f"{field}.{unknown[0]}", f"unknown field (known: {', '.join(VIDEO_FIELDS)})")
    data: dict[str, Any] = {k: value[k] for k in ("url", "start", "end") if k in value}
    path = value.get("path")
    if path is not None:
        if not isinstance(path, str) or not path:
            raise RowError(f"{field}.path", f"expected a file path, got {path!r}")
        try:
            data["path"] = str((base / path).resolve())
        except (RuntimeError, ValueError) as exc:  # a loop of links; a NUL in the name
            raise RowError(f"{field}.path", f"video file not found: {path!r} ({exc})") from exc
    own = _own_policy(value, field)
    if own is not None:
        data["policy"] = own
    try:
        ref = VideoRef.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise RowError(f"{field}.{where}" if where else field, err["msg"]) from None
    return sample_video(ref, field)


def sample_video(ref: VideoRef, field: str = "video") -> VideoRef:
    """`ref` with its frames sampled: under the run's policies where it gives some, else its own.

    What `check_video` does once a row's value is read; a benchmark's reader calls it with the
    clip and the benchmark's own policy (`VideoRef.policy`).

    Raises:
        RowError: The video cannot be read or decoded (the message names the file and why).
        DataError: PyAV is not installed, with the command that installs it.

    """
    policies = _RUN_POLICIES.get()
    try:
        sampled = _sampled(ref, policies[0] if policies else None)
        if len(policies) > 1:
            others = {p.label: _sampled(ref, p).frames or [] for p in policies[1:]}
            sampled = sampled.model_copy(update={"alternates": others})
        return sampled
    except OSError as exc:  # VideoError: unreadable, empty, truncated, no video stream
        # One line: the message names the file, whose name may hold a line break.
        raise RowError(field, str(exc).replace("\r", "\\r").replace("\n", "\\n")) from None
    except ImportError as exc:
        raise DataError(str(exc)) from None


def _own_policy(value: dict[str, Any], field: str) -> FramePolicy | None:
    """The row's frame policy from ``frames``, or ``fps`` and ``max_frames``; None if neither."""
    given = {k: value[k] for k in ("frames", "fps", "max_frames") if k in value}
    if not given:
        return None
    for k, v in given.items():
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise RowError(f"{field}.{k}", f"expected a number, got {v!r}")
    if "frames" in given and len(given) > 1:
        raise RowError(f"{field}.frames", "give frames, or fps (and max_frames), not both")
    if "max_frames" in given and "fps" not in given:
        raise RowError(f"{field}.max_frames", "max_frames goes with fps")
    try:
        if "frames" in given:
            return FramePolicy(kind="frames", frames=given["frames"])
        return FramePolicy(kind="fps", fps=given["fps"], max_frames=given.get("max_frames", 32))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or next(iter(given))
        raise RowError(f"{field}.{where}", err["msg"]) from None


def _sampled(ref: VideoRef, run: FramePolicy | None) -> VideoRef:
    """`ref.resolved(run)`, remembered by the file's identity, the clip and the policy."""
    effective = run or ref.policy
    identity: tuple[Any, ...] = ()
    if ref.path is not None:
        try:
            st = os.stat(ref.path)
        except OSError as exc:
            raise OSError(f"video {ref.path}: cannot be read ({exc.strerror or exc})") from None
        identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    key = (ref.source, identity, ref.start, ref.end, effective.label if effective else None)
    known = _resolved.get(key) if identity else None  # a URL's content may change: not kept
    if known is not None:
        _resolved.move_to_end(key)
        return known
    sampled = ref.resolved(run)
    if identity:
        _resolved[key] = sampled
        while len(_resolved) > _REMEMBERED:
            _resolved.popitem(last=False)
    return sampled
