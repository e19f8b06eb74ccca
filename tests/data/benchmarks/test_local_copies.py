"""Local copies are read for what they hold now, whatever their folder is called."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest
from tests.data.benchmarks.conftest import tiny_png, write_hub_snapshot

from lmmprobe.data import load_source


def _copy(folder: Path, questions: list[str]) -> Path:
    ds = datasets.Dataset.from_dict(
        {
            "image": [{"bytes": tiny_png(), "path": None}] * len(questions),
            "question": questions,
            "choices": [["yes", "no"]] * len(questions),
            "answer": [0] * len(questions),
        },
        features=datasets.Features(
            {
                "image": datasets.Image(),
                "question": datasets.Value("string"),
                "choices": datasets.Sequence(datasets.Value("string")),
                "answer": datasets.Value("int64"),
            }
        ),
    )
    return write_hub_snapshot(folder, {"test": ds}, config="main")


def test_two_copies_with_one_folder_name_give_their_own_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # datasets keys its Arrow copy of a carded local folder by folder name and config only;
    # lmmprobe must never hand one copy's rows out for another.
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    first = _copy(tmp_path / "a" / "same", ["one?", "two?", "three?"])
    second = _copy(tmp_path / "b" / "same", ["four?"])
    got_first = load_source(f"hf:{first},config=main,split=test")
    got_second = load_source(f"hf:{second},config=main,split=test")
    assert [s.question for s in got_first.samples] == ["one?", "two?", "three?"]
    assert [s.question for s in got_second.samples] == ["four?"]


def test_an_updated_copy_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    folder = _copy(tmp_path / "copy", ["old?"])
    assert [s.question for s in load_source(f"hf:{folder},config=main").samples] == ["old?"]
    _copy(folder, ["new?", "newer?"])
    assert [s.question for s in load_source(f"hf:{folder},config=main").samples] == [
        "new?",
        "newer?",
    ]
