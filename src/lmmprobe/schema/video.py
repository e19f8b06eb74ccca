"""Video in a sample: a clip of a file or URL, the frame policy that samples it, and its frames.

A `VideoRef` names a video (a file path or a URL), an optional start and end in seconds, and
a `FramePolicy`: ``frames=N`` (N frames, one at the middle of each of N equal parts of the
clip), ``fps=F`` (one frame every 1/F seconds from the clip's start, at most ``max_frames``;
past that, N = ``max_frames`` uniform frames), or a reference sampler over frame indices by
name: ``linspace=N`` (lmms-eval's uniform indices), ``mvbench=N`` (MVBench's segment
middles) and ``longvideobench=N`` (LongVideoBench's loader), which read the video's frame count
and rate (`FramePolicy.indices`). Resolving
a reference (`VideoRef.resolved`) decodes the frames the policy picks, one seek per frame,
never the whole video (`lmmprobe.schema._video_decode`), and records each frame's
presentation time and pixel hash. The frames then reach a request as images (`frame_images`):
their content hashes are the frames' pixel hashes, so the request key names exactly what the
model was shown, and the sample's stored JSON (with the times and hashes) says it.
"""

from __future__ import annotations

import math
import os
import re
import stat
from pathlib import PurePath
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lmmprobe._mapping_file import decimal_number
from lmmprobe.schema.image import (
    MAX_IMAGES_PER_SAMPLE,
    FrameChanged,
    ImageRef,
    max_image_pixels,
    pixel_hash,
)
from lmmprobe.schema.text import shown_value

MAX_FRAMES = 512
"""The most frames one policy may sample from one clip (`MAX_IMAGES_PER_SAMPLE` bounds a
sample's images and frames together)."""

DEFAULT_POLICY_TEXT = "frames=8"
"""The policy a video without one of its own is sampled with, unless the run says another."""

_POLICY_PART = re.compile(
    r"\s*(frames|fps|max_frames|linspace|mvbench|longvideobench)\s*=\s*([^,\s]+)\s*"
)

INDEX_KINDS = ("linspace", "mvbench", "longvideobench")
"""The policies that pick frame indices from the video's frame count and rate (named after the
reference sampler each reproduces) rather than times from the clip's length."""


class FramePolicy(BaseModel):
    """Which frames of a clip a model is shown.

    ``frames``: that many frames, each at the middle of one of as many equal parts of the clip
    (``frames=N``). ``fps``: one frame every 1/``fps`` seconds from the clip's start, at most
    ``max_frames`` of them; a clip long enough for more gets ``max_frames`` uniform frames
    instead (``fps=F,max_frames=M``).

    ``linspace``, ``mvbench`` and ``longvideobench`` reproduce reference samplers over frame
    indices (`indices`), which read the video's frame count and average rate: ``linspace=N`` is
    lmms-eval's uniform sampler, ``mvbench=N`` MVBench's segment middles, ``longvideobench=N``
    LongVideoBench's ``load_video``. Their frame ``i`` is the frame shown at ``i / rate``
    seconds.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["frames", "fps", "linspace", "mvbench", "longvideobench"] = Field(
        description="frames: a fixed count; fps: a rate; linspace, mvbench, longvideobench: a "
        "reference sampler's frame indices (`indices`)."
    )
    frames: int | None = Field(
        default=None,
        ge=1,
        le=MAX_FRAMES,
        description="How many frames (at most, for longvideobench), for every kind but fps.",
    )
    fps: float | None = Field(
        default=None, gt=0, le=1000, description="Frames per second, for kind fps."
    )
    max_frames: int = Field(
        default=32, ge=1, le=MAX_FRAMES, description="The most frames kind fps samples."
    )

    @model_validator(mode="after")
    def _complete(self) -> FramePolicy:
        if self.kind in ("frames", *INDEX_KINDS) and self.frames is None:
            raise ValueError(f"a {self.kind} policy needs a frame count ({self.kind}=N)")
        if self.kind == "fps" and (self.fps is None or not math.isfinite(self.fps)):
            raise ValueError("an fps policy needs a finite fps=F")
        return self

    @classmethod
    def parse(cls, text: str) -> FramePolicy:
        """Read ``frames=N``, ``fps=F[,max_frames=M]``, ``linspace=N``, ``mvbench=N``, ``longvideobench=N``.

        A bare number is ``frames=N``.

        Raises:
            ValueError: Not one of those forms, naming the text.

        """
        given = text.strip()
        if given.isdigit():
            given = f"frames={given}"
        values: dict[str, str] = {}
        for part in given.split(","):
            m = _POLICY_PART.fullmatch(part)
            if m is None or m.group(1) in values:
                raise ValueError(
                    f"frame policy {shown_value(text)!r}: expected frames=N, fps=F, fps=F,max_frames=M, "
                    "linspace=N, mvbench=N or longvideobench=N"
                )
            values[m.group(1)] = m.group(2)
        try:
            for kind in ("frames", *INDEX_KINDS):
                if set(values) == {kind}:
                    return cls(kind=kind, frames=_whole(kind, values[kind]))
            if "fps" in values and set(values) <= {"fps", "max_frames"}:
                return cls(
                    kind="fps",
                    fps=_rate(values["fps"]),
                    max_frames=_whole("max_frames", values.get("max_frames", "32")),
                )
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise ValueError(f"frame policy {shown_value(text)!r}: {where}: {err['msg']}") from None
        except ValueError as exc:  # `_whole` or `_rate` refused a value
            raise ValueError(f"frame policy {shown_value(text)!r}: {exc}") from None
        raise ValueError(
            f"frame policy {shown_value(text)!r}: expected frames=N, fps=F, fps=F,max_frames=M, linspace=N, "
            "mvbench=N or longvideobench=N"
        )

    @property
    def label(self) -> str:
        """The policy as `parse` reads it: ``frames=8``, ``fps=1,max_frames=32``, ``mvbench=16``."""
        if self.kind != "fps":
            return f"{self.kind}={self.frames}"
        return f"fps={self.fps:g},max_frames={self.max_frames}"

    @property
    def by_index(self) -> bool:
        """Whether the policy picks frame indices (`indices`) rather than times (`times`)."""
        return self.kind in INDEX_KINDS

    def indices(
        self, frame_count: int, rate: float, start: float | None = None, end: float | None = None
    ) -> list[int]:
        """The frame indices a reference sampler picks from a video (kinds linspace, mvbench).

        ``linspace=N`` is lmms-eval's uniform sampler (``lmms_eval/models/model_utils/
        load_video.py``: ``_compute_sample_count`` then ``_compute_uniform_indices``):
        ``min(count, N)`` indices ``numpy.linspace(0, count - 1, ., dtype=int)``, without
        repeats. A clip (`start`, `end`) is lmmprobe's own extension: the same rule over the
        clip's frames, from ``round(start * rate)``.

        ``mvbench=N`` is MVBench's ``MVBench_dataset.get_index`` (OpenGVLab/Ask-Anything
        ``video_chat2/mvbench.ipynb``) with ``num_segments=N`` and ``max_frame = count - 1``:
        the clip (its ``bound``) spans frames ``round(start * rate)`` to
        ``round(end * rate)`` (Python's rounding, half to even), the whole video without one,
        and segment ``k`` gives ``int(first + size / 2 + round(size * k))`` with
        ``size = (last - first) / N``.

        ``longvideobench=N`` is LongVideoBench's ``load_video(video, duration, N)``
        (longvideobench/LongVideoBench ``longvideobench/longvideobench_dataset.py``): with
        ``duration`` the clip's `end` (its annotation's ``duration``; the video's length
        without one), ``min(N, int(duration))`` frames, frame ``k`` at ``int(int(duration *
        rate) / n) * k``; a clip under a second holds none there (a division by zero).

        Args:
            frame_count: The video's frames (decord's ``len(vr)``).
            rate: Its average frame rate (decord's ``get_avg_fps``).
            start: The clip's start in seconds (None: the video's first frame).
            end: The clip's end in seconds (None: its last frame).

        Raises:
            ValueError: The policy samples times, the video has no frame, or the clip holds
                none.

        """
        if not self.by_index:
            raise ValueError(f"the {self.label} policy samples times, not frame indices")
        assert self.frames is not None
        if frame_count < 1 or not rate > 0 or not math.isfinite(rate):
            raise ValueError(f"no frame to sample ({frame_count} frames at {rate:g} fps)")
        if start is not None and end is not None and not end > start:
            # A `VideoRef` never holds such a clip; MVBench's sampler would run backwards.
            raise ValueError(f"the clip is empty ({start:g} s to {end:g} s)")
        if self.kind == "mvbench":
            return mvbench_indices(self.frames, frame_count - 1, rate, start, end)
        if self.kind == "longvideobench":
            duration = frame_count / rate if end is None else end
            taken = min(self.frames, int(duration))
            if taken < 1:
                raise ValueError(
                    f"the clip lasts {duration:g} s: LongVideoBench's sampler needs 1 s"
                )
            if not math.isfinite(duration * rate):  # an annotation's 1e308 s: no int of it
                raise ValueError(f"the clip ({duration:g} s) is longer than the video's frames")
            step = int(int(duration * rate) / taken)
            picked = [step * k for k in range(taken)]
            if picked[-1] >= frame_count:
                raise ValueError(f"the clip ({duration:g} s) is longer than the video's frames")
            return picked
        first = 0 if start is None else max(0, round(start * rate))
        stop = frame_count if end is None else min(frame_count, round(end * rate))
        count = stop - first
        if count < 1:
            raise ValueError(f"the clip holds no frame (frames {first} to {stop - 1})")
        taken = min(count, self.frames)
        # numpy's linspace and its cast to int, as the reference computes them, then unique.
        # Imported here: every command loads this schema, few pick frames (`lmmprobe --help`
        # starts without numpy, tests/cli/test_startup_imports.py).
        import numpy as np

        uniform = np.linspace(0, count - 1, taken, dtype=int)
        return [first + int(i) for i in np.unique(uniform)]

    def times(self, start: float, end: float) -> list[float]:
        """The times (seconds) this policy samples from the clip ``[start, end)``.

        Raises:
            ValueError: The clip is empty (``end <= start``), or the policy picks frame
                indices (`indices`).

        """
        if self.by_index:
            raise ValueError(f"the {self.label} policy picks frame indices, not times")
        span = end - start
        if not span > 0:
            raise ValueError(f"the clip is empty ({start:g} s to {end:g} s)")
        if self.kind == "fps":
            assert self.fps is not None
            # At least the clip's first instant, however slow the rate.
            count = max(1, math.ceil(span * self.fps - 1e-9))
            if count <= self.max_frames:
                return [start + k / self.fps for k in range(count)]
            n = self.max_frames
        else:
            assert self.frames is not None
            n = self.frames
        # The middle of each of n equal parts: never the clip's very first or last instant,
        # where a cut or a fade sits, and the same parts whatever the frame rate.
        return [start + (i + 0.5) * span / n for i in range(n)]


def mvbench_indices(
    segments: int,
    max_frame: int,
    rate: float,
    start: float | None,
    end: float | None,
    first_idx: int = 0,
) -> list[int]:
    """MVBench's ``get_index(bound, fps, max_frame, first_idx)`` (see `FramePolicy.indices`).

    A video passes ``max_frame = frames - 1`` and ``first_idx=0``; MVBench's folders of frames
    (``read_frame``: files ``00001.jpg`` on, at 3 fps) pass the number of files and 1.

    Raises:
        ValueError: An index falls outside ``[first_idx, max_frame]`` (a clip past the end).

    """
    # Without a bound the reference uses (-100000, 100000) seconds: the whole video.
    low = -100000.0 if start is None else start
    high = 100000.0 if end is None else end
    first = max(first_idx, round(low * rate))
    last = min(round(high * rate), max_frame)
    size = float(last - first) / segments
    import numpy as np  # as in `FramePolicy.indices`: only where frames are picked

    picked = [int(first + (size / 2) + np.round(size * k)) for k in range(segments)]
    if any(not first_idx <= i <= max_frame for i in picked):
        raise ValueError(
            f"the clip ({low:g} s to {high:g} s) holds no frame of the {max_frame} there are"
        )
    return picked


def _whole(name: str, value: str) -> int:
    """A policy's count, in its own words when it is none (not ``int()``'s "invalid literal").

    The message does not repeat `value`: the policy it is part of is quoted before it.
    """
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}= takes a whole number") from None


def _rate(value: str) -> float:
    """A policy's ``fps``: a finite number (NaN was refused as "more than 1000").

    Plain decimal (`decimal_number`): ``float()`` read ``fps=1_0`` as 10.
    """
    fps = decimal_number(value)
    if fps is None or not math.isfinite(fps):
        raise ValueError("fps= takes a finite number")
    return fps


MAX_POLICIES = 16
"""The most frame policies one sweep takes: each asks every video sample again and decodes its
frames again (512 policies ran for minutes before asking anything)."""


def parse_policies(text: str) -> list[FramePolicy]:
    """One or more frame policies: ``8``, ``8,16,32``, ``fps=1`` or ``fps=0.5;fps=1;fps=2``.

    Policies are separated by ``;``; a list of bare counts may use commas (``8,16,32``).

    Raises:
        ValueError: A policy is malformed, one is given twice (naming it), or there are more
            than `MAX_POLICIES`.

    """
    parts = text.split(";")
    if len(parts) == 1 and re.fullmatch(r"\s*\d+\s*(,\s*\d+\s*)+", text):
        parts = text.split(",")
    if len(parts) > MAX_POLICIES:
        raise ValueError(
            f"{len(parts):,} frame policies; a sweep takes at most {MAX_POLICIES} (each asks "
            "every video sample again)"
        )
    policies = [FramePolicy.parse(part) for part in parts]
    labels = [p.label for p in policies]
    for label in labels:
        if labels.count(label) > 1:
            raise ValueError(f"frame policies {text!r}: the policy {label!r} is given twice")
    return policies


class VideoFrame(BaseModel):
    """One decoded frame: when it is shown and what its pixels are."""

    model_config = ConfigDict(frozen=True)

    time: float = Field(description="Presentation time of the frame, in seconds of the video.")
    sha256: str = Field(
        description="Hash of the decoded RGB pixels (as `ImageRef.content_hash` hashes a "
        "picture), so a frame is named by what it shows."
    )


class VideoRef(BaseModel):
    """A video clip a question is about, and once resolved, the frames a model is shown.

    Exactly one of `path` and `url` is set. `frames` is filled by `resolved` (the data loader
    calls it): the frames the policy picked, in time order.
    """

    model_config = ConfigDict(frozen=True)

    path: str | None = Field(default=None, description="Video file (resolved by the loader).")
    url: str | None = Field(default=None, description="Video URL (http, https) FFmpeg reads.")
    start: float | None = Field(
        default=None, ge=0, description="Where the clip starts, in seconds (None: at 0)."
    )
    end: float | None = Field(
        default=None, gt=0, description="Where the clip ends, in seconds (None: the video's end)."
    )
    policy: FramePolicy | None = Field(
        default=None,
        description="The sample's (its benchmark's) own frame policy; None: the run's.",
    )
    frames: list[VideoFrame] | None = Field(
        default=None, description="The frames the policy picked (set when resolved)."
    )
    sampled_with: str | None = Field(
        default=None, description="The label of the policy `frames` were sampled with."
    )
    decoder: str | None = Field(
        default=None, description="The decoding library and version that decoded `frames`."
    )
    alternates: dict[str, list[VideoFrame]] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The frames other policies of the run picked, by policy label (a run "
        "sweeping policies, ``--frames 8,16,32``); `under` gives the clip under one.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> VideoRef:
        if (self.path is None) == (self.url is None):
            raise ValueError("a video takes exactly one of path and url")
        if self.url is not None and not re.match(r"https?://", self.url):
            raise ValueError(f"url: {self.url!r} is not an http(s) URL")
        for name in ("start", "end"):
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                raise ValueError(f"{name}: must be a finite number of seconds")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError(f"end: {self.end:g} s is not after start {self.start:g} s")
        if self.frames is not None and len(self.frames) > MAX_IMAGES_PER_SAMPLE:
            raise ValueError(f"frames: more than {MAX_IMAGES_PER_SAMPLE:,}")
        return self

    @property
    def source(self) -> str:
        """The file path or URL, as given."""
        src = self.path if self.path is not None else self.url
        assert src is not None
        return src

    def resolved(self, override: FramePolicy | None = None) -> VideoRef:
        """The clip with its frames decoded under `override`, else its own policy, else frames=8.

        Args:
            override: The run's policy (``--frames``), which wins over the clip's own.

        Raises:
            VideoError: The video cannot be read, holds no video stream, or a sampled frame
                cannot be decoded (the message names the file and what failed).
            ImportError: PyAV is not installed (with the command that installs it).

        """
        from lmmprobe.schema import _video_decode  # PyAV is imported only when a video is

        policy = override or self.policy or FramePolicy.parse(DEFAULT_POLICY_TEXT)
        source = self.source
        with _video_decode.open_video(source, max_image_pixels()) as video:
            duration = video.duration
            first = 0.0 if self.start is None else self.start
            if first >= duration:
                raise _video_decode.VideoError(
                    f"video {source}: start {first:g} s is past its end ({duration:g} s)"
                )
            last = duration if self.end is None else min(self.end, duration)
            try:
                if policy.by_index:
                    # A reference sampler's frame i is the frame shown at i / rate seconds.
                    rate = video.rate
                    picked = policy.indices(video.frame_count, rate, self.start, self.end)
                    times = [i / rate for i in picked]
                else:
                    times = policy.times(first, last)
            except ValueError as exc:
                raise _video_decode.VideoError(f"video {source}: {exc}") from None
            frames = []
            for t in times:  # one seek and one frame's pixels at a time
                shown, image = video.frame_at(t)
                frames.append(VideoFrame(time=shown, sha256=pixel_hash(image)))
        return self.model_copy(
            update={
                "frames": frames,
                "sampled_with": policy.label,
                "decoder": _video_decode.decoder_version(),
            }
        )

    def under(self, label: str) -> VideoRef:
        """The clip with the frames policy `label` picked (its own, or an alternate's).

        Raises:
            KeyError: No frames were sampled under `label`.

        """
        if label == self.sampled_with:
            return self
        if not self.alternates or label not in self.alternates:
            raise KeyError(f"video {self.source}: no frames sampled under {label}")
        return self.model_copy(update={"frames": self.alternates[label], "sampled_with": label})

    def strips(self) -> list[FrameStrip]:
        """The frames each policy of the run picked: its own first, then the alternates.

        Empty when the reference was never resolved (no frames were sampled).
        """
        if self.frames is None:
            return []
        first = FrameStrip(self.sampled_with or "", list(self.frames))
        return [first, *(FrameStrip(k, list(v)) for k, v in (self.alternates or {}).items())]

    def frame_images(self) -> list[ImageRef]:
        """The resolved frames as images, in time order, each named by its pixel hash.

        Raises:
            ValueError: The reference is not resolved.

        """
        if self.frames is None:
            raise ValueError(f"video {self.source}: its frames were not sampled (not resolved)")
        return [ImageRef.from_video_frame(self.source, f.time, f.sha256) for f in self.frames]


class FrameStrip(NamedTuple):
    """The frames one frame policy picked from a clip, in time order (what a model was shown)."""

    policy: str
    """The policy's label (`FramePolicy.label`), as the sample recorded it."""
    frames: list[VideoFrame]


def policy_text(label: str) -> str:
    """A policy label as a page names it: ``frames=8``, ``fps=1, max 32`` (else as given)."""
    try:
        policy = FramePolicy.parse(label)
    except ValueError:
        return label
    if policy.kind == "frames":
        return policy.label
    return f"fps={policy.fps:g}, max {policy.max_frames}"


def time_text(time: float) -> str:
    """A frame's time as a page labels it: ``t=1.25 s`` (to the millisecond, no trailing 0s)."""
    text = f"{time:.3f}".rstrip("0").rstrip(".")
    return f"t={'0' if text in ('', '-0') else text} s"


def video_name(source: str) -> str:
    """The file name of a video path, or the URL as given (what a page names a video by)."""
    if re.match(r"https?://", source):
        return source
    return PurePath(source).name or source


def missing_video(source: str) -> str | None:
    """Why a video's frames cannot be shown, known without decoding; None: try decoding.

    A path that is gone (moved or deleted) or is no longer a regular file (a FIFO would hold
    a decoder forever) is refused here; a URL is decoded (its answer is bounded in time).
    """
    if re.match(r"https?://", source):
        return None
    name = video_name(source)
    try:
        st = os.stat(source)
    except OSError:
        return (
            f"The video file {name} is not where the run read it (moved or deleted): the "
            "frames the model was given cannot be shown."
        )
    if not stat.S_ISREG(st.st_mode):
        return f"{name} is no longer a regular video file: its frames are not shown."
    return None


def frame_problem(exc: BaseException, time: float, *, detail: bool = True) -> str:
    """Why the frame at `time` is not shown, from the error decoding it raised.

    Args:
        exc: What `ImageRef.thumbnail` (or `load`) of the frame raised.
        time: The frame's recorded time.
        detail: Name the decoder's reason (a page served to others leaves it to the log).

    """
    at = time_text(time)
    if isinstance(exc, FrameChanged):
        return (
            f"The frame at {at} is not the one the model was given (the video file changed "
            "since the run): it is not shown."
        )
    why = f" ({_first_line(exc)})" if detail else ""
    return f"The frame at {at} cannot be decoded now{why}: it is not shown."


def changed_frames_text(times: list[float], total: int) -> str:
    """One sentence naming the frames (of `total`) whose pixels are no longer the recorded ones.

    Such frames are never shown: what the video holds there now is not what the model saw.
    """
    why = "the video file changed since the run"
    if len(times) == 1:
        return f"The frame at {time_text(times[0])} is not the one the model was given ({why}): it is not shown."
    if len(times) == total:
        return f"None of the {total} frames is the one the model was given ({why}): they are not shown."
    at = ", ".join(time_text(t) for t in times)
    return (
        f"The frames at {at} are not the ones the model was given ({why}): they are not "
        "shown; the other frames are."
    )


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
