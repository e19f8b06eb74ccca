"""The reference frame samplers (``linspace=N``, ``mvbench=N``) pick the references' frame indices.

``sampler_parity/expected.json`` holds the indices lmms-eval's, MVBench's and LongVideoBench's
own sampling code picked for 202 generated (frame count, rate, clip) cases, run from their repositories by
``sampler_parity/make_expected.py`` (commits in the file). A decoded video then shows the
frames those indices name: frame ``i`` is the one shown at ``i / rate`` seconds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.videos import frame_index, needs_av, write_video

from lmmprobe.schema import FramePolicy, VideoRef
from lmmprobe.schema import _video_decode as decode
from lmmprobe.schema.image import max_image_pixels

EXPECTED = json.loads(
    (Path(__file__).parent / "sampler_parity" / "expected.json").read_text(encoding="utf-8")
)
CASES: list[dict[str, Any]] = EXPECTED["cases"]


@pytest.mark.parametrize(
    "case", CASES, ids=lambda c: f"{c['frames']}of{c['count']}@{c['rate']:.3g}"
)
def test_the_indices_equal_the_reference_samplers(case: dict[str, Any]) -> None:
    clip = (case.get("start"), case.get("end"))
    mvbench = FramePolicy.parse(f"mvbench={case['frames']}")
    assert mvbench.indices(case["count"], case["rate"], *clip) == case["mvbench"]
    longvideobench = FramePolicy.parse(f"longvideobench={case['frames']}")
    picked = case["longvideobench"]
    if not picked or max(picked) >= case["count"]:
        # The reference asks decord for no frame (a clip under a second) or for frames past
        # the video's end (which decord refuses): lmmprobe refuses the clip.
        with pytest.raises(ValueError):
            longvideobench.indices(case["count"], case["rate"], None, case.get("end"))
    else:
        assert longvideobench.indices(case["count"], case["rate"], None, case.get("end")) == picked
    if "linspace" in case:  # lmms-eval's sampler takes no clip
        linspace = FramePolicy.parse(f"linspace={case['frames']}")
        assert linspace.indices(case["count"], case["rate"]) == case["linspace"]


def test_the_reference_policies_read_and_write_their_labels() -> None:
    for text in ("linspace=32", "mvbench=16", "longvideobench=16"):
        policy = FramePolicy.parse(text)
        assert policy.label == text and policy.by_index
        assert FramePolicy.parse(policy.label) == policy
    for bad in ("linspace=0", "mvbench=x", "mvbench=8,fps=1", "linspace=600"):
        with pytest.raises(ValueError, match=r"^frame policy "):
            FramePolicy.parse(bad)
    with pytest.raises(ValueError, match="picks frame indices"):
        FramePolicy.parse("mvbench=4").times(0, 1)
    with pytest.raises(ValueError, match="samples times"):
        FramePolicy.parse("frames=4").indices(10, 25.0)


@pytest.mark.parametrize(
    ("policy", "clip", "want"),
    [
        ("linspace=5", (None, None), [0, 9, 19, 29, 39]),
        ("mvbench=4", (None, None), [4, 14, 24, 33]),
        ("mvbench=4", (1.0, 3.0), [12, 17, 22, 27]),
    ],
)
def test_a_decoded_video_shows_the_frames_the_indices_name(
    tmp_path: Path, policy: str, clip: tuple[float | None, float | None], want: list[int]
) -> None:
    needs_av()
    path = write_video(tmp_path / "v.mp4", frames=40, fps=10, gop=7)
    parsed = FramePolicy.parse(policy)
    assert parsed.indices(40, 10.0, *clip) == want
    ref = VideoRef(path=str(path), start=clip[0], end=clip[1]).resolved(parsed)
    assert ref.sampled_with == policy
    assert ref.frames is not None
    with decode.open_video(str(path), max_image_pixels()) as video:
        assert (video.frame_count, video.rate) == (40, 10.0)
        shown = [frame_index(video.frame_at(f.time)[1]) for f in ref.frames]
    assert shown == want
    assert [round(f.time * 10) for f in ref.frames] == want


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(["linspace", "mvbench", "longvideobench"]),
    n=st.integers(1, 512),
    count=st.integers(1, 10_000_000),
    rate=st.floats(0.01, 1000),
    clip=st.none() | st.tuples(st.floats(0, 1e6), st.floats(0, 1e6)),
)
def test_reference_indices_are_inside_the_video_or_refused(
    kind: str, n: int, count: int, rate: float, clip: tuple[float, float] | None
) -> None:
    policy = FramePolicy.parse(f"{kind}={n}")
    start, end = clip if clip is not None else (None, None)
    try:
        picked = policy.indices(count, rate, start, end)
    except ValueError:
        return  # an empty clip, one past the video, or under LongVideoBench's second
    assert 1 <= len(picked) <= n
    assert all(0 <= i < count for i in picked)
    assert picked == sorted(picked)
