"""``lmmprobe run`` on video rows, through the console script: a broken video is one line."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import pytest
from tests.console import lmmprobe
from tests.videos import needs_av, write_video


def _data(folder: Path) -> Path:
    write_video(folder / "a.mp4")
    write_video(folder / "b.mp4", frames=30, fps=10)
    (folder / "broken.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\xff" * 64)
    rows = [
        {"id": "a", "video": "a.mp4"},
        {"id": "broken", "video": "broken.mp4"},
        {"id": "b", "video": {"path": "b.mp4", "fps": 1}},
    ]
    data = folder / "videos.jsonl"
    data.write_text(
        "".join(
            json.dumps({**r, "question": "Which way?", "choices": ["left", "right"], "answer": 0})
            + "\n"
            for r in rows
        ),
        encoding="utf-8",
    )
    return data


def test_a_broken_video_is_one_line_and_the_other_samples_are_asked(tmp_path: Path) -> None:
    needs_av()
    data = _data(tmp_path)
    proc = lmmprobe("run", "-d", data, "-m", "random", "--frames", "4", "--db",
                    tmp_path / "s.db", "--out", tmp_path / "out", "-q")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output
    named = [line for line in output.splitlines() if "broken.mp4" in line]
    assert len(named) == 1
    assert named[0].strip().startswith(f"{data}:2: video: video {tmp_path / 'broken.mp4'}: ")
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert results["manifest"]["video"]["frames"] == "frames=4"
    assert results["manifest"]["video"]["decoder"].startswith("PyAV ")
    with sqlite3.connect(tmp_path / "s.db") as db:
        stored = {
            sid: json.loads(doc)["video"]
            for sid, doc in db.execute("SELECT sample_id, sample FROM samples")
        }
    assert sorted(stored) == ["a", "b"]
    for video in stored.values():  # what the model was shown, recorded with the sample
        assert video["sampled_with"] == "frames=4"
        assert [round(f["time"], 3) for f in video["frames"]] == (
            [0.5, 1.5, 2.5, 3.5] if video["path"].endswith("a.mp4") else [0.3, 1.1, 1.8, 2.6]
        )
        assert all(len(f["sha256"]) == 64 for f in video["frames"])


def test_the_same_run_again_asks_nothing_new(tmp_path: Path) -> None:
    needs_av()
    data = _data(tmp_path)
    args = ("run", "-d", data, "-m", "random", "--db", tmp_path / "s.db", "-q")
    assert lmmprobe(*args).returncode == 0
    again = lmmprobe(*args)
    assert again.returncode == 0, again.stderr
    assert "2 from the store, 0 sent" in again.stdout


def test_a_sweep_of_more_policies_than_the_cap_is_refused_at_once(tmp_path: Path) -> None:
    # Re-test 13 left it: 512 policies ran past 120 s, each one every video sample again.
    from lmmprobe.schema.video import MAX_POLICIES

    many = ",".join(str(k) for k in range(1, 513))
    proc = lmmprobe("run", "-d", "demo,n=2", "-m", "first", "--dry-run", "--frames", many,
                    timeout=60)  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.strip()]
    assert line.startswith(
        f"error: --frames: 512 frame policies; a sweep takes at most {MAX_POLICIES}"
    ), line
    at_cap = ";".join(f"fps={k}" for k in range(1, MAX_POLICIES + 1))
    ok = lmmprobe("run", "-d", "demo,n=2", "-m", "first", "--dry-run", "--frames", at_cap)
    assert ok.returncode == 0, ok.stdout + ok.stderr


@pytest.mark.parametrize("dry_run", [False, True], ids=["run", "dry-run"])
def test_a_video_model_whose_torchvision_is_missing_is_one_line_naming_it(
    dry_run: bool, tmp_path: Path
) -> None:
    # Re-test 15 #1: the tiny video models' ImportError ended the run in a 200-line traceback.
    pytest.importorskip("transformers")
    if importlib.util.find_spec("torchvision") is not None:
        pytest.skip("torchvision is installed: the video models build here")
    proc = lmmprobe("run", "-d", "demo,n=2", "-m", "hf:tiny-qwen2-vl", "-m", "random",
                    "--db", tmp_path / "s.db", "-q", *(["--dry-run"] if dry_run else []),
                    LMMPROBE_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: -m hf:tiny-qwen2-vl: the tiny qwen2_vl model needs torchvision (No module "
        "named 'torchvision'): transformers' video processors use it; install the torchvision "
        "release made for your torch (see pytorch.org)"
    ]


@pytest.mark.parametrize(
    ("frames", "said", "not_said"),
    [
        ("frames=0", "frame policy 'frames=0': ", "--frames=0"),
        ("frames=8,max_frames=2", "expected frames=N, fps=F,", "--frames=N"),
        ("fps=nan", "'fps=nan': fps= takes a finite number", "less than or equal to 1000"),
        (
            "fps=1,max_frames=1e9",
            "max_frames=1e9': max_frames= takes a whole number",
            "invalid literal",
        ),
        # float() read 1_0 as 10 (re-test 15 noticed it; re-test 19 of issue 34, #17)
        ("fps=1_0", "'fps=1_0': fps= takes a finite number", "fps=10"),
    ],
    ids=["count", "form", "nan", "not-whole", "underscore"],
)
def test_a_refused_frame_policy_is_quoted_as_written_in_lmmprobes_words(
    frames: str, said: str, not_said: str, tmp_path: Path
) -> None:
    # Re-test 15 #4 and #5: the option's name was written into the user's own text ("frame
    # policy '--frames=0'", "expected --frames=N"); NaN was "more than 1000"; "1e9" was int()'s
    # "invalid literal for int() with base 10".
    proc = lmmprobe("run", "-d", "demo,n=2", "-m", "random", "--frames", frames,
                    "--db", tmp_path / "s.db", "-q")  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: ") and said in line and not_said not in line, line
