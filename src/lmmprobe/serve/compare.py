"""``/compare``: two runs, or two models of one run, on the same data.

The figures are `lmmprobe.report.compare.compare_runs`, the very comparison ``lmmprobe
compare`` prints: the accuracy difference with a paired bootstrap 95% interval, McNemar's exact
test with the counts of right/wrong pairs, agreement, and the answers where one side is right
and the other wrong (paged here, 50 to a page). Each side is labelled by what sets it apart
(`lmmprobe.report.settings.sides_apart`: ``thinking off``, ``effort high``...), and two specs of
one checkpoint (thinking on and off) are picked as the default pair when a run holds one. A
comparison is kept for the next pages until either run changes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from dataclasses import asdict, replace
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from lmmprobe.report.compare import Comparison, checkpoint, checkpoint_pair, compare_runs
from lmmprobe.report.settings import sides_apart
from lmmprobe.serve import _pages
from lmmprobe.serve.runs import run_settings
from lmmprobe.store import queries
from lmmprobe.store.runs import read_run

__all__ = ["COMPARE_TIME_LIMIT_S", "PAGE", "router"]

router = APIRouter()

PAGE = 50
"""Differing answers per page."""

COMPARE_TIME_LIMIT_S = 300.0
"""Seconds a comparison's queries may take (two models of a million-row run take a few)."""

_PICKER_RUNS = 500  # newest runs offered in the pickers

_KEEP = 8  # comparisons kept for paging
_cache: OrderedDict[tuple[Any, ...], Comparison] = OrderedDict()
_cache_lock = threading.Lock()


def _stamp(conn: sqlite3.Connection, run_id: str) -> float | None:
    row = conn.execute("SELECT updated_at FROM runs WHERE id = ?", (run_id,)).fetchone()
    return None if row is None else float(row[0])


def _comparison(
    conn: sqlite3.Connection, run_a: str, model_a: str, run_b: str, model_b: str
) -> Comparison:
    # The store's file is in the key: two apps in one process (tests, an embedding program)
    # over different stores never share a comparison.
    main = next((r[2] for r in conn.execute("PRAGMA database_list") if r[1] == "main"), "")
    key = (main, run_a, model_a, run_b, model_b, _stamp(conn, run_a), _stamp(conn, run_b))
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    try:
        found = compare_runs(conn, run_a, model_a, run_b, model_b, limit=10**9)
    except ImportError as exc:  # scipy missing: say what to install
        raise HTTPException(status_code=500, detail=str(exc)) from exc
    with _cache_lock:
        _cache[key] = found
        while len(_cache) > _KEEP:
            _cache.popitem(last=False)
    return found


def _pick(models_a: list[str], models_b: list[str], same: bool) -> tuple[str | None, str | None]:
    """Default models: two of one run, or the one both runs share (else each run's first).

    Two specs of one checkpoint (thinking on and off) are the default pair when they are the
    only such pair: of one run, or of two runs that share no model.
    """
    if same:
        pair = checkpoint_pair(models_a, models_a)
        if pair is not None:
            return pair
        return (models_a[0], models_a[1]) if len(models_a) >= 2 else (None, None)
    shared = [m for m in models_a if m in models_b]
    if shared:
        return shared[0], shared[0]
    pair = checkpoint_pair(models_a, models_b)
    if pair is not None:
        return pair
    return (models_a[0] if models_a else None), (models_b[0] if models_b else None)


def _apart(
    conn: sqlite3.Connection, run_a: str, model_a: str, run_b: str, model_b: str
) -> tuple[list[str], list[str]]:
    """What sets each side apart (`sides_apart`), read with the two runs' specs."""
    found_a, found_b = read_run(conn, run_a), read_run(conn, run_b)
    return sides_apart(
        model_a,
        model_b,
        found_a.spec if found_a else None,
        found_b.spec if found_b else None,
    )


def _view(request: Request) -> dict[str, Any]:
    q = request.query_params
    try:
        offset = max(0, int(q.get("offset") or 0))
    except ValueError:
        raise HTTPException(status_code=422, detail="offset: a whole number") from None
    # A comparison reads both sides' every answer: longer than a page may take.
    with _pages.connection(request, COMPARE_TIME_LIMIT_S) as conn:
        # The pickers offer the newest runs; any stored run can be named in the address.
        runs = queries.list_runs(conn, _PICKER_RUNS)
        run_a = q.get("run_a") or (runs[0].id if runs else None)
        run_b = q.get("run_b") or run_a
        for name, value in (("run_a", run_a), ("run_b", run_b)):
            if value is None or any(r.id == value for r in runs):
                continue
            found = queries.get_run(conn, value)
            if found is None:
                raise _pages.not_found(f"{name}: no run {value!r} in this store")
            runs.append(found[0])  # an older run: offered in the pickers too
        settings = run_settings(conn, [r.id for r in runs])
        models_a = queries.run_models(conn, run_a) if run_a else []
        models_b = models_a if run_b == run_a else queries.run_models(conn, run_b or "")
        pick_a, pick_b = _pick(models_a, models_b, run_a == run_b)
        model_a = q.get("model_a") or pick_a
        model_b = q.get("model_b") or pick_b
        problem = None
        result = None
        apart: tuple[list[str], list[str]] = ([], [])
        if run_a and run_b and model_a and model_b:
            if model_a not in models_a:
                problem = f"run {run_a} has no scores for model {model_a!r}"
            elif model_b not in models_b:
                problem = f"run {run_b} has no scores for model {model_b!r}"
            elif run_a == run_b and model_a == model_b:
                problem = "both sides are the same model of the same run: pick two models or runs"
            else:
                full = _comparison(conn, run_a, model_a, run_b, model_b)
                result = replace(full, differ=full.differ[offset : offset + PAGE], offset=offset)
                apart = _apart(conn, run_a, model_a, run_b, model_b)
        elif runs:
            problem = "pick two models (a run with one model is compared with another run)"
    return {
        "runs": runs,
        "settings": settings,
        "run_a": run_a,
        "run_b": run_b,
        "models_a": models_a,
        "models_b": models_b,
        "model_a": model_a,
        "model_b": model_b,
        "result": result,
        "setting_a": apart[0],
        "setting_b": apart[1],
        # The differing answers' columns: the checkpoint and what sets the side apart.
        "head_a": checkpoint(model_a) if model_a else None,
        "head_b": checkpoint(model_b) if model_b else None,
        "problem": problem,
        "offset": offset,
        "page": PAGE,
    }


@router.get("/compare", response_class=HTMLResponse, include_in_schema=False)
def compare_page(request: Request) -> HTMLResponse:
    """Pick two runs and models; see their paired comparison and where they differ."""
    return _pages.render(request, "compare.html", _view(request))


@router.get("/api/compare")
def api_compare(request: Request) -> dict[str, Any]:
    """The comparison as JSON (``run_a``, ``model_a``, ``run_b``, ``model_b``, ``offset``).

    Beside `Comparison`'s fields, ``setting_a`` and ``setting_b`` name what sets each side
    apart (``thinking off``...), as ``lmmprobe compare --format json`` does.
    """
    view = _view(request)
    if view["result"] is None:
        raise HTTPException(status_code=422, detail=view["problem"] or "nothing to compare")
    out = asdict(view["result"])
    out["setting_a"], out["setting_b"] = view["setting_a"], view["setting_b"]
    return out
