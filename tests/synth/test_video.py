"""``synth generate --video``: deterministic clips whose answers the sampled frames show.

Each rule's answer is read back from the frames a model is given under the default policy
(``frames=8``), decoded from the written file by the same decoder a run uses: the pixels
say the answer, not the generator's own bookkeeping.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from tests.console import lmmprobe
from tests.videos import needs_av

from lmmprobe.imaging import procedural
from lmmprobe.imaging.colors import COLORS
from lmmprobe.schema.image import pixel_hash
from lmmprobe.schema.video import DEFAULT_POLICY_TEXT, FramePolicy, VideoRef
from lmmprobe.synth.generate import MANIFEST_FILE, SAMPLES_FILE, out_problem
from lmmprobe.synth.video import (
    CHANGES,
    FPS,
    FRAMES,
    FRAMES_PER_SEGMENT,
    SEGMENTS,
    VideoSynthConfig,
    clip_params,
    frame_image,
    frame_recipe,
    make_clip,
    write_clip,
    write_video_dataset,
)

needs_av()

SIZE = 128


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _sampled(path: Path, policy: str = DEFAULT_POLICY_TEXT) -> list[tuple[float, np.ndarray]]:
    """(time, RGB pixels) of the frames `policy` gives a model, decoded as a run decodes them."""
    from lmmprobe.schema._video_decode import open_video

    ref = VideoRef(path=str(path)).resolved(FramePolicy.parse(policy))
    assert ref.frames is not None
    out = []
    with open_video(str(path), 1 << 30) as video:
        for frame in ref.frames:
            shown, image = video.frame_at(frame.time)
            assert pixel_hash(image) == frame.sha256  # the very frames the request names
            out.append((shown, np.asarray(image.convert("RGB")).astype(int)))
    return out


def _background(clip: Any) -> np.ndarray:
    recipe = {**frame_recipe(clip, 0), "objects": []}
    return np.asarray(procedural.render(recipe)).astype(int)


def _mask(pixels: np.ndarray, background: np.ndarray) -> np.ndarray:
    """Where objects are drawn: pixels that differ from the clip's bare background."""
    return np.asarray((pixels != background).any(axis=2))


def _colors(pixels: np.ndarray, mask: np.ndarray, least: int = 20) -> dict[str, int]:
    """Named fill colours drawn in the frame → their pixel counts (at least `least`)."""
    found = {}
    for name, rgb in COLORS.items():
        count = int((mask & (pixels == np.array(rgb)).all(axis=2)).sum())
        if count >= least:
            found[name] = count
    return found


def _clips(rule: str, n: int = 8) -> list[Any]:
    return [make_clip(i, 7, rules=(rule,), size=SIZE) for i in range(n)]


def _written(tmp_path: Path, clip: Any, params: dict[str, Any] | None = None) -> Path:
    path = tmp_path / f"{clip.id}.mkv"
    write_clip(clip, params or {}, path)
    return path


def test_the_same_seed_gives_identical_bytes_whatever_the_workers(tmp_path: Path) -> None:
    config = VideoSynthConfig(n=4, seed=3, size=64, scenarios=("clean", "corruption"))
    one = write_video_dataset(config, tmp_path / "a", workers=1)
    two = write_video_dataset(config, tmp_path / "b", workers=2, chunk_size=2)
    assert one == two
    digest = _digest(tmp_path / "a")
    assert digest == _digest(tmp_path / "b")
    assert sum(name.endswith(".mkv") for name in digest) == 8
    other = write_video_dataset(VideoSynthConfig(n=4, seed=4, size=64), tmp_path / "c")
    assert other["counts"]["samples"] == 4
    assert _digest(tmp_path / "c") != {k: v for k, v in digest.items() if "clean" in k}


def test_every_segment_is_sampled_by_the_policies_the_guarantee_names(tmp_path: Path) -> None:
    path = _written(tmp_path, make_clip(0, 1, size=64))
    for policy in ("frames=8", "frames=9", "frames=13", "frames=16", "frames=32", "fps=2"):
        frames = _sampled(path, policy)
        segments = {round(t * FPS) // FRAMES_PER_SEGMENT for t, _ in frames}
        assert segments == set(range(SEGMENTS)), policy


def test_direction_is_the_trend_of_the_object_across_sampled_frames(tmp_path: Path) -> None:
    seen = set()
    for clip in _clips("direction"):
        background = _background(clip)
        centres = []
        for _, pixels in _sampled(_written(tmp_path, clip)):
            ys, xs = np.nonzero(_mask(pixels, background))
            centres.append((xs.mean(), ys.mean()))
        dx, dy = np.diff(np.array(centres), axis=0).T
        if abs(dx.sum()) > abs(dy.sum()):
            assert (dx > 0).all() or (dx < 0).all()
            derived = "right" if dx.sum() > 0 else "left"
        else:
            assert (dy > 0).all() or (dy < 0).all()
            derived = "down" if dy.sum() > 0 else "up"
        assert max(abs(dx.sum()), abs(dy.sum())) > 0.4 * SIZE
        assert derived == clip.choices[clip.answer]
        seen.add(derived)
    assert len(seen) >= 3  # the rule asks about more than one way


def test_the_first_object_to_appear_is_the_answer(tmp_path: Path) -> None:
    for clip in _clips("order"):
        background = _background(clip)
        first_seen: dict[str, int] = {}
        for k, (_, pixels) in enumerate(_sampled(_written(tmp_path, clip))):
            for color in _colors(pixels, _mask(pixels, background)):
                first_seen.setdefault(color, k)
        assert len(first_seen) == 3
        assert len(set(first_seen.values())) == 3  # one at a time: no tie between sampled frames
        earliest = min(first_seen, key=first_seen.__getitem__)
        drawn = {o["color"]: o["name"] for o in clip.timeline[-1]}
        assert drawn[earliest] == clip.choices[clip.answer]
        assert 0 not in first_seen.values()  # the clip opens empty


def test_the_colour_changes_counted_across_sampled_frames_are_the_answer(tmp_path: Path) -> None:
    answers = set()
    for clip in _clips("color_changes"):
        background = _background(clip)
        dominant = []
        for _, pixels in _sampled(_written(tmp_path, clip)):
            found = _colors(pixels, _mask(pixels, background))
            dominant.append(max(found, key=found.__getitem__))
        changes = sum(a != b for a, b in itertools.pairwise(dominant))
        assert str(changes) == clip.choices[clip.answer]
        answers.add(changes)
    assert len(answers) >= 2


def test_what_changed_is_read_from_the_first_and_last_sampled_frames(tmp_path: Path) -> None:
    from scipy import ndimage

    answers = set()
    for clip in _clips("what_changed", n=12):
        background = _background(clip)
        frames = _sampled(_written(tmp_path, clip))
        (_, first), (_, last) = frames[0], frames[-1]
        masks = [_mask(first, background), _mask(last, background)]
        colors = [set(_colors(p, m)) for p, m in zip((first, last), masks, strict=True)]
        blobs = [ndimage.label(m)[1] for m in masks]
        if colors[0] != colors[1]:
            derived = "color"
        elif blobs[0] != blobs[1]:
            derived = "count"
        else:
            assert (masks[0] != masks[1]).any()
            derived = "shape"
        assert CHANGES[derived] == clip.choices[clip.answer]
        answers.add(derived)
    assert answers == {"color", "shape", "count"}


def test_a_corruption_is_applied_to_every_frame_with_the_same_parameters(tmp_path: Path) -> None:
    from lmmprobe.schema._video_decode import open_video

    clip = make_clip(1, 5, size=64)
    params = clip_params(clip, "corruption", 3)
    assert params["type"] == "corruption" and params["severity"] == 3
    assert clip_params(clip, "corruption", 3) == params  # drawn from the clip's own stream
    path = _written(tmp_path, clip, params)
    with open_video(str(path), 1 << 30) as video:
        for k in range(FRAMES):
            shown, image = video.frame_at(k / FPS)
            assert round(shown * FPS) == k
            decoded = np.asarray(image.convert("RGB"))
            assert (decoded == np.asarray(frame_image(clip, k, params))).all()
            assert (decoded != np.asarray(frame_image(clip, k, {}))).any()
    # A direction clip is never rotated or sheared: that could turn its motion.
    kinds = {clip_params(c, "corruption", 5)["kind"] for c in _clips("direction", 40)}
    assert not kinds & {"rotation", "shear"} and len(kinds) >= 5


def test_print_attack_writes_a_wrong_option_on_every_frame() -> None:
    clip = make_clip(2, 5, size=64)
    params = clip_params(clip, "print_attack", 3)
    wrong = [c for i, c in enumerate(clip.choices) if i != clip.answer]
    assert params["attack"]["text"] in wrong
    assert (np.asarray(frame_image(clip, 3, params)) != np.asarray(frame_image(clip, 3, {}))).any()


def test_generate_then_run_with_the_first_baseline_end_to_end(tmp_path: Path) -> None:
    out, db = tmp_path / "set", tmp_path / "s.db"
    made = lmmprobe("synth", "generate", "--video", "--n", "6", "--size", "64", "--out", out,
                    "--scenarios", "clean,corruption")  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "wrote 12 samples from 6 clips" in made.stdout
    manifest = json.loads((out / MANIFEST_FILE).read_text(encoding="utf-8"))
    assert manifest["kind"] == "video" and manifest["video"]["codec"] == "ffv1"
    rows = [json.loads(line) for line in (out / SAMPLES_FILE).read_text().splitlines()]
    assert {r["metadata"]["subtask"] for r in rows} == {
        "direction", "order", "color_changes", "what_changed"}  # fmt: skip
    ran = lmmprobe("run", "--data", f"synth:{out}", "-m", "first", "--by", "subtask",
                   "--db", db, "--out", tmp_path / "res", "-q")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stdout + ran.stderr
    with sqlite3.connect(db) as con:
        stored = [json.loads(doc)["video"] for (doc,) in con.execute("SELECT sample FROM samples")]
    assert len(stored) == 12
    assert all(v["sampled_with"] == "frames=8" and len(v["frames"]) == 8 for v in stored)
    again = lmmprobe("synth", "generate", "--video", "--n", "2", "--size", "64", "--out", out,
                     "--overwrite")  # fmt: skip
    assert again.returncode == 0, again.stderr  # a video set folder is ours to replace
    shown = lmmprobe("synth", "show", out)
    assert shown.returncode == 0, shown.stderr
    assert "recipe video clips" in shown.stdout and "direction" in shown.stdout


def test_a_videos_folder_holding_other_files_is_never_replaced(tmp_path: Path) -> None:
    out = tmp_path / "set"
    write_video_dataset(VideoSynthConfig(n=1, size=32), out)
    assert out_problem(out, overwrite=True) is None
    (out / "videos" / "notes.txt").write_text("mine", encoding="utf-8")
    problem = out_problem(out, overwrite=True)
    assert problem is not None and "videos/notes.txt" in problem
    with pytest.raises(FileExistsError):
        write_video_dataset(VideoSynthConfig(n=1, size=32), out, overwrite=True)
    assert (out / "videos" / "notes.txt").read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (("--tasks", "direction,bogus"), "unknown video rules ['bogus']"),
        (("--scenarios", "clean,adversarial"), "adversarial is for images only"),
        (("--proxy", "hf:x"), "--proxy is for images"),
        (("--renderer", "diffusion"), "--renderer is for images"),
        (("--size", "8"), "size must be in [32, 1024]"),
        (("--n", "0"), "n must be at least 1, got 0"),  # re-test 13 #10: an empty set
    ],
)
def test_bad_options_are_refused_in_one_line(
    tmp_path: Path, flags: tuple[str, ...], says: str
) -> None:
    # A case giving its own --n replaces the base one (an option given twice is refused).
    base = () if "--n" in flags else ("--n", "2")
    result = lmmprobe("synth", "generate", "--video", *base, "--out", tmp_path / "o", *flags)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0]
    assert not (tmp_path / "o").exists()


def test_frames_decode_to_exactly_the_rendered_pixels(tmp_path: Path) -> None:
    clip = make_clip(3, 2, size=64)
    frames = _sampled(_written(tmp_path, clip))
    for t, pixels in frames:
        expected = np.asarray(Image.Image.convert(frame_image(clip, round(t * FPS), {}), "RGB"))
        assert (pixels == expected).all()
