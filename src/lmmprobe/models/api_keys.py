"""API keys for OpenAI-compatible servers, shared by the model backend and APEx's orchestrator.

Kept apart from `openai_api` so that a caller can resolve a key without importing the openai
client. Every key handed out is remembered (in this process only) so that `scrub_secrets` can
take it out of any error a server sends back (some servers echo the key in their messages), and
`scrub_answer` out of any answer (a server or model may quote its request headers).

How a remembered key is found depends on its length and on the text, because a short key is
also an ordinary word (``test``, ``no``, ``A``) and an answer is scored:

| key length | error messages (`scrub_secrets`) | answers (`scrub_answer`) |
| --- | --- | --- |
| 8 or more (`MIN_SECRET_LENGTH`) | wherever it appears | wherever it appears |
| 4 to 7 | wherever it appears | as a whole word only |
| 1 to 3 (below `MIN_ANSWER_SECRET_LENGTH`) | as a whole word only | left alone |

A whole word is the key with no letter or digit right before or after it, so a key ``test``
is taken out of "key test was refused" but leaves "testing" and "latest" intact. A key of one
to three characters is left in answers on purpose: scrubbing ``A`` would turn the answer
"(A)" into "([redacted])", scored wrong, and such a key guards nothing (a few hundred thousand
guesses find it); `resolve_api_key` warns when it hands one out.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import unquote, urlsplit

from lmmprobe._secrets import (
    KEY_SHAPE,
    REDACTED,
    SECRET_WORDS,
    continues_a_secret,
    key_env_name,
    plain_variable_name,
    redact_command,
    redact_record,
    redact_spec,
    redact_text,
    redact_urls,
    secret_argument,
    splits_a_password,
    url_secret_values,
)
from lmmprobe.schema.text import MESSAGE_CHARS, shown_message

__all__ = [
    "KEY_REACH",
    "LOCAL_HOSTS",
    "MIN_ANSWER_SECRET_LENGTH",
    "MIN_SECRET_LENGTH",
    "NO_KEY",
    "REDACTED",
    "SECRET_WORDS",
    "basic_credentials",
    "continues_a_secret",
    "key_env_name",
    "keys_not_needed",
    "plain_variable_name",
    "redact_command",
    "redact_options",
    "redact_record",
    "redact_spec",
    "redact_text",
    "redact_urls",
    "remember_secret",
    "resolve_api_key",
    "scrub_answer",
    "scrub_cut_end",
    "scrub_secrets",
    "scrubbed_message",
    "scrubbed_value",
    "secret_argument",
    "splits_a_password",
    "unset_key_env",
    "url_secret_values",
]

log = logging.getLogger(__name__)

LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]", "0.0.0.0")
"""Hosts of local servers (vLLM, SGLang, Ollama), which accept any key."""

MIN_SECRET_LENGTH = 8
"""Configured keys at least this long are scrubbed wherever they appear, inside words too;
shorter ones are scrubbed as whole words from answers (see the module docstring)."""

MIN_ANSWER_SECRET_LENGTH = 4
"""Shorter configured keys are not taken out of answers: they cannot be told from ordinary
words ("A", "no", "yes"), and removing them would change what is scored."""

# "Bearer <token>" (any token) and key-shaped words (`KEY_SHAPE`). Applied to error messages
# only: an answer may well speak of bearer bonds.
_BEARER_TOKEN = re.compile(r"(?i)(\bbearer\s+)(?!\[redacted\])[^\s\"',;)}\]]+")

_secrets: set[str] = set()
_lock = threading.Lock()
# One alternation of every remembered key per kind of text, rebuilt when a key is added; None
# while no key is known (the common case: local models), so scrubbing an answer costs nothing.
_error_re: re.Pattern[str] | None = None
_answer_re: re.Pattern[str] | None = None


def _word(secret: str) -> str:
    # No letter or digit (of any script) right before or after: "test" but not "testing".
    return rf"(?<![^\W_]){re.escape(secret)}(?![^\W_])"


def _alternation(parts: list[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(parts)) if parts else None


def _rebuild() -> None:
    """Compile the patterns of `_secrets` (caller holds `_lock`)."""
    global _error_re, _answer_re
    # Longest first: one key may contain another, and the longer one must go whole.
    known = sorted(_secrets, key=len, reverse=True)
    _error_re = _alternation(
        [re.escape(s) if len(s) >= MIN_ANSWER_SECRET_LENGTH else _word(s) for s in known]
    )
    _answer_re = _alternation(
        [
            re.escape(s) if len(s) >= MIN_SECRET_LENGTH else _word(s)
            for s in known
            if len(s) >= MIN_ANSWER_SECRET_LENGTH
        ]
    )


def remember_secret(secret: str) -> bool:
    """Have `scrub_secrets` and `scrub_answer` remove `secret` from now on (this process only).

    Returns:
        Whether it is new (False for one remembered before, or one of only whitespace).

    """
    if not secret.strip():
        return False
    with _lock:
        if secret in _secrets:
            return False
        _secrets.add(secret)
        _rebuild()
        return True


def scrub_secrets(text: str) -> str:
    """`text` without any API key: configured keys, ``Bearer X``, key shapes, URL secrets.

    Key shapes are `KEY_SHAPE`'s; a URL's secrets `redact_urls`' (``?key=X``, ``user:pass@``).
    For error messages and other text that is not an answer. Applied by the executor to every
    stored error message of every backend, and by the openai backend before it shortens a
    server's message, so no key is stored, logged or shown.
    """
    pattern = _error_re
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    text = _BEARER_TOKEN.sub(lambda m: m.group(1) + REDACTED, text)
    return KEY_SHAPE.sub(REDACTED, redact_urls(text))


def scrub_answer(text: str) -> str:
    """A model's answer without the configured API keys (as the module docstring says).

    Only keys this process was given are looked for: an answer may legitimately hold words
    that merely look like keys or tokens, which `scrub_secrets` would take out.
    """
    pattern = _answer_re
    return text if pattern is None else pattern.sub(REDACTED, text)


KEY_REACH = 4_096
"""Characters read past a cut so that a key standing across it is scrubbed whole (no key is
this long); what lies further is cut unread: scrubbing megabytes a server sent cost seconds."""


def scrubbed_value(text: str, limit: int) -> str:
    """`text` scrubbed as an error message (`scrub_secrets`), then cut as `shown_value` cuts.

    Scrubbed before the cut: a cut through a key keeps its first characters, which no scrub
    finds afterwards (re-test 22: a finish reason cut at 64 characters kept 20 of a key's 26).
    """
    clean = scrub_secrets(text[: limit + KEY_REACH])
    if len(clean) <= limit and len(text) <= limit + KEY_REACH:
        return clean
    return f"{clean[:limit]}... ({len(text):,} characters)"


def scrubbed_message(text: str, limit: int = MESSAGE_CHARS) -> str:
    """`text` scrubbed (`scrub_secrets`), then cut in the middle as `shown_message` cuts it.

    Its start and end are each scrubbed with `KEY_REACH` characters more than are kept, so a
    key across either cut goes whole and the megabytes between are never read.
    """
    if len(text) <= limit + 2 * KEY_REACH:
        return shown_message(scrub_secrets(text), limit)
    keep_head, keep_tail = limit * 3 // 4, limit // 5
    head = scrub_secrets(text[: keep_head + KEY_REACH])[:keep_head]
    tail = scrub_secrets(text[-(keep_tail + KEY_REACH) :])[-keep_tail:]
    return f"{head}... ({len(text) - keep_head - keep_tail:,} characters cut) ...{tail}"


def scrub_cut_end(text: str) -> str:
    """`text`, cut short, without the first characters of a configured key at its end.

    A cut through a key (a reply read up to lmmprobe's limit, or a body cut at its byte limit)
    leaves the key's beginning, which neither scrub finds: it is no whole key. Such an end, of
    `MIN_ANSWER_SECRET_LENGTH` characters or more, is replaced by ``[redacted]``. For text
    already cut only: a text that merely ends as a key begins is changed too.
    """
    with _lock:
        known = sorted(_secrets, key=len, reverse=True)
    for secret in known:
        for length in range(len(secret) - 1, MIN_ANSWER_SECRET_LENGTH - 1, -1):
            if text.endswith(secret[:length]):
                return text[:-length] + REDACTED
    return text


NO_KEY = "EMPTY"
"""The key given to a local server, and the stand-in for a key a dry run does not need."""

# The list `keys_not_needed` collects missing keys' variables in; None outside it.
_unneeded: ContextVar[list[str] | None] = ContextVar("lmmprobe_keys_not_needed", default=None)


@contextmanager
def keys_not_needed() -> Iterator[list[str]]:
    """Within the block a missing API key is no error: nothing will be sent (a dry run).

    `resolve_api_key` then hands out the stand-in `NO_KEY` for a key that is not set, and
    appends its variable's name to the list this yields, so the caller can say that a real
    run will need it. A key that is set is resolved as always.
    """
    missing: list[str] = []
    token = _unneeded.set(missing)
    try:
        yield missing
    finally:
        _unneeded.reset(token)


def resolve_api_key(key_env: str, base_url: str | None, *, what: str = "") -> str:
    """The key in the environment variable `key_env`, or "EMPTY" for a local server.

    Inside `keys_not_needed`, a key that is not set is "EMPTY" too, and its variable is noted.

    The key is remembered for `scrub_secrets` and `scrub_answer`, and so are the secrets of
    `base_url` of 8 characters or more (`url_secret_values`); a key shorter than
    `MIN_ANSWER_SECRET_LENGTH` is logged as a warning (once), naming the variable: it cannot
    be kept out of answers.

    A `key_env` that names no variable set in the environment is refused, local server and dry
    run alike, unless its name is plain (`plain_variable_name`: ``OPENAI_API_KEY``, the
    default): any other value (``hunter2``) may be a key pasted there by mistake, which would be
    shown in the message and recorded with the spec. The message does not show it
    (`unset_key_env`). A variable that is set is a variable, whatever its name.

    Args:
        key_env: The environment variable holding the key.
        base_url: The server's URL; None means the hosted API.
        what: Who needs the key, for the message (e.g. "the orchestrator").

    Raises:
        ValueError: No key is set and the server is not local; the message names the variable
            (never a key). Or `key_env` is not set and its name is not plain.

    """
    written = url_secret_values(base_url or "")
    # As written and as sent: httpx percent-decodes a URL's password before it sends it.
    for value in [*written, *map(unquote, written), *basic_credentials(base_url or "")]:
        # A server may quote its route in an error (a 404), where no scheme marks it a URL,
        # or echo the Authorization header a URL's password was sent in (re-test 21), or
        # the password it decoded from that header (re-test 22: ``p%40ss`` quoted as ``p@ss``).
        # Only long values: a short one would be taken out of answers as an ordinary word.
        if len(value) >= MIN_SECRET_LENGTH:
            remember_secret(value)
    key = os.environ.get(key_env)
    if key is None and not plain_variable_name(key_env):
        raise ValueError(unset_key_env(what))
    if key:
        unsendable = _unsendable(key)
        if unsendable is not None:
            whose = f" for {what}" if what else ""
            raise ValueError(
                f"the API key{whose} in {key_env} holds {unsendable}, which no HTTP header "
                "carries: every request would fail; set the variable to the key alone"
            )
        if remember_secret(key) and len(key) < MIN_ANSWER_SECRET_LENGTH:
            log.warning(
                "the API key in %s is %d character(s) long: too short to tell from ordinary "
                "words, so it is kept out of error messages but not out of answers; use a key "
                "of %d characters or more",
                key_env,
                len(key),
                MIN_ANSWER_SECRET_LENGTH,
            )
        return key
    if base_url is not None and any(host in base_url for host in LOCAL_HOSTS):
        return NO_KEY
    unneeded = _unneeded.get()
    if unneeded is not None:
        unneeded.append(key_env)
        return NO_KEY
    whose = f" for {what}" if what else ""
    raise ValueError(
        f"no API key{whose}: set the environment variable {key_env} "
        "(or name another with key_env=VAR)"
    )


def basic_credentials(url: str) -> list[str]:
    """The ``Authorization: Basic`` value a client sends for `url`'s user and password.

    httpx sends a URL's ``user:password`` (percent-decoded) as basic authentication, base64
    encoded, in place of the API key's Bearer header: a server echoing its request headers
    into an answer, a finish reason or an error quoted that value, which no redaction of the
    password itself finds, and base64 is no secret (re-test 21). Empty when `url` has no user.
    """
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:  # an unclosed "[" in the host, a port that is no number
        return []
    if user is None:
        return []
    pair = f"{unquote(user)}:{unquote(password or '')}".encode()
    return [base64.b64encode(pair).decode("ascii")]


def _unsendable(key: str) -> str | None:
    """What in `key` an ``Authorization`` header cannot carry, in words (never the key); None.

    A key read with its line end (a carriage return from a file written on Windows, a newline
    from an ``.env`` file) or a character past ASCII was sent with every request: httpx refused
    each as a connection failure, aiohttp as a malformed response, each retried, and the run
    stopped as if the server were down or unhealthy (re-test 17). A trailing space too: httpx
    refuses a header value that ends in one.
    """
    for at, char in enumerate(key):
        if not " " <= char <= "~":
            kind = "a line end" if char in "\r\n" else (
                "a control character" if char < " " or char == "\x7f" else "a non-ASCII character"
            )  # fmt: skip
            return f"{kind} (character {at + 1} of {len(key)})"
    if key.endswith(" "):
        # h11 (httpx) refuses a header value ending in a space: a key pasted with its trailing
        # blank failed each request as a connection failure, six attempts (re-test 18).
        return f"a space at its end (character {len(key)} of {len(key)})"
    return None


def redact_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """A model's parsed options as they may be recorded: secret values replaced, as in its spec.

    Each value is redacted as `redact_spec` redacts ``key=value`` in the spec, at every level:
    a mapping's pairs (``chat_template_kwargs=api_token=X``: ``{"api_token": X}``) are read
    as their own ``key=value`` pairs, a list's items under their option's key. A value
    holding ``,`` or ``;`` that the rule touches is replaced whole (the spec reads those as
    separators, so the rule may see only its start). Numbers, booleans and null (``api_token=
    123`` is read as a number) are redacted as their JSON text is, a redacted one becoming
    `REDACTED`.
    """
    return {key: _redacted_value(str(key), value) for key, value in options.items()}


def _redacted_value(key: str, value: Any) -> Any:
    if isinstance(value, Mapping):
        return redact_options(value)
    if isinstance(value, list | tuple):
        return [_redacted_value(key, item) for item in value]
    if isinstance(value, str):
        text = value
    elif value is None or isinstance(value, bool | int | float):
        text = json.dumps(value)
    else:
        return value
    pair = f"{key}={text}"
    redacted = redact_spec(pair)
    if redacted == pair:
        return value
    # A key redacted too (a key shaped as a key, `KEY_SHAPE`), or a value the spec would split:
    # nothing of the value is kept.
    if not isinstance(value, str) or "," in text or ";" in text:
        return REDACTED
    head = f"{key}="
    return redacted[len(head) :] if redacted.startswith(head) else REDACTED


def unset_key_env(what: str = "") -> str:
    """The one line refusing a ``key_env`` that names no variable set: its value is not shown.

    Args:
        what: Who needs the key, for the message (e.g. "the orchestrator"); "" for a model.

    """
    whose = f" of {what}" if what else ""
    return (
        f"key_env{whose} names a variable that is not set; the value is not shown in case it "
        "is a key: set that variable, or put the key in one such as MY_API_KEY and pass "
        "key_env=MY_API_KEY"
    )
