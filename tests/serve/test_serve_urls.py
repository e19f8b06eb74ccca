"""``lmmprobe serve``'s URLs as a browser and a link checker use them (re-test 20 #13, #14).

#13: every page answered HTTP HEAD with 405 (FastAPI's routes answer GET only); HEAD is GET
without its body. #14: a sample named ``.`` or ``..`` was linked as ``/runs/R/samples/..``,
which a browser (and httpx, as the URL standard says) normalises before sending: the link
opened the run's page, or the run list. Such a segment is written ``~..`` and read back.
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest
from tests.serve.conftest import Row, png_b64, write_run
from tests.serve.test_serve_cli import serving

from lmmprobe.schema import Sample
from lmmprobe.serve import _pages
from lmmprobe.store import Store

IDS = [".", "..", "~.", "~~..", "a/..", "~x", "..."]


@pytest.fixture(scope="module")
def dotted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("dotted") / "d.db"
    samples = [
        Sample(
            id=sid,
            question=f"Q{i} about {sid}",
            choices=["x", "y"],
            answer=0,
            images=[{"data_b64": png_b64()}],  # type: ignore[list-item]
        )
        for i, sid in enumerate(IDS)
    ]
    rows = [Row("m", s, f"answer to {s.id}", 0, True) for s in samples]
    with Store(db) as store:
        write_run(store, "r", ["m"], samples, rows)
    return db


def test_head_answers_as_get_without_a_body(demo_db: tuple[Path, str]) -> None:
    db, run_id = demo_db
    with serving("--db", str(db)) as url, httpx.Client(timeout=10) as c:
        for path in ("", f"runs/{run_id}", f"runs/{run_id}/samples", "api/runs", "arena",
                     "static/app.css", "no-such-page"):  # fmt: skip
            got, head = c.get(url + path), c.head(url + path)
            assert head.status_code == got.status_code, (path, head.status_code)
            assert head.content == b""
            assert head.headers["content-type"] == got.headers["content-type"]
            # GET's length (a page may differ by a live figure between the two requests).
            assert int(head.headers["content-length"]) > 0, path
            if path == "static/app.css":
                assert head.headers["content-length"] == got.headers["content-length"]


def test_samples_named_with_dots_open_from_their_links(dotted: Path) -> None:
    with serving("--db", str(dotted)) as url, httpx.Client(timeout=10) as c:
        listing = c.get(url + "runs/r/samples").text
        links = {
            unescape(text): unescape(href)
            for href, text in re.findall(r'<a href="(/runs/r/samples/[^"]+)">([^<]*)</a>', listing)
        }
        assert sorted(links) == sorted(IDS)
        for sid, href in links.items():
            # httpx normalises "." and ".." segments as a browser does.
            page = c.get(url.rstrip("/") + href)
            assert page.status_code == 200, (sid, href, page.status_code)
            assert f"Q{IDS.index(sid)} about" in page.text, (sid, href)
            images = re.findall(r'<img class="zoomable" src="([^"]+)"', page.text)
            assert len(images) == 1
            picture = c.get(url.rstrip("/") + unescape(images[0]))
            assert picture.status_code == 200 and picture.headers["content-type"] == "image/png"
            api = c.get(url.rstrip("/") + "/api" + href).json()
            assert api["sample_id"] == sid


def test_the_dot_mark_reads_back_every_name() -> None:
    for name in [*IDS, "~", "~~", ".x", "x.", "~.x", "a b", "%2E"]:
        segment = _pages.quote_segment(name)
        assert segment not in (".", "..")
        raw = f"/runs/{segment}/samples/{segment}".encode()
        back = _pages.unquote_dot_segments(raw) or raw
        assert unquote(back.decode()) == f"/runs/{name}/samples/{name}", name
