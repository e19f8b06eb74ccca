"""``/frames/{run}/{sample}/{index}``: the video frames a sample's model was given.

A sample about a video records, for each frame policy the run sampled it with, each frame's
time and pixel hash (`lmmprobe.schema.video.VideoRef`). A page shows them as strips
(`strips`): thumbnails in time order, each labelled with its time, under the policy's name.
A client names a frame only by run, sample, strip (``?p=``) and position; the video file and
the time come from the samples table, never from anything the client sends, so no request
can read a file the run did not use, as for the run's images (`lmmprobe.serve.images`).

Each frame is decoded again, one seek, from the recorded file, and sent only when its pixels
hash to the recorded hash (`lmmprobe.schema.image.ImageRef.from_video_frame`): a video that
changed since the run answers 404 "changed since the run", never another picture. A file
that is gone or is no longer a regular file (a FIFO would hold a decoder forever) is named on
the page without decoding. A video the run read from a URL is not fetched by the server (the
recorded URL would otherwise make the server reach wherever a data file pointed it).

Decodings are bounded in number at once (`DECODERS`) and each by the decoder's own pixel and
frame caps; a request that waits past `WAIT_S` gets a 503 "busy, try again". At most
`MAX_WAITING` requests wait at once; another is answered 503 at once: a waiting request holds
one of the server's worker threads, which every page needs too, so many frame requests must
not leave pages waiting.
"""

from __future__ import annotations

import io
import logging
import re
import threading
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from PIL import Image
from pydantic import ValidationError

from lmmprobe.report._browser import STRIP_FRAMES, spread
from lmmprobe.schema import ImageRef, VideoRef
from lmmprobe.schema.image import FrameChanged
from lmmprobe.schema.video import (
    missing_video,
    policy_text,
    time_text,
    video_name,
)
from lmmprobe.serve import _pages
from lmmprobe.store import queries

__all__ = [
    "DECODERS",
    "MAX_WAITING",
    "THUMB_PX",
    "WAIT_S",
    "frame_response",
    "router",
    "strips",
]

log = logging.getLogger(__name__)

router = APIRouter()

THUMB_PX = 160
"""Longest side of a frame's thumbnail in a strip, in pixels."""

DECODERS = 2
"""Frames decoded at once across the server (each holds one decoded frame's pixels)."""

WAIT_S = 10.0
"""How long a request waits for a decoder before its 503."""

MAX_WAITING = 8
"""Requests that may wait for a decoder at once (a browser asks for about six frames at a
time); another is answered 503 at once, so waiting requests never hold all the server's
worker threads (anyio's 40), which pages need too."""

_SLOTS = threading.BoundedSemaphore(DECODERS)
_WAITING = threading.BoundedSemaphore(MAX_WAITING)
_PLACE = re.compile(r"[0-9]{1,6}")
_CACHE = "private, max-age=3600"

CHANGED = (
    "this frame is not the one the model was given: the video file changed since the run, "
    "so it is not shown"
)
UNREADABLE = (
    "the run recorded this frame but the video cannot be read now (moved, deleted or "
    "damaged); the server's log says why"
)


def recorded_video(sample: dict[str, Any] | None) -> VideoRef | None:
    """The video a recorded sample asks about, with its frames; None when it has none."""
    video = (sample or {}).get("video")
    if not isinstance(video, dict):
        return None
    try:
        return VideoRef.model_validate(video)
    except ValidationError as exc:
        log.info("recorded video of sample %r unreadable: %s", (sample or {}).get("id"), exc)
        return None


def _is_url(source: str) -> bool:
    return re.match(r"https?://", source) is not None


def strips(sample: dict[str, Any] | None, base: str) -> list[dict[str, Any]]:
    """The strips a page shows for a recorded sample's video (none without one).

    Args:
        sample: The sample as the run recorded it.
        base: The URL the frames are served under (``/frames/{run}/{sample}``, or the
            arena's battle URL); a frame is ``{base}/{index}?p={strip}&size=thumb|full``.

    Returns:
        One dict per policy: ``policy`` (``frames=8``, ``fps=1, max 32``), ``name`` (the
        file name; the URL for a URL), ``problem`` (why no frame is shown, known without
        decoding, else None), ``total`` (how many frames the model was given) and
        ``frames``: ``{"label": "t=1.25 s", "thumb", "full"}`` in time order, all of them or
        `STRIP_FRAMES` evenly spaced as the report shows them (no URLs when the strip has a
        problem).

    """
    video = recorded_video(sample)
    if video is None:
        return []
    source = video.source
    if _is_url(source):
        problem: str | None = (
            "The run read this video from a URL: this server does not fetch it, so its "
            "frames are not shown here (the report of the run shows them)."
        )
    else:
        problem = missing_video(source)
    out = []
    for p, strip in enumerate(video.strips()):
        order = sorted(range(len(strip.frames)), key=lambda k: strip.frames[k].time)
        frames = []
        # At most the report's STRIP_FRAMES, chosen as the report chooses them: a strip of
        # 512 frames would otherwise ask for 512 thumbnails (most refused as decoders wait).
        for k in spread(order, STRIP_FRAMES):
            url = f"{base}/{k}?p={p}"
            frames.append(
                {
                    "label": time_text(strip.frames[k].time),
                    "thumb": None if problem else f"{url}&size=thumb",
                    "full": None if problem else f"{url}&size=full",
                }
            )
        out.append(
            {
                "policy": policy_text(strip.policy),
                "name": video_name(source),
                "problem": problem,
                "frames": frames,
                "total": len(strip.frames),
            }
        )
    return out


def _refuse(request: Request, status: int, detail: str, reason: str) -> Response:
    # A page's script asks for JSON to name why a frame is not shown; a browser opening the
    # frame gets the app's error page.
    if "application/json" in request.headers.get("accept", ""):
        return JSONResponse({"detail": detail, "reason": reason}, status_code=status)
    raise HTTPException(status, detail)


def _png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def _take_decoder() -> bool:
    """Take a decoder: at once if one is free, else waiting up to `WAIT_S` in the waiting room.

    False when the waiting room (`MAX_WAITING`) is full or the wait ran out: the caller's 503.
    """
    if _SLOTS.acquire(blocking=False):
        return True
    if not _WAITING.acquire(blocking=False):
        return False
    try:
        return _SLOTS.acquire(timeout=WAIT_S)
    finally:
        _WAITING.release()


def frame_response(
    request: Request, sample: dict[str, Any] | None, index: str, strip: str, size: str
) -> Response:
    """Frame `index` of strip `strip` of a recorded sample's video, as PNG (see the module).

    Args:
        request: The request (its ``Accept`` header picks a JSON or a page refusal).
        sample: The sample as the run recorded it (None: not recorded).
        index: The frame's position in the strip as recorded (digits).
        strip: The strip: 0 the run's first policy, then its others (digits).
        size: ``thumb`` (`THUMB_PX` on the long side) or ``full``.

    """
    if size not in ("thumb", "full"):
        raise _pages.not_found("no such frame size (thumb or full)")
    # ASCII digits only: str.isdigit takes "²", which int() refuses.
    if _PLACE.fullmatch(index) is None or _PLACE.fullmatch(strip) is None:
        raise _pages.not_found("no such frame")
    video = recorded_video(sample)
    found = video.strips() if video is not None else []
    if video is None or int(strip) >= len(found) or int(index) >= len(found[int(strip)].frames):
        raise _pages.not_found("no such frame")
    frame = found[int(strip)].frames[int(index)]
    if _is_url(video.source) or missing_video(video.source) is not None:
        return _refuse(request, 404, UNREADABLE, "unreadable")
    if not _take_decoder():
        raise HTTPException(
            503,
            "the server is decoding other video frames; try again in a moment",
            headers={"Retry-After": "5"},
        )
    try:
        ref = ImageRef.from_video_frame(video.source, frame.time, frame.sha256)
        image = ref.thumbnail(THUMB_PX) if size == "thumb" else ref.load()
        data = _png(image)
    except FrameChanged as exc:
        log.warning("frame not shown: %s", exc)
        return _refuse(request, 404, CHANGED, "changed")
    except (OSError, ValueError, MemoryError) as exc:
        # The reason may name a file: it goes to the server's log, not to the client.
        log.warning("frame %s at %s cannot be shown: %s", video.source, frame.time, exc)
        return _refuse(request, 404, UNREADABLE, "unreadable")
    finally:
        _SLOTS.release()
    return Response(data, media_type="image/png", headers={"Cache-Control": _CACHE})


@router.get("/frames/{run_id}/{sample_id:path}/{index}", include_in_schema=False)
def frame(
    request: Request, run_id: str, sample_id: str, index: str, p: str = "0", size: str = "thumb"
) -> Response:
    """A video frame a sample's model was given, by the references the run recorded."""
    with _pages.connection(request) as conn:
        sample = queries.get_sample(conn, run_id, sample_id)
    return frame_response(request, sample, index, p, size)
