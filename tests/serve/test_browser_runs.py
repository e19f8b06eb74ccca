"""``lmmprobe serve`` in a real browser (playwright driving Debian's Chromium).

Opens the runs (a running one turns complete without a reload), filters the sample browser,
opens a sample, enlarges an image, and checks hostile strings show as text and run nothing.
With ``LMMPROBE_SHOTS=DIR`` it also saves screenshots of every page at 1400 and 960 px.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from tests.chromium import CHROMIUM, chromium_browser

from lmmprobe.schema import Sample
from lmmprobe.serve.app import create_app
from lmmprobe.store import Store

from .conftest import HOSTILE, Row, choice_sample, png_b64, write_run

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)

uvicorn = pytest.importorskip("uvicorn")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, demo_db: tuple[Path, str]) -> Iterator[dict]:
    root = tmp_path_factory.mktemp("browser")
    db = root / "b.db"
    shutil.copy(demo_db[0], db)
    hostile = [
        Sample(
            id=f"h{i}",
            question=f"Q {bad}",
            choices=[f"opt {bad}", "plain"],
            answer=0,
            images=[{"data_b64": png_b64((20, 90, 200), (320, 200))}],  # type: ignore[list-item]
            metadata={f"key {bad}": f"value {bad}"},
        )
        for i, bad in enumerate(HOSTILE)
    ]
    models = [f"model {bad}" for bad in HOSTILE[:2]]
    with Store(db) as store:
        write_run(
            store, "hostile", models, hostile,
            [Row(m, s, f"raw {HOSTILE[0]}", 0, True) for m in models for s in hostile],
        )  # fmt: skip
    writer = Store(db)
    writer.create_run("zz-live", {"data": "hand", "models": ["m"]}, str(root / "live"))
    writer.put_samples("zz-live", [choice_sample(0)])
    app = create_app(db)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield {"base": f"http://127.0.0.1:{port}", "run": demo_db[1], "writer": writer}
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        writer.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium_browser() as b:
        yield b


def _page(browser: object, width: int = 1400) -> object:
    page = browser.new_page(viewport={"width": width, "height": 900})  # type: ignore[attr-defined]
    page.on("dialog", lambda d: pytest.fail(f"a dialog opened: {d.message}"))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors  # checked by the tests
    return page


def test_runs_filter_sample_and_enlarge(served: dict, browser: object) -> None:
    page = _page(browser)
    base, run_id = served["base"], served["run"]
    page.goto(base + "/")
    live = page.locator('tr[data-run="zz-live"] .badge')
    assert live.inner_text() == "running"
    served["writer"].update_run("zz-live", status="complete")  # the run ends meanwhile
    sync_api.expect(live).to_have_text("complete", timeout=15_000)  # no reload: polled
    page.click(f'a[href="/runs/{run_id}"]')
    page.click("text=Browse samples")
    page.select_option('select[name="model"]', "first")
    page.select_option('select[name="verdict"]', "wrong")
    page.click('form#filters button[type="submit"]')
    page.wait_for_url("**verdict=wrong**")
    verdicts = page.locator("table.rows tbody td .v").all_inner_texts()
    assert verdicts and all(v.strip() == "✗ wrong" for v in verdicts)
    models = page.locator("table.rows tbody td .model").all_inner_texts()
    assert set(models) == {"first"}
    page.locator("table.rows tbody td.id a").first.click()
    page.wait_for_selector("img.zoomable")
    img = page.locator("img.zoomable").first
    assert page.evaluate("(i) => i.complete && i.naturalWidth > 0", img.element_handle())
    box = page.locator("#lightbox")
    assert not box.is_visible()
    img.click()
    sync_api.expect(box).to_be_visible()
    sync_api.expect(box.locator(".lb-size")).to_contain_text(" px")
    shown, natural = page.evaluate(
        "() => { const i = document.querySelector('#lightbox img');"
        " return [i.getBoundingClientRect().width, i.naturalWidth]; }"
    )
    assert natural > 0 and shown == natural  # its own size: never stretched
    assert box.locator(".lb-open").get_attribute("href") == base + (img.get_attribute("src") or "")
    box.locator(".lb-fit").click()
    assert "fit" in (box.get_attribute("class") or "") and box.is_visible()
    box.locator(".lb-fit").click()
    assert "fit" not in (box.get_attribute("class") or "")
    page.keyboard.press("Escape")
    sync_api.expect(box).to_be_hidden()
    assert page.errors == []  # type: ignore[attr-defined]


def test_hostile_strings_show_as_text(served: dict, browser: object) -> None:
    page = _page(browser)
    base = served["base"]
    for i, bad in enumerate(HOSTILE):
        page.goto(f"{base}/runs/hostile/samples/h{i}")
        text = page.inner_text("main")
        assert f"Q {bad}" in text and f"opt {bad}" in text and f"key {bad}" in text
        assert f"raw {HOSTILE[0]}" in text
        # Model names show shortened (as the report does); the full spec is the title.
        titles = page.locator("main .answer .model").evaluate_all("(e) => e.map((x) => x.title)")
        assert set(titles) == {f"model {b}" for b in HOSTILE[:2]}
        assert page.locator("main script").count() == 0
        assert page.locator('main img[src="x"]').count() == 0
    page.goto(f"{base}/runs/hostile/samples?" + "q=" + quote("<script>"))
    assert "<script>alert(1)</script>" in page.inner_text("table.rows")
    assert page.errors == []  # type: ignore[attr-defined]


def test_screenshots(served: dict, browser: object) -> None:
    out = os.environ.get("LMMPROBE_SHOTS")
    if not out:
        pytest.skip("set LMMPROBE_SHOTS=DIR to save screenshots of every page")
    shots = Path(out)
    shots.mkdir(parents=True, exist_ok=True)
    base, run_id = served["base"], served["run"]
    pages = {
        "runs": "/",
        "run": f"/runs/{run_id}",
        "samples": f"/runs/{run_id}/samples?model=first",
        "sample": f"/runs/{run_id}/samples/demo-0-000004",
        "compare": f"/compare?run_a={run_id}",
        "hostile_sample": "/runs/hostile/samples/h0",
    }
    for width in (1400, 960):
        page = _page(browser, width)
        for name, url in pages.items():
            page.goto(base + url)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(shots / f"{name}_{width}.png"), full_page=True)
        page.goto(base + pages["sample"])
        page.locator("img.zoomable").first.click()
        page.screenshot(path=str(shots / f"sample_enlarged_{width}.png"))
        page.close()
