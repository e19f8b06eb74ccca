"""What keeps ``lmmprobe serve`` safe to run: access token, sessions, CSRF, limits, headers.

One ASGI middleware (`install`) guards every request before the app sees it:

- **Host check.** Bound to loopback, the app answers only requests addressed to ``localhost``,
  ``127.0.0.1`` or ``[::1]``, so a web page that points its own domain name at 127.0.0.1 (DNS
  rebinding) cannot read the store through a visitor's browser.
- **Access token.** With a token (required for any host other than loopback; the CLI makes one
  with `new_access_token` and prints the URL with it), a request needs either the cookie the
  token grants or an ``Authorization: Bearer TOKEN`` header. The printed URL carries
  ``?token=...`` once: that request sets the cookie (HttpOnly, SameSite=Strict) and forwards to
  the same address without the token, so it stays out of history and ``Referer``. Without a
  credential the answer is 401; with a wrong one, 403.
- **Sessions.** Every browser gets a random session id in an HttpOnly, SameSite=Strict cookie
  (a cookieless request gets a new one; sessions whose cookie came back are kept apart from
  new ones, so a loop of cookieless requests cannot push a rater's session out of memory);
  the session itself (its CSRF token, the arena's rater and current battle) stays in this
  process's memory, never in the cookie, so a rater cannot read which models they are about to
  judge. Sessions are lost when the server restarts (a rater enters their name again).
- **CSRF.** A POST, PUT, PATCH or DELETE needs the session's CSRF token (`csrf_token`) in an
  ``X-CSRF-Token`` header or a ``csrf_token`` form field, compared in constant time; without
  it the answer is 403 and the app never sees the request.
- **Bounded requests.** A body over `MAX_BODY_BYTES` is refused with 413 before it is read
  (from ``Content-Length``, or as soon as a streamed body passes the limit).
- **Headers.** A Content-Security-Policy (`CONTENT_SECURITY_POLICY`: scripts only from the app
  itself, no inline script, no framing), ``X-Content-Type-Options: nosniff``,
  ``X-Frame-Options: DENY`` and ``Referrer-Policy: no-referrer`` on every response.

Templates read the CSRF token as ``request.state.csrf_token`` (or `csrf_token(request)`); page
scripts read it from ``<meta name="csrf-token">`` and send it in the ``X-CSRF-Token`` header.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import ipaddress
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fastapi import FastAPI, Request

__all__ = [
    "ACCESS_COOKIE",
    "CONTENT_SECURITY_POLICY",
    "CSRF_FIELD",
    "CSRF_HEADER",
    "MAX_BODY_BYTES",
    "SESSION_COOKIE",
    "SecurityMiddleware",
    "Session",
    "access_url",
    "cookie_names",
    "csrf_token",
    "install",
    "is_loopback",
    "new_access_token",
    "session",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SESSION_COOKIE = "lmmprobe_session"
"""Cookie holding the random session id (HttpOnly, SameSite=Strict); `cookie_names` adds the
server's port (``lmmprobe_session_8000``)."""
ACCESS_COOKIE = "lmmprobe_access"
"""Cookie the access token grants (a keyed hash of the token, never the token itself); named
with the port as the session cookie is."""
CSRF_HEADER = "x-csrf-token"
"""Header a script sends the CSRF token in (``X-CSRF-Token``)."""
CSRF_FIELD = "csrf_token"
"""Form field an HTML form sends the CSRF token in."""
MAX_BODY_BYTES = 16 * 1024
"""Largest request body accepted; the app takes votes and short forms, never uploads."""
MAX_SESSIONS = 10_000
"""Sessions kept in memory per tier (new, returning); past this the least recently used one of
the tier is dropped. Read when the middleware is built."""
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
"""Sent on every response: scripts only from the app's own files (no inline script, no
``eval``); inline styles are allowed (plotly sets them), nothing may frame the pages."""

_UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_LOOPBACK_NAMES = frozenset({"localhost", "localhost."})
_SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
)


def new_access_token() -> str:
    """A fresh random access token (32 bytes from `secrets`, URL-safe)."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    """Whether a host name or address only reaches this machine (localhost, 127.0.0.0/8, ::1)."""
    name = host.strip().strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def access_url(host: str, port: int, token: str | None) -> str:
    """The URL to print for the user: with ``?token=`` when the server needs one."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    if shown in ("0.0.0.0", "[::]"):
        # Bound to every interface: this machine's own name reaches it from elsewhere too.
        shown = "127.0.0.1"
    url = f"http://{shown}:{port}/"
    return f"{url}?{urlencode({'token': token})}" if token else url


@dataclass
class Session:
    """One browser's server-side session.

    Attributes:
        id: The random id its cookie holds.
        csrf_token: The token its state-changing requests must send back.
        data: What pages keep for this browser (the arena's rater and current battle).
        last_seen: Unix time of its last request.

    """

    id: str
    csrf_token: str
    data: dict[str, Any] = field(default_factory=dict)
    last_seen: float = field(default_factory=time.time)


class _Sessions:
    """Sessions in memory, in two least-recently-used tiers of `MAX_SESSIONS` each.

    A request without a session cookie gets a *new* session; only when its cookie comes back
    (the browser kept it) does the session move to the *returning* tier. A client that never
    keeps cookies (a script, a crawler, a loop of cookieless requests) therefore only ever
    pushes out other new sessions, never a rater who has been using the app.
    """

    def __init__(self, limit: int | None = None) -> None:
        self._limit = MAX_SESSIONS if limit is None else limit
        self._returning: OrderedDict[str, Session] = OrderedDict()
        self._new: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session_id: str | None) -> Session | None:
        if not session_id:
            return None
        with self._lock:
            found = self._returning.get(session_id)
            if found is not None:
                self._returning.move_to_end(session_id)
            else:
                found = self._new.pop(session_id, None)
                if found is None:
                    return None
                self._returning[session_id] = found  # its cookie came back: keep it longer
                while len(self._returning) > self._limit:
                    self._returning.popitem(last=False)
            found.last_seen = time.time()
            return found

    def new(self) -> Session:
        made = Session(id=secrets.token_urlsafe(32), csrf_token=secrets.token_urlsafe(32))
        with self._lock:
            self._new[made.id] = made
            while len(self._new) > self._limit:
                self._new.popitem(last=False)
        return made

    def __len__(self) -> int:
        with self._lock:
            return len(self._returning) + len(self._new)


def _cookies(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """The request's cookies, read leniently.

    Cookies are shared by every port of a host, so other local apps' cookies arrive here too;
    a strict parser (``http.cookies``) stops at the first one it dislikes and would lose ours.
    """
    found: dict[str, str] = {}
    for name, value in headers:
        if name != b"cookie":
            continue
        for part in value.decode("latin-1").split(";"):
            key, sep, val = part.strip().partition("=")
            if sep and key and key not in found:
                found[key] = val.strip().strip('"')
    return found


def cookie_names(scope: Scope) -> tuple[str, str]:
    """The session and access cookie names for the server that got this request.

    Cookies do not tell ports apart, so two servers on one host (ports 8000 and 8001) would
    overwrite each other's session; the port in the name keeps them apart.
    """
    server = scope.get("server")
    port = server[1] if isinstance(server, tuple | list) and len(server) > 1 else None
    suffix = f"_{port}" if isinstance(port, int) else ""
    return SESSION_COOKIE + suffix, ACCESS_COOKIE + suffix


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None


def _cookie_header(name: str, value: str, *, secure: bool) -> tuple[bytes, bytes]:
    attrs = f"{name}={value}; Path=/; HttpOnly; SameSite=Strict"
    if secure:
        attrs += "; Secure"
    return (b"set-cookie", attrs.encode("latin-1"))


async def _plain(
    send: Send,
    status: int,
    title: str,
    message: str,
    *,
    extra: list[tuple[bytes, bytes]] | None = None,
    head: str = "",
) -> None:
    """Answer with a small self-contained HTML page (no template: the app never ran)."""
    body = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)} · lmmprobe</title>{head}</head>"
        f"<body><h1>{html.escape(title)}</h1><p>{message}</p></body></html>"
    ).encode()
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        *_SECURITY_HEADERS,
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _BodyTooLarge(Exception):
    pass


class SecurityMiddleware:
    """The ASGI middleware `install` adds; see the module docstring for what it enforces.

    Args:
        app: The wrapped ASGI app.
        token: The access token every request must present, or None (loopback only).
        public: Whether the server listens beyond loopback (then a token is required and any
            Host header is accepted; otherwise only loopback host names are).
        max_body_bytes: Largest request body accepted.

    Raises:
        ValueError: `public` without a token, or an empty token.

    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None = None,
        public: bool = False,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        if token is not None and not token.strip():
            raise ValueError("the access token must not be empty: leave it out to make one")
        if public and token is None:
            raise ValueError(
                "serving beyond 127.0.0.1 needs an access token: pass one, or let "
                "`lmmprobe serve` make one (it prints the URL with it)"
            )
        self.app = app
        self.token = token
        self.public = public
        self.max_body_bytes = max_body_bytes
        self.sessions = _Sessions()
        # The access cookie holds a keyed hash of the token: a stolen cookie file does not
        # reveal the token itself (which also works as a Bearer credential).
        self._access_value = (
            hmac.new(token.encode(), b"lmmprobe-access-cookie", hashlib.sha256).hexdigest()
            if token is not None
            else None
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Guard one request (or websocket) and pass it on, or answer it here."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)  # lifespan
            return
        headers: list[tuple[bytes, bytes]] = list(scope.get("headers") or [])
        secure = scope.get("scheme") == "https"
        if not self.public:
            host = (_header(headers, b"host") or "").strip()
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if not is_loopback(name):
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                await _plain(
                    send,
                    400,
                    "Unknown host",
                    "This server listens on loopback only and answers requests addressed to "
                    "localhost or 127.0.0.1. Open the URL <code>lmmprobe serve</code> printed.",
                )
                return
        cookies = _cookies(headers)
        session_cookie, _ = cookie_names(scope)
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send, headers, cookies)
            return
        if self.token is not None and not await self._admit(scope, headers, cookies, send):
            return
        found = self.sessions.get(cookies.get(session_cookie))
        if found is None and scope["method"] in _UNSAFE_METHODS:
            # No session, so no CSRF token it could carry: refuse without making one.
            await _plain(
                send,
                403,
                "Forbidden",
                "This request has no session (cookies off, or the server restarted). Reload "
                "the page and try again.",
            )
            return
        fresh = found is None
        current = found if found is not None else self.sessions.new()
        state = scope.setdefault("state", {})
        state["session"] = current
        state["csrf_token"] = current.csrf_token

        length = _header(headers, b"content-length")
        if length is not None:
            try:
                too_big = int(length) > self.max_body_bytes
            except ValueError:
                await _plain(send, 400, "Bad request", "The Content-Length header is not a number.")
                return
            if too_big:
                await self._too_large(send)
                return
        try:
            body = await self._read_body(receive)
        except _BodyTooLarge:
            await self._too_large(send)
            return
        if scope["method"] in _UNSAFE_METHODS and not self._csrf_ok(current, headers, body):
            await _plain(
                send,
                403,
                "Forbidden",
                "This request lacks the page's CSRF token. Reload the page and try again.",
            )
            return

        async def send_guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = [
                    (k, v)
                    for k, v in message.get("headers") or []
                    if k.lower() not in {h for h, _ in _SECURITY_HEADERS}
                ]
                out.extend(_SECURITY_HEADERS)
                if fresh:
                    out.append(_cookie_header(session_cookie, current.id, secure=secure))
                message = {**message, "headers": out}
            await send(message)

        await self.app(scope, self._replay(body, receive), send_guarded)

    async def _admit(
        self,
        scope: Scope,
        headers: list[tuple[bytes, bytes]],
        cookies: dict[str, str],
        send: Send,
    ) -> bool:
        """Whether the request carries the access token; if not, answer it and say False."""
        assert self.token is not None and self._access_value is not None
        _, access_cookie = cookie_names(scope)
        if hmac.compare_digest(
            cookies.get(access_cookie, "").encode(), self._access_value.encode()
        ):
            return True
        auth = _header(headers, b"authorization")
        if auth is not None:
            scheme, _, given = auth.partition(" ")
            if scheme.lower() == "bearer" and hmac.compare_digest(
                given.strip().encode(), self.token.encode()
            ):
                return True
            await _plain(send, 403, "Forbidden", "The Authorization header holds a wrong token.")
            return False
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given_tokens = [v for k, v in query if k == "token"]
        if given_tokens:
            if scope["method"] in ("GET", "HEAD") and hmac.compare_digest(
                given_tokens[0].encode(), self.token.encode()
            ):
                # Set the cookie and go on to the same page without the token in its address.
                # A page that refreshes itself, not a redirect: a redirect would keep the
                # navigation cross-site when the link was opened from another site, and the
                # SameSite=Strict cookie would not be sent with it.
                rest = urlencode([(k, v) for k, v in query if k != "token"])
                target = scope.get("path", "/") + (f"?{rest}" if rest else "")
                safe = html.escape(target, quote=True)
                await _plain(
                    send,
                    200,
                    "Signed in",
                    f'Opening <a href="{safe}">lmmprobe</a>…',
                    extra=[
                        _cookie_header(
                            access_cookie, self._access_value, secure=scope.get("scheme") == "https"
                        )
                    ],
                    head=f'<meta http-equiv="refresh" content="0; url={safe}">',
                )
                return False
            await _plain(
                send, 403, "Forbidden", "The token in this address is wrong or out of date."
            )
            return False
        await _plain(
            send,
            401,
            "Access token needed",
            "This lmmprobe server needs its access token: open the full URL "
            "<code>lmmprobe serve</code> printed (it ends with <code>?token=…</code>), or send "
            "<code>Authorization: Bearer TOKEN</code>.",
            extra=[(b"www-authenticate", b"Bearer")],
        )
        return False

    async def _read_body(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _BodyTooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    def _replay(self, body: bytes, receive: Receive) -> Receive:
        """The `receive` the app gets: the body read here, then the client's messages."""
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for the disconnect

        return replay

    async def _websocket(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: list[tuple[bytes, bytes]],
        cookies: dict[str, str],
    ) -> None:
        """Pass a websocket on only with the access cookie (if needed) and a same-site Origin."""
        session_cookie, access_cookie = cookie_names(scope)
        admitted = self._access_value is None or hmac.compare_digest(
            cookies.get(access_cookie, "").encode(), self._access_value.encode()
        )
        origin = _header(headers, b"origin")
        host = _header(headers, b"host") or ""
        same_origin = origin is None or origin.split("://", 1)[-1] == host
        found = self.sessions.get(cookies.get(session_cookie))
        if not (admitted and same_origin and found is not None):
            await send({"type": "websocket.close", "code": 1008})
            return
        state = scope.setdefault("state", {})
        state["session"] = found
        state["csrf_token"] = found.csrf_token
        await self.app(scope, receive, send)

    def _csrf_ok(self, current: Session, headers: list[tuple[bytes, bytes]], body: bytes) -> bool:
        given = _header(headers, CSRF_HEADER.encode())
        if given is None:
            kind = (_header(headers, b"content-type") or "").split(";")[0].strip().lower()
            if kind == "application/x-www-form-urlencoded":
                fields = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
                given = next((v for k, v in fields if k == CSRF_FIELD), None)
        return given is not None and hmac.compare_digest(
            given.encode(), current.csrf_token.encode()
        )

    async def _too_large(self, send: Send) -> None:
        await _plain(
            send,
            413,
            "Request too large",
            f"Requests to this server carry at most {self.max_body_bytes} bytes.",
        )


def install(
    app: FastAPI,
    *,
    token: str | None = None,
    public: bool = False,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> None:
    """Guard `app` with `SecurityMiddleware` (added last, so it runs first on every request).

    Args:
        app: The FastAPI app.
        token: The access token to require, or None (allowed only when not `public`).
        public: Whether the server listens beyond loopback.
        max_body_bytes: Largest request body accepted.

    Raises:
        ValueError: `public` without a token, or an empty token.

    """
    # Built here too, so a bad configuration fails at startup and not at the first request.
    SecurityMiddleware(_refuse, token=token, public=public, max_body_bytes=max_body_bytes)
    app.add_middleware(
        SecurityMiddleware, token=token, public=public, max_body_bytes=max_body_bytes
    )
    app.state.security = {"token_required": token is not None, "public": public}


async def _refuse(scope: Scope, receive: Receive, send: Send) -> None:  # pragma: no cover
    raise RuntimeError("placeholder app: never called")


def session(request: Request) -> Session:
    """The request's server-side session (made by the middleware).

    Raises:
        RuntimeError: The app was built without `install` (no session on the request).

    """
    found = getattr(request.state, "session", None)
    if not isinstance(found, Session):
        raise RuntimeError(
            "no session on this request: build the app with lmmprobe.serve.security.install"
        )
    return found


def csrf_token(request: Request) -> str:
    """The CSRF token of the request's session, for a form field or ``<meta name=csrf-token>``."""
    return session(request).csrf_token
