"""``lmmprobe serve``: the web app over the store (runs, samples, compare, arena).

Heavy imports (FastAPI, uvicorn, the app) wait until the command runs, so the rest of the CLI
does not pay for them and a missing ``serve`` extra fails here with the command to install it.
"""

from __future__ import annotations

import socket
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from lmmprobe._optional import require
from lmmprobe.cli._common import DbOption, console, fail
from lmmprobe.store import DEFAULT_DB

__all__ = ["serve"]


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port), or a clean exit saying why not."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        fail(f"--host {host}: not an address or a name this machine resolves ({exc.strerror})")
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        why = "is in use" if exc.errno in (98, 48) else f"cannot be bound ({exc.strerror})"
        fail(f"port {port} on {host} {why}: pass another --port (0 picks a free one)")
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def serve(
    db: DbOption = None,
    host: Annotated[
        str,
        typer.Option(
            help="Address to listen on. Anything but 127.0.0.1, localhost or ::1 requires an "
            "access token."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: a free one).")] = 8000,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="LMMPROBE_SERVE_TOKEN",
            help="Access token every request must carry; made up and printed with the URL when "
            "the host is not loopback and none is given.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Browse runs, samples and comparisons, and run HEMM's arena, in a web browser.

    Reads the store while runs write to it; prints the URL to open (with its token).
    """
    try:
        uvicorn, _, _ = require(
            "uvicorn", "fastapi", "jinja2", extra="serve", purpose="lmmprobe serve"
        )
    except ImportError as exc:
        fail(exc)
    from lmmprobe.serve.app import create_app
    from lmmprobe.serve.security import access_url, is_loopback, new_access_token
    from lmmprobe.store import StoreError

    path = Path(db) if db is not None else DEFAULT_DB
    public = not is_loopback(host)
    if public and not token:
        token = new_access_token()
    try:
        app = create_app(path, token=token, public=public)
    except (FileNotFoundError, StoreError, ValueError) as exc:
        fail(exc)
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    say = partial(console.print, markup=False, highlight=False, soft_wrap=True)
    # Never wrapped, whatever the width: scripts (and the tests) read the URL off this line.
    say(f"lmmprobe serve: {path} at {access_url(host, bound, token)}", no_wrap=True)
    if public:
        say(
            "listening beyond this machine: anyone with the URL above (its token) can read the store"
        )
    say("Ctrl+C stops it.")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
