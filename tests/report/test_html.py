"""The cross-run report: self-contained HTML, escaping of hostile text, md/csv/json formats.

Runs are made by the real runner and store: a JSONL dataset whose questions, options and
subtask names carry HTML/script payloads, answered by a scripted external-model stand-in whose
raw answers (and error messages) carry them too; once with images and once blind. Model cards,
HEMM's t-tests and the rank agreement between benchmarks use four baseline models on two demo
data sets; the APEx section renders a real campaign made by ``lmmprobe apex``.
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
from scipy import stats
from tests.console import lmmprobe
from typer.testing import CliRunner

from lmmprobe.api import evaluate
from lmmprobe.cli.main import app
from lmmprobe.models.base import MODELS, Capabilities, ModelIdentity, RateLimitError
from lmmprobe.report import (
    ReportError,
    ReportTables,
    Results,
    build_report,
    build_tables,
    load_report_data,
    render_html,
    write_report,
)
from lmmprobe.report._embed import plotly_text, script_json
from lmmprobe.report.tables import CSV_COLUMNS
from lmmprobe.schema import Request, Response, RunSpec
from lmmprobe.store import Store

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
    results: Results


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


def test_page_has_every_section_with_content_and_chart(page: str, runs: Runs) -> None:
    ids = {a.get("id") for _, a in _tags(page)}
    for section in ("runs", "leaderboard", "dimensions", "radar", "heatmap", "sensitivity", "blind", "samples"):  # fmt: skip
        assert section in ids
    # Sections with nothing to show are left out (no cards, one data spec, no campaign).
    for section in ("agreement", "cards", "apex"):
        assert section not in ids and f'href="#{section}"' not in page
    figures = _blob(page)["figures"]
    assert {"fig-board-0", "fig-heat-0", "fig-deltas-0", "fig-blind"} <= set(figures)
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
    heat = _blob(page)["figures"]["fig-heat-0"]["data"][0]
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
    rows = {r.label: r for r in tables.leaderboard}
    assert set(rows) == {"scripted", "first", "scripted [blind]", "first [blind]"}
    assert rows["first"].metrics["accuracy"] == runs.results.models["first"].metrics["accuracy"]
    accs = [r.metrics["accuracy"].value for r in tables.leaderboard]
    assert accs == sorted(accs, reverse=True)
    gaps = {g.model: g for g in tables.blind_gaps}
    assert set(gaps) == {"scripted", "first"}
    for g in gaps.values():
        assert g.normal_accuracy is not None and g.blind_accuracy is not None
        assert g.gap == pytest.approx(g.normal_accuracy - g.blind_accuracy)
    # `first` always picks option A: right on true/false (gold "yes") and on a quarter of the
    # multiple-choice questions, with or without images.
    assert gaps["first"].gap == pytest.approx(0.0)
    expected = 100 * (15 + sum(1 for i in range(0, N_SAMPLES, 2) if i % 4 == 0)) / N_SAMPLES
    assert gaps["first"].normal_accuracy == pytest.approx(expected)
    # Errors are not answers: the scripted model's 6 failed requests are out of its accuracy.
    assert rows["scripted"].metrics["accuracy"].n == N_SAMPLES - 6


def test_sensitivity_and_scenarios(runs: Runs) -> None:
    tables = build_tables(load_report_data([runs.normal], db=runs.db, samples=False))
    assert tables.scenarios == ["clean", "print_attack"]
    sens = {r.label: r for r in tables.sensitivity}
    assert None not in (sens["first"].SQ, sens["first"].TFSQ, sens["first"].MCSQ)
    assert set(sens["first"].scenario_deltas) == {"print_attack"}
    per = tables.subtask_accuracy["first"]
    assert set(per) == {EVIL_SUBTASK, "color"} and per["color"].n + per[EVIL_SUBTASK].n == N_SAMPLES


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
    assert acc["first"] == pytest.approx(runs.results.models["first"].metrics["accuracy"].value)
    assert {r["section"] for r in rows} >= {"leaderboard", "subtask", "scenario", "sensitivity", "blind_gap"}  # fmt: skip
    assert any(r["subtask"] == EVIL_SUBTASK for r in rows)


def test_json_format(runs: Runs) -> None:
    doc = json.loads(build_report([runs.normal, runs.blind], fmt="json", db=runs.db))
    assert doc["format"] == "lmmprobe-report" and doc["version"] == 2
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
    expected = ev.results.models["random"].metrics["instability"].value
    assert expected is not None and expected > 0
    assert row.instability == pytest.approx(expected)
    browser = _blob(render_html(data))["browser"]
    assert all(sorted(a[1] for a in item["ans"]) == [0, 1, 2] for item in browser["items"])


def test_a_run_without_results_is_scored_from_its_rows(tmp_path: Path) -> None:
    from lmmprobe.metrics import summarize
    from lmmprobe.run import execute_run

    db = tmp_path / "lmmprobe.db"
    outcome = execute_run(RunSpec(models=["first"], data="demo,n=12", db=str(db), bootstrap=30))
    tables = build_tables(load_report_data([outcome.run_id], db=db, samples=False))
    (row,) = tables.leaderboard
    with Store(db) as store:  # a run keeps no Scores: they are in the store
        scores = store.model_scores(outcome.run_id, "first")
    want = summarize(scores, n_boot=30, seed=0)["accuracy"]
    assert row.metrics["accuracy"] == want


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


# ---- model cards, HEMM's t-tests, agreement between benchmarks

MODELS4 = ["random", "random,seed=1", "random,seed=2", "first"]
CARDS = f"""
random:
  parameters: 7B
  instruction_tuning: true
  training_type: modular
"random,seed=1":
  parameters: 13B
  instruction_tuning: true
"random,seed=2":
  parameters: 2B
  instruction_tuning: false
first:
  parameters: 1.5B
  instruction_tuning: false
  notes: "{SCRIPT}"
"""


@dataclass
class Bench:
    db: Path
    a: str
    b: str
    blind: str
    cards: Path


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    root = tmp_path_factory.mktemp("bench")
    db = root / "lmmprobe.db"
    spec = RunSpec(models=MODELS4, data="demo,n=40,size=32", db=str(db), bootstrap=20)
    a = evaluate(spec)
    blind = evaluate(spec, formulate={"blind": True})
    b = evaluate(spec.model_copy(update={"data": "demo,n=40,seed=3,size=32"}))
    cards = root / "cards.yaml"
    cards.write_text(CARDS, encoding="utf-8")
    return Bench(db, a.run_id, b.run_id, blind.run_id, cards)


def _by_model(tables: ReportTables, run_id: str) -> dict[str, float]:
    return {
        r.model: value
        for r in tables.leaderboard
        if r.run_id == run_id and (value := r.metrics["accuracy"].value) is not None
    }


def test_rank_agreement_between_runs_on_different_data(bench: Bench) -> None:
    refs = [bench.a, bench.b, bench.blind]
    tables = build_tables(load_report_data(refs, db=bench.db, samples=False))
    # The blind run is on the same data as run a, and without images: not a second benchmark.
    (row,) = tables.rank_agreement
    assert (row.run_a, row.run_b, row.metric) == (bench.a, bench.b, "accuracy")
    assert row.n == 4 and row.models == sorted(MODELS4)
    x, y = _by_model(tables, bench.a), _by_model(tables, bench.b)
    xs, ys = [x[m] for m in row.models], [y[m] for m in row.models]
    assert row.spearman_rho == pytest.approx(stats.spearmanr(xs, ys).statistic)
    assert row.kendall_p == pytest.approx(stats.kendalltau(xs, ys).pvalue)
    # One run, or runs sharing fewer than 3 models, give no table (and say why).
    assert (
        build_tables(load_report_data([bench.a], db=bench.db, samples=False)).rank_agreement == []
    )


def test_rank_agreement_needs_three_shared_models(bench: Bench, tmp_path: Path) -> None:
    db = tmp_path / "lmmprobe.db"
    two = evaluate(RunSpec(models=["random", "first"], data="demo,n=12", db=str(db), bootstrap=0))
    other = evaluate(
        RunSpec(models=["random", "first"], data="demo,n=12,seed=5", db=str(db), bootstrap=0)
    )
    tables = build_tables(load_report_data([two.run_id, other.run_id], db=db, samples=False))
    assert tables.rank_agreement == []
    assert tables.agreement_note and "2 shared model(s)" in tables.agreement_note


def test_category_tests_pair_over_models(bench: Bench) -> None:
    tables = build_tables(load_report_data([bench.a, bench.blind], db=bench.db, samples=False))
    # The demo's count task is fine-grained, color/shape/color_tf coarse: one testable pair.
    (t,) = tables.category_tests
    assert (t.dimension, t.a, t.b) == ("granularity", "fine", "coarse")
    assert t.units == sorted(MODELS4) and t.n == 4  # the blind run is not a model
    fine = [tables.normalized[m]["count"] for m in t.units]
    coarse = [
        sum(tables.normalized[m][k] for k in ("color", "shape", "color_tf")) / 3 for m in t.units
    ]
    want = stats.ttest_rel(fine, coarse)
    assert t.statistic == pytest.approx(want.statistic)
    assert t.p_value == pytest.approx(want.pvalue)
    assert t.significant == (want.pvalue < 0.05)


def test_model_cards_and_group_tests(bench: Bench) -> None:
    data = load_report_data([bench.a, bench.b, bench.blind], db=bench.db, cards=bench.cards)
    tables = build_tables(data)
    cards = {c.model: c for c in tables.cards}
    assert set(cards) == set(MODELS4) and tables.cards_source == str(bench.cards)
    assert cards["random"].groups["parameters"] == "medium"
    assert cards["first"].groups["parameters"] == "small"
    assert cards["random"].groups["instruction_tuning"] == "yes"
    assert cards["random"].parameter_count == 7_000_000_000
    assert len(cards["random"].entries) == 3 and "random [blind]" in cards["random"].entries
    tests = {(t.dimension, t.a, t.b): t for t in tables.group_tests}
    # Groups with two or more values: parameters (medium/small), instruction tuning (no/yes);
    # training type has only one model with it known, so one group: no test.
    assert set(tests) == {("parameters", "medium", "small"), ("instruction_tuning", "no", "yes")}
    t = tests[("instruction_tuning", "no", "yes")]
    assert t.models_a == ["first", "random,seed=2"] and t.models_b == ["random", "random,seed=1"]
    # Pairs are tasks: each side is the mean over its models of their normalized score, a
    # model's score being its mean over the two runs with images (the blind run is left out).
    labels: dict[str, list[str]] = {}
    for e in data.entries:
        if not e.run.blind:
            labels.setdefault(e.model, []).append(e.label)

    def score(model: str, task: str) -> float:
        values = [tables.normalized[lab][task] for lab in labels[model]]
        return sum(values) / len(values)

    tasks = t.units
    assert tasks == ["color", "color_tf", "count", "shape"]
    side_a = [sum(score(m, k) for m in t.models_a) / 2 for k in tasks]
    side_b = [sum(score(m, k) for m in t.models_b) / 2 for k in tasks]
    want = stats.ttest_rel(side_a, side_b)
    assert t.statistic == pytest.approx(want.statistic)
    assert t.p_value == pytest.approx(want.pvalue) and t.n == 4


def test_cards_in_every_format(bench: Bench) -> None:
    refs = [bench.a, bench.b]
    html = build_report(refs, db=bench.db, cards=bench.cards)
    section = html.split('<section id="cards">', 1)[1].split("</section>", 1)[0]
    assert 'id="card-table"' in section and "instruction tuning" in section
    assert "Paired t-tests between model groups" in section
    assert SCRIPT not in html and "&lt;script&gt;window.__xss=1&lt;/script&gt;" in section
    dims = html.split('<section id="dimensions">', 1)[1].split("</section>", 1)[0]
    block = dims.split('data-dimension="granularity"', 1)[1].split("</table>", 1)[0]
    assert "fine" in block and "coarse" in block and "ttests" in block  # next to its bars
    assert "Spearman" in html.split('<section id="agreement">', 1)[1].split("</section>", 1)[0]

    md = build_report(refs, fmt="md", db=bench.db, cards=bench.cards)
    for heading in ("## Model cards", "### Paired t-tests between model groups", "### Paired t-tests between task categories", "## Agreement between benchmarks"):  # fmt: skip
        assert heading in md
    assert SCRIPT not in md

    rows = list(csv.DictReader(io.StringIO(build_report(refs, fmt="csv", db=bench.db, cards=bench.cards))))  # fmt: skip
    sections = {r["section"] for r in rows}
    assert {"model_card", "group_ttest", "category_ttest", "rank_agreement"} <= sections
    p = [r for r in rows if r["section"] == "group_ttest" and r["metric"] == "p_value"]
    assert {r["dimension"] for r in p} == {"parameters", "instruction_tuning"}
    assert {r["value"] for r in rows if r["section"] == "model_card" and r["model"] == "first" and r["dimension"] == "parameters"} == {"small"}  # fmt: skip

    doc = json.loads(build_report(refs, fmt="json", db=bench.db, cards=bench.cards))
    assert len(doc["group_tests"]) == 2 and len(doc["cards"]) == 4
    assert len(doc["rank_agreement"]) == 1 and doc["category_tests"]


def test_hemm_definitions_through_the_python_api(bench: Bench, tmp_path: Path) -> None:
    """write_report/build_report pass `definitions` to the t-tests and dimension means."""
    refs = [bench.a]
    ours = json.loads(build_report(refs, fmt="json", db=bench.db, cards=bench.cards))
    out = write_report(
        refs, tmp_path / "h.json", fmt="json", db=bench.db, cards=bench.cards, definitions="hemm"
    )
    hemm = json.loads(out.read_text(encoding="utf-8"))
    assert (ours["definitions"], hemm["definitions"]) == ("lmmprobe", "hemm")
    # The t-tests pair the same units either way; on these scores both give the same test.
    for key in ("category_tests", "group_tests"):
        assert [t["units"] for t in hemm[key]] != [] and {
            (t["a"], t["b"], t["n"]) for t in hemm[key]
        } == {(t["a"], t["b"], t["n"]) for t in ours[key]}
        for a, b in zip(ours[key], hemm[key], strict=True):
            assert b["statistic"] == pytest.approx(a["statistic"], rel=1e-9, abs=1e-12)
    # HEMM's "all" rows average the four models' means; lmmprobe's pool model-task scores.
    alls = [d for d in hemm["dimensions"] if d["model"] == "all"]
    assert alls and {d["n"] for d in alls} == {4} and {d["definitions"] for d in alls} == {"hemm"}
    html = build_report(refs, db=bench.db, definitions="hemm")
    assert 'data-definitions="hemm"' in html and "<code>--definitions lmmprobe</code>" in html
    with pytest.raises(ValueError, match="definitions must be one of lmmprobe, hemm"):
        build_report(refs, fmt="json", db=bench.db, definitions="helm")  # type: ignore[arg-type]


def test_cards_without_enough_groups_say_why(runs: Runs, tmp_path: Path) -> None:
    cards = tmp_path / "cards.yaml"
    cards.write_text("first:\n  instruction_tuning: true\nnobody:\n  parameters: 3B\n")
    data = load_report_data([runs.normal], db=runs.db, cards=cards, samples=False)
    assert any("no model card" in w and "scripted" in w for w in data.warnings)
    assert any("match no model" in w and "nobody" in w for w in data.warnings)
    tables = build_tables(data)
    assert [c.model for c in tables.cards] == ["first"]
    assert tables.group_tests == [] and "no model-group t-tests" in (tables.groups_note or "")


def test_bad_card_files_name_file_and_field(runs: Runs, tmp_path: Path) -> None:
    bad = tmp_path / "cards.yaml"
    bad.write_text("first:\n  parameters: 2B\nrandom:\n  training_type: sideways\n")
    with pytest.raises(ReportError, match=r"cards\.yaml:4: model 'random': field 'training_type'"):
        build_report([runs.normal], db=runs.db, cards=bad)
    with pytest.raises(ReportError, match="does not exist"):
        build_report([runs.normal], db=runs.db, cards=tmp_path / "missing.yaml")


# ---- APEx: a real campaign, rendered in the report

APEX_QUERY = "Can models identify rotated images?"


def make_campaign(root: Path) -> Path:
    """A small real campaign: rules orchestrator, the two baselines, 2 experiments."""
    out = root / "campaign"
    res = CliRunner().invoke(
        app,
        ["apex", APEX_QUERY, "-m", "random", "-m", "first", "--orchestrator", "rules",
         "--images-per-answer", "4", "--max-experiments", "2", "--image-size", "32",
         "--bootstrap", "50", "--out", str(out), "--cache-dir", str(root / "cache"), "-q"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    return out


def test_a_real_apex_campaign_in_the_report(runs: Runs, tmp_path: Path) -> None:
    import base64

    campaign = make_campaign(tmp_path)
    report = json.loads((campaign / "report.json").read_text(encoding="utf-8"))
    assert len(report["experiments"]) == 2
    out = tmp_path / "report.html"
    res = CliRunner().invoke(
        app, ["report", runs.normal, str(campaign), "--db", str(runs.db), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    section = html.split('<section id="apex">', 1)[1].split('<section id="samples">', 1)[0]
    assert APEX_QUERY in section and "1 APEx campaign(s)" in html
    tags = _tags(section)
    for i, exp in enumerate(report["experiments"], 1):
        assert ("section", {"class": "apex-experiment", "id": f"apex-e{i}"}) in tags
        assert exp["experiment"]["question"] in section
        # The results table: one row per model with its accuracy and verdict.
        for r in exp["results"]["models"]:
            acc = f"{r['accuracy']['value']:.3f} [{r['accuracy']['low']:.2f}"
            assert f"<td>{r['model']}</td><td>{r['method']}</td><td>{acc}" in section
    assert section.count("<th>accuracy [95% CI]</th>") == 2
    # Every thumbnail the campaign saved is inlined as the PNG file itself.
    files = [
        f for e in report["experiments"] for v in e["dataset"]["thumbnails"].values() for f in v
    ]
    imgs = [a["src"] for t, a in tags if t == "img"]
    assert files and len(imgs) == len(files)
    first = base64.b64decode(imgs[0].split(",", 1)[1])
    assert first == (campaign / files[0]).read_bytes()
    assert all(src.startswith("data:image/png;base64,") for src in imgs)
    md = CliRunner().invoke(app, ["report", str(campaign), "--format", "md"])
    assert md.exit_code == 0 and "2 experiment(s)" in md.stdout


def test_data_change_is_checked_only_against_fingerprints_of_this_format(tmp_path: Path) -> None:
    db = tmp_path / "lmmprobe.db"
    ev = evaluate(RunSpec(models=["first"], data="demo,n=6", db=str(db), bootstrap=0))
    assert not load_report_data([ev.run_id], db=db).warnings  # same data, same format
    with Store(db) as store:
        run = store.get_run(ev.run_id)
        manifest = run["manifest"]
        manifest["data"]["fingerprint"] = "0" * 64
        store.update_run(ev.run_id, manifest=manifest)
    assert any("changed since run" in w for w in load_report_data([ev.run_id], db=db).warnings)
    with Store(db) as store:
        del manifest["data"]["fingerprint_version"]  # written before versions were recorded
        store.update_run(ev.run_id, manifest=manifest)
    warnings = load_report_data([ev.run_id], db=db).warnings
    assert any("older lmmprobe" in w for w in warnings)
    assert not any("changed since run" in w for w in warnings)


def test_a_list_values_items_are_in_the_browsers_metadata_line(tmp_path: Path) -> None:
    # A `--by` list value (MathVista's skills) puts the row in each item's group; the sample
    # browser's line of metadata (what its search reads) left lists out, so searching
    # "geometry" did not find a row listing it among its skills.
    Image.new("RGB", (8, 8), "red").save(tmp_path / "r.png")
    skills: list[object] = [["algebra", "geometry"], "algebra", [1, True], [{"nested": 1}], []]
    lines = [
        json.dumps({"id": f"q{i}", "images": ["r.png"], "question": "Colour?",
                    "choices": ["red", "blue"], "answer": 0, "metadata": {"skills": s}})
        for i, s in enumerate(skills)
    ]  # fmt: skip
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    db = tmp_path / "db"
    done = lmmprobe("run", "-m", "first", "-d", tmp_path / "d.jsonl", "--by", "skills",
                    "--db", db, "--out", tmp_path / "o", "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    made = lmmprobe("report", "--db", db, "-o", tmp_path / "r.html")
    assert made.returncode == 0, made.stderr
    items = _blob((tmp_path / "r.html").read_text(encoding="utf-8"))["browser"]["items"]
    meta = {item["id"]: item["meta"] for item in items}
    assert meta == {
        "q0": "skills: algebra, geometry",
        "q1": "skills: algebra",
        "q2": "skills: 1, True",
        "q3": "",  # nested values would swamp the line
        "q4": "",
    }
