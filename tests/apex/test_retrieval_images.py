"""``apex --retrieval``: collection images read as the data loaders read them, and the
composed-image cache keyed by the collection's files (issue 34, re-test 11 #7, #16)."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from PIL import Image
from tests.console import lmmprobe

from lmmprobe.tools.retrieval import CollectionError, open_collection

QUESTION = "Can models identify rotated images?"


def _collection(root: Path, cat: str, dog: str, dog_size: int = 64) -> Path:
    for name, colour, size in (("cat", cat, 64), ("dog", dog, dog_size)):
        (root / name).mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (size, size), colour).save(root / name / "a.png")
    return root


def _apex(root: Path, out: Path, *extra: str, **env: str) -> tuple[int, str]:
    done = lmmprobe(
        "apex", QUESTION, "-m", "random", "--retrieval", f"imagefolder:{root}", "--out", out,
        "--max-experiments", "1", "--images-per-answer", "2", "--image-size", "32",
        "--bootstrap", "10", *extra, timeout=300, **env,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def test_a_collection_image_over_the_pixel_cap_is_refused_naming_it(tmp_path: Path) -> None:
    """Opened with bare PIL, a 144 MP image was decoded (1.2 GB) and a 400 MP one a traceback."""
    root = _collection(tmp_path / "c", "red", "blue", dog_size=100)
    out = tmp_path / "out"
    # A cap of 5,000 pixels stands for the 40,000,000 default: the dog (10,000) is over it.
    _, text = _apex(root, out, LMMPROBE_MAX_IMAGE_PIXELS="5000")
    assert "Traceback" not in text, text[-3000:]
    dog = root / "dog" / "a.png"
    # The terminal may wrap the line anywhere (a worker's COLUMNS): read it without blanks.
    flat = "".join(text.split())
    assert "".join(f"{dog}: cannot read image".split()) in flat, text[-3000:]
    # The report is written, the refusal in it whole (the terminal shows its start).
    report = json.loads((out / "report.json").read_text())
    refused = [r["error"] for r in report["rejections"] if str(dog) in r["error"]]
    assert refused, report["rejections"]
    for error in refused:
        assert f"TextToImageRetrieval: {dog}: cannot read image: image {dog} is " in error
        assert "decoding limit: set LMMPROBE_MAX_IMAGE_PIXELS=10000 to allow it" in error


def _thumbnail_colours(out: Path) -> set[tuple[int, ...]]:
    files = sorted((out / "thumbnails").rglob("*.*"))
    assert files
    colours = set()
    for f in files:
        with Image.open(f) as im:
            colours.add(im.convert("RGB").getpixel((0, 0)))
    return colours


def test_the_image_cache_follows_the_collections_files(tmp_path: Path) -> None:
    """Keyed by the collection's path, a recoloured collection was shown as it was before."""
    root = _collection(tmp_path / "c", "red", "blue")
    cache = tmp_path / "cache"
    rc, text = _apex(root, tmp_path / "o1", "--cache-dir", str(cache))
    assert rc == 0, text[-3000:]
    assert (0, 0, 255) in _thumbnail_colours(tmp_path / "o1")
    _collection(root, "green", "green")  # every image replaced at the same path
    rc, text = _apex(root, tmp_path / "o2", "--cache-dir", str(cache))
    assert rc == 0, text[-3000:]
    assert _thumbnail_colours(tmp_path / "o2") == {(0, 128, 0)}


def test_a_dataset_collections_image_is_decoded_under_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hf:` collections' bytes were decoded with bare PIL too."""
    datasets = pytest.importorskip("datasets")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    buf = io.BytesIO()
    Image.new("RGB", (100, 100), "blue").save(buf, format="PNG")
    data = {"image": [{"bytes": buf.getvalue(), "path": None}], "label": ["dog"]}
    datasets.Dataset.from_dict(data).to_parquet(str(tmp_path / "data.parquet"))
    coll = open_collection(f"hf:{tmp_path / 'data.parquet'}")
    assert coll.pick("dog", random.Random(0))[0].getpixel((0, 0)) == (0, 0, 255)
    monkeypatch.setenv("LMMPROBE_MAX_IMAGE_PIXELS", "5000")
    with pytest.raises(CollectionError, match=r"data\.parquet.*:0: cannot read image: .*decoding"):
        coll.pick("dog", random.Random(0))


def test_a_small_picture_in_a_much_larger_file_is_refused(tmp_path: Path) -> None:
    """As `--data` refuses it: the file carries data that is not the picture."""
    root = _collection(tmp_path / "c", "red", "blue")
    dog = root / "dog" / "a.png"
    with dog.open("ab") as f:
        f.write(b"\0" * (17 << 20))
    coll = open_collection(f"imagefolder:{root}")
    with pytest.raises(CollectionError, match=r"dog/a\.png: cannot read image: .*not the picture"):
        coll.pick("dog", random.Random(0))
    assert coll.pick("cat", random.Random(0))[0].getpixel((0, 0)) == (255, 0, 0)
