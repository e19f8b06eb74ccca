"""Serve shows a video answer with a strip of the frames the model was given.

Against the real app on a loopback port (uvicorn in a thread): a synthetic video run made
through the console script, its sample page and the arena's vote page. Each frame comes from
``/frames/...`` (or ``/arena/frames/{battle}/...``) by the store's record alone, decoded again
and sent only when its pixels hash to the recorded hash; a video that changed or moved is
named, never replaced by other pictures; nothing a client sends can point the server at a
file, and a recorded URL is never fetched.
"""

from __future__ import annotations

import html
import io
import os
import re
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from tests.video_runs import VideoRun, make_video_run
from tests.videos import needs_av

from lmmprobe.report import _browser
from lmmprobe.schema import Sample, VideoFrame, VideoRef
from lmmprobe.schema.image import pixel_hash
from lmmprobe.serve import frames
from lmmprobe.serve.app import create_app
from lmmprobe.store import Store

from .conftest import Row, client, write_run
from .test_arena_support import serving

needs_av()


@pytest.fixture(scope="module")
def video_run(tmp_path_factory: pytest.TempPathFactory) -> VideoRun:
    return make_video_run(tmp_path_factory.mktemp("video-serve"), "-m", "first", "-m", "random",
                          "-q")  # fmt: skip


@pytest.fixture(scope="module")
def base(video_run: VideoRun) -> Iterator[str]:
    with serving(create_app(video_run.db)) as url:
        yield url


def _strip(page: str) -> dict[str, Any]:
    """The first strip of a page: caption, time labels, thumbnail and full-size URLs, gaps."""
    found = re.search(r'<figure class="frame-strip".*?</figure>', page, re.S)
    assert found, "the page shows a strip of frames"
    part = found.group(0)
    caption = re.search(r"<figcaption>(.*?)</figcaption>", part, re.S)
    assert caption
    return {
        "caption": html.unescape(re.sub(r"<[^>]+>", "", caption.group(1))).strip(),
        "times": re.findall(r'<span class="t">([^<]*)</span>', part),
        "thumbs": [html.unescape(u) for u in re.findall(r'<img[^>]* src="([^"]+)"', part)],
        "full": [html.unescape(u) for u in re.findall(r'data-full="([^"]+)"', part)],
        "lazy": part.count('loading="lazy"'),
        "gaps": part.count('class="frame-gap"'),
        "problems": [
            html.unescape(p)
            for p in re.findall(r'<p class="frame-problem" role="status">([^<]+)</p>', part)
        ],
    }


def _png(response: httpx.Response) -> Image.Image:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(response.content))
    image.load()
    return image


def test_sample_page_shows_the_frames_in_time_order_each_served_as_the_model_saw_it(
    video_run: VideoRun, base: str
) -> None:
    for sid, video in video_run.videos().items():
        page = httpx.get(f"{base}/runs/{video_run.run_id}/samples/{sid}")
        assert page.status_code == 200
        strip = _strip(page.text)
        name = Path(video["path"]).name
        assert (
            strip["caption"] == f"Video frames the model was given · frames=8 · 8 frames · {name}"
        )
        assert strip["times"] == [f"t={f['time']:g} s" for f in video["frames"]]
        assert strip["times"][:2] == ["t=0.25 s", "t=0.75 s"]
        assert strip["lazy"] == 8 and strip["gaps"] == 0 and strip["problems"] == []
        for k, (thumb, full, frame) in enumerate(
            zip(strip["thumbs"], strip["full"], video["frames"], strict=True)
        ):
            assert full.startswith(f"/frames/{video_run.run_id}/") and f"/{k}?p=0" in full
            assert pixel_hash(_png(httpx.get(base + full))) == frame["sha256"]
            small = _png(httpx.get(base + thumb))
            assert max(small.size) <= 160
    api = httpx.get(f"{base}/api/runs/{video_run.run_id}/samples/{sid}").json()
    assert [f["label"] for f in api["frames"][0]["frames"]] == strip["times"]


def test_a_changed_video_and_a_moved_one_are_named_never_shown_as_other_frames(
    video_run: VideoRun, base: str, tmp_path: Path
) -> None:
    changed, moved, other = sorted(video_run.videos())
    changed_file, moved_file = video_run.video_file(changed), video_run.video_file(moved)
    shutil.copy2(changed_file, tmp_path / "changed")
    shutil.move(moved_file, tmp_path / "moved")
    try:
        shutil.copyfile(video_run.video_file(other), changed_file)
        page = httpx.get(f"{base}/runs/{video_run.run_id}/samples/{changed}").text
        strip = _strip(page)
        assert len(strip["full"]) == 8  # known only by decoding: the page's script names it
        refused = httpx.get(base + strip["full"][3])
        assert refused.status_code == 404
        assert "changed since the run" in refused.text and "not shown" in refused.text
        said = httpx.get(base + strip["thumbs"][3], headers={"Accept": "application/json"})
        assert said.status_code == 404 and said.json()["reason"] == "changed"

        strip = _strip(httpx.get(f"{base}/runs/{video_run.run_id}/samples/{moved}").text)
        assert strip["problems"] == [
            f"The video file {moved_file.name} is not where the run read it (moved or "
            "deleted): the frames the model was given cannot be shown."
        ]
        assert strip["thumbs"] == [] and strip["gaps"] == 8 and len(strip["times"]) == 8
        url = f"{base}/frames/{video_run.run_id}/{moved}/0?p=0&size=full"
        gone = httpx.get(url, headers={"Accept": "application/json"})
        assert gone.status_code == 404 and gone.json()["reason"] == "unreadable"
        assert str(moved_file) not in gone.text  # the reason naming the file is the log's
    finally:
        shutil.move(tmp_path / "moved", moved_file)
        shutil.copyfile(tmp_path / "changed", changed_file)


@pytest.mark.parametrize(
    "tail",
    ["8?p=0", "0?p=1", "0?p=0&size=huge", "x?p=0", "0?p=-1", "0?p=0x", "1" * 7 + "?p=0"],
)
def test_a_frame_is_named_only_by_its_place_in_the_record(
    video_run: VideoRun, base: str, tail: str
) -> None:
    sid = sorted(video_run.videos())[0]
    assert httpx.get(f"{base}/frames/{video_run.run_id}/{sid}/{tail}").status_code == 404
    assert httpx.get(f"{base}/frames/{video_run.run_id}/no-such/0").status_code == 404
    assert httpx.get(f"{base}/frames/no-such-run/{sid}/0").status_code == 404


def test_a_fifo_in_place_of_the_video_is_refused_without_being_opened(
    video_run: VideoRun, base: str, tmp_path: Path
) -> None:
    sid = sorted(video_run.videos())[1]
    path = video_run.video_file(sid)
    shutil.move(path, tmp_path / "kept")
    os.mkfifo(path)
    try:
        strip = _strip(httpx.get(f"{base}/runs/{video_run.run_id}/samples/{sid}").text)
        assert strip["problems"] == [
            f"{path.name} is no longer a regular video file: its frames are not shown."
        ]
        r = httpx.get(f"{base}/frames/{video_run.run_id}/{sid}/0", timeout=20)
        assert r.status_code == 404
    finally:
        path.unlink()
        shutil.move(tmp_path / "kept", path)


def test_frame_requests_waiting_for_a_decoder_never_keep_pages_waiting(
    video_run: VideoRun, base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Re-test 14: a frame request waited up to WAIT_S for a decoder on one of the server's
    # worker threads (anyio's 40, which every page needs too), however many waited: 50 frame
    # requests while both decoders were busy left every page waiting. Past MAX_WAITING waiters
    # a frame request is a 503 at once, and pages are served meanwhile.
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(frames, "WAIT_S", 120.0)  # waiting would outlast the page's timeout
    sid = sorted(video_run.videos())[0]
    url = f"{base}/frames/{video_run.run_id}/{sid}/0"
    for _ in range(frames.DECODERS):  # both decoders busy, as with two long decodings
        assert frames._SLOTS.acquire(timeout=5)
    held = frames.DECODERS
    try:
        with ThreadPoolExecutor(50) as pool:
            asked = [pool.submit(httpx.get, url, timeout=180) for _ in range(50)]
            # The refusals come at once; on a loaded machine the 50 requests may still be
            # arriving, so the page is asked only once the waiters past MAX_WAITING were turned
            # away (else slots freed after the page would serve the late ones, not refuse them).
            deadline = time.monotonic() + 60
            while sum(f.done() for f in asked) < 50 - frames.MAX_WAITING:
                assert time.monotonic() < deadline, [f.done() for f in asked]
                time.sleep(0.02)
            try:
                page = httpx.get(f"{base}/runs/{video_run.run_id}/samples/{sid}", timeout=30)
            finally:
                for _ in range(held):
                    frames._SLOTS.release()
                held = 0
            assert page.status_code == 200
            got = [f.result() for f in asked]
    finally:
        for _ in range(held):
            frames._SLOTS.release()
    busy = [r for r in got if r.status_code == 503]
    assert len(busy) >= 50 - frames.MAX_WAITING, [r.status_code for r in got]
    assert all(r.headers.get("retry-after") for r in busy)
    assert all(r.status_code in (200, 503) for r in got), [r.status_code for r in got]


def test_a_video_recorded_from_a_url_is_never_fetched_by_the_server(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    video = VideoRef(
        url=f"http://127.0.0.1:{port}/clip.mp4",
        frames=[VideoFrame(time=0.5, sha256="0" * 64), VideoFrame(time=1.5, sha256="1" * 64)],
        sampled_with="frames=2",
    )
    sample = Sample(id="u1", question="What moves?", choices=["a", "b"], answer=0, video=video)
    db = tmp_path / "url.db"
    with Store(db) as store:
        write_run(store, "urlrun", ["first"], [sample], [Row("first", sample, "(A)", 0, True)])
    try:
        with serving(create_app(db)) as url:
            strip = _strip(httpx.get(f"{url}/runs/urlrun/samples/u1").text)
            assert strip["times"] == ["t=0.5 s", "t=1.5 s"] and strip["thumbs"] == []
            assert "from a URL: this server does not fetch it" in strip["problems"][0]
            assert httpx.get(f"{url}/frames/urlrun/u1/0?p=0").status_code == 404
        with pytest.raises(TimeoutError):
            listener.accept()  # nobody connected
    finally:
        listener.close()


def test_the_arena_shows_the_strip_by_the_battle_alone(video_run: VideoRun, base: str) -> None:
    recorded = video_run.videos()
    with httpx.Client(base_url=base) as rater:
        token = rater.get("/arena/api/session").json()["csrf_token"]
        rater.post("/arena/api/rater", json={"name": "ida"}, headers={"X-CSRF-Token": token})
        page = rater.get("/arena")
        assert page.status_code == 200
        strip = _strip(page.text)
        assert strip["caption"] == "Video frames the models were given · frames=8 · 8 frames"
        battle = page.text.split('name="battle" value="', 1)[1].split('"', 1)[0]
        assert all(u.startswith(f"/arena/frames/{battle}/") for u in strip["full"])
        # Nothing leads to the run's pages: not the run, the sample, nor the file's name.
        assert video_run.run_id not in page.text
        assert not any(sid in page.text for sid in recorded)
        shown = [pixel_hash(_png(rater.get(u))) for u in strip["full"]]
        assert shown in [[f["sha256"] for f in v["frames"]] for v in recorded.values()]
        assert [f"t={float(t[2:-2]):g} s" for t in strip["times"]] == strip["times"]
    # Another browser (another session) cannot read this battle's frames.
    assert httpx.get(base + strip["full"][0]).status_code == 404


def _shots(page: Any, name: str) -> None:
    folder = os.environ.get("LMMPROBE_SHOTS")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    for width in (1400, 960):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(300)
        page.screenshot(path=str(Path(folder) / f"{name}-{width}.png"))
    page.set_viewport_size({"width": 1400, "height": 900})


def test_in_a_browser_frames_open_by_keyboard_and_a_changed_frame_is_named(
    video_run: VideoRun, base: str, tmp_path: Path
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    chromium = Path(shutil.which("chromium") or "/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip(f"no Chromium at {chromium}")
    first, changed, other = sorted(video_run.videos())
    changed_file = video_run.video_file(changed)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{base}/runs/{video_run.run_id}/samples/{first}")
            frames = page.locator("figure.frame-strip img.frame-img")
            sync_api.expect(frames).to_have_count(8)
            # Polled from here: wait_for_function's own polling compiles its predicate inside
            # the page, which the page's CSP (script-src 'self') refuses when the first check
            # comes too early (a loaded machine).
            loaded = "() => [...document.querySelectorAll('img.frame-img')].every(i => i.naturalWidth > 0)"
            deadline = time.monotonic() + 60
            while not page.evaluate(loaded):
                assert time.monotonic() < deadline, "the frames did not load in 60 s"
                page.wait_for_timeout(100)
            _shots(page, "serve-video-sample")
            page.locator("a.zoom.frame").nth(4).focus()
            page.keyboard.press("Enter")
            box = page.locator("#lightbox")
            sync_api.expect(box).to_be_visible()
            big = page.locator(".lightbox-stage img")
            assert big.get_attribute("src").endswith("/4?p=0&size=full")
            assert big.get_attribute("alt") == "Frame 5 of 8 at t=2.25 s"
            page.keyboard.press("Escape")
            sync_api.expect(box).to_be_hidden()
            assert page.evaluate("document.activeElement.getAttribute('href')").endswith(
                "/4?p=0&size=full"
            )

            shutil.copy2(changed_file, tmp_path / "changed")
            try:
                shutil.copyfile(video_run.video_file(other), changed_file)
                page.goto(f"{base}/runs/{video_run.run_id}/samples/{changed}")
                note = page.locator(".js-frame-problem")
                sync_api.expect(note).to_have_text(
                    "None of the 8 frames is the one the model was given (the video file "
                    "changed since the run): they are not shown."
                )
                gaps = page.locator("figure.frame-strip .frame-gap")
                sync_api.expect(gaps).to_have_count(8)
                sync_api.expect(gaps.first).to_have_text("changed since the run")
                assert page.locator("figure.frame-strip img").count() == 0
                _shots(page, "serve-video-changed")
            finally:
                shutil.copyfile(tmp_path / "changed", changed_file)
            assert errors == []
        finally:
            browser.close()


def test_a_sweep_shows_a_strip_per_policy_and_each_answer_the_frames_it_was_sent(
    tmp_path: Path,
) -> None:
    run = make_video_run(tmp_path, "-m", "first", "--frames", "4;fps=2,max_frames=6", "-q",
                         clips=1)  # fmt: skip
    (sid,) = run.videos()
    with serving(create_app(run.db)) as url:
        page = httpx.get(f"{url}/runs/{run.run_id}/samples/{sid}").text
        captions = re.findall(r"<figcaption><b>[^<]*</b> · ([^<]*?) · (\d+) frames", page)
        assert captions == [("frames=4", "4"), ("fps=2, max 6", "6")]
        second = page.split('data-policy="fps=2, max 6"', 1)[1]
        assert "/0?p=1&amp;size=thumb" in second
        api = httpx.get(f"{url}/api/runs/{run.run_id}/samples/{sid}").json()
        sent = {
            a["metadata"]["frame_policy"]: [
                a["sent"]["media"][p["image"]]
                for t in a["sent"]["turns"]
                for p in t["parts"]
                if "image" in p
            ]
            for a in api["answers"]
        }
        assert "[frame 2, t=1.5 s]" in page
        # Each answer's request is rebuilt as sent (its key matched): the frames of its policy.
        assert sent["frames=4"] == [
            f"frame {k + 1}, t={t:g} s" for k, t in enumerate((0.5, 1.5, 2.5, 3.5))
        ]
        assert len(sent["fps=2,max_frames=6"]) == 6
        assert sent["fps=2,max_frames=6"][0] == "frame 1, t=0.25 s"
        shown = _png(httpx.get(f"{url}/frames/{run.run_id}/{sid}/5?p=1&size=full"))
        recorded = run.videos()[sid]["alternates"]["fps=2,max_frames=6"][5]
        assert pixel_hash(shown) == recorded["sha256"]


HOSTILE = '<img src=x onerror=alert(1)>"><script>alert(2)</script>'


def test_hostile_recorded_names_are_shown_as_text(tmp_path: Path) -> None:
    video = VideoRef(
        path=str(tmp_path / f"{HOSTILE}.mkv"),
        frames=[VideoFrame(time=t, sha256="0" * 64) for t in (0.5, 1.5)],
        sampled_with=HOSTILE,
    )
    sample = Sample(id="h1", question="What moves?", choices=["a", "b"], answer=0, video=video)
    db = tmp_path / "hostile.db"
    with Store(db) as store:
        write_run(store, "hrun", ["first"], [sample], [Row("first", sample, "(A)", 0, True)])
    with client(db) as c:
        page = c.get("/runs/hrun/samples/h1").text
        assert "<script>alert(2)" not in page and "<img src=x" not in page
        strip = _strip(page)
        name = Path(video.source).name
        assert strip["caption"] == (
            f"Video frames the model was given · {HOSTILE} · 2 frames · {name}"
        )
        assert name in strip["problems"][0] and strip["gaps"] == 2


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    index=st.text(max_size=12),
    strip=st.text(max_size=12),
    size=st.sampled_from(["thumb", "full", "", "huge", "thumb\x00"]) | st.text(max_size=8),
)
def test_any_frame_place_a_client_sends_is_a_frame_or_a_404_never_a_500(
    video_run: VideoRun, index: str, strip: str, size: str
) -> None:
    sid = sorted(video_run.videos())[0]
    with client(video_run.db) as c:
        r = c.get(
            f"/frames/{quote(video_run.run_id, safe='')}/{quote(sid, safe='')}/"
            f"{quote(index, safe='')}",
            params={"p": strip, "size": size},
        )
    valid = re.fullmatch("[0-7]", index) and re.fullmatch("0+", strip) and size in ("thumb", "full")
    assert r.status_code == (200 if valid else 404), (index, strip, size, r.text[:200])


def test_a_superscript_digit_is_no_image_place_either(video_run: VideoRun) -> None:
    sid = sorted(video_run.videos())[0]
    with client(video_run.db) as c:
        assert c.get(f"/images/{video_run.run_id}/{quote(sid, safe='')}/%C2%B2").status_code == 404


def test_a_long_strip_shows_the_reports_evenly_spaced_frames_and_says_how_many(
    tmp_path: Path,
) -> None:
    # Before: every frame of a strip (up to 512 a policy) was on the page, each thumbnail a
    # request; the report shows at most STRIP_FRAMES. The same frames are shown here.
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"not decoded for the page")
    recorded = [VideoFrame(time=k / 10, sha256=f"{k:064x}") for k in range(512)]
    video = VideoRef(path=str(clip), frames=recorded, sampled_with="frames=512")
    sample = Sample(id="l1", question="What moves?", choices=["a", "b"], answer=0, video=video)
    db = tmp_path / "long.db"
    with Store(db) as store:
        write_run(store, "lrun", ["first"], [sample], [Row("first", sample, "(A)", 0, True)])
    with client(db) as c:
        strip = _strip(c.get("/runs/lrun/samples/l1").text)
    assert strip["caption"] == (
        "Video frames the model was given · frames=512 · 16 of 512 frames shown, evenly "
        "spaced · clip.mp4"
    )
    shown = _browser.spread(list(range(512)), _browser.STRIP_FRAMES)
    assert len(shown) == 16 and shown[0] == 0 and shown[-1] == 511
    assert strip["times"] == [f"t={k / 10:g} s" for k in shown]
    assert [re.search(r"/(\d+)\?p=0", u).group(1) for u in strip["thumbs"]] == [  # type: ignore[union-attr]
        str(k) for k in shown
    ]
