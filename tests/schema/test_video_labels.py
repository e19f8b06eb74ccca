"""How pages name a video's frames and policies: ``t=1.25 s``, ``frames=8``, ``fps=1, max 32``."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from lmmprobe.schema.video import (
    FramePolicy,
    VideoFrame,
    VideoRef,
    changed_frames_text,
    policy_text,
    time_text,
)


def test_policies_are_named_as_a_person_reads_them() -> None:
    assert policy_text("frames=8") == "frames=8"
    assert policy_text("fps=1,max_frames=32") == "fps=1, max 32"
    assert policy_text(FramePolicy.parse("fps=0.5").label) == "fps=0.5, max 32"
    assert policy_text("whatever <b>") == "whatever <b>"  # recorded by hand: shown as it is


def test_times_are_labelled_to_the_millisecond_without_trailing_zeros() -> None:
    assert [time_text(t) for t in (0.25, 3.0, 0.0, 1 / 30, 12.3456)] == [
        "t=0.25 s", "t=3 s", "t=0 s", "t=0.033 s", "t=12.346 s"]  # fmt: skip


@given(st.floats(min_value=0, max_value=1e7, allow_nan=False))
def test_a_time_label_reads_back_as_its_time(t: float) -> None:
    label = time_text(t)
    assert label.startswith("t=") and label.endswith(" s")
    assert math.isclose(float(label[2:-2]), t, abs_tol=0.0005 + t * 1e-12)


@given(st.text(max_size=200))
def test_any_recorded_policy_label_is_named_without_failing(label: str) -> None:
    assert isinstance(policy_text(label), str)


def test_strips_are_the_runs_policies_in_order_and_changed_frames_one_sentence() -> None:
    frames = [VideoFrame(time=t, sha256=str(t)) for t in (0.5, 1.5)]
    video = VideoRef(path="/v.mp4", frames=frames, sampled_with="frames=2",
                     alternates={"frames=1": frames[:1]})  # fmt: skip
    assert [(s.policy, len(s.frames)) for s in video.strips()] == [("frames=2", 2), ("frames=1", 1)]
    assert VideoRef(path="/v.mp4").strips() == []
    assert changed_frames_text([0.5], 2).startswith("The frame at t=0.5 s is not the one")
    assert changed_frames_text([0.5, 1.5], 2).startswith("None of the 2 frames is the one")
    assert changed_frames_text([0.5, 1.5], 3).startswith("The frames at t=0.5 s, t=1.5 s are not")
