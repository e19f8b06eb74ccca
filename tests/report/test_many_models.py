"""The HTML report at scale: 12 models × 3 data specs, short names, per-data leaderboards.

Structure is checked on the page's markup; layout in headless Chromium at 1400 and 960 px (no
horizontal overflow, model names on one line, charts' legends inside their charts, a thumbnail
that opens its picture large). Set ``LMMPROBE_SHOTS=DIR`` to keep full-page screenshots.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.chromium import chromium_browser
from tests.report.many_models import MODELS12, Many, make_many
from tests.report.test_html import _blob, _tags, make_campaign

from lmmprobe.report import build_report

SECTIONS = ("runs", "leaderboard", "agreement", "dimensions", "cards", "radar", "heatmap", "sensitivity", "blind", "apex", "samples")  # fmt: skip


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Many:
    return make_many(tmp_path_factory.mktemp("many"))


@pytest.fixture(scope="module")
def page(many: Many) -> str:
    return build_report(many.runs, db=many.db, cards=many.cards)


def _section(html: str, sid: str) -> str:
    return html.split(f'<section id="{sid}">', 1)[1].split("</section>", 1)[0]


def test_one_leaderboard_per_data_spec_with_blind_beside(page: str, many: Many) -> None:
    board = _section(page, "leaderboard")
    tags = _tags(board)
    boards = [a for t, a in tags if t == "div" and a.get("class") == "board"]
    assert [b["data-data"] for b in boards] == ["D1", "D2", "D3"]
    tables = board.split('class="board"')[1:]
    for k, part in enumerate(tables):
        rows = part.split("<tbody>", 1)[1].split("</tbody>", 1)[0].count("<tr")
        assert rows == 12, "each model once per data spec"
        # The blind run of D1 stands beside its run with images: two accuracy columns.
        assert ("<th>blind accuracy</th>" in part) == (k == 0)
    # Ranks restart on every data spec; blind runs are never ranked against runs with images.
    ranks = re.findall(r'<td class="num">(\d+)</td><td class="model"', board)
    assert ranks == [str(i) for i in range(1, 13)] * 3
    assert "[blind]" not in board


def test_short_names_with_a_legend_of_full_specs(page: str) -> None:
    legend = page.split('id="model-legend"', 1)[1].split("</table>", 1)[0]
    for k, spec in enumerate(MODELS12, 1):
        assert f">M{k} " in legend and f"{spec}</td>" in legend
    data = page.split('id="data-legend"', 1)[1].split("</table>", 1)[0]
    assert ">D1<" in data and ">D3<" in data
    # Charts name models by the short names only: no URL, no run id.
    for fid, fig in _blob(page)["figures"].items():
        for trace in fig["data"]:
            names = [trace.get("name") or ""] + [str(v) for v in trace.get("y") or []]
            assert not any("http://" in n or "@" in n for n in names), fid
            assert all(len(n) <= 40 for n in names), (fid, names)
    # Many series: the best few are drawn, the others wait in the legend.
    radar = next(f for k, f in _blob(page)["figures"].items() if k.startswith("fig-radar-"))
    shown = [t.get("visible", True) for t in radar["data"]]
    assert shown.count(True) == 6 and shown.count("legendonly") == len(shown) - 6


def test_page_sections_and_their_charts(page: str) -> None:
    ids = {a.get("id") for _, a in _tags(page)}
    for sid in SECTIONS:
        # No APEx campaign was given: no APEx section, and no link to one.
        assert (sid in ids) == (sid != "apex"), sid
    assert 'href="#apex"' not in page
    figures = _blob(page)["figures"]
    assert {"fig-board-0", "fig-board-1", "fig-board-2", "fig-heat-0", "fig-blind"} <= set(figures)
    for fid in figures:
        assert fid in ids


def test_apex_only_report_shows_only_the_campaign(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path)
    html = build_report([campaign])
    ids = {a.get("id") for _, a in _tags(html)}
    assert "apex" in ids
    assert not ids & (set(SECTIONS) - {"apex"}), "no empty section before the campaign"
    nav = html.split("<nav>", 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'href="#(\w+)"', nav) == ["apex"]
    assert "No runs given" not in html and "No scored rows" not in html


def test_large_pictures_are_embedded_for_the_lightbox(page: str) -> None:
    browser = _blob(page)["browser"]
    assert len(browser["full"]) == len(browser["thumbs"]) > 0
    assert all(u is None or u.startswith("data:image/") for u in browser["full"])
    assert all(browser["full"]), "a small report embeds every picture large"
    # The synthetic pictures (192 px PNG) go in as the files themselves.
    assert any(u.startswith("data:image/png;base64,") for u in browser["full"])
    assert 'id="lightbox"' in page


# ---- in Chromium

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="module")
def report_file(many: Many, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("many-html")
    campaign = make_campaign(root)
    out = root / "report.html"
    out.write_text(build_report([*many.runs, campaign], db=many.db, cards=many.cards), "utf-8")
    return out


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with chromium_browser() as b:
        yield b


@pytest.mark.parametrize("width", [1400, 960])
def test_layout_in_chromium(chromium: Any, report_file: Path, width: int) -> None:
    page = chromium.new_page(viewport={"width": width, "height": 1000})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.goto(report_file.as_uri())
    page.wait_for_selector(".chart .main-svg")
    page.wait_for_timeout(500)
    try:
        # Nothing runs off the page: wide tables scroll inside their own box.
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # Model names stay on one line (at 960 px they used to wrap a letter a line).
        heights = page.eval_on_selector_all(
            "td.model",
            """els => els.map(e => { const r = document.createRange(); r.selectNodeContents(e);
                 return r.getBoundingClientRect().height; })""",
        )
        assert heights and max(heights) < 24, max(heights)
        # Every chart's legend box lies inside its chart (none cut off at the bottom or side);
        # a long legend scrolls inside its box.
        boxes = page.eval_on_selector_all(
            ".chart",
            """els => els.map(e => { const c = e.getBoundingClientRect();
                 const l = e.querySelector('.legend rect.bg'); if (!l) { return null; }
                 const b = l.getBoundingClientRect();
                 return [e.id, b.left >= c.left - 1, b.right <= c.right + 1,
                         b.top >= c.top - 1, b.bottom <= c.bottom + 1]; })""",
        )
        cut = [b for b in boxes if b is not None and not all(b[1:])]
        assert not cut, cut
        # A click on a thumbnail opens the picture large; a click closes it.
        page.locator("#samples").scroll_into_view_if_needed()
        page.click("article.sample .thumbs img")
        sync_api.expect(page.locator("#lightbox")).to_be_visible()
        natural = page.eval_on_selector("#lightbox-img", "e => [e.naturalWidth, e.complete]")
        assert natural[1] and natural[0] > 96
        if shots := os.environ.get("LMMPROBE_SHOTS"):
            page.screenshot(path=str(Path(shots) / f"lightbox-{width}.png"))
        page.click("#lightbox")
        sync_api.expect(page.locator("#lightbox")).to_be_hidden()
        assert page.evaluate("document.querySelectorAll('script').length") == 3
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(shots) / f"report-{width}.png"), full_page=True)
        assert problems == []
    finally:
        page.close()


def test_json_format_keeps_full_labels(many: Many) -> None:
    doc = json.loads(build_report(many.runs, fmt="json", db=many.db))
    labels = {r["label"] for r in doc["leaderboard"]}
    assert MODELS12[0] in labels or any(label.startswith(MODELS12[0]) for label in labels)


@pytest.mark.slow  # loads the sentence-embedding model
def test_free_form_answers_show_their_score(tmp_path: Path) -> None:
    from tests.report.many_models import GOLD, register

    from lmmprobe.api import evaluate
    from lmmprobe.metrics.embedding import freeform_scores
    from lmmprobe.report import load_report_data, render_html
    from lmmprobe.schema import RunSpec

    register()
    Image = pytest.importorskip("PIL.Image")
    Image.new("RGB", (32, 32), (200, 30, 30)).save(tmp_path / "red.png")
    refs = ["A red square on a plain background.", "A small red picture."]
    rows = [
        {"id": f"ff-{i}", "images": ["red.png"], "question": "Describe the image.",
         "answer": [ref], "formulation": "free_form", "metadata": {"question_type": "free_form"}}
        for i, ref in enumerate(refs)
    ]  # fmt: skip
    (tmp_path / "ff.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    for i, ref in enumerate(refs):
        GOLD[f"ff-{i}"] = (ref, None)
    model = "fakevlm:ff@http://127.0.0.1:1/v1,skill=50"
    db = tmp_path / "lmmprobe.db"
    ev = evaluate(RunSpec(models=[model], data=str(tmp_path / "ff.jsonl"), db=str(db), bootstrap=0))
    browser = _blob(render_html(load_report_data([ev.run_id], db=db)))["browser"]
    field = browser["answer_fields"].index("score")
    answers = {item["id"]: item["ans"][0] for item in browser["items"]}
    for i, ref in enumerate(refs):
        raw = answers[f"ff-{i}"][browser["answer_fields"].index("raw")]
        (want,) = freeform_scores([raw], [ref])
        assert answers[f"ff-{i}"][field] == pytest.approx(want, abs=0.05)


def test_markdown_ranks_each_data_spec_apart(many: Many) -> None:
    md = build_report(many.runs, fmt="md", db=many.db)
    board = md.split("## Leaderboard", 1)[1].split("\n## ", 1)[0]
    assert board.count("### Data `") == 3
    assert board.count("| 1 | ") == 3 and board.count("| 1 (blind) | ") == 1
