"""Pages and JSON of runs: the list (``/``, ``/api/runs``) and one run (``/runs/{run}``).

A run's metrics and breakdowns are those its results hold (the figures of ``results.json``,
with their 95% intervals); a run still going has none yet and shows its rows' counts instead,
read live from the scores table.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from lmmprobe.metrics import headline_metrics
from lmmprobe.metrics.outcome import OutcomeCounts
from lmmprobe.report.model import ResultsFormatError, results_from_dict
from lmmprobe.report.results import TEXT_SCORES, no_text_to_score
from lmmprobe.report.settings import origin_setting, run_setting
from lmmprobe.serve import _pages
from lmmprobe.store import queries
from lmmprobe.store.errors import StoreDamagedError
from lmmprobe.store.runs import read_runs

__all__ = ["RUNS_PAGE", "metric_names", "router", "run_settings"]

router = APIRouter()

RUNS_PAGE = 500
"""Runs per page of the runs list (newest first; older ones on the next pages)."""

# Metrics whose value is a share (0..1), shown with a bar.
_SHARE_METRICS = frozenset(
    {"accuracy", "balanced_accuracy", "format_hit_rate", "unparsed_rate", "error_rate",
     "abstention_rate"}
)  # fmt: skip


def metric_names(metrics: dict[str, dict[str, Any]]) -> list[str]:
    """The metric names of a run's models: headline metrics first (in column order), then others.

    A metric no model has a value for (the abstention rate of a run that offered no
    abstention) is left out, as the terminal's table leaves it out: a column of "-" only
    widened the table past a 960 px window.
    """
    present: list[str] = []
    for per_model in metrics.values():
        for name, figure in per_model.items():
            valued = not isinstance(figure, dict) or figure.get("value") is not None
            if valued and name not in present:
                present.append(name)
    head = [m.name for m in headline_metrics() if m.name in present]
    return head + [n for n in present if n not in head]


def _row_counts(
    results: Any, metrics: dict[str, Any] | None
) -> tuple[int | None, int | None, int | None]:
    """``(rows, judged, empty)`` of a model, as `lmmprobe.metrics.outcome` counts them.

    From the results' ``counts`` (what ``lmmprobe run`` prints); results written before
    lmmprobe recorded counts give the error rate's n (every row) and accuracy's (judged rows).
    """
    counts = results.get("counts") if isinstance(results, dict) else None
    if isinstance(counts, dict):
        got = (counts.get("rows"), counts.get("judged"), counts.get("empty"))
        return tuple(v if isinstance(v, int) else None for v in got)  # type: ignore[return-value]

    def n(name: str) -> int | None:
        m = (metrics or {}).get(name)
        v = m.get("n") if isinstance(m, dict) else None
        return v if isinstance(v, int) else None

    return n("error_rate"), n("accuracy"), None


def _no_text(results: Any) -> set[str]:
    """The metrics a model's row shows as ``-``: a score of free-form text it never gave."""
    counts = results.get("counts") if isinstance(results, dict) else None
    if not isinstance(counts, dict):
        return set()
    free, empty = counts.get("free_text"), counts.get("empty")
    if not isinstance(free, int) or not isinstance(empty, int):
        return set()
    rows = OutcomeCounts(free_text=free, empty=empty)
    return {name for name in TEXT_SCORES if no_text_to_score(name, rows)}


def run_settings(conn: sqlite3.Connection, ids: list[str]) -> dict[str, list[str]]:
    """Run id → what the run changed from a default run (`run_setting`: blind, likelihood...)."""
    # A damaged spec reads as empty: it names no setting, and never breaks the listing.
    return {
        r.id: origin_setting(r.manifest) + run_setting(r.spec) for r in read_runs(conn, ids=ids)
    }


def _page(
    conn: sqlite3.Connection, offset: int
) -> tuple[list[queries.RunRow], dict[str, list[str]]]:
    """One page of the runs list and each run's settings, from one read of the page's runs.

    The store's index on runs newest first (schema 13) gives the page without reading any
    other run: over 100,000 runs a page was a read of every run's results.
    """
    stored = read_runs(conn, RUNS_PAGE, offset)
    settings = {r.id: origin_setting(r.manifest) + run_setting(r.spec) for r in stored}
    return queries.run_rows(conn, stored), settings


def _run_json(row: queries.RunRow, setting: list[str] | None = None) -> dict[str, Any]:
    out = asdict(row)
    out["url"] = f"/runs/{_pages.quote_segment(row.id)}"
    out["setting"] = setting or []
    return out


def _offset(request: Request) -> int:
    raw = request.query_params.get("offset") or "0"
    if not raw.isdigit() or len(raw) > 9:
        raise HTTPException(status_code=422, detail="offset: a whole number of runs to skip")
    return int(raw)


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def runs_page(request: Request) -> HTMLResponse:
    """The stored runs, newest first, `RUNS_PAGE` to a page; running runs update live."""
    offset = _offset(request)
    with _pages.connection(request) as conn:
        runs, settings = _page(conn, offset)
        total = queries.count_runs(conn)
    return _pages.render(
        request,
        "runs.html",
        {
            "runs": runs,
            "settings": settings,
            "total": total,
            "offset": offset,
            "page": RUNS_PAGE,
        },
    )


@router.get("/api/runs")
def api_runs(request: Request) -> dict[str, Any]:
    """The runs as JSON (what the runs page polls): ``{"now", "total", "offset", "runs"}``.

    ``runs`` holds at most `RUNS_PAGE` runs, newest first, after skipping ``?offset=`` runs.
    """
    offset = _offset(request)
    with _pages.connection(request) as conn:
        runs, settings = _page(conn, offset)
        total = queries.count_runs(conn)
    return {
        "now": time.time(),
        "total": total,
        "offset": offset,
        "runs": [_run_json(r, settings.get(r.id)) for r in runs],
    }


def _run_view(request: Request, run_id: str) -> dict[str, Any]:
    with _pages.connection(request) as conn:
        found = queries.get_run(conn, run_id)
        if found is None:
            raise _pages.not_found(f"no run {run_id!r} in this store")
        row, docs = found
        if docs["results"]:
            # Shown only as `show` and `report` would read them: a figure written as text, an
            # interval that does not hold its value or a negative count is the store's error
            # page (one line naming the run and field), never a figure on the page.
            try:
                results_from_dict(docs["results"], f"run {run_id}")
            except ResultsFormatError as exc:
                raise StoreDamagedError(f"{exc} (damaged, or edited by hand)") from None
        models = queries.run_models(conn, run_id) or row.models
        # A run without results (still going, or stopped) shows what its scores say so far.
        counts = queries.model_counts(conn, run_id) if not docs["results"] else {}
    results = docs["results"]
    per_model = results.get("models") if isinstance(results.get("models"), dict) else {}
    breakdown_keys: list[str] = []
    for m in per_model.values():
        for key in (m.get("breakdown") or {}) if isinstance(m, dict) else {}:
            if key not in breakdown_keys:
                breakdown_keys.append(key)
    counted = {m: _row_counts(per_model.get(m), row.metrics.get(m)) for m in row.metrics}
    return {
        "setting": origin_setting(docs["manifest"]) + run_setting(docs["spec"] or None),
        "row_counts": counted,
        # The baselines answer open questions with nothing: their free-form 0 is no score.
        "no_text": {m: _no_text(per_model.get(m)) for m in row.metrics},
        "has_empty": any(c[2] for c in counted.values()),
        "run": row,
        "spec": docs["spec"],
        "manifest": docs["manifest"],
        "results": results,
        "models": models or row.models,
        "per_model": per_model,
        "metric_names": metric_names(row.metrics),
        "share_metrics": _SHARE_METRICS,
        "breakdown_keys": breakdown_keys,
        "counts": counts,
    }


@router.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
def run_page(request: Request, run_id: str) -> HTMLResponse:
    """One run: its facts, metrics per model with intervals, breakdowns, request counts."""
    return _pages.render(request, "run.html", _run_view(request, run_id))


@router.get("/api/runs/{run_id}")
def api_run(request: Request, run_id: str) -> dict[str, Any]:
    """One run as JSON: its row, models, counts (while running) and results."""
    view = _run_view(request, run_id)
    return {
        "run": _run_json(view["run"], view["setting"]),
        "models": view["models"],
        "counts": view["counts"],
        "results": view["results"] or None,
    }
