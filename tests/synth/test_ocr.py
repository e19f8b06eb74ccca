"""Dysca's scene-text check with a real OCR model: PP-OCR (ONNX, shipped in rapidocr's wheel)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from PIL import Image
from tests.console import lmmprobe

from lmmprobe.imaging import procedural
from lmmprobe.synth.metadata import make_item
from lmmprobe.synth.ocr import read_back


def test_read_back_ignores_case_punctuation_and_box_splits() -> None:
    assert read_back("Hello, World", ["HELLO", "world!"])
    assert read_back("kanazawa", ["a sign: Kanazawa"])
    assert not read_back("kanazawa", ["kanazaw"])
    assert not read_back("kanazawa", [])
    assert not read_back("...", ["..."])  # nothing legible to check


def test_missing_rapidocr_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from lmmprobe.synth.ocr import OcrFilter

    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)
    with pytest.raises(ImportError, match=r"pip install 'lmmprobe\[ocr\]'"):
        OcrFilter()


def _need_rapidocr() -> None:
    pytest.importorskip(
        "rapidocr_onnxruntime", reason="rapidocr_onnxruntime is not installed (lmmprobe[ocr])"
    )


def test_a_legible_text_image_is_kept_and_a_blank_one_dropped() -> None:
    _need_rapidocr()
    from lmmprobe.synth.ocr import OcrFilter

    item = make_item(0, 3, subtasks=("ocr",), size=256)
    word = item.facts["word"]
    legible = procedural.render(item.recipe)
    blank = Image.new("RGB", (256, 256), "white")
    ocr = OcrFilter()
    assert ocr.keep([legible, blank], [word, word]) == [True, False]
    assert ocr.describe()["name"] == "ocr"


def test_procedural_generate_checks_text_images_and_records_the_filter(tmp_path: Path) -> None:
    _need_rapidocr()
    out = tmp_path / "set"
    result = lmmprobe(
        "synth", "generate", "--tasks", "ocr,color", "--n", "2", "--size", "256",
        "--ocr-check", "--out", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    (ocr,) = [f for f in manifest["filters"] if f["name"] == "ocr"]
    assert ocr["engine"].startswith("rapidocr_onnxruntime ")
    assert ocr["dropped_items"] == 0  # the procedural renderer's words are legible
    assert manifest["counts"]["items"] == 2
    assert "filter ocr: dropped 0 items" in result.stdout
