"""The sample browser's data: thumbnails, questions, options, every model's raw answer.

The page paginates in its own script over one embedded JSON blob, so thousands of samples cost
file size but no page weight until shown. Thumbnails are downscaled (96 px on the long side by
default), encoded as WebP (JPEG where Pillow lacks WebP) data URIs, and stored once per image
content hash however many samples and scenarios show the same picture.

A click on a thumbnail opens the picture large. The large pictures are embedded too (the page
fetches nothing): the file itself when it is a PNG, JPEG, WebP or GIF of at most `FULL_PX` px
and `FULL_MAX_BYTES`, else a WebP copy downscaled to `FULL_PX`, in sample order until
`FULL_BUDGET` bytes are used; past the budget the page enlarges the thumbnail and names the file.

A sample about a video shows a strip of the frames its model was given, as the run recorded
them (`lmmprobe.report._collect.ReportData.videos`: each frame's time and pixel hash, one strip
per frame policy): each frame is decoded again from the video and shown only when its pixels
hash to the recorded hash. A video file that moved, or a frame that is no longer the one the
model saw, is named in the strip instead of a picture (`lmmprobe.schema.video.frame_problem`).
Decoding is bounded: a strip shows at most `STRIP_FRAMES` of its frames, evenly spaced (the
first and the last among them; the caption gives both counts), and a report decodes at most
`FRAME_BUDGET` frames in all; frames past it are named as not decoded, in sample order.
The frames are decoded ahead of the page by `FRAME_WORKERS` threads, one video at a time each,
opening it once and decoding its frames in one pass in time order (`_FramesAhead`,
`lmmprobe.schema.image.load_video_frames`); a frame that pass does not give with its recorded
hash is loaded alone, as without them, so the page is byte for byte the same either way
(``benchmarks/report_frames.py`` measures both).

Free-form answers (``question_type: free_form``) are never right or wrong; each gets its
lmmprobe free-form score (embedding similarity × 100, `lmmprobe.metrics.embedding`) when the
embedding model can be loaded.
"""

from __future__ import annotations

import base64
import contextvars
import io
import logging
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image, features

from lmmprobe.metrics.outcome import row_outcome
from lmmprobe.parse.thinking import split_answer, tags_for_model
from lmmprobe.report._collect import Entry, RawAnswer, ReportData
from lmmprobe.schema import ImageRef, Sample, Score, VideoRef
from lmmprobe.schema.image import FrameChanged, load_video_frames
from lmmprobe.schema.video import (
    changed_frames_text,
    frame_problem,
    missing_video,
    policy_text,
    time_text,
    video_name,
)

log = logging.getLogger(__name__)

THUMB_PX = 96
"""Longest side of a sample thumbnail, in pixels."""

MAX_TEXT = 2000
"""Characters of a raw answer or question kept in the page; longer ones are cut with a note."""
MAX_THINKING = 4000
"""Characters of an answer's thinking kept in the page (collapsed under the answer)."""

STRIP_FRAMES = 16
"""The most frames one strip shows (decodes): more are thinned to this many, evenly spaced."""
FRAME_BUDGET = 2000
"""The most video frames one report decodes; later strips name their frames as not decoded."""
FRAME_WORKERS = min(4, os.cpu_count() or 1)
"""Threads decoding videos' frames for the strips ahead of the page (each opens one video)."""

_META_TEXT = 300

FULL_PX = 1024
"""Longest side of a picture opened from its thumbnail; larger ones are downscaled."""

FULL_MAX_BYTES = 300_000
"""A picture file up to this size (and `FULL_PX`) is embedded as it is, without re-encoding."""

FULL_BUDGET = 5_000_000
"""Bytes of large pictures a page embeds at most (the first samples' pictures first)."""

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def _webp() -> bool:
    try:
        return bool(features.check("webp"))
    except Exception:  # an odd Pillow build: fall back to JPEG rather than fail the report
        return False


_FORMAT = ("WEBP", "image/webp") if _webp() else ("JPEG", "image/jpeg")


def thumbnail_uri(image: Image.Image, max_px: int = THUMB_PX, quality: int = 65) -> str:
    """A small data URI of a picture.

    Args:
        image: Any Pillow image (transparent parts are shown on white).
        max_px: Longest side of the thumbnail; smaller pictures keep their size.
        quality: Encoder quality (0-100).

    Returns:
        ``data:image/webp;base64,...`` (or ``image/jpeg`` where Pillow lacks WebP).

    """
    im = image
    if im.mode in ("RGBA", "LA", "P"):
        im = im.convert("RGBA")
        flat = Image.new("RGB", im.size, (255, 255, 255))
        flat.paste(im, mask=im.getchannel("A"))
        im = flat
    elif im.mode != "RGB":
        im = im.convert("RGB")
    if max(im.size) > max_px:
        im = im.copy() if im is image else im
        im.thumbnail((max_px, max_px), Image.Resampling.BILINEAR, reducing_gap=2.0)
    buf = io.BytesIO()
    fmt, mime = _FORMAT
    # WebP method 2 of 0-6: half the encoding time of the default for a few percent in size.
    extra = {"method": 2} if fmt == "WEBP" else {"optimize": True}
    im.save(buf, format=fmt, quality=quality, **extra)
    return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode('ascii')}"


def _load_small(ref: ImageRef, max_px: int) -> Image.Image:
    """The picture no larger than `max_px` a side (`ImageRef.thumbnail`: under the pixel cap)."""
    return ref.thumbnail(max_px)


def _cut(text: str | None, limit: int = MAX_TEXT) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f" … [{len(text) - limit} more characters]"


def _meta_line(metadata: dict[str, Any]) -> str:
    # Scalars, and lists of them (MathVista's skills: a `--by` list value puts the row in
    # each item's group, so the browser's search finds it by any item); other nested values
    # (a print attack's parameters) would swamp the line.
    scalar = str | int | float
    parts = [
        f"{k}: {', '.join(str(x) for x in v) if isinstance(v, list) else v}"
        for k, v in metadata.items()
        if isinstance(v, scalar)
        or (isinstance(v, list) and v and all(isinstance(x, scalar) for x in v))
    ]
    return _cut(" · ".join(parts), _META_TEXT) or ""


def _mime(data: bytes) -> str | None:
    """The image type of `data` from its first bytes (never from a file name or a claim)."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _raw_bytes(ref: ImageRef) -> bytes | None:
    if ref.path is not None:
        path = Path(ref.path)
        if path.stat().st_size > FULL_MAX_BYTES:
            return None
        return path.read_bytes()
    if ref.data_b64 is not None:
        return base64.b64decode(ref.data_b64)
    return None


def full_uri(ref: ImageRef, max_px: int = FULL_PX) -> str:
    """The picture as a data URI for the enlarged view.

    The file goes in as it is when it is a PNG, JPEG, WebP or GIF (recognised by its first
    bytes) of at most `max_px` px and `FULL_MAX_BYTES`; anything else is decoded and re-encoded
    as WebP (JPEG) at most `max_px` px on its long side.
    """
    raw = _raw_bytes(ref)
    if raw is not None and len(raw) <= FULL_MAX_BYTES and (mime := _mime(raw)):
        with Image.open(io.BytesIO(raw)) as im:
            small = max(im.size) <= max_px
        if small:
            return f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"
    return thumbnail_uri(_load_small(ref, max_px), max_px, quality=80)


_NOT_ENCODED = object()
"""A frame's large picture was not encoded ahead (the page had spent its budget by then)."""


@dataclass
class _Decoded:
    """One frame decoded ahead: its thumbnail and large picture, or why either failed."""

    thumb: str | None = None
    full: object = _NOT_ENCODED  # str, None (its encoding failed) or _NOT_ENCODED
    failed: OSError | ValueError | None = None
    """`ImageRef.load`'s error (raised where the page would have loaded the frame)."""
    thumb_failed: OSError | ValueError | None = None


_FrameKey = tuple[str, float, str]
"""(video, time, recorded pixel hash): one frame of the strips."""


class _FramesAhead:
    """The strips' frames decoded ahead of the page by a few threads, one task per video.

    The page's frames are planned in sample order as if every one decodes (each new pixel
    hash once, up to the frame budget); the videos are decoded in that order, at most
    `window` videos ahead of the page, each opened once (`load_video_frames`). The page still
    walks its samples in order and takes each frame from here (`take`), so what it shows,
    its budget and its notes are the same as when it decoded each frame itself; a frame not
    planned (a strip that failed earlier left budget for later ones) it decodes itself.
    """

    def __init__(
        self,
        plan: dict[str, list[ImageRef]],
        *,
        max_px: int,
        full_left: Callable[[], int],
        workers: int = FRAME_WORKERS,
    ) -> None:
        """Decode `plan` (video → its frames, in first-needed order) on `workers` threads.

        Args:
            plan: The frames to decode ahead, by video, videos in the order the page needs them.
            max_px: The thumbnails' longest side.
            full_left: Bytes of large pictures the page may still embed (read by the threads:
                a frame is given no large picture once the page and the frames decoded ahead
                of it have spent them; the page encodes one itself if it turns out to want it).
            workers: Threads; the window is twice as many videos.

        """
        self._videos = list(plan.items())
        self._where = {video: k for k, (video, _) in enumerate(self._videos)}
        self._max_px = max_px
        self._full_left = full_left
        self._pending_full = 0  # bytes of large pictures encoded ahead and not yet taken
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="lmmprobe-frames")
        self._window = 2 * workers
        self._futures: dict[int, Future[dict[_FrameKey, _Decoded]]] = {}
        self._submitted = 0

    def close(self) -> None:
        """Stop the threads; videos not started are not decoded."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def take(self, ref: ImageRef) -> _Decoded | None:
        """`ref`'s frame as decoded ahead, or None when it was not planned."""
        at = self._where.get(ref.video or "")
        if at is None:
            return None
        self._submit_through(at + self._window)
        future = self._futures.get(at)
        if future is None:  # every frame decoded ahead of this video was taken already
            return None
        done = future.result()
        got = done.pop((ref.video or "", ref.video_time or 0.0, ref.content_hash()), None)
        if not done:
            del self._futures[at]  # what was decoded ahead is not kept once taken
        if got is not None and isinstance(got.full, str):
            with self._lock:
                self._pending_full -= len(got.full)
        return got

    def _submit_through(self, last: int) -> None:
        while self._submitted <= min(last, len(self._videos) - 1):
            k = self._submitted
            # In a copy of the page's context: settings read once for it hold in the threads.
            context = contextvars.copy_context()
            video, refs = self._videos[k]
            self._futures[k] = self._pool.submit(context.run, self._decode, video, refs)
            self._submitted += 1

    def _wants_full(self) -> bool:
        with self._lock:
            return self._pending_full < self._full_left()

    def _decode(self, video: str, refs: list[ImageRef]) -> dict[_FrameKey, _Decoded]:
        out: dict[_FrameKey, _Decoded] = {}
        for ref, got in zip(refs, load_video_frames(video, refs), strict=True):
            key = (video, ref.video_time or 0.0, ref.content_hash())
            if not isinstance(got, Image.Image):
                out[key] = _Decoded(failed=got)
                continue
            done = out[key] = _Decoded()
            try:
                done.thumb = thumbnail_uri(got, self._max_px)
            except (OSError, ValueError) as exc:
                done.thumb_failed = exc
                continue
            if self._wants_full():
                try:
                    done.full = thumbnail_uri(got, FULL_PX, quality=80)
                except (OSError, ValueError) as exc:
                    log.debug("large picture skipped: %s", exc)
                    done.full = None
                else:
                    with self._lock:
                        self._pending_full += len(done.full)
        return out


@dataclass
class _Thumbs:
    max_px: int
    budget: int = FULL_BUDGET
    uris: list[str] = field(default_factory=list)
    full: list[str | None] = field(default_factory=list)
    names: list[str | None] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    failed: int = 0
    failed_frames: int = 0
    spent: int = 0
    strip_frames: int = STRIP_FRAMES
    frame_budget: int = FRAME_BUDGET
    decoded_frames: int = 0
    undecoded_frames: int = 0
    ahead: _FramesAhead | None = None

    def _full(
        self, ref: ImageRef, image: Image.Image | None = None, encoded: object = _NOT_ENCODED
    ) -> str | None:
        if self.spent >= self.budget:
            return None
        if encoded is None:  # encoding it ahead failed
            return None
        try:
            if isinstance(encoded, str):
                uri = encoded
            else:
                if image is None and ref.video is not None:
                    image = ref.load()  # a frame decoded ahead without its large picture
                # A frame already decoded is encoded from its pixels (decoding it is the cost).
                uri = full_uri(ref) if image is None else thumbnail_uri(image, FULL_PX, quality=80)
        except (OSError, ValueError) as exc:  # the thumbnail is still shown
            log.debug("large picture skipped: %s", exc)
            return None
        if self.spent + len(uri) > self.budget:
            self.spent = self.budget  # keep sample order: no later picture jumps the queue
            return None
        self.spent += len(uri)
        return uri

    def add_frame(self, ref: ImageRef, name: str) -> int:
        """The index of a video frame's thumbnail, decoding it when it is not shown yet.

        Raises:
            FrameChanged: The frame decoded now is not the one recorded (its hash differs).
            OSError: The video cannot be read or the frame decoded.

        """
        digest = ref.content_hash()  # the recorded pixel hash: nothing is decoded for it
        if digest not in self.index:
            self.decoded_frames += 1  # a failed decode is spent too
            ready = self.ahead.take(ref) if self.ahead is not None else None
            if ready is None:
                image = ref.load()  # checked against the recorded hash
                self.index[digest] = len(self.uris)
                self.uris.append(thumbnail_uri(image, self.max_px))
                self.full.append(self._full(ref, image))
            else:  # the same steps, from the frame decoded ahead (`_FramesAhead`)
                if ready.failed is not None:
                    raise ready.failed
                self.index[digest] = len(self.uris)
                if ready.thumb_failed is not None or ready.thumb is None:
                    raise ready.thumb_failed or ValueError("no thumbnail")
                self.uris.append(ready.thumb)
                self.full.append(self._full(ref, encoded=ready.full))
            self.names.append(name)
        return self.index[digest]

    def plan_frames(self, videos: Iterable[VideoRef]) -> dict[str, list[ImageRef]]:
        """The frames `add_video` would decode for `videos` (in order) if every one decodes.

        Each new pixel hash once, up to `frame_budget`, by video in the order first needed;
        a video that is not where the run read it is left out (nothing of it is decoded).
        """
        plan: dict[str, list[ImageRef]] = {}
        seen: set[str] = set()
        for video in videos:
            if missing_video(video.source) is not None:
                continue
            for strip in video.strips():
                ordered = sorted(strip.frames, key=lambda f: f.time)
                for frame in spread(ordered, self.strip_frames):
                    if len(seen) >= self.frame_budget:
                        return plan
                    if frame.sha256 not in seen:
                        seen.add(frame.sha256)
                        ref = ImageRef.from_video_frame(video.source, frame.time, frame.sha256)
                        plan.setdefault(video.source, []).append(ref)
        return plan

    def add_video(self, video: VideoRef) -> list[dict[str, Any]]:
        """One strip per frame policy the run sampled `video` with, frames in time order.

        Each strip: ``policy`` (as a page names it), ``name`` (the video's file name),
        ``total`` (how many frames the model was given), ``frames`` (the ones shown: all of
        them, or `strip_frames` evenly spaced; ``[thumbnail index or None, "t=1.25 s",
        gap]``, the gap ``"changed"`` when the frame decoded now is not the one recorded,
        ``"missing"`` when it could not be decoded, ``"budget"`` when the report had decoded
        `frame_budget` frames before it, else None) and ``problems`` (sentences saying why
        frames are not shown). A video that cannot be read stops its strip at the first
        failure: the other frames would fail alike.
        """
        name = video_name(video.source)
        gone = missing_video(video.source)
        out = []
        for strip in video.strips():
            frames: list[list[Any]] = []
            problem = gone
            changed: list[float] = []
            ordered = sorted(strip.frames, key=lambda f: f.time)
            for frame in spread(ordered, self.strip_frames):
                label = time_text(frame.time)
                if problem is None and self.decoded_frames >= self.frame_budget:
                    self.undecoded_frames += 1
                    frames.append([None, label, "budget"])
                    continue
                if problem is None:
                    ref = ImageRef.from_video_frame(video.source, frame.time, frame.sha256)
                    try:
                        frames.append([self.add_frame(ref, name), label, None])
                        continue
                    except FrameChanged:
                        changed.append(frame.time)
                        frames.append([None, label, "changed"])
                        continue
                    except (OSError, ValueError) as exc:
                        problem = frame_problem(exc, frame.time)
                frames.append([None, label, "missing"])
            self.failed_frames += sum(1 for f in frames if f[2] in ("changed", "missing"))
            problems = [problem] if problem is not None else []
            if changed:
                problems.append(changed_frames_text(changed, len(ordered)))
            out.append(
                {
                    "policy": policy_text(strip.policy),
                    "name": name,
                    "total": len(ordered),
                    "frames": frames,
                    "problems": problems,
                }
            )
        return out

    def add(self, sample: Sample) -> list[int]:
        out = []
        for ref in sample.images:
            try:
                digest = ref.content_hash()
                if digest not in self.index:
                    uri = thumbnail_uri(_load_small(ref, self.max_px), self.max_px)
                    self.index[digest] = len(self.uris)
                    self.uris.append(uri)
                    self.full.append(self._full(ref))
                    self.names.append(Path(ref.path).name if ref.path else None)
                out.append(self.index[digest])
            except (OSError, ValueError, KeyError) as exc:
                self.failed += 1
                log.debug("thumbnail of %s skipped: %s", sample.id, exc)
        return out


def spread(items: list[Any], most: int) -> list[Any]:
    """`items` thinned to `most`, evenly spaced, the first and the last kept; or all of them.

    How a strip's frames are chosen to show, in the report and in ``lmmprobe serve``.
    """
    n = len(items)
    if n <= most:
        return items
    if most == 1:
        return items[:1]
    return [items[round(k * (n - 1) / (most - 1))] for k in range(most)]


def _freeform_values(
    entries: list[Entry], warnings: list[str]
) -> dict[tuple[int, str, int], float]:
    """Per-answer free-form scores, by (entry index, sample id, repeat); {} without the model."""
    from lmmprobe.metrics.freeform import freeform_rows

    rows = [(i, s) for i, e in enumerate(entries) for s in freeform_rows(e.scores)]
    if not rows:
        return {}
    texts = [(s.prediction_text or "").strip() for _, s in rows]
    refs = [s.gold[0] if isinstance(s.gold, list) and s.gold else s.gold_text for _, s in rows]
    asked = [k for k, t in enumerate(texts) if t]
    try:
        from lmmprobe.metrics.embedding import freeform_scores

        sims = freeform_scores([texts[k] for k in asked], [refs[k] for k in asked])
    except Exception as exc:  # torch or the model files missing: the answers still show
        warnings.append(f"free-form answers are shown without their scores: {exc}")
        return {}
    values = [0.0] * len(rows)  # an empty answer describes nothing: 0, as the run scores it
    for k, v in zip(asked, sims, strict=True):
        values[k] = v
    return {(i, s.sample_id, s.repeat): v for (i, s), v in zip(rows, values, strict=True)}


def _sample_order(data: ReportData, spec: str, entries: list[Entry]) -> list[str]:
    seen: dict[str, None] = {}
    asked = {s.sample_id for e in entries for s in e.scores}
    for sid in data.samples.get(spec, {}):
        if sid in asked:
            seen[sid] = None
    for e in entries:
        for s in e.scores:
            seen.setdefault(s.sample_id, None)
    return list(seen)


def _thinking(model: str, raw: RawAnswer | None) -> tuple[str | None, str | None]:
    """(thinking, answer as read) of an output that has thinking; (None, None) otherwise."""
    if raw is None or (raw.text is None and raw.reasoning is None):
        return None, None
    try:
        tags = tags_for_model(model)
    except ValueError:  # a think= value the run itself refused: show the raw text only
        return None, None
    thought = split_answer(
        raw.text, reasoning=raw.reasoning, finish_reason=raw.finish_reason, tags=tags
    )
    if thought.reasoning is None and not thought.truncated:
        return None, None
    return _cut(thought.reasoning or "", MAX_THINKING), thought.answer


def _answers(
    entries: Iterable[tuple[int, Entry, dict[str, list[Score]]]],
    sid: str,
    freeform: dict[tuple[int, str, int], float],
) -> list[list[Any]]:
    out: list[list[Any]] = []
    for idx, entry, by_sample in entries:
        for s in by_sample.get(sid, ()):
            raw = entry.raw.get((sid, s.repeat))
            thinking, answer = _thinking(entry.model, raw)
            error = None
            if s.error_type:
                msg = raw.error_message if raw else None
                error = f"{s.error_type}: {msg}" if msg else s.error_type
            out.append(
                [
                    idx,
                    s.repeat,
                    _cut(raw.text if raw else None),
                    # An empty caption is stored as unparsed but has no verdict: "empty" here,
                    # as every count names it (`lmmprobe.metrics.outcome`).
                    "empty" if row_outcome(s) == "empty" else s.stage,
                    _cut(s.prediction_text, 300),
                    None if s.correct is None else int(s.correct),
                    _cut(error, 500),
                    None if (v := freeform.get((idx, sid, s.repeat))) is None else round(v, 1),
                    thinking,
                    None if answer is None else _cut(answer),
                ]
            )
    return out


def _items(
    data: ReportData,
    order: list[tuple[int, str, list[tuple[int, Entry, dict[str, list[Score]]]], str]],
    thumbs: _Thumbs,
    freeform: dict[tuple[int, str, int], float],
) -> list[dict[str, Any]]:
    """The browser's items, one per (data index, data spec, its entries, sample id) of `order`."""
    items: list[dict[str, Any]] = []
    for d_index, spec, group, sid in order:
        sample = data.samples.get(spec, {}).get(sid)
        question: str | None
        first = next(s for _, _, b in group for s in b.get(sid, ())[:1])
        if sample is not None:
            question, ctx = sample.question, sample.context
            opts, gold = sample.choices, sample.gold_text
            goldi = sample.answer if isinstance(sample.answer, int) else None
            img = thumbs.add(sample)
        else:
            # The source is gone: the stored prompt (question with options) stands in.
            raw = next(
                (
                    r
                    for _, e, _ in group
                    for r in [e.raw.get((sid, first.repeat))]
                    if r is not None and r.prompt
                ),
                None,
            )
            question = raw.prompt if raw else sid
            ctx, opts, gold, goldi, img = None, None, first.gold_text, None, []
        recorded = data.videos.get(spec, {}).get(sid, [])
        strips = [strip for video in recorded for strip in thumbs.add_video(video)]
        items.append(
            {
                "id": sid,
                "data": d_index,
                "img": img,
                "video": strips or None,
                "q": _cut(question),
                "ctx": _cut(ctx),
                "opts": [_cut(o, 300) for o in opts] if opts else None,
                "gold": _cut(gold, 300),
                "goldi": goldi,
                "meta": _meta_line(first.metadata),
                "ans": _answers(group, sid, freeform),
            }
        )
    return items


def browser_payload(
    data: ReportData,
    *,
    max_px: int = THUMB_PX,
    names: dict[str, str] | None = None,
    data_names: dict[str, str] | None = None,
    full_budget: int = FULL_BUDGET,
    frame_budget: int = FRAME_BUDGET,
    frame_workers: int = FRAME_WORKERS,
) -> dict[str, Any]:
    """The sample browser's JSON: entry names, thumbnails, large pictures, one item per sample.

    Args:
        data: Runs and reloaded samples.
        max_px: Longest thumbnail side.
        names: Entry label → the name the page shows (default: the label).
        data_names: Data spec → the name the page shows (default: the spec).
        full_budget: Bytes of large pictures to embed at most (`FULL_BUDGET`).
        frame_budget: Video frames to decode for the strips at most (`FRAME_BUDGET`).
        frame_workers: Threads decoding the strips' videos ahead of the page
            (`FRAME_WORKERS`); 0 decodes each frame alone where the page shows it (one open
            and one seek per frame: the page is the same either way).

    Returns:
        ``{"entries": [name...], "data": [data spec...], "thumbs": [data URI...],
        "full": [data URI or null...], "files": [file name or null...], "items": [...],
        "answer_fields": [...]}``. ``full[k]`` and ``files[k]`` belong to ``thumbs[k]``. Each
        item has ``id``, ``data`` (index of its data spec), ``img`` (thumbnail indices), ``q``
        (question), ``ctx`` (context), ``opts`` (options in their original order), ``gold``
        (text), ``goldi`` (its option index), ``video`` (the strips of frames the models were
        given, `_Thumbs.add_video`, or null), ``meta`` (one line of metadata) and ``ans`` (one
        list per model and repeat, fields as ``answer_fields`` names them; ``score`` is the
        free-form score of a free-form answer, else null; ``thinking`` and ``answer`` are the
        thinking and the answer as read of an output that has thinking, else null).

    """
    names = names or {}
    labels = [names.get(e.label, e.label) for e in data.entries]
    thumbs = _Thumbs(max_px, budget=full_budget, frame_budget=frame_budget)
    freeform = _freeform_values(data.entries, data.warnings)
    specs: dict[str, list[tuple[int, Entry, dict[str, list[Score]]]]] = {}
    for i, e in enumerate(data.entries):
        if not e.scores:
            continue
        by_sample: dict[str, list[Score]] = {}
        for s in e.scores:
            by_sample.setdefault(s.sample_id, []).append(s)
        specs.setdefault(e.run.data, []).append((i, e, by_sample))
    order = [
        (d_index, spec, group, sid)
        for d_index, (spec, group) in enumerate(specs.items())
        for sid in _sample_order(data, spec, [e for _, e, _ in group])
    ]
    plan = thumbs.plan_frames(
        video for _, spec, _, sid in order for video in data.videos.get(spec, {}).get(sid, [])
    )
    if plan and frame_workers > 0:
        thumbs.ahead = _FramesAhead(
            plan,
            max_px=max_px,
            full_left=lambda: thumbs.budget - thumbs.spent,
            workers=frame_workers,
        )
    try:
        items = _items(data, order, thumbs, freeform)
    finally:
        if thumbs.ahead is not None:
            thumbs.ahead.close()
    if thumbs.failed:
        data.warnings.append(f"{thumbs.failed} sample image(s) could not be read for thumbnails")
    if thumbs.failed_frames:
        data.warnings.append(
            f"{thumbs.failed_frames} video frame(s) the models were given cannot be shown (the "
            "video moved or changed since the run): the sample browser names each"
        )
    if thumbs.undecoded_frames:
        data.warnings.append(
            f"{thumbs.undecoded_frames} video frame(s) are not shown: a report decodes at most "
            f"{thumbs.frame_budget} (the sample browser names each)"
        )
    return {
        "entries": labels,
        "data": [(data_names or {}).get(spec, spec) for spec in specs],
        "thumbs": thumbs.uris,
        "full": thumbs.full,
        "files": thumbs.names,
        "items": items,
        "answer_fields": [
            "entry",
            "repeat",
            "raw",
            "stage",
            "prediction",
            "correct",
            "error",
            "score",
            "thinking",
            "answer",
        ],
    }
