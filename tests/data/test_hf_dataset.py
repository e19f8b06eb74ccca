"""The Hugging Face datasets source: saved folders and data files, column mapping, problems."""

from __future__ import annotations

import contextlib
import hashlib
import io
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from lmmprobe import evaluate
from lmmprobe.data import DataError, LoadResult, SampleProblem, load_source
from lmmprobe.registry import RegistryError

datasets = pytest.importorskip("datasets")

COLORS = {"red": (220, 30, 30), "green": (30, 160, 50), "blue": (30, 70, 220)}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # load_dataset converts data files into a cache; keep it out of the home folder.
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")


def png_bytes(color: str, size: tuple[int, int] = (8, 6)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, COLORS[color]).save(buf, format="PNG")
    return buf.getvalue()


def columns(n: int = 6, **override: list[Any]) -> dict[str, list[Any]]:
    """n color questions: image bytes, choices, an index answer, ids and a category column."""
    names = list(COLORS)
    truth = [names[i % 3] for i in range(n)]
    data: dict[str, list[Any]] = {
        "id": [f"q{i}" for i in range(n)],
        "image": [{"bytes": png_bytes(c), "path": None} for c in truth],
        "question": ["What color is the picture?"] * n,
        "choices": [names] * n,
        "answer": [names.index(c) for c in truth],
        "category": ["color"] * n,
    }
    data.update(override)
    return data


def image_dataset(data: dict[str, list[Any]]) -> Any:
    return datasets.Dataset.from_dict(data).cast_column("image", datasets.Image())


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load(spec: str, **kw: Any) -> LoadResult:
    return load_source(spec, **kw)


def only_problem(result: LoadResult, row: int, field: str) -> SampleProblem:
    assert result.invalid == 1, [str(p) for p in result.problems]
    (problem,) = result.problems
    assert (problem.line, problem.field) == (row, field)
    assert f"{result.source}:{row}: {field}: " in str(problem)
    return problem


# --- formats -------------------------------------------------------------------------------------


def test_parquet_file_with_image_feature(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    image_dataset(columns()).to_parquet(str(path))
    result = load(f"hf:{path}")
    assert result.invalid == 0, [str(p) for p in result.problems]
    assert result.source == f"{path}[test]"
    first = result.samples[0]
    assert [s.id for s in result.samples] == [f"q{i}" for i in range(6)]
    assert first.question == "What color is the picture?"
    assert first.choices == ["red", "green", "blue"]
    assert first.answer == 0 and result.samples[1].answer == 1
    assert first.formulation == "single_choice"
    assert first.metadata == {"category": "color", "split": "test"}
    # Encoded bytes are kept as they were stored: same hash as the PNG file itself.
    assert first.images[0].kind == "base64"
    assert first.images[0].content_hash() == sha(png_bytes("red"))
    assert first.images[0].load().getpixel((0, 0)) == COLORS["red"]


def test_save_to_disk_folder_dataset_dict(tmp_path: Path) -> None:
    folder = tmp_path / "saved"
    dd = datasets.DatasetDict(
        {"train": image_dataset(columns(2)), "test": image_dataset(columns(4))}
    )
    dd.save_to_disk(str(folder))
    assert len(load(f"hf:{folder}").samples) == 4  # default split: test
    train = load(f"hf:{folder},split=train")
    assert len(train.samples) == 2 and train.source == f"{folder}[train]"
    with pytest.raises(DataError, match="available: test, train"):
        load(f"hf:{folder},split=validation")


def test_save_to_disk_single_dataset_pil_images(tmp_path: Path) -> None:
    folder = tmp_path / "saved"
    pics = [Image.new("RGB", (5, 5), COLORS[c]) for c in ("red", "blue")]
    data = columns(2, image=pics, answer=["red", "blue"])  # answers given as option text
    image_dataset(data).save_to_disk(str(folder))
    result = load(f"hf:{folder}")
    assert result.source == str(folder)
    assert [s.answer for s in result.samples] == [0, 2]
    assert result.samples[1].images[0].load().getpixel((2, 2)) == COLORS["blue"]


def test_only_split_of_a_dict_is_used_without_split_option(tmp_path: Path) -> None:
    folder = tmp_path / "saved"
    datasets.DatasetDict({"validation": image_dataset(columns(3))}).save_to_disk(str(folder))
    assert len(load(f"hf:{folder}").samples) == 3


def test_jsonl_file_with_image_paths_and_mapping(tmp_path: Path, write_png, write_jsonl) -> None:
    write_png(tmp_path / "pics" / "a.png", size=(7, 3))
    rows = [
        {"qid": 11, "img": "pics/a.png", "prompt": "Which?", "opts": ["x", "y"], "label": "y"},
        {"qid": 12, "img": "pics/a.png", "prompt": "Which?", "opts": ["x", "y"], "label": "x"},
    ]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    spec = f"hf:{path},image=img,question=prompt,options=opts,answer=label,id=qid,split=dev"
    result = load(spec)
    assert result.invalid == 0, [str(p) for p in result.problems]
    assert [(s.id, s.answer) for s in result.samples] == [("11", 1), ("12", 0)]
    assert result.samples[0].images[0].load().size == (7, 3)
    assert result.samples[0].metadata == {"split": "dev"}


def test_open_ended_without_options_column_and_row_ids(tmp_path: Path) -> None:
    data = columns(2, answer=["a red picture", "green"])
    del data["choices"], data["id"]
    path = tmp_path / "d.parquet"
    image_dataset(data).to_parquet(str(path))
    result = load(f"hf:{path}")
    assert [s.id for s in result.samples] == ["row-0", "row-1"]
    assert [s.formulation for s in result.samples] == ["open_ended"] * 2
    assert result.samples[0].answer == ["a red picture"]


def test_raw_bytes_column(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    datasets.Dataset.from_dict(columns(2, image=[png_bytes("blue")] * 2)).to_parquet(str(path))
    (a, _) = load(f"hf:{path}").samples
    assert a.images[0].content_hash() == sha(png_bytes("blue"))


def test_image_list_column(tmp_path: Path) -> None:
    pair = [{"bytes": png_bytes("red"), "path": None}, {"bytes": png_bytes("blue"), "path": None}]
    ds = datasets.Dataset.from_dict(columns(1, image=[pair])).cast_column(
        "image", datasets.List(datasets.Image())
    )
    path = tmp_path / "d.parquet"
    ds.to_parquet(str(path))
    (s,) = load(f"hf:{path}").samples
    assert [im.content_hash() for im in s.images] == [sha(png_bytes("red")), sha(png_bytes("blue"))]


# --- invalid rows --------------------------------------------------------------------------------


def _parquet(tmp_path: Path, data: dict[str, list[Any]]) -> str:
    path = tmp_path / "d.parquet"
    image_dataset(data).to_parquet(str(path))
    return f"hf:{path}"


def test_answer_text_not_among_options(tmp_path: Path) -> None:
    spec = _parquet(tmp_path, columns(3, answer=["red", "purple", "blue"]))
    result = load(spec)
    assert [s.id for s in result.samples] == ["q0", "q2"]
    assert "not among the options" in only_problem(result, 1, "answer").reason


def test_answer_index_out_of_range(tmp_path: Path) -> None:
    result = load(_parquet(tmp_path, columns(3, answer=[0, 5, 1])))
    assert "out of range" in only_problem(result, 1, "answer").reason


def test_unreadable_image_bytes(tmp_path: Path) -> None:
    data = columns(3)
    data["image"][2] = {"bytes": b"garbage" * 20, "path": None}
    path = tmp_path / "d.parquet"
    # Stored as a plain struct column: the Image feature would refuse to encode garbage.
    datasets.Dataset.from_dict(data).to_parquet(str(path))
    result = load(f"hf:{path}")
    assert "unreadable image" in only_problem(result, 2, "image").reason


def test_duplicate_ids(tmp_path: Path) -> None:
    result = load(_parquet(tmp_path, columns(3, id=["a", "b", "a"])))
    assert [s.id for s in result.samples] == ["a", "b"]
    assert "row 0" in only_problem(result, 2, "id").reason


def test_strict_raises(tmp_path: Path) -> None:
    spec = _parquet(tmp_path, columns(3, answer=[0, 7, 1]))
    with pytest.raises(DataError) as info:
        load(spec, strict=True)
    assert ":1: answer: " in str(info.value)


@pytest.mark.parametrize("limit", [1, 4])
def test_limit_counts_valid_samples(tmp_path: Path, limit: int) -> None:
    spec = _parquet(tmp_path, columns(6, answer=[9, 0, 1, 2, 0, 1]))
    result = load(spec, limit=limit)
    assert [s.id for s in result.samples] == [f"q{i}" for i in range(1, limit + 1)]


# --- setup errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("opts", "words"),
    [
        (",question=prompt", "no column 'prompt' for question"),
        (",options=opts", "no column 'opts' for options"),
        (",colour=red", "no option"),
    ],
)
def test_bad_options(tmp_path: Path, opts: str, words: str) -> None:
    spec = _parquet(tmp_path, columns(2))
    with pytest.raises(DataError, match=words):
        load(spec + opts)


def test_missing_path_and_unknown_file_type(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        load(f"hf:{tmp_path / 'nope'}")
    (tmp_path / "d.xyz").write_text("x")
    with pytest.raises(DataError, match="unknown data file type"):
        load(f"hf:{tmp_path / 'd.xyz'}")


def test_missing_datasets_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _parquet(tmp_path, columns(1))
    monkeypatch.setitem(sys.modules, "datasets", None)  # makes `import datasets` fail
    with pytest.raises(RegistryError, match=r"pip install 'lmmprobe\[datasets\]'"):
        load(spec)


# --- end to end ----------------------------------------------------------------------------------


def test_evaluate_end_to_end(tmp_path: Path) -> None:
    spec = _parquet(tmp_path, columns(6))
    ev = evaluate(models=["first"], data=spec, db=str(tmp_path / "db"), out=str(tmp_path / "o"))
    assert ev.results.data.samples == 6
    # "first" always answers option 0 (red): right on rows 0 and 3.
    assert ev.results.models["first"].metrics["accuracy"].value == pytest.approx(2 / 6)


# ------------------------------------------------- parquet files decoding past their size


def _repeated_question_parquet(path: Path, groups: int, rows: int, size: int) -> Path:
    """`groups` row groups of `rows` rows sharing one `size`-byte question (one dictionary
    per row group), as re-test 6's 15.7 MB file of 1,500 rows that decoded to 1.5 GB."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    big = (bytes(range(256)) * (size // 512 + 1)).hex()[:size]
    schema = pa.schema([("id", pa.string()), ("question", pa.string()), ("answer", pa.string())])
    with pq.ParquetWriter(path, schema, use_dictionary=True) as writer:
        for g in range(groups):
            ids = [f"i{g}_{i}" for i in range(rows)]
            table = {"id": ids, "question": [big] * rows, "answer": ["a"] * rows}
            writer.write_table(pa.table(table, schema=schema))
    return path


def test_a_parquet_value_repeated_past_its_size_is_refused_before_conversion(
    tmp_path: Path,
) -> None:
    # Re-test 6 #18: `datasets` wrote every repeated value out into its Arrow cache (1.5 GB
    # from 15.7 MB, left on disk after it failed). Here 100 MB from 2 MB, refused first.
    from tests.console import lmmprobe

    bomb = _repeated_question_parquet(tmp_path / "bomb.parquet", groups=2, rows=50, size=1 << 20)
    assert bomb.stat().st_size < 3 << 20
    cache = tmp_path / "cache"
    res = lmmprobe("run", "-m", "first", "--data", f"hf:{bomb},image=id", "--dry-run",
                   "--db", tmp_path / "db", HF_DATASETS_CACHE=str(cache))  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    assert lines[0].startswith(f"error: {bomb}: column question decodes to more than"), out
    assert lines[0].endswith("values repeated, not a dataset"), out
    assert not any(f.is_file() for f in cache.rglob("*"))  # nothing converted


def _refused_one_line(tmp_path: Path, spec: str) -> str:
    from tests.console import lmmprobe

    cache = tmp_path / "cache"
    res = lmmprobe("run", "-m", "first", "--data", spec, "--dry-run",
                   "--db", tmp_path / "db", HF_DATASETS_CACHE=str(cache))  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    assert not any(f.is_file() for f in cache.rglob("*"))  # nothing converted
    return lines[0]


def _zigzag_varint(value: int, length: int) -> bytes:
    """`value` as thrift's compact protocol writes an i64, padded to `length` bytes."""
    value = (value << 1) ^ (value >> 63)
    return bytes(((value >> (7 * k)) & 0x7F) | (0x80 if k < length - 1 else 0)
                 for k in range(length))  # fmt: skip


def test_a_parquet_footer_understating_its_sizes_is_counted_as_decoded(tmp_path: Path) -> None:
    # Re-test 7 #3: a footer is the file's own claim; with a text column's stated size edited
    # from 314 MB down to 1,000 a 15.7 KB file passed and made a 301 MB copy. Here 100 MB.
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "lie.parquet"
    table = pa.table({"id": [f"q{i}" for i in range(100)], "question": ["x" * (1 << 20)] * 100})
    pq.write_table(table, path, use_dictionary=["id"], compression="zstd",
                   write_statistics=False)  # fmt: skip
    true = pq.ParquetFile(path).metadata.row_group(0).column(1).total_uncompressed_size
    data = path.read_bytes()
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    stated = _zigzag_varint(true, 4)
    assert true > 64 << 20 and data.count(stated, footer) == 1
    path.write_bytes(data.replace(stated, _zigzag_varint(1000, 4)))
    assert pq.ParquetFile(path).metadata.row_group(0).column(1).total_uncompressed_size == 1000
    line = _refused_one_line(tmp_path, f"hf:{path}")
    assert line.startswith(f"error: {path}: column question decodes to more than"), line


def test_the_parquet_files_of_a_folder_share_one_limit(tmp_path: Path) -> None:
    # Re-test 7 #6: each file of an hf: folder was checked alone against the 64 MiB floor,
    # while `datasets` converts them all into one copy (10 files of 60 MB: a 601 MB copy).
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "ds"
    folder.mkdir()
    value = pa.array(["x" * (1 << 20)])
    for part in range(2):
        question = pa.DictionaryArray.from_arrays(pa.array([0] * 40, pa.int32()), value)
        ids = [f"{part}-{i}" for i in range(40)]
        table = pa.table({"id": ids, "question": question, "answer": ["a"] * 40})
        pq.write_table(table, folder / f"test-{part}.parquet", compression="zstd")
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line.startswith(f"error: {folder / 'test-1.parquet'}: column question decodes"), line
    assert "from 2 parquet files of" in line, line


def test_a_parquet_file_of_too_many_row_groups_is_one_line(tmp_path: Path) -> None:
    # Re-test 7 #13: 50,000 one-row row groups took the check 23 s and 714 MB, and aborted
    # the process ("std::bad_alloc") under a 2 GB limit. Bounded from the footer.
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "rg.parquet"
    n = 11_000  # 33,000 column chunks
    table = pa.table({"id": [f"q{i}" for i in range(n)], "question": ["what?"] * n,
                      "answer": ["yes"] * n})  # fmt: skip
    pq.write_table(table, path, row_group_size=1)
    line = _refused_one_line(tmp_path, f"hf:{path}")
    assert line == (
        f"error: {path}: 11,000 row groups of 3 columns, more than the 32,768 column chunks "
        "(row groups times columns) lmmprobe reads from a parquet file: not a dataset"
    ), line


def test_one_row_group_of_too_many_columns_is_named_in_the_singular(tmp_path: Path) -> None:
    # Re-test 8 #6: "1 row groups of 50,000 columns".
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table({f"c{i}": [i] for i in range(33_000)}), path)
    line = _refused_one_line(tmp_path, f"hf:{path}")
    assert line.startswith(f"error: {path}: 1 row group of 33,000 columns, more than"), line


def test_a_failed_conversion_leaves_no_partial_copy(tmp_path: Path) -> None:
    # Re-test 6 #18: the cache folder of a conversion that failed stayed on disk.
    from tests.console import lmmprobe

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "q", "answer": "x"}\n{"id": "b", "question": \n')
    cache = tmp_path / "cache"
    res = lmmprobe("run", "-m", "first", "--data", f"hf:{bad}", "--dry-run",
                   "--db", tmp_path / "db", HF_DATASETS_CACHE=str(cache))  # fmt: skip
    assert res.returncode == 2 and "datasets cannot load it" in res.stderr, res.stderr
    assert not any(f.is_file() for f in cache.rglob("*")), sorted(cache.rglob("*"))


def test_a_real_parquet_file_passes_the_check_and_a_saved_copy_stays(tmp_path: Path) -> None:
    # The check refuses repetition, not size: images stored once each pass, and a converted
    # copy an earlier load made is kept when a later load of it fails.
    path = tmp_path / "q.parquet"
    image_dataset(columns(30)).to_parquet(str(path))
    assert len(load(f"hf:{path}").samples) == 30
    copies = list((tmp_path / "hf-cache" / "lmmprobe-local").iterdir())
    assert len(copies) == 1
    with pytest.raises(DataError, match="no column 'nope'"):
        load(f"hf:{path},question=nope")
    assert list((tmp_path / "hf-cache" / "lmmprobe-local").iterdir()) == copies


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.integers(1, 300),
    width=st.sampled_from([1, 1000, 40_000]),
    distinct=st.integers(1, 5),
    dictionary=st.booleans(),
    nested=st.booleans(),
)
def test_fuzz_check_parquet_bounds_what_the_file_decodes_to(
    tmp_path: Path, rows: int, width: int, distinct: int, dictionary: bool, nested: bool
) -> None:
    # Whatever the shape, the check either refuses in one line naming the file, or the file
    # decodes to no more than the limit it stated (here shrunk to 2 MiB, 8 times the size).
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lmmprobe.data.files import ParquetLimits, UnreadableFile, check_parquet

    values = [bytes([65 + i % 26]) * width for i in range(distinct)]
    column = pa.array([values[i % distinct] for i in range(rows)], pa.binary())
    if nested:
        column = pa.StructArray.from_arrays([column, pa.array(["p"] * rows)], ["bytes", "path"])
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"id": [str(i) for i in range(rows)], "v": column}), path,
                   use_dictionary=dictionary)  # fmt: skip
    limits = ParquetLimits(ratio=8, floor=2 << 20)
    limit = max(limits.floor, limits.ratio * path.stat().st_size)
    try:
        check_parquet(path, what="a dataset", limits=limits)
    except UnreadableFile as exc:
        assert str(exc).startswith(f"{path}: column ") and "\n" not in str(exc)
        assert rows * width > limit  # refused only where it is over (a little overhead aside)
        return
    decoded = pq.read_table(path).nbytes
    assert decoded <= limit


def test_a_path_only_image_outside_the_datasets_folder_is_that_rows_problem(
    tmp_path: Path,
) -> None:
    # Re-test 7 #12: Image values holding only a path (absolute, or ../ escaping the folder)
    # were read from anywhere on the machine and sent to the model.
    outside = tmp_path / "mine.png"
    outside.write_bytes(png_bytes("red"))
    (tmp_path / "ds" / "pics").mkdir(parents=True)
    (tmp_path / "ds" / "pics" / "in.png").write_bytes(png_bytes("blue"))
    paths = [str(outside), "../mine.png", "pics/in.png"]
    data = columns(3, image=[{"bytes": None, "path": p} for p in paths])
    path = tmp_path / "ds" / "d.parquet"
    datasets.Dataset.from_dict(data).to_parquet(str(path))  # stored as written, unchecked
    result = load(f"hf:{path}")
    folder = (tmp_path / "ds").resolve()
    assert [str(p) for p in result.problems] == [
        f"{path}[test]:{i}: image: image path {p!r} is outside the dataset's folder {folder}; "
        "lmmprobe reads a dataset's images only from inside its own folder"
        for i, p in enumerate(paths[:2])
    ]
    assert [s.id for s in result.samples] == ["q2"]


def _repeated_jsonl(rows: int) -> bytes:
    question = "x" * (1 << 20)
    return b"".join(
        f'{{"id": "r{i}", "question": "{question}", "answer": "yes"}}\n'.encode()
        for i in range(rows)
    )


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst", ".lz4"])
def test_a_compressed_data_file_decompressing_past_its_limit_is_refused(
    tmp_path: Path, suffix: str
) -> None:
    # Re-test 7 #9: a 320 KB test.jsonl.gz (300 copies of a 1 MB question) became a 300 MB
    # Arrow copy; only parquet was checked. Here 70 MB from well under 1 MB, refused first.
    import bz2
    import gzip
    import lzma

    import pyarrow as pa

    data = _repeated_jsonl(70)
    folder = tmp_path / "ds"
    folder.mkdir()
    path = folder / f"test.jsonl{suffix}"
    if suffix in (".zst", ".lz4"):
        codec = "zstd" if suffix == ".zst" else "lz4"
        with pa.CompressedOutputStream(str(path), codec) as out:
            out.write(data)
    else:
        path.write_bytes({".gz": gzip, ".bz2": bz2, ".xz": lzma}[suffix].compress(data))
    assert path.stat().st_size < 1 << 20
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line.startswith(f"error: {path}: decompresses to more than 67,108,864 bytes"), line
    assert line.endswith("at least 64 MiB): not a dataset"), line


def test_a_broken_compressed_data_file_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "test.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00not really gzip")
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line.startswith(f"error: {folder / 'test.jsonl.gz'}: not a readable gzip-compressed"), (
        line
    )


def test_a_small_compressed_data_file_still_loads(tmp_path: Path, write_png) -> None:
    import gzip

    folder = tmp_path / "ds"
    write_png(folder / "a.png")
    rows = b"".join(
        f'{{"id": "r{i}", "image": "a.png", "question": "q{i}?", "answer": "yes"}}\n'.encode()
        for i in range(3)
    )
    (folder / "test.jsonl.gz").write_bytes(gzip.compress(rows))
    result = load(f"hf:{folder}")
    assert result.invalid == 0, [str(p) for p in result.problems]
    assert [s.id for s in result.samples] == ["r0", "r1", "r2"]


@pytest.mark.parametrize(("name", "sep"), [("wide.csv", ","), ("wide.tsv", "\t")])
def test_a_table_of_too_many_columns_is_refused_before_conversion(
    tmp_path: Path, name: str, sep: str
) -> None:
    # Re-test 7 #9: a 9.9 MB CSV of 1,000,000 columns ran past 120 s at 5 GB under datasets'
    # csv builder; HEMM's tables were already held to check_csv's bounds.
    folder = tmp_path / "ds"
    folder.mkdir()
    path = folder / name
    path.write_text(sep.join(f"c{i}" for i in range(20_000)) + "\n" + sep.join(["1"] * 20_000))
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line == (
        f"error: {path}:row 1: 20,000 columns; a table has at most 16,384 (a spreadsheet's "
        "limit): is it the right file?"
    ), line
    single = _refused_one_line(tmp_path, f"hf:{path}") if name.endswith(".csv") else line
    assert single == line, single


def _arrow_file(path: Path, rows: int, size: int, *, stream: bool) -> Path:
    import pyarrow as pa

    table = pa.table({"id": [f"r{i}" for i in range(rows)], "question": ["x" * size] * rows,
                      "answer": ["yes"] * rows})  # fmt: skip
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    new = pa.ipc.new_stream if stream else pa.ipc.new_file
    with pa.OSFile(str(path), "wb") as sink, new(sink, table.schema, options=options) as writer:
        for batch in table.to_batches(max_chunksize=16):
            writer.write_batch(batch)
    return path


@pytest.mark.parametrize("stream", [True, False])
def test_an_arrow_file_of_compressed_buffers_decoding_past_its_limit_is_refused(
    tmp_path: Path, stream: bool
) -> None:
    # Re-test 7 #9: a 21 KB .arrow stream of zstd buffers (300 rows of one 1 MB question)
    # became a 301 MB Arrow copy. Here 70 MB from a few KB, refused before conversion.
    path = _arrow_file(tmp_path / "z.arrow", 70, 1 << 20, stream=stream)
    assert path.stat().st_size < 1 << 20
    line = _refused_one_line(tmp_path, f"hf:{path}")
    assert line.startswith(f"error: {path}: decodes to more than 67,108,864 bytes"), line
    assert line.endswith("values repeated or compressed away, not a dataset"), line


@pytest.mark.parametrize("stream", [True, False])
def test_a_small_arrow_file_still_loads(tmp_path: Path, stream: bool) -> None:
    path = _arrow_file(tmp_path / "d.arrow", 3, 10, stream=stream)
    result = load(f"hf:{path},image=id")
    assert result.invalid == 3  # read (the ids are no images): converted, not refused


def test_a_broken_arrow_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.arrow"
    path.write_bytes(b"ARROW1\x00\x00not an arrow file")
    line = _refused_one_line(tmp_path, f"hf:{path}")
    assert line.startswith(f"error: {path}: not a readable Arrow IPC file ("), line


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_a_compressed_table_of_too_many_columns_is_refused(tmp_path: Path, suffix: str) -> None:
    import gzip

    import pyarrow as pa

    folder = tmp_path / "ds"
    folder.mkdir()
    path = folder / f"wide.csv{suffix}"
    data = (",".join(f"c{i}" for i in range(20_000)) + "\n" + ",".join(["1"] * 20_000)).encode()
    if suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    else:
        with pa.CompressedOutputStream(str(path), "zstd") as out:
            out.write(data)
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line == (
        f"error: {path}:row 1: 20,000 columns; a table has at most 16,384 (a spreadsheet's "
        "limit): is it the right file?"
    ), line


def test_a_small_compressed_table_still_loads(tmp_path: Path, write_png) -> None:
    import gzip

    folder = tmp_path / "ds"
    write_png(folder / "a.png")
    rows = "id,image,question,answer\n" + "".join(f"r{i},a.png,q{i}?,yes\n" for i in range(3))
    (folder / "test.csv.gz").write_bytes(gzip.compress(rows.encode()))
    result = load(f"hf:{folder}")
    assert result.invalid == 0, [str(p) for p in result.problems]
    assert [s.id for s in result.samples] == ["r0", "r1", "r2"]


def test_an_hf_image_over_the_pixel_cap_is_that_rows_problem(tmp_path: Path) -> None:
    # Issue 34: an hf: image's bytes were verified with plain Image.open, whose own limit
    # (89 MP warns, 179 MP fails) let a 48 MP picture through; the project's 40 MP decoding
    # cap now holds, from the header, as for every other source.
    from tests.console import lmmprobe

    buffer = io.BytesIO()
    Image.new("1", (8000, 6000)).save(buffer, format="PNG")  # 48 MP, a few KB
    big = {"bytes": buffer.getvalue(), "path": None}
    path = tmp_path / "d.parquet"
    image_dataset(columns(2, image=[big, {"bytes": png_bytes("red"), "path": None}])).to_parquet(
        str(path)
    )
    res = lmmprobe("run", "-m", "first", "--data", f"hf:{path}", "--dry-run", "--strict",
                   "--db", tmp_path / "db", HF_DATASETS_CACHE=str(tmp_path / "cache"))  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines == [
        f"error: {path}[test]:0: image: image data is 8000×6000 (48 MP), over the 40 MP decoding "
        "limit: set LMMPROBE_MAX_IMAGE_PIXELS=48000000 to allow it (about 0.19 GB to decode), "
        "or downscale the file"
    ], out
    result = load(f"hf:{path}")
    assert [s.id for s in result.samples] == ["q1"]  # the other row still loads


# --- zip archives and JSON files (re-test 7 #9, what was left) ------------------------------------


def _zip(members: dict[str, bytes]) -> bytes:
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buf.getvalue()


def _rows(n: int) -> bytes:
    return b"".join(
        f'{{"id": "r{i}", "image": "a.png", "question": "q{i}?", "answer": "yes"}}\n'.encode()
        for i in range(n)
    )


def test_a_zip_unpacking_past_its_limit_is_refused_before_anything_is_unpacked(
    tmp_path: Path,
) -> None:
    # A zip of a few hundred kilobytes stating 70 MB of JSON Lines: datasets unpacked and
    # converted it whole; refused from the zip's directory, before anything is unpacked.
    folder = tmp_path / "ds"
    folder.mkdir()
    path = folder / "test.zip"
    path.write_bytes(_zip({"test.jsonl": _repeated_jsonl(70)}))
    assert path.stat().st_size < 1 << 20
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line.startswith(f"error: {path}: unpacks to more than 67,108,864 bytes"), line
    assert line.endswith("at least 64 MiB): not a dataset"), line


def test_what_a_zip_holds_is_checked_as_the_folders_own_files(tmp_path: Path) -> None:
    # Under the zip's limit, but what it holds is a gzip bomb (nested) or a JSON record too
    # long: named inside the archive.
    import gzip

    folder = tmp_path / "ds"
    folder.mkdir()
    path = folder / "test.zip"
    path.write_bytes(_zip({"part/test.jsonl": gzip.compress(_repeated_jsonl(70))}))
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    inner = f"{path}/part/test.jsonl"
    assert line.startswith(f"error: {inner}: decompresses to more than 67,108,864 bytes"), line
    path.write_bytes(_zip({"test.zip": _zip({"test.jsonl": _rows(3)})}))
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line.startswith(f"error: {path}/test.zip: a zip archive inside another archive"), line


def test_a_small_zip_still_loads(tmp_path: Path, write_png) -> None:
    folder = tmp_path / "ds"
    write_png(folder / "a.png")
    (folder / "test.zip").write_bytes(_zip({"test.jsonl": _rows(3)}))
    (folder / "a.png").unlink()  # the image path is read from the unpacked copy: not there
    result = load(f"hf:{folder},image=id")
    assert result.invalid == 3  # converted, not refused: the rows are read


def test_a_broken_zip_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "test.zip").write_bytes(_zip({"test.jsonl": _rows(3)})[:-30])
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line.startswith(f"error: {folder / 'test.zip'}: not a readable zip archive ("), line


def test_a_compressed_file_is_known_by_its_bytes_not_its_name(tmp_path: Path) -> None:
    # datasets unpacks a file by its first bytes: a test.jsonl holding gzip is decompressed.
    import gzip

    folder = tmp_path / "ds"
    folder.mkdir()
    path = folder / "test.jsonl"
    path.write_bytes(gzip.compress(_repeated_jsonl(70)))
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line.startswith(f"error: {path}: decompresses to more than 67,108,864 bytes"), line
    single = _refused_one_line(tmp_path, f"hf:{path}")
    assert single == line, single


@pytest.mark.parametrize("name", ["test.jsonl", "test.ndjson", "test.json"])
def test_a_json_record_too_long_or_too_deep_is_refused_before_conversion(
    tmp_path: Path, name: str
) -> None:
    folder = tmp_path / "ds"
    folder.mkdir()
    path = folder / name
    path.write_bytes(_rows(2) + b'{"id": "x", "question": "' + b"x" * (65 << 20) + b'"}\n')
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line == (f"error: {path}:3: a line longer than 64 MiB (at most 64 MiB per record)"), line
    path.write_bytes(_rows(2) + b'{"id": "x", "question": ' + b"[" * 101 + b"]" * 101 + b"}\n")
    # 102 levels: the object, then 101 lists (the top level is level 0, as the readers count)
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line == f"error: {path}:3: a value nested more than 100 levels deep; flatten it", line


def test_a_json_arrays_element_too_long_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(b'[{"id": "a"},\n {"id": "b", "question": "' + b"x," * (33 << 20) + b'"}]')
    line = _refused_one_line(tmp_path, f"hf:{path}")
    assert line == (
        f"error: {path}:2: an element of its top-level array longer than 64 MiB (at most "
        "64 MiB per record)"
    ), line


@pytest.mark.parametrize("compact", [True, False])
def test_a_json_array_still_loads(tmp_path: Path, write_png, compact: bool) -> None:
    import json

    folder = tmp_path / "ds"
    write_png(folder / "a.png")
    rows = [{"id": f"r{i}", "image": "a.png", "question": f"q{i}, [x]?", "answer": "yes",
             "extra": {"deep": [[[1, 2], [3]]]}} for i in range(3)]  # fmt: skip
    (folder / "test.json").write_text(json.dumps(rows, indent=None if compact else 2))
    result = load(f"hf:{folder}")
    assert result.invalid == 0, [str(p) for p in result.problems]
    assert [s.id for s in result.samples] == ["r0", "r1", "r2"]


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4),
                    max_leaves=30))  # fmt: skip
@settings(max_examples=150, deadline=None)
def test_fuzz_check_json_measures_records_and_nesting_as_a_decoder_would(value: Any) -> None:
    # Against the decoded value (small limits): a top-level array is measured by its
    # elements, anything else as one line; the nesting as the decoder sees it.
    import json

    from lmmprobe.data import files
    from lmmprobe.data.rows import too_deep

    records = value if isinstance(value, list) else [value]
    texts = [json.dumps(r) for r in records]
    data = "[" + ", ".join(texts) + "]" if isinstance(value, list) else texts[0] + "\n"
    limit = 40
    deep = too_deep(value, 3) is not None
    old = files.MAX_ELEMENT, files.MAX_NESTING
    files.MAX_ELEMENT, files.MAX_NESTING = limit, 3
    try:
        files.check_json(Path("x.json"), io.BytesIO(data.encode()))
        refused = None
    except DataError as exc:
        refused = str(exc)
    finally:
        files.MAX_ELEMENT, files.MAX_NESTING = old
    if refused is None:
        assert not deep and all(len(t) <= limit for t in texts), data
    elif "nested" in refused:
        assert deep, (data, refused)
    else:
        assert any(len(t) + 2 > limit for t in texts), (data, refused)


def _key_paths(value: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    # The fields pyarrow makes of a record: a key under its object's path, a list's
    # objects' keys under the list's own path.
    found: set[tuple[str, ...]] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            found |= {(*prefix, key)} | _key_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for item in value:
            found |= _key_paths(item, prefix)
    return found


_KEYS = st.text(max_size=4) | st.sampled_from(['"', "\\", "é", "a" * 300, "b" * 300])
_RECORDS = st.recursive(st.none() | st.integers() | st.text(max_size=5),
                        lambda kids: st.lists(kids, max_size=4) | st.dictionaries(_KEYS, kids, max_size=4),
                        max_leaves=30)  # fmt: skip


@given(st.lists(_RECORDS, max_size=5), st.booleans())
@settings(max_examples=200, deadline=None)
def test_fuzz_key_paths_count_what_a_decoder_finds_decoded_or_scanned(
    records: list[Any], ascii_only: bool
) -> None:
    # A file's records are counted decoded (each line short enough) and scanned (as a line too
    # long to decode, or values side by side on one line, is): both count the distinct paths
    # of the decoded records, escapes and long keys (kept as their hash) included.
    import json

    from lmmprobe.data import files

    expected: set[tuple[str, ...]] = set()
    for record in records:
        expected |= _key_paths(record)
    lines = [json.dumps(r, ensure_ascii=ascii_only).encode() for r in records]
    decoded, scanned, together = (files._KeyPaths(Path("x.jsonl")) for _ in range(3))
    for n, line in enumerate(lines, 1):
        decoded.record(line, n)
        scanned._scan(line, n)
    together.record(b" ".join(b"[]" if line[:1] not in b"[{" else line for line in lines), 1)
    assert decoded.count == scanned.count == len(expected), (lines, expected)
    assert together.count == len(expected), (lines, expected)


def test_a_json_array_and_json_lines_share_one_count_of_paths_per_file() -> None:
    # The count is the file's: distinct paths of all records (a path seen again is not new).
    import json

    from lmmprobe.data import files

    def check(name: str, data: str) -> None:
        files.check_json(Path(name), io.BytesIO(data.encode()))

    half = files.MAX_COLUMNS // 2
    same = [{f"k{i}": {"x": [{"y": 0}]} for i in range(half // 3)}] * 50
    check("same.jsonl", "".join(json.dumps(r) + "\n" for r in same))
    check("same.json", json.dumps(same, indent=1))
    spread = [{f"k{r}_{i}": 0 for i in range(half)} for r in range(3)]
    with pytest.raises(DataError, match=r"^a.jsonl:3: more than 16,384 distinct fields"):
        check("a.jsonl", "".join(json.dumps(r) + "\n" for r in spread))
    with pytest.raises(DataError, match=r"^a.json:4: more than 16,384 distinct fields"):
        check("a.json", "[\n" + ",\n".join(json.dumps(r) for r in spread) + "\n]")


def test_an_unclosed_string_of_escaped_quotes_is_scanned_once() -> None:
    # A string never closed, of escaped quotes, before brackets enough to be scanned for its
    # nesting: each escaped quote began another string read to the end of the line
    # (quadratic: 40 KB took 15 s). Read once, it is one string, and the line is the reader's.
    import time

    from lmmprobe.data import files

    line = b'"' + b'\\"' * 500_000 + b"[" * 200 + b"\n"
    started = time.monotonic()
    files.check_json(Path("x.jsonl"), io.BytesIO(line))
    assert time.monotonic() - started < 20


def test_a_feather_file_is_checked_as_the_arrow_file_it_is(tmp_path: Path) -> None:
    # datasets reads no .feather file from a folder (nor does hf: name it); one renamed .arrow
    # is an Arrow IPC file (lz4 buffers, feather's default) and counted as one.
    import pyarrow as pa
    import pyarrow.feather as feather

    table = pa.table({"id": [f"r{i}" for i in range(70)], "question": ["x" * (1 << 20)] * 70})
    folder = tmp_path / "ds"
    folder.mkdir()
    path = folder / "test.arrow"
    feather.write_feather(table, str(path), chunksize=8)
    assert path.stat().st_size < 1 << 20
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line.startswith(f"error: {path}: decodes to more than 67,108,864 bytes"), line
    feather.write_feather(table.slice(0, 3), str(folder / "d.feather"))
    assert "unknown data file type" in _refused_one_line(tmp_path, f"hf:{folder / 'd.feather'}")


def test_an_arrow_batch_is_counted_from_its_metadata_before_it_is_decoded(tmp_path: Path) -> None:
    # A compressed buffer states its decoded length in its first 8 bytes, and Arrow allocates
    # that much before decompressing: one batch stating 3.5 GB was allocated whole before it
    # was counted (under 3 GB of address space: "too large to check (out of memory ...)").
    # Counted from the metadata, it is refused for what it states, nothing allocated.
    import os
    import shlex
    import struct
    import subprocess

    import pyarrow as pa

    path = tmp_path / "lie.arrow"
    table = pa.table({"question": ["x" * 123_457]})
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with (
        pa.OSFile(str(path), "wb") as sink,
        pa.ipc.new_stream(sink, table.schema, options=options) as w,
    ):
        w.write_table(table)
    raw = path.read_bytes()
    at = raw.rfind(struct.pack("<q", 123_457))  # the text buffer's stated length (the last)
    path.write_bytes(raw[:at] + struct.pack("<q", 3500 << 20) + raw[at + 8 :])
    script = Path(sys.executable).parent / "lmmprobe"
    command = (
        f"ulimit -v 3000000; exec {shlex.quote(str(script))} run -m first --data "
        f"{shlex.quote(f'hf:{path}')} --dry-run --db {shlex.quote(str(tmp_path / 'db'))}"
    )
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "cache")},
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 2 and "Traceback" not in out, out
    assert out.strip().startswith(f"error: {path}: decodes to more than 67,108,864 bytes"), out


# --- parquet page headers (re-test 8, re-test 7 #3's check) --------------------------------------


def _one_page_parquet(path: Path) -> tuple[Path, int]:
    """A parquet file whose question column is one zstd page of a 1 MB value, and where that
    page's header states its uncompressed size (a 4-byte varint, after the page type)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"id": ["q0"], "question": ["x" * (1 << 20)], "answer": ["yes"]})
    pq.write_table(table, path, use_dictionary=False, compression="zstd", write_statistics=False)
    page = pq.ParquetFile(path).metadata.row_group(0).column(1).data_page_offset
    data = path.read_bytes()
    assert data[page : page + 3] == b"\x15\x00\x15"  # field 1 (type 0), then field 2's varint
    return path, page + 3


@pytest.mark.parametrize(
    ("stated", "ends"),
    [
        (130_000_000, "values repeated, not a dataset"),  # past the budget: never allocated
        (5_000_000, "a damaged or edited parquet file"),  # within it, but not the footer's
    ],
)
def test_a_parquet_page_header_stating_more_than_its_footer_is_refused_before_decoding(
    tmp_path: Path, stated: int, ends: str
) -> None:
    # Re-test 8 (re-test 7 #3): pyarrow allocates a page's stated uncompressed size and
    # decompresses it whole before its values are counted; an edited page header is now read
    # (parquet_pages) and refused before pyarrow decodes the page, naming file and column.
    path, at = _one_page_parquet(tmp_path / "page.parquet")
    data = bytearray(path.read_bytes())
    data[at : at + 4] = _zigzag_varint(stated, 4)
    path.write_bytes(bytes(data))
    line = _refused_one_line(tmp_path, f"hf:{path},image=id")
    assert line.startswith(f"error: {path}: column question"), line
    assert line.endswith(ends), line
    if stated == 5_000_000:
        assert f"its pages state {stated:,} bytes uncompressed, its footer 1,04" in line, line


def test_parquet_pages_of_every_kind_a_tool_writes_pass_the_check(tmp_path: Path) -> None:
    # Honest files: dictionary and plain pages, data pages v1 and v2, statistics, nulls,
    # nested lists and structs, several row groups and pages: their headers agree with
    # their footers, and the file still loads.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lmmprobe.data.files import check_parquet

    n = 3000
    table = pa.table({
        "id": [f"q{i}" for i in range(n)],
        "image": [{"bytes": png_bytes("red"), "path": None}] * n,
        "question": [None if i % 7 == 0 else f"question {i % 50}" for i in range(n)],
        "choices": [["red", "green", "blue"][: 1 + i % 3] for i in range(n)],
        "answer": [i % 3 for i in range(n)],
        "score": [i / 3 for i in range(n)],
    })  # fmt: skip
    for version in ("1.0", "2.0"):
        path = tmp_path / f"v{version}.parquet"
        pq.write_table(table, path, row_group_size=1000, data_page_size=4096,
                       data_page_version=version, compression="snappy")  # fmt: skip
        check_parquet(path, what="a dataset")
    assert pq.ParquetFile(tmp_path / "v2.0.parquet").metadata.num_row_groups == 3
    # Repeated images (dictionary-encoded bytes in a struct) over several row groups: the
    # scan read them across row groups and failed ("Nested data conversions not implemented
    # for chunked array outputs"), refusing an honest dataset as unreadable.
    small = tmp_path / "small.parquet"
    pq.write_table(image_dataset(columns(30)).data.table, small, row_group_size=10,
                   data_page_version="2.0")  # fmt: skip
    result = load(f"hf:{small}")
    assert len(result.samples) == 30, [str(p) for p in result.problems][:3]


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=2000))
def test_fuzz_a_page_header_from_any_bytes_is_read_or_refused_in_a_few_words(data: bytes) -> None:
    from lmmprobe.data.parquet_pages import PageHeader, PageHeaderError, read_page_header

    try:
        header = read_page_header(data)
    except PageHeaderError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert isinstance(header, PageHeader)
    assert 0 < header.length <= len(data)
    assert header.uncompressed_size >= 0 and header.compressed_size >= 0


@settings(max_examples=100, deadline=None)
@given(
    prefix=st.sampled_from([b"", b"\x15\x00\x15\x02\x15\x02", b"\x1c", b"\x19", b"\x1b"]),
    unit=st.binary(min_size=1, max_size=4),
    repeat=st.integers(1, 200_000),
)
def test_fuzz_page_headers_nested_long_or_huge_are_refused_quickly(
    prefix: bytes, unit: bytes, repeat: int
) -> None:
    # Nested structs and lists, lists stating 2^60 elements, varints of any length, fields
    # without end: each is refused from the header's own bytes, whatever it claims.
    import time

    from lmmprobe.data.parquet_pages import PageHeaderError, read_page_header

    data = prefix + unit * repeat
    started = time.monotonic()
    with contextlib.suppress(PageHeaderError):
        read_page_header(data)
    assert time.monotonic() - started < 10  # a generous bound: linear in at most 16 MiB


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x1c" * 1000, "nested more than 16 deep"),
        (b"\x15" + b"\xff" * 20, "a varint longer than 10 bytes"),
        (b"\x19\xf8" + b"\xff" * 9 + b"\x01", "past the bytes read"),  # a list of 2^63 i32
        (b"\x15\x00\x15\x03\x15\x02\x00", "a negative size"),
        (b"\x11" * 100_001, "more than 100,000 fields"),
        (b"\x15\x00\x00", "without its type and sizes"),
    ],
)
def test_a_page_header_past_the_readers_bounds_is_one_reason(data: bytes, reason: str) -> None:
    from lmmprobe.data.parquet_pages import PageHeaderError, read_page_header

    with pytest.raises(PageHeaderError, match=reason):
        read_page_header(data)


def _varint(value: int) -> bytes:
    out = b""
    while True:
        low, value = value & 0x7F, value >> 7
        if not value:
            return out + bytes([low])
        out += bytes([low | 0x80])


def _zz(value: int) -> bytes:
    return _varint((value << 1) ^ (value >> 63))


def test_a_size_repeated_in_another_integer_type_is_skipped_as_pyarrow_skips_it() -> None:
    # Re-test 10 #1: field 2 stated truly as an i32, then again as an i64 holding 5. Thrift's
    # reader (pyarrow) skips a field whose type is not the declared one and allocates the
    # true size; the check took the last value, 5. The same for a data page's num_values.
    from lmmprobe.data.parquet_pages import read_page_header

    big = 600 << 20
    i64_field_2 = b"\x06" + _zz(2) + _zz(5)  # delta 0: the field id follows, zigzag
    i64_num_values = b"\x06" + _zz(1) + _zz(1000)
    data = (
        b"\x15" + _zz(0)  # type: DATA_PAGE
        + b"\x15" + _zz(big) + i64_field_2  # uncompressed_page_size, true, then a lie
        + b"\x15" + _zz(600_000)  # compressed_page_size (delta 1 from field 2)
        + b"\x2c" + b"\x15" + _zz(1) + i64_num_values + b"\x00"  # data_page_header
        + b"\x00"
    )  # fmt: skip
    header = read_page_header(data)
    assert (header.type, header.uncompressed_size, header.num_values) == (0, big, 1)


def test_a_page_header_stating_a_field_twice_is_refused() -> None:
    from lmmprobe.data.parquet_pages import PageHeaderError, read_page_header

    twice = b"\x15" + _zz(0) + b"\x15" + _zz(600 << 20) + b"\x05" + _zz(2) + _zz(5)
    with pytest.raises(PageHeaderError, match="stating its field 2 twice"):
        read_page_header(twice + b"\x15" + _zz(10) + b"\x00")


# --- the formats an hf: folder may hold (re-test 8 #2) --------------------------------------------


def _eval_log(samples: int, size: int) -> bytes:
    """An Inspect ``.eval`` log: a zip of ``samples/*.json``, each holding a `size`-byte text."""
    import json

    members = {"header.json": b"{}"}
    for i in range(samples):
        members[f"samples/{i}.json"] = json.dumps({"id": i, "input": "x" * size}).encode()
    return _zip(members)


def test_an_inspect_eval_log_in_a_folder_is_refused_naming_the_formats_read(tmp_path: Path) -> None:
    # Re-test 8 #2: datasets picks its `eval` builder for a `.eval` file (a zip of JSON
    # samples it loads whole): a 31 KB file took 33 s and made a 31 MB copy, unchecked. Here
    # refused before datasets reads it, in one line naming the file and the formats read.
    folder = tmp_path / "ev"
    folder.mkdir()
    path = folder / "test.eval"
    path.write_bytes(_eval_log(3, 1 << 20))
    line = _refused_one_line(tmp_path, f"hf:{folder},split=logs")
    assert line == (
        f"error: {path}: datasets reads it with its eval builder, which lmmprobe does not check; "
        "an hf: dataset's files may be parquet, JSON / JSON Lines (.json, .jsonl, .ndjson), "
        "CSV / TSV and Arrow (.arrow) files, compressed (.gz, .bz2, .xz, .zst, .lz4) or not, in "
        "a .zip or not, and images: convert it, or move it out of the folder"
    ), line


@pytest.mark.parametrize(
    ("name", "builder"),
    [
        ("notes.txt", "text"),
        ("test.xml", "xml"),
        ("test.conll", "conll"),
        ("instruction.md", "harbor"),
        ("task.toml", "harbor"),
        ("test.h5", "hdf5"),
        ("test.pdf", "pdffolder"),
        ("test.lance", "lance"),
        ("test.vortex", "vortex"),
        ("genes.fasta", "fasta"),
        ("data.txt.gz", "text"),
    ],
)
def test_a_data_file_of_a_builder_lmmprobe_does_not_check_is_refused(
    tmp_path: Path, write_png, write_jsonl, name: str, builder: str
) -> None:
    # Their builders read lines or records of any length, unchecked; beside checked files
    # too (the most common suffix, or a card, picks the builder). README.md is the card.
    folder = tmp_path / "ds"
    write_png(folder / "a.png")
    write_jsonl(folder / "test.jsonl", [{"id": "r0", "image": "a.png", "question": "q?",
                                        "answer": "yes"}])  # fmt: skip
    (folder / "README.md").write_text("# a card\n")
    (folder / name).write_bytes(b"x" * 10)
    with pytest.raises(DataError) as caught:
        load(f"hf:{folder}")
    assert str(caught.value).startswith(
        f"{folder / name}: datasets reads it with its {builder} builder, which lmmprobe does "
        "not check; an hf: dataset's files may be parquet,"
    ), caught.value
    (folder / name).unlink()
    assert [s.id for s in load(f"hf:{folder}").samples] == ["r0"]  # the card and image: read


def test_a_file_of_another_format_datasets_leaves_unread_is_no_reason_to_refuse(
    tmp_path: Path, write_png, write_jsonl
) -> None:
    # `datasets` reads a folder with its most common format's builder and leaves the other
    # files unread: a NOTES.txt beside two JSON Lines files is not read, so not refused.
    folder = tmp_path / "ds"
    write_png(folder / "a.png")
    for i in range(2):
        write_jsonl(folder / f"part-{i}.jsonl", [{"id": f"r{i}", "image": "a.png",
                                                  "question": "q?", "answer": "yes"}])  # fmt: skip
    (folder / "NOTES.txt").write_text("how the rows were made\n" * 3)
    assert sorted(s.id for s in load(f"hf:{folder},split=train").samples) == ["r0", "r1"]
    (folder / "MORE.txt").write_text("x\n")  # as common as .jsonl: datasets may pick its builder
    with pytest.raises(DataError, match="datasets reads it with its text builder"):
        load(f"hf:{folder},split=train")
    # Re-test 10 #7: a file named for a split is taken by its name, whatever the counts.
    (folder / "MORE.txt").unlink()
    (folder / "test.txt").write_text("x\n")
    with pytest.raises(DataError, match=r"test\.txt: datasets reads it with its text builder"):
        load(f"hf:{folder},split=train")


def _card(folder: Path, config: str, name: str = "README.md") -> Path:
    """A dataset card naming one config (its YAML lines after ``- config_name: default``)."""
    body = "configs:\n- config_name: default\n" + config
    text = body if name != "README.md" else f"---\n{body}---\n# a card\n"
    (folder / name).write_text(text)
    return folder / name


@pytest.mark.parametrize(
    "case", ["data_dir_up", "data_dir_absolute", "linked_folder", "data_dir_linked", "yaml_file"]
)
def test_a_card_leading_datasets_out_of_the_folder_is_refused(
    tmp_path: Path, write_png, case: str
) -> None:
    # Re-test 10 #2: a card's data_dir (../E2, or absolute), or its data_files through a
    # folder that is a link, had datasets read files outside the dataset's folder that
    # lmmprobe never checked (a 535 KB .gz of 188 MB: minutes, then killed). The card's
    # data_dir is refused in its words; a file datasets resolves outside, in one line.
    outside = tmp_path / "E"
    outside.mkdir()
    (outside / "test.jsonl").write_bytes(_rows(2))
    folder = tmp_path / "ds"
    write_png(folder / "a.png")
    (folder / "a.jsonl").write_bytes(_rows(1))
    at = "configs[0] (config_name 'default')"
    if case == "data_dir_up":
        card = _card(folder, "  data_dir: ../E\n")
        want = f"{card}:2: {at}: data_dir climbs out of the folder ('../E'); it must stay inside it"
    elif case == "data_dir_absolute":
        card = _card(folder, f"  data_dir: {outside}\n")
        want = (
            f"{card}:2: {at}: data_dir is an absolute folder ('{outside}'); it must be "
            "relative to the folder"
        )
    else:
        if case == "yaml_file":  # datasets reads this file's configs too; lmmprobe no card
            _card(folder, "  data_dir: ../E\n", name=".huggingface.yaml")
            file = folder / ".." / "E" / "test.jsonl"
        else:
            (folder / "sub").symlink_to(outside, target_is_directory=True)
            if case == "linked_folder":
                _card(folder, "  data_files:\n  - split: test\n    path: sub/*.jsonl\n")
            else:
                _card(folder, "  data_dir: sub\n")
            file = folder / "sub" / "test.jsonl"
        want = (
            f"{file}: lies outside the dataset's folder {folder} (in {outside}); datasets would "
            "read it, but an hf: dataset's data files must lie inside its folder"
        )
    assert _refused_one_line(tmp_path, f"hf:{folder}") == f"error: {want}"


def test_files_reached_through_links_inside_the_folder_are_read(tmp_path: Path, write_png) -> None:
    # The other side of the rule: a folder linked inside the dataset's, and a data file that
    # is itself a link (the hub cache's snapshots link each file to its blob) are read.
    folder = tmp_path / "ds"
    write_png(folder / "a.png")
    (folder / "real").mkdir()
    (folder / "real" / "test.jsonl").write_bytes(_rows(2))
    (folder / "sub").symlink_to(folder / "real", target_is_directory=True)
    _card(folder, "  data_files:\n  - split: test\n    path: sub/*.jsonl\n")
    assert [s.id for s in load(f"hf:{folder}").samples] == ["r0", "r1"]
    blob = tmp_path / "blobs" / "0a1b"
    blob.parent.mkdir()
    blob.write_bytes(_rows(3))
    (folder / "README.md").unlink()
    (folder / "sub").unlink()
    shutil.rmtree(folder / "real")
    (folder / "test.jsonl").symlink_to(blob)
    assert [s.id for s in load(f"hf:{folder}").samples] == ["r0", "r1", "r2"]


def test_a_card_naming_a_hidden_folder_has_its_files_checked(tmp_path: Path, write_png) -> None:
    # Re-test 10 #2: the folder's own listing skips hidden paths, so a card's data_files
    # `.h/*.jsonl.gz` had datasets convert a .gz of 4,000,000 rows unchecked. What datasets
    # resolves for the config is checked: the file is refused as its twin in sight is.
    import gzip

    folder = tmp_path / "ds"
    write_png(folder / "a.png")
    (folder / "a.jsonl").write_bytes(_rows(1))
    (folder / ".h").mkdir()
    line = b'{"id": "r", "image": "a.png", "question": "q", "answer": "a"}\n'
    with gzip.open(folder / ".h" / "test.jsonl.gz", "wb", compresslevel=6) as fh:
        for _ in range(72):  # 72 MiB of rows, past the 64 MiB a small file may unpack to
            fh.write(line * ((1 << 20) // len(line) + 1))
    _card(folder, "  data_files:\n  - split: test\n    path: .h/*.jsonl.gz\n")
    got = _refused_one_line(tmp_path, f"hf:{folder}")
    assert got.startswith(
        f"error: {folder / '.h' / 'test.jsonl.gz'}: decompresses to more than 67,108,864 bytes"
    ), got


@pytest.mark.parametrize("case", ["card_txt", "split_folder", "card_mixed"])
def test_files_datasets_reads_with_a_builder_lmmprobe_does_not_check_are_refused(
    tmp_path: Path, write_png, case: str
) -> None:
    # Re-test 10 #7: the allow-list counted suffixes over the folder, while datasets takes a
    # card's data_files, or a folder named for a split, first: sub/*.txt named by the card,
    # or test/notes.txt, beside two .jsonl files were read with the text builder. Decided
    # now on the files datasets resolves, and the builder it reads them with.
    folder = tmp_path / "ds"
    write_png(folder / "a.png")
    for name in ("a.jsonl", "b.jsonl"):
        (folder / name).write_bytes(_rows(1))
    if case == "card_txt":
        (folder / "sub").mkdir()
        (folder / "sub" / "notes.txt").write_text("a line\n")
        _card(folder, "  data_files:\n  - split: test\n    path: sub/*.txt\n")
        file, builder = folder / "sub" / "notes.txt", "text"
    elif case == "split_folder":
        (folder / "test").mkdir()
        (folder / "test" / "notes.txt").write_text("a line\n")
        file, builder = folder / "test" / "notes.txt", "text"
    else:  # two CSV files and a JSON Lines file: the csv builder splits all three at commas
        for name in ("c.csv", "d.csv"):
            (folder / name).write_text("id,image,question,answer\nr9,a.png,q?,yes\n")
        _card(folder, "  data_files:\n  - split: test\n    path: [c.csv, d.csv, a.jsonl]\n")
        line = _refused_one_line(tmp_path, f"hf:{folder}")
        assert line == (
            f"error: {folder / 'a.jsonl'}: datasets reads it with its csv builder, but by its "
            "name it is a JSON file; the data files of one config must all be of one format"
        ), line
        return
    line = _refused_one_line(tmp_path, f"hf:{folder}")
    assert line.startswith(
        f"error: {file}: datasets reads it with its {builder} builder, which lmmprobe does not "
        "check; an hf: dataset's files may be parquet,"
    ), line


@pytest.mark.parametrize(
    "name", ["test.tsv", "test.ndjson", "test.jsonl.gz", "test.csv.bz2", "test.zip"]
)
def test_a_single_data_file_of_any_format_a_folder_reads_is_read(
    tmp_path: Path, write_png, name: str
) -> None:
    # A folder of .tsv or .ndjson files (or a zip of them) was read, while the same file
    # given alone was refused as "unknown data file type".
    import bz2
    import gzip

    write_png(tmp_path / "a.png")
    if ".tsv" in name or ".csv" in name:
        sep = "\t" if ".tsv" in name else ","
        text = sep.join(["id", "image", "question", "answer"]) + "\n"
        text += "".join(sep.join([f"r{i}", "a.png", f"q{i}?", "yes"]) + "\n" for i in range(3))
        raw = text.encode()
    else:
        raw = _rows(3)
    if name.endswith(".zip"):
        raw = _zip({"test.jsonl": raw})
    elif name.endswith(".gz"):
        raw = gzip.compress(raw)
    elif name.endswith(".bz2"):
        raw = bz2.compress(raw)
    (tmp_path / name).write_bytes(raw)
    result = load(f"hf:{tmp_path / name}")
    assert result.invalid == 0, [str(p) for p in result.problems]
    assert [s.id for s in result.samples] == ["r0", "r1", "r2"]
    assert [s.question for s in result.samples] == ["q0?", "q1?", "q2?"]


def test_a_single_file_of_another_format_names_the_formats_read(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("a line\n")
    line = _refused_one_line(tmp_path, f"hf:{path}")
    assert line == (
        f"error: {path}: unknown data file type: lmmprobe reads parquet, JSON / JSON Lines "
        "(.json, .jsonl, .ndjson), CSV / TSV and Arrow (.arrow) files, compressed (.gz, .bz2, "
        ".xz, .zst, .lz4) or not, or a .zip of them"
    ), line


def test_prefix_encoded_text_is_scanned_a_few_rows_at_a_time(tmp_path: Path) -> None:
    # Re-test 8 (re-test 7 #3): a 34 KB file of DELTA_BYTE_ARRAY text (one 1 MB question in
    # every row, each sharing its predecessor's bytes) took the check itself 499 MB: 256 rows
    # were decoded before they were counted. Such columns are now scanned 16 rows at a time.
    import subprocess

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "delta.parquet"
    schema = pa.schema([("id", pa.string()), ("question", pa.string())])
    with pq.ParquetWriter(path, schema, use_dictionary=False, compression="zstd",
                          column_encoding={"question": "DELTA_BYTE_ARRAY"}) as writer:  # fmt: skip
        for start in range(0, 300, 25):
            ids = [f"q{i}" for i in range(start, start + 25)]
            writer.write_table(pa.table({"id": ids, "question": ["x" * (1 << 20)] * 25}, schema))
    assert path.stat().st_size < 1 << 20
    script = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from lmmprobe.data.files import UnreadableFile, check_parquet\n"
        "import pyarrow.parquet\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    check_parquet(Path(sys.argv[1]), what='a dataset')\n"
        "except UnreadableFile as exc:\n"
        "    print(exc)\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) >> 10)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, timeout=600, check=True)  # fmt: skip
    message, grown = done.stdout.strip().splitlines()
    assert message.startswith(f"{path}: column question decodes to more than 67,108,864"), message
    # One thread per process (tests/conftest.py): 256 rows at a time grew it by 120 MB here
    # (289 MB with pyarrow's threads), 16 rows at a time by under 20 MB.
    assert int(grown) < 64, f"the check grew by {grown} MB"
