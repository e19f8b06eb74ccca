"""The benchmark definition: one `Benchmark` per published benchmark, found by name.

A definition says where the data lives (a hub id at a pinned revision, or the original release
files), how one row becomes a `Sample`, the benchmark's official prompt (cited) and metric,
and its HEMM and ReForm-Eval dimensions. `lmmprobe.data.benchmarks.register.benchmark` registers
it in `BENCHMARKS` and as a data source of the same name, so ``--data mmbench,split=dev`` loads it
(see `lmmprobe.data.benchmarks.load`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.data.base import BENCHMARK_FOLDERS
from lmmprobe.data.benchmarks._fetch import hf_download, local_dir_word
from lmmprobe.data.rows import RowError
from lmmprobe.registry import Registry
from lmmprobe.schema import Sample
from lmmprobe.schema.benchmark import PromptTemplate  # re-exported: definitions import it here

__all__ = [
    "BENCHMARKS",
    "GROUPS",
    "Benchmark",
    "Group",
    "PromptTemplate",
    "RowContext",
    "RowError",
    "RowReader",
]


@dataclass(frozen=True)
class Group:
    """A heading ``lmmprobe data list`` sorts benchmarks under.

    Attributes:
        title: The heading.
        family: A family is where a benchmark comes from (the standard set, HEMM, ReForm-Eval,
            Dysca): each benchmark is in exactly one, ``standard`` when nothing says another.
            A group that is not a family is a facet (a leaderboard's set, multi-image,
            Chinese): a benchmark is in any number of them besides its family.

    """

    title: str
    family: bool


GROUPS: dict[str, Group] = {
    "standard": Group("Standard benchmarks", family=True),
    "leaderboard": Group("Leaderboard sets and their columns", family=False),
    "multi-image": Group("Multi-image", family=False),
    "chinese": Group("Chinese", family=False),
    "video": Group("Video", family=False),
    "hemm": Group("HEMM", family=True),
    "reform-eval": Group("ReForm-Eval", family=True),
    "dysca": Group("Dysca", family=True),
}
"""The groups a definition's `Benchmark.groups` may name, in the order ``data list`` shows them."""


@dataclass(frozen=True)
class RowContext:
    """Where a row comes from, for a definition's reader.

    Attributes:
        benchmark: The definition being loaded.
        split: The split being read.
        root: The local copy's folder (relative image paths resolve here); None for rows read
            from the hub cache.
        where: ``PATH[split]:N``, for messages.
        index: The row's 0-based position in the split.

    """

    benchmark: Benchmark
    split: str
    root: Path | None
    where: str
    index: int


RowReader = Callable[[Mapping[str, Any], RowContext], Sample | list[Sample] | None]
"""Turns one row into a sample, several samples (a row holding two questions), or None to skip
the row on purpose (ScienceQA rows without an image); raises `RowError(field, reason)` for a bad
row."""

FileReader = Callable[[Path, str], Iterator[tuple[str, Mapping[str, Any]]]]
"""For ``layout="files"``: ``(root, split)`` to ``(where, row)`` pairs."""


@dataclass(frozen=True)
class Benchmark:
    """One published benchmark: its data, reading, prompt and metric.

    Attributes:
        name: Registry and ``--data`` name, lowercase (``mmbench``, ``hemm-nlvr2``).
        title: Display title (``MMBench (dev, English)``).
        citation: The paper.
        license: From the dataset card (``unknown (see card)`` if it says nothing).
        formulation: The `Sample` formulation most rows get.
        metric: The run metric (``RUN_METRICS``) computing the official score; `benchmark`
            refuses a name that is not registered. None only with `needs`: a benchmark
            lmmprobe cannot run has no score to compute (its notes say how its authors score
            it).
        prompt: The official prompt.
        to_sample: Reads one row (see `RowReader`).
        fetch: The exact shell command that fetches a local copy into
            ``$LMMPROBE_DATA_DIR/NAME``. Leave it out for data on the Hub: it is then made
            from `hub_id`, `revision` and `include` (``hf download ...``, each word quoted),
            followed by `after_download`. A `fetch` given with `hub_id` that downloads that
            repository at that revision is refused (it would write them twice); one that
            differs in kind (another ref of the repository, as HEMM's Winoground reads the
            parquet conversion) is kept. A command made from these fields for another name (a
            copy made with `dataclasses.replace`) is made anew for this one.
        after_download: Shell steps run in the copy's folder after the download made from
            `hub_id` (unpacking an archive the reader needs); only with `hub_id` and no
            `fetch`.
        split: The default split.
        splits: The known splits.
        hub_id: The Hugging Face Hub dataset id, if it is there.
        revision: The pinned commit of the hub repository (None: unknown, say so in notes).
        config: The hub config (subset).
        include: Glob patterns of the hub repository's files a copy needs (the fetch command's
            ``--include`` patterns, and what the automatic download takes); empty: every file.
        size: Rows (questions) in the default split, from the card or paper.
        layout: ``hub`` (read with `datasets`) or ``files`` (original release files read by
            `read_files`).
        read_files: For ``layout="files"``.
        hemm: The HEMM catalog task name, where it is one of HEMM's.
        reform: The ReForm-Eval dimension, where it has one.
        notes: Plain sentences ``data show`` prints (an LLM-judge caveat, say).
        needs: A capability lmmprobe lacks; loading it raises `DataError` saying so.
        circular: The official protocol is CircularEval (run it with ``--circular``).
        matcher: The matcher of the benchmark's official answer reading (``MATCHERS`` name):
            a run of it reads choice answers with this one unless ``--matcher`` names another.
        judge: The judge protocol (``JUDGE_PROTOCOLS`` name) of the benchmark's official
            evaluation, where it uses an LLM judge; ``--judge SPEC`` runs it.
        members: For a suite (``hemm``): the member benchmarks' names.
        copy: The folder under ``$LMMPROBE_DATA_DIR`` holding the copy, when several
            definitions read one release (ReForm-Eval's members all read one clone of
            ReForm-Eval-Data); ``""``: the definition's name. A suite's ``path=`` is then that
            one copy, handed to such members as it is (not ``FOLDER/MEMBER``).
        schema_confirmed: Where the exact schema was confirmed; ``""`` if it was not.
        groups: The `GROUPS` it belongs to by its own definition (``("multi-image",)``,
            ``("hemm",)`` on HEMM's suite). A set's groups pass to its members, and a set
            naming none is in the groups all its members share
            (`lmmprobe.data.benchmarks._describe.benchmark_groups`); a benchmark in no family
            is ``standard``.

    """

    name: str
    title: str
    citation: str
    license: str
    formulation: str
    metric: str | None
    prompt: PromptTemplate
    to_sample: RowReader
    fetch: str = ""
    after_download: str = ""
    split: str = "test"
    splits: tuple[str, ...] = ()
    hub_id: str | None = None
    revision: str | None = None
    config: str | None = None
    include: tuple[str, ...] = ()
    size: int | None = None
    layout: str = "hub"
    read_files: FileReader | None = None
    hemm: str | None = None
    reform: str | None = None
    notes: tuple[str, ...] = ()
    needs: str | None = None
    circular: bool = False
    matcher: str | None = None
    judge: str | None = None
    members: tuple[str, ...] = ()
    copy: str = ""
    schema_confirmed: str = ""
    groups: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.lower() or "," in self.name or ":" in self.name:
            raise ValueError(
                f"benchmark name {self.name!r}: use a non-empty lowercase name without ',' or ':'"
            )
        if self.layout not in ("hub", "files"):
            raise ValueError(f"benchmark {self.name}: layout must be 'hub' or 'files'")
        if self.layout == "files" and self.read_files is None and not self.members:
            raise ValueError(f"benchmark {self.name}: layout='files' needs read_files")
        if isinstance(self.include, str):  # ("a/*") is a string: each pattern must be one item
            raise ValueError(f"benchmark {self.name}: include must be a tuple of patterns")
        if isinstance(self.groups, str) or any(g not in GROUPS for g in self.groups):
            raise ValueError(
                f"benchmark {self.name}: groups must be a tuple of {', '.join(GROUPS)}; "
                f"got {self.groups!r}"
            )
        if sum(GROUPS[g].family for g in self.groups) > 1:
            raise ValueError(f"benchmark {self.name}: groups name more than one family")
        if self.metric is None and self.needs is None:
            raise ValueError(
                f"benchmark {self.name}: give metric (the run metric computing its official "
                "score); only a benchmark that needs what lmmprobe lacks (needs=) may have none"
            )
        if self.after_download and self.hub_id is None:
            raise ValueError(
                f"benchmark {self.name}: after_download follows the download made from hub_id; "
                "without hub_id, write the whole command as fetch"
            )
        derived = self._derived_fetch()
        if not self.fetch or (derived is not None and self._copied_derived_fetch()):
            if derived is None:
                raise ValueError(f"benchmark {self.name}: give fetch (its data is not on the Hub)")
            # Written once: the command comes from the same fields the automatic download uses.
            object.__setattr__(self, "fetch", derived)
        elif self.after_download:
            raise ValueError(
                f"benchmark {self.name}: after_download follows the download made from hub_id; "
                "with fetch given, write every step in fetch"
            )
        elif self._fetch_repeats_hub():
            raise ValueError(
                f"benchmark {self.name}: fetch repeats the download of hub_id {self.hub_id!r} at "
                f"revision {self.revision!r}, which is made from those fields: leave fetch out "
                "and put any later step (unzip ...) in after_download"
            )

    def _derived_fetch(self, name: str | None = None) -> str | None:
        """The command made from `hub_id`, `revision`, `include` and `after_download`."""
        if self.hub_id is None:
            return None
        name = (self.copy or self.name) if name is None else name
        command = hf_download(name, self.hub_id, self.revision, self.include)
        if self.after_download:
            command += f" && cd {local_dir_word(name)} && {self.after_download}"
        return command

    def _copied_derived_fetch(self) -> bool:
        """Whether `fetch` is the command these fields make, for this name or another one."""
        mark = "benchmark-name-mark"  # a plain name: local_dir_word writes it as is
        made = self._derived_fetch(mark)
        assert made is not None
        pattern = re.escape(made).replace(re.escape(mark), r"[a-z0-9._-]+")
        return re.fullmatch(pattern, self.fetch) is not None

    def _fetch_repeats_hub(self) -> bool:
        """Whether `fetch` starts by downloading `hub_id` other than at another named ref."""
        lexer = shlex.shlex(self.fetch, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:  # unbalanced quotes: not a command this check can read
            return False
        first = words[: words.index("&&")] if "&&" in words else words
        if first[:3] != ["hf", "download", self.hub_id]:
            return False
        # Only another ref than the pinned one differs in kind; no --revision at all would
        # fetch whatever the repository holds today, not what the definition pins.
        revision = first[first.index("--revision") + 1] if "--revision" in first[:-1] else None
        return revision is None or revision == self.revision


BENCHMARKS: Registry[Benchmark] = Registry(
    "benchmark",
    # Every benchmark is a data source of its name, found in the same folders: one file each.
    discover=BENCHMARK_FOLDERS,
)
"""Benchmarks by name; ``lmmprobe data list`` shows them. A built-in one is a file in one of the
discovered folders (``lmmprobe/data/benchmarks/standard/``, ``.../hemm/``). Another package adds
one by calling `benchmark` in a module it registers in the ``lmmprobe.sources`` entry-point
group."""
