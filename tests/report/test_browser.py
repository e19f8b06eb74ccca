"""The HTML report in a real browser: headless Chromium through Playwright (system executable).

It must render without console or page errors, draw its charts, paginate the sample browser,
show hostile model output as text that never runs, and show a real APEx campaign's experiment
tables and thumbnails and the model cards.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.chromium import CHROMIUM, chromium_browser
from tests.report.test_html import (
    APEX_QUERY,
    IMG,
    PAYLOADS,
    SCRIPT,
    Runs,
    make_campaign,
    make_runs,
)

from lmmprobe.report import build_report

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium executable at {CHROMIUM}", allow_module_level=True)


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    runs: Runs = make_runs(root)
    campaign = make_campaign(root)
    cards = root / "cards.yaml"
    cards.write_text(
        f"first:\n  parameters: 1B\n  notes: '{IMG}'\nscripted:\n  proprietary: true\n",
        encoding="utf-8",
    )
    out = root / "report.html"
    html = build_report([runs.normal, runs.blind, campaign], db=runs.db, cards=cards)
    out.write_text(html, encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser() as b:
        yield b


@pytest.fixture
def opened(browser: Any, report_file: Path) -> Iterator[tuple[Any, list[str], list[str]]]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    console: list[str] = []
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)  # fmt: skip
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(report_file.as_uri())
    # Selector waits, not wait_for_function: the page's CSP rightly forbids eval.
    page.wait_for_selector(".chart .main-svg")
    yield page, console + errors, requests
    page.close()


def test_renders_without_errors_and_draws_charts(opened: tuple[Any, list[str], list[str]]) -> None:
    page, problems, requests = opened
    page.wait_for_timeout(300)
    assert problems == []
    # Nothing but the file itself (and its data: URIs) is ever requested.
    assert all(u.startswith(("file:", "data:")) for u in requests), requests
    charts = page.eval_on_selector_all(
        ".chart", "els => els.map(e => [e.id, e.querySelectorAll('svg.main-svg').length])"
    )
    assert len(charts) >= 5
    assert all(n > 0 for _, n in charts), charts
    ids = {c for c, _ in charts}
    assert {"fig-board-0", "fig-heat-0", "fig-radar-0-0", "fig-radar-0-1", "fig-blind"} <= ids
    # The heatmap shows the hostile subtask name as text, not as a bold tag and an image.
    ticks = page.eval_on_selector_all(
        "#fig-heat-0 .xtick text", "els => els.map(e => e.textContent)"
    )
    assert "<b>bold</b><img src=x onerror=window.__xss=1>" in ticks


def test_a_chart_of_a_set_height_leaves_no_blank_below_it(
    opened: tuple[Any, list[str], list[str]],
) -> None:
    # A leaderboard of two models is a 154 px figure in a box of min-height 300 px: ~150 px
    # of blank page under each leaderboard chart (re-test 20b's screenshots at 1400 and 960).
    page, problems, _ = opened
    boxes = page.eval_on_selector_all(
        ".chart",
        "els => els.map(e => [e.id, e.getBoundingClientRect().height, "
        "(e.querySelector('svg.main-svg') || {getBoundingClientRect: () => ({height: 0})})"
        ".getBoundingClientRect().height])",
    )
    board = [b for b in boxes if b[0].startswith("fig-board")]
    assert board, boxes
    for chart_id, box_height, drawn in boxes:
        assert drawn > 0, chart_id
        assert box_height <= drawn + 2, (chart_id, box_height, drawn)
    assert problems == []


def test_sample_browser_paginates(opened: tuple[Any, list[str], list[str]]) -> None:
    page, problems, _ = opened
    page.select_option("#b-size", "10")
    first = page.eval_on_selector_all("article.sample", "els => els.map(e => e.dataset.sampleId)")
    assert len(first) == 10 and first[0] == "s-000"
    assert page.text_content("#b-status").startswith("page 1 of 3")
    page.click("#b-next")
    second = page.eval_on_selector_all("article.sample", "els => els.map(e => e.dataset.sampleId)")
    assert second[0] == "s-010" and not set(first) & set(second)
    assert page.text_content("#b-status").startswith("page 2 of 3")
    page.click("#b-last")
    assert page.locator("article.sample").count() == 10
    assert page.is_disabled("#b-next") and not page.is_disabled("#b-prev")
    # Filtering: only samples where a request failed or an answer could not be read.
    page.select_option("#b-filter", "problem")
    n = page.locator("article.sample").count()
    assert 0 < n <= 10
    page.fill("#b-search", "s-004")
    sync_api.expect(page.locator("article.sample")).to_have_count(1)
    assert page.locator("article.sample img").count() == 1
    assert problems == []


def test_hostile_output_is_text_and_never_runs(opened: tuple[Any, list[str], list[str]]) -> None:
    page, problems, _ = opened
    page.select_option("#b-size", "100")
    raws = page.eval_on_selector_all("td.raw", "els => els.map(e => e.textContent)")
    for payload in PAYLOADS:
        assert f"(B) {payload}" in raws
    assert any(IMG in r for r in raws)  # the error message with the payload
    questions = page.eval_on_selector_all("p.q", "els => els.map(e => e.textContent)")
    assert any(q.endswith(SCRIPT) for q in questions)
    options = page.eval_on_selector_all("ol.opts li", "els => els.map(e => e.textContent)")
    assert IMG in options and SCRIPT in options
    # None of it became an element: the only images are the thumbnails, no script ran.
    srcs = page.eval_on_selector_all("img", "els => els.map(e => e.getAttribute('src'))")
    assert srcs and all(s.startswith("data:image/") for s in srcs)
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.evaluate("document.querySelectorAll('script').length") == 3
    assert problems == []


def test_apex_campaign_renders_with_its_tables_and_thumbnails(
    opened: tuple[Any, list[str], list[str]],
) -> None:
    page, problems, _ = opened
    page.locator("#apex").scroll_into_view_if_needed()
    assert page.text_content("#apex h2 + article h2") == f"APEx: {APEX_QUERY}"
    experiments = page.locator("#apex section.apex-experiment")
    assert experiments.count() == 2
    # Per experiment: the answers-and-tools table and the results table, one row per model.
    for i in range(2):
        tables = experiments.nth(i).locator("table")
        assert tables.count() == 2
        models = tables.nth(1).locator("tbody tr td:first-child").all_text_contents()
        assert models == ["random", "first"]
    # Thumbnails are decoded images (not broken icons), drawn at their 64 px size.
    thumbs = page.eval_on_selector_all(
        "#apex img",
        "els => els.map(e => [e.complete, e.naturalWidth, e.getBoundingClientRect().width])",
    )
    assert len(thumbs) >= 8
    for complete, natural, width in thumbs:
        assert complete and natural > 0 and width == 64
    assert problems == []


def test_model_cards_and_tests_show_as_text(opened: tuple[Any, list[str], list[str]]) -> None:
    page, problems, _ = opened
    rows = page.eval_on_selector_all("#card-table tbody tr", "els => els.map(e => e.textContent)")
    assert len(rows) == 2 and any(IMG in r for r in rows)
    # scripted (proprietary: large) and first (1B: small) form two size groups, but they
    # share a single catalog task: the pair is listed with the reason it was not tested.
    note = page.text_content("#cards table.ttests tbody tr")
    assert note is not None and "parameters" in note and "at least 2 datasets" in note
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert problems == []
