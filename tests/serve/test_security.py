"""`lmmprobe serve`'s guard: host check, access token, sessions, CSRF, body limits, headers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lmmprobe.serve.app import create_app
from lmmprobe.serve.security import (
    ACCESS_COOKIE,
    CONTENT_SECURITY_POLICY,
    MAX_BODY_BYTES,
    SESSION_COOKIE,
    access_url,
    is_loopback,
    new_access_token,
)
from lmmprobe.store import Store

from .test_arena_support import client_for, csrf_of, serving

TOKEN = "t0ken-for-tests"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    Store(path).close()
    return path


def _cookie_attrs(response: httpx.Response, name: str) -> str:
    # The name carries the server's port (two servers on one host keep their own cookies).
    for value in response.headers.get_list("set-cookie"):
        if value.split("=", 1)[0].startswith(name):
            return value
    raise AssertionError(f"no {name} cookie in {response.headers.get_list('set-cookie')}")


def test_every_response_carries_the_security_headers(db: Path) -> None:
    with client_for(db) as client:
        for path in ("/arena/leaderboard", "/arena/api/session", "/no/such/page"):
            r = client.get(path)
            assert r.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            assert "script-src 'self'" in r.headers["content-security-policy"]
            assert (
                "'unsafe-inline'"
                not in r.headers["content-security-policy"].split("script-src")[1].split(";")[0]
            )
            assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
            assert r.headers["x-content-type-options"] == "nosniff"
            assert r.headers["x-frame-options"] == "DENY"
            assert r.headers["referrer-policy"] == "no-referrer"


def test_pages_have_no_inline_script(db: Path) -> None:
    with client_for(db) as client:
        for path in ("/arena", "/arena/leaderboard"):
            page = client.get(path).text
            for tag in re.findall(r"<script\b[^>]*>", page):
                assert "src=" in tag, tag
            assert not re.search(r"\son[a-z]+\s*=", page)


def test_loopback_answers_only_loopback_host_names(db: Path) -> None:
    with client_for(db) as client:
        assert client.get("/arena/api/session").status_code == 200
        for host in ("localhost:8000", "[::1]:8000", "127.0.0.1"):
            assert client.get("/arena/api/session", headers={"host": host}).status_code == 200
        # A page that points its own name at 127.0.0.1 (DNS rebinding) gets nothing.
        r = client.get("/arena/api/session", headers={"host": "evil.example:8000"})
        assert r.status_code == 400 and "csrf" not in r.text


def test_a_token_is_needed_beyond_loopback(db: Path) -> None:
    with pytest.raises(ValueError, match="access token"):
        create_app(db, public=True)
    with pytest.raises(ValueError, match="empty"):
        create_app(db, token=" ", public=True)


def test_the_access_token_by_header_by_link_once_and_by_cookie(db: Path) -> None:
    with client_for(db, token=TOKEN, public=True) as client:
        # Any host name is fine when public; without a credential: 401, with a wrong one: 403.
        r = client.get("/arena/leaderboard", headers={"host": "lab-box:8000"})
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert client.get("/arena/api/leaderboard").status_code == 401
        assert (
            client.get(
                "/arena/api/leaderboard", headers={"authorization": "Bearer nope"}
            ).status_code
            == 403
        )
        assert (
            client.get(
                "/arena/api/leaderboard", headers={"authorization": f"Bearer {TOKEN}"}
            ).status_code
            == 200
        )
        assert client.get("/arena?token=nope").status_code == 403
        assert client.get("/arena/api/leaderboard").status_code == 401  # nothing was granted
        # The printed link: sets an HttpOnly SameSite=Strict cookie, then drops the token.
        r = client.get(f"/arena/leaderboard?token={TOKEN}&x=1")
        assert r.status_code == 200
        cookie = _cookie_attrs(r, ACCESS_COOKIE)
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert TOKEN not in cookie
        assert 'http-equiv="refresh"' in r.text and "/arena/leaderboard?x=1" in r.text
        assert TOKEN not in r.text
        # From now on the cookie is enough.
        assert client.get("/arena/api/leaderboard").status_code == 200
        assert client.get("/arena/leaderboard").status_code == 200


def test_sessions_are_cookie_bound_and_csrf_tokens_differ(db: Path) -> None:
    with client_for(db) as one, client_for(db) as two:
        r = one.get("/arena/api/session")
        cookie = _cookie_attrs(r, SESSION_COOKIE)
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        t1, t2 = csrf_of(one), csrf_of(two)
        assert t1 == csrf_of(one) and t1 != t2 and len(t1) >= 32
        page = one.get("/arena").text
        assert f'<meta name="csrf-token" content="{t1}">' in page
        # The session state stays on the server: the cookie is a random id, not data.
        assert "rater" not in cookie and t1 not in cookie


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_state_changing_requests_need_the_csrf_token(db: Path, method: str) -> None:
    with client_for(db) as client:
        token = csrf_of(client)
        r = client.request(method.upper(), "/arena/api/rater", json={"name": "x"})
        assert r.status_code == 403
        r = client.request(
            method.upper(),
            "/arena/api/rater",
            json={"name": "x"},
            headers={"X-CSRF-Token": token + "x"},
        )
        assert r.status_code == 403
        if method == "post":
            ok = client.post(
                "/arena/api/rater", json={"name": "x"}, headers={"X-CSRF-Token": token}
            )
            assert ok.status_code == 200
            form = client.post(
                "/arena/rater", data={"name": "y", "csrf_token": token}, follow_redirects=False
            )
            assert form.status_code == 303
            bad = client.post(
                "/arena/rater", data={"name": "y", "csrf_token": "no"}, follow_redirects=False
            )
            assert bad.status_code == 403
    with client_for(db) as stranger:
        # A fresh session cannot use another session's token.
        r = stranger.post("/arena/api/rater", json={"name": "z"}, headers={"X-CSRF-Token": token})
        assert r.status_code == 403


def test_large_bodies_are_refused_before_they_are_read(db: Path) -> None:
    with client_for(db) as client:
        token = csrf_of(client)
        big = b"x" * (MAX_BODY_BYTES + 1)
        r = client.post(
            "/arena/api/rater",
            content=big,
            headers={"X-CSRF-Token": token, "content-type": "application/json"},
        )
        assert r.status_code == 413
        assert client.request("GET", "/arena/api/session", content=big).status_code == 413


def test_a_streamed_body_past_the_limit_is_cut_off_on_a_real_server(db: Path) -> None:
    chunks_sent = 0

    def body() -> Iterator[bytes]:
        nonlocal chunks_sent
        for _ in range(64):  # 64 x 4 KiB, far past the limit; no Content-Length
            chunks_sent += 1
            yield b"y" * 4096

    with serving(create_app(db)) as base, httpx.Client(base_url=base) as client:
        token = client.get("/arena/api/session").json()["csrf_token"]
        r = client.post(
            "/arena/api/rater",
            content=body(),
            headers={"X-CSRF-Token": token, "content-type": "application/json"},
        )
        assert r.status_code == 413


def test_helpers_for_the_cli() -> None:
    a, b = new_access_token(), new_access_token()
    assert a != b and len(a) >= 40 and re.fullmatch(r"[A-Za-z0-9_-]+", a)
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert is_loopback("[::1]") and is_loopback("127.8.0.1")
    assert (
        not is_loopback("0.0.0.0")
        and not is_loopback("192.168.1.5")
        and not is_loopback("example.org")
    )
    assert access_url("127.0.0.1", 8000, None) == "http://127.0.0.1:8000/"
    assert access_url("0.0.0.0", 8080, "abc") == "http://127.0.0.1:8080/?token=abc"
    assert access_url("::", 8080, "a b").endswith("/?token=a+b")


def test_the_session_survives_other_local_apps_odd_cookies(db: Path) -> None:
    with client_for(db) as client:
        r = client.get("/arena/api/session")
        name, value = _cookie_attrs(r, SESSION_COOKIE).split(";", 1)[0].split("=", 1)
        token = r.json()["csrf_token"]
        client.cookies.clear()
        # Cookies are shared by every port of a host: another app's may be malformed.
        header = f'weird"one=1; no-equals-sign; {name}={value}; {ACCESS_COOKIE}="q'
        again = client.get("/arena/api/session", headers={"cookie": header})
        assert again.status_code == 200 and again.json()["csrf_token"] == token


def test_cookieless_requests_never_push_out_a_raters_session(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastapi.testclient import TestClient

    from lmmprobe.serve import security

    monkeypatch.setattr(security, "MAX_SESSIONS", 20)
    app = create_app(db)
    with (
        TestClient(app, base_url="http://127.0.0.1") as rater,
        TestClient(app, base_url="http://127.0.0.1") as loop,
    ):
        token = csrf_of(rater)
        assert rater.post(
            "/arena/api/rater", json={"name": "kim"}, headers={"X-CSRF-Token": token}
        ).is_success
        for _ in range(60):  # three times the limit, each without a cookie
            loop.cookies.clear()
            assert loop.get("/arena/api/session").status_code == 200
        # The rater's session (and name, and CSRF token) is still there.
        assert rater.get("/arena/api/session").json() == {"rater": "kim", "csrf_token": token}
        # A state-changing request without any session is refused and makes none.
        loop.cookies.clear()
        r = loop.post("/arena/api/rater", json={"name": "x"}, headers={"X-CSRF-Token": token})
        assert r.status_code == 403 and not r.headers.get_list("set-cookie")
