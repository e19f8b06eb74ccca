"""The app's own refusals through the real ``lmmprobe serve``: each is a page with its status.

A rater name of spaces (400) or a stale battle (409) once answered with a 500 and a 100-line
traceback on the server's terminal: the error page read a heading it was never given.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi import HTTPException
from fastapi.testclient import TestClient

from lmmprobe.serve.app import create_app

from .test_serve_cli import serving


def _page(r: httpx.Response, status: int, heading: str, detail: str) -> None:
    """`r` is the app's HTML error page for `status`, headed `heading`, saying `detail`."""
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("text/html")
    assert f"<h1>{heading}</h1>" in r.text and detail in r.text
    assert "Traceback" not in r.text


def test_every_refusal_of_the_app_is_a_page_with_its_status(demo_db: tuple[Path, str]) -> None:
    db, run_id = demo_db
    log: list[str] = []
    with serving("--db", str(db), log=log) as url, httpx.Client(base_url=url, timeout=20) as c:
        token = c.get("/arena/api/session").json()["csrf_token"]
        form = {"csrf_token": token}
        spaces = c.post("/arena/rater", data={**form, "name": "   "})
        # Three spaces: blank, not "1 to 80 characters" (it had 3); back to the arena.
        _page(spaces, 400, "Bad request", "a rater name cannot be blank")
        assert '<a href="/arena">Back to the arena</a>' in spaces.text
        assert "Back to the runs" not in spaces.text
        runs = c.post("/arena/runs", data={**form, "run": "nope"})
        _page(runs, 400, "Bad request", "run &#39;nope&#39; offers no battles")
        assert c.post("/arena/rater", data={**form, "name": "ana"}).status_code == 303
        stale = c.post("/arena/vote", data={**form, "battle": "stale-id", "vote": "a"})
        _page(stale, 409, "Not possible now", "this battle is no longer yours to vote on")
        _page(c.get("/runs/nope"), 404, "Not found", "nope")
        assert '<a href="/">Back to the runs</a>' in c.get("/runs/nope").text
        _page(c.get(f"/runs/{run_id}/samples/nope"), 404, "Not found", "nope")
        _page(c.get("/no/such/page"), 404, "Not found", "Not Found")
        _page(c.get("/arena/vote"), 405, "Method Not Allowed", "Method Not Allowed")
        _page(c.get("/?offset=x"), 422, "Bad request", "offset")
        _page(c.get(f"/runs/{run_id}/samples?stage=nope"), 422, "Bad request", "stage")
        long = c.post("/arena/rater", data={**form, "name": "x" * 81})
        _page(long, 400, "Bad request", "a rater name has at most 80 characters (this one has 81)")
        big = c.post("/arena/rater", data={**form, "name": "x" * 40_000})
        _page(big, 413, "Request too large", "at most")
        # The JSON API answers the same refusals as JSON.
        api = c.post("/arena/api/rater", json={"name": " "}, headers={"X-CSRF-Token": token})
        assert api.status_code == 400 and api.json()["detail"].startswith("a rater name")
        assert c.get("/api/runs/nope").json() == {"detail": "no run 'nope' in this store"}
    assert "Traceback" not in log[0] and "Internal Server Error" not in log[0], log[0]


# A rater name no page can show, as the re-test of issue 34 sent it: JSON escapes, so a lone
# surrogate arrives as valid JSON. It gave a 500, then poisoned the session (/arena, the
# battle and the session all 500); NUL and a right-to-left override were stored.
_BAD_NAMES = [
    (b'{"name": "\\ud800"}', "a lone surrogate (U+D800 at character 1)"),
    (b'{"name": "  \\udfff\\ud800 "}', "a lone surrogate (U+DFFF at character 1)"),
    (b'{"name": "a\\u0000b"}', "a control character (U+0000 at character 2)"),
    (b'{"name": "\\u202eevil"}', "an invisible format character (U+202E at character 1)"),
    (b'{"name": "ana\\u2066x"}', "an invisible format character (U+2066 at character 4)"),
]


def test_a_rater_name_no_page_can_show_is_refused_and_the_session_kept(
    demo_db: tuple[Path, str],
) -> None:
    log: list[str] = []
    with serving("--db", str(demo_db[0]), log=log) as url, httpx.Client(base_url=url) as c:
        token = c.get("/arena/api/session").json()["csrf_token"]
        headers = {"X-CSRF-Token": token, "Content-Type": "application/json"}
        for body, why in _BAD_NAMES:
            r = c.post("/arena/api/rater", content=body, headers=headers)
            assert r.status_code == 400, (body, r.status_code, r.text[:200])
            assert r.json()["detail"].startswith(f"a rater name cannot hold {why}: ")
            # Nothing kept: every page of the session still answers.
            assert c.get("/arena/api/session").json()["rater"] is None
            assert c.get("/arena/api/battle").status_code == 409
            assert c.get("/arena").status_code == 200
        form = c.post("/arena/rater", data={"csrf_token": token, "name": "ana\x00"})
        _page(form, 400, "Bad request", "a rater name cannot hold a control character")
        # Joiners (emoji sequences, Persian and Indic names) and non-Latin text stay names.
        for name in ["\U0001f469\u200d\U0001f52c", "\u0645\u06cc\u200c\u0631\u0648", "Zoë  Ng "]:
            r = c.post("/arena/api/rater", json={"name": name}, headers={"X-CSRF-Token": token})
            assert r.status_code == 200 and r.json()["rater"] == " ".join(name.split())
            assert c.get("/arena").status_code == 200
    assert "Traceback" not in log[0] and "Internal Server Error" not in log[0], log[0]


# Re-test 19 of issue 34 (#16): the vote page's form sent a name whose bytes are no UTF-8; the
# form decoder read them as U+FFFD and the rater was named "\ufffd\ufffd\ufffd".
_BAD_FORM_NAMES = [
    (b"%ED%A0%80", "a lone surrogate (U+D800 at character 1)"),  # CESU: an encoded surrogate
    (b"ana%FF", "a lone surrogate (U+DCFF at character 4)"),
    (b"ana\xff", "a lone surrogate (U+DCFF at character 4)"),  # the byte itself, unencoded
]


def test_a_forms_name_that_is_no_utf8_is_refused_as_the_json_endpoint_refuses_it(
    demo_db: tuple[Path, str],
) -> None:
    log: list[str] = []
    with serving("--db", str(demo_db[0]), log=log) as url, httpx.Client(base_url=url) as c:
        token = c.get("/arena/api/session").json()["csrf_token"]
        kind = {"Content-Type": "application/x-www-form-urlencoded"}
        for name, why in _BAD_FORM_NAMES:
            body = b"csrf_token=" + token.encode() + b"&name=" + name
            r = c.post("/arena/rater", content=body, headers=kind)
            _page(r, 400, "Bad request", f"a rater name cannot hold {why}: ")
            assert c.get("/arena/api/session").json()["rater"] is None
        # UTF-8 as a browser sends it stays the name typed (a multipart form too).
        body = b"csrf_token=" + token.encode() + b"&name=Zo%C3%AB+%E2%9C%93"
        assert c.post("/arena/rater", content=body, headers=kind).status_code == 303
        assert c.get("/arena/api/session").json()["rater"] == "Zo\u00eb \u2713"
        parts = {"name": (None, "Ng\u00e9".encode())}
        multipart = c.post("/arena/rater", files=parts, headers={"X-CSRF-Token": token})
        assert multipart.status_code == 303
        assert c.get("/arena/api/session").json()["rater"] == "Ng\u00e9"
    assert "Traceback" not in log[0] and "Internal Server Error" not in log[0], log[0]


@pytest.mark.parametrize(
    ("status", "heading"),
    [(400, "Bad request"), (404, "Not found"), (409, "Not possible now"),
     (410, "No longer stored"), (413, "Request too large"), (422, "Bad request"),
     (500, "Internal Server Error"), (503, "Try again shortly"), (418, "I'm a Teapot")],
)  # fmt: skip
def test_each_status_a_route_raises_has_a_heading(
    demo_db: tuple[Path, str], status: int, heading: str
) -> None:
    # 410 and 503 need a race (an answer gone mid-battle, raters drawing at once): a route of
    # the real app raising the status stands in for it.
    app = create_app(demo_db[0])

    @app.get("/raise/{code}")
    def _raise(code: int) -> None:
        raise HTTPException(code, f"refused with {code}", headers={"Retry-After": "3"})

    with TestClient(app, base_url="http://127.0.0.1") as c:
        r = c.get(f"/raise/{status}")
        _page(r, status, heading.replace("'", "&#39;"), f"refused with {status}")
        assert r.headers["retry-after"] == "3"
        api = c.get(f"/api/raise/{status}")
        assert api.status_code == 404  # no such API route: JSON, not a page
        assert api.json() == {"detail": "Not Found"}
