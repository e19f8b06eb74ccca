"""The sample browser's data: thumbnails, questions, options, every model's raw answer.

The page paginates in its own script over one embedded JSON blob, so thousands of samples cost
file size but no page weight until shown. Thumbnails are downscaled (96 px on the long side by
default), encoded as WebP (JPEG where Pillow lacks WebP) data URIs, and stored once per image
content hash however many samples and scenarios show the same picture.
"""

from __future__ import annotations

import base64
import io
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from PIL import Image, features

from lmmprobe.report._collect import Entry, ReportData
from lmmprobe.schema import ImageRef, Sample, Score

log = logging.getLogger(__name__)

THUMB_PX = 96
"""Longest side of a sample thumbnail, in pixels."""

MAX_TEXT = 2000
"""Characters of a raw answer or question kept in the page; longer ones are cut with a note."""

_META_TEXT = 300


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
    """The picture, decoded at reduced size where the format allows (JPEG draft mode)."""
    if ref.path is None and ref.data_b64 is None:
        return ref.load()
    src: str | io.BytesIO = (
        ref.path if ref.path is not None else io.BytesIO(base64.b64decode(ref.data_b64 or ""))
    )
    with Image.open(src) as im:
        # A JPEG decodes straight to 1/2, 1/4 or 1/8 scale: most of a thumbnail's cost saved.
        im.draft("RGB", (max_px, max_px))
        im.load()
        return im


def _cut(text: str | None, limit: int = MAX_TEXT) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f" … [{len(text) - limit} more characters]"


def _meta_line(metadata: dict[str, Any]) -> str:
    # Scalars only: nested values (a print attack's parameters) would swamp the line.
    parts = [f"{k}: {v}" for k, v in metadata.items() if isinstance(v, str | int | float)]
    return _cut(" · ".join(parts), _META_TEXT) or ""


@dataclass
class _Thumbs:
    max_px: int
    uris: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    failed: int = 0

    def add(self, sample: Sample) -> list[int]:
        out = []
        for ref in sample.images:
            try:
                digest = ref.content_hash()
                if digest not in self.index:
                    uri = thumbnail_uri(_load_small(ref, self.max_px), self.max_px)
                    self.index[digest] = len(self.uris)
                    self.uris.append(uri)
                out.append(self.index[digest])
            except (OSError, ValueError, KeyError) as exc:
                self.failed += 1
                log.debug("thumbnail of %s skipped: %s", sample.id, exc)
        return out


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


def _answers(
    entries: Iterable[tuple[int, Entry, dict[str, list[Score]]]], sid: str
) -> list[list[Any]]:
    out: list[list[Any]] = []
    for idx, entry, by_sample in entries:
        for s in by_sample.get(sid, ()):
            raw = entry.raw.get((sid, s.repeat))
            error = None
            if s.error_type:
                msg = raw.error_message if raw else None
                error = f"{s.error_type}: {msg}" if msg else s.error_type
            out.append(
                [
                    idx,
                    s.repeat,
                    _cut(raw.text if raw else None),
                    s.stage,
                    _cut(s.prediction_text, 300),
                    None if s.correct is None else int(s.correct),
                    _cut(error, 500),
                ]
            )
    return out


def browser_payload(data: ReportData, *, max_px: int = THUMB_PX) -> dict[str, Any]:
    """The sample browser's JSON: entry labels, thumbnails and one item per sample.

    Args:
        data: Runs and reloaded samples.
        max_px: Longest thumbnail side.

    Returns:
        ``{"entries": [label...], "data": [data spec...], "thumbs": [data URI...],
        "items": [...], "answer_fields": [...]}``. Each item has ``id``, ``data`` (index of its
        data spec), ``img``
        (thumbnail indices), ``q`` (question), ``ctx`` (context), ``opts`` (options in their
        original order), ``gold`` (text), ``goldi`` (its option index), ``meta`` (one line of metadata) and ``ans`` (one list per model
        and repeat, fields as ``answer_fields`` names them).

    """
    labels = [e.label for e in data.entries]
    thumbs = _Thumbs(max_px)
    items: list[dict[str, Any]] = []
    specs: dict[str, list[tuple[int, Entry, dict[str, list[Score]]]]] = {}
    for i, e in enumerate(data.entries):
        if not e.scores:
            continue
        by_sample: dict[str, list[Score]] = {}
        for s in e.scores:
            by_sample.setdefault(s.sample_id, []).append(s)
        specs.setdefault(e.run.data, []).append((i, e, by_sample))
    for d_index, (spec, group) in enumerate(specs.items()):
        known = data.samples.get(spec, {})
        for sid in _sample_order(data, spec, [e for _, e, _ in group]):
            sample = known.get(sid)
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
            items.append(
                {
                    "id": sid,
                    "data": d_index,
                    "img": img,
                    "q": _cut(question),
                    "ctx": _cut(ctx),
                    "opts": [_cut(o, 300) for o in opts] if opts else None,
                    "gold": _cut(gold, 300),
                    "goldi": goldi,
                    "meta": _meta_line(first.metadata),
                    "ans": _answers(group, sid),
                }
            )
    if thumbs.failed:
        data.warnings.append(f"{thumbs.failed} sample image(s) could not be read for thumbnails")
    return {
        "entries": labels,
        "data": list(specs),
        "thumbs": thumbs.uris,
        "items": items,
        "answer_fields": ["entry", "repeat", "raw", "stage", "prediction", "correct", "error"],
    }
