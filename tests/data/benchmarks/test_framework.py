"""Benchmarks by name (issue 18): where a copy is found, rows to samples, the official prompt.

Two toy benchmarks are registered here in the layouts real ones use: ``toy-choice`` (MMBench's
columns: index, question, hint, A-D, answer letter, an Image column, category) and ``toy-open``
(a VQA-style question with a list of reference answers). Their data is written in the Hub's
layout with `datasets`, read back through ``--data NAME,...`` and run end to end.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, DatasetDict, Features, Image, Sequence, Value
from tests.data.benchmarks.conftest import FakeHub, tiny_png, write_hub_snapshot
from tests.run.fakes import RecordingModel

from lmmprobe import RunSpec
from lmmprobe.api import evaluate
from lmmprobe.data import SOURCES, DataError, load_source
from lmmprobe.data.benchmarks import (
    BENCHMARKS,
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    as_index,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._table import render_page
from lmmprobe.data.benchmarks.load import has_local_copy, hub_offline
from lmmprobe.formulate.prompt import Formulator
from lmmprobe.schema import BenchmarkTag, FormulateConfig, Request, Response, Sample
from lmmprobe.store import Store

CHOICE_TEMPLATE = "{context}{question}\n{options}\nAnswer with the option's letter from the given choices directly."
OPEN_TEMPLATE = "{question}\nAnswer the question using a single word or phrase."


def _choice_row(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    choices = [row[k] for k in "ABCD" if row[k] is not None]
    return Sample(
        id=str(row["index"]),
        images=[image_ref(row["image"], ctx)],
        question=row["question"],
        choices=choices,
        answer=as_index(row["answer"], choices),
        context=row["hint"] or None,
        metadata={"category": row["category"]},
    )


def _open_row(row: Mapping[str, Any], ctx: RowContext) -> list[Sample] | None:
    if row["image"] is None:
        return None  # skipped on purpose, as ScienceQA's text-only rows are
    # One row may hold several questions about one image.
    return [
        Sample(
            id=f"{row['question_id']}-{i}",
            images=[image_ref(row["image"], ctx)],
            question=q,
            answer=list(row["answers"]),
            formulation="open_ended",
        )
        for i, q in enumerate(row["questions"])
    ]


CHOICE = Benchmark(
    name="toy-choice",
    title="Toy choice (MMBench's columns)",
    citation="test fixture",
    license="unknown (see card)",
    formulation="single_choice",
    metric="accuracy",
    prompt=PromptTemplate(CHOICE_TEMPLATE, "tests/data/benchmarks/test_framework.py"),
    to_sample=_choice_row,
    split="dev",
    splits=("dev", "test"),
    hub_id="toy/choice",
    revision="0123456789abcdef0123456789abcdef01234567",
    size=4,
    hemm="toy-hemm",
    reform="coarse-grained perception",
    notes=("A note shown by data show.",),
)
OPEN = Benchmark(
    name="toy-open",
    title="Toy open (VQA's answers list)",
    citation="test fixture",
    license="cc-by-4.0",
    formulation="open_ended",
    metric="accuracy",
    prompt=PromptTemplate(OPEN_TEMPLATE, "tests/data/benchmarks/test_framework.py"),
    to_sample=_open_row,
    split="validation",
    hub_id="toy/open",
)
FETCH = CHOICE.fetch  # made from hub_id and revision (hf download ...)
UNRUNNABLE = Benchmark(
    name="toy-gen",
    title="Toy image generation",
    citation="test fixture",
    license="mit",
    formulation="free_form",
    metric="accuracy",
    prompt=PromptTemplate("{question}", "test"),
    to_sample=_open_row,
    fetch="see the paper",
    needs="an image-generation backend",
)
SUITE = Benchmark(
    name="toy-suite",
    title="Toy suite",
    citation="test fixture",
    license="mixed",
    formulation="single_choice",
    metric="accuracy",
    prompt=PromptTemplate("{question}", "test"),
    to_sample=_choice_row,
    fetch="fetch each member",
    members=("toy-choice", "toy-open", "toy-gen"),
)
TOYS = (CHOICE, OPEN, UNRUNNABLE, SUITE)


@pytest.fixture(autouse=True)
def toys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The toy benchmarks registered for one test; no data dir, no Hub, an empty hub cache."""
    monkeypatch.delenv("LMMPROBE_DATA_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    for b in TOYS:
        benchmark(b)
    yield
    for b in TOYS:
        BENCHMARKS.unregister(b.name)
        SOURCES.unregister(b.name)


CHOICE_FEATURES = Features(
    {
        "index": Value("int64"),
        "question": Value("string"),
        "hint": Value("string"),
        "A": Value("string"),
        "B": Value("string"),
        "C": Value("string"),
        "D": Value("string"),
        "answer": Value("string"),
        "category": Value("string"),
        "image": Image(),
    }
)


def choice_rows(n: int = 4, *, answers: list[str] | None = None, offset: int = 0) -> Dataset:
    answers = answers or ["A", "B", "A", "C"][:n]
    return Dataset.from_dict(
        {
            "index": [offset + i for i in range(n)],
            "question": [f"Which colour is shown ({i})?" for i in range(n)],
            "hint": ["The picture is small." if i == 0 else None for i in range(n)],
            "A": ["red"] * n,
            "B": ["green"] * n,
            "C": ["blue" if i != 1 else None for i in range(n)],
            "D": [None] * n,
            "answer": answers,
            "category": ["colour"] * n,
            "image": [{"bytes": tiny_png((10 * i, 0, 0)), "path": None} for i in range(n)],
        },
        features=CHOICE_FEATURES,
    )


def open_rows() -> Dataset:
    return Dataset.from_dict(
        {
            "question_id": [7, 8],
            "questions": [["What colour?", "Is it a square?"], ["Unused"]],
            "answers": [["red", "red", "dark red"], ["x"]],
            "image": [{"bytes": tiny_png("red"), "path": None}, None],
        },
        features=Features(
            {
                "question_id": Value("int64"),
                "questions": Sequence(Value("string")),
                "answers": Sequence(Value("string")),
                "image": Image(),
            }
        ),
    )


def _snapshot(folder: Path, **splits: Dataset) -> Path:
    return write_hub_snapshot(folder, splits or {"dev": choice_rows()})


# --- where the copy is ---------------------------------------------------------------------


def test_path_loads_rows_as_samples_with_the_benchmarks_metadata(tmp_path: Path) -> None:
    folder = _snapshot(tmp_path / "copy")
    result = load_source(f"toy-choice,path={folder}")
    assert result.invalid == 0 and result.source == f"{folder}[dev]"
    assert [s.id for s in result.samples] == [
        "toy-choice/0",
        "toy-choice/1",
        "toy-choice/2",
        "toy-choice/3",
    ]
    first = result.samples[0]
    assert first.choices == ["red", "green", "blue"] and first.answer == 0
    assert first.context == "The picture is small."
    assert result.samples[1].choices == ["red", "green"] and result.samples[1].answer == 1
    # The image is the parquet's stored PNG, kept byte for byte.
    assert base64.b64decode(first.images[0].data_b64 or "") == tiny_png((0, 0, 0))
    # The benchmark's prompt and tag are typed fields; the reader's metadata stays as it was.
    assert first.metadata == {"category": "colour"}
    assert first.prompt == CHOICE.prompt
    assert first.benchmark == BenchmarkTag(name="toy-choice", split="dev", metric="accuracy")


def test_name_colon_folder_is_path(tmp_path: Path) -> None:
    folder = _snapshot(tmp_path / "copy")
    assert len(load_source(f"toy-choice:{folder}").samples) == 4
    with pytest.raises(DataError, match="give the folder once"):
        load_source(f"toy-choice:{folder},path={folder}")


def test_lmmprobe_data_dir_copy_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _snapshot(tmp_path / "data" / "toy-choice")
    monkeypatch.setenv("LMMPROBE_DATA_DIR", str(tmp_path / "data"))
    result = load_source("toy-choice")
    assert result.source == f"{tmp_path / 'data' / 'toy-choice'}[dev]"
    assert len(result.samples) == 4


def test_missing_copy_offline_gives_the_fetch_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LMMPROBE_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(DataError) as err:
        load_source("toy-choice")
    message = str(err.value)
    assert message.startswith(
        f"benchmark toy-choice: no local copy at $LMMPROBE_DATA_DIR/toy-choice "
        f"({tmp_path / 'data' / 'toy-choice'}) and the Hugging Face Hub is not reachable "
        "(HF_HUB_OFFLINE is set)."
    )
    assert f"Fetch it with:\n  {FETCH}\n" in message
    assert message.endswith("or pass path=FOLDER")


def test_missing_copy_without_data_dir_says_to_set_it() -> None:
    with pytest.raises(
        DataError,
        match=r"(?s)\(unset\).*LMMPROBE_DATA_DIR is not set.*\n  export LMMPROBE_DATA_DIR=",
    ):
        load_source("toy-choice")


def test_unreachable_hub_is_detected_quickly(monkeypatch: pytest.MonkeyPatch) -> None:
    # A loopback port nobody listens on refuses at once: no waiting on a dead network.
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    assert (hub_offline() or "").startswith("cannot connect to 127.0.0.1:9")
    with pytest.raises(
        DataError, match=r"(?s)not reachable \(cannot connect to 127\.0\.0\.1:9.*Fetch it with"
    ):
        load_source("toy-choice")


def test_hub_cache_snapshot_is_read_offline(tmp_path: Path) -> None:
    snapshot = tmp_path / "hub-cache" / "datasets--toy--choice" / "snapshots" / CHOICE.revision
    _snapshot(snapshot)  # what an earlier online download left at the pinned revision
    result = load_source("toy-choice")
    assert result.source == f"{snapshot}[dev]" and len(result.samples) == 4


# The child imports only the data layer and defines the toy benchmark's reader itself: a new
# interpreter is the cost of this test.
_ONLINE = """
import dataclasses, sys
from lmmprobe.data import load_source
from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, benchmark
from lmmprobe.schema import Sample

def read(row, ctx):
    return Sample(id=str(row["index"]), question=row["question"], answer=[row["A"]], formulation="open_ended")

benchmark(Benchmark(name="toy-choice", title="t", citation="c", license="l", formulation="open_ended",
    metric="accuracy", prompt=PromptTemplate("{question}", "s"), to_sample=read, fetch="f",
    split="dev", hub_id="toy/choice", revision=sys.argv[1]))
result = load_source("toy-choice,split=test")
print(result.source)
print(",".join(s.id for s in result.samples))
"""


def test_online_the_hub_is_used_at_the_pinned_revision_then_cached(tmp_path: Path) -> None:
    repo = _snapshot(tmp_path / "repo", dev=choice_rows(4), test=choice_rows(2, offset=100))
    # huggingface_hub reads HF_ENDPOINT when imported: the online load runs in a new interpreter.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "LMMPROBE_"))}
    env.update(
        PYTHONPATH=os.pathsep.join(sys.path),
        HF_HUB_CACHE=str(tmp_path / "hub-cache"),  # the cache this test's fixture reads too
        HF_DATASETS_CACHE=str(tmp_path / "datasets-cache"),
    )
    rev = CHOICE.revision
    assert rev is not None
    with FakeHub("toy/choice", rev, repo) as hub:
        proc = subprocess.run(
            [sys.executable, "-c", _ONLINE, rev],
            capture_output=True,
            text=True,
            env={**env, "HF_ENDPOINT": hub.url},
            check=False,
        )
        asked = list(hub.requests)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"hub:toy/choice@{rev}[test]",
        "toy-choice/100,toy-choice/101",
    ]
    assert f"GET /datasets/toy/choice/resolve/{rev}/data/test-00000-of-00001.parquet" in asked
    # Offline later (HF_HUB_OFFLINE is set here): the download is read from the hub cache.
    cached = load_source("toy-choice,split=test")
    snapshot = tmp_path / "hub-cache" / "datasets--toy--choice" / "snapshots" / rev
    assert cached.source == f"{snapshot}[test]"
    assert [s.id for s in cached.samples] == ["toy-choice/100", "toy-choice/101"]


def test_missing_path_says_so(tmp_path: Path) -> None:
    # The fetch command writes the copy where path= looks (re-test 20b #8).
    with pytest.raises(
        DataError, match=r"path=.*nowhere does not exist\.\nFetch it into .*nowhere with"
    ):
        load_source(f"toy-choice,path={tmp_path / 'nowhere'}")


# --- rows ----------------------------------------------------------------------------------


def test_bad_rows_are_problems_with_file_row_and_field(tmp_path: Path) -> None:
    folder = _snapshot(tmp_path / "copy", dev=choice_rows(answers=["A", "E", "red", "Z"]))
    result = load_source(f"toy-choice,path={folder}")
    assert [s.id for s in result.samples] == ["toy-choice/0", "toy-choice/2"]  # "red" is text
    assert result.invalid == 2
    assert [str(p) for p in result.problems] == [
        f"{folder}[dev]:1: answer: 'E' is out of range for 2 options",
        f"{folder}[dev]:3: answer: 'Z' is out of range for 3 options",
    ]
    with pytest.raises(DataError, match=re.escape(f"{folder}[dev]:1: answer: 'E'")):
        load_source(f"toy-choice,path={folder}", strict=True)


def test_a_broken_image_and_a_missing_column_are_row_problems(tmp_path: Path) -> None:
    rows = choice_rows(2).to_dict()
    rows["image"][1] = {"bytes": b"not a png", "path": None}
    folder = _snapshot(tmp_path / "copy", dev=Dataset.from_dict(rows, features=CHOICE_FEATURES))
    problems = [str(p) for p in load_source(f"toy-choice,path={folder}").problems]
    # Re-test 7 #20: Pillow's reason named the file object ("<_io.BytesIO object at 0x...>").
    assert (
        problems[0]
        == f"{folder}[dev]:1: image: unreadable image data: not an image Pillow can read"
    )
    bare = _snapshot(tmp_path / "bare", dev=choice_rows(2).remove_columns("category"))
    result = load_source(f"toy-choice,path={bare}")
    assert result.samples == [] and str(result.problems[0]).startswith(
        f"{bare}[dev]:0: category: no such column (the row has: index, question, hint"
    )


def test_limit_in_the_spec_and_from_the_caller(tmp_path: Path) -> None:
    folder = _snapshot(tmp_path / "copy")
    assert len(load_source(f"toy-choice,path={folder},limit=2").samples) == 2
    assert len(load_source(f"toy-choice,path={folder},limit=3", limit=1).samples) == 1
    with pytest.raises(DataError, match="limit=0 is not a positive integer"):
        load_source(f"toy-choice,path={folder},limit=0")
    with pytest.raises(DataError, match=r"no option.*sample; known: config, limit, path, split"):
        load_source(f"toy-choice,path={folder},sample=3")


def test_split_is_chosen_by_file_name(tmp_path: Path) -> None:
    folder = _snapshot(tmp_path / "copy", dev=choice_rows(4), test=choice_rows(2, offset=100))
    test = load_source(f"toy-choice,path={folder},split=test")
    assert [s.id for s in test.samples] == ["toy-choice/100", "toy-choice/101"]
    assert test.samples[0].benchmark is not None and test.samples[0].benchmark.split == "test"
    assert len(load_source(f"toy-choice,path={folder}").samples) == 4  # the default: dev
    with pytest.raises(DataError, match="no split 'train'; its splits: dev, test"):
        load_source(f"toy-choice,path={folder},split=train")
    partial = _snapshot(tmp_path / "partial", dev=choice_rows(1))
    with pytest.raises(DataError) as err:
        load_source(f"toy-choice,path={partial},split=test")
    assert str(err.value).startswith(f"benchmark toy-choice: {partial}: datasets cannot load it")
    assert f"\n  {FETCH}\nor pass path=FOLDER" in str(err.value)


def test_save_to_disk_folder(tmp_path: Path) -> None:
    DatasetDict({"dev": choice_rows(3), "test": choice_rows(1)}).save_to_disk(
        str(tmp_path / "saved")
    )
    result = load_source(f"toy-choice,path={tmp_path / 'saved'}")
    assert len(result.samples) == 3 and result.samples[2].answer == 0


def test_config_follows_the_card(tmp_path: Path) -> None:
    folder = tmp_path / "copy"
    write_hub_snapshot(folder, {"dev": choice_rows(2)}, config="en")
    write_hub_snapshot(folder, {"dev": choice_rows(3, offset=50)}, config="cn")
    assert "config_name: cn" in (folder / "README.md").read_text()
    cn = load_source(f"toy-choice,path={folder},config=cn")
    assert [s.id for s in cn.samples] == ["toy-choice/50", "toy-choice/51", "toy-choice/52"]
    assert len(load_source(f"toy-choice,path={folder},config=en").samples) == 2


def test_a_row_may_give_several_samples_or_none(tmp_path: Path) -> None:
    folder = write_hub_snapshot(tmp_path / "open", {"validation": open_rows()})
    result = load_source(f"toy-open,path={folder}")
    assert result.invalid == 0
    assert [s.id for s in result.samples] == ["toy-open/7-0", "toy-open/7-1"]
    assert result.samples[0].answer == ["red", "red", "dark red"]


def test_files_layout_reads_release_files(tmp_path: Path) -> None:
    (tmp_path / "rel").mkdir()
    (tmp_path / "rel" / "red.png").write_bytes(tiny_png("red"))

    def read_files(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
        for i, answer in enumerate(["A", "Q"]):
            yield (
                f"{root / 'qa.json'}:{i}",
                {
                    "index": i,
                    "question": "Colour?",
                    "hint": None,
                    "A": "red",
                    "B": "blue",
                    "C": None,
                    "D": None,
                    "answer": answer,
                    "category": "c",
                    "image": "red.png",
                },
            )

    benchmark(
        Benchmark(
            **{**CHOICE.__dict__, "name": "toy-files", "layout": "files", "read_files": read_files}
        )
    )
    try:
        result = load_source(f"toy-files,path={tmp_path / 'rel'}")
    finally:
        BENCHMARKS.unregister("toy-files")
        SOURCES.unregister("toy-files")
    assert result.samples[0].images[0].path == str(tmp_path / "rel" / "red.png")
    assert [str(p) for p in result.problems] == [
        f"{tmp_path / 'rel' / 'qa.json'}:1: answer: 'Q' is out of range for 2 options"
    ]


def _read_release(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    # A release whose questions sit in rel/{split}.json, next to their images (as GQA's
    # snapshot keeps its configs in sub-folders of the repository).
    path = root / "rel" / f"{split}.json"
    for i, row in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        yield f"{path}:{i}", row


def _release(folder: Path) -> Path:
    (folder / "rel").mkdir(parents=True)
    (folder / "rel" / "red.png").write_bytes(tiny_png("red"))
    rows = [
        {"index": i, "question": "Colour?", "hint": None, "A": "red", "B": "blue", "C": None,
         "D": None, "answer": "A", "category": "c", "image": "rel/red.png"}
        for i in range(2)
    ]  # fmt: skip
    (folder / "rel" / "dev.json").write_text(json.dumps(rows), encoding="utf-8")
    (folder / "train").mkdir()
    (folder / "train" / "huge.bin").write_bytes(b"not fetched")  # outside the fetch command
    return folder


FILES_REV = "89abcdef0123456789abcdef0123456789abcdef"
FILES_FETCH = (
    "hf download toy/files --repo-type dataset --revision " + FILES_REV
    + " --include 'rel/*' --local-dir \"$LMMPROBE_DATA_DIR/toy-files\""
)  # fmt: skip


@pytest.fixture
def toy_files() -> Iterator[Benchmark]:
    """``toy-files``: release files (layout="files") kept in a dataset repository on the Hub."""
    b = Benchmark(
        **{
            **CHOICE.__dict__,
            "name": "toy-files",
            "layout": "files",
            "read_files": _read_release,
            "hub_id": "toy/files",
            "revision": FILES_REV,
            "include": ("rel/*",),
            "fetch": "",  # made from hub_id, revision and include
        }
    )
    assert b.fetch == FILES_FETCH
    benchmark(b)
    yield b
    BENCHMARKS.unregister("toy-files")
    SOURCES.unregister("toy-files")


def test_files_layout_on_the_hub_offline_says_the_hub_is_not_reachable(
    toy_files: Benchmark,
) -> None:
    with pytest.raises(DataError) as err:
        load_source("toy-files")
    message = str(err.value)
    assert "the Hugging Face Hub is not reachable (HF_HUB_OFFLINE is set)" in message
    assert "not on the Hugging Face Hub" not in message
    assert f"\n  {FILES_FETCH}\nor pass path=FOLDER" in message


def test_files_layout_off_the_hub_says_so(toy_files: Benchmark) -> None:
    b = Benchmark(**{**toy_files.__dict__, "name": "toy-release", "hub_id": None})
    benchmark(b)
    try:
        with pytest.raises(DataError, match="its data is not on the Hugging Face Hub"):
            load_source("toy-release")
    finally:
        BENCHMARKS.unregister("toy-release")
        SOURCES.unregister("toy-release")


def test_files_layout_reads_the_hub_cache_snapshot_offline(
    tmp_path: Path, toy_files: Benchmark
) -> None:
    snapshot = tmp_path / "hub-cache" / "datasets--toy--files" / "snapshots" / FILES_REV
    _release(snapshot)  # what an earlier download left at the pinned revision
    result = load_source("toy-files")
    assert result.source == f"{snapshot}[dev]"
    assert [s.id for s in result.samples] == ["toy-files/0", "toy-files/1"]
    assert result.samples[0].images[0].path == str(snapshot / "rel" / "red.png")


_ONLINE_FILES = """
import json, sys
from pathlib import Path
from lmmprobe.data import load_source
from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, benchmark
from lmmprobe.schema import Sample

def read_files(root, split):
    path = Path(root) / "rel" / f"{split}.json"
    for i, row in enumerate(json.loads(path.read_text())):
        yield f"{path}:{i}", row

def read(row, ctx):
    return Sample(id=str(row["index"]), question=row["question"], answer=[row["A"]], formulation="open_ended")

benchmark(Benchmark(name="toy-files", title="t", citation="c", license="l", formulation="open_ended",
    metric="accuracy", prompt=PromptTemplate("{question}", "s"), to_sample=read, include=(sys.argv[2],),
    split="dev", hub_id="toy/files", revision=sys.argv[1], layout="files", read_files=read_files))
result = load_source("toy-files")
print(result.source)
print(",".join(s.id for s in result.samples))
"""


def test_files_layout_online_downloads_the_fetch_commands_files_then_reads_the_cache(
    tmp_path: Path, toy_files: Benchmark
) -> None:
    repo = _release(tmp_path / "repo")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "LMMPROBE_"))}
    env.update(PYTHONPATH=os.pathsep.join(sys.path), HF_HUB_CACHE=str(tmp_path / "hub-cache"))
    with FakeHub("toy/files", FILES_REV, repo) as hub:
        proc = subprocess.run(
            [sys.executable, "-c", _ONLINE_FILES, FILES_REV, "rel/*"],
            capture_output=True,
            text=True,
            env={**env, "HF_ENDPOINT": hub.url},
            check=False,
        )
        asked = list(hub.requests)
    assert proc.returncode == 0, proc.stderr
    snapshot = tmp_path / "hub-cache" / "datasets--toy--files" / "snapshots" / FILES_REV
    assert proc.stdout.splitlines() == [f"{snapshot}[dev]", "toy-files/0,toy-files/1"]
    assert f"GET /datasets/toy/files/resolve/{FILES_REV}/rel/dev.json" in asked
    assert not any("huge.bin" in r for r in asked)  # only what the fetch command takes
    # Offline later (HF_HUB_OFFLINE is set here): the download is read from the hub cache.
    cached = load_source("toy-files")
    assert cached.source == f"{snapshot}[dev]" and len(cached.samples) == 2


def test_a_suite_is_present_when_its_runnable_members_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LMMPROBE_DATA_DIR", str(tmp_path / "data"))
    assert not has_local_copy(SUITE)
    (tmp_path / "data" / "toy-choice").mkdir(parents=True)
    assert not has_local_copy(SUITE)
    (tmp_path / "data" / "toy-open").mkdir()
    # toy-gen needs an image-generation backend: it never runs, so no copy of it is asked for.
    assert has_local_copy(SUITE)


def test_a_wrong_template_fails_before_any_row(tmp_path: Path) -> None:
    bad = Benchmark(
        **{**CHOICE.__dict__, "name": "toy-bad", "prompt": PromptTemplate("{question} {hint}", "x")}
    )
    benchmark(bad)
    try:
        with pytest.raises(
            DataError, match="toy-bad: its prompt template has an unknown placeholder 'hint'"
        ):
            load_source(f"toy-bad,path={_snapshot(tmp_path / 'copy')}")
    finally:
        BENCHMARKS.unregister("toy-bad")
        SOURCES.unregister("toy-bad")


def test_needs_names_what_is_missing() -> None:
    with pytest.raises(
        DataError, match="toy-gen needs an image-generation backend, which lmmprobe does not have"
    ):
        load_source("toy-gen")


def test_suite_loads_members_and_names_a_missing_ones_fetch_command(tmp_path: Path) -> None:
    _snapshot(tmp_path / "suite" / "toy-choice")
    result = load_source(f"toy-suite,path={tmp_path / 'suite'}")
    assert len(result.samples) == 4  # toy-open's copy is missing, toy-gen cannot run
    problems = [str(p) for p in result.problems]
    assert problems[0].startswith("toy-suite: toy-open: path=")
    assert "hf download toy/open" in problems[0]
    assert problems[1].startswith("toy-suite: toy-gen: benchmark toy-gen needs an image-generation")
    with pytest.raises(DataError, match="toy-suite: toy-open: path="):
        load_source(f"toy-suite,path={tmp_path / 'suite'}", strict=True)
    write_hub_snapshot(tmp_path / "suite" / "toy-open", {"validation": open_rows()})
    both = load_source(f"toy-suite,path={tmp_path / 'suite'},limit=1")
    assert [s.id for s in both.samples] == ["toy-choice/0", "toy-open/7-0"]  # limit= per member


def test_a_suite_with_no_member_present_says_so_in_short() -> None:
    with pytest.raises(DataError) as err:
        load_source("toy-suite")
    lines = str(err.value).split("\n")
    assert lines[0] == (
        "benchmark toy-suite: none of its 3 members could be loaded (`lmmprobe data list` shows "
        "which copies are present, `lmmprobe data show MEMBER` how to fetch each); the first 3:"
    )
    assert lines[1].startswith(
        "  toy-suite: toy-choice: no local copy at $LMMPROBE_DATA_DIR/toy-choice"
    )


def test_benchmark_names_are_checked() -> None:
    with pytest.raises(ValueError, match="lowercase"):
        Benchmark(**{**CHOICE.__dict__, "name": "MMBench"})
    with pytest.raises(ValueError, match="already exists"):
        benchmark(Benchmark(**{**CHOICE.__dict__, "name": "jsonl"}))


# --- helpers -------------------------------------------------------------------------------


def _ctx(root: Path | None = None) -> RowContext:
    return RowContext(benchmark=CHOICE, split="dev", root=root, where="x[dev]:0", index=0)


def test_image_ref_reads_every_stored_form(tmp_path: Path) -> None:
    png = tiny_png("blue")
    (tmp_path / "a.png").write_bytes(png)
    b64 = base64.b64encode(png).decode()
    assert image_ref({"bytes": png, "path": "ignored.png"}, _ctx()).data_b64 == b64
    assert image_ref(png, _ctx()).data_b64 == b64
    assert image_ref(b64, _ctx()).data_b64 == b64
    assert image_ref("a.png", _ctx(tmp_path)).path == str(tmp_path / "a.png")
    assert image_ref({"bytes": None, "path": "a.png"}, _ctx(tmp_path)).path == str(
        tmp_path / "a.png"
    )
    with pytest.raises(RowError, match="no image"):
        image_ref(None, _ctx(), "image_2")
    with pytest.raises(RowError, match=r"image file not found: b\.png"):
        image_ref("b.png", _ctx(tmp_path))
    # A URL in a local copy is no file of it: said so, not "image file not found".
    with pytest.raises(RowError, match=r"'https://x\.org/b\.png' is a URL; .* the copy's"):
        image_ref("https://x.org/b.png", _ctx(tmp_path))
    with pytest.raises(RowError) as err:
        image_ref(b"\x89PNG broken", _ctx(), "images[1]")
    assert err.value.field == "images[1]"


def test_image_ref_reads_paths_only_inside_the_copys_folder(tmp_path: Path) -> None:
    # Re-test 7 #12: "absolute paths work too", and a hub row's path was read from the current
    # folder: a dataset could name any picture on the machine.
    mine = tmp_path / "mine.png"
    mine.write_bytes(tiny_png("red"))
    (tmp_path / "copy").mkdir()
    for value in (str(mine), "../mine.png", {"bytes": None, "path": str(mine)}):
        with pytest.raises(RowError, match="is outside the copy's folder"):
            image_ref(value, _ctx(tmp_path / "copy"))
    with pytest.raises(RowError, match="a path in a row from the hub cache"):
        image_ref({"bytes": None, "path": str(mine)}, _ctx())


def test_as_index_reads_letters_indices_and_texts() -> None:
    opts = ["red", "green", "blue"]
    assert [as_index(a, opts) for a in ("B", "(C)", "A.", 2, "1", "green")] == [1, 2, 0, 2, 1, 1]
    with pytest.raises(RowError, match="'D' is out of range for 3 options"):
        as_index("D", opts)
    with pytest.raises(RowError, match="neither an option letter nor one of"):
        as_index("purple", opts)
    with pytest.raises(RowError, match="got True"):
        as_index(True, opts)


# --- the prompt ----------------------------------------------------------------------------


def _asked(samples: list[Sample], **config: Any) -> list[str]:
    formulator = Formulator(FormulateConfig(**config))
    repeats = (config.get("circular") and 3) or 1
    return [
        formulator.ask(s, r).to_request().messages[-1].text for s in samples for r in range(repeats)
    ]


def test_the_benchmark_style_renders_the_official_template(tmp_path: Path) -> None:
    samples = load_source(f"toy-choice,path={_snapshot(tmp_path / 'copy')}").samples
    hinted, plain = samples[0], samples[1]
    assert _asked([hinted]) == [
        "The picture is small.\nWhich colour is shown (0)?\nA. red\nB. green\nC. blue\n"
        "Answer with the option's letter from the given choices directly."
    ]
    assert _asked([plain]) == [
        "Which colour is shown (1)?\nA. red\nB. green\n"
        "Answer with the option's letter from the given choices directly."
    ]
    # The run's marks, and a run's own instruction as a last line.
    assert _asked([plain], option_marks="lower", instruction="Be brief.") == [
        "Which colour is shown (1)?\na. red\nb. green\n"
        "Answer with the option's letter from the given choices directly.\nBe brief."
    ]
    # Asked as another style, the same sample is worded by that style.
    assert _asked([plain], prompt_style="reform")[0].startswith(
        "Which colour is shown (1)?\nOptions: (A) red; (B) green."
    )


def test_circular_rotations_show_the_rotated_options(tmp_path: Path) -> None:
    sample = load_source(f"toy-choice,path={_snapshot(tmp_path / 'copy')}").samples[2]
    asked = _asked([sample], circular=True)
    assert [a.split("\n")[1:4] for a in asked] == [
        ["A. red", "B. green", "C. blue"],
        ["A. green", "B. blue", "C. red"],
        ["A. blue", "B. red", "C. green"],
    ]


def test_open_ended_samples_get_the_template_without_options(tmp_path: Path) -> None:
    folder = write_hub_snapshot(tmp_path / "open", {"validation": open_rows()})
    samples = load_source(f"toy-open,path={folder}").samples
    assert _asked(samples[:1]) == [
        "What colour?\nAnswer the question using a single word or phrase."
    ]


# --- end to end ----------------------------------------------------------------------------


class _Capturing(RecordingModel):
    def __init__(self, text: str) -> None:
        super().__init__(text=text)
        self.seen: list[Request] = []

    def generate(self, requests: list[Request]) -> list[Response]:
        self.seen.extend(requests)
        return super().generate(requests)


def test_a_run_sends_the_official_prompt(tmp_path: Path) -> None:
    from lmmprobe.run import run_model

    samples = load_source(f"toy-choice,path={_snapshot(tmp_path / 'copy')}").samples
    model = _Capturing("B")
    with Store(tmp_path / "db") as store:
        run_model("m", model, samples, RunSpec(models=["m"]), store)
    sent = {r.sample_id: r.messages[-1].text for r in model.seen}
    assert sent["toy-choice/1"] == (
        "Which colour is shown (1)?\nA. red\nB. green\n"
        "Answer with the option's letter from the given choices directly."
    )


def test_evaluate_end_to_end(tmp_path: Path) -> None:
    folder = _snapshot(tmp_path / "copy")
    ev = evaluate(
        models=["first"],
        data=f"toy-choice,path={folder}",
        db=str(tmp_path / "db"),
        out=str(tmp_path / "out"),
    )
    assert ev.results.data.samples == 4
    # "first" answers A: right where the answer is A (rows 0 and 2).
    assert ev.results.models["first"].metrics["accuracy"].value == pytest.approx(2 / 4)


# --- the documentation ---------------------------------------------------------------------


def test_docs_page_lists_every_registered_benchmark() -> None:
    page = (Path(__file__).parents[3] / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    builtin = [n for n in BENCHMARKS.names() if n not in {b.name for b in TOYS}]
    assert page == render_page(page, builtin), (
        "docs/benchmarks.md is out of date: run "
        "python -m lmmprobe.data.benchmarks._table docs/benchmarks.md"
    )
    listed = set(re.findall(r"^\| `([a-z0-9][a-z0-9._-]*)` \|", page, flags=re.M))
    assert listed == set(builtin)
    unconfirmed = page.split("## Schemas not confirmed", 1)[1]
    for name in builtin:
        if not BENCHMARKS.get(name).schema_confirmed:
            assert f"`{name}`" in unconfirmed


def test_an_unknown_source_suggests_a_close_benchmark() -> None:
    from lmmprobe.registry import RegistryError

    with pytest.raises(RegistryError) as err:
        load_source("toy-choise")
    assert str(err.value).startswith("unknown data source 'toy-choise'; did you mean toy-choice")
    assert "`lmmprobe data list` shows them" in str(err.value)


def test_the_benchmark_style_words_other_samples_as_reform() -> None:
    plain = Sample(id="s", question="Which?", choices=["x", "y"], answer=0)
    assert _asked([plain], prompt_style="benchmark") == _asked([plain], prompt_style="reform")


def test_a_reader_failing_on_one_row_is_that_rows_problem(tmp_path: Path) -> None:
    def shouting(row: Mapping[str, Any], ctx: RowContext) -> Sample:
        return Sample(
            id=str(row["index"]),
            question=row["hint"].upper(),
            answer=["x"],
            formulation="open_ended",
        )

    benchmark(Benchmark(**{**CHOICE.__dict__, "name": "toy-shout", "to_sample": shouting}))
    try:
        folder = _snapshot(tmp_path / "copy", dev=choice_rows(2))  # row 1 has no hint
        result = load_source(f"toy-shout,path={folder}")
    finally:
        BENCHMARKS.unregister("toy-shout")
        SOURCES.unregister("toy-shout")
    assert [s.question for s in result.samples] == ["THE PICTURE IS SMALL."]
    assert [str(p) for p in result.problems] == [
        f"{folder}[dev]:1: the toy-shout reader cannot read this row: AttributeError: "
        "'NoneType' object has no attribute 'upper'"
    ]
