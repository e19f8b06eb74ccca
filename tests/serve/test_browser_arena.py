"""The arena in a real browser (Debian's Chromium through playwright) against the real server:
sign in with the printed link, vote 20 battles, watch the leaderboard change by itself, export
and compare with `lmmprobe elo`. Screenshots at 1400 and 960 px go to $LMMPROBE_SHOTS (if set)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lmmprobe.serve.app import create_app

from .test_arena_support import HOSTILE_MODELS, add_hostile_run, build_demo_store, serving

CHROMIUM = Path("/usr/bin/chromium")
LMMPROBE = str(Path(sys.executable).with_name("lmmprobe"))
TOKEN = "browser-test-token"
VOTES = 20
WIDTHS = (1400, 960)

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not CHROMIUM.exists():  # pragma: no cover - depends on the machine
    pytest.skip(f"no Chromium at {CHROMIUM} (apt install chromium)", allow_module_level=True)


def _shot(page: sync_api.Page, name: str) -> None:
    folder = os.environ.get("LMMPROBE_SHOTS")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(Path(folder) / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})


# A minute of a real browser on a busy machine: run with `pytest -m slow`.
@pytest.mark.slow
def test_vote_twenty_battles_and_watch_the_leaderboard(tmp_path: Path) -> None:
    db = build_demo_store(tmp_path)
    add_hostile_run(db, samples=2)
    dialogs: list[str] = []
    with serving(create_app(db, token=TOKEN)) as base, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            context = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
            context.on(
                "page",
                lambda pg: pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss())),
            )
            board = context.new_page()
            board.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            # Without the token nothing is shown; the printed link lets the browser in.
            assert board.goto(base + "/arena/leaderboard").status == 401
            board.goto(f"{base}/arena/leaderboard?token={TOKEN}")
            board.wait_for_url(base + "/arena/leaderboard")
            assert board.locator("#board-status").get_attribute("data-votes") == "0"
            assert board.locator("#board tbody tr.empty").count() == 1
            _shot(board, "arena-leaderboard-empty")

            page = context.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(base + "/arena")
            _shot(page, "arena-rater")
            page.fill("input[name=name]", "Browser <b>rater</b>")
            page.click("button[type=submit]:has-text('Start rating')")
            hostile_seen = False
            for i in range(VOTES):
                page.wait_for_selector("[data-page=arena-vote]")
                text = page.locator("main").inner_text()
                assert not any(m in text for m in HOSTILE_MODELS)  # anonymous until the vote
                if i == 0:
                    _shot(page, "arena-vote")
                vote = ("a", "b", "tie", "both_bad")[i % 4]
                page.click(f"button[name=vote][value={vote}]")
                page.wait_for_selector("[data-page=arena-reveal]")
                revealed = page.locator("[data-model]").all_inner_texts()
                assert len(revealed) == 2 and revealed[0] != revealed[1]
                hostile_seen = hostile_seen or set(revealed) == set(HOSTILE_MODELS)
                if i == 0:
                    _shot(page, "arena-reveal")
                page.click("#next")
            assert hostile_seen, "the hostile run's battle was not drawn in 20 votes"
            # The leaderboard tab updates itself (polling), with no reload.
            sync_api.expect(board.locator("#board-status")).to_have_attribute(
                "data-votes", str(VOTES), timeout=20_000
            )
            rows = board.locator("#board tbody tr").all()
            shown = {
                r.locator("td").nth(1).inner_text(): r.locator("td").nth(2).inner_text()
                for r in rows
            }
            _shot(board, "arena-leaderboard")
        finally:
            browser.close()
    assert dialogs == [], f"a script ran from data: {dialogs}"

    out = tmp_path / "battles.jsonl"
    done = subprocess.run(
        [LMMPROBE, "arena", "export", "-o", str(out), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    elo = subprocess.run(
        [LMMPROBE, "elo", str(out), "--format", "json"], capture_output=True, text=True, timeout=120
    )
    assert elo.returncode == 0, elo.stderr
    printed = json.loads(elo.stdout)
    assert printed["battles"] == VOTES
    assert shown == {m["model"]: f"{m['elo']:.1f}" for m in printed["models"]}
