"""The report's sample browser shows a video answer with a strip of the frames the model was given.

Runs are made through the console script (``synth generate --video``, ``run``), the report
with ``lmmprobe report``; the strip is read from the page's embedded data and checked against
the frames the run recorded: count, time order, time labels, the policy's name, and pixels
(each thumbnail is the recorded frame). A video that moved, or whose frames changed, is named
in the strip, and no other picture takes a frame's place.
"""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from tests.console import lmmprobe
from tests.video_runs import VideoRun, make_video_run
from tests.videos import needs_av

from lmmprobe.schema import ImageRef

needs_av()


def _report(run: VideoRun, out: Path) -> dict[str, Any]:
    made = lmmprobe("report", run.run_id, "--db", run.db, "-o", out)
    assert made.returncode == 0, made.stderr
    html = out.read_text(encoding="utf-8")
    found = re.search(
        r'<script type="application/json" id="lmmprobe-data">(.*?)</script>', html, re.S
    )
    assert found
    blob = json.loads(found.group(1))
    blob["notes"] = html
    return blob


def _pixels(uri: str) -> np.ndarray:
    head, data = uri.split(",", 1)
    assert head.startswith("data:image/")
    with Image.open(io.BytesIO(base64.b64decode(data))) as im:
        return np.asarray(im.convert("RGB"), dtype=np.int16)


@pytest.fixture(scope="module")
def video_run(tmp_path_factory: pytest.TempPathFactory) -> VideoRun:
    return make_video_run(tmp_path_factory.mktemp("video-report"), "-m", "first", "-q")


def test_each_video_sample_shows_its_frames_in_time_order_with_times_and_policy(
    video_run: VideoRun, tmp_path: Path
) -> None:
    blob = _report(video_run, tmp_path / "report.html")["browser"]
    recorded = video_run.videos()
    items = {it["id"]: it for it in blob["items"]}
    assert set(items) == set(recorded)
    for sid, video in recorded.items():
        (strip,) = items[sid]["video"]
        assert strip["policy"] == "frames=8"
        assert strip["name"] == Path(video["path"]).name
        assert strip["problems"] == []
        times = [f["time"] for f in video["frames"]]
        assert times == sorted(times) and len(times) == 8
        assert [f[1] for f in strip["frames"]] == [f"t={t:g} s" for t in times]
        assert [f[1] for f in strip["frames"]][:3] == ["t=0.25 s", "t=0.75 s", "t=1.25 s"]
        for (thumb, _, gap), frame in zip(strip["frames"], video["frames"], strict=True):
            assert gap is None
            # The thumbnail is the frame the model was given (lossy, so compared loosely).
            shown = _pixels(blob["thumbs"][thumb])
            truth = ImageRef.from_video_frame(video["path"], frame["time"], frame["sha256"])
            expected = np.asarray(truth.load().convert("RGB"), dtype=np.int16)
            assert shown.shape == expected.shape
            assert np.abs(shown - expected).mean() < 12
            assert blob["files"][thumb] == strip["name"]


def test_a_moved_video_and_a_changed_one_are_named_never_shown_as_other_frames(
    video_run: VideoRun, tmp_path: Path
) -> None:
    recorded = video_run.videos()
    moved, changed, kept = sorted(recorded)
    moved_file, changed_file = video_run.video_file(moved), video_run.video_file(changed)
    saved = tmp_path / "saved"
    saved.mkdir()
    shutil.copy2(changed_file, saved / "changed")
    shutil.move(moved_file, saved / "moved")
    try:
        shutil.copyfile(video_run.video_file(kept), changed_file)  # another clip in its place
        blob = _report(video_run, tmp_path / "report.html")
    finally:
        shutil.move(saved / "moved", moved_file)
        shutil.copyfile(saved / "changed", changed_file)
    items = {it["id"]: it for it in blob["browser"]["items"]}
    (gone,) = items[moved]["video"]
    assert gone["problems"] == [
        f"The video file {moved_file.name} is not where the run read it (moved or deleted): "
        "the frames the model was given cannot be shown."
    ]
    assert [f[0] for f in gone["frames"]] == [None] * 8
    assert gone["frames"][0][1] == "t=0.25 s"
    (other,) = items[changed]["video"]
    assert other["problems"] == [
        "None of the 8 frames is the one the model was given (the video file changed since "
        "the run): they are not shown."
    ]
    assert [(f[0], f[2]) for f in other["frames"]] == [(None, "changed")] * 8
    (fine,) = items[kept]["video"]
    assert all(f[0] is not None for f in fine["frames"]) and fine["problems"] == []
    assert "16 video frame(s) the models were given cannot be shown" in blob["notes"]


def test_a_sweep_of_policies_shows_one_strip_per_policy_named_as_a_person_reads_it(
    tmp_path: Path,
) -> None:
    run = make_video_run(tmp_path, "-m", "first", "--frames", "4;fps=2,max_frames=6", "-q",
                         clips=1)  # fmt: skip
    blob = _report(run, tmp_path / "report.html")["browser"]
    (item,) = blob["items"]
    first, second = item["video"]
    assert (first["policy"], len(first["frames"])) == ("frames=4", 4)
    assert (second["policy"], len(second["frames"])) == ("fps=2, max 6", 6)
    assert [f[1] for f in first["frames"]] == ["t=0.5 s", "t=1.5 s", "t=2.5 s", "t=3.5 s"]
    times = [float(f[1][2:-2]) for f in second["frames"]]
    assert times == sorted(times)


def test_in_a_browser_the_strip_is_keyboard_accessible_and_lazily_loaded(
    video_run: VideoRun, tmp_path: Path
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip(f"no Chromium executable at {chromium}")
    page_file = tmp_path / "report.html"
    _report(video_run, page_file)
    first = sorted(video_run.videos())[0]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 960, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_file.as_uri() + "#samples")
            card = page.locator(f"article.sample[data-sample-id='{first}']")
            strip = card.locator("figure.frames")
            assert "frames=8 · 8 frames" in strip.locator("figcaption").inner_text()
            assert strip.locator("ol.strip li .t").all_inner_texts()[:2] == ["t=0.25 s", "t=0.75 s"]
            images = strip.locator("button.frame img")
            assert images.count() == 8
            assert {images.nth(k).get_attribute("loading") for k in range(8)} == {"lazy"}
            assert images.nth(2).get_attribute("alt") == "frame 3 of 8 at t=1.25 s, enlarge"
            # Keyboard: focus the third frame, Enter opens it large, Escape closes it.
            strip.locator("button.frame").nth(2).focus()
            page.keyboard.press("Enter")
            box = page.locator("#lightbox")
            sync_api.expect(box).to_be_visible()
            assert (
                page.locator("#lightbox-cap")
                .inner_text()
                .startswith(f"{Path(video_run.videos()[first]['path']).name} · t=1.25 s")
            )
            page.keyboard.press("Escape")
            sync_api.expect(box).to_be_hidden()
            assert errors == []
        finally:
            browser.close()


def test_a_strip_of_many_frames_shows_an_evenly_spaced_few_and_says_how_many(
    tmp_path: Path,
) -> None:
    run = make_video_run(tmp_path, "-m", "first", "--frames", "40", "-q", clips=1)
    (recorded,) = run.videos().values()
    times = [f["time"] for f in recorded["frames"]]
    assert len(times) == 40
    blob = _report(run, tmp_path / "report.html")["browser"]
    ((strip,),) = [it["video"] for it in blob["items"]]
    assert strip["total"] == 40 and len(strip["frames"]) == 16  # STRIP_FRAMES
    shown = [float(f[1][2:-2]) for f in strip["frames"]]
    # The first, the last and 14 between them, in time order, each a recorded frame.
    assert shown[0] == pytest.approx(times[0]) and shown[-1] == pytest.approx(times[-1])
    assert shown == sorted(shown) and len(set(shown)) == 16
    assert all(any(abs(s - t) < 1e-3 for t in times) for s in shown)
    assert all(f[0] is not None and f[2] is None for f in strip["frames"])
    assert strip["problems"] == []


def test_a_report_decodes_at_most_its_frame_budget_and_names_the_rest(
    video_run: VideoRun,
) -> None:
    from lmmprobe.report import load_report_data
    from lmmprobe.report._browser import browser_payload

    data = load_report_data([video_run.run_id], db=video_run.db)
    blob = browser_payload(data, frame_budget=10)  # three clips of 8 frames: 24 wanted
    frames = [f for it in blob["items"] for s in it["video"] for f in s["frames"]]
    assert len(frames) == 24
    assert [f[2] for f in frames] == [None] * 10 + ["budget"] * 14  # in sample order
    assert all(f[0] is None for f in frames[10:])
    assert len(blob["thumbs"]) <= 10
    assert any("14 video frame(s) are not shown: a report decodes at most 10" in w
               for w in data.warnings)  # fmt: skip
    assert not any("cannot be shown" in w for w in data.warnings)


def _payloads(run: VideoRun, **options: Any) -> list[str]:
    """The browser's data and the report's notes, frames decoded alone and decoded ahead."""
    from lmmprobe.report import load_report_data
    from lmmprobe.report._browser import browser_payload

    pages = []
    for workers in (0, 1, 3):
        data = load_report_data([run.run_id], db=run.db)
        blob = browser_payload(data, frame_workers=workers, **options)
        pages.append(json.dumps([blob, data.warnings], sort_keys=True))
    return pages


def test_frames_decoded_ahead_give_the_page_that_decoding_each_alone_gives(
    video_run: VideoRun, tmp_path: Path
) -> None:
    # Every frame, a frame budget, a budget of large pictures that runs out part way.
    for options in ({}, {"frame_budget": 10}, {"full_budget": 3_000}):
        alone, one, three = _payloads(video_run, **options)
        assert one == alone and three == alone
    # Moved, changed and unreadable videos: a failure at a strip's first frame leaves budget
    # to frames the plan did not decode ahead, which the page then decodes itself.
    recorded = video_run.videos()
    moved, changed, broken = sorted(recorded)
    files = {sid: video_run.video_file(sid) for sid in recorded}
    saved = tmp_path / "saved"
    saved.mkdir()
    for sid, path in files.items():
        shutil.copy2(path, saved / sid)
    try:
        files[moved].unlink()
        shutil.copyfile(saved / broken, files[changed])  # another clip in its place
        files[broken].write_bytes(b"\x00not a video" * 64)
        for options in ({}, {"frame_budget": 10}):
            alone, one, three = _payloads(video_run, **options)
            assert one == alone and three == alone
            assert "cannot be shown" in alone
    finally:
        for sid, path in files.items():
            shutil.copyfile(saved / sid, path)
