"""``lmmprobe report``: writes the HTML page or prints md/csv/json; --definitions; clear errors."""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from tests.console import lmmprobe
from typer.testing import CliRunner

from lmmprobe.api import evaluate
from lmmprobe.cli.main import app
from lmmprobe.models.base import MODELS, Capabilities, ModelIdentity
from lmmprobe.schema import Request, Response, RunSpec

runner = CliRunner()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    db = tmp_path_factory.mktemp("cli") / "runs" / "lmmprobe.db"
    ev = evaluate(RunSpec(models=["random", "first"], data="demo,n=16", db=str(db), bootstrap=20))
    return db, ev.run_id, ev.results_json.parent


def test_html_report_is_written(run: tuple[Path, str, Path], tmp_path: Path) -> None:
    db, run_id, _ = run
    out = tmp_path / "sub" / "r.html"
    res = runner.invoke(app, ["report", run_id[:10], "--db", str(db), "--out", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and run_id in html
    assert 'id="samples"' in html


def test_latest_is_the_default_run(run: tuple[Path, str, Path], tmp_path: Path) -> None:
    db, run_id, _ = run
    res = runner.invoke(app, ["report", "--db", str(db), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["runs"][0]["run_id"] == run_id


def test_text_formats_go_to_stdout_or_a_file(run: tuple[Path, str, Path], tmp_path: Path) -> None:
    db, run_id, run_dir = run
    res = runner.invoke(app, ["report", str(run_dir), "--format", "md"])
    assert res.exit_code == 0, res.output
    assert "## Leaderboard" in res.stdout and "| 1 | " in res.stdout
    assert "random" in res.stdout and "first" in res.stdout
    out = tmp_path / "r.csv"
    res = runner.invoke(app, ["report", run_id, "--db", str(db), "-f", "csv", "-o", str(out)])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert {r["model"] for r in rows if r["section"] == "leaderboard"} == {"random", "first"}


def test_errors_exit_2_with_a_message(run: tuple[Path, str, Path], tmp_path: Path) -> None:
    db, run_id, _ = run
    res = runner.invoke(app, ["report", run_id, "--db", str(db), "--format", "pdf"])
    assert res.exit_code == 2 and "--format must be one of" in res.output
    res = runner.invoke(app, ["report", "no-such-run", "--db", str(db)])
    assert res.exit_code == 2 and "no run 'no-such-run'" in res.output
    res = runner.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "neither results.json" in res.output


def test_cards_are_shown_and_bad_cards_exit_2(run: tuple[Path, str, Path], tmp_path: Path) -> None:
    db, run_id, _ = run
    cards = tmp_path / "cards.yaml"
    cards.write_text(
        "random:\n  parameters: 7B\n  instruction_tuning: true\nfirst:\n  parameters: 1B\n"
    )
    res = runner.invoke(
        app, ["report", run_id, "--db", str(db), "-f", "json", "--cards", str(cards)]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert {c["model"]: c["groups"]["parameters"] for c in doc["cards"]} == {
        "random": "medium",
        "first": "small",
    }
    assert doc["cards_source"] == str(cards)
    (t,) = doc["group_tests"]  # medium vs small: pairs over the demo's four tasks
    assert (t["dimension"], t["a"], t["b"], t["n"]) == ("parameters", "medium", "small", 4)
    assert t["p_value"] is None or 0.0 <= t["p_value"] <= 1.0
    bad = tmp_path / "bad.yaml"
    bad.write_text("random:\n  instruction_tuning: maybe\n")
    res = runner.invoke(app, ["report", run_id, "--db", str(db), "--cards", str(bad)])
    assert res.exit_code == 2
    assert f"{bad}:2: model 'random': field 'instruction_tuning'" in res.output
    res = runner.invoke(
        app, ["report", run_id, "--db", str(db), "--cards", str(tmp_path / "no.yaml")]
    )
    assert res.exit_code == 2 and "no.yaml: file does not exist" in res.output


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("cards.yaml", "random:\n  parameters: 7B\n  modality_processing: mixed\n", 3),
        ("cards.json", '{"random": {"parameters": "7B",\n  "modality_processing": "mixed"}}', 2),
    ],
)
def test_a_bad_card_field_is_named_on_its_own_line(
    run: tuple[Path, str, Path], tmp_path: Path, name: str, text: str, line: int
) -> None:
    # Issue 34 re-test: the field on line 3 was reported on line 1, the model's line.
    db, run_id, _ = run
    cards = tmp_path / name
    cards.write_text(text)
    proc = lmmprobe("report", run_id, "--db", db, "--cards", cards, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = proc.stderr.strip().splitlines()
    assert len(said) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{cards}:{line}: model 'random': field 'modality_processing'" in said[0], said[0]


def test_the_written_report_size_is_in_human_units(
    run: tuple[Path, str, Path], tmp_path: Path
) -> None:
    # Issue 34 re-test: a 9 kB CSV was announced as "(0.0 MB)".
    db, run_id, _ = run
    out = tmp_path / "rep.csv"
    proc = lmmprobe("report", run_id, "--db", db, "--format", "csv", "-o", out, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    size = out.stat().st_size
    assert 1_000 < size < 1_000_000  # kilobytes: the case the message got wrong
    said = re.search(
        rf"wrote csv report to {re.escape(str(out))} \((\d+(?:\.\d)?) kB\)", proc.stderr
    )
    assert said is not None, proc.stderr
    assert abs(float(said.group(1)) * 1000 - size) <= 50 + size * 0.01


# ---- --definitions: lmmprobe's (default) or HEMM's released code for the dimension analysis

TASKS = {"color": 0, "count": 1, "size": 2, "shape": 3, "position": 4}
"""Catalog tasks of the dataset below -> offset of the questions a model misses."""


class Oracle:
    """Answers from the sample id (``task-index-answer``): right, except every `miss`-th question.

    Every model answers every ``color`` question right, so all tie at the maximum there: HEMM's
    min-max scaling gives 0/0 (NaN) on that task, lmmprobe's counts it 1.0.
    """

    def __init__(self, miss: int) -> None:
        self.identity = ModelIdentity(backend="report-oracle", name=f"miss{miss}")
        self.capabilities = Capabilities(max_batch_size=32)
        self.miss = miss

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for r in requests:
            task, index, answer = r.sample_id.rsplit("-", 2)
            wrong = task != "color" and (int(index) + TASKS[task]) % self.miss == 0
            letter = "AB"[(int(answer) + wrong) % 2]
            out.append(Response(key=r.key, text=f"({letter})"))
        return out

    def loglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        raise NotImplementedError


@pytest.fixture(scope="module")
def tied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A run of three oracles on five catalog tasks; all three ace ``color``."""

    @MODELS.register("report-oracle", summary="test stand-in answering from the sample id")
    def _oracle(target: str | None, options: dict[str, str]) -> Oracle:
        return Oracle(int(options.get("miss", "2")))

    root = tmp_path_factory.mktemp("tied")
    Image.new("RGB", (16, 16), (200, 30, 30)).save(root / "img.png")
    rows = [
        {
            "id": f"{task}-{i:02d}-{i % 2}",
            "images": ["img.png"],
            "question": f"{task} question {i}",
            "choices": ["one", "two"],
            "answer": i % 2,
            "metadata": {"subtask": task},
        }
        for task in TASKS
        for i in range(12)
    ]
    data = root / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = root / "lmmprobe.db"
    models = [f"report-oracle,miss={k}" for k in (2, 3, 5)]
    ev = evaluate(RunSpec(models=models, data=str(data), db=str(db), bootstrap=0))
    yield db, ev.run_id
    MODELS.unregister("report-oracle")


def _report(db: Path, run_id: str, *extra: str) -> str:
    res = runner.invoke(app, ["report", run_id, "--db", str(db), *extra])
    assert res.exit_code == 0, res.output
    return res.stdout


def test_definitions_hemm_all_row_is_np_std_of_per_model_means(tied: tuple[Path, str]) -> None:
    db, run_id = tied
    ours = json.loads(_report(db, run_id, "-f", "json"))
    hemm = json.loads(_report(db, run_id, "-f", "json", "--definitions", "hemm"))
    assert (ours["definitions"], hemm["definitions"]) == ("lmmprobe", "hemm")

    def all_row(doc: dict, category: str) -> dict:
        (row,) = [
            d
            for d in doc["dimensions"]
            if (d["dimension"], d["category"], d["model"]) == ("granularity", category, "all")
        ]
        return row

    fine = ("count", "size")  # the fine-grained tasks: no tie at the maximum
    per_model = [np.mean([v[t] for t in fine]) for v in hemm["normalized"].values()]
    assert len(per_model) == 3 and len(set(per_model)) > 1
    row = all_row(hemm, "fine")
    assert row["mean"] == pytest.approx(np.mean(per_model), abs=1e-12)
    assert row["sd"] == pytest.approx(np.std(per_model, ddof=0), abs=1e-12)
    assert row["n"] == 3  # HEMM's "all" row averages the models' means
    # lmmprobe's pools the six model-task scores, sample SD (n - 1): a different number.
    pooled = [v[t] for v in ours["normalized"].values() for t in fine]
    row = all_row(ours, "fine")
    assert row["sd"] == pytest.approx(statistics.stdev(pooled), abs=1e-12) and row["n"] == 6
    assert row["sd"] != pytest.approx(all_row(hemm, "fine")["sd"])
    # color: every model aces it. lmmprobe's counts 1.0; HEMM's is NaN (JSON null), and so
    # is every mean over the coarse tasks it belongs to.
    assert {v["color"] for v in ours["normalized"].values()} == {1.0}
    assert {v["color"] for v in hemm["normalized"].values()} == {None}
    assert all_row(hemm, "coarse")["mean"] is None
    assert all_row(ours, "coarse")["mean"] is not None
    (note,) = [n for n in hemm["dimension_notes"] if "0 by 0" in n]
    assert "every model scores the maximum on color" in note
    assert ours["dimension_notes"] == []


def test_definitions_hemm_shows_a_dash_with_its_reason(tied: tuple[Path, str]) -> None:
    db, run_id = tied
    md = _report(db, run_id, "-f", "md", "--definitions", "hemm")
    assert not re.search(r"\bnan\b", md), "a NaN printed as Python prints it"
    assert "HEMM's released code" in md and "docs/definitions.md" in md
    coarse = [ln for ln in md.splitlines() if ln.startswith("| granularity | coarse | all |")]
    assert coarse == ["| granularity | coarse | all | – | – | 3 |"]
    assert "Undefined (–): every model scores the maximum on color" in md
    # The coarse-vs-fine t-test pairs means that include color: undefined, not "no".
    (test,) = [ln for ln in md.splitlines() if ln.startswith("| granularity | fine | coarse |")]
    assert test.count("–") == 6 and "| no |" not in test
    ours = _report(db, run_id, "-f", "md")
    assert "lmmprobe's definitions" in ours and "--definitions hemm" in ours and "–" not in ours
    csv_text = _report(db, run_id, "-f", "csv", "--definitions", "hemm")
    assert not re.search(r"\bnan\b", csv_text, re.IGNORECASE)
    page = db.parent / "hemm.html"
    _report(db, run_id, "--definitions", "hemm", "-o", str(page))
    html = page.read_text(encoding="utf-8")
    dims = html.split('<section id="dimensions">', 1)[1].split("</section>", 1)[0]
    assert 'data-definitions="hemm"' in dims and "HEMM&#39;s released code" in dims
    assert "every model scores the maximum on color" in dims
    assert 'class="num undefined"' in dims and not re.search(r">\s*nan\s*<", dims)


def test_unknown_definitions_exit_2_naming_the_choices(tied: tuple[Path, str]) -> None:
    db, run_id = tied
    res = runner.invoke(app, ["report", run_id, "--db", str(db), "--definitions", "helm"])
    assert res.exit_code == 2
    assert "--definitions must be one of lmmprobe, hemm, not 'helm'" in res.output
