"""Labelled image collections for APEx's retrieval select tool, a class-group taxonomy, and matching.

APEx (Conti et al., "Automatic benchmarking of large multimodal models via iterative experiment
programming") selects real images with ``TextToImageRetrieval(class_name)`` from a labelled
dataset: the requested name is matched to the dataset's class names by the cosine similarity of
their all-MiniLM-L6-v2 sentence embeddings, and a match below 0.95 means "not in the dataset"
(the select tool then generates the image instead). Its dataset groups the 1,000 ImageNet
classes into ImageNet-X's 17 metaclasses (Idrissi et al., ICLR 2023), so an experiment can ask
about a group ("dogs", "vehicles") as well as a class.

Here a collection is local: an image folder (``ROOT/<class>/<image>``, the convention of
`lmmprobe.data.imagefolder`; folders named by WordNet id such as ``n01440764`` read as the
class's name through the taxonomy) or a Hugging Face `datasets` dataset on disk with an image
column and a class column (a ``ClassLabel`` or text). No images ship with lmmprobe. The
ImageNet-X taxonomy ships as data (``tools/data/imagenet_x_metaclasses.csv``, CC BY-NC 4.0;
see the README beside it); any other taxonomy can be read from a CSV.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import hashlib
import io
import json
import os
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from PIL import Image

from lmmprobe.schema.image import (
    check_pixels,
    image_file_problem,
    max_image_file_bytes,
    open_image,
)
from lmmprobe.spec import SpecError, parse_spec

__all__ = [
    "APEX_MATCH_THRESHOLD",
    "IMAGENET_X_METACLASSES",
    "ClassMatch",
    "ClassMatcher",
    "ClassTaxonomy",
    "CollectionError",
    "Embedder",
    "LabelledCollection",
    "imagenet_x_taxonomy",
    "normalize_class",
    "open_collection",
]

APEX_MATCH_THRESHOLD = 0.95
"""APEx's rule: a class-name cosine below this is no match (retrieval falls back to generation)."""

IMAGENET_X_METACLASSES: tuple[str, ...] = (
    "bird",
    "commodity",
    "covering",
    "device",
    "dog",
    "equipment",
    "food",
    "furniture",
    "insect",
    "natural_object",
    "other",
    "primate",
    "snake",
    "structure",
    "vehicle",
    "vessel",
    "wheeled_vehicle",
)
"""ImageNet-X's 17 metaclasses (16 named WordNet groups and ``other``)."""

_IMAGENET_X_FILE = "imagenet_x_metaclasses.csv"


class CollectionError(ValueError):
    """A labelled collection or taxonomy cannot be read, or a request names nothing in it."""


class Embedder(Protocol):
    """Anything that embeds texts as unit vectors (`lmmprobe.metrics.embedding.SentenceEmbedder`)."""

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed `texts` as rows of L2 norm 1."""
        ...


def normalize_class(name: str) -> str:
    """The comparison form of a class name: lower case, ``_``/``-`` as spaces, single spaces."""
    return " ".join(name.replace("_", " ").replace("-", " ").lower().split())


# ---------------------------------------------------------------------------------------------
# Taxonomy


@dataclass(frozen=True)
class ClassTaxonomy:
    """Class names grouped into named groups (ImageNet-X's metaclasses, or your own).

    Attributes:
        name: Short name of the taxonomy (``"imagenet-x"``), shown in provenance.
        groups: Class name → group name.
        aliases: Other names of a class (e.g. WordNet ids used as folder names) → class name.

    """

    name: str
    groups: Mapping[str, str]
    aliases: Mapping[str, str] = field(default_factory=dict)
    _normal: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Frozen: the lookup table is computed once here rather than assigned later.
        object.__setattr__(self, "_normal", {normalize_class(c): c for c in self.groups})

    def canonical(self, name: str) -> str:
        """The taxonomy's own spelling of `name` (through aliases and case), else `name`."""
        if name in self.groups:
            return name
        if name in self.aliases:
            return self.aliases[name]
        return self._normal.get(normalize_class(name), name)

    def group_of(self, class_name: str) -> str | None:
        """The group of a class (matched case-insensitively), or None when the class is unknown."""
        return self.groups.get(self.canonical(class_name))

    def group_names(self) -> list[str]:
        """All group names, sorted."""
        return sorted(set(self.groups.values()))

    def classes_in(self, group: str) -> list[str]:
        """The classes of `group`, sorted.

        Raises:
            CollectionError: No such group (the message lists the known ones).

        """
        members = sorted(c for c, g in self.groups.items() if g == group)
        if not members:
            raise CollectionError(
                f"taxonomy {self.name!r} has no group {group!r}; known: "
                f"{', '.join(self.group_names())}"
            )
        return members

    @classmethod
    def from_csv(
        cls,
        path: str | Path,
        *,
        name: str | None = None,
        class_column: str = "class_name",
        group_column: str = "group",
        alias_column: str | None = None,
    ) -> ClassTaxonomy:
        """Read a taxonomy from a CSV file with a header row.

        Args:
            path: The CSV file.
            name: Taxonomy name; defaults to the file's stem.
            class_column: Column holding class names.
            group_column: Column holding group names.
            alias_column: Optional column holding another name of each class (a folder name).

        Raises:
            CollectionError: The file is missing, lacks a column, or gives a class two groups.

        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise CollectionError(f"cannot read taxonomy {p}: {exc}") from exc
        return _taxonomy_from_text(
            text, name or p.stem, str(p), class_column, group_column, alias_column
        )


def _taxonomy_from_text(
    text: str,
    name: str,
    where: str,
    class_column: str,
    group_column: str,
    alias_column: str | None,
) -> ClassTaxonomy:
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    for column in (class_column, group_column, alias_column):
        if column is not None and column not in header:
            raise CollectionError(f"{where}: no column {column!r}; columns: {', '.join(header)}")
    groups: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for line, row in enumerate(reader, start=2):
        cls, group = row[class_column].strip(), row[group_column].strip()
        if not cls or not group:
            raise CollectionError(f"{where}:{line}: empty class or group")
        if groups.setdefault(cls, group) != group:
            raise CollectionError(
                f"{where}:{line}: class {cls!r} is in both {groups[cls]!r} and {group!r}"
            )
        if alias_column is not None and row[alias_column].strip():
            aliases[row[alias_column].strip()] = cls
    return ClassTaxonomy(name=name, groups=groups, aliases=aliases)


@functools.cache
def imagenet_x_taxonomy() -> ClassTaxonomy:
    """ImageNet-X's 17 metaclasses of the 1,000 ImageNet classes (shipped data, CC BY-NC 4.0).

    Class names are ImageNet's short names (``tench``, ``Chihuahua``); WordNet ids (``n01440764``)
    are aliases, so an ImageNet folder laid out by WordNet id reads with readable class names.

    Raises:
        CollectionError: The data file was removed from the installation.

    """
    try:
        text = (
            resources.files("lmmprobe.tools")
            .joinpath("data", _IMAGENET_X_FILE)
            .read_text(encoding="utf-8")
        )
    except OSError as exc:
        raise CollectionError(
            f"the ImageNet-X taxonomy file {_IMAGENET_X_FILE} is not installed ({exc}); "
            "pass your own taxonomy (ClassTaxonomy.from_csv) or none"
        ) from exc
    return _taxonomy_from_text(
        text, "imagenet-x", _IMAGENET_X_FILE, "class_name", "metaclass", "wnid"
    )


# ---------------------------------------------------------------------------------------------
# Matching


@dataclass(frozen=True)
class ClassMatch:
    """The outcome of matching a requested class name against known ones.

    Attributes:
        query: The requested name.
        best: The closest known class (None when there are no classes).
        score: Cosine similarity of the two names' embeddings (1.0 for an exact match).
        matched: Whether `score` reaches the threshold.

    """

    query: str
    best: str | None
    score: float
    matched: bool


def _cache_root() -> Path:
    env = os.environ.get("LMMPROBE_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "lmmprobe"


class ClassMatcher:
    """Matches class names to a fixed list by sentence-embedding cosine similarity.

    Names equal after `normalize_class` match with score 1.0 without embedding anything; the
    embedder (and the embeddings of the known names) load on the first inexact query. When the
    embedder names its checkpoint folder (``SentenceEmbedder.path``), the known names'
    embeddings are cached under ``$LMMPROBE_CACHE/class-embeddings`` (default
    ``~/.cache/lmmprobe``), keyed by that folder and the names, since embedding a few hundred
    names on a CPU takes seconds.

    Args:
        names: The known class names.
        embedder: A callable returning the embedder, called once when first needed.
        cache: Whether to read and write the embedding cache.

    """

    def __init__(
        self, names: Iterable[str], embedder: Callable[[], Embedder], *, cache: bool = True
    ) -> None:
        self.names = list(dict.fromkeys(names))
        self._exact = {normalize_class(n): n for n in self.names}
        self._get_embedder = embedder
        self._cache = cache
        self._vectors: npt.NDArray[np.float32] | None = None

    def _known_vectors(self, embedder: Embedder) -> npt.NDArray[np.float32]:
        texts = [normalize_class(n) for n in self.names]
        model = getattr(embedder, "path", None)
        file: Path | None = None
        if self._cache and model is not None:
            key = hashlib.sha256(json.dumps([str(model), texts]).encode()).hexdigest()[:32]
            file = _cache_root() / "class-embeddings" / f"{key}.npy"
            with contextlib.suppress(OSError, ValueError):
                cached: npt.NDArray[np.float32] = np.load(file).astype(np.float32)
                if cached.shape == (len(texts), cached.shape[1]) and len(texts):
                    return cached
        vectors = embedder.encode(texts)
        if file is not None:
            # Written beside and renamed, so a reader never sees half a file; a cache that
            # cannot be written only costs the next run the same few seconds.
            with contextlib.suppress(OSError):
                file.parent.mkdir(parents=True, exist_ok=True)
                tmp = file.with_suffix(f".{os.getpid()}.tmp.npy")
                np.save(tmp, vectors)
                os.replace(tmp, file)
        return vectors

    def rank(self, query: str, k: int = 5) -> list[tuple[str, float]]:
        """The `k` known names closest to `query`, best first, with their cosine similarity."""
        if not self.names:
            return []
        exact = self._exact.get(normalize_class(query))
        if exact is not None and k == 1:
            return [(exact, 1.0)]
        embedder = self._get_embedder()
        if self._vectors is None:
            self._vectors = self._known_vectors(embedder)
        q = embedder.encode([normalize_class(query)])[0]
        sims = self._vectors @ q
        order = np.argsort(-sims, kind="stable")[:k]
        ranked = [(self.names[i], float(sims[i])) for i in order]
        if exact is not None:  # an exact name is a perfect match whatever rounding says
            ranked = [(exact, 1.0), *[(n, s) for n, s in ranked if n != exact]][:k]
        return ranked

    def match(self, query: str, threshold: float) -> ClassMatch:
        """Match `query`: its closest known name, and whether the cosine reaches `threshold`."""
        ranked = self.rank(query, k=1)
        if not ranked:
            return ClassMatch(query, None, 0.0, False)
        best, score = ranked[0]
        return ClassMatch(query, best, score, score >= threshold)


# ---------------------------------------------------------------------------------------------
# Collections


@dataclass(frozen=True)
class _Item:
    class_name: str
    key: Any  # a Path (image folder) or a row index (datasets)


class LabelledCollection:
    """Images labelled with class names, from which retrieval draws seeded picks.

    Build one with `from_folder`, `from_hf` or `open_collection`.

    Attributes:
        source: Where the images come from, as shown in provenance.
        taxonomy: Class groups, or None.

    """

    def __init__(
        self,
        source: str,
        items: Sequence[_Item],
        load: Callable[[Any], Image.Image],
        locate: Callable[[Any], str],
        taxonomy: ClassTaxonomy | None = None,
        files: Callable[[], Iterable[Path]] | None = None,
    ) -> None:
        if not items:
            raise CollectionError(f"{source}: no labelled images")
        self.source = source
        self.taxonomy = taxonomy
        self._items = list(items)
        self._load = load
        self._locate = locate
        self._files = files
        self._fingerprint: str | None = None
        self._by_class: dict[str, list[int]] = {}
        for i, item in enumerate(self._items):
            self._by_class.setdefault(item.class_name, []).append(i)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def classes(self) -> list[str]:
        """The class names, sorted."""
        return sorted(self._by_class)

    def count(self, class_name: str) -> int:
        """How many images the class has (0 for an unknown class)."""
        return len(self._by_class.get(class_name, []))

    def group_of(self, class_name: str) -> str | None:
        """The class's group in the taxonomy, or None."""
        return self.taxonomy.group_of(class_name) if self.taxonomy else None

    def groups(self) -> dict[str, list[str]]:
        """Group → the collection's classes in it (classes outside the taxonomy are left out)."""
        out: dict[str, list[str]] = {}
        for c in self.classes:
            g = self.group_of(c)
            if g is not None:
                out.setdefault(g, []).append(c)
        return out

    def fingerprint(self) -> str:
        """A hex SHA-256 of the collection's files as they are now: names, sizes, mtimes.

        Images composed from the collection are cached under it (APEx's `ImageCache`): a file
        replaced, added or removed at the same path changes it, and they are composed again.
        Taken once, on first use (the store's image checks read files the same way).
        """
        if self._fingerprint is None:
            h = hashlib.sha256(self.source.encode())
            for path in sorted(self._files() if self._files is not None else ()):
                try:
                    st = path.stat()
                    state = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
                except OSError:
                    state = "missing"
                h.update(f"\0{path}\0{state}".encode())
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    def pick(self, class_name: str, rng: random.Random) -> tuple[Image.Image, str]:
        """A seeded random image of `class_name` and where it comes from.

        Raises:
            CollectionError: The class is not in the collection, or its image cannot be read.

        """
        indices = self._by_class.get(class_name)
        if not indices:
            raise CollectionError(f"{self.source}: no class {class_name!r}")
        key = self._items[indices[rng.randrange(len(indices))]].key
        try:
            image = self._load(key)
        except (OSError, ValueError) as exc:
            raise CollectionError(f"{self._locate(key)}: cannot read image: {exc}") from exc
        return image, self._locate(key)

    @classmethod
    def from_folder(
        cls, root: str | Path, *, taxonomy: ClassTaxonomy | None = None
    ) -> LabelledCollection:
        """Read ``ROOT/<class>/<image>`` (the project's image-folder convention).

        Folder names read as in `lmmprobe.data.imagefolder` (``golden_retriever`` → "golden
        retriever"); a folder named by a taxonomy alias (a WordNet id) takes the class's name.

        Raises:
            CollectionError: ROOT is not a folder, holds no images, or two folders name one class.

        """
        from lmmprobe.data.imagefolder import EXTENSIONS, class_name

        base = Path(root)
        if not base.is_dir():
            raise CollectionError(f"image folder not found: {base}")
        items: list[_Item] = []
        seen: dict[str, str] = {}
        for folder in sorted(
            p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")
        ):
            files = sorted(
                p
                for p in folder.iterdir()
                if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in EXTENSIONS
            )
            if not files:
                continue
            name = class_name(folder.name)
            if taxonomy is not None:
                name = taxonomy.canonical(taxonomy.aliases.get(folder.name, name))
            if name in seen:
                raise CollectionError(
                    f"{base}: folders {seen[name]!r} and {folder.name!r} both name class {name!r}"
                )
            seen[name] = folder.name
            items.extend(_Item(name, f) for f in files)
        if not items:
            raise CollectionError(f"{base}: no class folder holds an image")

        return cls(
            str(base), items, _read_image, str, taxonomy, files=lambda: (i.key for i in items)
        )

    @classmethod
    def from_hf(
        cls,
        path: str | Path,
        *,
        image: str = "image",
        label: str = "label",
        split: str | None = None,
        config: str | None = None,
        taxonomy: ClassTaxonomy | None = None,
    ) -> LabelledCollection:
        """Read a local Hugging Face `datasets` dataset with an image and a class column.

        Args:
            path: A ``save_to_disk`` folder, a parquet/json/csv/arrow file, or a folder that
                ``load_dataset`` reads (nothing is fetched from the Hub).
            image: The image column (a datasets ``Image``, bytes, or a file path).
            label: The class column: a ``ClassLabel`` (its names are used) or text.
            split: Split to read (default: ``test`` when there is one, as `lmmprobe.data.hf_dataset`).
            config: Dataset configuration, for ``load_dataset``.
            taxonomy: Class groups, or None.

        Raises:
            CollectionError: The dataset cannot be loaded or lacks a column.

        """
        from lmmprobe.data.base import DataError
        from lmmprobe.data.hf_dataset import open_dataset

        p = Path(path)
        if not p.exists():
            raise CollectionError(f"dataset not found: {p} (retrieval reads local data only)")
        options = {k: v for k, v in (("split", split), ("config", config)) if v is not None}
        try:
            ds, used_split = open_dataset(p, options)
        except DataError as exc:
            raise CollectionError(str(exc)) from exc
        columns = list(ds.column_names)
        for role, column in (("image", image), ("label", label)):
            if column not in columns:
                raise CollectionError(
                    f"{p}: no {role} column {column!r}; columns: {', '.join(columns)} "
                    f"(name it with {role}=COLUMN)"
                )
        feature = ds.features[label]
        to_name: Callable[[Any], str] = (
            feature.int2str if hasattr(feature, "int2str") else (lambda v: str(v))
        )
        labels = ds.select_columns([label]).with_format("python")[label]
        items = [
            _Item(_label_name(to_name(v), taxonomy), i)
            for i, v in enumerate(labels)
            if v is not None and str(v).strip()
        ]
        base = (p if p.is_dir() else p.parent).resolve()
        source = f"{p}[{used_split}]" if used_split else str(p)

        # The stored values (an Image column's encoded bytes or path), never decoded by
        # `datasets` itself, which would skip lmmprobe's checks (as in `lmmprobe.data.hf_dataset`).
        stored = ds.select_columns([image]).with_format("arrow")

        def load(row: int) -> Image.Image:
            return _decode(stored[row].column(image)[0].as_py(), base, f"{source}:{row}")

        def files() -> Iterable[Path]:
            # The dataset's own files (a data file, or a folder's, links not followed).
            return [p] if p.is_file() else (f for f in p.rglob("*") if f.is_file())

        return cls(source, items, load, lambda row: f"{source}:{row}", taxonomy, files=files)


def _label_name(raw: str, taxonomy: ClassTaxonomy | None) -> str:
    name = " ".join(raw.split())
    return taxonomy.canonical(taxonomy.aliases.get(name, name)) if taxonomy else name


def _read_image(path: Path) -> Image.Image:
    """A collection's image file decoded as RGB, read as the data loaders read an image.

    A regular file (no FIFO, device or folder), within `max_image_file_bytes`, opened through
    `open_image` (lmmprobe's pixel cap, ``$LMMPROBE_MAX_IMAGE_PIXELS``).

    Raises:
        OSError: Missing, not a regular file, larger than an image may be, not an image, or
            over the pixel cap (`ImageTooLargeError`).

    """
    from lmmprobe.data.base import DataError
    from lmmprobe.data.files import read_regular

    try:
        data = read_regular(path, max_image_file_bytes(), what="an image")
    except DataError as exc:  # not a regular file, or too large: unreadable, as for a loader
        raise OSError(str(exc)) from None
    return _decode_bytes(data, str(path))


def _decode_bytes(data: bytes, name: str) -> Image.Image:
    """Encoded image bytes decoded as RGB, within lmmprobe's pixel cap (`open_image`).

    Raises:
        OSError: Not an image, or over the pixel cap.

    """
    problem = image_file_problem(len(data))
    if problem:
        raise OSError(problem)
    with open_image(io.BytesIO(data), name) as im:
        # A small picture in a much larger file carries other data (as the loaders refuse it).
        problem = image_file_problem(len(data), im.size[0] * im.size[1])
        if problem:
            raise OSError(problem)
        return im.convert("RGB")


def _decode(value: Any, base: Path, name: str) -> Image.Image:
    if isinstance(value, list) and value:  # a list-of-images column: the first image
        value = value[0]
    if isinstance(value, Image.Image):
        # Already decoded by `datasets` (itself under Pillow's limit): checked all the same.
        check_pixels(value.size, name)
        return value.convert("RGB")
    if isinstance(value, dict):  # the storage of a datasets Image: {"bytes", "path"}
        value = value.get("bytes") or value.get("path")
    if isinstance(value, bytes | bytearray):
        return _decode_bytes(bytes(value), name)
    if isinstance(value, str):
        file = (base / value).resolve()
        if not file.is_relative_to(base):  # a path in the data must not leave its folder
            raise ValueError(f"image path {value!r} leaves the dataset folder")
        return _read_image(file)
    raise ValueError(f"not an image: {type(value).__name__}")


def open_collection(
    spec: str | Path, *, taxonomy: ClassTaxonomy | None = None
) -> LabelledCollection:
    """Open a labelled collection from a spec, as ``--retrieval`` gives it.

    Forms: ``imagefolder:ROOT``; ``hf:PATH[,image=image,label=label,split=...,config=...]``; or a
    bare path: a folder of class subfolders is an image folder, a ``save_to_disk`` folder or a
    data file is a dataset (default columns ``image`` and ``label``).

    Args:
        spec: The spec.
        taxonomy: Class groups (e.g. `imagenet_x_taxonomy()`), or None.

    Raises:
        CollectionError: Unknown form or option, or the collection cannot be read.

    """
    text = str(spec)
    scheme, sep, _ = text.partition(":")
    if sep and scheme in ("imagefolder", "hf"):
        try:
            parsed = parse_spec(text, "retrieval")
        except SpecError as exc:
            raise CollectionError(str(exc)) from exc
        target, options = parsed.target or "", parsed.options
        if scheme == "imagefolder":
            if options:
                raise CollectionError(f"{text}: imagefolder takes no options")
            return LabelledCollection.from_folder(target, taxonomy=taxonomy)
        known = {"image", "label", "split", "config"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise CollectionError(f"{text}: unknown option(s) {unknown}; known: {sorted(known)}")
        return LabelledCollection.from_hf(
            target,
            image=options.get("image", "image"),
            label=options.get("label", "label"),
            split=options.get("split"),
            config=options.get("config"),
            taxonomy=taxonomy,
        )
    path = Path(text)
    saved = any((path / m).is_file() for m in ("dataset_dict.json", "state.json"))
    if path.is_dir() and not saved and any(p.is_dir() for p in path.iterdir()):
        try:
            return LabelledCollection.from_folder(path, taxonomy=taxonomy)
        except CollectionError:
            pass  # not class folders after all: let datasets try the folder
    return LabelledCollection.from_hf(path, taxonomy=taxonomy)
