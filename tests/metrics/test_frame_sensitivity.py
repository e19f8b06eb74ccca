"""Frame-policy sensitivity: the same questions under several frame policies (``--frames A,B``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.console import lmmprobe_with_key
from tests.videos import needs_av, write_video

from lmmprobe.metrics.stability import policy_spread_of
from lmmprobe.schema import FormulateConfig, RunSpec
from lmmprobe.schema.video import parse_policies
from lmmprobe.testing.openai_server import FakeOpenAIServer

RED, BLUE = (220, 30, 30), (30, 60, 220)


def test_policies_are_read_as_one_list_and_a_sweep_breaks_down_by_policy() -> None:
    assert [p.label for p in parse_policies("16, 8")] == ["frames=16", "frames=8"]
    assert [p.label for p in parse_policies("fps=1;fps=2,max_frames=8")] == [
        "fps=1,max_frames=32",
        "fps=2,max_frames=8",
    ]
    with pytest.raises(ValueError, match="'frames=8' is given twice"):
        parse_policies("8;frames=8")
    spec = RunSpec(frames="8,16", by=["subtask"])
    assert spec.frames == "frames=8;frames=16"
    assert spec.by == ["subtask", "frame_policy"]
    assert RunSpec(frames="8").by == []  # one policy: nothing to compare
    with pytest.raises(ValueError, match="--circular"):
        RunSpec(frames="8,16", formulate=FormulateConfig(circular=True))


def test_the_spread_is_best_minus_worst_accuracy_with_a_paired_interval() -> None:
    rows = {
        "a": {"p": [1, 1], "q": [0, 1]},
        "b": {"p": [1, 1], "q": [1, 1]},
        "c": {"p": [0, 1], "q": [0, 1]},
        "d": {},  # no answered row: still a cluster
    }
    got = policy_spread_of(rows, ["p", "q"], n_boot=500, seed=3)
    assert got.value == pytest.approx(2 / 3 - 1 / 3)
    assert got.n == 6
    assert got.low is not None and got.high is not None
    assert 0.0 <= got.low <= got.value <= got.high <= 1.0
    assert policy_spread_of(rows, ["p", "q"], n_boot=500, seed=3) == got  # seeded
    # A policy no row was answered under has no accuracy: no spread.
    assert policy_spread_of(rows, ["p", "q", "r"], n_boot=10).value is None


def test_frames_sweep_through_the_console_script_reports_the_curve_and_the_spread(
    tmp_path: Path,
) -> None:
    needs_av()
    # Red for its first 2 s, blue for its last 2 s: the fake server answers from the colour
    # of the first picture it is shown. frames=1 shows the middle (blue: wrong); frames=2
    # shows 1 s first (red: right).
    # Two shades, so the two videos' frames differ (equal frames would be one request).
    for name, shade in (("a.mp4", 0), ("b.mp4", 20)):
        red, blue = (RED[0] - shade, *RED[1:]), (*BLUE[:2], BLUE[2] - shade)
        write_video(tmp_path / name, fill=lambda i, r=red, b=blue: r if i < 20 else b)
    data = tmp_path / "videos.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {"id": n, "video": f"{n}.mp4", "question": "What color is it?",
                 "choices": ["red", "blue"], "answer": 0}
            ) + "\n"
            for n in ("a", "b")
        ),
        encoding="utf-8",
    )  # fmt: skip
    with FakeOpenAIServer() as server:
        proc = lmmprobe_with_key(
            "run", "-d", data, "-m", f"openai:fake-vlm@{server.base_url}", "--frames", "1,2",
            "--db", tmp_path / "s.db", "--out", tmp_path / "out", "-q",
        )  # fmt: skip
        assert len(server.received_images) == 2 * 1 + 2 * 2
    assert proc.returncode == 0, proc.stderr
    assert "accuracy by frame_policy" in proc.stdout
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    (model,) = results["models"].values()
    curve = model["breakdown"]["frame_policy"]
    assert curve["frames=1"]["accuracy"]["value"] == 0.0
    assert curve["frames=2"]["accuracy"]["value"] == 1.0
    assert curve["frames=2"]["accuracy"]["n"] == 2
    spread = model["metrics"]["frame_sensitivity"]
    assert spread["value"] == 1.0 and spread["n"] == 4
    assert "frame_sensitivity" not in curve["frames=1"]  # one policy's rows: no spread
    assert results["manifest"]["video"]["frames"] == "frames=1;frames=2"
