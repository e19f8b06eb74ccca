"""Apply Dysca's model-consensus filter to a generated dataset folder.

Dysca drops the questions that all of its best reference models answer wrong (they are likely
broken: an unrecognizable image or a misleading question). Here the reference models' answers
come from lmmprobe runs on the dataset (``lmmprobe run --data synth:DIR -m A -m B ...``); the
folder's ``samples.jsonl`` and ``dysca.json`` are rewritten without the dropped questions, the
untouched originals are kept once as ``*.unfiltered*``, and the filter is recorded in the
manifest with what it dropped.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.files import read_regular
from lmmprobe.data.jsonl import json_document
from lmmprobe.schema import Score
from lmmprobe.store import Store
from lmmprobe.store.sqlite import score_from_row
from lmmprobe.synth.filters import ConsensusFilter
from lmmprobe.synth.generate import (
    DYSCA_FILE,
    MANIFEST_FILE,
    SAMPLES_FILE,
    load_manifest,
    read_samples,
    tally,
)

__all__ = ["apply_consensus_filter", "run_scores"]


def run_scores(store: Store, run_ids: Sequence[str]) -> dict[str, list[Score]]:
    """Score rows of the given runs, grouped by model."""
    by_model: dict[str, list[Score]] = defaultdict(list)
    for ref in run_ids:
        run_id = store.resolve_run(ref)
        for rec in store.iter_score_rows(run_id):
            by_model[rec["model"]].append(score_from_row(rec))
    return dict(by_model)


MAX_DYSCA_BYTES = 1 << 30
"""The largest ``dysca.json`` read (1 GiB, `lmmprobe.data.jsonl.MAX_JSON_DOCUMENT`)."""

_BACKUPS = {SAMPLES_FILE: "samples.unfiltered.jsonl", DYSCA_FILE: "dysca.unfiltered.json"}
"""The untouched originals, kept once beside the files the filter rewrites."""


def _inside(root: Path, name: str) -> Path:
    """`root / name`, refused when it is a link leading out of `root` (dangling or not).

    Links inside the folder are its own (as ``hf:`` folders' are); one leading out would have
    the filter write, or create, a file anywhere the user can write.
    """
    path = root / name
    if path.is_symlink():
        target = path.resolve()
        if not target.is_relative_to(root.resolve()):
            raise DataError(
                f"{path}: a link to {target}, outside {root}; synth filter reads and writes "
                "only files inside the dataset folder: copy the file there"
            )
    return path


def _dysca_records(root: Path) -> tuple[str, list[dict[str, Any]]]:
    """``dysca.json``'s text and records, each an object with an ``id``."""
    path = _inside(root, DYSCA_FILE)
    what = "a synthetic dataset's Dysca questions"
    try:
        raw = read_regular(path, MAX_DYSCA_BYTES, what=what, within=root)
    except DataError:
        raise
    except OSError as exc:
        raise DataError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (at byte {exc.start})") from None
    records = json_document(str(path), text)
    if not isinstance(records, list):
        raise DataError(f"{path}: expected a list of questions, got {type(records).__name__}")
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise DataError(f"{path}: [{i}]: expected an object, got {type(record).__name__}")
        if "id" not in record:
            raise DataError(f"{path}: [{i}].id: missing (each question names its sample)")
    return text, records


def _replace(path: Path, text: str) -> None:
    """Write `text` to `path` atomically: a new file in the folder renamed over the name.

    The name is replaced, never written through (a link inside the folder becomes a file),
    and a failure half-way leaves the old file whole.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file private; the dataset's files keep the mode they had.
        os.fchmod(fd, os.stat(path).st_mode & 0o777 if path.exists() else 0o644)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def apply_consensus_filter(
    folder: str | Path, run_ids: Sequence[str], *, db: str | Path | None = None
) -> tuple[int, int]:
    """Drop the questions every reference model answered wrong; return (kept, dropped).

    The folder may come from elsewhere: its three files are read as every outside file is
    (regular files inside the folder, size-capped, nested at most 100 levels, shapes checked)
    and all of them before any is written; then each is replaced atomically. A file (or a
    kept original) that is a link leading out of the folder is refused.

    Args:
        folder: Dataset folder written by `lmmprobe.synth.generate.write_dataset`.
        run_ids: Runs of the reference models on this dataset (ids or prefixes).
        db: The store holding those runs (default: ``./lmmprobe-runs/lmmprobe.db``).

    Raises:
        FileNotFoundError: Not a dataset folder.
        DataError: A file of the folder cannot be read, has another shape, or is a link
            leading out of it; one line naming the file (and line) and the field.
        ValueError: The runs hold no scores, or none of this folder's samples.

    """
    root = Path(folder)
    for name in (MANIFEST_FILE, SAMPLES_FILE, DYSCA_FILE, *_BACKUPS.values()):
        _inside(root, name)
    manifest = load_manifest(root)
    samples = list(read_samples(root))
    for n, _, row in samples:
        if "id" not in row:
            raise DataError(f"{root / SAMPLES_FILE}:{n}: id: missing")
    dysca_text, records = _dysca_records(root)
    store = Store(db, read_only=True)
    try:
        scores = run_scores(store, run_ids)
    finally:
        store.close()
    if not scores:
        raise ValueError(f"runs {list(run_ids)} hold no scores")
    # A run of other data (a run id mistyped for another) scores none of these samples: the
    # filter would drop nothing and the manifest would record it as applied.
    scored = {s.sample_id for rows in scores.values() for s in rows}
    if not any(row["id"] in scored for _, _, row in samples):
        raise ValueError(
            f"runs {list(run_ids)} answered none of the {len(samples):,} samples of {root}: "
            f"they are runs of other data; give runs of `lmmprobe run --data synth:{root}`"
        )
    rule = ConsensusFilter(sorted(scores))
    drop = rule.failures(scores)
    kept = [(line, row) for _, line, row in samples if row["id"] not in drop]
    dropped = len(samples) - len(kept)
    manifest.setdefault("filters", []).append(
        {**rule.describe(), "runs": list(run_ids), "dropped_samples": dropped}
    )
    manifest["counts"]["samples"] = len(kept)
    for key, values in tally(row for _, row in kept).items():
        manifest["counts"][f"by_{key}"] = values
    # Everything is decided: the originals are kept once, then each file is replaced.
    originals = {SAMPLES_FILE: "".join(line for _, line, _ in samples), DYSCA_FILE: dysca_text}
    for name, backup in _BACKUPS.items():
        if not os.path.lexists(root / backup):
            _replace(root / backup, originals[name])
    _replace(root / SAMPLES_FILE, "".join(line for line, _ in kept))
    _replace(
        root / DYSCA_FILE,
        json.dumps([r for r in records if r["id"] not in drop], ensure_ascii=False, indent=0)
        + "\n",
    )
    _replace(root / MANIFEST_FILE, json.dumps(manifest, indent=2) + "\n")
    return len(kept), dropped
