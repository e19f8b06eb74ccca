"""Data sources: the registry, load reports with file:line problems, and data fingerprints.

A source is a function ``(target, options, *, strict, limit) -> LoadResult`` registered in
`SOURCES`; a data spec ``name:target,key=value`` names it. Built-in sources are one file each
in this package; another package adds one through the ``lmmprobe.sources`` entry-point group.

A source may also yield its samples one at a time (`streaming`): `iter_source` then reads a
million-row file holding one sample at a time, and `load_source` is the list of the same stream,
so both give the same samples and the same problems. A source that only loads (a plugin, the
demo) is read by `iter_source` from its loaded list.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from lmmprobe._secrets import redact_values, spec_secret_values
from lmmprobe.data.spill import SPILL_ERRORS, ChunkSpill
from lmmprobe.registry import Registry, RegistryError
from lmmprobe.schema import Sample
from lmmprobe.schema.text import ascii_integer, shown_value
from lmmprobe.spec import parse_spec

log = logging.getLogger(__name__)

MAX_PROBLEMS_SHOWN = 10


@dataclass(frozen=True)
class SampleProblem:
    """Why one input row was rejected, and where it is."""

    source: str
    line: int | None
    field: str | None
    reason: str

    def __str__(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        what = f"{self.field}: {self.reason}" if self.field else self.reason
        return f"{where}: {what}"


class DataError(ValueError):
    """Invalid input in strict mode, or a source that cannot be read at all."""

    def __init__(self, problem: SampleProblem | str) -> None:
        super().__init__(str(problem))
        self.problem = problem


def int_option(options: dict[str, str], name: str, default: int, source: str) -> int:
    """A source's option `name` as a whole number in ASCII digits; `default` when not given.

    ``int()`` would also read other scripts' digits (``٣`` is 3), underscores and more than
    4,300 digits (with advice to change an interpreter limit): an option is read as it looks.

    Raises:
        DataError: The value is no whole number, named with `source` and cut when long.

    """
    if name not in options:
        return default
    value = ascii_integer(options[name])
    if value is None:
        shown = shown_value(options[name])
        raise DataError(f"{source}: option {name}={shown!r} is not an integer")
    return value


class _Rejected:
    """What a load rejected: counted, and the first `MAX_PROBLEMS_SHOWN` kept."""

    invalid: int
    problems: list[SampleProblem]

    def add_problem(self, problem: SampleProblem, strict: bool) -> None:
        """Record a rejected row; in strict mode raise instead."""
        if strict:
            raise DataError(problem)
        self.invalid += 1
        if len(self.problems) < MAX_PROBLEMS_SHOWN:
            self.problems.append(problem)


@dataclass
class LoadResult(_Rejected):
    """Samples a source produced, plus what it rejected."""

    samples: list[Sample]
    source: str
    invalid: int = 0
    problems: list[SampleProblem] = field(default_factory=list)

    @property
    def count(self) -> int:
        """How many samples it has (as `StreamedLoad.count`)."""
        return len(self.samples)


class SampleStream(_Rejected):
    """Samples a source yields one at a time, and what it rejected on the way; read once.

    ``invalid`` and ``problems`` grow as the stream is read, as a `LoadResult`'s would while
    it loads: they are complete once the stream is exhausted. A strict stream raises
    `DataError` at the row at fault, when that row is reached.
    """

    def __init__(self, source: str, samples: Callable[[SampleStream], Iterable[Sample]]) -> None:
        """A stream of `source` (named in problems) whose samples `samples(self)` yields.

        `samples` is given the stream to record its problems in; it is called on the first
        read, so a file is opened only when the stream is read.
        """
        self.source = source
        self.invalid = 0
        self.problems: list[SampleProblem] = []
        self._samples = samples
        self._read = False
        self.held: list[Sample] | None = None
        """The list of a source that loaded its samples whole (`loaded`): already in memory."""

    @classmethod
    def loaded(cls, result: LoadResult) -> SampleStream:
        """The stream of a source that loaded its samples whole (its list, its problems)."""
        stream = cls(result.source, lambda _: result.samples)
        stream.invalid, stream.problems = result.invalid, list(result.problems)
        stream.held = result.samples
        return stream

    def __iter__(self) -> Iterator[Sample]:
        if self._read:
            # A second pass would read nothing (or the file again, problems twice).
            raise RuntimeError(f"the samples of {self.source} were already read (read once)")
        self._read = True
        return iter(self._samples(self))

    def result(self) -> LoadResult:
        """Read the whole stream into a `LoadResult` (what `load_source` gives)."""
        samples = list(self)
        return LoadResult(
            samples=samples, source=self.source, invalid=self.invalid, problems=self.problems
        )


class Source(Protocol):
    """A data source: builds samples from a spec's target and options."""

    def __call__(
        self, target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
    ) -> LoadResult:
        """Load samples; report invalid rows in the result (or raise DataError if strict)."""
        ...


class StreamSource(Protocol):
    """A source that yields its samples: builds a `SampleStream` from a spec's target and options.

    What can be checked before any row (the target, the options, that the file exists) is
    checked when it is called, raising `DataError`; rows are read as the stream is.
    """

    def __call__(
        self, target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
    ) -> SampleStream:
        """Open the samples; invalid rows are recorded in the stream (raised if strict)."""
        ...


class Streaming:
    """A `Source` that yields its samples (`iter_source`); called, it loads them all.

    Registered like any source (``SOURCES.register(name)(streaming(fn))``): `load_source`
    calls it and gets the list of the stream, `iter_source` reads the stream.
    """

    def __init__(self, stream: StreamSource) -> None:
        """Serve `stream` both ways."""
        self.stream = stream
        self.__doc__ = stream.__doc__

    def __call__(
        self, target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
    ) -> LoadResult:
        """Load every sample of the stream (the `Source` form)."""
        return self.stream(target, options, strict=strict, limit=limit).result()


def streaming(stream: StreamSource) -> Streaming:
    """Make a streaming source a `Source` too (see `Streaming`)."""
    return Streaming(stream)


BENCHMARK_FOLDERS = (
    "lmmprobe.data.benchmarks.standard",
    "lmmprobe.data.benchmarks.hemm",
    "lmmprobe.data.benchmarks.reform",
)
"""The packages whose every module defines one benchmark (found, never listed)."""

SOURCES: Registry[Source] = Registry(
    "data source",
    entry_point_group="lmmprobe.sources",
    # A built-in source is a module of lmmprobe.data registering itself (demo, hf_dataset,
    # imagefolder, jsonl, reform). Every benchmark is also a source of its name (``--data
    # mmbench``): each module of the benchmark folders registers one
    # (`lmmprobe.data.benchmarks.BENCHMARKS` discovers the same folders).
    discover=("lmmprobe.data", *BENCHMARK_FOLDERS),
)
"""Data sources by name, one file each (plus plugins from the ``lmmprobe.sources`` entry-point
group); ``lmmprobe list sources`` shows them. The ``synth`` source, in a higher layer (it draws
with the image tools), is lmmprobe's own entry point in that group (see pyproject.toml)."""


def parse_source_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """Split a data spec: a ``.jsonl`` path, or ``name[:target][,key=value...]``.

    The grammar is `lmmprobe.spec`'s; a head that names no registered source and is a
    ``.jsonl`` path or an existing file is read by the ``jsonl`` source (the path shortcut).

    Raises:
        SpecError: The spec does not follow the grammar (a `ValueError`: an option that is not
            ``key=value``, a key given twice...).

    """
    parsed = parse_spec(spec, "data")
    options = dict(parsed.options)
    if parsed.name not in SOURCES.names():
        head = parsed.head
        if head.endswith(".jsonl") or Path(head).is_file():
            return "jsonl", head, options
    return parsed.name, parsed.target, options


def load_source(spec: str, *, strict: bool = False, limit: int | None = None) -> LoadResult:
    """Load samples from a data spec through the source registry.

    Args:
        spec: ``demo``, ``demo,n=500,seed=1``, ``path/to/data.jsonl`` or ``jsonl:PATH``.
        strict: Raise `DataError` on the first invalid row instead of skipping it.
        limit: Stop after this many valid samples.

    Raises:
        RegistryError: Unknown source name.
        DataError: Unreadable source, or an invalid row in strict mode.

    """
    name, target, options = parse_source_spec(spec)
    hidden = spec_secret_values(spec)
    try:
        if name not in SOURCES:
            raise _unknown_source(name)
        return SOURCES.get(name)(target, options, strict=strict, limit=limit)
    except (RegistryError, ValueError) as exc:
        _hide(exc, hidden)
        raise


def iter_source(spec: str, *, strict: bool = False, limit: int | None = None) -> SampleStream:
    """The samples of a data spec, one at a time: `load_source`'s samples and problems, streamed.

    A source registered with `streaming` yields its samples as it reads its rows, holding
    none of the earlier ones; any other source is loaded whole first and its list yielded.
    The stream's ``invalid`` and ``problems`` are `load_source`'s once it is exhausted.

    Args:
        spec: As for `load_source`.
        strict: Raise `DataError` at the first invalid row (when the stream reaches it).
        limit: Stop after this many valid samples.

    Raises:
        RegistryError: Unknown source name.
        DataError: Unreadable source (when called, or for a failure met in the rows, when the
            stream reaches it), or an invalid row in strict mode.

    """
    name, target, options = parse_source_spec(spec)
    hidden = spec_secret_values(spec)
    try:
        if name not in SOURCES:
            raise _unknown_source(name)
        source = SOURCES.get(name)
        if not isinstance(source, Streaming):
            return SampleStream.loaded(source(target, options, strict=strict, limit=limit))
        stream = source.stream(target, options, strict=strict, limit=limit)
    except (RegistryError, ValueError) as exc:
        _hide(exc, hidden)
        raise
    if hidden:
        samples = stream._samples  # the stream's own rows, read with its errors' values hidden
        stream._samples = lambda s: _hidden_rows(samples(s), hidden)
    return stream


def _hide(exc: Exception, hidden: list[str]) -> None:
    """Take out of `exc`'s message the secret values of the data spec it is about.

    A source names its spec's pieces in its messages (``dataset not found: org/ds?token=X``,
    ``unknown data source 'rows.jsonl?api_key=X'``): what `redact_spec` hides in the spec
    (`spec_secret_values`) is hidden there too, as a model spec's secrets are.
    """
    if hidden:
        message = redact_values(str(exc), hidden)
        if message != str(exc):
            exc.args = (message,)
            if isinstance(exc, DataError):
                exc.problem = message


def _hidden_rows(samples: Iterable[Sample], hidden: list[str]) -> Iterator[Sample]:
    """`samples`, a failure met on the way (a strict stream's row) told as `_hide` tells it."""
    try:
        yield from samples
    except (RegistryError, ValueError) as exc:
        _hide(exc, hidden)
        raise


BENCHMARK_TAG = "benchmark"
"""The tag of the `SOURCES` entries that are benchmarks (each registered benchmark is a source)."""


def _folder_hint(name: str) -> str | None:
    """What to write for a ``--data`` naming an existing folder, which no source reads bare.

    A folder is read by the source that says how (``synth:`` for `synth generate`'s output,
    ``imagefolder:`` for class folders, ``hf:`` for a datasets folder): naming the folder alone
    used to be called an unknown source, as if the path were wrong.
    """
    try:
        folder = Path(name)
        if not folder.is_dir():
            return None
        synthetic = (folder / "samples.jsonl").is_file() and (folder / "manifest.json").is_file()
    except (OSError, ValueError):  # a name no file system takes (too long, a NUL)
        return None
    if synthetic:
        return f"{name} is a synthetic dataset folder: read it with --data synth:{name}"
    return (
        f"{name} is a folder: say how to read it: synth:{name} (made by `lmmprobe synth "
        f"generate`), imagefolder:{name} (one folder of images per class), hf:{name} (a "
        f"datasets folder), or name a .jsonl file in it"
    )


def _unknown_source(name: str) -> RegistryError:
    # Dozens of benchmarks are sources too: name the close ones and the plain sources, and
    # leave the full list of benchmarks to `lmmprobe data list`.
    folder = _folder_hint(name)
    if folder is not None:
        return RegistryError(folder)
    benchmarks = set(SOURCES.tagged(BENCHMARK_TAG))
    close = difflib.get_close_matches(name.lower(), SOURCES.names(), n=3, cutoff=0.6)
    plain = ", ".join(n for n in SOURCES.names() if n not in benchmarks)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return RegistryError(
        f"unknown data source {name!r}; {hint}sources: {plain}, or a benchmark by name "
        "(`lmmprobe data list` shows them)"
    )


def no_valid_samples(result: LoadResult) -> str:
    """Say that a load gave no sample because every row was invalid, with the first reasons.

    One line for the count, then one per reason (at most `MAX_PROBLEMS_SHOWN`), as a caller
    that cannot go on shows it.
    """
    shown = result.problems[:MAX_PROBLEMS_SHOWN]
    lines = [
        f"no valid samples in {result.source}: all {result.invalid} row(s) are invalid"
        + (f"; the first {len(shown)}:" if result.invalid > len(shown) else ":")
    ]
    lines += [f"  {p}" for p in shown]
    hint = _other_format_hint(result.source)
    if hint:
        lines.append(hint)
    return "\n".join(lines)


_OTHER_FORMATS = {
    ".csv": "hf", ".tsv": "hf", ".parquet": "hf", ".arrow": "hf", ".json": "hf",
}  # fmt: skip
"""Suffixes of data files the ``hf:`` source reads that the path shortcut reads as JSON Lines."""


def _other_format_hint(source: str) -> str | None:
    """How to read `source` when its name says a format the path shortcut does not read.

    ``--data my.csv`` is read as JSON Lines (any existing file is), so every row of a CSV,
    Parquet or JSON file was "invalid JSON" with no word of the source that reads it.
    """
    suffix = Path(source).suffix.lower()
    if suffix not in _OTHER_FORMATS:
        return None
    more = f" (or reform:{source}, ReForm-Eval's released JSON)" if suffix == ".json" else ""
    return (
        f"{source} was read as JSON Lines (one object per line, the README's format); a "
        f"{suffix[1:].upper()} file is read with --data hf:{source}{more}"
    )


FINGERPRINT_VERSION = 2
"""Version of the `data_fingerprint` / `sample_fingerprint` format, recorded in manifests:
fingerprints of different versions do not compare (2: fields written by pydantic-core)."""

# A sample's fields but its images and metadata, as JSON: their types are fixed by the schema
# (strings, lists of strings, an int), so pydantic-core writes them exactly and fast.
_SAMPLE_SERIALIZER = Sample.__pydantic_serializer__
_WRITTEN_APART = {"images", "metadata"}
# Metadata is free-form (numbers, NaN, bytes, nested values), so it is written by the json
# module: keys sorted, anything JSON lacks as its str().
_metadata_json = json.JSONEncoder(sort_keys=True, default=str).encode


def _canonical(sample: Sample) -> bytes:
    # The sample's fixed-type fields as JSON, its metadata as sorted JSON, then each image's
    # content hash (a file's bytes, not its path); the lengths in front keep every part in its
    # place. This runs for every sample of every run, so the fields go through pydantic-core.
    body = _SAMPLE_SERIALIZER.to_json(sample, exclude=_WRITTEN_APART)
    meta = _metadata_json(sample.metadata).encode()
    hashes = "".join([im.content_hash() for im in sample.images]).encode()
    return b"%d:%d:%d:%b%b%b" % (len(sample.images), len(body), len(meta), body, meta, hashes)


def sample_fingerprint(sample: Sample) -> str:
    """Hash of everything in a sample that a model or the scorer sees."""
    return hashlib.sha256(_canonical(sample)).hexdigest()


def _places(sample: Sample) -> bytes:
    """Where a sample's image files are, as a store records them (absolute paths), framed.

    The fingerprint hashes a file's content, not its path: the same pictures elsewhere give
    the same fingerprint, but a run records where its files were. An identical earlier run's
    rows are reused only where both match (`lmmprobe.store.reuse`).
    """
    # A store records `os.path.abspath(path)`: an absolute path as it is, a relative one
    # joined to the working folder, which is hashed with it (the same two give the same).
    paths = [
        (p if os.path.isabs(p) else f"{os.getcwd()}\0{p}") if (p := im.path) is not None else ""
        for im in sample.images
    ]
    blob = "\0\0".join(paths).encode("utf-8", "surrogateescape")
    return b"%d:%b" % (len(blob), blob)


def image_places(samples: Iterable[Sample]) -> str:
    """Order-sensitive hash of where every sample's image files are (`_places`)."""
    h = hashlib.sha256()
    for s in samples:
        h.update(_places(s))
    return h.hexdigest()


def _framed(sample: Sample) -> bytes:
    """What `data_fingerprint` hashes of one sample, in its place in the list."""
    blob = _canonical(sample)
    return b"%d:%b" % (len(blob), blob)


def data_fingerprint(samples: Iterable[Sample]) -> str:
    """Order-sensitive hash of a sample list: same data, same fingerprint."""
    h = hashlib.sha256()
    for s in samples:
        h.update(_framed(s))
    return h.hexdigest()


def require_unique_ids(samples: Sequence[Sample]) -> None:
    """Raise DataError when two samples share an id (results are keyed by it)."""
    seen: set[str] = set()
    for s in samples:
        if s.id in seen:
            raise DataError(f"duplicate sample id {s.id!r}")
        seen.add(s.id)


SampleKind = tuple[str | None, bool]
"""A sample's benchmark name (None: none) and whether it is single-choice (`sample_kind`)."""


def sample_kind(sample: Sample) -> SampleKind:
    """What a sample's judging protocol is decided by: its benchmark and whether it is a choice."""
    return (sample.benchmark.name if sample.benchmark is not None else None, sample.is_choice)


def _drained(reversed_samples: list[Sample]) -> Iterator[Sample]:
    """The samples of a reversed list, in their order, each dropped from it as it is given."""
    while reversed_samples:
        yield reversed_samples.pop()


def _chunked(samples: Iterable[Sample], size: int) -> Iterator[list[Sample]]:
    """`samples` in lists of `size` (the last one shorter), holding one list at a time."""
    chunk: list[Sample] = []
    for sample in samples:
        chunk.append(sample)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@dataclass
class StreamedLoad:
    """A source's samples, too many for one chunk: read once to check them, then chunk by chunk.

    `load_in_chunks` reads the stream once, holding a chunk at a time: it counts the samples,
    records the rejected rows (`invalid`, `problems`: as `load_source` would) and takes the
    data's fingerprint and each chunk's. It keeps each chunk it read in a `spill` (an
    anonymous temporary file), and `chunks` gives the chunks from there: the samples a run
    asks ARE those of the first read, the ones its manifest fingerprinted, whatever happens
    to the source meanwhile, and nothing is parsed, validated or checked twice.

    Without a spill (a read remembered in the store, `lmmprobe.data.remembered_loads`; a
    spill that could not be written; a load closed or copied) `chunks` reads the source
    again, a chunk at a time, and refuses a chunk whose samples are not those of the first
    read (the file changed meanwhile), so that what is asked is still what was fingerprinted.

    Close it (`close`, or ``with``) when its samples are no longer wanted: the spill goes, and
    a later `chunks` reads the source again.
    """

    spec: str
    strict: bool
    limit: int | None
    source: str
    size: int
    """Samples a chunk holds (the last one fewer)."""
    count: int
    fingerprint: str
    """`data_fingerprint` of every sample, in order."""
    chunk_fingerprints: list[str]
    invalid: int = 0
    problems: list[SampleProblem] = field(default_factory=list)
    kinds: dict[SampleKind, None] = field(default_factory=dict)
    """Each `sample_kind` among the samples, in the order first met: what a step that decides
    something by kind alone (judging: a sample's protocol) checks before reading them again."""
    videos: int = 0
    """How many samples have a video: the runner checks its models take video or images."""
    places: str = ""
    """`image_places` of every sample, in order."""
    spill: ChunkSpill[Sample] | None = field(default=None, compare=False, repr=False)
    """The first read's chunks, every one of them (`load_in_chunks`); None: `chunks` reads
    the source again. Not a figure of the load: two loads compare equal without it."""

    def chunks(self) -> Iterator[list[Sample]]:
        """The samples again, `size` at a time, each chunk checked against the first read.

        From the spill where there is one (the first read's own chunks, checked all the same:
        what is asked is what was fingerprinted), else read from the source again. A spill
        that fails to give a chunk (a read error, closed meanwhile) is dropped with a debug
        line, and the source is read from that chunk on. Each call starts at the first chunk
        (a run calls it once per model, then for its judges).

        Raises:
            DataError: The source, read again, no longer gives the samples it gave (one line
                naming it).

        """
        given = 0
        spill = self.spill
        while spill is not None and given < len(self.chunk_fingerprints):
            chunk = self._kept(spill, given)
            if chunk is None:  # the spill failed (and is dropped): the source from here on
                break
            yield chunk
            given += 1
            del chunk  # not held while the next chunk is read
        if given < len(self.chunk_fingerprints):
            yield from self._read_again(skip=given)

    def _kept(self, spill: ChunkSpill[Sample], index: int) -> list[Sample] | None:
        """Chunk `index` from the spill, checked; None (the spill dropped) if it cannot be."""
        try:
            chunk = spill.get(index)
        except SPILL_ERRORS as exc:
            self._drop(spill, f"could not be read back ({type(exc).__name__}: {exc})")
            return None
        if _chunk_hash(chunk) != self.chunk_fingerprints[index]:
            self._drop(spill, f"gave a chunk {index + 1} unlike the one first read")
            return None
        return chunk

    def _read_again(self, skip: int) -> Iterator[list[Sample]]:
        """The source read again, chunk by chunk, each checked; the first `skip` not given."""
        start = 0
        done = 0
        stream = iter_source(self.spec, strict=self.strict, limit=self.limit)
        # Counted by hand: `enumerate` keeps the last (index, chunk) pair it gave for reuse,
        # which held the previous chunk while the next one was read.
        for chunk in _chunked(stream, self.size):
            if done >= len(self.chunk_fingerprints) or (
                _chunk_hash(chunk) != self.chunk_fingerprints[done]
            ):
                raise self._changed(start, len(chunk))
            if done >= skip:
                yield chunk
            start += len(chunk)
            done += 1
            del chunk  # not held while the next chunk is read
        if done != len(self.chunk_fingerprints):
            raise self._changed(start, self.count - start)

    def _drop(self, spill: ChunkSpill[Sample], why: str) -> None:
        log.debug("the kept chunks of %s %s: reading the source again", self.source, why)
        spill.close()
        if self.spill is spill:
            self.spill = None

    def close(self) -> None:
        """Let the spill go (its file closed and removed); `chunks` then reads the source."""
        spill, self.spill = self.spill, None
        if spill is not None:
            spill.close()

    def __enter__(self) -> StreamedLoad:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        # An open file does not travel (pickled, copied): a copy reads the source again.
        return {**self.__dict__, "spill": None}

    def _changed(self, start: int, size: int) -> DataError:
        return DataError(
            f"{self.source} changed while the run read it: samples {start + 1:,}-"
            f"{start + max(size, 1):,} are not those it read first (of {self.count:,}); "
            "run it again once the data stays as it is"
        )


def close_load(load: object) -> None:
    """Close `load` where it is a `StreamedLoad` (its spill goes); anything else holds nothing."""
    if isinstance(load, StreamedLoad):
        load.close()


def _chunk_hash(chunk: list[Sample]) -> str:
    """The hash `load_in_chunks` takes of a chunk (its samples framed, in order)."""
    h = hashlib.sha256()
    for framed in map(_framed, chunk):
        h.update(framed)
    return h.hexdigest()


class ChunkedLoad(Protocol):
    """Samples of more than one chunk, read again a chunk at a time when needed.

    A run's data (`StreamedLoad`) or a stored run's recorded samples (what ``lmmprobe judge``
    reads): counted, their rejected rows and kinds noted on a first read, never held whole.
    """

    source: str
    count: int
    invalid: int
    problems: list[SampleProblem]
    kinds: dict[SampleKind, None]

    def chunks(self) -> Iterator[list[Sample]]:
        """The samples, a chunk at a time, in their order."""
        ...


def chunks_of(load: LoadResult | ChunkedLoad) -> Iterator[list[Sample]]:
    """A load's samples by chunk: a held list as one chunk, a `ChunkedLoad` read again."""
    if isinstance(load, LoadResult):
        yield load.samples
    else:
        yield from load.chunks()


def load_in_chunks(
    spec: str, *, size: int, strict: bool = False, limit: int | None = None
) -> LoadResult | StreamedLoad:
    """A data spec's samples: whole when they fit in one chunk, else as a `StreamedLoad`.

    Up to `size` samples come back as `load_source` gives them (the same samples and
    problems: one read of the same stream). More than that, from a source that yields its
    samples (`streaming`), are read once, a chunk held at a time, into a `StreamedLoad`, each
    chunk kept in its spill as it is read (`ChunkSpill`: where that fails, the spill is
    dropped with a debug line, and the load reads the source again when asked); a source
    that loaded its list whole anyway, or data with multi-round dialogues (a round needs the
    earlier rounds' samples), comes back whole.

    Raises:
        RegistryError: Unknown source name.
        DataError: Unreadable source, or an invalid row in strict mode.

    """
    stream = iter_source(spec, strict=strict, limit=limit)
    if stream.held is not None:
        return LoadResult(stream.held, stream.source, stream.invalid, stream.problems)
    rows = iter(stream)
    first = list(itertools.islice(rows, size + 1))
    if len(first) <= size:  # the stream is exhausted: its problems are complete
        return LoadResult(first, stream.source, stream.invalid, stream.problems)
    spill = _new_spill(stream.source)
    try:
        read = _first_read(first, rows, size, spill)
    except BaseException:
        if spill is not None:
            spill.close()
        raise
    if read.dialogues:
        if read.spill is not None:
            read.spill.close()
        return iter_source(spec, strict=strict, limit=limit).result()
    return StreamedLoad(
        spec=spec, strict=strict, limit=limit, source=stream.source, size=size,
        count=read.count, fingerprint=read.whole, chunk_fingerprints=read.fingerprints,
        invalid=stream.invalid, problems=stream.problems, kinds=read.kinds,
        videos=read.videos, places=read.places, spill=read.spill,
    )  # fmt: skip


def _new_spill(source: str) -> ChunkSpill[Sample] | None:
    """A spill for the first read of `source`'s chunks, or None where none can be made."""
    try:
        return ChunkSpill()
    except OSError as exc:
        log.debug("no spill for the chunks of %s (%s): they will be read again", source, exc)
        return None


@dataclass
class _FirstRead:
    """What `load_in_chunks` takes from its first read of a stream of more than one chunk."""

    count: int = 0
    whole: str = ""
    places: str = ""
    fingerprints: list[str] = field(default_factory=list)
    kinds: dict[SampleKind, None] = field(default_factory=dict)
    videos: int = 0
    dialogues: bool = False
    spill: ChunkSpill[Sample] | None = None
    """Every chunk read, kept; None where there was none or a chunk could not be written
    (then closed)."""


def _first_read(
    first: list[Sample], rows: Iterator[Sample], size: int, spill: ChunkSpill[Sample] | None
) -> _FirstRead:
    """Read `first` then `rows`, hashing each sample, each chunk kept in `spill` as it ends."""
    whole = hashlib.sha256()
    places = hashlib.sha256()
    read = _FirstRead(spill=spill)
    # The first read's samples are let go as they are read again, not kept through the rest.
    first.reverse()
    again = itertools.chain(_drained(first), rows)
    del first
    # Hashed a sample at a time; only the chunk being read is held (for the spill).
    h = hashlib.sha256()
    chunk: list[Sample] = []
    for sample in again:
        framed = _framed(sample)
        whole.update(framed)
        h.update(framed)
        places.update(_places(sample))
        read.dialogues = read.dialogues or "dialogue_id" in sample.metadata
        read.kinds[sample_kind(sample)] = None
        read.videos += sample.video is not None
        read.count += 1
        if read.spill is not None:
            chunk.append(sample)
        if read.count % size == 0:
            read.fingerprints.append(h.hexdigest())
            h = hashlib.sha256()
            _spill_chunk(read, chunk)
            chunk = []
    if read.count % size:
        read.fingerprints.append(h.hexdigest())
        _spill_chunk(read, chunk)
    read.whole, read.places = whole.hexdigest(), places.hexdigest()
    return read


def _spill_chunk(read: _FirstRead, chunk: list[Sample]) -> None:
    """Keep `chunk` in `read`'s spill; where it cannot be written, drop the spill."""
    if read.spill is None:
        return
    try:
        read.spill.add(chunk)
    except SPILL_ERRORS as exc:
        log.debug("could not keep a chunk (%s: %s): the chunks will be read again",
                  type(exc).__name__, exc)  # fmt: skip
        read.spill.close()
        read.spill = None
