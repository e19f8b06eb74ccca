"""An imported run in the web app: marked with its origin, the other tool's verdict beside ours.

With ``LMMPROBE_SHOTS=DIR`` (and playwright with Chromium) it also saves the sample page at
1400 and 960 px.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.data.benchmarks.conftest import own_datasets_cache  # noqa: F401 (a fixture)
from tests.predictions.test_score_and_import_cli import FIXTURES, _mathvista_copy

from lmmprobe.predictions.importing import import_file
from lmmprobe.serve.app import create_app

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, str]:
    folder, _ = _mathvista_copy(tmp_path)
    run = import_file(
        FIXTURES / "mathvista" / "output_bard.json",
        f"mathvista,path={folder}",
        model="bard",
        db=str(tmp_path / "store.db"),
    )
    assert run.run_id is not None
    return tmp_path / "store.db", run.run_id


def test_sample_page_shows_the_files_extraction_and_verdict_beside_lmmprobes(
    imported: tuple[Path, str],
) -> None:
    db, run_id = imported
    client = TestClient(create_app(db), base_url="http://127.0.0.1")
    page = client.get(f"/runs/{run_id}/samples/mathvista/2")
    assert page.status_code == 200
    html = page.text
    assert "Imported from mathvista" in html
    # pid 2: Bard answered 250 (gold 1000); MathVista's GPT extraction read "250", wrong.
    assert "mathvista read" in html and "250" in html
    assert "a judge's extraction, recorded in the file" in html
    assert "mathvista's verdict" in html and "agrees with" in html
    runs = client.get("/")
    assert "imported from mathvista (sha256 " in runs.text


def test_screenshots_of_an_imported_sample(imported: tuple[Path, str]) -> None:
    out = os.environ.get("LMMPROBE_SHOTS")
    if not out:
        pytest.skip("set LMMPROBE_SHOTS=DIR to save screenshots of the imported sample page")
    sync_api = pytest.importorskip("playwright.sync_api")
    uvicorn = pytest.importorskip("uvicorn")
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium")
    db, run_id = imported
    server = uvicorn.Server(uvicorn.Config(create_app(db), host="127.0.0.1", port=0))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    shots = Path(out)
    shots.mkdir(parents=True, exist_ok=True)
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            for width in (1400, 960):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(f"http://127.0.0.1:{port}/runs/{run_id}/samples/mathvista/2")
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(shots / f"imported_sample_{width}.png"), full_page=True)
                page.close()
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
