"""The decoding cap on images: refused before decoding with one clear message, downscaled early.

Real files throughout; the cap is lowered through its environment variable so small files
stand for the 12,000 × 12,000 PNG of the issue.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from PIL import Image

from lmmprobe.models._images import encode_image
from lmmprobe.schema import ImageRef
from lmmprobe.schema.image import (
    DEFAULT_MAX_PIXELS,
    MAX_PIXELS_ENV,
    ImageTooLargeError,
    max_image_pixels,
    pixel_cap_read_once,
)
from lmmprobe.testing.openai_server import FakeOpenAIServer


def _png(path: Path, size: tuple[int, int]) -> Path:
    Image.new("RGB", size, (200, 30, 30)).save(path, format="PNG")
    return path


def test_default_cap_is_40_megapixels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MAX_PIXELS_ENV, raising=False)
    assert max_image_pixels() == DEFAULT_MAX_PIXELS == 40_000_000
    monkeypatch.setenv(MAX_PIXELS_ENV, "lots")
    with pytest.raises(ValueError, match=MAX_PIXELS_ENV):
        max_image_pixels()


def test_a_load_reads_the_cap_once_and_a_bad_setting_still_fails_where_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A load asks for the cap several times an image: within the block the setting is read
    # once, at its start; outside it, every time as before.
    monkeypatch.setenv(MAX_PIXELS_ENV, "1_000")
    with pixel_cap_read_once():
        monkeypatch.setenv(MAX_PIXELS_ENV, "2000")
        assert max_image_pixels() == 1000
        with pixel_cap_read_once():  # a nested block keeps the value it finds
            assert max_image_pixels() == 1000
    assert max_image_pixels() == 2000
    # A setting that cannot be read is not fixed: each use says what is wrong, as outside.
    monkeypatch.setenv(MAX_PIXELS_ENV, "lots")
    with pixel_cap_read_once():
        for _ in range(2):
            with pytest.raises(ValueError, match=MAX_PIXELS_ENV):
                max_image_pixels()


@pytest.mark.parametrize("kind", ["path", "base64"])
def test_image_over_the_cap_is_refused_naming_file_limit_and_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setenv(MAX_PIXELS_ENV, "10000")
    path = _png(tmp_path / "huge.png", (200, 100))
    ref = (
        ImageRef.from_path(path)
        if kind == "path"
        else ImageRef.from_base64(base64.b64encode(path.read_bytes()).decode())
    )
    with pytest.raises(ImageTooLargeError) as info:
        ref.load()
    message = str(info.value)
    assert "200×100 (0.02 MP), over the 0.01 MP decoding limit" in message
    assert f"{MAX_PIXELS_ENV}=20000" in message
    assert (str(path) if kind == "path" else "base64") in message
    assert isinstance(info.value, OSError)  # what every image reader already catches
    with pytest.raises(ImageTooLargeError):
        encode_image(ref, max_pixels=1024 * 1024)
    with pytest.raises(ImageTooLargeError):
        ref.thumbnail(96)
    monkeypatch.setenv(MAX_PIXELS_ENV, "20000")  # raised as the message says: decoded
    assert ref.load().size == (200, 100)


@pytest.mark.parametrize("pixels", [6_000, 20_000])  # Pillow warns above its limit, fails at 2x
def test_pillow_decompression_bomb_is_handled_not_warned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pixels: int
) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 5_000)  # Pillow's own limit, made small
    monkeypatch.setenv(MAX_PIXELS_ENV, "3000")
    path = _png(tmp_path / "bomb.png", (pixels // 100, 100))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(ImageTooLargeError, match=f"{pixels / 1e6:.3g} MP"):
            ImageRef.from_path(path).load()
    assert not [w for w in seen if issubclass(w.category, Image.DecompressionBombWarning)]
    assert not warnings.filters or all(
        f[2] is not Image.DecompressionBombWarning or f[0] != "error" for f in warnings.filters
    )  # the warning filter used while opening was restored


def test_raising_the_cap_above_pillows_lets_pillow_decode_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 5_000)
    monkeypatch.setenv(MAX_PIXELS_ENV, "30000")
    path = _png(tmp_path / "big.png", (200, 100))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ImageRef.from_path(path).load().size == (200, 100)
    # Only for that open: Pillow's own limit is back for everyone else in the process.
    assert Image.MAX_IMAGE_PIXELS == 5_000


def test_large_jpeg_is_decoded_reduced_for_sending_and_thumbnails(tmp_path: Path) -> None:
    path = tmp_path / "photo.jpg"
    Image.new("RGB", (4000, 3000), (10, 120, 200)).save(path, format="JPEG", quality=80)
    ref = ImageRef.from_path(path)
    reduced = ref.load(reduce_to=(500, 375))
    assert reduced.size == (500, 375)  # decoded at 1/8 scale: never the 12 M pixels
    thumb = ref.thumbnail(96)
    assert max(thumb.size) == 96
    mime, data = encode_image(ref, max_pixels=250_000)
    with Image.open(io.BytesIO(data)) as sent:
        assert sent.size[0] * sent.size[1] <= 250_000 and mime == "image/png"


def test_thumbnail_never_shrinks_an_in_memory_picture() -> None:
    picture = Image.new("RGB", (300, 200))
    ref = ImageRef.from_pil(picture)
    assert max(ref.thumbnail(50).size) == 50
    assert picture.size == (300, 200)


def test_api_run_skips_the_too_large_image_row_with_its_reason(tmp_path: Path, write_jsonl) -> None:
    big = _png(tmp_path / "big.png", (300, 300))
    small = _png(tmp_path / "small.png", (120, 100))
    data = write_jsonl(
        tmp_path / "d.jsonl",
        [
            {"id": "big", "images": ["big.png"], "question": "Color?", "choices": ["red", "blue"],
             "answer": 0},
            {"id": "small", "images": ["small.png"], "question": "Color?", "choices": ["red", "blue"],
             "answer": 0},
        ],
    )  # fmt: skip
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {**os.environ, MAX_PIXELS_ENV: "50000"}
    db = tmp_path / "db"
    with FakeOpenAIServer() as server:
        spec = f"openai:fake-vlm@{server.base_url},max_image_pixels=4000"
        proc = subprocess.run(
            [exe, "run", "-q", "-m", spec, "-d", str(data), "--db", str(db)],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
        assert "Traceback" not in proc.stderr, proc.stderr
        (sent,) = server.received_images  # only the small one went out, downscaled
        with Image.open(io.BytesIO(sent)) as im:
            assert im.size[0] * im.size[1] <= 4000
    export = subprocess.run(
        [exe, "export", "latest", "--db", str(db)], capture_output=True, text=True, timeout=120
    )
    rows = {r["sample_id"]: r for r in map(json.loads, export.stdout.splitlines())}
    assert rows["small"]["error_type"] is None
    # Refused from its header when the data is read: the row is skipped with file:line and the
    # fix, never decoded, and the other rows run.
    assert "big" not in rows
    message = " ".join(proc.stderr.split())
    assert "d.jsonl:1: images[0]" in message and "over the 0.05 MP decoding limit" in message
    assert f"{MAX_PIXELS_ENV}=90000" in message
    assert big.stat().st_size > 0 and small.is_file()
