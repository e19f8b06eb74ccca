"""The image-folder source: classes from folder names, seeded distractors, problems, limit."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

from lmmprobe import evaluate
from lmmprobe.data import DataError, LoadResult, load_source
from lmmprobe.data.imagefolder import class_name

FOLDERS = {
    "golden_retriever": (200, 160, 60),
    "tabby-cat": (120, 110, 100),
    "red_fox": (210, 80, 20),
    "zebra": (250, 250, 250),
    "sea_turtle": (20, 120, 110),
}
CLASSES = sorted(class_name(f) for f in FOLDERS)


@pytest.fixture
def root(tmp_path: Path, write_png) -> Path:
    """Five class folders with three images each (plus clutter the source must ignore)."""
    root = tmp_path / "pets"
    for folder, color in FOLDERS.items():
        for i in range(3):
            write_png(root / folder / f"{i:03d}.png", size=(6 + i, 5), color=color)
    (root / "zebra" / "notes.txt").write_text("not an image")
    (root / ".hidden").mkdir()
    write_png(root / ".hidden" / "x.png")
    (root / "empty").mkdir()
    return root


def load(root: Path, opts: str = "", **kw: Any) -> LoadResult:
    return load_source(f"imagefolder:{root}{opts}", **kw)


def summary(result: LoadResult) -> list[tuple[Any, ...]]:
    return [(s.id, tuple(s.choices or ()), s.answer) for s in result.samples]


def test_class_names() -> None:
    assert class_name("golden_retriever") == "golden retriever"
    assert class_name("tabby-cat") == "tabby cat"
    assert class_name("a__b- c") == "a b c"


def test_samples(root: Path) -> None:
    result = load(root)
    assert result.invalid == 0
    assert len(result.samples) == 15
    ids = [s.id for s in result.samples]
    assert len(set(ids)) == 15
    for s in result.samples:
        folder, _ = s.id.split("/")
        truth = class_name(folder)
        assert s.question == "What is shown in the image?"
        assert s.formulation == "single_choice"
        assert s.choices is not None and len(s.choices) == 4
        assert len(set(s.choices)) == 4 and set(s.choices) <= set(CLASSES)
        assert s.gold_text == truth
        assert s.metadata == {"task": "classification", "class": truth}
        file = root / s.id
        assert s.images[0].content_hash() == hashlib.sha256(file.read_bytes()).hexdigest()
        assert s.images[0].load().getpixel((0, 0)) == FOLDERS[folder]


def test_round_robin_order_so_a_limit_is_balanced(root: Path) -> None:
    result = load(root, limit=5)
    assert sorted(s.metadata["class"] for s in result.samples) == CLASSES
    assert [s.id for s in result.samples] == [f"{f}/000.png" for f in sorted(FOLDERS)]


def test_options_and_question(root: Path) -> None:
    result = load(root, ",choices=2,seed=3,question=Which animal is this?")
    assert all(len(s.choices or ()) == 2 for s in result.samples)
    assert all(s.question == "Which animal is this?" for s in result.samples)
    assert load(root, ",choices=5").samples[0].choices is not None


def test_distractors_deterministic_and_seeded(root: Path) -> None:
    assert summary(load(root)) == summary(load(root))
    assert summary(load(root, ",seed=0")) == summary(load(root))
    assert summary(load(root, ",seed=1")) != summary(load(root))
    # The answer position varies: the true class is shuffled in, not always first.
    assert len({s.answer for s in load(root).samples}) > 1


def test_options_depend_on_the_image_not_the_folder_location(root: Path, tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(root, copy)
    assert summary(load(copy)) == summary(load(root))
    # Removing one image leaves every other image's options as they were.
    (copy / "zebra" / "001.png").unlink()
    kept = {k: v for k, *v in summary(load(root)) if k != "zebra/001.png"}
    assert {k: v for k, *v in summary(load(copy))} == kept


def test_unreadable_image_skipped_and_reported(root: Path) -> None:
    bad = root / "zebra" / "bad.png"
    bad.write_bytes(b"not an image" * 10)
    result = load(root)
    assert len(result.samples) == 15
    assert result.invalid == 1
    (problem,) = result.problems
    assert problem.field == "image"
    assert str(problem).startswith(f"{bad}: image: unreadable")
    with pytest.raises(DataError, match=r"bad\.png"):
        load(root, strict=True)


@pytest.mark.parametrize(
    ("opts", "words"),
    [
        (",choices=6", "5 class folder"),
        (",choices=1", "at least 2"),
        (",choices=four", "not an integer"),
        (",seed=x", "not an integer"),
        (",shuffle=1", "no option"),
    ],
)
def test_bad_options(root: Path, opts: str, words: str) -> None:
    with pytest.raises(DataError, match=words):
        load(root, opts)


def test_missing_root_and_colliding_class_names(tmp_path: Path, write_png) -> None:
    with pytest.raises(DataError, match="not found"):
        load(tmp_path / "nope")
    write_png(tmp_path / "r" / "sea_lion" / "a.png")
    write_png(tmp_path / "r" / "sea-lion" / "a.png")
    with pytest.raises(DataError, match="both name class 'sea lion'"):
        load(tmp_path / "r", ",choices=2")


def test_evaluate_end_to_end(root: Path, tmp_path: Path) -> None:
    ev = evaluate(
        models=["first"],
        data=f"imagefolder:{root}",
        by=["class"],
        db=str(tmp_path / "db"),
        out=str(tmp_path / "o"),
    )
    assert ev.results.data.samples == 15
    expected = sum(s.answer == 0 for s in load(root).samples) / 15
    assert ev.results.models["first"].metrics["accuracy"].value == pytest.approx(expected)


def test_an_image_whose_path_is_not_utf8_is_an_invalid_row_named_escaped(
    root: Path, tmp_path: Path, write_png
) -> None:
    # The issue 34 re-test: a file b"x\xff.png" ended the run with exit 2 and "'utf-8' codec
    # can't encode", naming no file (its id is its path). Now each such image is skipped as an
    # invalid row, named with its byte escaped, and the other images are asked.
    write_png(root / "zebra" / os.fsdecode(b"x\xff.png"), color=(250, 250, 250))
    write_png(root / os.fsdecode(b"okapi\xfe") / "000.png", color=(90, 60, 40))
    proc = lmmprobe("run", "-m", "first", "--data", f"imagefolder:{root}",
                    "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Traceback" not in out and "codec" not in out, out
    assert "skipped 2 invalid row(s)" in out, out
    assert f"{root}/zebra/x\\xff.png: file name: its name is not valid UTF-8" in out, out
    assert f"{root}/okapi\\xfe/000.png: file name: its folder's name is not valid UTF-8" in out
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["data"]["samples"] == 15
    assert results["data"]["invalid"] == 2
