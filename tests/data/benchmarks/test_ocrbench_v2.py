"""OCRBench v2 by name: the release's JSON layout read, and a console run scored as its scripts.

The items and the scores OCRBench v2's own eval.py gave their answers are the parity fixtures
of ``ocrbench_v2_parity/`` (see its README). The console test writes them as the release lays
them out (``OCRBench_v2.json`` beside the image folders), runs ``lmmprobe run`` with the fake
OpenAI server answering each question with its fixture answer, and checks results.json's
figures against get_score.py's rule applied to eval.py's recorded scores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import tiny_png

from lmmprobe.data.base import load_source
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.metrics.ocrbench_v2 import group_of
from lmmprobe.testing.openai_server import FakeOpenAIServer

HERE = Path(__file__).parent / "ocrbench_v2_parity"
ITEMS: list[dict[str, Any]] = json.loads((HERE / "items.json").read_text(encoding="utf-8"))
EXPECTED = {s["id"]: s for s in json.loads((HERE / "expected.json").read_text())["scores"]}


def _copy(folder: Path, items: list[dict[str, Any]]) -> Path:
    """The release's layout; each question tagged ``#qID.`` so the fake server can answer it."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for item in items:
        row = {k: v for k, v in item.items() if k != "predict"}
        row["image_path"] = row["image_path"].replace(".jpg", ".png")
        row["question"] = f"{row['question']} #q{row['id']}."
        target = folder / row["image_path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(tiny_png((row["id"] % 256, 60, 90)))
        rows.append(row)
    (folder / "OCRBench_v2.json").write_text(json.dumps(rows, ensure_ascii=False))
    return folder


def test_it_is_registered_with_both_figures_and_a_drive_fetch() -> None:
    b = BENCHMARKS.get("ocrbench-v2")
    assert b.metric == "ocrbench_v2" and b.layout == "files"
    assert "gdown" in b.fetch and "1Hk1TMu--7nr5vJ7iaNwMQZ_Iw9W_KI3C" in b.fetch
    assert any("ocrbench_v2_cn" in note for note in b.notes)


def test_the_release_layout_loads_with_its_fields_kept(tmp_path: Path) -> None:
    folder = _copy(tmp_path / "ocrbench-v2", ITEMS)
    result = load_source(f"ocrbench-v2,path={folder}")
    assert result.problems == []
    assert len(result.samples) == len(ITEMS)
    by_id = {s.id.rsplit("/", 1)[-1]: s for s in result.samples}
    chart = next(i for i in ITEMS if i["type"] == "chart parsing en")
    sample = by_id[str(chart["id"])]
    assert sample.metadata["type"] == "chart parsing en"
    assert sample.metadata["group"] == "en/element_parsing"
    # The dict answer is kept as released, for the rule to read.
    assert json.loads(sample.metadata["ocrbench_v2"])["answers"] == chart["answers"]
    assert sample.question.startswith(chart["question"])


def test_bad_rows_are_named_and_the_rest_load(tmp_path: Path) -> None:
    good = ITEMS[0]
    unknown = {**ITEMS[1], "type": "poetry en"}
    bad_eval = {**ITEMS[2], "eval": "fuzzy"}
    folder = _copy(tmp_path / "ocrbench-v2", [unknown, bad_eval, good])
    result = load_source(f"ocrbench-v2,path={folder}")
    assert [s.id for s in result.samples] == [f"ocrbench-v2/{good['id']}"]
    problems = "\n".join(str(p) for p in result.problems)
    assert "type: not one of OCRBench v2's 30 task types" in problems
    assert "eval: not an evaluation method eval.py knows" in problems


def test_the_console_run_gives_get_scores_figures(tmp_path: Path) -> None:
    for extra in ("apted", "lxml", "zss", "jieba"):
        pytest.importorskip(extra, reason="OCRBench v2's rules need the ocrbench extra")
    nltk = pytest.importorskip("nltk", reason="OCRBench v2's rules need the ocrbench extra")
    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        pytest.skip("NLTK's WordNet corpus is not installed")
    # The fake server takes an empty completion as a failed call: those answers are left out.
    items = [i for i in ITEMS if i["predict"]]
    folder = _copy(tmp_path / "ocrbench-v2", items)
    out = tmp_path / "out"
    table = [(f"#q{i['id']}.", i["predict"]) for i in items]
    with FakeOpenAIServer(reply_table=table) as server:
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data",
            f"ocrbench-v2,path={folder}", "-q", "--db", tmp_path / "db", "--out", out,
            "--bootstrap", "0", "--by", "group", "--by", "type",
            OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    groups: dict[tuple[str, str], list[float]] = {}
    for item in items:
        want = EXPECTED[item["id"]]
        if want["ignore"] != "True":
            groups.setdefault(group_of(item["type"]), []).append(want["score"])

    def overall(lang: str) -> float:
        means = [sum(v) / len(v) for (g_lang, _), v in groups.items() if g_lang == lang]
        return sum(means) / len(means)

    metrics = model["metrics"]
    assert metrics["ocrbench_v2"]["value"] == pytest.approx(overall("en"), abs=1e-12)
    assert metrics["ocrbench_v2_cn"]["value"] == pytest.approx(overall("cn"), abs=1e-12)
    by_group = model["breakdown"]["group"]
    for (lang, group), scores in groups.items():
        figure = "ocrbench_v2" if lang == "en" else "ocrbench_v2_cn"
        got = by_group[f"{lang}/{group}"][figure]["value"]
        assert got == pytest.approx(sum(scores) / len(scores), abs=1e-12), (lang, group)


def test_a_missing_library_refuses_the_figure_naming_it(tmp_path: Path) -> None:
    # Page OCR needs NLTK's WordNet: an empty NLTK_DATA and a home without ~/nltk_data (or no
    # nltk at all) leave the English figure refused with the line saying what to install; no figure over fewer types.
    items = [i for i in ITEMS if i["type"] in ("full-page OCR en", "text recognition en")]
    items = [i for i in items if i["predict"]]
    folder = _copy(tmp_path / "ocrbench-v2", items)
    out = tmp_path / "out"
    table = [(f"#q{i['id']}.", i["predict"]) for i in items]
    empty = tmp_path / "nltk_data"
    empty.mkdir()
    with FakeOpenAIServer(reply_table=table) as server:
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data",
            f"ocrbench-v2,path={folder}", "--db", tmp_path / "db", "--out", out,
            "--bootstrap", "0", OPENAI_API_KEY="test-key", NLTK_DATA=str(empty),
            HOME=str(tmp_path),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    assert "OCRBench v2 EN overall score refused" in proc.stderr
    assert "lmmprobe[ocrbench]" in proc.stderr or "nltk.downloader wordnet" in proc.stderr
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    assert model["metrics"].get("ocrbench_v2", {}).get("value") is None


def test_runaway_answers_are_scored_in_bounded_time_with_a_warning(tmp_path: Path) -> None:
    # A model that repeats itself until its tokens run out: a 6,000-line document and a
    # 3,000-row HTML table. OCRBench v2's tree edit distances (Zhang-Shasha, APTED) would take
    # hours on them; past MAX_TREE_NODES / MAX_TREE_PAIRS each scores 0 with a line naming the
    # sample and the bound, and the run ends with its figures. A reference whose listed
    # values combine into 2**40 dicts (a hostile data file) is named the same way.
    for extra in ("apted", "lxml", "zss"):
        pytest.importorskip(extra, reason="OCRBench v2's rules need the ocrbench extra")
    doc = next(i for i in ITEMS if i["type"] == "document parsing en" and i["predict"])
    table = next(i for i in ITEMS if i["type"] == "table parsing en" and i["predict"])
    kie = {**next(i for i in ITEMS if i["type"] == "key information extraction en"), "id": 9001}
    kie["answers"] = [{f"k{n}": ["a", "b"] for n in range(40)}]
    # Values given as texts: the scripts' product takes each one's characters (10**12 dicts).
    texts = {**kie, "id": 9003, "answers": [{f"k{n}": "abcdefghij" for n in range(12)}]}
    row = "<tr><td>tea</td><td>3.50</td></tr>"
    replies = [
        (f"#q{doc['id']}.", "\n".join(f"line {n} of the page" for n in range(6_000))),
        (f"#q{table['id']}.", "<table>" + row * 3_000 + "</table>"),
        (f"#q{kie['id']}.", '{"k0": "a"}'),
        (f"#q{texts['id']}.", '{"k0": "a"}'),
    ]
    folder = _copy(tmp_path / "ocrbench-v2", [doc, table, kie, texts])
    out = tmp_path / "out"
    with FakeOpenAIServer(reply_table=replies) as server:
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data",
            f"ocrbench-v2,path={folder}", "-q", "--db", tmp_path / "db", "--out", out,
            "--bootstrap", "0", OPENAI_API_KEY="test-key", timeout=120,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    err = " ".join(proc.stderr.split())
    assert "a document of 6,002 nodes against a reference of 7: past the bound of 4,000" in err
    assert "a table of 9,001 nodes against a reference of 7: past the bound of 4,000" in err
    assert err.count("combine into more than 4,096 dicts") == 2
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    assert model["metrics"]["ocrbench_v2"]["value"] == 0.0


def test_a_chinese_key_information_reference_that_is_no_dict_is_its_rows_line(
    tmp_path: Path,
) -> None:
    # eval.py reads such a reference with ast.literal_eval: a damaged one (a brace missing)
    # raised SyntaxError in scoring, past the rule-failure lines, and the run failed after
    # every answer was paid for. It is now that row's one line at load; the rest are scored.
    good = next(i for i in ITEMS if i["type"] == "key information extraction cn" and i["predict"])
    broken = {**good, "id": 9002, "answers": ["{'公司': '旧城'"]}
    folder = _copy(tmp_path / "ocrbench-v2", [good, broken])
    out = tmp_path / "out"
    table = [(f"#q{i['id']}.", good["predict"]) for i in (good, broken)]
    with FakeOpenAIServer(reply_table=table) as server:
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data",
            f"ocrbench-v2,path={folder}", "-q", "--db", tmp_path / "db", "--out", out,
            "--bootstrap", "0", OPENAI_API_KEY="test-key",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "answers: the reference is not a Python dict literal: \"{'公司': '旧城'\"" in proc.stderr
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    assert model["metrics"]["ocrbench_v2_cn"]["value"] == EXPECTED[good["id"]]["score"]
