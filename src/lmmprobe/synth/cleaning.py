"""Apply Dysca's model-consensus filter to a generated dataset folder.

Dysca drops the questions that all of its best reference models answer wrong (they are likely
broken: an unrecognizable image or a misleading question). Here the reference models' answers
come from lmmprobe runs on the dataset (``lmmprobe run --data synth:DIR -m A -m B ...``); the
folder's ``samples.jsonl`` and ``dysca.json`` are rewritten without the dropped questions, the
untouched originals are kept once as ``*.unfiltered*``, and the filter is recorded in the
manifest with what it dropped.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from lmmprobe.schema import Score
from lmmprobe.store import Store
from lmmprobe.store.sqlite import score_from_row
from lmmprobe.synth.filters import ConsensusFilter
from lmmprobe.synth.generate import (
    DYSCA_FILE,
    MANIFEST_FILE,
    SAMPLES_FILE,
    count_samples,
    load_manifest,
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


def _rewrite(path: Path, backup: Path, keep: list[str]) -> None:
    if not backup.exists():
        shutil.copyfile(path, backup)
    path.write_text("".join(keep), encoding="utf-8")


def apply_consensus_filter(
    folder: str | Path, run_ids: Sequence[str], *, db: str | Path | None = None
) -> tuple[int, int]:
    """Drop the questions every reference model answered wrong; return (kept, dropped).

    Args:
        folder: Dataset folder written by `lmmprobe.synth.generate.write_dataset`.
        run_ids: Runs of the reference models on this dataset (ids or prefixes).
        db: The store holding those runs (default: ``./lmmprobe-runs/lmmprobe.db``).

    Raises:
        FileNotFoundError: Not a dataset folder.
        ValueError: The runs hold no scores.

    """
    root = Path(folder)
    manifest = load_manifest(root)
    store = Store(db, read_only=True)
    try:
        scores = run_scores(store, run_ids)
    finally:
        store.close()
    if not scores:
        raise ValueError(f"runs {list(run_ids)} hold no scores")
    rule = ConsensusFilter(sorted(scores))
    drop = rule.failures(scores)
    source = root / SAMPLES_FILE
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [ln for ln in lines if json.loads(ln)["id"] not in drop]
    _rewrite(source, root / "samples.unfiltered.jsonl", kept)
    dysca_path = root / DYSCA_FILE
    records = json.loads(dysca_path.read_text(encoding="utf-8"))
    if not (root / "dysca.unfiltered.json").exists():
        shutil.copyfile(dysca_path, root / "dysca.unfiltered.json")
    dysca_path.write_text(
        json.dumps([r for r in records if r["id"] not in drop], ensure_ascii=False, indent=0)
        + "\n",
        encoding="utf-8",
    )
    dropped = len(lines) - len(kept)
    manifest.setdefault("filters", []).append(
        {**rule.describe(), "runs": list(run_ids), "dropped_samples": dropped}
    )
    manifest["counts"]["samples"] = len(kept)
    counts = count_samples(root)
    for key, values in counts.items():
        manifest["counts"][f"by_{key}"] = values
    (root / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return len(kept), dropped
