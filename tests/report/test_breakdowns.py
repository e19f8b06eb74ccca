"""The report's ``--by`` breakdowns: the HTML section and the md/csv/json formats.

A researcher who ran ``lmmprobe run ... --by subtask --by difficulty`` saw the breakdowns in the
terminal, results.md and ``serve``, but the report they shared had none. Every run here goes
through the real console script and every number is checked against the run's results.json.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from tests.chromium import chromium_browser
from tests.console import lmmprobe

from lmmprobe.metrics import MetricValue
from lmmprobe.report._format import SMALL_N_NOTE, format_metric
from lmmprobe.report._view import BREAKDOWN_GROUPS_SHOWN

EVIL = '<img src=x onerror="alert(1)">'
"""A hostile subtask name: text from data, never markup."""
FORMULA = "=HYPERLINK(1)"
"""A group a spreadsheet would run as a formula."""
SKILLS: list[list[str]] = [["algebra", "geometry"], ["algebra"], []]
"""List-valued ``--by`` values: a row counts in the group of each item."""
N = 30


@dataclass
class Made:
    """A store with a run asked for breakdowns and one that was not."""

    root: Path
    db: Path
    by_run: str
    plain_run: str
    results: dict[str, Any]
    reports: dict[tuple[str, str], str] = field(default_factory=dict)


def _write_data(root: Path, groups: int | None = None) -> Path:
    Image.new("RGB", (8, 8), "red").save(root / "r.png")
    lines = []
    for i in range(N):
        meta: dict[str, Any] = {
            "subtask": ["color", "shape", EVIL][i % 3],
            "skills": SKILLS[i % 3],
            "form": FORMULA if i % 2 else "plain",
        }
        if i < 25:  # five rows lack the key: the "(missing)" group, under the small-n mark
            meta["difficulty"] = ["easy", "hard"][i % 2]
        if groups is not None:
            meta["city"] = f"city {i % groups:02d}"
        lines.append(
            json.dumps(
                {"id": f"q{i}", "images": ["r.png"], "question": "Colour?",
                 "choices": ["red", "blue"], "answer": i % 2, "metadata": meta}
            )
        )  # fmt: skip
    path = root / "d.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(root: Path, db: Path, data: Path, out: str, *by: str) -> str:
    args = [a for key in by for a in ("--by", key)]
    done = lmmprobe("run", "-m", "first", "-m", "random", "-d", data, *args,
                    "--db", db, "--out", root / out, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads((root / out / "results.json").read_text(encoding="utf-8"))["run_id"]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    root = tmp_path_factory.mktemp("breakdowns")
    data, db = _write_data(root), root / "db"
    by_run = _run(root, db, data, "by", "subtask", "skills", "difficulty", "form")
    plain_run = _run(root, db, data, "plain")
    results = json.loads((root / "by" / "results.json").read_text(encoding="utf-8"))
    return Made(root, db, by_run, plain_run, results)


def _report(made: Made, run: str, fmt: str = "html") -> str:
    """`lmmprobe report RUN -f FMT` through the console script, once per run and format."""
    if (run, fmt) not in made.reports:
        out = made.root / f"{run}.{fmt}"
        done = lmmprobe("report", run, "--db", made.db, "-f", fmt, "-o", out)
        assert done.returncode == 0, done.stderr
        made.reports[run, fmt] = out.read_text(encoding="utf-8")
    return made.reports[run, fmt]


class _Tables(HTMLParser):
    """The breakdown tables of a page: key → rows of cell texts (header first), and notes."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.notes: dict[str, list[str]] = {}
        self.nav: list[str] = []
        self._key: str | None = None
        self._depth = 0
        self._cell: list[str] | None = None
        self._note: list[str] | None = None
        self._in_nav = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "nav":
            self._in_nav = True
        if self._in_nav and tag == "a":
            self.nav.append(str(a.get("href")))
        if tag == "div" and "breakdown" in (a.get("class") or "").split():
            self._key, self._depth = str(a.get("data-key")), 0
            self.tables[self._key], self.notes[self._key] = [], []
        if self._key is None:
            return
        if tag == "div":
            self._depth += 1
        if tag == "tr":
            self.tables[self._key].append([])
        if tag in ("td", "th"):
            self._cell = []
        if tag == "p":
            self._note = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav":
            self._in_nav = False
        if self._key is None:
            return
        if tag in ("td", "th") and self._cell is not None:
            self.tables[self._key][-1].append("".join(self._cell).strip())
            self._cell = None
        if tag == "p" and self._note is not None:
            self.notes[self._key].append("".join(self._note).strip())
            self._note = None
        if tag == "div":
            self._depth -= 1
            if self._depth == 0:
                self._key = None

    def handle_data(self, data: str) -> None:
        for part in (self._cell, self._note):
            if part is not None:
                part.append(data)


def _parse(html: str) -> _Tables:
    parser = _Tables()
    parser.feed(html)
    return parser


def test_the_section_gives_the_runs_stored_breakdowns(made: Made) -> None:
    page = _parse(_report(made, made.by_run))
    # In the nav, right after the leaderboards.
    assert page.nav[page.nav.index("#leaderboard") + 1] == "#breakdowns"
    assert set(page.tables) == {"subtask", "skills", "difficulty", "form"}
    models = made.results["models"]
    for key, table in page.tables.items():
        head, *rows = table
        # The models share each group's count (one run): one n column, then a model a column.
        assert head[:2] == [key, "accuracy n"] and head[2:] == ["M1 first", "M2 random"]
        stored = models["first"]["breakdown"][key]
        assert [r[0] for r in rows] == list(stored)
        for row in rows:
            group = row[0]
            judged = models["first"]["breakdown_counts"][key][group]["judged"]
            assert row[1] == (f"{judged} *" if judged < 10 else str(judged))
            for cell, spec in zip(row[2:], ("first", "random"), strict=True):
                m = models[spec]["breakdown"][key][group]["accuracy"]
                assert cell == f"{m['value']:.3f} [{m['low']:.2f}, {m['high']:.2f}]"


def test_list_values_count_in_each_items_group(made: Made) -> None:
    page = _parse(_report(made, made.by_run))
    rows = {r[0]: r for r in page.tables["skills"][1:]}
    # q0, q3... list algebra and geometry; q1, q4... algebra alone; the empty lists none.
    assert set(rows) == {"algebra", "geometry"}
    assert rows["algebra"][1] == "20" and rows["geometry"][1] == "10"


def test_small_groups_are_marked_with_the_terminals_note(made: Made) -> None:
    page = _parse(_report(made, made.by_run))
    rows = {r[0]: r for r in page.tables["difficulty"][1:]}
    assert rows["(missing)"][1] == "5 *"
    assert rows["easy"][1] == "13"
    assert SMALL_N_NOTE in page.notes["difficulty"]
    assert SMALL_N_NOTE not in page.notes["skills"]  # 10 and 20 rows: no mark, no note


def test_a_hostile_group_name_is_text(made: Made) -> None:
    html = _report(made, made.by_run)
    assert EVIL not in html and "<img src=x" not in html
    groups = [r[0] for r in _parse(html).tables["subtask"][1:]]
    assert EVIL in groups  # shown, as text


def test_a_run_without_by_has_no_section(made: Made) -> None:
    html = _report(made, made.plain_run)
    assert 'id="breakdowns"' not in html and 'href="#breakdowns"' not in html
    assert json.loads(_report(made, made.plain_run, "json"))["breakdowns"] == []
    assert "Breakdowns" not in _report(made, made.plain_run, "md")
    rows = csv.DictReader(io.StringIO(_report(made, made.plain_run, "csv")))
    assert not [r for r in rows if r["section"] == "breakdown"]


def test_json_holds_every_stored_group_and_metric(made: Made) -> None:
    doc = json.loads(_report(made, made.by_run, "json"))
    got = {(b["label"], b["key"], b["group"]): b for b in doc["breakdowns"]}
    models = made.results["models"]
    want = {
        (spec, key, group)
        for spec, block in models.items()
        for key, groups in block["breakdown"].items()
        for group in groups
    }
    assert set(got) == want
    for (spec, key, group), row in got.items():
        counts = models[spec]["breakdown_counts"][key][group]
        assert (row["rows"], row["judged"]) == (counts["rows"], counts["judged"])
        assert row["run_id"] == made.by_run
        for name, m in row["metrics"].items():
            assert m == models[spec]["breakdown"][key][group][name]


def test_csv_rows_name_key_and_group_and_stay_inert(made: Made) -> None:
    rows = list(csv.DictReader(io.StringIO(_report(made, made.by_run, "csv"))))
    mine = [r for r in rows if r["section"] == "breakdown"]
    acc = {(r["model"], r["by"], r["group"]): r for r in mine if r["metric"] == "accuracy"}
    stored = made.results["models"]["first"]["breakdown"]["skills"]["algebra"]["accuracy"]
    cell = acc[("first", "skills", "algebra")]
    assert float(cell["value"]) == pytest.approx(stored["value"])
    assert float(cell["low"]) == pytest.approx(stored["low"])
    assert int(cell["n"]) == stored["n"] == 20
    # The formula-like group is written inert, as every text cell of the CSV is.
    assert ("first", "form", "'" + FORMULA) in acc
    assert not any(r["group"].startswith("=") for r in mine)
    counts = {r["metric"]: r["value"] for r in mine if (r["model"], r["by"], r["group"]) == ("first", "difficulty", "(missing)")}  # fmt: skip
    assert counts["rows"] == "5" and counts["accuracy_n"] == "5"


def test_markdown_has_a_table_per_key(made: Made) -> None:
    md = _report(made, made.by_run, "md")
    assert "## Breakdowns (--by)" in md
    for key in ("subtask", "skills", "difficulty", "form"):
        assert f"### accuracy by {key}\n" in md
    assert EVIL not in md and "&lt;img src=x" in md
    assert "| (missing) | 5 * |" in md and "\\* fewer than 10 rows" in md
    first = made.results["models"]["first"]["breakdown"]["skills"]["geometry"]["accuracy"]
    shown = format_metric(MetricValue(first["value"], first["low"], first["high"], first["n"]))
    assert re.search(r"\| geometry \| 10 \| " + re.escape(shown), md)


def test_many_groups_show_the_largest_and_say_where_the_rest_are(tmp_path: Path) -> None:
    # A key with many values (41 groups) would make the page endless: it shows the largest
    # BREAKDOWN_GROUPS_SHOWN and says how many it left out and where every group is; md (and
    # csv, json) keep them all.
    Image.new("RGB", (8, 8), "red").save(tmp_path / "r.png")
    lines = [
        json.dumps({"id": f"q{i}", "images": ["r.png"], "question": "Colour?",
                    "choices": ["red", "blue"], "answer": 0,
                    "metadata": {"city": f"c{i:02d}" if i < 40 else "zz big"}})
        for i in range(60)
    ]  # fmt: skip
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "db"
    run = _run(tmp_path, db, tmp_path / "d.jsonl", "o", "city")
    made = Made(tmp_path, db, run, run, {})
    page = _parse(_report(made, run))
    shown = [r[0] for r in page.tables["city"][1:]]
    assert len(shown) == BREAKDOWN_GROUPS_SHOWN < 41
    assert "zz big" in shown  # 20 rows: the largest group is kept, in its place
    assert shown == sorted(shown)  # the results' order (c00, c01, ...), not re-sorted
    note = next(n for n in page.notes["city"] if "groups shown" in n)
    assert note.startswith(f"{BREAKDOWN_GROUPS_SHOWN} of 41 groups shown")
    left = 41 - BREAKDOWN_GROUPS_SHOWN
    assert f"the other {left} are in each run's results.md" in note and "lmmprobe serve" in note
    md = _report(made, run, "md")
    assert all(f"| c{i:02d} |" in md for i in range(40)) and "| zz big |" in md


def test_a_short_breakdown_has_no_left_out_note(made: Made) -> None:
    page = _parse(_report(made, made.by_run))
    assert not [n for notes in page.notes.values() for n in notes if "groups shown" in n]


# ---- in Chromium


@pytest.mark.parametrize("width", [1400, 960])
def test_the_section_fits_the_page_in_chromium(made: Made, width: int) -> None:
    # Wide tables scroll in their own box, never the page; no group row is taller than a
    # long name wrapped over a few lines. LMMPROBE_SHOTS=DIR keeps the section's screenshot.
    _report(made, made.by_run)
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto((made.root / f"{made.by_run}.html").as_uri())
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        section = page.locator("#breakdowns")
        box = section.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width
        tables = page.eval_on_selector_all(
            "#breakdowns .breakdown",
            "els => els.map(e => e.getBoundingClientRect().right)",
        )
        assert len(tables) == 4 and max(tables) <= box["x"] + box["width"] + 0.5
        rows = page.eval_on_selector_all(
            "#breakdowns tbody tr", "els => els.map(e => e.getBoundingClientRect().height)"
        )
        assert rows and max(rows) < 80, max(rows)
        shots = os.environ.get("LMMPROBE_SHOTS")
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            section.screenshot(path=str(Path(shots) / f"breakdowns-{width}.png"))


def test_a_run_without_stored_results_says_why_it_has_no_breakdowns(tmp_path: Path) -> None:
    # A stored run with no results yet (one still running, or ended through the Python API
    # without them): its breakdowns are not computed some other way, the section says why.
    from lmmprobe.run import execute_run
    from lmmprobe.schema import RunSpec

    db = tmp_path / "db"
    spec = RunSpec(models=["first"], data="demo,n=6", db=str(db), bootstrap=10, by=["subtask"])
    run = execute_run(spec).run_id
    made = Made(tmp_path, db, run, run, {})
    doc = json.loads(_report(made, run, "json"))
    assert doc["breakdowns"] == []
    assert doc["breakdowns_note"].startswith(f"no breakdowns for {run} (complete), --by subtask")
    html = _report(made, run)
    assert 'href="#breakdowns"' in html and f"no breakdowns for {run}" in html
