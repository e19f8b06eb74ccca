r"""Classification image folders turned into single-choice questions.

Origin: the ``root/<class_name>/<image>`` layout of torchvision's ``ImageFolder`` and of most
classification datasets once unpacked (ImageNet, Caltech-101, EuroSAT, ...). No data ships with
lmmprobe; the license is that of the images you point it at.

Spec: ``imagefolder:ROOT[,choices=4,seed=0,question=...]``. Every subfolder of ROOT holding at
least one image (.png, .jpg, .jpeg, .bmp, .gif, .webp, .tif, .tiff) is a class, named after the
folder with ``_`` and ``-`` read as spaces (``golden_retriever`` -> "golden retriever"). Each
image becomes one question (default "What is shown in the image?") whose options are its class
and ``choices - 1`` distractors drawn from the other classes, shuffled. The draw is seeded per
image with ``random.Random(f"{seed}:{relative path}")``, so an image keeps its options whatever
else is in the folder and wherever the folder lies. Sample ids are the relative paths.

An image whose file name, or whose class folder's name, is not UTF-8 (a Linux name may be any
bytes) is an invalid row, named with its bytes escaped (``x\xff.png``): its id would be its
path, and a class named so would be an option of other questions.

Samples are ordered round-robin over the classes (first image of each class, then the second,
...), so ``--limit`` takes about the same number of images from every class.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

from lmmprobe.data.base import SOURCES, DataError, LoadResult, SampleProblem, int_option
from lmmprobe.data.rows import RowError, check_image
from lmmprobe.schema import Sample
from lmmprobe.schema.text import shown_path

EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff"})
OPTIONS = frozenset({"choices", "seed", "question"})
DEFAULT_QUESTION = "What is shown in the image?"


@dataclass(frozen=True)
class _Settings:
    choices: int
    seed: int
    question: str


def class_name(folder: str) -> str:
    """The class a folder names: underscores and hyphens read as spaces."""
    return " ".join(folder.replace("_", " ").replace("-", " ").split())


def _visible(path: Path) -> bool:
    return not path.name.startswith(".")


def _is_text(name: str) -> bool:
    """Whether a file name is UTF-8 (Python reads other bytes as lone surrogates)."""
    return shown_path(name) == name


def _scan(root: Path) -> tuple[dict[str, list[Path]], list[Path]]:
    """The classes (name -> images) and the images of folders whose names are not UTF-8."""
    classes: dict[str, list[Path]] = {}
    folders: dict[str, str] = {}
    unnamed: list[Path] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and _visible(p)):
        files = sorted(
            p
            for p in folder.iterdir()
            if p.is_file() and _visible(p) and p.suffix.lower() in EXTENSIONS
        )
        if not files:
            continue
        if not _is_text(folder.name):
            # No class can be named after it (the name is an option of other questions too).
            unnamed.extend(files)
            continue
        name = class_name(folder.name)
        if name in folders:
            raise DataError(
                f"{root}: folders {folders[name]!r} and {folder.name!r} both name class {name!r}"
            )
        folders[name] = folder.name
        classes[name] = files
    return classes, unnamed


def _interleave(classes: dict[str, list[Path]]) -> list[tuple[str, Path]]:
    rounds = zip_longest(*([(name, f) for f in files] for name, files in classes.items()))
    return [item for group in rounds for item in group if item is not None]


def _options(truth: str, names: list[str], key: str, k: int) -> tuple[list[str], int]:
    rng = random.Random(key)
    options = [truth, *rng.sample([n for n in names if n != truth], k - 1)]
    rng.shuffle(options)
    return options, options.index(truth)


def make_sample(root: Path, name: str, file: Path, names: list[str], cfg: _Settings) -> Sample:
    """Build the question for one image (after checking that the image is readable).

    Raises:
        RowError: The image cannot be read.

    """
    rel = file.relative_to(root).as_posix()
    image = check_image(file.parent, file.name, "image")
    # The relative path, not the absolute one, seeds the draw: a copied folder asks the same.
    choices, answer = _options(name, names, f"{cfg.seed}:{rel}", cfg.choices)
    return Sample(
        id=rel,
        images=[image],
        question=cfg.question,
        choices=choices,
        answer=answer,
        formulation="single_choice",
        metadata={"task": "classification", "class": name},
    )


def _unnamed(file: Path, what: str) -> SampleProblem:
    """The problem of an image whose path is not UTF-8 (skipped: its id would be its path)."""
    return SampleProblem(
        shown_path(file), None, "file name", f"{what} is not valid UTF-8: rename it to read it"
    )


def _settings(target: str | None, options: dict[str, str]) -> tuple[Path, _Settings]:
    if not target:
        raise DataError("the imagefolder source needs a folder: imagefolder:ROOT[,choices=4]")
    unknown = sorted(set(options) - OPTIONS)
    if unknown:
        raise DataError(f"imagefolder has no option(s) {unknown}; known: {sorted(OPTIONS)}")
    root = Path(target)
    if not root.is_dir():
        raise DataError(f"image folder not found: {root}")
    cfg = _Settings(
        choices=int_option(options, "choices", 4, "imagefolder"),
        seed=int_option(options, "seed", 0, "imagefolder"),
        question=options.get("question", DEFAULT_QUESTION) or DEFAULT_QUESTION,
    )
    if cfg.choices < 2:
        raise DataError(f"imagefolder: choices={cfg.choices}; a question needs at least 2")
    return root.resolve(), cfg


@SOURCES.register(
    "imagefolder",
    summary="imagefolder:ROOT[,choices=4,seed=0,question=...]  class folders as choice questions",
)
def load_imagefolder(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> LoadResult:
    """Turn ``ROOT/<class>/<image>`` folders into single-choice classification questions."""
    root, cfg = _settings(target, options)
    classes, unnamed = _scan(root)
    if len(classes) < cfg.choices:
        raise DataError(
            f"{root}: {len(classes)} class folder(s) with images, but choices={cfg.choices} "
            "needs at least that many classes"
        )
    names = sorted(classes)
    result = LoadResult(samples=[], source=shown_path(root))
    for file in unnamed:
        result.add_problem(_unnamed(file, "its folder's name"), strict)
    for name, file in _interleave(classes):
        if limit is not None and len(result.samples) >= limit:
            break
        if not _is_text(file.name):
            # Its id is its path: a sample id the store, results and a request can hold.
            result.add_problem(_unnamed(file, "its name"), strict)
            continue
        try:
            result.samples.append(make_sample(root, name, file, names, cfg))
        except RowError as exc:
            result.add_problem(SampleProblem(str(file), None, "image", exc.reason), strict)
    return result
