"""A URL password holding punctuation is never shown or recorded (re-test 20 of issue 34, #1).

The redaction read a password up to the first character of shell punctuation, a space, ``/``,
``?``, ``#`` or ``[``: ``http://u:pa;ss@host`` (also ``& | ( ) { } < > ` ] [`` and a space)
left all or part of the password in every file of a run that httpx sent without complaint
(results.json, results.md, the store, the terminal's legend), and ``u:pa/ss@host`` (which no
client can send: the ``/`` ends the host part) was quoted whole in the spec's one-line error,
with the password's first part named as the port. An openai spec with no model name
(``openai:@http://u:pw@host/v1``) quoted its password too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.bounded import bounded_each
from tests.console import lmmprobe

from lmmprobe._secrets import REDACTED, redact_spec, redact_text, redact_urls, shown_spec
from lmmprobe.models.api_keys import scrub_secrets
from lmmprobe.testing.openai_server import FakeOpenAIServer

SECRET = "Hunter2SecretPart"
TAIL = "TailOfThePassword"

# Passwords a generator writes (or a passphrase), which httpx sends as the URL's userinfo.
SENT = [";", "&", "|", "(", ")", "{", "}", "<", ">", "`", "'", '"', " ", "&x(y{z|w<"]
# Characters that end a URL's host part: the URL cannot be sent; refused, unshown.
REFUSED = ["/", "?", "#", "[", "]"]


def _password(glue: str) -> str:
    return f"{SECRET}{glue}{TAIL}"


def _nothing_recorded(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert SECRET.encode() not in data and TAIL.encode() not in data, path


@pytest.mark.parametrize("glue", SENT)
def test_a_sent_password_with_punctuation_is_never_recorded_or_shown(
    tmp_path: Path, glue: str
) -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url.replace("://", f"://user:{_password(glue)}@", 1)
        ran = lmmprobe("run", "-m", f"openai:fake-vlm@{url}", "--limit", "1",
                       "--db", tmp_path / "db", "--out", tmp_path / "o",
                       OPENAI_API_KEY="test-key")  # fmt: skip
        shown = lmmprobe("runs", "--db", tmp_path / "db")
    out = ran.stdout + ran.stderr + shown.stdout + shown.stderr
    assert ran.returncode == 0, out
    assert SECRET not in out and TAIL not in out, out
    assert f"user:{REDACTED}@127.0.0.1" in ran.stdout, ran.stdout
    _nothing_recorded(tmp_path)


@pytest.mark.parametrize("glue", REFUSED)
def test_a_password_a_url_cannot_carry_is_refused_without_showing_it(
    tmp_path: Path, glue: str
) -> None:
    spec = f"openai:m@http://user:{_password(glue)}@127.0.0.1:9/v1"
    for args in (["run", "-m", spec], ["run", "-m", spec, "--dry-run"],
                 ["run", "-m", "random", "--judge", spec, "--judge-when", "always"]):  # fmt: skip
        proc = lmmprobe(*args, "--limit", "1", "--db", tmp_path / "db", "--out", tmp_path / "o")
        out = proc.stdout + proc.stderr
        assert proc.returncode == 2, out
        assert "Traceback" not in out
        assert SECRET not in out and TAIL not in out, out
        assert f"user:{REDACTED}@127.0.0.1" in proc.stderr, proc.stderr
    _nothing_recorded(tmp_path)


def test_the_refusal_says_what_to_do_about_a_slash_in_a_password(tmp_path: Path) -> None:
    proc = lmmprobe("run", "-m", f"openai:m@http://user:{_password('/')}@127.0.0.1:9/v1",
                    "--db", tmp_path / "db")  # fmt: skip
    assert proc.returncode == 2
    assert "percent-encoded (%2F, %3F, %23)" in proc.stderr, proc.stderr
    assert "has port" not in proc.stderr


def test_a_spec_with_no_model_name_does_not_show_its_password(tmp_path: Path) -> None:
    proc = lmmprobe("run", "-m", f"openai:@http://user:{SECRET}@127.0.0.1:9/v1",
                    "--db", tmp_path / "db")  # fmt: skip
    assert proc.returncode == 2
    assert "expected MODEL@BASE_URL" in proc.stderr, proc.stderr
    assert SECRET not in proc.stdout + proc.stderr


@pytest.mark.parametrize("glue", [g for g in SENT + REFUSED if not g.isspace()])
def test_every_redaction_hides_the_whole_password(glue: str) -> None:
    spec = f"openai:m@http://user:{_password(glue)}@h.example:8000/v1"
    for shown in (redact_spec(spec), shown_spec(spec), redact_text(spec), redact_urls(spec),
                  scrub_secrets(spec)):  # fmt: skip
        assert SECRET not in shown and TAIL not in shown, shown
        assert "h.example" in shown


@pytest.mark.parametrize(
    "text",
    ["openai:m@http://h:8000/v1", "openai:m@http://h/v1/x@y", "see http://h:8000 or me@x.org",
     "see http://h:8000 and mail me@x.org now",
     "openai:m@https://api.example/v1,price=1:2", "http://h/a?b=c@d"],
)  # fmt: skip
def test_urls_without_credentials_are_kept(text: str) -> None:
    for shown in (redact_urls(text), redact_text(text), redact_spec(text)):
        assert shown == text


def test_many_urls_are_read_in_linear_time() -> None:
    n = 100_000
    texts = {
        "schemes": "http://" * (n // 7),
        "schemes and colons": "http://u:p" * (n // 10),
        "schemes, no at sign": "http://u:p/x" * (n // 12),
        "schemes, at signs far": "http://u:p/" + "x" * n + "@h",
        "spaces": "http://u:" + " " * n + "@h",
    }
    bounded_each(
        {
            f"{fn.__name__} on {name}": (lambda fn=fn, text=text: fn(text))
            for name, text in texts.items()
            for fn in (redact_spec, redact_text, redact_urls, scrub_secrets)
        }
    )


@pytest.mark.parametrize("flag", ["-m", "--judge"])
def test_a_comma_in_a_url_password_is_refused_without_quoting_either_half(
    tmp_path: Path, flag: str
) -> None:
    # Re-test 20 #15: split at the ",", "pa" was named as the port and "ssSECRETVALUE@..." as
    # a spec of its own (with --judge, the whole spec was echoed).
    spec = "openai:m@http://u:paCOMMAHEAD,ssSECRETVALUE@127.0.0.1:9/v1"
    args = ["-m", spec] if flag == "-m" else ["-m", "random", "--judge", spec]
    proc = lmmprobe("run", *args, "--data", "demo", "--limit", "1", "--db", tmp_path / "db",
                    "--dry-run")  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert "COMMAHEAD" not in out and "SECRETVALUE" not in out, out
    assert "%2C" in out, out
