"""Remembered first reads: a large data file read again is not parsed row by row to be checked.

A run of more than one chunk first reads its whole data file to check it (`load_in_chunks`):
it parses and validates every row, checks every image, and takes the figures the run records
and decides by (how many samples, the data's fingerprint and each chunk's, where the images
are, the samples' kinds). The same bytes read by the same rules give the same figures, so the
store remembers them (``load_checks``, schema 14), as it remembers each image file's check:

- **keyed by the file's bytes and the rules**: a hash of the data file's bytes and of the code
  that reads rows (every module of `lmmprobe.data` and `lmmprobe.schema` and every lmmprobe
  module the readers import, with the versions of lmmprobe, Python, pydantic-core and Pillow), for one data spec, ``strict``, ``limit``,
  chunk size, the file's resolved path and the pixel cap;
- **with every image the read found**: each image path a row gave, with the file it led to
  (resolved path, size and ``st_ctime_ns``, as ``image_checks`` tells a file unchanged). A read
  is taken from the store only when every such path leads to the same file, unchanged.

Anything else (another file, a changed byte or image, a file that changed while it was read,
other rules or settings, a damaged record) and the file is read in full, as before. Only a
read that ended as a `StreamedLoad` with no rejected row and no video is remembered (a rejected
row's reason or a video's frames depend on more than these); a read of one chunk holds its
samples, which a run uses, so it is read as always. A load given from the store has no
spill (the chunks a full read keeps, `lmmprobe.data.spill`): a run that does not copy an
earlier run's rows reads its samples again chunk by chunk (`StreamedLoad.chunks`), each chunk
checked against the fingerprints taken here: what is asked is what was fingerprinted.

The image log is compressed as it is written and read back a piece at a time, so remembering
or replaying a read of a million rows holds no list of them.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import stat
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from lmmprobe.data.base import LoadResult, StreamedLoad, load_in_chunks, parse_source_spec
from lmmprobe.data.rows import RowError, located_image, noting_images
from lmmprobe.schema.image import max_image_pixels

__all__ = ["LoadCheckStore", "reading_modules", "reading_rules", "remembered_load"]

_KEY_VERSION = 1
"""Version of what the keys and the summary hold; a change makes earlier records unused."""

_PIECE = 1 << 20
"""Bytes of the image log decompressed at a time when it is read back."""

_MOST_LOG_LINE = 1 << 16
"""The longest image log line read back (a damaged record is not followed further)."""


class LoadCheckStore(Protocol):
    """Where first reads are remembered: `lmmprobe.store.Store` (named by its methods alone)."""

    def has_load_checks(self) -> bool:
        """Whether any first read is remembered."""
        ...

    def load_check(self, source: str, content: str) -> tuple[str, bytes] | None:
        """The summary and image log remembered for `source` with these `content`, or None."""
        ...

    def put_load_check(self, source: str, content: str, summary: str, images: bytes) -> None:
        """Remember a read, replacing the one of the same `source`."""
        ...


_READERS = ("lmmprobe.data.jsonl", "lmmprobe.data.remembered_loads")
"""The modules that turn a remembered file's rows into samples: the ``jsonl`` source, and this
module's read in chunks (`load_in_chunks`); what they import is found from them."""


@functools.cache
def reading_rules() -> str:
    """A hash of the code that turns rows into samples, and of the libraries it leans on.

    Every module of `lmmprobe.data` and `lmmprobe.schema`, and every lmmprobe module the readers
    import, directly or through others (`reading_modules`: `lmmprobe.spec`, `lmmprobe._secrets`,
    `lmmprobe._file_kind`...), their bytes by name; and the versions of lmmprobe, Python,
    pydantic-core and Pillow: an edit to any of that code, installed or not, makes every
    remembered read unused.
    """
    import PIL
    import pydantic_core

    from lmmprobe._version import __version__

    h = hashlib.sha256()
    src = _source_root()
    for module in reading_modules():
        h.update(str(module.relative_to(src)).encode("utf-8", "surrogateescape"))
        h.update(b"\0%d\0" % module.stat().st_size)
        h.update(module.read_bytes())
    versions = (__version__, sys.version, pydantic_core.__version__, PIL.__version__)
    h.update(json.dumps(versions).encode())
    return h.hexdigest()


def _source_root() -> Path:
    """The folder holding the ``lmmprobe`` package (``src`` in a checkout)."""
    return Path(__file__).resolve().parents[2]


def reading_modules() -> list[Path]:
    """The module files `reading_rules` hashes, sorted: see there.

    Found from the import statements of the `_READERS` (those inside functions included), and
    of each lmmprobe module they import, rather than listed by hand, so a module a reader
    starts to use is covered without anyone remembering to add it. The ``lmmprobe`` package's
    own ``__init__`` is left out: it only re-exports the API, and would bring in every module.
    """
    src = _source_root()
    found = {
        m for package in ("data", "schema") for m in (src / "lmmprobe" / package).rglob("*.py")
    }
    seen: set[str] = set()
    todo = list(_READERS)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_file(src, name)
        if path is None:
            continue
        found.add(path)
        todo.extend(_lmmprobe_imports(path, name))
    return sorted(found)


def _module_file(src: Path, name: str) -> Path | None:
    """The file of module `name` under `src` (a package's ``__init__.py``), or None."""
    base = src.joinpath(*name.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _lmmprobe_imports(path: Path, name: str) -> set[str]:
    """The lmmprobe modules and packages (the top one aside) that module `name` imports.

    ``from lmmprobe.x import y`` gives both ``lmmprobe.x`` and ``lmmprobe.x.y`` (which
    `_module_file` then finds to be a module or not); every package above a module is given
    too, as importing the module runs its ``__init__``.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the package, one level up per dot past the first
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*parts, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            named.add(module)
            named.update(f"{module}.{alias.name}" for alias in node.names)
    out: set[str] = set()
    for module in named:
        parts = module.split(".")
        if parts[0] == "lmmprobe":
            out.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
    return out


def _jsonl_file(spec: str) -> Path | None:
    """The file a ``jsonl`` data spec reads, or None for any other spec (read as always)."""
    try:
        name, target, options = parse_source_spec(spec)
    except ValueError:
        return None  # the plain read says what is wrong with it
    return Path(target) if name == "jsonl" and target and not options else None


def _identity(path: Path) -> tuple[int, int, int, int, int]:
    """What tells the file changed: device, inode, size, mtime and ctime (as the reader's)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{path} is not a regular file")
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _content_key(path: Path) -> str:
    """Hash of the reading rules and the file's bytes, read in pieces (bounded memory)."""
    h = hashlib.sha256(f"{_KEY_VERSION}\0{reading_rules()}\0".encode())
    with path.open("rb") as f:  # a regular file (`_identity` says so first)
        while piece := f.read(_PIECE):
            h.update(piece)
    return h.hexdigest()


def _source_key(spec: str, path: Path, *, size: int, strict: bool, limit: int | None) -> str:
    """Hash of what names one read apart from the bytes: spec, settings, the file's place."""
    # The cap decides which images are refused and is read from the environment.
    key = [_KEY_VERSION, spec, str(path.resolve()), size, strict, limit, max_image_pixels()]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()


def remembered_load(
    spec: str, store: LoadCheckStore, *, size: int, strict: bool = False, limit: int | None = None
) -> LoadResult | StreamedLoad:
    """`load_in_chunks`, given from the store where this read is remembered, else remembered.

    Call it inside `lmmprobe.data.rows.remembered_images` (outside it, nothing is remembered
    nor given from the store). The load given from the store is the `StreamedLoad` the read
    gave: the same figures, no rejected row.

    Args:
        spec: The data spec (only a ``jsonl`` file is remembered; any other is read as always).
        store: The run's store.
        size: Samples a chunk holds (`load_in_chunks`).
        strict: As for `load_in_chunks`.
        limit: As for `load_in_chunks`.

    Raises:
        RegistryError: Unknown source name (from the plain read).
        DataError: Unreadable source, or an invalid row in strict mode (from the plain read).

    """
    plain = functools.partial(load_in_chunks, spec, size=size, strict=strict, limit=limit)
    path = _jsonl_file(spec)
    if path is None:
        return plain()
    try:
        before = _identity(path)
        source = _source_key(spec, path, size=size, strict=strict, limit=limit)
        content = _content_key(path) if store.has_load_checks() else None
    except (OSError, ValueError):
        return plain()  # missing, unreadable, a cap that cannot be read: the plain read says
    if content is not None:
        found = store.load_check(source, content)
        replayed = None if found is None else _replayed(found, spec, size, strict, limit)
        if replayed is not None:
            return replayed
    log = zlib.compressobj()
    pieces: list[bytes] = []

    def note(base: Path, value: str, file: str, info: os.stat_result) -> None:
        line = json.dumps([str(base), value, file, info.st_size, info.st_ctime_ns]) + "\n"
        pieces.append(log.compress(line.encode("utf-8", "surrogatepass")))

    with noting_images(note) as noting:
        load = plain()
    if not noting or not isinstance(load, StreamedLoad) or load.invalid or load.videos:
        return load
    try:
        content = content or _content_key(path)
        if _identity(path) != before:
            return load  # changed while it was read: what was read is not what was hashed
    except OSError:
        return load
    pieces.append(log.flush())
    store.put_load_check(source, content, _summary(load), b"".join(pieces))
    return load


def _summary(load: StreamedLoad) -> str:
    """The figures of a read, as the store keeps them (JSON)."""
    return json.dumps(
        {
            "source": load.source,
            "count": load.count,
            "fingerprint": load.fingerprint,
            "chunk_fingerprints": load.chunk_fingerprints,
            "kinds": [list(kind) for kind in load.kinds],
            "places": load.places,
        }
    )


def _replayed(
    found: tuple[str, bytes], spec: str, size: int, strict: bool, limit: int | None
) -> StreamedLoad | None:
    """The remembered read, if every image path it met leads to the same file, unchanged."""
    summary_text, images = found
    try:
        for base, value, file, file_size, ctime_ns in _log_entries(images):
            where, info = located_image(Path(base), value, "images")
            if (
                info is None
                or not stat.S_ISREG(info.st_mode)
                or (where, info.st_size, info.st_ctime_ns) != (file, file_size, ctime_ns)
            ):
                return None
        s = json.loads(summary_text)
        kinds = {(None if k[0] is None else str(k[0]), bool(k[1])): None for k in s["kinds"]}
        return StreamedLoad(
            spec=spec, strict=strict, limit=limit, source=str(s["source"]), size=size,
            count=int(s["count"]), fingerprint=str(s["fingerprint"]),
            chunk_fingerprints=[str(f) for f in s["chunk_fingerprints"]],
            kinds=kinds, places=str(s["places"]),
        )  # fmt: skip
    except (
        RowError, OSError, ValueError, TypeError, KeyError, IndexError, RecursionError, zlib.error
    ):  # fmt: skip
        # A record this code cannot read (JSON nested past the recursion limit among them: it
        # stopped every run of this data with a traceback, re-test 17): the file is read in full.
        return None


def _log_entries(blob: bytes) -> Iterator[tuple[str, str, str, int, int]]:
    """The image log's entries, decompressed a piece at a time.

    Raises:
        ValueError: A damaged log (a line too long, not JSON, or not five fields).
        zlib.error: Not zlib data.

    """
    d = zlib.decompressobj()
    rest = b""
    data = blob
    while True:
        chunk = d.decompress(data, _PIECE)
        data = d.unconsumed_tail
        if not chunk and not data:
            break
        *lines, rest = (rest + chunk).split(b"\n")
        if len(rest) > _MOST_LOG_LINE:
            raise ValueError("image log line too long")
        for line in lines:
            base, value, file, file_size, ctime_ns = json.loads(line)
            yield str(base), str(value), str(file), int(file_size), int(ctime_ns)
    if rest or not d.eof:
        raise ValueError("image log cut short")
