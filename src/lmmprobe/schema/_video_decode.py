"""Decoding the frames a `FramePolicy` picks, through PyAV (FFmpeg), one seek per frame.

PyAV was chosen over torchcodec on this project's machines (``benchmarks/video_decode.py``
measures both): its wheels bundle FFmpeg, where torchcodec needs the system's FFmpeg
libraries and torch, and it decodes a sampled frame as fast. Each sampled time is reached by
seeking to the keyframe before it and decoding forward to the frame shown at that time, so a
long video is never decoded whole and only one frame's pixels are held at a time.

A frame is the last one whose presentation time is at or before the sampled time (the one a
player shows then); its time is recorded relative to the video stream's first timestamp.
This module imports nothing of lmmprobe's schema: `lmmprobe.schema.video` picks the times and
hashes the frames, `lmmprobe.schema.image` loads one frame again.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from time import monotonic
from typing import IO, TYPE_CHECKING, Any

from lmmprobe._file_kind import NotRegularFile, open_regular_file
from lmmprobe._optional import require

if TYPE_CHECKING:
    from PIL import Image

MAX_DECODED_PER_FRAME = 20_000
"""The most frames decoded from a keyframe to reach one sampled frame (13 minutes of 25 fps
video without a keyframe): a file that needs more is refused rather than decoded for hours."""

OPEN_TIMEOUT_S = 20.0
"""Seconds to wait for a video URL to answer."""
READ_TIMEOUT_S = 60.0
"""Seconds to wait for more data from a video URL once it answered."""


class VideoError(OSError):
    """A video cannot be sampled: unreadable, empty, no video stream, or a frame undecodable."""


def _av() -> Any:
    (av,) = require("av", extra="video", purpose="decoding video")
    return av


def decoder_version() -> str:
    """The decoding library and the FFmpeg it runs, e.g. ``PyAV 18.1.0 (FFmpeg 8.1.2)``."""
    av = _av()
    return f"PyAV {av.__version__} (FFmpeg {av.ffmpeg_version_info})"


class OpenVideo:
    """An open video's first video stream: its length, and the frame shown at a time."""

    def __init__(self, source: str, container: Any, stream: Any) -> None:
        """Wrap `container` (from `open_video`) and its video `stream`."""
        self.source = source
        self._container = container
        self._stream = stream

    @property
    def duration(self) -> float:
        """The video's length in seconds, from its stream, else from its container.

        Raises:
            VideoError: Neither states it.

        """
        stream, container = self._stream, self._container
        if stream.duration is not None and stream.time_base is not None and stream.duration > 0:
            return float(stream.duration * stream.time_base)
        if container.duration is not None and container.duration > 0:
            return float(container.duration) / 1_000_000  # AV_TIME_BASE: microseconds
        raise VideoError(f"video {self.source}: its duration is unknown")

    @property
    def rate(self) -> float:
        """The stream's average frame rate (frames per second), as decord's ``get_avg_fps``.

        Raises:
            VideoError: The stream states no rate.

        """
        rate = self._stream.average_rate or self._stream.guessed_rate
        if not rate or not float(rate) > 0:
            raise VideoError(f"video {self.source}: its frame rate is unknown")
        return float(rate)

    @property
    def frame_count(self) -> int:
        """The stream's frames: as its header states them, else its length times its rate.

        Raises:
            VideoError: Neither the count nor the length and rate are known.

        """
        stated = int(self._stream.frames or 0)
        if stated > 0:
            return stated
        return max(1, round(self.duration * self.rate))

    def frame_at(self, time: float) -> tuple[float, Image.Image]:
        """(presentation time, RGB picture) of the frame shown at `time` seconds.

        Raises:
            VideoError: It cannot be decoded (a truncated file), naming the video.

        """
        av = _av()
        try:
            return _frame_at(self.source, self._container, self._stream, time)
        except av.ExitError:  # PyAV's timeout cut the read (FFmpeg: "Immediate exit requested")
            raise VideoError(
                f"video {self.source}: the server did not send what was needed within "
                f"{READ_TIMEOUT_S:g} s (a slow or endless stream)"
            ) from None
        except (av.FFmpegError, ValueError, EOFError) as exc:
            raise VideoError(f"video {self.source}: cannot be decoded ({_reason(exc)})") from None

    def frames_in_order(self, times: Sequence[float]) -> Iterator[tuple[float, Image.Image]]:
        """(presentation time, RGB picture) of the frame shown at each of `times`, ascending.

        One pass over the stream: a time close after the previous one is reached by decoding
        on from there; a farther one (more frames away than twice what the last seek decoded,
        about a keyframe gap) by a seek, as `frame_at` reaches every time. The frame chosen
        is the one `frame_at` chooses when decoding from a keyframe gives the same pixels
        however far before it started (closed groups of pictures, intra-only and lossless
        codecs); a caller that must have exactly `frame_at`'s frame checks it (the report
        compares each with the hash sampling recorded).

        Raises:
            VideoError: A frame cannot be decoded (a truncated file), naming the video.
            ValueError: `times` are not in ascending order.

        """
        av = _av()
        try:
            yield from _frames_in_order(self.source, self._container, self._stream, times)
        except av.ExitError:  # PyAV's timeout cut the read (FFmpeg: "Immediate exit requested")
            raise VideoError(
                f"video {self.source}: the server did not send what was needed within "
                f"{READ_TIMEOUT_S:g} s (a slow or endless stream)"
            ) from None
        except (av.FFmpegError, EOFError) as exc:
            raise VideoError(f"video {self.source}: cannot be decoded ({_reason(exc)})") from None


@contextmanager
def open_video(source: str, max_pixels: int) -> Iterator[OpenVideo]:
    """Open `source` (a file or an http(s) URL) and its first video stream.

    Args:
        source: The file path or URL.
        max_pixels: The most pixels a frame may have (`lmmprobe.schema.image.max_image_pixels`).

    Raises:
        VideoError: The file is missing or empty, FFmpeg cannot read it, it holds no video
            stream, or its frames are over `max_pixels`; the message names `source`.
        ImportError: PyAV is not installed, with the command that installs it.

    """
    av = _av()
    is_url = source.startswith(("http://", "https://"))
    with contextlib.ExitStack() as stack:
        file: IO[bytes] | None = None
        if not is_url:
            # Opened non-blocking and checked once open, then given to FFmpeg as it is: a FIFO
            # (or a device, a folder) is named as what it is, never "empty", and a file swapped
            # for a FIFO after a check cannot hold the open forever (re-test 15 #8).
            try:
                file = stack.enter_context(
                    open_regular_file(source, "videos", shown=f"video {source}")
                )
            except NotRegularFile as exc:
                raise VideoError(str(exc)) from None
            except OSError as exc:
                raise VideoError(
                    f"video {source}: cannot be read ({exc.strerror or exc})"
                ) from None
            if os.fstat(file.fileno()).st_size == 0:
                raise VideoError(f"video {source}: the file is empty (0 bytes)")
        with _opened(av, source, file, is_url, max_pixels) as video:
            yield video


@contextmanager
def _opened(
    av: Any, source: str, file: IO[bytes] | None, is_url: bool, max_pixels: int
) -> Iterator[OpenVideo]:
    """`open_video` once a local file is open (`file`) or for a URL (`file` None)."""
    slow = f"video {source}: the server did not send enough to open it within {OPEN_TIMEOUT_S:g} s"
    opened = monotonic()
    try:
        container = av.open(
            source if file is None else file,
            timeout=(OPEN_TIMEOUT_S, READ_TIMEOUT_S) if is_url else None,
        )
    except av.ExitError:  # PyAV's timeout cut the open (FFmpeg: "Immediate exit requested")
        raise VideoError(slow) from None
    except (av.FFmpegError, OSError, ValueError, UnicodeDecodeError) as exc:
        if is_url and monotonic() - opened >= OPEN_TIMEOUT_S:  # cut off: too little to probe
            raise VideoError(slow) from None
        raise VideoError(f"video {source}: not a video FFmpeg can read ({_reason(exc)})") from None
    try:
        if not container.streams.video:
            # A URL cut off while FFmpeg probed it shows no stream: say why (re-test 13 #5).
            if is_url and monotonic() - opened >= OPEN_TIMEOUT_S:
                raise VideoError(slow)
            raise VideoError(f"video {source}: holds no video stream")
        stream = container.streams.video[0]
        # A damaged header can leave the stream with no codec FFmpeg could open.
        codec = stream.codec_context
        if codec is None:
            raise VideoError(f"video {source}: its video stream names no codec FFmpeg can open")
        width, height = codec.width, codec.height
        if width * height > max_pixels:
            raise VideoError(
                f"video {source}: its frames are {width}x{height}, more than the "
                f"{max_pixels / 1e6:,.0f} MP a picture may hold"
            )
        yield OpenVideo(source, container, stream)
    finally:
        container.close()


def _frame_at(source: str, container: Any, stream: Any, time: float) -> tuple[float, Image.Image]:
    """(presentation time, picture) of the frame shown at `time` seconds of `stream`."""
    base: Fraction = stream.time_base
    origin = stream.start_time or 0
    # Rounded to the nearest tick: a time recorded from a frame's own timestamp maps back to
    # exactly that timestamp, whatever the float's last bits.
    target = origin + round(Fraction(time) / base)
    container.seek(target, stream=stream, backward=True, any_frame=False)
    chosen = None
    ended = True  # no frame after the time was seen: the stream ended first
    for count, frame in enumerate(container.decode(stream), 1):
        if count > MAX_DECODED_PER_FRAME:
            raise VideoError(
                f"video {source}: more than {MAX_DECODED_PER_FRAME:,} frames decoded to reach "
                f"{time:g} s (keyframes too far apart)"
            )
        if frame.pts is None:
            continue
        if frame.pts > target:
            if chosen is None:  # the seek landed after the time (its first frame, say)
                chosen = frame
            ended = False
            break
        chosen = frame
    if chosen is None:
        raise VideoError(f"video {source}: no frame decodes at {time:g} s (a truncated file?)")
    shown = float((chosen.pts - origin) * base)
    if ended and time - shown > _frame_gap(stream):
        # The last frame decoded is far before the time the header says the video reaches:
        # the file was cut short. Its last frame is not what a player shows at that time.
        raise VideoError(
            f"video {source}: no frame decodes at {time:g} s, the last one is at {shown:g} s "
            "(a truncated file?)"
        )
    return (shown if math.isfinite(shown) else time), chosen.to_image()


def _frames_in_order(
    source: str, container: Any, stream: Any, times: Sequence[float]
) -> Iterator[tuple[float, Image.Image]]:
    """`OpenVideo.frames_in_order`: `_frame_at`'s choice for each time, decoding on where near."""
    base: Fraction = stream.time_base
    origin = stream.start_time or 0
    rate = stream.average_rate or stream.guessed_rate
    per_frame = float(1 / (Fraction(rate) * base)) if rate else 0.0  # ticks from frame to frame
    decoded: Iterator[Any] | None = None  # the decoder's frames since the last seek
    last: Any = None  # the frame chosen for the previous time
    ahead: Any = None  # the frame decoded past the previous time, not yet looked at
    reach = 1  # frames the last seek decoded to reach its time: about half a keyframe gap
    previous = -math.inf
    for time in times:
        if time < previous:
            raise ValueError("frames_in_order takes its times in ascending order")
        previous = time
        target = origin + round(Fraction(time) / base)
        near = decoded is not None and last is not None and last.pts <= target
        if not (near and target - last.pts <= 2 * reach * per_frame):
            container.seek(target, stream=stream, backward=True, any_frame=False)
            decoded, last, ahead = iter(container.decode(stream)), None, None
            seeked = True
        else:
            seeked = False
        assert decoded is not None
        chosen = last
        ended = True
        count = 0
        while (frame := ahead if ahead is not None else next(decoded, None)) is not None:
            ahead = None
            count += 1
            if count > MAX_DECODED_PER_FRAME:
                raise VideoError(
                    f"video {source}: more than {MAX_DECODED_PER_FRAME:,} frames decoded to "
                    f"reach {time:g} s (keyframes too far apart)"
                )
            if frame.pts is None:
                continue
            if frame.pts > target:
                if chosen is None:  # the seek landed after the time (its first frame, say)
                    chosen = frame
                ahead = frame
                ended = False
                break
            chosen = frame
        if seeked:
            reach = max(1, count)
        if chosen is None:
            raise VideoError(f"video {source}: no frame decodes at {time:g} s (a truncated file?)")
        shown = float((chosen.pts - origin) * base)
        if ended and time - shown > _frame_gap(stream):
            raise VideoError(
                f"video {source}: no frame decodes at {time:g} s, the last one is at {shown:g} s "
                "(a truncated file?)"
            )
        if ended or chosen.pts > target:
            decoded = None  # the next time seeks, as `_frame_at` would from here
        last = chosen
        yield (shown if math.isfinite(shown) else time), chosen.to_image()


def _frame_gap(stream: Any) -> float:
    """How far (seconds) before a time the last frame of a whole video may be: two frames."""
    rate = stream.average_rate or stream.guessed_rate
    return 2 / float(rate) if rate else 0.5


def _reason(exc: BaseException) -> str:
    # FFmpeg's own sentence without its errno and the file name (the message names it once).
    strerror = getattr(exc, "strerror", None)
    text = " ".join((strerror if isinstance(strerror, str) else str(exc)).split())
    return text[:300] or type(exc).__name__
