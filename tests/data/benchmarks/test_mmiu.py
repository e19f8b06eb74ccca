"""MMIU by name: its release layout, the authors' prompt, evaluate.py's reading and Overall.

Parity: ``mmiu_parity/`` holds 42 questions in the release's row layout, the model's answers
and a scripted judge's replies (``make_inputs.py``), what the authors' inference script sent
for each (``prompts.json``, by ``make_prompts.py``: the text and the images' order) and what
OpenGVLab/MMIU's own ``evaluate.py`` and ``evaluate_correct.py`` did with the answers
(``expected.json``, by ``make_expected.py``: each answer's choice, each judge prompt, each
task's accuracy and the Overall). The console test writes the questions as the release lays them out (``all.parquet``
and the relationship folders, images generated) and runs ``lmmprobe run`` with the fake OpenAI
server as the model and as the judge.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import tiny_png

from lmmprobe.data.base import DataError, load_source
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.formulate import formulate
from lmmprobe.judge.protocol import JudgeItem
from lmmprobe.judge.protocols.mmiu_choice import MMIU_CHOICE
from lmmprobe.metrics.mmiu import mmiu_correct, mmiu_prediction, mmiu_rule
from lmmprobe.schema import Score
from lmmprobe.schema.image import MAX_IMAGES_PER_SAMPLE
from lmmprobe.testing.openai_server import FakeOpenAIServer

HERE = Path(__file__).parent / "mmiu_parity"
ROWS: list[dict[str, Any]] = json.loads((HERE / "dataset.json").read_text(encoding="utf-8"))
ANSWERS: dict[str, str] = json.loads((HERE / "answers.json").read_text(encoding="utf-8"))
JUDGE: dict[str, str] = json.loads((HERE / "judge.json").read_text(encoding="utf-8"))
EXPECTED = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
PROMPTS = json.loads((HERE / "prompts.json").read_text(encoding="utf-8"))


def _tag(text: str) -> str:
    found = re.search(r"#(t\d+)", text)
    assert found is not None, text
    return found.group(1)


def _copy(folder: Path, rows: list[dict[str, Any]]) -> Path:
    """The release's layout: ``all.parquet`` and each image under its relationship folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, row in enumerate(rows):
        for k, path in enumerate(row["input_image_path"]):
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tiny_png((n * 5 % 256, 40 * k % 256, 90)))
    pq.write_table(pa.Table.from_pylist(rows), folder / "all.parquet")
    return folder


def _samples(folder: Path) -> dict[str, Any]:
    result = load_source(f"mmiu,path={folder}")
    assert result.problems == []
    return {_tag(s.question): s for s in result.samples}


def test_it_is_registered_multi_image_with_its_judge_and_pinned_copy() -> None:
    b = BENCHMARKS.get("mmiu")
    assert (b.metric, b.judge, b.split, b.size) == ("mmiu_accuracy", "mmiu-choice", "test", 11698)
    assert b.hub_id == "FanqingM/MMIU-Benchmark" and b.revision and len(b.revision) == 40
    assert "multi-image" in b.groups and "test_qwen3_vl.py" in b.prompt.source
    assert "--include all.parquet" in b.fetch and 'unzip -qo "$z" -d "${z%.zip}"' in b.fetch


def test_prompts_images_and_readings_equal_mmius_own_code(tmp_path: Path) -> None:
    samples = _samples(_copy(tmp_path / "mmiu", ROWS))
    for row in ROWS:
        tag = _tag(row["question"])
        s = samples[tag]
        # The authors' inference script's text and image order (prompts.json: its run).
        sent = PROMPTS["rows"][tag]
        request = formulate(s)
        assert request.prompt == sent["text"]
        assert sent["parts"] == ["image_url"] * len(sent["images"]) + ["text"]
        assert [p.type for m in request.messages for p in m.content] == (
            ["image"] * len(sent["images"]) + ["text"]
        )
        greens = [image.load().convert("RGB").getpixel((4, 4))[1] for image in s.images]
        assert greens == [40 * k % 256 for k in sent["images"]]
        assert s.metadata["relationship"] == row["input_image_path"][0].split("/")[1]
        # evaluate.py's reading: its rule, else its judge prompt (byte for byte) and the reply.
        expected = EXPECTED["rows"][tag]
        score = Score(model="m", sample_id=s.id, repeat=0, key="k", stage="unparsed",
                      gold=[row["output"]], gold_text=row["output"])  # fmt: skip
        item = JudgeItem(sample=s, answer=ANSWERS[tag].strip(), score=score)
        rule = MMIU_CHOICE.rule(item)
        if expected["judge_prompt"] is None:
            assert rule is not None and rule.reading == expected["choice"], tag
        else:
            assert rule is None, tag
            assert MMIU_CHOICE.prompt(item).user == expected["judge_prompt"]
            if expected["choice"] != "GPT error":
                read = MMIU_CHOICE.read(JUDGE[tag], item)
                assert read is not None and read.reading == expected["choice"], tag


def test_an_empty_answer_is_z_and_an_empty_judge_reply_a_right_choice() -> None:
    # evaluate.py: '' reads as Z without the judge; the judge's '' is the choice, and
    # evaluate_correct.py's `'' in gt` counts it right. (lmmprobe's backends report an empty
    # completion as a failed call, empty_response, so a live judge's '' is unjudged instead.)
    assert mmiu_rule("") == "Z" and mmiu_rule(" image none ") == "Z"
    assert mmiu_correct("Z", "A") is False and mmiu_correct("", "A") is True
    assert mmiu_rule("( d )") == "d" and mmiu_correct("d", "D") is True
    assert mmiu_rule("((") is None and mmiu_prediction("((") == ""


def _table() -> list[tuple[str, str]]:
    # The judge's needle is in evaluate.py's prompt only ("QUESTION?\nOptions: "), the model's
    # in the question its prompt carries.
    judged = [(f"#{t}?\nOptions: ", JUDGE[t]) for t in ANSWERS]
    return [*judged, *((f"#{t}\n", a) for t, a in ANSWERS.items())]


def test_the_console_run_gives_evaluate_corrects_figures(tmp_path: Path) -> None:
    folder = _copy(tmp_path / "mmiu", ROWS)
    out = tmp_path / "out"
    with FakeOpenAIServer(reply_table=_table()) as server:
        url = server.base_url
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", f"mmiu,path={folder}", "-q",
            "--db", tmp_path / "db", "--out", out, "--judge", f"openai:judge@{url}",
            "--bootstrap", "0", "--by", "task", "--by", "relationship",
            OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        asked = sum(r["judge_prompt"] is not None for r in EXPECTED["rows"].values())
        assert server.requests_total == len(ROWS) + asked
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    failed = [t for t, r in EXPECTED["rows"].items() if r["choice"] == "GPT error"]
    assert model["judge"]["decided"] == {
        "rule": len(ROWS) - asked,
        "judge": asked - len(failed),
        "unjudged": len(failed),
    }
    # evaluate.py's prompts, as the judge received them.
    with sqlite3.connect(tmp_path / "db") as db:
        prompts = [p for (p,) in db.execute("SELECT prompt FROM responses") if "Your output: " in p]
    want = [r["judge_prompt"] for r in EXPECTED["rows"].values() if r["judge_prompt"]]
    assert sorted(prompts) == sorted(want)
    # A failed call is a GPT error there, left out of its task's count: the judged-only figure.
    metrics = model["metrics"]
    assert metrics["mmiu_accuracy_judged_only"]["value"] == pytest.approx(
        EXPECTED["Overall"], abs=1e-12
    )
    by_task = model["breakdown"]["task"]
    assert {
        t: v["mmiu_accuracy_judged_only"]["value"] if "mmiu_accuracy_judged_only" in v
        else v["mmiu_accuracy"]["value"] for t, v in by_task.items()
    } == pytest.approx(EXPECTED["tasks"], abs=1e-12)  # fmt: skip
    # The headline counts those answers wrong, every question in its task's denominator.
    gold = {_tag(r["question"]): r for r in ROWS}
    tasks: dict[str, list[float]] = {}
    for tag, r in EXPECTED["rows"].items():
        right = r["choice"] != "GPT error" and mmiu_correct(r["choice"], gold[tag]["output"])
        tasks.setdefault(gold[tag]["task"], []).append(float(right))
    headline = sum(sum(v) / len(v) for v in tasks.values()) / len(tasks)
    assert metrics["mmiu_accuracy"]["value"] == pytest.approx(headline, abs=1e-12)
    assert metrics["mmiu_accuracy"]["n"] == len(ROWS)
    # The paper's relationships: each the mean of its tasks' accuracies.
    rel_tasks: dict[str, set[str]] = {}
    for r in ROWS:
        rel_tasks.setdefault(r["input_image_path"][0].split("/")[1], set()).add(r["task"])
    by_rel = model["breakdown"]["relationship"]
    assert {k: v["mmiu_accuracy"]["value"] for k, v in by_rel.items()} == pytest.approx({
        rel: sum(sum(tasks[t]) / len(tasks[t]) for t in ts) / len(ts)
        for rel, ts in rel_tasks.items()
    }, abs=1e-12)  # fmt: skip


def test_without_a_judge_the_rule_reads_and_the_rest_are_wrong(tmp_path: Path) -> None:
    folder = _copy(tmp_path / "mmiu", ROWS)
    out = tmp_path / "out"
    with FakeOpenAIServer(reply_table=_table()) as server:
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", f"mmiu,path={folder}",
            "-q", "--db", tmp_path / "db", "--out", out, "--bootstrap", "0",
            OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert server.requests_total == len(ROWS)
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    gold = {_tag(r["question"]): r for r in ROWS}
    tasks: dict[str, list[float]] = {}
    for tag, r in EXPECTED["rows"].items():
        ruled = r["judge_prompt"] is None
        right = ruled and mmiu_correct(r["choice"], gold[tag]["output"])
        tasks.setdefault(gold[tag]["task"], []).append(float(right))
    figure = sum(sum(v) / len(v) for v in tasks.values()) / len(tasks)
    assert model["metrics"]["mmiu_accuracy"]["value"] == pytest.approx(figure, abs=1e-12)


def test_bad_rows_are_named_and_the_rest_load(tmp_path: Path) -> None:
    no_answer = {**ROWS[0], "output": None}
    outside = {**ROWS[1], "input_image_path": ["./elsewhere/x/x_0_0.png"]}
    folder = _copy(tmp_path / "mmiu", [no_answer, outside, ROWS[2]])
    result = load_source(f"mmiu,path={folder}")
    assert [_tag(s.question) for s in result.samples] == [_tag(ROWS[2]["question"])]
    problems = "\n".join(str(p) for p in result.problems)
    assert "output: expected the answer's letter" in problems
    assert "input_image_path: expected the images in one of the folders" in problems


def test_a_copy_with_its_archives_not_unpacked_says_so_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "mmiu"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(ROWS), folder / "all.parquet")
    (folder / "2D-spatial.zip").write_bytes(b"PK")
    proc = lmmprobe("data", "show", "mmiu")  # the definition is shown without a copy
    assert proc.returncode == 0 and "mmiu-choice" in proc.stdout
    with pytest.raises(DataError, match=r"holds no image folder .*unpack each archive"):
        load_source(f"mmiu,path={folder}")


_PATTERN = re.compile(r"^[.,()]+|[.,()]+$")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(".,() aBz\u00a0\n")), max_size=12))
def test_the_clean_up_equals_remove_punctuation(text: str) -> None:
    stripped = text.strip().replace("\u00a0", "").strip()
    assert mmiu_prediction(text) == _PATTERN.sub("", stripped)


@settings(max_examples=200, deadline=None)
@given(raw=st.text(max_size=300) | st.sampled_from(["." * 200_000 + "x", "(" * 100_000]))
def test_any_answer_reads_in_time_and_never_crashes(raw: str) -> None:
    choice = mmiu_rule(raw)
    assert choice is None or mmiu_correct(choice, "A") in (True, False)


def test_a_row_listing_more_images_than_a_sample_may_is_one_line_and_the_rest_run(
    tmp_path: Path,
) -> None:
    # Before: a row of 200,000 image paths was accepted (46 s, 570 MB for one row with
    # `first`); the bound is the one every sample has (MAX_IMAGES_PER_SAMPLE).
    path = ROWS[0]["input_image_path"][0]
    crowded = {**ROWS[0], "input_image_path": [path] * (MAX_IMAGES_PER_SAMPLE + 1)}
    folder = _copy(tmp_path / "mmiu", [ROWS[0], ROWS[1]])
    rows = [crowded, ROWS[1]]
    pq.write_table(pa.Table.from_pylist(rows), folder / "all.parquet")
    done = lmmprobe(
        "run", "-m", "first", "--data", f"mmiu,path={folder}", "-q", "--db", tmp_path / "db",
        "--out", tmp_path / "out", "--bootstrap", "0",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[:2000]
    said = [line for line in done.stderr.splitlines() if "input_image_path" in line]
    assert len(said) == 1, done.stderr[:2000]
    assert (
        f"input_image_path: {MAX_IMAGES_PER_SAMPLE + 1:,} images; a sample may list at most"
        in said[0]
    )
    assert "all.parquet" in said[0] and len(said[0]) < 400
    (model,) = json.loads((tmp_path / "out" / "results.json").read_text())["models"].values()
    assert model["metrics"]["mmiu_accuracy"]["n"] == 1
