"""Hugging Face ``datasets`` as a data source, with a column mapping.

Origin: any dataset the `datasets` library (Apache-2.0) reads from local disk: a folder written
by ``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk`` (read with ``load_from_disk``), a
parquet / json / jsonl / ndjson / csv / tsv / arrow data file, compressed or not (read with
``load_dataset(BUILDER, data_files=...)``), or a local folder that ``load_dataset`` understands
(data files of those formats, a zip of them, images). A data file of another of `datasets`'
builders (``.txt``, ``.xml``, ``.eval``, ``.h5``, ``.lance``, ``.pdf``...) is refused: lmmprobe
checks none of them before `datasets` converts it. Nothing is fetched from the Hub: download a
dataset once and save it. The license is the dataset's own; see its dataset card.

Spec: ``hf:PATH[,split=test,config=NAME,image=image,question=question,options=choices,
answer=answer,id=id]``. The column options name the dataset's columns:

- ``image``: a datasets ``Image`` column (PIL images when you build the dataset; read here as
  the encoded bytes it stores, never decoded), raw bytes, a file path (relative to the
  dataset folder or the data file's folder; an absolute path or one leaving that folder is
  the row's problem), or a list of these. Bytes are verified and kept
  as base64, so an image hashes the same as the file it came from.
- ``question``: the question text.
- ``options``: a list of option texts. Without that column (when not named explicitly) or with
  a null value, the row is open-ended.
- ``answer``: the index of the correct option, or its text (which must be one of the options);
  for open-ended rows, the reference text(s).
- ``id``: unique ids; without that column the ids are ``row-N``.

Other columns holding plain values (text, numbers, booleans) are kept in ``metadata``, so
results can be broken down by them (``--by category``). Problems are reported as
``PATH[split]:N: column: reason`` with N the 0-based row index, as in ``dataset[N]``.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import importlib
import io
import math
import os
import posixpath
import re
import shutil
import tempfile
import zipfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from types import ModuleType
from typing import Any

from PIL import Image

from lmmprobe._mapping_file import MAX_BYTES, MappingFileError, read_mapping_text, where
from lmmprobe.data.arrow_files import watch_arrow_files
from lmmprobe.data.base import SOURCES, DataError, SampleStream, streaming
from lmmprobe.data.files import (
    COMPRESSIONS,
    JSON_SUFFIXES,
    MAX_COLUMNS,
    PARQUET_LIMITS,
    TABLE_CELLS,
    check_arrow,
    check_compressed,
    check_csv,
    check_json,
    check_parquets,
    decompressed,
    open_regular,
    unpack_zips,
)
from lmmprobe.data.rows import RowError, check_image, outside_folder, stream_rows, to_sample
from lmmprobe.registry import RegistryError
from lmmprobe.schema import ImageRef, Sample
from lmmprobe.schema.image import ImageTooLargeError, open_image, unreadable_reason

INSTALL_HINT = "pip install 'lmmprobe[datasets]'"
COLUMNS: dict[str, str] = {
    "image": "image",
    "question": "question",
    "options": "choices",
    "answer": "answer",
    "id": "id",
}
OPTIONS = frozenset({"split", "config", *COLUMNS})
BUILDERS = {
    ".parquet": "parquet",
    ".json": "json",
    ".jsonl": "json",
    ".csv": "csv",
    ".arrow": "arrow",
}
_SAVED_MARKERS = ("dataset_dict.json", "state.json")
_BATCH = 256
SHOWN_COLUMNS = 20  # the columns named when one is missing; the rest are counted
# A card's YAML front matter, as huggingface_hub finds it (repocard.REGEX_YAML_BLOCK): the
# opening line is kept, so line N of the match is line N of the card.
_FRONT_MATTER = re.compile(r"^(\s*---(?:\r\n|\r|\n))([\S\s]*?)(?:\r\n|\r|\n)---[ \t]*(?:\r\n|\n|$)")


def image_from_bytes(data: bytes) -> ImageRef:
    """Verify encoded image bytes and reference them as base64.

    The picture is held to the decoding cap (`open_image`: 40,000,000 pixels unless
    ``$LMMPROBE_MAX_IMAGE_PIXELS`` says otherwise) from its header, as a file's image is.

    Raises:
        ValueError: Pillow cannot read the bytes as an image, or the picture has more pixels
            than the cap (one line saying its size and the cap).

    """
    try:
        with open_image(io.BytesIO(data), "data") as im:
            im.verify()  # reads everything; catches truncated and non-image data
    except ImageTooLargeError as exc:
        raise ValueError(str(exc)) from None
    except Exception as exc:
        raise ValueError(f"unreadable image data: {unreadable_reason(exc)}") from exc
    return ImageRef.from_base64(base64.b64encode(data).decode("ascii"))


def image_from_base64(text: str) -> ImageRef:
    """Verify base64-encoded image data and reference it.

    Raises:
        ValueError: The text is not base64, or its bytes are not an image.

    """
    try:
        data = base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"not base64 image data: {exc}") from exc
    return image_from_bytes(data)


def import_datasets() -> ModuleType:
    """The `datasets` module, or a RegistryError with the pip command when it is missing."""
    # import_module rather than an import statement: datasets ships no type information, and
    # a module object is all this source needs from the type checker.
    try:
        module = importlib.import_module("datasets")
    except ModuleNotFoundError as exc:
        if exc.name != "datasets":
            raise
        raise RegistryError(
            f"the data source 'hf' needs datasets, which is not installed; run: {INSTALL_HINT}"
        ) from exc
    # datasets hands pyarrow Python files that Arrow's threads may drop as the interpreter
    # finalizes, which aborts it: the exit waits for them (issue 34).
    watch_arrow_files()
    return module


@contextmanager
def quiet_progress(datasets: ModuleType) -> Iterator[None]:
    """Within the block, `datasets` draws no progress bars (the caller's setting is restored)."""
    # datasets draws progress bars on stderr while it converts a data file; they would tear
    # through the run's own progress display. Restore the caller's setting afterwards.
    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def _pick_split(loaded: Any, split: str | None, path: Path) -> tuple[Any, str | None]:
    if not hasattr(loaded, "keys"):  # a single Dataset: it has no splits to choose from
        return loaded, None
    splits = sorted(loaded.keys())
    if split is None:
        split = "test" if "test" in splits or len(splits) != 1 else splits[0]
    if split not in splits:
        raise DataError(f"{path}: no split {split!r}; available: {', '.join(splits)}")
    return loaded[split], split


def _saved(path: Path) -> bool:
    """Whether `path` is a folder ``save_to_disk`` wrote (read as it is, nothing converted)."""
    return path.is_dir() and any((path / m).is_file() for m in _SAVED_MARKERS)


def _open(
    datasets: ModuleType, path: Path, options: dict[str, str], cache: str, *, check: bool
) -> tuple[Any, str | None]:
    split, config = options.get("split"), options.get("config")
    if _saved(path):
        if config is not None:
            raise DataError(f"{path}: config= applies to load_dataset, not to a saved folder")
        return _pick_split(datasets.load_from_disk(str(path)), split, path)
    split = split or "test"
    if path.is_file():
        zipped = path.suffix.lower() == ".zip"
        if not zipped:
            builder, kwargs = _file_builder(path)
        if check:
            check_data_files([path])
        if zipped:  # checked first: the builder is its members' (`datasets` reads them)
            builder, kwargs = _zip_builder(path)
        ds = datasets.load_dataset(
            builder,
            name=config,
            data_files={split: str(path)},
            split=split,
            cache_dir=cache,
            **kwargs,
        )
    else:
        card_configs(path)  # a card `datasets` would choke on is refused in one line first
        if check:
            check_data_files(_data_files(path))
            check_read_files(path, *_files_read(datasets, path, config, cache))
        ds = datasets.load_dataset(str(path), name=config, split=split, cache_dir=cache)
    return ds, split


_CHECKED = {
    **dict.fromkeys((".parquet", ".geoparquet", ".gpq"), ("parquet", {})),
    **dict.fromkeys(JSON_SUFFIXES, ("json", {})),
    ".csv": ("csv", {}),
    ".tsv": ("csv", {"sep": "\t"}),
    ".arrow": ("arrow", {}),
}
"""The data files lmmprobe checks before `datasets` converts them, by suffix: `datasets`'
builder for each, with the options it gives it (a TSV is a CSV split at tabs)."""

_FILE_FORMATS = (
    "parquet, JSON / JSON Lines (.json, .jsonl, .ndjson), CSV / TSV and Arrow (.arrow) files, "
    "compressed (.gz, .bz2, .xz, .zst, .lz4) or not"
)
"""What a data file ``hf:`` reads may be, for the refusal of another."""

_READ_FORMATS = f"{_FILE_FORMATS}, in a .zip or not, and images"
"""What an ``hf:`` folder's data files may be, for the refusal of another."""

_IGNORED = frozenset(
    {"readme.md", "config.json", "dataset_info.json", "dataset_infos.json", "dataset_dict.json"}
)
"""Files `datasets` never reads as data (its FILES_TO_IGNORE): the card and its metadata."""


def _file_builder(path: Path) -> tuple[str, dict[str, str]]:
    """The `datasets` builder, and its options, for one data file `path`, by its suffix.

    Any file a folder may hold is read alone as well: a compression's suffix is skipped
    (``test.jsonl.gz`` is JSON Lines, which `datasets` decompresses as it reads).

    Raises:
        DataError: Not a format lmmprobe checks, naming the formats it reads.

    """
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    if len(suffixes) == 2 and suffixes[-1] in COMPRESSIONS:
        suffixes.pop()
    found = _CHECKED.get(suffixes[-1]) if suffixes else None
    if found is None:
        raise DataError(
            f"{path}: unknown data file type: lmmprobe reads {_FILE_FORMATS}, or a .zip of them"
        )
    builder, kwargs = found
    return builder, dict(kwargs)


def _zip_builder(path: Path) -> tuple[str, dict[str, str]]:
    """The builder for a zip of data files: that of its most common data file format.

    Raises:
        DataError: It holds no data file lmmprobe reads, or cannot be read.

    """
    with open_regular(path, what="a dataset") as fh:
        try:
            with zipfile.ZipFile(fh) as archive:
                names = [info.filename for info in archive.infolist() if not info.is_dir()]
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError) as exc:
            raise DataError(f"{path}: not a readable zip archive ({exc})") from None
    found: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
    for name in names:
        try:
            builder, kwargs = _file_builder(Path(name))
        except DataError:
            continue
        found[builder, tuple(sorted(kwargs.items()))] += 1
    if not found:
        raise DataError(f"{path}: a zip of no data file lmmprobe reads ({_FILE_FORMATS})")
    (name, options), _ = found.most_common(1)[0]
    return name, dict(options)


def _other_builder(path: Path) -> str | None:
    """The builder `datasets` would read `path` with, by its name, when lmmprobe checks none.

    `datasets` picks a folder's builder by its files' most common suffix (each of a name's
    suffixes counts): a ``.txt``, ``.xml``, ``.eval``, ``.tar``, ``.h5``, ``.lance``,
    ``.pdf`` file... is read by a builder of its own, unchecked (lines of any length, zip
    members json-loaded whole). Its own table of suffixes says which; where it cannot be
    read, every suffix lmmprobe does not know is taken as another builder's.
    """
    if path.name.lower() in _IGNORED:
        return None
    try:
        table: dict[str, tuple[str, Any]] | None = importlib.import_module(
            "datasets.packaged_modules"
        )._EXTENSION_TO_MODULE
    except (ModuleNotFoundError, AttributeError):
        table = None
    for part in path.name.split(".")[1:]:
        suffix = f".{part.lower()}"
        if suffix in _CHECKED or suffix in COMPRESSIONS or suffix == ".zip":
            continue
        if table is None:  # images are read as images (their pixels capped) whatever reads them
            if suffix not in Image.registered_extensions():
                return f"builder for {suffix} files"
            continue
        module = table.get(suffix, (None,))[0]
        if module is not None and module != "imagefolder":
            return f"{module} builder"
    return None


def _read_unchecked(files: list[Path]) -> dict[Path, str]:
    """The files of `files` `datasets` may read with a builder lmmprobe does not check.

    `datasets` reads a folder with the builder of its most common suffix (each of a name's
    suffixes counted) and leaves the files of other formats unread, so a ``LICENSE.txt``
    beside three parquet files is never read. A file of an unchecked builder (`_other_builder`)
    counts here where its suffix is at least as common as the most common suffix of the files
    lmmprobe checks: at a tie `datasets` may pick either, so a tie is refused too. It counts
    too where its name names a split (``test.txt``: `datasets` takes a split's files by name
    before it counts suffixes, by its own `SPLIT_KEYWORDS`).
    """
    others = {file: other for file in files if (other := _other_builder(file)) is not None}
    if not others:
        return {}
    split_named = {file: other for file, other in others.items() if _names_a_split(file.name)}
    if split_named:
        return split_named
    counts = Counter(f".{part.lower()}" for file in files for part in file.name.split(".")[1:])
    read = [file for file in files if file not in others and file.name.lower() not in _IGNORED]
    checked = max(
        (counts[f".{part.lower()}"] for file in read for part in file.name.split(".")[1:]),
        default=0,
    )
    return {
        file: other
        for file, other in others.items()
        if max(counts[f".{part.lower()}"] for part in file.name.split(".")[1:]) >= checked
    }


def _names_a_split(name: str) -> bool:
    """Whether a file name names a split as `datasets`' file patterns read one (``test.txt``)."""
    try:
        module = importlib.import_module("datasets.data_files")
        keywords = [k for words in module.SPLIT_KEYWORDS.values() for k in words]
        sep = module.NON_WORDS_CHARS  # a bracket class in its glob patterns ("-._ 0-9")
    except (ModuleNotFoundError, AttributeError):
        return True  # the rule unknown: any name may name a split, so the file is refused
    pattern = rf"(?:^|.*[{sep}])(?:{'|'.join(map(re.escape, keywords))})[{sep}]"
    return re.match(pattern, name.lower()) is not None


def check_data_files(files: list[Path], *, unpacked: bool = False) -> None:
    """Refuse any file among `files` that `datasets` would convert into more than it holds.

    `datasets` converts a data file into an Arrow copy on disk with every value written out:
    a value repeated by parquet's dictionary encoding (a 15 MB file of one 1 MB question in
    1,500 rows) made a 1.5 GB copy, a 320 KB ``.jsonl.gz`` a 300 MB one, and a CSV of a
    million columns took pandas minutes and gigabytes. So before it converts them: parquet
    files are checked together (`check_parquets`: one budget for the copy they make);
    compressed files (by their first bytes, as `datasets` unpacks them, else their suffix)
    have their decompressed bytes, and Arrow IPC files their record batches, counted under
    the same rule (`check_compressed`, `check_arrow`); CSV/TSV files are scanned under the
    table bounds (`check_csv`) and JSON files under the readers' record and nesting bounds
    (`check_json`), compressed or not; zip archives are unpacked under the same rule
    (`unpack_zips`) into a temporary folder and what they hold checked as the folder's own
    files. A file `datasets` would read with a builder none of these checks bound (``.txt``,
    ``.eval``, ``.xml``...: `_other_builder`) is refused, naming the formats read. Each
    refusal is one line naming the file (a file in a zip as ``ARCHIVE/NAME``).

    Args:
        files: The data files of one source.
        unpacked: `files` came out of a zip: `datasets` unpacks no archive inside another.

    Raises:
        DataError: A file is not a regular file, is unreadable, or passes the limits; one
            line naming the file.

    """
    parquet = [file for file in files if file.suffix.lower() in _PARQUET_SUFFIXES]
    try:
        formats = {file: _unpacked_as(file) for file in files}
        archives = [file for file in files if formats[file] not in (None, *_CODECS)]
        for file in archives:
            if unpacked or formats[file] != "zip":
                inside = " inside another archive" if unpacked else ""
                raise DataError(
                    f"{file}: a {formats[file]} archive{inside}, which lmmprobe does not "
                    "unpack to check before datasets converts it: unpack it into the dataset's "
                    "folder"
                )
        for file, other in _read_unchecked(files).items():
            # Its builder reads what no check of lmmprobe's has bounded.
            raise _unchecked(file, other)
        codecs = {file: fmt for file, fmt in formats.items() if fmt in _CODECS}
        check_parquets(parquet, what="a dataset")
        check_compressed(files, what="a dataset", codecs=codecs)
        check_arrow(files, what="a dataset")
        for file in files:
            if file not in archives:
                _check_text(file, codecs.get(file))
        if archives:
            with tempfile.TemporaryDirectory(prefix="lmmprobe-zip-") as tmp:
                for archive, folder in unpack_zips(archives, Path(tmp), what="a dataset"):
                    try:
                        check_data_files(_data_files(folder), unpacked=True)
                    except DataError as exc:  # named inside the archive, not the temporary copy
                        raise DataError(
                            str(exc).replace(f"{folder}{os.sep}", f"{archive}{os.sep}")
                        ) from None
    except OSError as exc:
        raise DataError(
            f"{exc.filename or files}: cannot be read ({exc.strerror or exc})"
        ) from None


_PARQUET_SUFFIXES = (".parquet", ".geoparquet", ".gpq")
"""The suffixes `datasets`' parquet builder reads."""

_CODECS = frozenset(COMPRESSIONS.values())
"""`datasets`' names of the compressions it unpacks a single file from (those of `COMPRESSIONS`)."""


def _unpacked_as(path: Path) -> str | None:
    """What `datasets` unpacks `path` as, by its first bytes (``gzip``, ``zip``, ``tar``...).

    None for a file it reads as it is. Asked of `datasets`' own extractor, once the file is
    known to be a regular one (its first bytes are read, which would hang on a FIFO). A
    compressed tar is ``tar`` to `datasets`; it is reported as its compression here.
    """
    with open_regular(path, what="a dataset") as fh:
        head = fh.read(_MAGIC_BYTES)
    try:
        extract = importlib.import_module("datasets.utils.extract")
    except ModuleNotFoundError:  # no datasets: nothing converts the file either
        return None
    for codec in sorted(_CODECS):
        extractor = extract.Extractor.extractors.get(codec)
        if extractor is not None and extractor.is_extractable(path, magic_number=head):
            return codec
    found = extract.Extractor.infer_extractor_format(path)
    return None if found is None else str(found)


_MAGIC_BYTES = 262
"""Bytes read to tell a file's format by its start (a tar's magic stands at byte 257)."""


_CSV_DELIMITERS = {".csv": ",", ".tsv": "\t"}
"""The delimiter of each table suffix `datasets`' csv builder reads."""


def _check_text(path: Path, codec: str | None) -> None:
    """Refuse a CSV/TSV or JSON file (compressed or not) past its bounds.

    A CSV/TSV is held to the table bounds (`check_csv`), a JSON or JSON Lines file to the
    readers' record and nesting bounds (`check_json`); the kind is the suffix (before a
    compression's). `datasets` hands a table to pandas a block of rows at a time, so what it
    holds at once is bounded by the columns and the line length; the cells a file has in
    all are bounded by its own size (a cell takes at least its delimiter), the most it is
    allowed here. A compressed file (`codec`, else by its suffix) is read decompressed, once
    `check_compressed` has bounded its size.
    """
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    by_suffix = COMPRESSIONS.get(suffixes[-1]) if suffixes else None
    codec = codec or by_suffix
    kind = suffixes[-2] if by_suffix is not None and len(suffixes) == 2 else path.suffix.lower()
    delimiter = _CSV_DELIMITERS.get(kind)
    if delimiter is None and kind not in JSON_SUFFIXES:
        return
    with open_regular(path, what="a dataset") as fh:
        size = os.fstat(fh.fileno()).st_size
        # Decompressed, its bytes are bounded by check_compressed's limit, and so its cells.
        limit = max(PARQUET_LIMITS.floor, PARQUET_LIMITS.ratio * size)
        with decompressed(fh, codec) if codec is not None else contextlib.nullcontext(fh) as text:
            if delimiter is None:
                check_json(path, text)
            else:
                cells = max(TABLE_CELLS, size if codec is None else limit)
                check_csv(path, text, delimiter, cells=cells)


def _unchecked(file: Path, builder: str) -> DataError:
    """The refusal of a file `datasets` reads with a `builder` lmmprobe does not check."""
    return DataError(
        f"{file}: datasets reads it with its {builder}, which lmmprobe does not check; an hf: "
        f"dataset's files may be {_READ_FORMATS}: convert it, or move it out of the folder"
    )


_CHECKED_BUILDERS = frozenset({"parquet", "json", "csv", "arrow", "imagefolder"})
"""The `datasets` builders whose files lmmprobe checks before they are converted (an image
folder's pictures are read as images, their pixels capped; its metadata files are checked)."""


def _files_read(
    datasets: ModuleType, folder: Path, config: str | None, cache: str
) -> tuple[str, str | None, list[Path]]:
    """The builder, its CSV separator and the data files `datasets` reads for a folder's config.

    Asked of `datasets` itself (`load_dataset_builder`, which resolves the card's ``configs``,
    their ``data_dir`` and ``data_files``, or the folder's split-named files, and reads no
    data): what it will convert for every split of the config, wherever the files lie.
    """
    builder = datasets.load_dataset_builder(str(folder), name=config, cache_dir=cache)
    # Its packaged builders live in datasets.packaged_modules.NAME.NAME (json, text...).
    module = type(builder).__module__.split(".")
    packaged = len(module) > 2 and module[:2] == ["datasets", "packaged_modules"]
    name = module[2] if packaged else ".".join(module)
    data_files = builder.config.data_files or {}
    files = sorted({Path(str(f)) for split in data_files.values() for f in split})
    return name, getattr(builder.config, "sep", None), files


def check_read_files(folder: Path, builder: str, sep: str | None, files: list[Path]) -> None:
    """Refuse a folder whose files, as `datasets` reads them for the chosen config, are unchecked.

    `files` are those `datasets` resolved (`_files_read`): a card's ``data_files`` or
    ``data_dir`` may name a hidden folder, a folder reached through a link, or one that is
    not the dataset's, none of which the folder's own listing (`_data_files`) holds. Each
    file's folder must lie inside the dataset's once links are followed (a file that is
    itself a link, as in the hub cache, is read through and checked); the `builder` reading
    them must be one lmmprobe checks, and each file must be of that builder's format by its
    name (a ``.txt`` a card names is read by the text builder; a ``.jsonl`` read by the csv
    builder would be split at commas unchecked). Those not yet checked are then checked with
    the folder's own files (`check_data_files`).

    Raises:
        DataError: One line naming the first file refused and why.

    """
    root = folder.resolve()
    for file in files:
        if "://" in str(file):
            raise DataError(f"{file}: not a local file; an hf: dataset's files lie in its folder")
        where = Path(os.path.abspath(file)).parent.resolve()
        if not where.is_relative_to(root):
            raise DataError(
                f"{file}: lies outside the dataset's folder {folder} (in {where}); datasets "
                "would read it, but an hf: dataset's data files must lie inside its folder"
            )
    for file in files:
        other = _other_builder(file)
        if other is not None:
            raise _unchecked(file, other)
        if builder not in _CHECKED_BUILDERS:
            raise _unchecked(file, f"{builder} builder")
        if builder == "imagefolder" or file.suffix.lower() == ".zip":
            continue  # pictures and their metadata files; a zip's files are checked unpacked
        try:
            own, options = _file_builder(file)
        except DataError:
            own, options = "", {}
        if own != builder or (own == "csv" and options.get("sep", ",") != (sep or ",")):
            kind = _KINDS.get(
                "tsv" if options.get("sep") == _TAB else own, "no data file lmmprobe reads"
            )
            reading = f"{builder} builder" + (" (tab-separated)" if sep == _TAB else "")
            raise DataError(
                f"{file}: datasets reads it with its {reading}, but by its name it is {kind}; "
                "the data files of one config must all be of one format"
            )
    known = _data_files(folder)
    seen = {f.resolve() for f in known}
    unseen = [file for file in files if file.resolve() not in seen]
    if unseen:  # in a hidden folder, or one reached through a link: checked with the rest
        check_data_files(known + unseen)


_TAB = "\t"
_KINDS = {
    "parquet": "a parquet file",
    "json": "a JSON file",
    "csv": "a CSV file",
    "tsv": "a TSV file",
    "arrow": "an Arrow file",
}
"""How a data file's format is named, by the builder its suffix says (a TSV is a CSV's)."""


def _data_files(folder: Path) -> list[Path]:
    """The files of a dataset folder `datasets` may read: all but hidden ones (its cache)."""
    return sorted(
        f
        for f in folder.rglob("*")
        if not any(part.startswith(".") for part in f.relative_to(folder).parts) and f.is_file()
    )


def card_configs(folder: Path) -> list[dict[str, Any]]:
    """The ``configs:`` of a local dataset folder's card (its README.md front matter), checked.

    `datasets` reads the card itself with ``yaml.safe_load``: an alias "bomb" of a kilobyte
    takes it many seconds and a gigabyte, and a malformed ``data_files`` entry fails deep
    inside it. The card is read here first, by the bounded reader of configuration files
    (`lmmprobe._mapping_file`: no aliases, bounded nesting and size, no key given twice), and
    each config's ``data_files`` must have the shapes `datasets` documents: a file pattern, a
    list of them, or a list of ``{split: NAME, path: PATTERN or [PATTERN, ...]}``.

    Args:
        folder: The dataset folder.

    Returns:
        The card's configs (each a mapping); empty when the folder has no card or the card
        names none.

    Raises:
        DataError: The card cannot be read, or a config has the wrong shape (file:line, field).

    """
    card = folder / "README.md"
    if not card.is_file():
        return []
    try:
        with card.open("rb") as f:
            raw = f.read(MAX_BYTES)
    except OSError as exc:
        raise DataError(f"{card}: cannot be read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:  # in the prose below the front matter, no matter
        text = raw[: exc.start].decode("utf-8")
        if _FRONT_MATTER.match(text) is None and _FRONT_MATTER.match(
            raw.decode("utf-8", errors="replace")
        ):
            line = raw.count(b"\n", 0, exc.start) + 1
            raise DataError(
                f"{card}:{line}: the YAML front matter is not UTF-8 text (byte {exc.start})"
            ) from None
    match = _FRONT_MATTER.match(text)
    if match is None:  # no front matter: `datasets` reads no metadata either
        return []
    try:
        data, lines = read_mapping_text(card, match.group(1) + match.group(2), what="fields")
    except MappingFileError as exc:
        raise DataError(f"{exc} (the dataset card's YAML front matter)") from None
    configs = data.get("configs")
    if configs is None:
        return []
    at = where(card, lines, "configs")
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise DataError(f"{at}: configs must be a list of mappings (config_name, data_files)")
    for n, config in enumerate(configs):
        problem = _data_files_problem(config.get("data_files"))
        if problem is not None:
            problem = f"data_files{problem}"
        else:
            problem = _data_dir_problem(config.get("data_dir"))
        if problem is not None:
            name = config.get("config_name", "default")
            raise DataError(f"{at}: configs[{n}] (config_name {str(name)[:40]!r}): {problem}")
    return configs


def _data_dir_problem(value: Any) -> str | None:
    """What is wrong with a config's ``data_dir`` (the folder its patterns are read in), or None.

    `datasets` joins it to the dataset's folder and reads the files found there: an absolute
    folder, or one climbing out, would have it read files that are not the benchmark's and
    that lmmprobe never checked. Refused in the card's words, as such a pattern is.
    """
    if value is None or value == "":  # `datasets` reads the folder itself
        return None
    if not isinstance(value, str):
        return f"data_dir must be a folder inside the dataset's, not {type(value).__name__}"
    problem = _pattern_problem(value, what="folder")
    return None if problem is None else f"data_dir {problem}"


def _data_files_problem(value: Any) -> str | None:
    """What is wrong with a config's ``data_files`` (a field path and reason), or None."""
    if value is None:
        return None
    if isinstance(value, str):
        problem = _pattern_problem(value)
        return None if problem is None else f" {problem}"
    if not isinstance(value, list):
        return f" must be a file pattern or a list, not {type(value).__name__}"
    for i, item in enumerate(value):
        if isinstance(item, str):
            problem = _pattern_problem(item)
            if problem is not None:
                return f"[{i}] {problem}"
            continue
        if not isinstance(item, dict):
            return f"[{i}] must be a file pattern or {{split, path}}, not {type(item).__name__}"
        if set(item) != {"split", "path"} or not isinstance(item["split"], str):
            return f"[{i}] must have exactly the keys split (a name) and path"
        path = item["path"]
        if not (
            isinstance(path, str)
            or (isinstance(path, list) and path and all(isinstance(p, str) for p in path))
        ):
            return f"[{i}].path must be a file pattern or a list of file patterns"
        for j, pattern in enumerate([path] if isinstance(path, str) else path):
            problem = _pattern_problem(pattern)
            if problem is not None:
                return f"[{i}].path{'' if isinstance(path, str) else f'[{j}]'} {problem}"
    return None


def _pattern_problem(pattern: str, *, what: str = "file pattern") -> str | None:
    """What is wrong with one ``data_files`` pattern (or `what` else) of a folder's card, or None.

    `datasets` fails on an absolute pattern with a NotImplementedError traceback and on an
    empty one with a message that names no file; a pattern climbing out of the folder would
    read files that are not the benchmark's. Each is refused here, in the card's words.
    """
    if not pattern.strip():
        return f"is an empty {what}"
    posix = pattern.replace("\\", "/")
    if posixpath.isabs(posix) or PureWindowsPath(pattern).is_absolute() or posix.startswith("~"):
        return f"is an absolute {what} ({pattern[:80]!r}); it must be relative to the folder"
    if posixpath.normpath(posix).split("/")[0] == "..":
        return f"climbs out of the folder ({pattern[:80]!r}); it must stay inside it"
    return None


def _local_cache_dir(datasets: ModuleType, path: Path) -> Path:
    """Where `datasets` keeps its Arrow copy of the local data at `path`.

    `datasets` keys the copy of a local folder whose card names configs by the folder's name
    and the config alone, so two copies with the same folder name (or an updated copy) would
    silently share the first one's rows. This folder is keyed by the resolved path and every
    file's name, size and modification time, so other or changed data is never read stale.
    """
    resolved = path.resolve()
    files = [resolved] if resolved.is_file() else sorted(resolved.rglob("*"))
    h = hashlib.sha256(str(resolved).encode())
    for f in files:
        if f.is_file() and not any(
            part.startswith(".") for part in f.relative_to(resolved.parent).parts
        ):
            st = f.stat()
            h.update(f"\0{f.relative_to(resolved.parent)}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return Path(datasets.config.HF_DATASETS_CACHE) / "lmmprobe-local" / h.hexdigest()[:24]


def open_dataset(path: Path, options: dict[str, str]) -> tuple[Any, str | None]:
    """Open a local dataset as the ``hf`` source does, without reading its rows.

    Args:
        path: A ``save_to_disk`` folder, a parquet/json/jsonl/csv/tsv/arrow file, or a folder
            ``load_dataset`` reads.
        options: ``split`` and ``config``, as in the source spec (other keys are ignored).

    Returns:
        The `datasets.Dataset` and the split it is (None for a saved single dataset).

    Raises:
        RegistryError: `datasets` is not installed (with the pip command).
        DataError: The dataset cannot be read, or has no such split.

    """
    datasets = import_datasets()
    # A conversion that fails (out of disk or memory) leaves its partial Arrow copy behind:
    # removed, unless an earlier run had made that folder.
    cache = None if _saved(path) else _local_cache_dir(datasets, path)
    fresh = cache is not None and not cache.exists()
    try:
        with quiet_progress(datasets):
            # Checked before `datasets` converts them; a copy it made earlier of the same files
            # (the folder is keyed by their sizes and times) passed the check then.
            return _open(datasets, path, options, str(cache), check=fresh)
    except BaseException as exc:
        if fresh and cache is not None:
            shutil.rmtree(cache, ignore_errors=True)
        if isinstance(exc, DataError) or not isinstance(exc, Exception):
            raise
        # datasets raises many types; all mean "cannot read this"
        raise DataError(f"{path}: datasets cannot load it: {type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True)
class _Mapping:
    """Which dataset column feeds which sample field (None: the dataset has none)."""

    image: str
    question: str
    options: str | None
    answer: str
    id: str | None
    extra: tuple[str, ...]


def _some_columns(columns: list[str]) -> str:
    """The first `SHOWN_COLUMNS` of `columns`, and how many more: an error stays one line."""
    shown = ", ".join(columns[:SHOWN_COLUMNS])
    more = len(columns) - SHOWN_COLUMNS
    return shown if more <= 0 else f"{shown} … and {more:,} more"


def _mapping(ds: Any, options: dict[str, str], path: Path) -> _Mapping:
    # `ds.features` is a fresh deep copy of every column's feature on each read, so it is read
    # once here: read per column, a dataset of many columns took time in their square.
    features = ds.features
    columns = list(features)
    if len(columns) > MAX_COLUMNS:
        raise DataError(
            f"{path}: {len(columns):,} columns, more than {MAX_COLUMNS:,} (a spreadsheet's "
            "limit): is it the right file?"
        )
    found: dict[str, str | None] = {}
    for field, default in COLUMNS.items():
        column = options.get(field, default)
        if column in features:
            found[field] = column
        elif field in options or field in ("image", "question", "answer"):
            raise DataError(
                f"{path}: no column {column!r} for {field}; columns: {_some_columns(columns)} "
                f"(name it with {field}=COLUMN)"
            )
        else:
            found[field] = None
    used = set(found.values())
    # Plain-valued columns only: lists, images and nested records would bloat metadata.
    value = import_datasets().Value
    extra = tuple(c for c in columns if c not in used and isinstance(features[c], value))
    return _Mapping(
        image=str(found["image"]),
        question=str(found["question"]),
        options=found["options"],
        answer=str(found["answer"]),
        id=found["id"],
        extra=extra,
    )


def _one_image(value: Any, base: Path, field: str) -> ImageRef:
    if isinstance(value, dict):  # the storage of a datasets Image: {"bytes", "path"}
        value = value.get("bytes") or value.get("path")
    if isinstance(value, bytes | bytearray):
        try:
            return image_from_bytes(bytes(value))
        except ValueError as exc:
            raise RowError(field, str(exc)) from exc
    if isinstance(value, str):
        # A path-only value (no bytes) from a dataset file: read inside its folder only.
        escapes = outside_folder(value, f"the dataset's folder {base}")
        if escapes:
            raise RowError(field, escapes)
    return check_image(base, value, field)


def _images(value: Any, base: Path, column: str) -> list[ImageRef]:
    if value is None:
        raise RowError(column, "no image (null)")
    if isinstance(value, list):
        return [_one_image(v, base, f"{column}[{i}]") for i, v in enumerate(value)]
    return [_one_image(value, base, column)]


def _choices(value: Any, column: str) -> list[str]:
    if not isinstance(value, list):
        raise RowError(column, f"expected a list of option texts, got {value!r}")
    if not all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
        raise RowError(column, f"expected option texts, got {value!r}")
    return [str(v) for v in value]


def _answer(value: Any, choices: list[str] | None, column: str) -> Any:
    if choices is None:
        return value  # reference text(s); the Sample checks them
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        if value in choices:
            return choices.index(value)
        raise RowError(column, f"{value!r} is not among the options {choices}")
    raise RowError(column, f"expected an option index or option text, got {value!r}")


def _parse_row(
    row: dict[str, Any], index: int, m: _Mapping, base: Path, split: str | None
) -> Sample:
    choices = (
        _choices(row[m.options], m.options) if m.options and row[m.options] is not None else None
    )
    raw_id = row[m.id] if m.id else f"row-{index}"
    if raw_id is None or isinstance(raw_id, bool) or not isinstance(raw_id, int | str):
        raise RowError(m.id, f"expected a string or an integer id, got {raw_id!r}")
    metadata = {c: row[c] for c in m.extra if row[c] is not None}
    for column, value in metadata.items():
        # A float column may hold an infinity, which JSON (and so the store) has no value for;
        # found here, before any model is asked, it is the row's problem, as in a JSONL row.
        if isinstance(value, float) and math.isinf(value):
            raise RowError(column, f"{value} is infinite, a number JSON has no value for")
    if split is not None:
        metadata.setdefault("split", split)
    data = {
        "id": str(raw_id),
        "images": _images(row[m.image], base, m.image),
        "question": row[m.question],
        "choices": choices,
        "answer": _answer(row[m.answer], choices, m.answer),
        "formulation": "single_choice" if choices is not None else "open_ended",
        "metadata": metadata,
    }
    columns = {"id": m.id, "question": m.question, "choices": m.options, "answer": m.answer}
    return to_sample(data, columns)


def _rows(ds: Any, m: _Mapping) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(index, row)`` for each row; a generator `stream_rows` closes when it stops."""
    wanted = [c for c in (m.id, m.image, m.question, m.options, m.answer, *m.extra) if c]
    # Arrow batches hand over an Image column's stored bytes without decoding every picture,
    # and only the columns we use are read. Closed when the load stops early: `datasets`'
    # batch generator, and the Arrow reader it holds, go then (`release_rows`).
    table = ds.select_columns(list(dict.fromkeys(wanted))).with_format("arrow")
    index = 0
    with contextlib.closing(table.iter(batch_size=_BATCH)) as batches:
        for batch in batches:
            for row in batch.to_pylist():
                yield index, row
                index += 1


def _check_options(target: str | None, options: dict[str, str]) -> Path:
    if not target:
        raise DataError("the hf source needs a path: hf:PATH[,split=test,question=...]")
    unknown = sorted(set(options) - OPTIONS)
    if unknown:
        raise DataError(f"the hf source has no option(s) {unknown}; known: {sorted(OPTIONS)}")
    path = Path(target)
    if not path.exists():
        raise DataError(
            f"dataset not found: {path} (the hf source reads local data only: a save_to_disk "
            "folder or a parquet/json/csv/arrow file)"
        )
    return path


def stream_hf(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> SampleStream:
    """Read a local Hugging Face dataset through a column mapping, a row at a time.

    The dataset is opened and its columns checked when called; rows are read as the stream is.
    """
    path = _check_options(target, options)
    ds, split = open_dataset(path, options)
    mapping = _mapping(ds, options, path)
    base = (path if path.is_dir() else path.parent).resolve()
    source = f"{path}[{split}]" if split else str(path)
    return SampleStream(
        source,
        lambda report: stream_rows(
            report,
            _rows(ds, mapping),
            lambda index, row: _parse_row(row, index, mapping, base, split),
            strict=strict,
            limit=limit,
            id_field=mapping.id or "id",
            unit="row",
        ),
    )


load_hf = SOURCES.register(
    "hf",
    summary="hf:PATH[,split=,config=,image=,question=,options=,answer=,id=]  Hugging Face datasets",
)(streaming(stream_hf))
"""Load a local Hugging Face dataset through a column mapping; see the module docstring."""
