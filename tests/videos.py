"""Small test videos written with PyAV: each frame shows its own index, so a test reads back
which frame a decoder returned.

Every frame is 64x48: its top half codes the frame index in 8 black or white blocks (bit b in
the block at columns 8b..8b+7), its bottom half is a grey ramp that moves with the index.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lmmprobe._optional import require

WIDTH, HEIGHT = 64, 48
BITS = 8


def needs_av() -> None:
    """Skip the calling test (or module) where PyAV is absent, saying how to install it."""
    try:
        require("av", extra="video", purpose="decoding test videos")
    except ImportError as exc:
        pytest.skip(str(exc), allow_module_level=True)


def write_video(
    path: Path,
    *,
    frames: int = 40,
    fps: int = 10,
    gop: int = 12,
    faststart: bool = False,
    fill: Callable[[int], tuple[int, int, int]] | None = None,
) -> Path:
    """Encode `frames` index-coded frames at `fps` (H.264, a keyframe every `gop` frames).

    Args:
        path: The .mp4 file to write.
        frames: How many frames.
        fps: Frames per second.
        gop: Frames between keyframes.
        faststart: Put the index (moov) first, so a file cut short still opens.
        fill: Frame i painted all `fill(i)` instead of its index code (a video whose colour
            changes, for a model that answers from a frame's colour).

    """
    import av
    import numpy as np

    options = {"movflags": "+faststart"} if faststart else {}
    with av.open(str(path), "w", options=options) as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.gop_size = gop
        for i in range(frames):
            rgb = np.zeros((HEIGHT, WIDTH, 3), np.uint8)
            for b in range(BITS):
                if i >> b & 1:
                    rgb[: HEIGHT // 2, b * 8 : b * 8 + 8] = 255
            rgb[HEIGHT // 2 :] = ((np.arange(WIDTH) * 3 + 5 * i) % 256).astype(np.uint8)[
                None, :, None
            ]
            if fill is not None:
                rgb[:] = fill(i)
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def frame_index(image: object) -> int:
    """The index a frame of `write_video` shows (read from its top half)."""
    import numpy as np

    row = np.asarray(image)[HEIGHT // 4, :, 0].astype(int)
    return sum(1 << b for b in range(BITS) if row[b * 8 + 4] > 128)
