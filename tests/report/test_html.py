"""The cross-run report: self-contained HTML, escaping of hostile text, md/csv/json formats.

Runs are made by the real runner and store: a JSONL dataset whose questions, options and
subtask names carry HTML/script payloads, answered by a scripted external-model stand-in whose
raw answers (and error messages) carry them too; once with images and once blind.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from lmmprobe.api import evaluate
from lmmprobe.models.base import MODELS, Capabilities, ModelIdentity, RateLimitError
from lmmprobe.report import (
    ReportError,
    build_report,
    build_tables,
    load_report_data,
    render_html,
)
from lmmprobe.report._embed import plotly_text, script_json
from lmmprobe.report.tables import CSV_COLUMNS
from lmmprobe.schema import Request, Response, RunSpec

SCRIPT = "<script>window.__xss=1</script>"
IMG = '<img src=x onerror="window.__xss=1">'
CLOSE = "</script><script>window.__xss=1</script>"
PAYLOADS = (SCRIPT, IMG, CLOSE)
EVIL_SUBTASK = "<b>bold</b><img src=x onerror=window.__xss=1>"
N_SAMPLES = 30


class ScriptedModel:
    """External-model stand-in: hostile raw answers, an error now and then, else option A."""

    def __init__(self) -> None:
        self.identity = ModelIdentity(backend="scripted", name="scripted")
        self.capabilities = Capabilities(max_batch_size=16)

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for r in requests:
            i = int(r.sample_id.rsplit("-", 1)[1])
            if i % 5 == 4:
                err = RateLimitError(f"quota {IMG}").to_info()
                out.append(Response(key=r.key, error=err))
            elif i % 5 == 3:
                out.append(Response(key=r.key, text="(A)"))
            else:
                out.append(Response(key=r.key, text=f"(B) {PAYLOADS[i % 3]}"))
        return out

    def loglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        raise NotImplementedError


@MODELS.register("scripted", summary="test stand-in with hostile answers")
def _scripted(target: str | None, options: dict[str, str]) -> ScriptedModel:
    return ScriptedModel()


@dataclass
class Runs:
    db: Path
    normal: str
    blind: str
    normal_dir: Path
    results: dict


def write_hostile_dataset(folder: Path, n: int = N_SAMPLES) -> Path:
    """JSONL + PNGs in four flat colors; samples 0 and 1 share one file."""
    folder.mkdir(parents=True, exist_ok=True)
    colors = [(200, 30, 30), (30, 160, 50), (30, 70, 220), (245, 225, 30)]
    rows = []
    for i in range(n):
        img = folder / f"img{max(i, 1)}.png"
        if not img.exists():
            Image.new("RGB", (160, 120), colors[i % 4]).save(img)
        tf = i % 2 == 1
        rows.append(
            {
                "id": f"s-{i:03d}",
                "images": [img.name],
                "question": f"Q{i}: what is shown? {PAYLOADS[i % 3]}",
                "choices": ["yes", "no"] if tf else ["red & co", IMG, "blue", SCRIPT],
                "answer": 0 if tf else i % 4,
                "formulation": "true_false" if tf else "single_choice",
                "metadata": {
                    "subtask": EVIL_SUBTASK if i % 3 == 0 else "color",
                    "scenario": "clean" if i % 2 == 0 else "print_attack",
                    "question_type": "true_false" if tf else "multiple_choice",
                },
            }
        )
    path = folder / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def make_runs(root: Path) -> Runs:
    """A normal and a blind run of the scripted model and `first` on the hostile data."""
    data = write_hostile_dataset(root / "data")
    db = root / "runs" / "lmmprobe.db"
    spec = RunSpec(models=["scripted", "first"], data=str(data), db=str(db), bootstrap=50)
    normal = evaluate(spec)
    blind = evaluate(spec, formulate={"blind": True})
    return Runs(db, normal.run_id, blind.run_id, normal.results_json.parent, normal.results)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return make_runs(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def page(runs: Runs) -> str:
    return build_report([runs.normal, runs.blind], db=runs.db)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _blob(html: str) -> dict:
    match = re.search(
        r'<script type="application/json" id="lmmprobe-data">(.*?)</script>', html, re.S
    )
    assert match, "the page embeds its data"
    return json.loads(match.group(1))


def test_page_is_self_contained(page: str) -> None:
    tags = _tags(page)
    scripts = [a for t, a in tags if t == "script"]
    assert scripts and all("src" not in a for a in scripts), "every script is inline"
    assert not [a for t, a in tags if t == "link"], "no stylesheet or other linked resource"
    for t, a in tags:
        for attr in ("src", "href", "action", "poster"):
            value = a.get(attr) or ""
            assert not re.match(r"\s*(https?:)?//", value), f"<{t} {attr}={value!r}> fetches"
    imgs = [a.get("src") or "" for t, a in tags if t == "img"]
    assert all(s.startswith("data:image/") for s in imgs)
    # The Content-Security-Policy forbids any fetch and any script without the page's nonce.
    csp = next(a["content"] for t, a in tags if t == "meta" and a.get("http-equiv"))
    assert "default-src 'none'" in (csp or "")
    nonce = re.search(r"'nonce-([^']+)'", csp or "")
    assert nonce and all(a.get("nonce") == nonce.group(1) for a in scripts if a.get("type") is None)
    assert "Plotly" in page and len(page) > 3_000_000  # plotly.js is embedded, once
    assert page.count("plotly.js v") <= 2


def test_page_has_every_section_and_chart(page: str, runs: Runs) -> None:
    ids = {a.get("id") for _, a in _tags(page)}
    for section in ("runs", "leaderboard", "dimensions", "radar", "heatmap", "sensitivity", "blind", "apex", "samples"):  # fmt: skip
        assert section in ids
    figures = _blob(page)["figures"]
    assert {"fig-leaderboard", "fig-heatmap", "fig-deltas", "fig-blind"} <= set(figures)
    radars = [f for f in figures if f.startswith("fig-radar-")]
    assert len(radars) == 2  # clean and print_attack, one radar each
    for fid in figures:
        assert fid in ids, f"{fid} has a div to draw in"
    assert runs.normal in page and runs.blind in page


def test_hostile_text_never_appears_as_markup(page: str) -> None:
    for payload in (*PAYLOADS, EVIL_SUBTASK, "<b>bold"):
        assert payload not in page
    # Outside the scripts, the text is there, escaped by the template.
    assert "&lt;b&gt;bold&lt;/b&gt;&lt;img src=x onerror=window.__xss=1&gt;" in page
    # Inside the data blob nothing can close the script element...
    blob_text = page.split('id="lmmprobe-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in blob_text and ">" not in blob_text
    # ...and the raw answers come back intact when parsed.
    browser = _blob(page)["browser"]
    raws = {a[2] for item in browser["items"] for a in item["ans"]}
    for payload in PAYLOADS:
        assert f"(B) {payload}" in raws
    errors = {a[6] for item in browser["items"] for a in item["ans"] if a[6]}
    assert any(IMG in e for e in errors)
    questions = {item["q"] for item in browser["items"]}
    assert f"Q0: what is shown? {SCRIPT}" in questions


def test_plotly_labels_are_entity_escaped(page: str) -> None:
    heat = _blob(page)["figures"]["fig-heatmap"]["data"][0]
    assert plotly_text(EVIL_SUBTASK) in heat["x"] and EVIL_SUBTASK not in heat["x"]


def test_script_json_cannot_close_its_element() -> None:
    value = {"a": "</script><!-- & \u2028\u2029 <img>", "n": float("nan")}
    text = script_json(value)
    assert not set(text) & set("<>&\u2028\u2029")
    assert json.loads(text) == {"a": value["a"], "n": None}


def test_sample_browser_holds_every_answer_and_dedups_thumbnails(page: str) -> None:
    browser = _blob(page)["browser"]
    assert len(browser["entries"]) == 4  # two models, with and without images
    assert len(browser["items"]) == N_SAMPLES
    assert all(len(item["ans"]) == 4 for item in browser["items"])
    # 30 samples (29 files) but 4 distinct pictures: one thumbnail per content hash.
    assert len(browser["thumbs"]) == 4
    assert browser["items"][0]["img"] == browser["items"][1]["img"]
    assert browser["items"][2]["img"] != browser["items"][3]["img"]
    stages = {a[3] for item in browser["items"] for a in item["ans"]}
    assert {"error", "mark"} <= stages
    assert all(t.startswith(("data:image/webp;base64,", "data:image/jpeg;base64,")) for t in browser["thumbs"])  # fmt: skip


def test_thumbnails_are_downscaled(runs: Runs) -> None:
    data = load_report_data([runs.normal], db=runs.db)
    html = render_html(data, thumb_px=32)
    import base64

    uri = _blob(html)["browser"]["thumbs"][0]
    im = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
    assert max(im.size) == 32


def test_leaderboard_and_blind_gap_match_the_runs(runs: Runs) -> None:
    tables = build_tables(load_report_data([runs.normal, runs.blind], db=runs.db, samples=False))
    rows = {r["label"]: r for r in tables.leaderboard}
    assert set(rows) == {"scripted", "first", "scripted [blind]", "first [blind]"}
    assert rows["first"]["metrics"]["accuracy"] == runs.results["models"]["first"]["metrics"]["accuracy"]  # fmt: skip
    accs = [r["metrics"]["accuracy"]["value"] for r in tables.leaderboard]
    assert accs == sorted(accs, reverse=True)
    gaps = {g["model"]: g for g in tables.blind_gaps}
    assert set(gaps) == {"scripted", "first"}
    for g in gaps.values():
        assert g["gap"] == pytest.approx(g["normal_accuracy"] - g["blind_accuracy"])
    # `first` always picks option A: right on true/false (gold "yes") and on a quarter of the
    # multiple-choice questions, with or without images.
    assert gaps["first"]["gap"] == pytest.approx(0.0)
    expected = 100 * (15 + sum(1 for i in range(0, N_SAMPLES, 2) if i % 4 == 0)) / N_SAMPLES
    assert gaps["first"]["normal_accuracy"] == pytest.approx(expected)
    # Errors are not answers: the scripted model's 6 failed requests are out of its accuracy.
    assert rows["scripted"]["metrics"]["accuracy"]["n"] == N_SAMPLES - 6


def test_sensitivity_and_scenarios(runs: Runs) -> None:
    tables = build_tables(load_report_data([runs.normal], db=runs.db, samples=False))
    assert tables.scenarios == ["clean", "print_attack"]
    sens = {r["label"]: r for r in tables.sensitivity}
    assert {"SQ", "TFSQ", "MCSQ"} <= set(sens["first"])
    assert set(sens["first"]["scenario_deltas"]) == {"print_attack"}
    per = tables.subtask_accuracy["first"]
    assert set(per) == {EVIL_SUBTASK, "color"} and per["color"]["n"] + per[EVIL_SUBTASK]["n"] == N_SAMPLES  # fmt: skip


def test_run_folder_and_run_id_give_the_same_report(runs: Runs) -> None:
    by_id = build_tables(load_report_data([runs.normal], db=runs.db, samples=False))
    by_dir = build_tables(load_report_data([runs.normal_dir], samples=False))
    assert by_dir.leaderboard == by_id.leaderboard
    assert by_dir.subtask_accuracy == by_id.subtask_accuracy
    # Naming one run twice reports it once.
    twice = load_report_data([runs.normal, runs.normal_dir], db=runs.db, samples=False)
    assert len(twice.runs) == 1


def test_markdown_format(runs: Runs) -> None:
    md = build_report([runs.normal, runs.blind], fmt="md", db=runs.db)
    assert "## Leaderboard" in md and "## Blind-setting gaps" in md
    assert "| 1 | " in md and "scripted [blind]" in md
    assert "<b>" not in md and "&lt;b&gt;bold" in md


def test_csv_format_is_one_tidy_table(runs: Runs) -> None:
    text = build_report([runs.normal, runs.blind], fmt="csv", db=runs.db)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == CSV_COLUMNS
    acc = {r["model"]: float(r["value"]) for r in rows if r["section"] == "leaderboard" and r["metric"] == "accuracy"}  # fmt: skip
    assert acc["first"] == pytest.approx(runs.results["models"]["first"]["metrics"]["accuracy"]["value"])  # fmt: skip
    assert {r["section"] for r in rows} >= {"leaderboard", "subtask", "scenario", "sensitivity", "blind_gap"}  # fmt: skip
    assert any(r["subtask"] == EVIL_SUBTASK for r in rows)


def test_json_format(runs: Runs) -> None:
    doc = json.loads(build_report([runs.normal, runs.blind], fmt="json", db=runs.db))
    assert doc["format"] == "lmmprobe-report" and doc["version"] == 1
    assert len(doc["leaderboard"]) == 4 and len(doc["blind_gaps"]) == 2
    assert doc["scenarios"] == ["clean", "print_attack"]


def test_apex_campaign_folder_is_recognised(runs: Runs, tmp_path: Path) -> None:
    campaign = tmp_path / "campaign"
    campaign.mkdir()
    (campaign / "report.json").write_text(
        json.dumps({"query": f"Do models see {SCRIPT}?", "experiments": [], "status": "sufficient"})
    )
    html = build_report([runs.normal, campaign], db=runs.db)
    assert f'data-path="{campaign}"' in html and SCRIPT not in html
    md = build_report([campaign], fmt="md", db=runs.db)
    assert "## APEx campaigns" in md and "0 experiment(s)" in md and SCRIPT not in md


def test_bad_references_fail_clearly(runs: Runs, tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no run 'nope'"):
        build_report(["nope"], db=runs.db)
    with pytest.raises(ReportError, match=r"neither results\.json"):
        build_report([tmp_path], db=runs.db)
    with pytest.raises(ReportError, match="no store"):
        build_report(["latest"], db=tmp_path / "missing.db")
    with pytest.raises(ValueError, match="report format"):
        build_report([runs.normal], fmt="pdf", db=runs.db)  # type: ignore[arg-type]


def test_repeats_show_instability_and_every_answer(tmp_path: Path) -> None:
    db = tmp_path / "lmmprobe.db"
    ev = evaluate(RunSpec(models=["random"], data="demo,n=8", repeats=3, db=str(db), bootstrap=0))
    data = load_report_data([ev.run_id], db=db)
    tables = build_tables(data)
    (row,) = tables.sensitivity
    expected = ev.results["models"]["random"]["metrics"]["instability"]["value"]
    assert row["instability"] == pytest.approx(expected) and expected > 0
    browser = _blob(render_html(data))["browser"]
    assert all(sorted(a[1] for a in item["ans"]) == [0, 1, 2] for item in browser["items"])


def test_a_run_without_results_is_scored_from_its_rows(tmp_path: Path) -> None:
    from lmmprobe.metrics import summarize
    from lmmprobe.run import execute_run

    db = tmp_path / "lmmprobe.db"
    outcome = execute_run(RunSpec(models=["first"], data="demo,n=12", db=str(db), bootstrap=30))
    tables = build_tables(load_report_data([outcome.run_id], db=db, samples=False))
    (row,) = tables.leaderboard
    want = summarize(outcome.models[0].scores, n_boot=30, seed=0)["accuracy"].to_dict()
    assert row["metrics"]["accuracy"] == want


def test_a_vanished_data_source_falls_back_to_the_stored_prompts(tmp_path: Path) -> None:
    data = write_hostile_dataset(tmp_path / "data", n=6)
    db = tmp_path / "lmmprobe.db"
    ev = evaluate(RunSpec(models=["first"], data=str(data), db=str(db), bootstrap=0))
    data.unlink()
    report = load_report_data([ev.run_id], db=db)
    assert any("could not be reloaded" in w for w in report.warnings)
    browser = _blob(render_html(report))["browser"]
    assert len(browser["items"]) == 6 and browser["thumbs"] == []
    assert all("Options:" in item["q"] and item["opts"] is None for item in browser["items"])
