"""What a new user sees of a run in a browser: serve's run page and the HTML report (re-test 20b).

Real console scripts (``lmmprobe run``, ``report``, ``serve``) and a real Chromium (Debian's,
driven by playwright). With ``LMMPROBE_SHOTS=DIR`` the pages' screenshots at 1400 and 960 px
are saved there to look at.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def synth_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store with the baselines' run on the synthetic set (choice and free-form rows)."""
    root = tmp_path_factory.mktemp("pages")
    db = root / "s.db"
    done = lmmprobe("run", "--data", "synth,n=4", "-q", "--db", db, timeout=300)
    assert done.returncode == 0, done.stderr
    run_id = json.loads(lmmprobe("runs", "--db", db, "-f", "json").stdout)[0]["id"]
    return db, run_id


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


def _shot(page: Any, name: str) -> None:
    shots = os.environ.get("LMMPROBE_SHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(shots) / f"{name}.png"), full_page=True)


def test_serves_run_page_metrics_fit_the_page_at_1400_and_960_px(
    synth_run: tuple[Path, str], browser: Any
) -> None:
    # The run page's metrics table (ten columns of "0.125 [0.00, 0.40]") was 1,547 px wide
    # in a 1,237 px card at 1400 px: it scrolled sideways (re-test 20b #10).
    db, run_id = synth_run
    port = _free_port()
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    server = subprocess.Popen(
        [exe, "serve", "--db", str(db), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(base + "/", timeout=2).close()
                break
            except OSError:
                time.sleep(0.2)
        widths = {}
        for width in (1400, 960):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(f"{base}/runs/{run_id}")
            _shot(page, f"run-{width}")
            widths[width] = page.eval_on_selector(
                "table.metrics", "t => [t.scrollWidth, t.parentElement.clientWidth]"
            )
            # Each interval sits under its value, in the cell.
            assert page.locator("table.metrics td.metric .ci").count() > 0
            page.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    # At 960 px it still scrolled a little (995 px in 898, re-test 21b): a column of "-" only
    # (the abstention rate, where none was offered) and each bar's 5rem minimum.
    for table, room in widths.values():
        assert table <= room, widths


def test_the_reports_sample_browser_names_an_empty_free_form_answer(
    synth_run: tuple[Path, str], browser: Any, tmp_path: Path
) -> None:
    # serve's sample page says "(empty answer)" for a baseline's empty description; the
    # report's sample browser showed an empty cell and a bare 0.0 (re-test 20b #9).
    db, run_id = synth_run
    out = tmp_path / "r.html"
    made = lmmprobe("report", run_id, "--db", db, "-o", out, timeout=300)
    assert made.returncode == 0, made.stderr
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(out.as_uri())
    page.fill("#b-search", "-ff")
    sync_api.expect(page.locator("article.sample").first).to_be_visible()
    _shot(page, "report-empty-answer")
    cells = page.eval_on_selector_all(
        "article.sample table.answers tr", "rows => rows.map(r => r.lastElementChild.textContent)"
    )
    heads = page.eval_on_selector_all(
        "article.sample table.answers tr:first-child th", "hs => hs.map(h => h.textContent)"
    )
    page.close()
    assert "(empty answer)" in cells, cells
    # The column is named, as serve's "Verdict" column is (it was blank).
    assert heads[-1] == "verdict / score", heads
