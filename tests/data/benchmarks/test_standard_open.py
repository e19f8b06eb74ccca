"""The open-ended, OCR and caption benchmarks, each on a fixture in its published schema.

Every fixture is built here with `datasets` (the card's column names and types, ``Image``
columns stored as the Hub stores them, the answer format) in the Hub's file layout, read back
through ``--data NAME,path=FOLDER``, and run end to end with `lmmprobe.api.evaluate` against the
loopback fake of an OpenAI-compatible server (`lmmprobe.testing.openai_server`), which answers an
open question with the name of the image's dominant colour. Each image's colour therefore
decides the model's answer, and the official metric is checked against a value computed by hand
from the references.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Sequence, Value
from tests.data.benchmarks.conftest import break_column_name, tiny_png, write_hub_snapshot

from lmmprobe.api import evaluate
from lmmprobe.data import DataError, load_source
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.formulate.prompt import Formulator
from lmmprobe.imaging.colors import COLORS
from lmmprobe.metrics.benchmark_open import (
    vqa_accuracy,
    vqa_accuracy_evalai,
    vqa_accuracy_lmms_eval,
)
from lmmprobe.schema import FormulateConfig, Sample
from lmmprobe.testing.openai_server import FakeOpenAIServer

IMG = Image()
STR = Value("string")
SHORT = "\nAnswer the question using a single word or phrase."
UNANSWERABLE = "\nWhen the provided information is insufficient, respond with 'Unanswerable'."
CAPTION = "Provide a one-sentence caption for the provided image."


def _img(color: str) -> dict[str, Any]:
    return {"bytes": tiny_png(COLORS[color]), "path": f"{color}.png"}


def _ds(rows: dict[str, list[Any]], features: dict[str, Any]) -> Dataset:
    assert set(rows) == set(features), "a fixture must have exactly the card's columns"
    return Dataset.from_dict(rows, features=Features(features))


def _load(name: str, folder: Path) -> list[Sample]:
    result = load_source(f"{name},path={folder}", strict=True)
    return result.samples


def _asked(sample: Sample) -> str:
    return Formulator(FormulateConfig()).ask(sample, 0).to_request().messages[-1].text


def _evaluate(
    tmp_path: Path, name: str, folder: Path, server: FakeOpenAIServer | None = None, **spec: Any
) -> Any:
    with server or FakeOpenAIServer() as fake:
        ev = evaluate(
            models=[f"openai:fake-vlm@{fake.base_url}"],
            data=f"{name},path={folder}",
            db=str(tmp_path / "db"),
            out=str(tmp_path / "out"),
            **{"bootstrap": 0, **spec},
        )
    (model,) = ev.results.models.values()
    return model


def _run(tmp_path: Path, name: str, folder: Path) -> dict[str, float | None]:
    return {k: v.value for k, v in _evaluate(tmp_path, name, folder).metrics.items()}


def test_all_eleven_are_registered_with_metric_prompt_and_schema_note() -> None:
    open_names = ("textvqa", "docvqa", "chartqa", "ocrbench", "vqav2", "gqa",
                  "okvqa", "vizwiz", "coco-caption", "nocaps", "flickr30k")  # fmt: skip
    metrics = {n: BENCHMARKS.get(n).metric for n in open_names}
    assert metrics == {
        "textvqa": "vqa_accuracy_evalai", "docvqa": "anls", "chartqa": "relaxed_accuracy",
        "ocrbench": "ocrbench_score", "vqav2": "vqa_accuracy", "gqa": "gqa_exact_match",
        "okvqa": "vqa_accuracy_evalai", "vizwiz": "vqa_accuracy_evalai", "coco-caption": "coco_cider",
        "nocaps": "coco_cider", "flickr30k": "coco_cider",
    }  # fmt: skip
    for name in open_names:
        b = BENCHMARKS.get(name)
        assert "lmms-eval" in b.prompt.source and "@" in b.prompt.source
        assert b.fetch.startswith("hf download ") and b.hub_id and b.size
        assert b.revision is None or len(b.revision) == 40
        if b.revision is None:
            assert any("not pinned" in n for n in b.notes), name
    unconfirmed = [n for n in open_names if not BENCHMARKS.get(n).schema_confirmed]
    assert unconfirmed == ["gqa"]
    assert {BENCHMARKS.get(n).hemm for n in ("vqav2", "okvqa", "gqa", "nocaps", "flickr30k")} == {
        "VQA",
        "OK-VQA",
        "GQA",
        "NoCaps",
        "Flickr30K",
    }


# --------------------------------------------------------------------------- TextVQA

TEXTVQA = {
    "image_id": STR, "question_id": Value("int32"), "question": STR,
    "question_tokens": Sequence(STR), "image": IMG, "image_width": Value("int32"),
    "image_height": Value("int32"), "flickr_original_url": STR, "flickr_300k_url": STR,
    "answers": Sequence(STR), "image_classes": Sequence(STR), "set_name": STR,
    "ocr_tokens": Sequence(STR),
}  # fmt: skip


def _textvqa(tmp_path: Path) -> Path:
    n = 3
    rows = {
        "image_id": ["a1", "a2", "a3"], "question_id": [34602, 34603, 34604],
        "question": ["what colour is the SIGN?", "what colour is the car?", "what is written?"],
        "question_tokens": [["what"]] * n, "image": [_img(c) for c in ("red", "blue", "green")],
        "image_width": [8] * n, "image_height": [8] * n, "flickr_original_url": ["u"] * n,
        "flickr_300k_url": ["u"] * n,
        "answers": [["Red"] * 10, ["blue"] * 2 + ["navy"] * 8, ["yellow"] * 10],
        "image_classes": [["sign"]] * n, "set_name": ["val"] * n, "ocr_tokens": [["stop"]] * n,
    }  # fmt: skip
    return write_hub_snapshot(tmp_path / "textvqa", {"validation": _ds(rows, TEXTVQA)})


def test_textvqa_loads_prompts_and_scores_with_evalai_vqa_accuracy(tmp_path: Path) -> None:
    folder = _textvqa(tmp_path)
    samples = _load("textvqa", folder)
    assert [s.id for s in samples] == ["textvqa/34602", "textvqa/34603", "textvqa/34604"]
    assert samples[1].answer == ["blue", "blue"] + ["navy"] * 8  # all ten references kept
    assert samples[0].formulation == "open_ended"
    # lmms-eval capitalizes the question (and lowers the rest).
    assert _asked(samples[0]) == "What colour is the sign?" + SHORT
    m = _run(tmp_path, "textvqa", folder)
    # red vs ten "Red": 1 after EvalAI's lowercasing; blue vs 2 of 10: (2*1/3 + 8*2/3)/10.
    assert m["vqa_accuracy_evalai"] == pytest.approx((1 + 0.6 + 0) / 3)
    assert "vqa_accuracy" not in m and "anls" not in m


# --------------------------------------------------------------------------- DocVQA

DOCVQA = {
    "questionId": STR, "question": STR, "question_types": Sequence(STR), "image": IMG,
    "docId": Value("int64"), "ucsf_document_id": STR, "ucsf_document_page_no": STR,
    "answers": Sequence(STR), "data_split": STR,
}  # fmt: skip


def test_docvqa_reads_its_config_folder_and_scores_anls(tmp_path: Path) -> None:
    n = 3
    rows = {
        "questionId": ["49153", "24580", "57349"], "question": ["What colour is the logo?"] * n,
        "question_types": [["layout"]] * n, "image": [_img(c) for c in ("red", "blue", "green")],
        "docId": [14465, 14466, 14467], "ucsf_document_id": ["pybv0228"] * n,
        "ucsf_document_page_no": ["81"] * n,
        "answers": [["Red"], ["blu", "azure"], ["grape"]], "data_split": ["val"] * n,
    }  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "docvqa", {"validation": _ds(rows, DOCVQA)}, config="DocVQA"
    )
    samples = _load("docvqa", folder)
    assert samples[1].answer == ["blu", "azure"] and samples[0].id == "docvqa/49153"
    assert _asked(samples[0]) == "What colour is the logo?" + SHORT
    m = _run(tmp_path, "docvqa", folder)
    # "red"/"Red": 1; "blue"/"blu": 1 - 1/4; "green"/"grape": 1 - 3/5 = 0.4 < 0.5, so 0.
    assert m["anls"] == pytest.approx((1 + 0.75 + 0) / 3)


INFOVQA = {
    "questionId": STR, "question": STR, "answers": Sequence(STR), "answer_type": Sequence(STR),
    "image": IMG, "image_url": STR, "operation/reasoning": Sequence(STR), "ocr": STR,
    "data_split": STR,
}  # fmt: skip


def test_infovqa_is_docvqas_table_row_on_its_own_config(tmp_path: Path) -> None:
    # lmms-eval's infovqa_val: the InfographicVQA config, docvqa's prompt line, the same ANLS.
    n = 3
    rows = {
        "questionId": ["65718", "65719", "65720"], "question": ["How many icons are shown?"] * n,
        "answers": [["Red", "seven"], ["blu", "49%"], ["grape"]],
        "answer_type": [["single span"], ["single span"], ["question span", "multiple spans"]],
        "image": [_img(c) for c in ("red", "blue", "green")], "image_url": ["u"] * n,
        "operation/reasoning": [["counting"], ["arithmetic"], []], "ocr": ["{}"] * n,
        "data_split": ["val"] * n,
    }  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "infovqa", {"validation": _ds(rows, INFOVQA)}, config="InfographicVQA"
    )
    b = BENCHMARKS.get("infovqa")
    assert (b.metric, b.config, b.revision, b.size) == (
        "anls", "InfographicVQA", BENCHMARKS.get("docvqa").revision, 2801
    )  # fmt: skip
    samples = _load("infovqa", folder)
    assert samples[0].id == "infovqa/65718" and samples[0].answer == ["Red", "seven"]
    assert samples[2].metadata["answer_type"] == ["question span", "multiple spans"]
    assert samples[0].metadata["operation"] == ["counting"]
    assert _asked(samples[0]) == "How many icons are shown?" + SHORT
    m = _run(tmp_path, "infovqa", folder)
    # The fake model names the colour: "red"/"Red": 1; "blue": best of "blu" (1 - 1/4) and
    # "49%"; "green"/"grape": 1 - 3/5 = 0.4 < 0.5, so 0.
    assert m["anls"] == pytest.approx((1 + 0.75 + 0) / 3)


# --------------------------------------------------------------------------- ChartQA


def test_chartqa_relaxed_accuracy(tmp_path: Path) -> None:
    rows = {
        "type": ["human_test", "augmented_test", "human_test"],
        "question": ["Which colour is the largest bar?", "What is the value of 2019?", "Colour?"],
        "answer": ["Red", "12", "green"],
        "image": [_img(c) for c in ("red", "blue", "green")],
    }
    feats = {"type": STR, "question": STR, "answer": STR, "image": IMG}
    folder = write_hub_snapshot(tmp_path / "chartqa", {"test": _ds(rows, feats)})
    samples = _load("chartqa", folder)
    assert [s.id for s in samples] == ["chartqa/test-0", "chartqa/test-1", "chartqa/test-2"]
    assert samples[0].answer == ["Red"] and samples[1].metadata["type"] == "augmented_test"
    assert (
        _asked(samples[1]) == "What is the value of 2019?\nAnswer the question with a single word."
    )
    m = _run(tmp_path, "chartqa", folder)
    # "red" = "Red" (case-insensitive); "blue" is not 12; "green" = "green".
    assert m["relaxed_accuracy"] == pytest.approx(2 / 3)


def test_chartqa_strips_the_reply_as_lmms_eval_does(tmp_path: Path) -> None:
    # lmms-eval strips every generation before relaxed_correctness: " Yes" and "yes\n" are right.
    rows = {
        "type": ["human_test"] * 2, "question": ["Is it rising?", "Is 2020 higher?"],
        "answer": ["Yes", "Yes"], "image": [_img("red"), _img("blue")],
    }  # fmt: skip
    feats = {"type": STR, "question": STR, "answer": STR, "image": IMG}
    folder = write_hub_snapshot(tmp_path / "chartqa", {"test": _ds(rows, feats)})
    model = _evaluate(tmp_path, "chartqa", folder, FakeOpenAIServer(replies=[" Yes", "yes\n"]))
    assert model.metrics["relaxed_accuracy"].value == 1.0


# --------------------------------------------------------------------------- OCRBench


def test_ocrbench_points_with_the_hme100k_rule(tmp_path: Path) -> None:
    rows = {
        "dataset": ["IIIT5K", "HME100k", "docVQA", "SROIE"],
        "question": [" what is written in the image? ", "Write the formula in LaTeX.",
                     "What is the title?", "What is the company name?"],
        "question_type": ["Regular Text Recognition",
                          "Handwritten Mathematical Expression Recognition",
                          "Doc-oriented VQA", "Key Information Extraction"],
        "answer": [["RED"], ["b l u e"], ["greenery"], ["BLACK", "blk"]],
        "image": [_img(c) for c in ("red", "blue", "green", "black")],
    }  # fmt: skip
    feats = {"dataset": STR, "question": STR, "question_type": STR, "answer": Sequence(STR),
             "image": IMG}  # fmt: skip
    folder = write_hub_snapshot(tmp_path / "ocrbench", {"test": _ds(rows, feats)})
    samples = _load("ocrbench", folder)
    assert samples[0].formulation == "ocr" and samples[1].metadata["dataset"] == "HME100k"
    assert _asked(samples[0]) == "what is written in the image?"  # stripped, nothing added
    model = _evaluate(tmp_path, "ocrbench", folder, by=["question_type"])
    # "red" contains "red"; HME100k drops spaces: "blue" in "blue"; "green" lacks "greenery";
    # "black" contains "black".
    assert model.metrics["ocrbench_score"].value == 3
    totals = {k: v["ocrbench_score"].value for k, v in model.breakdown["question_type"].items()}
    assert totals == {
        "Regular Text Recognition": 1,
        "Handwritten Mathematical Expression Recognition": 1,
        "Doc-oriented VQA": 0,
        "Key Information Extraction": 1,
    }


# --------------------------------------------------------------------------- VQAv2

VQAV2 = {
    "question_type": STR, "multiple_choice_answer": STR,
    "answers": [{"answer": STR, "answer_confidence": STR, "answer_id": Value("int64")}],
    "image_id": Value("int64"), "answer_type": STR, "question_id": Value("int64"),
    "question": STR, "image": IMG,
}  # fmt: skip


def _vqa_answers(texts: list[str]) -> list[dict[str, Any]]:
    return [
        {"answer": t, "answer_confidence": "yes", "answer_id": i + 1} for i, t in enumerate(texts)
    ]


def test_vqav2_vqa_accuracy_as_lmms_eval_scores_replies(tmp_path: Path) -> None:
    answers = [
        ["Red"] * 10,
        ["Blue"] * 3 + ["blue"] + ["navy"] * 6,
        ["the green"] * 2 + ["grass"] * 8,
    ]
    rows = {
        "question_type": ["what color"] * 3, "multiple_choice_answer": ["red", "blue", "grass"],
        "answers": [_vqa_answers(a) for a in answers], "image_id": [1, 2, 3],
        "answer_type": ["other"] * 3, "question_id": [262148000, 262148001, 262148002],
        "question": ["What color is the bus?"] * 3,
        "image": [_img(c) for c in ("red", "blue", "green")],
    }  # fmt: skip
    folder = write_hub_snapshot(tmp_path / "vqav2", {"validation": _ds(rows, VQAV2)})
    samples = _load("vqav2", folder)
    assert samples[1].answer == ["Blue"] * 3 + ["blue"] + ["navy"] * 6
    assert samples[0].metadata["answer_type"] == "other"
    assert _asked(samples[0]) == "What color is the bus?" + SHORT
    value = _evaluate(tmp_path, "vqav2", folder, bootstrap=200).metrics["vqa_accuracy"]
    # lmms-eval normalizes every answer (lowercase too): "red" matches ten "Red". "blue" vs 4
    # normalized "blue": 1 for every left-out annotator. "green" vs 2 "green" (articles
    # dropped): (2*1/3 + 8*2/3)/10.
    assert value.value == pytest.approx((1 + 1 + 0.6) / 3) and value.n == 3
    assert 0 <= value.low <= value.value <= value.high <= 1


def test_vqav2_scores_a_raw_reply_after_cleaning_it(tmp_path: Path) -> None:
    # "Yes" and "yes." match ten "yes" once cleaned (lmms-eval's vqav2_process_results).
    rows = {
        "question_type": ["is the"] * 2, "multiple_choice_answer": ["yes"] * 2,
        "answers": [_vqa_answers(["yes"] * 10)] * 2, "image_id": [1, 2],
        "answer_type": ["yes/no"] * 2, "question_id": [1, 2], "question": ["Is it red?"] * 2,
        "image": [_img("red"), _img("blue")],
    }  # fmt: skip
    folder = write_hub_snapshot(tmp_path / "vqav2", {"validation": _ds(rows, VQAV2)})
    model = _evaluate(tmp_path, "vqav2", folder, FakeOpenAIServer(replies=["Yes", "yes."]))
    assert model.metrics["vqa_accuracy"].value == 1.0


def test_vqa_scores_of_raw_replies_match_lmms_eval() -> None:
    # What lmms-eval's vqav2 and ok_vqa process_results give these replies (see the parity data).
    for reply in ("Yes", "yes.", " yes\n", "YES!"):
        assert vqa_accuracy_lmms_eval(reply, ["yes"] * 10) == 1.0
        assert vqa_accuracy_evalai(reply, ["yes"] * 10) == 1.0
    assert vqa_accuracy_lmms_eval("Two", ["2"] * 10) == 1.0
    assert vqa_accuracy_evalai("Two", ["2"] * 10) == 1.0
    # vqaEval.py itself expects cleaned answers: unanimous references are compared as written.
    assert vqa_accuracy("Two", ["2"] * 10) == 0.0


def test_failed_requests_are_not_scored_as_wrong_answers(tmp_path: Path) -> None:
    folder = _textvqa(tmp_path)
    model = _evaluate(tmp_path, "textvqa", folder, FakeOpenAIServer(always="bad_request"))
    value = model.metrics["vqa_accuracy_evalai"]
    assert value.value is None and value.n == 0
    assert model.metrics["error_rate"].value == 1


def test_vqav2_bad_answers_are_row_problems(tmp_path: Path) -> None:
    rows = {
        "question_type": ["what"], "multiple_choice_answer": ["x"], "answers": [[]],
        "image_id": [1], "answer_type": ["other"], "question_id": [5], "question": ["Q?"],
        "image": [_img("red")],
    }  # fmt: skip
    folder = write_hub_snapshot(tmp_path / "vqav2", {"validation": _ds(rows, VQAV2)})
    result = load_source(f"vqav2,path={folder}")
    assert result.samples == [] and "answers" in str(result.problems[0])
    with pytest.raises(DataError, match="answers"):
        load_source(f"vqav2,path={folder}", strict=True)


# --------------------------------------------------------------------------- GQA


def _gqa(tmp_path: Path) -> Path:
    folder = tmp_path / "gqa"
    questions = {
        "id": ["201307251", "201640614", "202225914"],
        "imageId": ["n161313", "n235859", "n161313"],
        "question": ["What colour is the shirt?", "Which colour is the car?", "Is it red?"],
        "answer": ["Red.", "navy", "red"],
        "fullAnswer": ["The shirt is red.", "The car is navy.", "Yes, it is red."],
        "isBalanced": [True, True, True],
    }
    feats = {"id": STR, "imageId": STR, "question": STR, "answer": STR, "fullAnswer": STR,
             "isBalanced": Value("bool")}  # fmt: skip
    write_hub_snapshot(
        folder, {"testdev": _ds(questions, feats)}, config="testdev_balanced_instructions"
    )
    images = {"id": ["n161313", "n235859"], "image": [_img("red"), _img("blue")]}
    write_hub_snapshot(folder, {"testdev": _ds(images, {"id": STR, "image": IMG})},
                       config="testdev_balanced_images")  # fmt: skip
    return folder


def test_gqa_joins_its_two_configs_and_scores_exact_match(tmp_path: Path) -> None:
    folder = _gqa(tmp_path)
    samples = _load("gqa", folder)
    assert [s.id for s in samples] == ["gqa/201307251", "gqa/201640614", "gqa/202225914"]
    assert samples[0].images[0] == samples[2].images[0] != samples[1].images[0]
    assert samples[0].metadata["full_answer"] == "The shirt is red."
    assert _asked(samples[1]) == "Which colour is the car?" + SHORT
    m = _run(tmp_path, "gqa", folder)
    # "red" = "Red." once punctuation is dropped; "blue" is not "navy"; "red" = "red".
    assert m["gqa_exact_match"] == pytest.approx(2 / 3)


def test_gqa_without_its_images_config_names_the_fetch(tmp_path: Path) -> None:
    folder = _gqa(tmp_path)
    for f in (folder / "testdev_balanced_images").iterdir():
        f.unlink()
    with pytest.raises(DataError, match="hf download lmms-lab/GQA"):
        load_source(f"gqa,path={folder}")


def test_a_gqa_parquet_stating_more_rows_than_bytes_is_one_line(tmp_path: Path) -> None:
    # 200,000 identical rows fit in a few KB (dictionary and run-length encoding); read whole,
    # 3,000,000 of them took 103 s and 2.25 GB before every row was refused (retest 5, #15).
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tests.console import lmmprobe

    folder = _gqa(tmp_path)
    bomb = folder / "testdev_balanced_instructions" / "testdev-00000-of-00001.parquet"
    columns = ("id", "imageId", "question", "answer", "fullAnswer")
    pq.write_table(pa.table({c: pa.repeat(pa.scalar("v"), 200_000) for c in columns}), bomb)
    assert bomb.stat().st_size < 200_000
    res = lmmprobe("run", "-m", "first", "--data", f"gqa,path={folder}", "--db", tmp_path / "d")
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {bomb}: states 200,000 rows"), out


def test_a_gqa_parquet_with_a_column_name_not_utf8_is_one_line_naming_it(tmp_path: Path) -> None:
    # Re-test 10 #9: pyarrow's UnicodeDecodeError on opening the file was the whole message.
    import pyarrow as pa
    from tests.console import lmmprobe

    folder = _gqa(tmp_path)
    bad = folder / "testdev_balanced_instructions" / "testdev-00000-of-00001.parquet"
    columns = ("id", "imageId", "question", "answer", "QmarkQ")
    break_column_name(bad, pa.table({c: ["v"] for c in columns}))
    res = lmmprobe("run", "-m", "first", "--data", f"gqa,path={folder}", "--db", tmp_path / "d")
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines == [
        f"error: {bad}: not a readable parquet file (a column name that is not UTF-8); "
        "fetch it again"
    ], out


def test_a_gqa_image_repeated_by_dictionary_encoding_is_one_line(tmp_path: Path) -> None:
    # Re-test 6 #1: one 1 MiB image value referenced by 1,500 rows of a 1 MB file decoded to
    # 1.5 GB (a MemoryError traceback under 2 GB); the rows-and-bytes rule let it through.
    # Here 100 rows of a 1 MiB value: 100 MiB decoded from a 1 MiB file.
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tests.console import lmmprobe

    folder = _gqa(tmp_path)
    (images,) = (folder / "testdev_balanced_images").glob("*.parquet")
    value = pa.array([bytes(range(256)) * 4096], pa.binary())
    picture = pa.DictionaryArray.from_arrays(pa.array([0] * 100, pa.int32()), value)
    ids = pa.array(["n161313", "n235859"] + [f"x{i}" for i in range(98)])
    pq.write_table(pa.table({"id": ids, "image": picture}), images)
    assert images.stat().st_size < 2 << 20
    res = lmmprobe("run", "-m", "first", "--data", f"gqa,path={folder}", "--db", tmp_path / "d")
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    assert lines[0].startswith(f"error: {images}: column image decodes to more than"), out
    assert lines[0].endswith("values repeated, not GQA's data; fetch it again"), out


def _gqa_questions(folder: Path, extra: dict[str, Any], rows: int, **write: Any) -> Path:
    """Replace the GQA copy's instructions file by `rows` questions and `extra` columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / "testdev_balanced_instructions" / "testdev-00000-of-00001.parquet"
    table = {"id": [f"q{i}" for i in range(rows)], "imageId": ["n161313"] * rows,
             "question": ["Is it red?"] * rows, "answer": ["yes"] * rows,
             "fullAnswer": ["yes."] * rows, **extra}  # fmt: skip
    pq.write_table(pa.table(table), path, compression="zstd", **write)
    return path


def _one_error_line(tmp_path: Path, folder: Path) -> str:
    from tests.console import lmmprobe

    res = lmmprobe("run", "-m", "first", "--data", f"gqa,path={folder}", "--dry-run",
                   "--db", tmp_path / "d")  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    return lines[0]


def test_a_gqa_dictionary_past_the_limit_is_refused_from_the_footer(tmp_path: Path) -> None:
    # Re-test 7 #5: dictionary pages of 600 MB each (68 KB on disk) were decoded whole by the
    # check itself (4.5 GB). The footer states them: refused before any dictionary is read,
    # as shown here by a dictionary page made unreadable (reading it would fail otherwise).
    import pyarrow.parquet as pq

    folder = _gqa(tmp_path)
    words = [f"{i:08d}" + "x" * ((1 << 20) - 8) for i in range(70)]
    path = _gqa_questions(folder, {"note": words}, 70, dictionary_pagesize_limit=1 << 30)
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(5)
    assert chunk.path_in_schema == "note" and chunk.total_uncompressed_size > 64 << 20
    data = bytearray(path.read_bytes())
    start = chunk.dictionary_page_offset
    data[start + 64 : start + 512] = b"\xff" * 448  # inside the compressed dictionary
    path.write_bytes(bytes(data))
    line = _one_error_line(tmp_path, folder)
    assert line.startswith(f"error: {path}: column note decodes to more than 67,108,864"), line


def test_a_gqa_delta_encoded_question_is_counted(tmp_path: Path) -> None:
    # Re-test 7 #3: a DELTA_BYTE_ARRAY column states its encoded size (a 34 KB file of 1,500
    # copies of a 1 MB question passed, 1.5 GB decoded). Here 80 MB from a few KB.
    folder = _gqa(tmp_path)
    question = ["x" * (1 << 20)] * 80
    path = _gqa_questions(folder, {"question": question}, 80, use_dictionary=False,
                          row_group_size=20, column_encoding={"question": "DELTA_BYTE_ARRAY"})  # fmt: skip
    assert path.stat().st_size < 1 << 20
    line = _one_error_line(tmp_path, folder)
    assert line.startswith(f"error: {path}: column question decodes to more than"), line


def test_a_gqa_map_column_is_counted(tmp_path: Path) -> None:
    # Re-test 7 #4: a map column was counted by its dictionary's size (a 2 KB file of 1,000
    # map entries of one 1 MB value passed; the load took 3 GB). Here 100 MB.
    import pyarrow as pa

    folder = _gqa(tmp_path)
    rows, entries = 10, 10
    value = pa.DictionaryArray.from_arrays(
        pa.array([0] * (rows * entries), pa.int32()), pa.array(["x" * (1 << 20)])
    )
    offsets = pa.array([i * entries for i in range(rows + 1)], pa.int32())
    semantic = pa.MapArray.from_arrays(offsets, pa.array(["k"] * (rows * entries)), value)
    path = _gqa_questions(folder, {"semantic": semantic}, rows)
    assert path.stat().st_size < 64 << 10
    line = _one_error_line(tmp_path, folder)
    assert line.startswith(f"error: {path}: column semantic decodes to more than"), line


def test_gqa_images_files_share_one_limit(tmp_path: Path) -> None:
    # Re-test 7 #6: each images file was checked alone against the 64 MiB floor, while the
    # images kept come from all of them (40 files of 60 MB each ran out of memory). Here two
    # files of 40 MiB each: under the floor one by one, over it together.
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = _gqa(tmp_path)
    (first,) = (folder / "testdev_balanced_images").glob("*.parquet")
    second = first.with_name("testdev-00001-of-00002.parquet")
    value = pa.array([b"x" * (1 << 20)], pa.binary())
    for path, ids in ((first, ["n161313"]), (second, ["n235859"])):
        ids += [f"{path.stem}-{i}" for i in range(39)]
        picture = pa.DictionaryArray.from_arrays(pa.array([0] * 40, pa.int32()), value)
        pq.write_table(pa.table({"id": ids, "image": picture}), path, compression="zstd")
    line = _one_error_line(tmp_path, folder)
    assert line.startswith(f"error: {second}: column image decodes to more than 67,108,864"), line
    assert "from 3 parquet files of" in line and line.endswith("fetch it again"), line


@pytest.mark.parametrize("kind", ["not parquet", "no image column"])
def test_a_broken_gqa_parquet_is_one_line_naming_it(tmp_path: Path, kind: str) -> None:
    # Re-test 6: pyarrow's "Parquet magic bytes not found in footer" named no file, and an
    # images file without its image column gave a KeyError traceback.
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tests.console import lmmprobe

    folder = _gqa(tmp_path)
    (images,) = (folder / "testdev_balanced_images").glob("*.parquet")
    if kind == "not parquet":
        images.write_bytes(b"not a parquet file at all")
        says = "not a readable parquet file (Parquet magic bytes not found in footer"
    else:
        pq.write_table(pa.table({"id": ["a"], "picture": ["b"]}), images)
        says = "an images file needs the columns id and image"
    res = lmmprobe("run", "-m", "first", "--data", f"gqa,path={folder}", "--db", tmp_path / "d")
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {images}: {says}"), out


# --------------------------------------------------------------------------- OK-VQA

OKVQA = {"question_id": STR, "image": IMG, "question": STR, "answers": Sequence(STR),
         "question_type": STR, "answer_type": STR}  # fmt: skip


def test_okvqa_lmms_eval_vqa_accuracy_and_prompt(tmp_path: Path) -> None:
    rows = {
        "question_id": ["2971475", "3195695"], "image": [_img("white"), _img("black")],
        "question": ["What colour are these clouds?", "What colour is this animal?"],
        "answers": [["white"] * 10, ["black"] + ["dark"] * 9],
        "question_type": ["four", "other"], "answer_type": ["other", "other"],
    }  # fmt: skip
    folder = write_hub_snapshot(tmp_path / "okvqa", {"val2014": _ds(rows, OKVQA)})
    samples = _load("okvqa", folder)
    assert _asked(samples[0]) == "What colour are these clouds?" + UNANSWERABLE + SHORT
    m = _run(tmp_path, "okvqa", folder)
    # 1; then "black" said once: left out gives 0, each of the 9 others gives 1/3.
    assert m["vqa_accuracy_evalai"] == pytest.approx((1 + 0.3) / 2)
    assert "vqa_accuracy" not in m


def test_okvqa_scores_a_number_word_reply(tmp_path: Path) -> None:
    # "Two" matches ten "2" once EvalAI's processor cleans it (ok_vqa_process_results).
    rows = {
        "question_id": ["1"], "image": [_img("white")], "question": ["How many clouds?"],
        "answers": [["2"] * 10], "question_type": ["how many"], "answer_type": ["number"],
    }  # fmt: skip
    folder = write_hub_snapshot(tmp_path / "okvqa", {"val2014": _ds(rows, OKVQA)})
    model = _evaluate(tmp_path, "okvqa", folder, FakeOpenAIServer(replies=["Two"]))
    assert model.metrics["vqa_accuracy_evalai"].value == 1.0


# --------------------------------------------------------------------------- VizWiz


def test_vizwiz_reads_the_hubs_hashed_file_names(tmp_path: Path) -> None:
    rows = {
        "question_id": ["VizWiz_val_00000000.jpg", "VizWiz_val_00000001.jpg"],
        "image": [_img("yellow"), _img("purple")],
        "question": ["what is this?", "what colour is this shirt?"],
        "answers": [["unanswerable"] * 10, ["Purple!"] * 3 + ["violet"] * 7],
        "category": ["unanswerable", "other"],
    }
    feats = {"question_id": STR, "image": IMG, "question": STR, "answers": Sequence(STR),
             "category": STR}  # fmt: skip
    folder = tmp_path / "vizwiz"
    (folder / "data").mkdir(parents=True)
    _ds(rows, feats).to_parquet(
        str(folder / "data" / "val-00000-of-00005-7775fd61bc6a3d98.parquet")
    )
    samples = _load("vizwiz", folder)
    assert samples[0].id == "vizwiz/VizWiz_val_00000000.jpg"
    assert _asked(samples[1]) == "What colour is this shirt?" + UNANSWERABLE + SHORT
    m = _run(tmp_path, "vizwiz", folder)
    # "yellow" vs "unanswerable": 0. "purple" vs 3 "Purple!" (EvalAI: lowercased, "!" dropped):
    # (3*2/3 + 7*1)/10.
    assert m["vqa_accuracy_evalai"] == pytest.approx((0 + 0.9) / 2)


# --------------------------------------------------------------------------- captions


def _check_captions(m: dict[str, float | None], refs: list[list[str]], preds: list[str]) -> None:
    from pycocoevalcap.cider.cider import Cider  # type: ignore[import-untyped]

    # Image 1's prediction is one of its references (ROUGE-L 1), image 2 shares no word (0).
    assert m["coco_rouge_l"] == pytest.approx(0.5)
    # Lowercase single words: the PTB tokenizer leaves them as they are, so CIDEr-D straight
    # from pycocoevalcap on the raw strings is the value to match.
    expected, _ = Cider().compute_score(
        {str(i): r for i, r in enumerate(refs)}, {str(i): [p] for i, p in enumerate(preds)}
    )
    assert m["coco_cider"] == pytest.approx(expected)
    assert "coco_bleu4" in m


CAPTION_REFS = [["red", "a red box", "red square"], ["a green field", "grass", "green grass"]]


def test_coco_caption_2017(tmp_path: Path) -> None:
    rows = {
        "question_id": ["000000179765.jpg", "000000190236.jpg"], "image": [_img("red"), _img("blue")],
        "question": [CAPTION] * 2, "answer": CAPTION_REFS, "id": [179765, 190236],
        "license": [3, 4], "file_name": ["000000179765.jpg", "000000190236.jpg"],
        "coco_url": ["http://images.cocodataset.org/val2017/000000179765.jpg"] * 2,
        "height": [8, 8], "width": [8, 8], "date_captured": ["2013-11-15 14:02:51"] * 2,
    }  # fmt: skip
    feats = {"question_id": STR, "image": IMG, "question": STR, "answer": Sequence(STR),
             "id": Value("int64"), "license": Value("int8"), "file_name": STR, "coco_url": STR,
             "height": Value("int32"), "width": Value("int32"), "date_captured": STR}  # fmt: skip
    folder = write_hub_snapshot(tmp_path / "coco", {"val": _ds(rows, feats)})
    samples = _load("coco-caption", folder)
    assert samples[0].formulation == "caption" and samples[0].answer == CAPTION_REFS[0]
    assert _asked(samples[0]) == CAPTION
    _check_captions(_run(tmp_path, "coco-caption", folder), CAPTION_REFS, ["red", "blue"])


def test_nocaps_validation(tmp_path: Path) -> None:
    rows = {
        "image": [_img("red"), _img("blue")], "image_coco_url": ["https://s3/nocaps/val/1.jpg"] * 2,
        "image_date_captured": ["2018-11-06 11:04:33"] * 2, "image_file_name": ["1.jpg", "2.jpg"],
        "image_height": [8, 8], "image_width": [8, 8], "image_id": [0, 1],
        "image_license": [0, 0], "image_open_images_id": ["0013ea2087020901", "0013ea2087020902"],
        "annotations_ids": [[0, 1, 2], [3, 4, 5]], "annotations_captions": CAPTION_REFS,
    }  # fmt: skip
    feats = {"image": IMG, "image_coco_url": STR, "image_date_captured": STR,
             "image_file_name": STR, "image_height": Value("int32"), "image_width": Value("int32"),
             "image_id": Value("int32"), "image_license": Value("int8"),
             "image_open_images_id": STR, "annotations_ids": Sequence(Value("int32")),
             "annotations_captions": Sequence(STR)}  # fmt: skip
    folder = write_hub_snapshot(tmp_path / "nocaps", {"validation": _ds(rows, feats)})
    samples = _load("nocaps", folder)
    assert [s.id for s in samples] == ["nocaps/0", "nocaps/1"]
    assert _asked(samples[1]) == CAPTION
    _check_captions(_run(tmp_path, "nocaps", folder), CAPTION_REFS, ["red", "blue"])


def test_flickr30k_test(tmp_path: Path) -> None:
    rows = {
        "image": [_img("red"), _img("blue")], "caption": CAPTION_REFS,
        "sentids": [["0", "1", "2"], ["3", "4", "5"]], "img_id": ["0", "1"],
        "filename": ["1000092795.jpg", "10002456.jpg"],
    }  # fmt: skip
    feats = {"image": IMG, "caption": Sequence(STR), "sentids": Sequence(STR), "img_id": STR,
             "filename": STR}  # fmt: skip
    folder = write_hub_snapshot(tmp_path / "flickr", {"test": _ds(rows, feats)})
    samples = _load("flickr30k", folder)
    assert samples[1].metadata["filename"] == "10002456.jpg"
    _check_captions(_run(tmp_path, "flickr30k", folder), CAPTION_REFS, ["red", "blue"])


# --------------------------------------------------------------------------- offline


def test_no_copy_and_no_hub_gives_the_fetch_command(data_dir: Path) -> None:
    with pytest.raises(DataError) as err:
        load_source("vqav2")
    assert "hf download lmms-lab/VQAv2 --repo-type dataset --revision " in str(err.value)
