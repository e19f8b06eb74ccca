"""Reusing an identical earlier run's rows: the rule, and the copy in SQL.

A run whose inputs are those of an earlier complete run in the same store would ask the same
requests, read the same stored answers and score them the same way: its sample and score rows
would be the earlier run's, byte for byte. Such a run copies them (``INSERT … SELECT``)
instead of planning, scoring and writing them row by row. What must match, all of it:

- **the data**: the fingerprint of every sample as read now (questions, options, answers,
  metadata, each image file's content: `lmmprobe.data.data_fingerprint`) and where the image
  files are (`lmmprobe.data.image_places`: a run records their absolute paths). The data is
  still read and checked in full first; a changed file or image changes the fingerprint.
- **the run's spec**, every field but where results are written (``out``) and the store's
  path (``db``): models, data spec, limit, repeats, seed, prompts, matcher, generation
  settings, frames, judges, breakdowns, ``no_cache`` (a run with ``no_cache`` never reuses).
- **the manifest**: lmmprobe's version and git commit (and in a checkout with uncommitted
  changes or untracked modules, their hash: `lmmprobe.run.manifest.source_changes`; a
  checkout with changes whose hash git did not give never reuses), Python, the platform, the key
  libraries' versions, the installed plugin packages' versions (a matcher or prompt style an
  upgraded plugin registers may read answers otherwise), every model's identity, the data
  fingerprint's version, the prompts' default instructions, and
  `lmmprobe.run.scoring.SCORER_VERSION`, which a change to the scoring code must bump.
- **the rows**: the earlier run holds a sample row for each of the data's samples and, for
  each model, as many score rows as this run would write (`lmmprobe.run.runner.planned_rows`),
  each of them a stored sample's: a damaged store (a row lost or edited away) is not copied.
- **the run's own scoring**: the earlier run scored its rows itself. A run made by ``lmmprobe
  judge`` holds another run's rows as that run recorded them (its manifest names the run,
  ``judged_from``), so it is never a source: its answers may have been replaced before it
  was made, which its own times cannot tell.
- **the answers**: the earlier run ended ``complete`` (no error row, nothing stopped), and
  every answer its rows were scored from is still stored, a success, written no later than
  the moment its rows were all scored (the manifest's ``rows_scored_at``, `ROWS_SCORED_AT`:
  no answer was replaced since, by a ``--no-cache`` run say). Not its last update: a run is
  ``complete`` from the runner's end, and its judging and results are written after, so an
  answer replaced meanwhile was written before that update yet after its rows were scored
  (re-test 16 #11). Both times are taken inside the store's write lock (`Store.put_responses`,
  `Store.mark_rows_scored`), so an answer committed after the mark has a later time. A run
  that copied its rows holds rows scored at its source's mark, and records that time.

The answers are told unchanged by their write times: an answer another writer replaces while
the earlier run is itself still scoring (between its reading the answer and its mark) has a
time before the mark and is not noticed; telling it would take each row's answer time, which
the score rows do not record.

Anything else, or any doubt (a damaged record, an older run without these fields), and the
run takes the ordinary path. The copy and the checks are one transaction, so no other writer
replaces an answer between them.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lmmprobe.store.runs import decode_column

__all__ = [
    "IGNORED_MANIFEST_FIELDS",
    "IGNORED_SPEC_FIELDS",
    "JUDGED_FROM",
    "ROWS_SCORED_AT",
    "AnswerTotals",
    "Reused",
    "copy_run_rows",
    "find_identical_run",
    "recorded_form",
]

IGNORED_SPEC_FIELDS = frozenset({"out", "db"})
"""Spec fields that cannot change a run's rows: where its results go and the store's path."""

_SAMPLE_COLUMNS = "sample_id, question, sample, row_metadata"
_SCORE_COLUMNS = (
    "model, sample_id, repeat, key, stage, prediction, prediction_text, correct, format_hit, "
    "gold, gold_text, abstain_offered, abstained, error_type, metadata, formulation, options, "
    "marks, option_order"
)


@dataclass
class AnswerTotals:
    """What a cached re-run adds up over one model's distinct answers (`ModelOutcome`'s counts).

    Summed in the order the runner meets each request key first (the score rows' order), so
    the floating-point total of latencies is the one a re-run computes.
    """

    requests: int = 0
    rows: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s_total: float = 0.0
    redacted: int = 0


JUDGED_FROM = "judged_from"
"""Manifest field of a run ``lmmprobe judge`` made: the stored run whose rows it holds."""

ROWS_SCORED_AT = "rows_scored_at"
"""Manifest field: when the run's rows were all scored and stored (seconds since the epoch, taken
inside the write lock that marks it so; `Store.mark_rows_scored`). An answer written later is
not one its rows were scored from. A run without it (recorded before) is never a source."""

IGNORED_MANIFEST_FIELDS = frozenset({"judge", ROWS_SCORED_AT})
"""Manifest fields written after a run's rows: the judging step's record of its judges (the
judges themselves are in the spec, and a run that copies rows judges them again), and when
its rows were scored (a moment, not an input)."""


@dataclass
class Reused:
    """The identical earlier run whose rows a run copied.

    Attributes:
        source: Its id.
        totals: Per model, its answers' totals (what a re-run counts).
        rows_scored_at: When its rows were scored (its `ROWS_SCORED_AT`): the copy's rows are
            those, so the copy records this time as its own.

    """

    source: str
    totals: dict[str, AnswerTotals]
    rows_scored_at: float


def _scored_time(manifest: Mapping[str, Any]) -> float | None:
    """A manifest's `ROWS_SCORED_AT` as a number, or None (absent or not a finite number)."""
    value = manifest.get(ROWS_SCORED_AT)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _comparable_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k not in IGNORED_SPEC_FIELDS}


def _comparable_manifest(manifest: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if manifest is None:
        return None
    return {k: v for k, v in manifest.items() if k not in IGNORED_MANIFEST_FIELDS}


def find_identical_run(
    c: sqlite3.Connection,
    run_id: str,
    spec: Mapping[str, Any],
    manifest: Mapping[str, Any],
    models: list[str],
    rows: int,
) -> Reused | None:
    """The newest earlier run whose rows `run_id` may copy (the rule above), and its totals.

    Args:
        c: The store's connection, inside the transaction that will copy the rows.
        run_id: The new run (never its own source).
        spec: The new run's spec as recorded (secrets redacted, JSON values).
        manifest: The new run's manifest as it will be recorded (the same form).
        models: The new run's models as the store records them, in the run's order.
        rows: The score rows each of its models has (`lmmprobe.run.runner.planned_rows`).

    Returns:
        The earlier run (its totals per recorded model); None if none fits.

    """
    data = manifest.get("data")
    fingerprint = data.get("fingerprint") if isinstance(data, dict) else None
    samples = data.get("samples") if isinstance(data, dict) else None
    if not isinstance(fingerprint, str) or "scorer_version" not in manifest:
        return None
    if JUDGED_FROM in manifest or not isinstance(samples, int):
        return None
    if str(manifest.get("git_commit") or "").endswith("+dirty") and not manifest.get(
        "source_changes"
    ):
        return None  # uncommitted code whose hash git did not give: not known to be the same
    wanted_spec = _comparable_spec(spec)
    candidates = c.execute(
        "SELECT id, spec, manifest FROM runs WHERE status = 'complete' AND id != ? "
        "AND instr(manifest, ?) > 0 ORDER BY created_at DESC, id DESC",
        (run_id, fingerprint),
    ).fetchall()
    for earlier, spec_text, manifest_text in candidates:
        their_spec = decode_column(spec_text)
        if their_spec is None or _comparable_spec(their_spec) != wanted_spec:
            continue
        their_manifest = decode_column(manifest_text)
        if their_manifest is None or JUDGED_FROM in their_manifest:
            continue  # not scored by that run: another run's rows, as recorded (the rule)
        scored_at = _scored_time(their_manifest)
        if scored_at is None:
            continue  # recorded before the mark (or damaged): when its rows were scored is unknown
        if _comparable_manifest(their_manifest) != _comparable_manifest(manifest):
            continue
        (stored_samples,) = c.execute(
            "SELECT count(*) FROM samples WHERE run_id = ?", (earlier,)
        ).fetchone()
        if stored_samples != samples:
            continue
        totals = _answer_totals(c, earlier, scored_at, models, rows)
        if totals is not None:
            return Reused(earlier, totals, scored_at)
    return None


def _answer_totals(
    c: sqlite3.Connection, earlier: str, until: float, models: list[str], expected: int
) -> dict[str, AnswerTotals] | None:
    """Per model, the totals over the answers of `earlier`'s rows; None where one fails the rule."""
    stored = [
        m for (m,) in c.execute("SELECT DISTINCT model FROM scores WHERE run_id = ?", (earlier,))
    ]
    if sorted(stored) != sorted(models):
        return None
    out: dict[str, AnswerTotals] = {}
    for model in models:
        totals = out[model] = AnswerTotals()
        seen: set[str] = set()
        rows = c.execute(
            "SELECT s.key, s.error_type, r.key, r.error_type, r.created_at, r.latency_s, "
            "r.prompt_tokens, r.completion_tokens, r.redacted, p.sample_id FROM scores s "
            "LEFT JOIN responses r ON r.key = s.key "
            "LEFT JOIN samples p ON p.run_id = s.run_id AND p.sample_id = s.sample_id "
            "WHERE s.run_id = ? AND s.model = ? ORDER BY s.rowid",
            (earlier, model),
        )
        for key, row_error, found, error, created, latency, pt, ct, redacted, sample in rows:
            if row_error is not None or found is None or error is not None or created > until:
                return None
            if sample is None:
                return None  # a row of a sample the run does not hold: damaged
            totals.rows += 1
            if key in seen:
                continue  # asked once: a re-run counts each request key once
            seen.add(key)
            totals.requests += 1
            totals.latency_s_total += latency
            totals.prompt_tokens += pt or 0
            totals.completion_tokens += ct or 0
            totals.redacted += bool(redacted)
        if totals.rows != expected:
            return None  # rows lost (or added) since the run wrote them: damaged
    return out


def copy_run_rows(c: sqlite3.Connection, earlier: str, run_id: str) -> None:
    """Copy `earlier`'s sample and score rows to `run_id`, in their order (inside `c`'s transaction)."""
    c.execute(
        f"INSERT INTO samples (run_id, {_SAMPLE_COLUMNS}) SELECT ?, {_SAMPLE_COLUMNS} "
        "FROM samples WHERE run_id = ? ORDER BY rowid",
        (run_id, earlier),
    )
    c.execute(
        f"INSERT INTO scores (run_id, {_SCORE_COLUMNS}) SELECT ?, {_SCORE_COLUMNS} "
        "FROM scores WHERE run_id = ? ORDER BY rowid",
        (run_id, earlier),
    )


def recorded_form(value: Mapping[str, Any]) -> dict[str, Any]:
    """`value` as a JSON column gives it back (tuples as lists, keys as strings)."""
    out: dict[str, Any] = json.loads(json.dumps(value))
    return out
