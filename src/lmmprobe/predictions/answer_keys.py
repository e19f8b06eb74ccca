"""Answer-key versions: which key the local copy is, and which one a file was scored against.

A benchmark's answer key can change after release: MMMU's validation key changed on
2023-12-14 (MMMU-Benchmark/MMMU commit bbaa1eb, "Update example_outputs":
``validation_Literature_10`` D → C and ``validation_Literature_15`` B → A in
``answer_dict_val.json``), so figures computed before and after differ on those items. A key is
named by `key_hash`: SHA-256 of its ``{id: [gold, ...]}`` as canonical JSON (sorted ids, golds
as lists of text), computed the same way from a local copy's samples and from a released
answer file, so equal keys have equal hashes whatever file they came from.

`KNOWN_KEYS` lists the versions found in the benchmarks' own repositories (computed from
``answer_dict_val.json`` at each commit that changed it); `key_version` names the local copy's,
and `key_warnings` says when a file evidently used another key: its recorded golds, or (where it
records no gold) its verdicts, agree with an older key on the items that changed. MathVista's
answers live only in its Hugging Face dataset (lupantech/MathVista's repository holds no
answer file with a history), so no older MathVista key is known; any benchmark still gets the
generic warning when a file's golds differ from the local key on more than a few items.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from lmmprobe.schema import Sample

__all__ = [
    "FEW",
    "KNOWN_KEYS",
    "KeyVersion",
    "gold_key",
    "key_hash",
    "key_version",
    "key_warnings",
    "older_gold",
    "plain_id",
]

FEW = 3
"""A file's golds may differ from the local key on up to this many items (unexplained by a
known older key) before `key_warnings` warns: a handful of edited items is noise, more is
another key."""


@dataclass(frozen=True)
class KeyVersion:
    """One released version of a benchmark's answer key."""

    benchmark: str
    name: str
    """How a warning names it: the file and the commit it was released at."""
    sha256: str
    """`key_hash` of the whole key."""
    golds: Mapping[str, tuple[str, ...]]
    """The items whose gold differs from the newest version, with their gold in this one."""
    newest: bool = False


KNOWN_KEYS: tuple[KeyVersion, ...] = (
    KeyVersion(
        benchmark="mmmu",
        name="MMMU answer_dict_val.json @ bbaa1eb (2023-12-14, current)",
        sha256="295395aa8ce9921df065911198f4a2376a85099e5adf3c36953f69208ebae5c6",
        golds={},
        newest=True,
    ),
    KeyVersion(
        benchmark="mmmu",
        name="MMMU answer_dict_val.json @ bf380a2 (2023-11-30, before the 2023-12-14 fix)",
        sha256="0e4e2b49683b0e559e12625e2f60e272bbd77a49d5fc3ef8fc1aed12eb487bda",
        golds={"validation_Literature_10": ("D",), "validation_Literature_15": ("B",)},
    ),
)
"""The answer-key versions found in the benchmarks' repositories (module docstring)."""


def _golds(gold: str | Sequence[str] | int) -> tuple[str, ...]:
    if isinstance(gold, str):
        return (gold,)
    if isinstance(gold, int):
        return (str(gold),)
    return tuple(str(g) for g in gold)


def plain_id(sample_id: str, benchmark: str | None) -> str:
    """The benchmark's own id of a sample loaded by name: ``mmmu/validation_Art_1`` → ``validation_Art_1``.

    lmmprobe prefixes the ids of a benchmark loaded by name with its name; files do not.
    """
    if benchmark and sample_id.startswith(f"{benchmark}/"):
        return sample_id[len(benchmark) + 1 :]
    return sample_id


def gold_key(samples: Iterable[Sample]) -> dict[str, tuple[str, ...]]:
    """A local copy's answer key: each sample's gold text(s) by its benchmark's own id."""
    out: dict[str, tuple[str, ...]] = {}
    for s in samples:
        sid = plain_id(s.id, s.benchmark.name if s.benchmark is not None else None)
        out[sid] = (s.gold_text,) if s.is_choice else _golds(s.answer)
    return out


def key_hash(key: Mapping[str, str | Sequence[str]]) -> str:
    """SHA-256 of an answer key as canonical JSON: ``{id: [gold, ...]}`` with sorted ids."""
    canon = {k: list(_golds(v)) for k, v in key.items()}
    text = json.dumps(canon, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def key_version(benchmark: str, key: Mapping[str, str | Sequence[str]]) -> str:
    """One line naming the key of a local copy: its hash and the known version it equals."""
    digest = key_hash(key)
    known = [k for k in KNOWN_KEYS if k.benchmark == benchmark]
    for k in known:
        if k.sha256 == digest:
            return f"{benchmark} answer key sha256:{digest[:12]} = {k.name}"
    what = "no known version" if known else "no earlier version known"
    return f"{benchmark} answer key sha256:{digest[:12]} ({len(key)} item{'' if len(key) == 1 else 's'}; {what})"


def older_gold(benchmark: str, sample_id: str) -> list[tuple[KeyVersion, tuple[str, ...]]]:
    """The older known keys whose gold for `sample_id` differs from the newest, with that gold."""
    return [
        (k, k.golds[sample_id])
        for k in KNOWN_KEYS
        if k.benchmark == benchmark and sample_id in k.golds
    ]


def _same(a: Sequence[str], b: Sequence[str]) -> bool:
    return {x.strip().casefold() for x in a} == {x.strip().casefold() for x in b}


def key_warnings(
    benchmark: str,
    local: Mapping[str, Sequence[str]],
    file_golds: Mapping[str, str | Sequence[str]] | None = None,
    verdicts: Mapping[str, tuple[str | None, bool]] | None = None,
    *,
    path: str = "the file",
) -> list[str]:
    """Warnings that a file was scored against another answer key than the local copy's.

    Args:
        benchmark: The benchmark's name (``mmmu``).
        local: The local copy's key (`gold_key`).
        file_golds: The golds the file records, by id (None: it records none).
        verdicts: Where it records no gold, the tool's (reading, right?) by id: a right
            verdict on the older gold, or a wrong one on the newer, is evidence of the older key.
        path: How the warning names the file.

    Returns:
        One line per older known key the file evidently used (naming the items that differ),
        and one line when its golds differ from the local key on other items: more than `FEW`
        (another key; naming up to 20 of them), or a few (each named with both golds).

    """
    out: list[str] = []
    explained: set[str] = set()
    differ: list[str] = []
    if file_golds is not None:
        differ = [i for i, g in file_golds.items() if i in local and not _same(_golds(g), local[i])]
    for k in KNOWN_KEYS:
        if k.benchmark != benchmark or k.newest:
            continue
        agree: list[str] = []
        for sid, old in k.golds.items():
            if sid not in local or _same(old, local[sid]):
                continue  # the local copy is itself this version on this item
            if file_golds is not None and sid in file_golds:
                if _same(_golds(file_golds[sid]), old):
                    agree.append(sid)
            elif verdicts is not None and sid in verdicts:
                reading, right = verdicts[sid]
                # Fits the older gold, and not the local one.
                fits_old = reading is not None and _same((reading,), old) == right
                if fits_old and _same((reading or "",), local[sid]) != right:
                    agree.append(sid)
        if agree:
            explained.update(agree)
            items = ", ".join(
                f"{s} ({'/'.join(k.golds[s])} there, {'/'.join(local[s])} here)" for s in agree
            )
            out.append(f"{path} was evidently scored against {k.name}, not the local key: {items}")
    rest = [i for i in differ if i not in explained]
    if len(rest) > FEW:
        shown = ", ".join(rest[:20]) + (f" and {len(rest) - 20} more" if len(rest) > 20 else "")
        out.append(
            f"{path} records another gold than the local {benchmark} key on {len(rest)} item{'' if len(rest) == 1 else 's'}: "
            f"{shown}"
        )
    elif rest and file_golds is not None:
        # A few edited items are no other key, but each disagreement is still named, with
        # both golds: the file was scored against its gold, lmmprobe scores the copy's.
        shown = ", ".join(
            f"{i} ({'/'.join(_golds(file_golds[i]))} there, {'/'.join(local[i])} here)"
            for i in rest
        )
        out.append(
            f"{path} records another gold than the local {benchmark} copy on {len(rest)} "
            f"item{'s' if len(rest) > 1 else ''}: {shown}"
        )
    return out
