"""What every page of the app shares: the Jinja2 environment, `render`, the store connection.

Templates are rendered with autoescaping on: every text from data, models and raters goes
into the page as text. The app keeps its read connections in ``app.state.readers``
(`lmmprobe.store.queries.Readers`); a route borrows one with `connection`.
"""

from __future__ import annotations

import math
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse

from lmmprobe.metrics import MetricValue, metric_digits
from lmmprobe.report import format_metric
from lmmprobe.report._labels import short_spec
from lmmprobe.store.queries import Readers

__all__ = [
    "TEMPLATES",
    "connection",
    "environment",
    "error_title",
    "not_found",
    "quote_segment",
    "render",
    "unquote_dot_segments",
]

TEMPLATES = Path(__file__).with_name("templates")
"""The folder of the app's templates (``base.html`` and every page)."""


def _metric(value: Any, ci: bool = True, name: str = "") -> str:
    """A stored metric (``{value, low, high, n}``) as ``0.734 [0.70, 0.77]``; ``-`` when absent.

    `name` gives the metric's decimals (`lmmprobe.metrics.metric_digits`).
    """
    if not isinstance(value, Mapping):
        return "-"
    v = value.get("value")
    if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
        return "-"
    low, high = value.get("low"), value.get("high")
    n = value.get("n")
    return format_metric(
        MetricValue(
            float(v),
            float(low) if isinstance(low, int | float) else None,
            float(high) if isinstance(high, int | float) else None,
            n if isinstance(n, int) else 0,
        ),
        ci=ci,
        digits=metric_digits(name) if name else 3,
    )


def _when(ts: Any) -> str:
    """A timestamp as local ``YYYY-mm-dd HH:MM:SS``."""
    if not isinstance(ts, int | float):
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(ts)))


def _duration(seconds: Any) -> str:
    """``3 s``, ``4 min 10 s``, ``2 h 5 min``."""
    if not isinstance(seconds, int | float) or seconds < 0:
        return "-"
    s = int(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


_DOT_SEGMENT = re.compile(r"~*\.{1,2}")
"""A segment a browser drops or climbs (``.``, ``..``), with the ``~`` marks `quote_segment`
adds before one (``~.``, ``~~..``)."""


def quote_segment(text: Any) -> str:
    """One URL path segment: every character that is not plainly safe percent-encoded.

    A segment of ``.`` or ``..`` is one a browser (and any URL library following the URL
    standard) normalises away before sending, percent-encoded (``%2E``) or not: a sample named
    ``..`` linked as ``/runs/R/samples/..`` opened the run's page. Such a segment is written
    with a ``~`` before it (``~..``), and one already made of ``~`` marks and one or two dots
    gets one more, so every name reads back as it was (`unquote_dot_segments`).
    """
    segment = quote(str(text), safe="")
    return "~" + segment if _DOT_SEGMENT.fullmatch(segment) else segment


def unquote_dot_segments(raw_path: bytes) -> bytes | None:
    """A request's raw path with `quote_segment`'s ``~`` mark dropped from each marked segment.

    None when no segment is marked (the path is left as it came). Read on the raw path, whose
    ``%2F`` still separates nothing, so a name holding "/" keeps its segments whole.
    """
    segments = raw_path.split(b"/")
    marked = False
    for i, segment in enumerate(segments):
        if segment.startswith(b"~") and _DOT_SEGMENT.fullmatch(segment.decode("latin-1")):
            segments[i] = segment[1:]
            marked = True
    return b"/".join(segments) if marked else None


def _query(params: Mapping[str, Any]) -> str:
    """A query string of the parameters that are set (None and "" left out)."""
    return urlencode({k: v for k, v in params.items() if v not in (None, "")})


def _pct(value: Any) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return "0"
    return f"{max(0.0, min(1.0, float(value))) * 100:.1f}"


def environment() -> jinja2.Environment:
    """The Jinja2 environment of the app's templates (autoescape on, undefined is an error)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        metric=_metric,
        when=_when,
        duration=_duration,
        seg=quote_segment,
        short=short_spec,
        pct=_pct,
    )
    env.globals.update(query=_query)
    return env


_ENV = environment()


def _csrf(request: Request) -> str:
    token = getattr(request.state, "csrf_token", None)
    if isinstance(token, str):
        return token
    try:
        from lmmprobe.serve.security import csrf_token
    except ImportError:  # pragma: no cover - the security module ships with the app
        return ""
    try:
        return csrf_token(request)
    except RuntimeError:  # an app built without the security middleware (never in the CLI)
        return ""


def render(
    request: Request,
    name: str,
    context: Mapping[str, Any] | None = None,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> HTMLResponse:
    """Render template `name` with `context`, the request and its CSRF token.

    Args:
        request: The request (templates read ``request.state.csrf_token`` and the path).
        name: A template file name under `TEMPLATES`.
        context: The page's values.
        status_code: The response's status.
        headers: Extra response headers (e.g. an error's ``Retry-After``).

    """
    values = {"request": request, "csrf_token": _csrf(request), "now": time.time()}
    values.update(context or {})
    html = _ENV.get_template(name).render(values)
    return HTMLResponse(html, status_code=status_code, headers=dict(headers or {}))


_ERROR_TITLES = {
    400: "Bad request",
    404: "Not found",
    409: "Not possible now",
    410: "No longer stored",
    413: "Request too large",
    422: "Bad request",
    503: "Try again shortly",
}
"""The error page's heading for the statuses the app answers on purpose."""


def error_title(status: int) -> str:
    """The heading of the error page for HTTP `status` (``Not found``, ``Bad request``...).

    Args:
        status: The response's HTTP status.

    Returns:
        The app's own wording, else the standard reason phrase, else ``Error STATUS``.

    """
    if status in _ERROR_TITLES:
        return _ERROR_TITLES[status]
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return f"Error {status}"


@contextmanager
def connection(request: Request, time_limit_s: float | None = None) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the app's store for the duration of the block.

    Args:
        request: The request (the app's readers are on its ``app.state``).
        time_limit_s: Stop its queries after this many seconds (default: the readers').

    """
    readers: Readers = request.app.state.readers
    with readers.connection(time_limit_s) as conn:
        yield conn


def not_found(what: str) -> HTTPException:
    """A 404 naming what was not found (the page shows it as text)."""
    return HTTPException(status_code=404, detail=what)
