"""Labelled collections (image folders, datasets), the ImageNet-X taxonomy, class matching."""

from __future__ import annotations

import io
import random
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from lmmprobe.tools.retrieval import (
    IMAGENET_X_METACLASSES,
    ClassMatcher,
    ClassTaxonomy,
    CollectionError,
    LabelledCollection,
    imagenet_x_taxonomy,
    normalize_class,
    open_collection,
)

COLORS = {"dog": (200, 40, 40), "car": (40, 40, 200), "apple": (40, 160, 40)}


def png(color: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "images"
    for name, color in COLORS.items():
        for i in range(3):
            shade = tuple(min(255, c + 10 * i) for c in color)
            (root / name).mkdir(parents=True, exist_ok=True)
            (root / name / f"{i}.png").write_bytes(png(shade))
    (root / "empty").mkdir()
    (root / "notes.txt").write_text("not a class")
    return root


def test_imagenet_x_taxonomy_has_17_metaclasses_over_1000_classes():
    tax = imagenet_x_taxonomy()
    assert len(tax.groups) == 1000
    assert tax.group_names() == sorted(IMAGENET_X_METACLASSES) and len(IMAGENET_X_METACLASSES) == 17
    assert tax.group_of("Chihuahua") == "dog" and tax.group_of("chihuahua") == "dog"
    assert tax.group_of("tench") == "other"  # fish is not one of the 16 named groups
    assert tax.group_of("n02085620") == "dog"  # a WordNet id reads as its class
    assert tax.canonical("n01440764") == "tench"
    assert len(tax.classes_in("dog")) == 118
    assert tax.group_of("crane (bird)") == "bird" and tax.group_of("crane (device)") == "device"
    assert tax.group_of("spaceship") is None
    with pytest.raises(CollectionError, match="known: bird, commodity"):
        tax.classes_in("dogs")


def test_taxonomy_from_csv(tmp_path: Path):
    path = tmp_path / "tax.csv"
    path.write_text("class_name,group,folder\ndog,animal,d1\ncar,vehicle,\n")
    tax = ClassTaxonomy.from_csv(path, alias_column="folder")
    assert tax.name == "tax" and tax.group_of("Dog") == "animal" and tax.canonical("d1") == "dog"
    path.write_text("class_name,group\ndog,animal\ndog,vehicle\n")
    with pytest.raises(CollectionError, match=r"tax\.csv:3: class 'dog' is in both"):
        ClassTaxonomy.from_csv(path)
    path.write_text("name,group\ndog,animal\n")
    with pytest.raises(CollectionError, match="no column 'class_name'"):
        ClassTaxonomy.from_csv(path)


def test_folder_collection_classes_and_seeded_picks(folder: Path):
    coll = LabelledCollection.from_folder(folder)
    assert coll.classes == ["apple", "car", "dog"] and len(coll) == 9 and coll.count("dog") == 3
    a, path_a = coll.pick("dog", random.Random(5))
    b, path_b = coll.pick("dog", random.Random(5))
    assert path_a == path_b and Path(path_a).parent.name == "dog"
    assert np.array_equal(np.asarray(a), np.asarray(b)) and a.mode == "RGB"
    paths = {coll.pick("dog", random.Random(s))[1] for s in range(20)}
    assert len(paths) == 3  # every image of the class can be drawn
    with pytest.raises(CollectionError, match="no class 'cat'"):
        coll.pick("cat", random.Random(0))


def test_folder_named_by_wordnet_id_takes_the_class_name(tmp_path: Path):
    root = tmp_path / "imagenet"
    for wnid in ("n02085620", "n01440764"):
        (root / wnid).mkdir(parents=True)
        (root / wnid / "a.png").write_bytes(png((1, 2, 3)))
    coll = LabelledCollection.from_folder(root, taxonomy=imagenet_x_taxonomy())
    assert coll.classes == ["Chihuahua", "tench"]
    assert coll.groups() == {"dog": ["Chihuahua"], "other": ["tench"]}
    assert LabelledCollection.from_folder(root).classes == ["n01440764", "n02085620"]


def test_folder_errors(tmp_path: Path):
    with pytest.raises(CollectionError, match="not found"):
        LabelledCollection.from_folder(tmp_path / "missing")
    (tmp_path / "x").mkdir()
    with pytest.raises(CollectionError, match="no class folder holds an image"):
        LabelledCollection.from_folder(tmp_path)
    for name in ("golden_retriever", "golden-retriever"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.png").write_bytes(png((1, 2, 3)))
    with pytest.raises(CollectionError, match="both name class 'golden retriever'"):
        LabelledCollection.from_folder(tmp_path)


datasets = pytest.importorskip("datasets")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")


def test_saved_dataset_with_class_label(tmp_path: Path):
    names = list(COLORS)
    labels = [i % 3 for i in range(9)]
    ds = datasets.Dataset.from_dict(
        {"img": [{"bytes": png(COLORS[names[i]]), "path": None} for i in labels], "cls": labels}
    )
    ds = ds.cast_column("img", datasets.Image()).cast_column(
        "cls", datasets.ClassLabel(names=names)
    )
    ds.save_to_disk(str(tmp_path / "saved"))
    coll = open_collection(f"hf:{tmp_path / 'saved'},image=img,label=cls")
    assert coll.classes == sorted(names) and coll.count("car") == 3
    image, where = coll.pick("car", random.Random(1))
    assert image.getpixel((0, 0)) == COLORS["car"] and where.startswith(str(tmp_path / "saved"))
    with pytest.raises(CollectionError, match=r"no image column 'image'; columns: img, cls"):
        open_collection(tmp_path / "saved")


def test_parquet_with_text_labels_and_paths(tmp_path: Path):
    (tmp_path / "pics").mkdir()
    (tmp_path / "pics" / "d.png").write_bytes(png(COLORS["dog"]))
    (tmp_path / "secret.png").write_bytes(png((9, 9, 9)))
    data = {"image": ["pics/d.png", "../secret.png"], "label": ["dog", "cat"]}
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pics").mkdir()
    (sub / "pics" / "d.png").write_bytes(png(COLORS["dog"]))
    datasets.Dataset.from_dict(data).to_parquet(str(sub / "data.parquet"))
    coll = open_collection(sub / "data.parquet")
    assert coll.classes == ["cat", "dog"]
    assert coll.pick("dog", random.Random(0))[0].getpixel((0, 0)) == COLORS["dog"]
    with pytest.raises(CollectionError, match="leaves the dataset folder"):
        coll.pick("cat", random.Random(0))  # a path in the data may not escape its folder


def test_open_collection_forms(folder: Path, tmp_path: Path):
    assert open_collection(folder).classes == ["apple", "car", "dog"]
    assert open_collection(f"imagefolder:{folder}").source == str(folder)
    with pytest.raises(CollectionError, match="unknown option"):
        open_collection(f"hf:{folder},colour=x")
    with pytest.raises(CollectionError, match="not found"):
        open_collection(tmp_path / "nothing")


class _Refuses:
    def __call__(self):
        raise AssertionError("an exact name must not need the embedder")


def test_matcher_exact_names_need_no_embedder():
    m = ClassMatcher(["golden retriever", "car"], _Refuses())
    match = m.match("Golden_Retriever", 0.95)
    assert match.matched and match.best == "golden retriever" and match.score == 1.0
    assert normalize_class("  Fire-Truck ") == "fire truck"


def test_matcher_paraphrase_scores_below_apex_threshold():
    from lmmprobe.metrics.embedding import SentenceEmbedder

    m = ClassMatcher(["dog", "car", "apple"], SentenceEmbedder)
    ranked = m.rank("puppy", k=3)
    assert ranked[0][0] == "dog"
    assert 0.6 < ranked[0][1] < 0.95  # close, but not APEx's "same class"
    assert not m.match("puppy", 0.95).matched and m.match("puppy", 0.75).matched


class _Counting:
    def __init__(self, inner):
        self.inner, self.path, self.calls = inner, inner.path, 0

    def encode(self, texts):
        self.calls += 1
        return self.inner.encode(texts)


def test_known_name_embeddings_are_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from lmmprobe.metrics.embedding import SentenceEmbedder

    monkeypatch.setenv("LMMPROBE_CACHE", str(tmp_path))
    counting = _Counting(SentenceEmbedder())
    first = ClassMatcher(["dog", "car", "apple"], lambda: counting).rank("puppy", k=3)
    assert counting.calls == 2  # the known names, then the query
    assert list((tmp_path / "class-embeddings").glob("*.npy"))
    second = ClassMatcher(["dog", "car", "apple"], lambda: counting).rank("puppy", k=3)
    assert counting.calls == 3  # only the query this time
    assert [n for n, _ in first] == [n for n, _ in second]
    assert np.allclose([s for _, s in first], [s for _, s in second])
