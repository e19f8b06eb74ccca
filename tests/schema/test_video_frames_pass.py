"""A video's frames decoded in one pass (the report's strips) are the frames, or the errors,
that loading each frame alone gives (one open and one seek per frame)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.videos import needs_av, write_video

from lmmprobe.schema import FramePolicy, ImageRef, VideoRef
from lmmprobe.schema._video_decode import open_video
from lmmprobe.schema.image import load_video_frames, max_image_pixels, pixel_hash

needs_av()

_CLIPS: dict[int, Path] = {}


def _clip(root: Path, gop: int) -> Path:
    if gop not in _CLIPS:
        _CLIPS[gop] = write_video(root / f"gop{gop}.mp4", frames=40, fps=10, gop=gop)
    return _CLIPS[gop]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _CLIPS.clear()
    return tmp_path_factory.mktemp("frames-pass")


@settings(max_examples=40, deadline=None)
@given(
    gop=st.sampled_from([1, 4, 12, 60]),
    times=st.lists(st.floats(0, 3.95, allow_nan=False), max_size=14),
)
def test_one_pass_gives_each_time_the_frame_a_seek_of_its_own_gives(
    root: Path, gop: int, times: list[float]
) -> None:
    # Times close together (decoded on), far apart (a seek), repeated, between frames.
    clip = str(_clip(root, gop))
    times = sorted(times)
    with open_video(clip, max_image_pixels()) as video:
        alone = [(t, pixel_hash(im)) for t, im in (video.frame_at(t) for t in times)]
    with open_video(clip, max_image_pixels()) as video:
        passed = [(t, pixel_hash(im)) for t, im in video.frames_in_order(times)]
    assert passed == alone


def test_one_pass_refuses_times_out_of_order(root: Path) -> None:
    with (
        open_video(str(_clip(root, 12)), max_image_pixels()) as video,
        pytest.raises(ValueError, match="ascending"),
    ):
        list(video.frames_in_order([2.0, 1.0]))


def _outcome(got: object) -> tuple[str, str]:
    if isinstance(got, BaseException):
        return type(got).__name__, str(got)
    return "image", pixel_hash(got)  # type: ignore[arg-type]


def _alone(refs: list[ImageRef]) -> list[tuple[str, str]]:
    out = []
    for ref in refs:
        try:
            out.append(_outcome(ref.load()))
        except (OSError, ValueError) as exc:
            out.append(_outcome(exc))
    return out


def _sampled(clip: Path, frames: int = 12) -> list[ImageRef]:
    ref = VideoRef(path=str(clip)).resolved(FramePolicy.parse(f"frames={frames}"))
    return ref.frame_images()


def test_frames_loaded_together_are_the_ones_loaded_alone_in_any_order(tmp_path: Path) -> None:
    clip = write_video(tmp_path / "clip.mp4", frames=40, gop=12)
    refs = _sampled(clip)
    mixed = [refs[5], refs[0], refs[11], refs[5], refs[3]]  # out of order, one twice
    together = [_outcome(g) for g in load_video_frames(str(clip), mixed)]
    assert together == _alone(mixed)
    assert {kind for kind, _ in together} == {"image"}


def test_a_changed_a_moved_and_a_cut_video_fail_as_each_frame_alone_fails(tmp_path: Path) -> None:
    clip = write_video(tmp_path / "clip.mp4", frames=40, gop=12, faststart=True)
    refs = _sampled(clip)
    original = clip.read_bytes()
    # Changed: re-encoded with other keyframes, so its pixels differ from the recorded ones.
    write_video(clip, frames=40, gop=5, faststart=True)
    changed = [_outcome(g) for g in load_video_frames(str(clip), refs)]
    assert changed == _alone(refs)
    assert "FrameChanged" in {kind for kind, _ in changed}
    # Cut short: the first frames decode, the later ones fail with the error each gives alone.
    clip.write_bytes(original[: len(original) * 8 // 10])
    cut = [_outcome(g) for g in load_video_frames(str(clip), refs)]
    assert cut == _alone(refs)
    assert cut[0][0] == "image" and cut[-1][0] != "image"
    # Gone: every frame says so, as alone.
    clip.unlink()
    gone = [_outcome(g) for g in load_video_frames(str(clip), refs)]
    assert gone == _alone(refs)
    assert all(kind == "VideoError" for kind, _ in gone)
