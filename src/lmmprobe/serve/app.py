"""The web app over a store: `create_app` builds it, ``lmmprobe serve`` runs it with uvicorn.

Pages: ``/`` (runs, the running ones updating live), ``/runs/{run}`` (metrics and breakdowns),
``/runs/{run}/samples`` (every row, filtered and paged in SQL), ``/runs/{run}/samples/{sample}``
(one sample: images, prompt, every model's answer), ``/compare`` (two runs or two models), and
HEMM's arena (`lmmprobe.serve.arena`). Each page has its JSON beside it under ``/api/``.
Images come only from ``/images/{run}/{sample}/{index}``, by the references the store recorded,
and a video's frames only from ``/frames/{run}/{sample}/{index}`` (`lmmprobe.serve.frames`).

Every request passes `lmmprobe.serve.security` first (host check, access token, CSRF, size
limits, headers). The app only reads the store (through a pool of ``query_only`` connections,
so a running evaluation is never blocked), except for the arena's votes.
"""

from __future__ import annotations

import importlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import unquote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from lmmprobe.serve import _pages, arena, compare, frames, images, runs, samples, security
from lmmprobe.serve.security import ASGIApp, Message, Receive, Scope, Send
from lmmprobe.store import Store, StoreAccessError, StoreError, as_store_error
from lmmprobe.store.queries import Readers, is_time_limit
from lmmprobe.store.search import SearchIndexer

__all__ = ["STATIC", "create_app"]

log = logging.getLogger(__name__)

STATIC = Path(__file__).with_name("static")
"""The app's own CSS and scripts, served at ``/static`` (the page loads nothing from elsewhere)."""


def _load_before_serving() -> None:
    """Import what the compare page and the recipe images load lazily, before any request.

    Importing scipy initialises its own OpenBLAS, whose start-up retries a failed allocation
    forever (OpenMathLib/OpenBLAS#5289; seen with scipy 1.17's OpenBLAS 0.3.30), inside
    ``dlopen`` and so with the GIL held: when memory runs short during that
    import (an address-space limit, a full machine), every thread of the server stops, and a
    request in flight is never answered (issue 34: a client waited 60 s, and the server
    answered only once the limit was lifted). Done in a background thread after start-up,
    as it once was, that import raced the first requests; here it is finished before the
    server accepts a connection, and a request never waits on it.

    Only an optimisation otherwise: a module that cannot be imported (or that memory does
    not allow now) is reported by the page that needs it, so a failure here is left for it.
    """
    try:
        importlib.import_module("scipy.stats")
        images.register_renderers()
    except (ImportError, MemoryError):
        pass


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    _load_before_serving()  # uvicorn accepts connections once this startup is done
    # The text search's index of finished runs, built beside the store (never in it) while
    # the app serves; until a run's is ready, its searches read its rows.
    app.state.search_indexer = SearchIndexer(app.state.db_path)
    app.state.search_indexer.start()
    # The arena's writing store opens and checks the file in the background, before a vote.
    arena.start(app)
    try:
        yield
    finally:
        app.state.search_indexer.stop()
        arena.stop(app)
        app.state.readers.close()


class _Requests:
    """What the app reads of a request, made plain before its routes see it (an ASGI wrapper).

    - **HEAD is GET without a body.** FastAPI's routes answer GET only, so a HEAD (a link
      checker's, ``curl -I``) got 405: it is passed on as GET, and the body dropped on the way
      back (the headers, ``Content-Length`` included, are GET's), as HTTP says.
    - **Dot segments.** A sample or run named ``.`` or ``..`` is linked with a ``~`` before it
      (`_pages.quote_segment`), since a browser drops or climbs such a segment before
      sending; the mark is taken off here, so routes read the name as it is.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = scope.get("raw_path")
        plain = _pages.unquote_dot_segments(raw) if isinstance(raw, bytes) else None
        if plain is not None:
            scope = {**scope, "raw_path": plain, "path": unquote(plain.decode("latin-1"))}
        if scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_headers_only)


def _wants_json(request: Request) -> bool:
    return "/api/" in request.url.path or request.url.path.startswith("/api")


def create_app(db: str | Path, *, token: str | None = None, public: bool = False) -> FastAPI:
    """Build the app over the store at `db`.

    Args:
        db: The store file; it must exist. Opening it once here migrates an older store.
        token: The access token every request must carry (see `lmmprobe.serve.security`);
            None for none (only on loopback).
        public: Whether the server listens beyond loopback (then a token is required).

    Raises:
        FileNotFoundError: There is no store at `db`.
        StoreError: The store cannot be opened (damaged, newer, locked while migrating).
        ValueError: `public` without a token.

    """
    path = Path(db)
    if not path.is_file():
        raise FileNotFoundError(
            f"no store at {path}: run an evaluation first (`lmmprobe run`, or `make demo`), "
            "or pass --db with the store it wrote"
        )
    Store(path).close()  # creates nothing; migrates an older layout, settles dead runs
    app = FastAPI(
        title="lmmprobe", docs_url=None, redoc_url=None, openapi_url=None, lifespan=_lifespan
    )
    app.state.db_path = path.resolve()
    app.state.readers = Readers(app.state.db_path)
    app.state.public = public
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    for module in (runs, samples, compare, images, frames):
        app.include_router(module.router)
    app.include_router(arena.router)

    def _error(
        request: Request,
        status: int,
        detail: str,
        title: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        if _wants_json(request):
            return JSONResponse({"detail": detail}, status_code=status, headers=headers)
        # An arena page's error leads back to the arena, where a rater was; others to the runs.
        in_arena = request.url.path == "/arena" or request.url.path.startswith("/arena/")
        back = ("/arena", "Back to the arena") if in_arena else ("/", "Back to the runs")
        return _pages.render(
            request,
            "error.html",
            {
                "status": status,
                "detail": detail,
                "title": title or _pages.error_title(status),
                "back_href": back[0],
                "back_text": back[1],
            },
            status_code=status,
            headers=headers,
        )

    # Starlette's class, which FastAPI's extends: the router's own 404 (no such path) and 405
    # are pages too, not bare JSON.
    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # Every refusal the app raises on purpose (400 a bad name, 409 a stale battle, 404,
        # 410, 503...) is its own page with its status; never a 500 of the error page itself.
        return _error(request, exc.status_code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(StoreError)
    async def _store_fault(request: Request, exc: StoreError) -> Response:
        # The store file failed (damaged, locked, unreadable): its one-line message, on the
        # page and once on the server's terminal, never a traceback. Locked is temporary
        # (503: try again); the others last until someone fixes the file (500).
        locked = isinstance(exc, StoreAccessError) and exc.reason == "locked"
        log.warning("%s %s: %s", request.method, request.url.path, exc)
        return _error(request, 503 if locked else 500, str(exc), "The store cannot be read")

    @app.exception_handler(sqlite3.Error)
    async def _sqlite_error(request: Request, exc: sqlite3.Error) -> Response:
        if is_time_limit(exc):
            detail = (
                f"this page's query ran past {app.state.readers.time_limit_s:g} s and was "
                "stopped: narrow it (pick a model, or a longer search text) and try again"
            )
            return _error(request, 503, detail)
        # Reads through the store's connections arrive as StoreError already; any other
        # fault of the file is told the same way. A bug (bad SQL) stays the error it is.
        fault = as_store_error(exc, app.state.db_path)
        if fault is None:
            raise exc
        return await _store_fault(request, fault)

    @app.exception_handler(MemoryError)
    async def _out_of_memory(request: Request, exc: MemoryError) -> Response:
        # Parallel requests over a large store can exhaust memory for a moment: the request
        # may succeed again shortly, so a 503 "try again", never a 500 with a traceback.
        log.warning("%s %s: not enough memory", request.method, request.url.path)
        return _error(
            request,
            503,
            "not enough memory to answer this request now: try again shortly",
            headers={"Retry-After": "5"},
        )

    @app.exception_handler(RequestValidationError)
    async def _bad_request(request: Request, exc: RequestValidationError) -> Response:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}"
            for e in exc.errors()
        )
        return _error(request, 422, problems)

    app.add_middleware(_Requests)  # inside the security middleware, which sees HEAD as sent
    security.install(app, token=token, public=public)
    return app
