"""Loading a benchmark by name: where its copy is, reading its rows, turning them into samples.

``--data NAME[,split=S,path=P,limit=N,config=C]`` (``NAME:P`` is short for ``path=P``) finds the
data in this order:

1. ``path=FOLDER``;
2. ``$LMMPROBE_DATA_DIR/NAME``, when that folder exists;
3. the Hugging Face Hub at the definition's pinned revision: first the local hub cache (what an
   earlier download left, read without the network), then, when the Hub is reachable, a
   download: of the files the definition's ``include`` patterns name (the fetch command's
   files, into the hub cache, read as a local copy), or, without patterns,
   ``datasets.load_dataset`` (which caches what it downloads);
4. otherwise a `DataError` giving the exact command that fetches a copy.

Offline is known without waiting: ``HF_HUB_OFFLINE`` (or ``HF_DATASETS_OFFLINE``) set, or the
Hub's host not answering a connection within `lmmprobe._hub.PROBE_TIMEOUT` seconds. Nothing
is downloaded when lmmprobe is imported.

A local folder is read with `datasets` as the Hub would serve it: a hub snapshot (parquet,
json or arrow files under ``data/`` or the root, the split chosen by file name, the config by
the card's ``configs:``), or a ``save_to_disk`` folder. ``Image`` columns are not decoded: a row
holds ``{"bytes", "path"}``, which the definition's reader turns into an `ImageRef`.
Definitions with ``layout="files"`` read the original release files themselves, from a folder:
the local copy, or, for one on the Hub, the hub cache's snapshot, downloaded when the Hub is
reachable (``huggingface_hub.snapshot_download`` of the definition's ``include`` patterns, the
files its fetch command takes).

Each row goes through the definition's reader; a bad row is a problem
``FOLDER[split]:N: field: reason`` (strict mode raises). Every sample then carries its
benchmark as typed fields: `Sample.benchmark` (name, split, official metric) and
`Sample.prompt` (the definition's, or the row's own template worded as the definition's
prompt says); ids are prefixed ``NAME/``. A suite (``members``) loads each member and
concatenates them; a member that cannot be loaded is a problem naming the command that
fetches it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import re
import shlex
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lmmprobe._hub import hub_offline as _probe_hub
from lmmprobe.data.base import (
    MAX_PROBLEMS_SHOWN,
    DataError,
    LoadResult,
    SampleProblem,
    SampleStream,
)
from lmmprobe.data.benchmarks._fetch import DATA_DIR_ENV as DATA_DIR_ENV  # re-exported
from lmmprobe.data.benchmarks.base import BENCHMARKS, Benchmark, RowContext
from lmmprobe.data.hf_dataset import (
    BUILDERS,
    card_configs,
    check_data_files,
    import_datasets,
    open_dataset,
    quiet_progress,
)
from lmmprobe.data.rows import FirstSeen, RowError, release_rows
from lmmprobe.schema import Sample
from lmmprobe.schema.benchmark import BenchmarkTag
from lmmprobe.schema.text import ascii_integer, shown_value

OPTIONS = frozenset({"split", "path", "limit", "config"})
_BATCH = 256


# --- where the copy is ---------------------------------------------------------------------


def data_dir() -> Path | None:
    """``$LMMPROBE_DATA_DIR``, or None when it is not set."""
    value = os.environ.get(DATA_DIR_ENV, "").strip()
    return Path(value).expanduser() if value else None


def local_copy(b: Benchmark) -> Path | None:
    """Where ``$LMMPROBE_DATA_DIR/NAME`` is (whether or not it exists); None when unset."""
    root = data_dir()
    return None if root is None else root / (b.copy or b.name)


def has_local_copy(b: Benchmark) -> bool:
    """Whether ``$LMMPROBE_DATA_DIR/NAME`` exists (for a suite: every runnable member's copy).

    A member that needs what lmmprobe lacks (``needs``) can never run, so no copy of it is
    asked for; a suite none of whose members can run has no copy to be present.
    """
    if b.members:
        # A member this lmmprobe does not register cannot be loaded from any copy: no copy of
        # it is asked for (loading the set says it is missing).
        registered = (BENCHMARKS.get(name) for name in b.members if name in BENCHMARKS)
        runnable = [m for m in registered if m.needs is None]
        return bool(runnable) and all(has_local_copy(m) for m in runnable)
    where = local_copy(b)
    return where is not None and where.is_dir()


def _hub_constants() -> Any:
    # huggingface_hub comes with the datasets extra; without it there is no Hub to ask.
    try:
        return importlib.import_module("huggingface_hub.constants")
    except ModuleNotFoundError:
        return None


def hub_offline() -> str | None:
    """Why the Hub cannot be reached right now, or None when it can (`lmmprobe._hub`)."""
    return _probe_hub(("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def hub_cache_snapshot(b: Benchmark) -> Path | None:
    """The hub cache's snapshot folder of the benchmark at its revision, if one was downloaded."""
    if b.hub_id is None:
        return None
    constants = _hub_constants()
    if constants is None:
        return None
    cache = os.environ.get("HF_HUB_CACHE") or (
        str(Path(os.environ["HF_HOME"]) / "hub") if os.environ.get("HF_HOME") else None
    )
    repo = Path(cache or constants.HF_HUB_CACHE) / f"datasets--{b.hub_id.replace('/', '--')}"
    revision = b.revision
    if revision is None:
        ref = repo / "refs" / "main"
        if not ref.is_file():
            return None
        revision = ref.read_text().strip()
    snapshot = repo / "snapshots" / revision
    return snapshot if snapshot.is_dir() else None


DATA_DIR_EXPORT = f'export {DATA_DIR_ENV}="$HOME/lmmprobe-data"'
"""The line fetch hints print first while ``$LMMPROBE_DATA_DIR`` is not set (it has no default)."""


def _fetch_into(b: Benchmark, path: str) -> str | None:
    """`b`'s fetch command writing its copy to `path`, or None where it names no one folder.

    The commands write to ``"$LMMPROBE_DATA_DIR/NAME"`` (or ``"$LMMPROBE_DATA_DIR"/NAME/...``):
    that folder becomes `path`. A command that uses the variable otherwise (a zip unpacked
    into the data folder) cannot be pointed elsewhere.
    """
    target = shlex.quote(str(Path(path).expanduser()))
    copy = re.escape(b.copy or b.name)
    var = re.escape(f"${DATA_DIR_ENV}")
    fetch = re.sub(rf'(?:"{var}/{copy}"|"{var}"/{copy})(?![\w.-])', lambda _: target, b.fetch)
    return None if f"${DATA_DIR_ENV}" in fetch or fetch == b.fetch else fetch


def fetch_hint(b: Benchmark, path: str | None = None) -> str:
    """How to get a copy: the definition's fetch command, and where the copy is looked for.

    With `path` (a ``path=FOLDER`` that does not exist), the command writes the copy there,
    where the data spec will look: before, it wrote to ``$LMMPROBE_DATA_DIR/NAME`` and the
    same spec then still found nothing (re-test 20b #8).
    """
    if path is not None:
        fetch = _fetch_into(b, path)
        if fetch is not None:
            return f"Fetch it into {path} with:\n  {fetch}"
        return (
            f"{fetch_hint(b)} (the command writes the copy to ${DATA_DIR_ENV}/"
            f"{b.copy or b.name}, not to {path}: pass path= that folder once it is fetched)"
        )
    if data_dir() is None:
        # The export comes first: pasted as printed, a command naming "$LMMPROBE_DATA_DIR"/NAME
        # with the variable unset would write to /NAME at the filesystem root.
        return (
            f"Fetch it with ({DATA_DIR_ENV} is not set; any folder will do, copies are looked "
            f"for in ${DATA_DIR_ENV}/NAME):\n"
            f"  {DATA_DIR_EXPORT}\n  {b.fetch}\nor pass path=FOLDER"
        )
    return f"Fetch it with:\n  {b.fetch}\nor pass path=FOLDER"


@dataclass(frozen=True)
class _Location:
    """Where the rows come from: a local folder, or the Hub through `datasets`."""

    label: str  # for messages: the folder, or "hub:ID@REV"
    folder: Path | None  # None: load_dataset from the Hub
    cached: bool = False  # the folder is the hub cache's snapshot (it may hold only some files)


def locate(b: Benchmark, path: str | None) -> _Location:
    """Where to read `b` from, following the order in the module docstring.

    Raises:
        DataError: ``path=`` does not exist, or no copy is present and the Hub cannot be
            reached (with the fetch command).

    """
    if path is not None:
        folder = Path(path).expanduser()
        if not folder.exists():
            raise DataError(
                f"benchmark {b.name}: path={path} does not exist.\n{fetch_hint(b, path)}"
            )
        return _Location(str(folder), folder)
    local = local_copy(b)
    if local is not None and local.is_dir():
        return _Location(str(local), local)
    # A definition sharing another's copy (mathvision-direct, the -cot names) is read from
    # that copy's folder: named as such, not by its own name.
    where = f"${DATA_DIR_ENV}/{b.copy or b.name}" + (
        f" ({local})" if local is not None else " (unset)"
    )
    if b.hub_id is None:
        raise DataError(
            f"benchmark {b.name}: no local copy at {where}, and its data is not on the "
            f"Hugging Face Hub.\n{fetch_hint(b)}"
        )
    snapshot = hub_cache_snapshot(b)
    if snapshot is not None:
        return _Location(str(snapshot), snapshot, cached=True)
    why = hub_offline()
    if why is not None:
        raise DataError(
            f"benchmark {b.name}: no local copy at {where} and the Hugging Face Hub is not "
            f"reachable ({why}).\n{fetch_hint(b)}"
        )
    if b.layout == "files" or b.include:
        # Release files are read from a folder, and a definition naming the files its copy
        # needs gets just those: download what the fetch command takes, then read that copy.
        folder = download_snapshot(b)
        return _Location(str(folder), folder, cached=True)
    rev = f"@{b.revision}" if b.revision else ""
    return _Location(f"hub:{b.hub_id}{rev}", None)


def fetch_patterns(b: Benchmark) -> list[str]:
    """The files a download takes: the definition's ``include`` patterns (empty: every file).

    They are the fetch command's ``--include`` patterns too (both are made from the same field),
    so a ``layout="files"`` benchmark downloaded from the Hub takes what its fetch command
    takes, no more: lmms-lab/GQA, for one, also holds the training images, tens of gigabytes.
    """
    return list(b.include)


def download_snapshot(b: Benchmark) -> Path:
    """Download `b`'s hub snapshot (at its revision; the fetch command's files) into the cache.

    Raises:
        DataError: ``huggingface_hub`` is missing, or the download fails (with the fetch
            command).

    """
    assert b.hub_id is not None
    try:
        hub = importlib.import_module("huggingface_hub")
    except ModuleNotFoundError as exc:
        raise DataError(
            f"benchmark {b.name}: downloading it needs huggingface_hub: "
            f"pip install 'lmmprobe[datasets]'.\n{fetch_hint(b)}"
        ) from exc
    try:
        folder = hub.snapshot_download(
            b.hub_id,
            repo_type="dataset",
            revision=b.revision,
            allow_patterns=fetch_patterns(b) or None,
        )
    except Exception as exc:  # huggingface_hub raises many types; all mean "cannot download"
        raise DataError(
            f"benchmark {b.name}: downloading {b.hub_id} from the Hugging Face Hub failed: "
            f"{type(exc).__name__}: {exc}\n{fetch_hint(b)}"
        ) from exc
    return Path(folder)


# --- reading rows --------------------------------------------------------------------------


def _has_card_configs(folder: Path) -> bool:
    # A hub snapshot's README.md front matter names its configs and their data files.
    card = folder / "README.md"
    if not card.is_file():
        return False
    head = card.read_text(encoding="utf-8", errors="replace").split("\n---", 1)[0]
    return head.startswith("---") and "\nconfigs:" in head


def _open_card_config(folder: Path, split: str, config: str) -> Any:
    """The split's files as the card's entry for `config` names them, or None if absent.

    The fetch command takes one config's files and the card naming every config; `datasets`
    refuses such a copy (the other configs' files are missing), so the card is read here.

    Raises:
        DataError: The card cannot be read or its configs are malformed (`card_configs`).

    """
    if not _has_card_configs(folder):
        return None
    datasets = import_datasets()
    patterns: list[str] = []
    for entry in card_configs(folder):  # checked: data_files has the shapes datasets reads
        if entry.get("config_name") == config:
            for item in entry.get("data_files") or []:
                if isinstance(item, dict) and item.get("split") == split:
                    path = item["path"]
                    patterns += [path] if isinstance(path, str) else path
    files = sorted({f for p in patterns for f in folder.glob(p) if f.is_file()})
    builder = BUILDERS.get(files[0].suffix.lower()) if files else None
    if builder is None:
        return None
    try:
        check_data_files(files)  # refused: the caller reports the failure it had already
        with quiet_progress(datasets):
            return datasets.load_dataset(
                builder, data_files={split: [str(f) for f in files]}, split=split
            )
    except Exception:  # datasets raises many types: the caller reports the original failure
        return None


def _open_local(b: Benchmark, folder: Path, split: str, config: str | None) -> Any:
    if folder.is_dir() and config is not None and not _has_card_configs(folder):
        # A copy without its card: a config is the sub-folder the Hub keeps it in, if any.
        if (folder / config).is_dir():
            folder = folder / config
        config = None
    try:
        ds, _ = open_dataset(folder, {"split": split, **({"config": config} if config else {})})
    except DataError as exc:  # a partial or foreign copy: say how to get the whole one
        ds = _open_card_config(folder, split, config) if config is not None else None
        if ds is not None:
            return ds
        raise DataError(f"benchmark {b.name}: {exc}\n{fetch_hint(b)}") from exc
    return ds


def _open_hub(b: Benchmark, split: str, config: str | None) -> Any:
    datasets = import_datasets()
    try:
        with quiet_progress(datasets):
            return datasets.load_dataset(b.hub_id, name=config, split=split, revision=b.revision)
    except Exception as exc:  # datasets raises many types; all mean "cannot load it"
        raise DataError(
            f"benchmark {b.name}: loading {b.hub_id} from the Hugging Face Hub failed: "
            f"{type(exc).__name__}: {exc}\n{fetch_hint(b)}"
        ) from exc


def _file_rows(
    b: Benchmark, where: _Location, split: str
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    assert b.read_files is not None and where.folder is not None
    folder, given, retry = where.folder, 0, where.cached
    while True:
        try:
            # Closed when the load stops early, so a reader's open files and Arrow readers go
            # then (`release_rows`).
            items = b.read_files(folder, split)
            with release_rows(items):
                for item in items:
                    given += 1
                    yield item
            return
        except (OSError, DataError) as exc:  # a partial copy: a release file is missing
            # The hub cache may hold only what an earlier download took (another config):
            # fetch the rest once when the Hub answers, unless rows were already given.
            if retry and given == 0 and hub_offline() is None:
                folder, retry = download_snapshot(b), False
                continue
            if isinstance(exc, DataError):
                raise
            raise DataError(
                f"benchmark {b.name}: cannot read {folder}: {exc}\n{fetch_hint(b)}"
            ) from exc


def _arrow_rows(ds: Any) -> Generator[dict[str, Any], None, None]:
    # Arrow batches hand over an Image column's stored {"bytes", "path"} without decoding it.
    # Closed when the load stops early: `datasets`' batch generator, and the Arrow reader it
    # holds, go then, not in the interpreter's teardown (`release_rows`).
    with contextlib.closing(ds.with_format("arrow").iter(batch_size=_BATCH)) as batches:
        for batch in batches:
            yield from batch.to_pylist()


def _rows(
    b: Benchmark, where: _Location, split: str, config: str | None
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if b.layout == "files":
        yield from _file_rows(b, where, split)
        return
    label = f"{where.label}[{split}]"
    if where.folder is None:
        ds = _open_hub(b, split, config)
    elif where.cached:
        try:
            ds = _open_local(b, where.folder, split, config)
        except DataError:
            # An earlier download fetched other files (another config): ask the Hub when it
            # answers, else say what is missing.
            if hub_offline() is not None:
                raise
            ds = _open_hub(b, split, config)
            label = f"hub:{b.hub_id}[{split}]"
    else:
        ds = _open_local(b, where.folder, split, config)
    with contextlib.closing(_arrow_rows(ds)) as rows:
        for index, row in enumerate(rows):
            yield f"{label}:{index}", row


# --- rows to samples -----------------------------------------------------------------------


def check_template(b: Benchmark) -> None:
    """Fill the definition's template once, so a wrong placeholder fails before any row.

    Raises:
        DataError: The template or an option/context format names an unknown placeholder.

    """
    p = b.prompt
    try:
        p.option_format.format(mark="A", text="x")
        p.context_format.format(context="x")
        p.template.format(question="q", options="o", context="c")
    except (KeyError, IndexError, ValueError) as exc:
        raise DataError(
            f"benchmark {b.name}: its prompt template has an unknown placeholder {exc} "
            "(template: {question} {options} {context}; option_format: {mark} {text}; "
            "context_format: {context})"
        ) from exc


def finish_sample(b: Benchmark, sample: Sample, split: str) -> Sample:
    """`sample` as a load of `b` gives it: its benchmark tag, its prompt, its ``NAME/`` id.

    A row reader's sample is finished so when its copy is loaded; a file's own items
    (`lmmprobe.predictions.file_items`) are finished the same way.
    """
    prompt = sample.prompt
    if prompt is None:
        prompt = b.prompt
    elif not prompt.source:
        # A row's own template (MMMU's, MathVista's query; given as metadata.prompt_template)
        # is worded as the definition's prompt says, and cited as it is.
        prompt = dataclasses.replace(b.prompt, template=prompt.template)
    update: dict[str, Any] = {
        "benchmark": BenchmarkTag(name=b.name, split=split, metric=b.metric),
        "prompt": prompt,
    }
    prefix = f"{b.name}/"
    if not sample.id.startswith(prefix):
        update["id"] = prefix + sample.id
    return sample.model_copy(update=update)


def _split_where(where: str) -> tuple[str, int | None]:
    head, sep, tail = where.rpartition(":")
    line = ascii_integer(tail, signed=False) if sep else None  # "²" passes isdigit(), not int()
    if line is not None:
        return head, line
    return where, None


def _read(b: Benchmark, ctx: RowContext, row: Mapping[str, Any]) -> list[Sample]:
    if not isinstance(row, Mapping):
        # A release file's entry that is not an object (a string in a list of questions): named
        # here for every definition, not as the reader's AttributeError on `.get`.
        raise RowError(
            None,
            f"expected an object (one question's fields), got {type(row).__name__} {row!r:.60}",
        )
    try:
        got = b.to_sample(row, ctx)
    except KeyError as exc:
        column = exc.args[0] if exc.args else None
        raise RowError(
            str(column), f"no such column (the row has: {', '.join(map(str, row))})"
        ) from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err.get("loc", ())) or None
        raise RowError(loc, str(err.get("msg", "invalid")).removeprefix("Value error, ")) from exc
    except DataError:
        raise  # not this row's fault: the benchmark cannot be read here (a missing extra)
    except (TypeError, ValueError, AttributeError, IndexError) as exc:
        # A value of a type the reader did not expect (a null, a number for a text): this row
        # is reported, the others still load; --strict stops here.
        raise RowError(
            None, f"the {b.name} reader cannot read this row: {type(exc).__name__}: {exc}"
        ) from exc
    if got is None:
        return []
    return got if isinstance(got, list) else [got]


def load_rows(
    b: Benchmark,
    rows: Iterator[tuple[str, Mapping[str, Any]]],
    *,
    split: str,
    root: Path | None,
    source: str,
    strict: bool,
    limit: int | None,
) -> LoadResult:
    """Turn `(where, row)` pairs into samples through the definition's reader.

    The list of `stream_benchmark_rows`, with its problems.
    """
    return stream_benchmark_rows(
        b, rows, split=split, root=root, source=source, strict=strict, limit=limit
    ).result()


def stream_benchmark_rows(
    b: Benchmark,
    rows: Iterator[tuple[str, Mapping[str, Any]]],
    *,
    split: str,
    root: Path | None,
    source: str,
    strict: bool,
    limit: int | None,
) -> SampleStream:
    """Turn `(where, row)` pairs into samples through the definition's reader, one at a time.

    Args:
        b: The definition.
        rows: ``(where, row)``; ``where`` is ``PATH[split]:N``. A generator is closed when
            the stream stops, early or not (`release_rows`).
        split: The split read.
        root: The local copy's folder (None for rows from the Hub).
        source: Names the data in the result.
        strict: Raise `DataError` on the first bad row.
        limit: Stop after this many samples.

    """

    def samples(report: SampleStream) -> Iterator[Sample]:
        given = 0
        with FirstSeen() as first, release_rows(rows):
            for index, (where, row) in enumerate(rows):
                if limit is not None and given >= limit:
                    break
                ctx = RowContext(benchmark=b, split=split, root=root, where=where, index=index)
                file, line = _split_where(where)
                try:
                    got = _read(b, ctx, row)
                except RowError as exc:
                    report.add_problem(SampleProblem(file, line, exc.field, exc.reason), strict)
                    continue
                for sample in got:
                    done = finish_sample(b, sample, split)
                    seen = first.first(done.id, where)
                    if seen is not None:
                        reason = f"duplicate id {done.id!r} (first at {seen})"
                        report.add_problem(SampleProblem(file, line, "id", reason), strict)
                        continue
                    given += 1
                    yield done
                    if limit is not None and given >= limit:
                        break

    return SampleStream(source, samples)


# --- the source ----------------------------------------------------------------------------


def _options(b: Benchmark, target: str | None, options: dict[str, str]) -> dict[str, str]:
    unknown = sorted(set(options) - OPTIONS)
    if unknown:
        raise DataError(
            f"benchmark {b.name}: no option(s) {', '.join(unknown)}; known: {', '.join(sorted(OPTIONS))}"
        )
    opts = dict(options)
    if target:
        if "path" in opts:
            raise DataError(f"benchmark {b.name}: give the folder once ({b.name}:PATH or path=)")
        opts["path"] = target
    return opts


def _limit(b: Benchmark, opts: dict[str, str], limit: int | None) -> int | None:
    if "limit" not in opts:
        return limit
    text = opts["limit"]
    number = ascii_integer(text, signed=False)  # "²" passes isdigit(), not int()
    if number is None or number < 1:
        raise DataError(f"benchmark {b.name}: limit={shown_value(text)} is not a positive integer")
    return number if limit is None else min(number, limit)


def _split(b: Benchmark, opts: dict[str, str]) -> str:
    split = opts.get("split") or b.split
    if b.splits and split not in b.splits:
        raise DataError(
            f"benchmark {b.name}: no split {split!r}; its splits: {', '.join(b.splits)}"
        )
    return split


def _stream_suite(
    b: Benchmark, opts: dict[str, str], *, strict: bool, limit: int | None
) -> SampleStream:
    """A suite's members one after another, each loaded whole, then given.

    A member that fails half-way is a problem and gives none of its samples, as when the suite
    was loaded whole; one member is held at a time, not the suite.
    """
    # A suite's path= is a folder holding one copy per member (FOLDER/MEMBER); limit= applies
    # to each member, the call's `limit` to the whole suite.
    if "split" in opts or "config" in opts:
        raise DataError(f"benchmark {b.name} is a suite: split= and config= apply to its members")

    def samples(result: SampleStream) -> Iterator[Sample]:
        missing = given = 0
        for name in b.members:
            room = None if limit is None else limit - given
            if room is not None and room <= 0:
                break
            if name not in BENCHMARKS:
                # A set may name a benchmark this lmmprobe lacks (a leaderboard's column not
                # yet defined here): that member is missing, said as such, never skipped quietly.
                missing += 1
                problem = SampleProblem(
                    b.name, None, name, "not a benchmark this lmmprobe defines: not loaded"
                )
                result.add_problem(problem, strict)
                continue
            member = BENCHMARKS.get(name)
            member_opts = {k: v for k, v in opts.items() if k == "limit"}
            if "path" in opts:
                # Members sharing one release copy (`Benchmark.copy`) read the suite's folder.
                folder = Path(opts["path"])
                member_opts["path"] = str(folder if member.copy else folder / name)
            try:
                part = load_benchmark(member, None, member_opts, strict=strict, limit=room)
            except DataError as exc:
                missing += 1
                problem = SampleProblem(
                    b.name, None, name, str(exc).removeprefix(f"benchmark {name}: ")
                )
                # A member known to be unrunnable (`needs`) is listed, never fatal.
                result.add_problem(problem, strict and member.needs is None)
                continue
            result.invalid += part.invalid
            shown = max(0, MAX_PROBLEMS_SHOWN - len(result.problems))
            result.problems.extend(part.problems[:shown])
            given += len(part.samples)
            yield from part.samples
            del part
        if not given and missing == len(b.members):
            first = "\n".join(f"  {p}" for p in result.problems[:3])
            raise DataError(
                f"benchmark {b.name}: none of its {missing} members could be loaded "
                f"(`lmmprobe data list` shows which copies are present, `lmmprobe data show "
                f"MEMBER` how to fetch each); the first {min(3, missing)}:\n{first}"
            )

    return SampleStream(b.name, samples)


def load_benchmark(
    b: Benchmark, target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> LoadResult:
    """Load a registered benchmark as the data source of its name (`stream_benchmark`'s list)."""
    return stream_benchmark(b, target, options, strict=strict, limit=limit).result()


def stream_benchmark(
    b: Benchmark, target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> SampleStream:
    """A registered benchmark's samples, one at a time (see the module docstring).

    A benchmark's rows are read as the stream is; a suite's members are each loaded whole in
    turn (`_stream_suite`).

    Args:
        b: The definition.
        target: ``NAME:FOLDER``'s folder (same as ``path=``), or None.
        options: ``split``, ``path``, ``limit``, ``config``.
        strict: Raise on the first bad row (or missing suite member).
        limit: Stop after this many samples.

    Raises:
        DataError: An unknown option, a benchmark lmmprobe cannot run (``needs``), no copy and
            no Hub (with the fetch command), or a bad template (when called); data `datasets`
            cannot read, or a bad row in strict mode (when the stream reaches it).

    """
    opts = _options(b, target, options)
    if b.needs is not None:
        raise DataError(
            f"benchmark {b.name} needs {b.needs}, which lmmprobe does not have; it is listed "
            "(lmmprobe data show " + b.name + ") but cannot be run"
        )
    if b.members:
        return _stream_suite(b, opts, strict=strict, limit=limit)
    limit = _limit(b, opts, limit)
    check_template(b)
    split = _split(b, opts)
    config = opts.get("config") or b.config
    where = locate(b, opts.get("path"))
    source = f"{where.label}[{split}]"
    return stream_benchmark_rows(
        b,
        _rows(b, where, split, config),
        split=split,
        root=where.folder.resolve() if where.folder is not None else None,
        source=source,
        strict=strict,
        limit=limit,
    )
