"""Reading other tools' files: the defects review 27 reproduced (findings 4, 7, 8, 9).

- A top-level JSON object (pandas ``orient="index"``) joins on ``--field id=``, not its keys.
- UTF-16/UTF-32/UTF-8 files with a byte-order mark are read; other non-UTF-8 bytes are one
  line naming the file, line and byte offset.
- A malformed element early in a JSON array fails without reading the rest of the file.
- Without ``--benchmark``, an empty-list gold names the file and row.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from datasets import Dataset, Features, Image, Value
from datasets import Sequence as Seq
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import (  # noqa: F401 (a fixture)
    own_datasets_cache,
    tiny_png,
    write_hub_snapshot,
)

from lmmprobe.data import json_stream
from lmmprobe.data.base import DataError
from lmmprobe.predictions import _stream
from lmmprobe.predictions.imported import READERS, ReadOptions

STR = Value("string")
TEXTVQA = {
    "image_id": STR, "question_id": Value("int32"), "question": STR,
    "question_tokens": Seq(STR), "image": Image(), "image_width": Value("int32"),
    "image_height": Value("int32"), "flickr_original_url": STR, "flickr_300k_url": STR,
    "answers": Seq(STR), "image_classes": Seq(STR), "set_name": STR, "ocr_tokens": Seq(STR),
}  # fmt: skip
GOLDS = {0: "red", 1: "blue", 2: "yellow"}
"""TextVQA copy: question id -> its answer (ids 0, 1, 2, as an index-keyed JSON's keys are)."""


def _textvqa(tmp_path: Path) -> str:
    n = len(GOLDS)
    rows = {
        "image_id": [f"a{i}" for i in GOLDS], "question_id": list(GOLDS),
        "question": [f"what colour? #{i}" for i in GOLDS], "question_tokens": [["what"]] * n,
        "image": [{"bytes": tiny_png((40 * i, 80, 160)), "path": f"{i}.png"} for i in GOLDS],
        "image_width": [8] * n, "image_height": [8] * n, "flickr_original_url": ["u"] * n,
        "flickr_300k_url": ["u"] * n, "answers": [[g] * 10 for g in GOLDS.values()],
        "image_classes": [["sign"]] * n, "set_name": ["val"] * n, "ocr_tokens": [["stop"]] * n,
    }  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "textvqa", {"validation": Dataset.from_dict(rows, features=Features(TEXTVQA))}
    )
    return f"textvqa,path={folder}"


def _score(tmp_path: Path, file: Path, *args: str) -> Any:
    return lmmprobe(
        "score", file, "--format", "json", *args,
        HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "cli-datasets-cache"),
    )  # fmt: skip


def _accuracy(done: Any) -> float:
    assert done.returncode == 0, done.stderr
    value: float = json.loads(done.stdout)["metrics"]["vqa_accuracy_evalai"]["value"]
    return value


# --------------------------------------------------------------------------- finding 4


@pytest.mark.usefixtures("own_datasets_cache")
def test_index_keyed_json_joins_on_the_mapped_id_not_the_keys(tmp_path: Path) -> None:
    data = _textvqa(tmp_path)
    # Rows in another order than the ids: the keys "0", "1", "2" are row numbers, and they
    # are also ids of the benchmark, so joining on them would pair answers wrongly.
    frame = pd.DataFrame({"qid": [2, 0, 1], "pred": [GOLDS[2], GOLDS[0], GOLDS[1]]})
    by_index, by_records = tmp_path / "index.json", tmp_path / "records.json"
    frame.to_json(by_index, orient="index")
    frame.to_json(by_records, orient="records")
    fields = ("--benchmark", data, "--field", "id=qid,prediction=pred")
    assert _accuracy(_score(tmp_path, by_index, *fields)) == 1.0
    assert _accuracy(_score(tmp_path, by_records, *fields)) == 1.0
    # Without --field id=, the object's keys stay the ids (as documented).
    keyed = tmp_path / "keyed.json"
    keyed.write_text(json.dumps({str(q): {"pred": g} for q, g in GOLDS.items()}))
    keys_only = ("--benchmark", data, "--field", "prediction=pred")
    assert _accuracy(_score(tmp_path, keyed, *keys_only)) == 1.0


@pytest.mark.usefixtures("own_datasets_cache")
def test_index_keyed_record_without_the_mapped_id_names_file_record_and_field(
    tmp_path: Path,
) -> None:
    data = _textvqa(tmp_path)
    path = tmp_path / "index.json"
    path.write_text(json.dumps({"0": {"qid": 0, "pred": "red"}, "1": {"pred": "blue"}}))
    done = _score(tmp_path, path, "--benchmark", data, "--field", "id=qid,prediction=pred")
    assert done.returncode != 0
    assert "index.json:#2: qid: missing" in done.stderr
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------- finding 7


@pytest.mark.usefixtures("own_datasets_cache")
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_files_with_a_byte_order_mark_are_read(tmp_path: Path, encoding: str) -> None:
    data = _textvqa(tmp_path)
    path = tmp_path / "answers.jsonl"  # PowerShell's `>` writes UTF-16LE with a BOM
    lines = [
        json.dumps({"question_id": q, "answer": g}, ensure_ascii=False) for q, g in GOLDS.items()
    ]
    path.write_text("\r\n".join(lines) + "\r\n", encoding=encoding)
    done = _score(
        tmp_path, path, "--benchmark", data, "--field", "id=question_id,prediction=answer"
    )
    assert _accuracy(done) == 1.0


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".tsv"])
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_every_text_layout_reads_byte_order_marked_files(
    tmp_path: Path, suffix: str, encoding: str
) -> None:
    rows = [{"id": "a", "prediction": "café"}, {"id": "b", "prediction": "naïve 日本"}]
    if suffix == ".jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    elif suffix == ".json":
        text = json.dumps(rows, ensure_ascii=False)
    else:
        sep = "," if suffix == ".csv" else "\t"
        text = f"id{sep}prediction\n" + "".join(f"{r['id']}{sep}{r['prediction']}\n" for r in rows)
    path = tmp_path / f"p{suffix}"
    bom = "\ufeff" if encoding in ("utf-16-be", "utf-8-sig") else ""  # the others write one
    path.write_bytes((bom + text).encode(encoding.removesuffix("-sig")))
    got = list(READERS.get("mapped").read(path, ReadOptions()))
    assert [(r.sample_id, r.prediction) for r in got] == [("a", "café"), ("b", "naïve 日本")]


@pytest.mark.usefixtures("own_datasets_cache")
def test_a_latin1_file_is_one_line_naming_file_line_and_the_fix(tmp_path: Path) -> None:
    data = _textvqa(tmp_path)
    path = tmp_path / "answers.csv"
    path.write_bytes("question_id,answer\n0,red\n1,caf\u00e9\n".encode("latin-1"))
    done = _score(
        tmp_path, path, "--benchmark", data, "--field", "id=question_id,prediction=answer"
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if "answers.csv" in x]
    assert "answers.csv:3: byte 0xe9 at offset 30: not UTF-8 text" in line
    assert "iconv -f latin1 -t utf-8" in line


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
@pytest.mark.parametrize("chunk", [5, 1 << 20])
def test_undecodable_bytes_are_located_in_any_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str, chunk: int
) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", chunk)
    good = [f'{{"id": "{i}", "prediction": "\u00fcber {i}"}}' for i in range(30)]
    if suffix == ".csv":
        good = [f"{i},\u00fcber {i}" for i in range(30)]
    body = "\n".join(good).encode() + b"\n"
    bad = '{"id": "x", "prediction": "caf\u00e9"}' if suffix != ".csv" else "x,caf\u00e9"
    head = {".jsonl": b"", ".json": b"[\n", ".csv": b"id,prediction\n"}[suffix]
    if suffix == ".json":
        body = ",\n".join(good).encode() + b",\n"
    data = head + body + bad.encode("latin-1") + (b"\n]" if suffix == ".json" else b"\n")
    path = tmp_path / f"p{suffix}"
    path.write_bytes(data)
    offset = data.index(b"\xe9")
    line = data[:offset].count(b"\n") + 1
    with pytest.raises(DataError) as err:
        list(READERS.get("mapped").read(path, ReadOptions()))
    assert str(err.value).startswith(f"{path}:{line}: byte 0xe9 at offset {offset}: not UTF-8 text")


# --------------------------------------------------------------------------- finding 8


def test_a_malformed_early_element_fails_without_reading_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", 1 << 16)
    path = tmp_path / "bad_early.json"
    filler = json.dumps({"id": "z", "prediction": "x" * 1000})
    with path.open("w") as fh:
        fh.write('[{"id": "a", "prediction": "red"}, {"id": "b", "prediction": bad},')
        fh.write(",".join([filler] * 16_000) + "]")  # ~16 MB after the bad element
    tracemalloc.start()
    try:
        with pytest.raises(DataError, match=r"bad_early\.json:#2: not valid JSON: Expecting value"):
            list(READERS.get("mapped").read(path, ReadOptions()))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # A few chunks (and the reader's own allocations), not the ~16 MB rest of the file.
    assert peak < 2 * 2**20 < path.stat().st_size / 4


@pytest.mark.parametrize("chunk", range(1, 14))
def test_tokens_cut_anywhere_by_a_chunk_still_decode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    # Each token the decoder can fail on before its end (literals, escapes, numbers, strings)
    # is cut at every offset by some chunk size: none is taken for a malformed element.
    monkeypatch.setattr(json_stream, "CHUNK", chunk)
    values = [
        {"t": True, "f": False, "n": None, "x": -12.5e-3, "big": 123456789012345},
        {"inf": float("-inf"), "esc": '\u00e9\U0001f600 \\ " \n'},
        "a string with \\u escapes: \u2603 \ud7ff",
        [[], {}, [1, [2, [3]]], {"k": {"k": "v" * 40}}],
    ]
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(values, ensure_ascii=True))
    got = [v for _, _, v in _stream.iter_json(path)]
    assert got == values


@pytest.mark.parametrize("chunk", range(1, 14))
def test_top_level_numbers_cut_by_a_chunk_still_decode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    # A value that is itself a number ({"q0": 0.5}, [1e-3, ...]) may be cut after "0." or
    # "1e": what is left at the buffer's end could still be the number's, so it reads on.
    monkeypatch.setattr(json_stream, "CHUNK", chunk)
    keyed = {f"q{i}": v for i, v in enumerate([0.5, -12.25, 1e-3, 7, 2.5e10, -0.0, 100])}
    path = tmp_path / "scalars.json"
    path.write_text(json.dumps(keyed))
    assert {k: v for _, k, v in _stream.iter_json(path)} == keyed
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(list(keyed.values())))
    assert [v for _, _, v in _stream.iter_json(listed)] == list(keyed.values())


def test_an_element_over_the_cap_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", 64)
    monkeypatch.setattr(json_stream, "MAX_ELEMENT", 1000)
    path = tmp_path / "huge.json"
    path.write_text(json.dumps([{"prediction": "x" * 500}, {"prediction": "y" * 5000}]))
    with pytest.raises(DataError, match=r"huge\.json:#2: not valid JSON: an element larger than"):
        list(_stream.iter_json(path))


# --------------------------------------------------------------------------- finding 9


def test_without_a_benchmark_an_empty_gold_names_file_and_row(tmp_path: Path) -> None:
    path = tmp_path / "golds.jsonl"
    path.write_text('{"answer": "3", "gt": ["3"]}\n{"answer": "3", "gt": []}\n')
    done = lmmprobe("score", path, "--field", "prediction=answer,gold=gt")
    assert done.returncode != 0
    assert f"{path}: row 2: gold: an empty list" in done.stderr
