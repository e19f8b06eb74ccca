"""The benchmarks read from VLMEvalKit's TSVs: the table's rows, MMVP and BLINK.

The table: MMBench v1.1 EN/CN, MMBench v1.0 CN, CCBench, SEEDBench2-Plus, MMT-Bench (and _MI),
MuirBench, V* Bench.

Parity: each benchmark's fixture in VLMEvalKit's file schema (`vlmevalkit_parity/`, written by
its ``make_inputs.py``) is run end to end with a scripted model giving the committed answers,
and the official figure and every ``report_acc`` breakdown equal what VLMEvalKit's own scoring
code computed from the same answers (``expected.json``, by ``make_expected.py``; see the
folder's README). The reader's own behaviour (shared images, several images in order, the
prompt, bad rows) is checked on small files written here.
"""

from __future__ import annotations

import base64
import csv
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import scripted_model, tiny_png

from lmmprobe.api import evaluate
from lmmprobe.data.base import DataError, load_source
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.data.benchmarks._describe import official_matcher
from lmmprobe.data.benchmarks.standard._vlmevalkit import read_tsv
from lmmprobe.data.benchmarks.standard.vlmevalkit_tsv import TABLE
from lmmprobe.judge.protocols.blink_choice import blink_prompt
from lmmprobe.parse.vlmevalkit import vlmevalkit_matcher
from lmmprobe.schema import FormulateConfig
from lmmprobe.testing import FakeOpenAIServer

HERE = Path(__file__).parent / "vlmevalkit_parity"
EXPECTED = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))["benchmarks"]
SCRIPT = scripted_model("e9-vlmevalkit")
# report_acc's breakdowns, MMT-Bench's and BLINK's subtasks, CV-Bench's halves and sources,
# HR-Bench's cycles.
BREAKDOWNS = ["l2_category", "category", "type", "source", "cycle_category"]
MODEL = SCRIPT.name


def _replies(name: str) -> dict[str, str]:
    with open(HERE / f"{name}_pred.tsv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    tags = {}
    for tsv in sorted(HERE.joinpath(name).glob("*.tsv")):  # CV-Bench has two files
        with open(tsv, encoding="utf-8", newline="") as f:
            # The tag the scripted model answers by: in the question, or (MMVP, whose pairs
            # share a question) in the hint.
            tags.update(
                {
                    r["index"]: (r["question"] if "#" in r["question"] else r["hint"]).rsplit(
                        "#", 1
                    )[1]
                    for r in csv.DictReader(f, delimiter="\t")
                }
            )
    # VLMEvalKit reads an empty answer cell as NaN and scores str(NaN), "nan": unread either way.
    return {tags[r["index"]]: r["prediction"] for r in rows}


def _evaluate(tmp_path: Path, data: str, replies: dict[str, str], **spec: Any) -> Any:
    SCRIPT.replies.clear()
    SCRIPT.replies.update(replies)
    SCRIPT.prompts.clear()
    # The benchmark's own reading, as the CLI picks it (official_matcher) when --matcher is not given.
    formulate = {"matcher": official_matcher(data)}
    return evaluate(models=[MODEL], data=data, db=str(tmp_path / "db"), formulate=formulate,
                    out=str(tmp_path / "out"), bootstrap=0, **spec)  # fmt: skip


def test_the_table_registers_each_row_as_a_benchmark() -> None:
    assert [e.name for e in TABLE] == ["mmbench-v11-en", "mmbench-v11-cn", "mmbench-cn",
                                       "ccbench", "seedbench2-plus", "mmt-bench",
                                       "mmt-bench-mi", "muirbench", "vstar"]  # fmt: skip
    for e in TABLE:
        b = BENCHMARKS.get(e.name)
        assert b.metric == ("mmbench_circular" if e.circular else "vlmevalkit_accuracy")
        assert b.matcher == "vlmevalkit" and b.judge == "mmbench-choice"
        assert official_matcher(f"{e.name},path=x") == "vlmevalkit"
        assert e.md5 in b.fetch and e.url in b.fetch


@pytest.mark.parametrize("name", list(EXPECTED))
def test_scores_equal_vlmevalkits_own_code(tmp_path: Path, name: str) -> None:
    expected = EXPECTED[name]["figures"]
    b = BENCHMARKS.get(name)
    ev = _evaluate(tmp_path, f"{name},path={HERE / name}", _replies(name), by=BREAKDOWNS)
    m = ev.results.models[MODEL]
    assert m.metrics[b.metric].value == pytest.approx(expected["Overall"], abs=1e-12)
    pairs = name == "mmvp"  # MMVP's figure counts pairs of questions
    assert m.metrics[b.metric].n == len(EXPECTED[name]["hits"]) // (2 if pairs else 1)
    # report_acc's breakdowns: every category and l2-category figure VLMEvalKit reports
    # (report_acc_MMT's meta-task figures, a mean of subtask means, are checked below).
    groups = {k: v for by in BREAKDOWNS for k, v in m.breakdown.get(by, {}).items()}
    got = {g: v[b.metric].value for g, v in groups.items() if g in expected}
    assert got == pytest.approx({k: v for k, v in expected.items() if k != "Overall"}, abs=1e-12)
    if "meta_tasks" in EXPECTED[name]:
        # report_acc_MMT's meta-task figures: mmt_meta_task_accuracy per --by l2_category
        # group; the whole run (32 meta-tasks) has none.
        meta = {g: v["mmt_meta_task_accuracy"].value for g, v in m.breakdown["l2_category"].items()}
        assert meta == pytest.approx(EXPECTED[name]["meta_tasks"], abs=1e-12)
        assert "mmt_meta_task_accuracy" not in m.metrics
        # mmt-bench's meta-tasks hold subtasks of unequal size, so the mean over questions
        # (vlmevalkit_accuracy per group) is not the figure for some of them.
        by_question = {g: v[b.metric].value for g, v in m.breakdown["l2_category"].items()}
        assert name != "mmt-bench" or any(abs(by_question[g] - meta[g]) > 0.01 for g in meta)


def test_the_prompt_is_vlmevalkits_build_prompt(tmp_path: Path) -> None:
    replies = _replies("mmbench-v11-en")
    _evaluate(tmp_path, f"mmbench-v11-en,path={HERE / 'mmbench-v11-en'},limit=1", replies)
    (_tag, prompt), *_ = SCRIPT.prompts.items()
    with open(HERE / "mmbench-v11-en" / "MMBench_DEV_EN_V11.tsv", encoding="utf-8") as f:
        row = next(csv.DictReader(f, delimiter="\t"))
    options = "".join(f"{c}. {row[c]}\n" for c in "ABCD" if row[c])
    hint = f"Hint: {row['hint']}\n" if row["hint"] else ""
    assert prompt == (f"{hint}Question: {row['question']}\nOptions:\n{options}"
                      "Please select the correct answer from the options above. \n")  # fmt: skip


def test_muirbench_asks_what_vlmevalkits_muir_prompt_sends(tmp_path: Path) -> None:
    # VLMEvalKit's MUIRDataset.build_prompt + split_MUIR, run on the fixture (expected.json):
    # its text segments, joined, are the prompt; its images, in order, are the sample's.
    messages = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))[
        "muirbench_messages"
    ]
    _evaluate(tmp_path, f"muirbench,path={HERE / 'muirbench'}", _replies("muirbench"))
    samples = {
        s.id.split("/")[-1]: s for s in load_source(f"muirbench,path={HERE / 'muirbench'}").samples
    }
    with open(HERE / "muirbench" / "MUIRBench.tsv", encoding="utf-8") as f:
        cells = {r["index"]: r["image"] for r in csv.DictReader(f, delimiter="\t")}
    assert len(messages) == len(samples) == 40
    for index, msgs in messages.items():
        text = "".join(v for kind, v in msgs if kind == "text")
        assert SCRIPT.prompts[f"r{index}q{index}"] == text
        n_images = sum(kind == "image" for kind, _ in msgs)
        cell = cells[index]
        order = (
            [c.strip(" '") for c in cell.strip("[]").split(",")] if cell.startswith("[") else [cell]
        )
        assert [i.data_b64 for i in samples[index].images] == order and len(order) == n_images
    assert "multi-image" in BENCHMARKS.get("muirbench").groups


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    columns = ["index", "question", "A", "B", "C", "answer", "category", "image"]
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "SEEDBench2_Plus.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, columns, delimiter="\t", lineterminator="\n", extrasaction="ignore")
        out.writeheader()
        out.writerows(rows)
    return path


def _b64(color: tuple[int, int, int]) -> str:
    return base64.b64encode(tiny_png(color)).decode("ascii")


def test_shared_and_several_images_arrive_in_order_and_bad_rows_are_named(tmp_path: Path) -> None:
    red, blue = _b64((255, 0, 0)), _b64((0, 0, 255))
    base = {"question": "q", "A": "x", "B": "y", "C": "", "answer": "A", "category": "c"}
    rows = [
        {**base, "index": "1", "image": "2"},  # names a row further down
        {**base, "index": "2", "image": red},
        {**base, "index": "3", "image": repr([blue, red])},
        {**base, "index": "4", "image": "['not base64!']"},
        {**base, "index": "5", "image": "99"},  # names no row
        {**base, "index": "6", "image": ""},  # no image: VLMEvalKit leaves the row out
        {**base, "index": "7", "image": red, "B": "None"},  # "None" is missing, as in pandas
    ]
    folder = _write(tmp_path / "s2p", rows)
    result = load_source(f"seedbench2-plus,path={folder}")
    by_id = {s.id.split("/")[-1]: s for s in result.samples}
    assert sorted(by_id) == ["1", "2", "3"]
    assert [i.data_b64 for i in by_id["1"].images] == [i.data_b64 for i in by_id["2"].images]
    assert [i.data_b64 for i in by_id["3"].images] == [blue, red]
    problems = "\n".join(str(p) for p in result.problems)
    assert "SEEDBench2_Plus.tsv:5" in problems and "image" in problems
    assert "names '99', which is no row with an image" in problems
    assert "options must be A, B[, C...] in order; this row has ['A']" in problems


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cell=st.text(max_size=300) | st.sampled_from(["[" * 5000, "['" + "A" * 20000, "[''," * 3000])
)
def test_any_image_cell_is_a_row_problem_never_a_crash(tmp_path: Path, cell: str) -> None:
    row = {"index": "1", "question": "q", "A": "x", "B": "y", "answer": "A", "category": "c",
           "image": cell.replace("\t", " ").replace("\n", " ").replace("\r", " ")}  # fmt: skip
    folder = _write(tmp_path / "fuzz", [row])
    result = load_source(f"seedbench2-plus,path={folder}")
    assert len(result.samples) + len(result.problems) <= 1


def test_the_matcher_is_vlmevalkits_rule() -> None:
    config = FormulateConfig()
    opts, marks = ["a cat", "a dog", "a bird"], ["A", "B", "C"]
    assert vlmevalkit_matcher("The answer is B.", opts, marks, config).index == 1
    assert vlmevalkit_matcher("a bird", opts, marks, config).index == 2
    refused = vlmevalkit_matcher("Cannot determine the answer", opts, marks, config)
    assert refused.index is None and refused.reason == "refusal"
    assert vlmevalkit_matcher("A and B", opts, marks, config).index is None


def test_read_tsv_names_each_row_by_line(tmp_path: Path) -> None:
    red = _b64((255, 0, 0))
    folder = _write(tmp_path / "lines", [{"index": "1", "question": "q", "A": "x", "B": "y",
                                          "answer": "A", "category": "c", "image": red}])  # fmt: skip
    ((where, row),) = read_tsv(folder / "SEEDBench2_Plus.tsv")
    assert where.endswith("SEEDBench2_Plus.tsv:2") and row["image"] == red


def test_a_questions_images_reach_the_openai_backend_in_order(tmp_path: Path) -> None:
    # MMT-Bench's _MI file: a question's images as a list, asked separately and in order.
    pytest.importorskip("openai")
    colors = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
    cells = [_b64(c) for c in colors]
    row = {"index": "1", "question": "Which differs? #m", "A": "x", "B": "y", "answer": "A",
           "category": "c", "image": repr(cells)}  # fmt: skip
    columns = ["index", "question", "A", "B", "answer", "category", "image"]
    folder = tmp_path / "mi"
    folder.mkdir()
    with open(folder / "MMT-Bench_VAL_MI.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, columns, delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerow(row)
    with FakeOpenAIServer() as server:
        ran = lmmprobe(
            "run", "-m", f"openai:vlm@{server.base_url}", "--data", f"mmt-bench-mi,path={folder}",
            "--db", tmp_path / "db.sqlite", OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert server.received_images == [base64.b64decode(c) for c in cells]


def test_blinks_judge_prompt_is_vlmevalkits_byte_for_byte() -> None:
    case = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))["blink_judge_prompt"]
    made = blink_prompt(case["question"], case["choices"], case["prediction"])
    assert made == case["prompt"]
    assert BENCHMARKS.get("blink").judge == "blink-choice"


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=2000) | st.sampled_from(["A " * 50_000, "(" * 100_000]))
def test_any_answer_reads_as_one_option_or_unparsed(text: str) -> None:
    got = vlmevalkit_matcher(text, ["a cat", "a dog"], ["A", "B"], FormulateConfig())
    assert got.index in (None, 0, 1)


def test_a_questions_images_reach_a_tiny_hf_model_in_order(tmp_path: Path) -> None:
    # The same MMT-Bench _MI row through the hf backend: the processor gets the three images
    # in the row's order (the pixels equal those of that order, not of the reverse).
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from lmmprobe.formulate import formulate
    from lmmprobe.models import load_model
    from lmmprobe.models.tiny import tiny_model_path

    colors = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
    row = {"index": "1", "question": "Which differs? #m", "A": "x", "B": "y", "answer": "A",
           "category": "c", "image": repr([_b64(c) for c in colors])}  # fmt: skip
    columns = ["index", "question", "A", "B", "answer", "category", "image"]
    folder = tmp_path / "mi"
    folder.mkdir()
    with open(folder / "MMT-Bench_VAL_MI.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, columns, delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerow(row)
    (sample,) = load_source(f"mmt-bench-mi,path={folder}").samples
    request = formulate(sample)
    model = load_model(f"hf:{tiny_model_path('llava')},device=cpu,dtype=float32")
    sent = model.prompt_inputs(request)["pixel_values"]  # type: ignore[attr-defined]
    images = [Image.new("RGB", (8, 8), c) for c in colors]
    processor = model.processor  # type: ignore[attr-defined]
    in_order = processor.image_processor(images, return_tensors="pt")["pixel_values"]
    reverse = processor.image_processor(images[::-1], return_tensors="pt")["pixel_values"]
    assert sent.shape[0] == 3
    assert torch.allclose(sent, in_order) and not torch.allclose(sent, reverse)


def test_a_file_pandas_cannot_read_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "SEEDBench2_Plus.tsv").write_text("index\tquestion\n1\tq\n", encoding="utf-8")
    # No image column: the first pass cannot read it (VLMEvalKit's would not either).
    with pytest.raises(
        DataError, match=r"SEEDBench2_Plus\.tsv: not a TSV VLMEvalKit's reading reads"
    ):
        load_source(f"seedbench2-plus,path={folder}")
