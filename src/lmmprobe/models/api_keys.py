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

import logging
import os
import re
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NamedTuple

log = logging.getLogger(__name__)

LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]", "0.0.0.0")
"""Hosts of local servers (vLLM, SGLang, Ollama), which accept any key."""

REDACTED = "[redacted]"
"""What a scrubbed secret is replaced with."""

MIN_SECRET_LENGTH = 8
"""Configured keys at least this long are scrubbed wherever they appear, inside words too;
shorter ones are scrubbed as whole words from answers (see the module docstring)."""

MIN_ANSWER_SECRET_LENGTH = 4
"""Shorter configured keys are not taken out of answers: they cannot be told from ordinary
words ("A", "no", "yes"), and removing them would change what is scored."""

# "Bearer <token>" (any token) and key-shaped words: sk-..., sk-proj-..., sk-ant-..., and the
# pk-/rk- variants some providers use. Eight characters after the dash keep "sk-learn" safe.
# Applied to error messages only: an answer may well speak of bearer bonds.
_PATTERNS = (
    re.compile(r"(?i)(\bbearer\s+)(?!\[redacted\])[^\s\"',;)}\]]+"),
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}"),
)

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
    """`text` without any API key: configured keys, ``Bearer <token>`` and ``sk-...`` words.

    For error messages and other text that is not an answer. Applied by the executor to every
    stored error message of every backend, and by the openai backend before it shortens a
    server's message, so no key is stored, logged or shown.
    """
    pattern = _error_re
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    text = _PATTERNS[0].sub(lambda m: m.group(1) + REDACTED, text)
    return _PATTERNS[1].sub(REDACTED, text)


def scrub_answer(text: str) -> str:
    """A model's answer without the configured API keys (as the module docstring says).

    Only keys this process was given are looked for: an answer may legitimately hold words
    that merely look like keys or tokens, which `scrub_secrets` would take out.
    """
    pattern = _answer_re
    return text if pattern is None else pattern.sub(REDACTED, text)


SECRET_WORDS = frozenset(
    {
        "apikey", "auth", "authorization", "bearer", "cookie", "credential", "credentials",
        "key", "keys", "pass", "passwd", "password", "pat", "pwd", "secret", "session", "tok",
        "token", "tokens",
    }
)  # fmt: skip
"""Words of a flag's or a variable's name that say its value is a secret."""

_SECRET_SUFFIXES = ("key", "token", "secret", "password", "passwd")
"""Run-together names ending so are secrets too (``--secretkey``, ``PGPASSWORD``)."""

_COUNT_WORDS = frozenset(
    {
        "added", "batched", "draft", "extra", "generated", "input", "max", "min", "new", "num",
        "output", "prefill", "prompt", "special", "stop", "total",
    }
)  # fmt: skip
"""With one of these, ``tokens`` and ``keys`` are not secrets (``--max-num-batched-tokens``)."""

_SECRET_FLAGS = (
    "--api-key", "--api-keys", "--api-token", "--access-token", "--auth-token",
    "--hf-token", "--token", "--password", "--secret", "--secret-key",
)  # fmt: skip
"""Flags whose every abbreviation of 3 characters or more is refused: Python's argparse (vLLM,
SGLang) takes ``--api`` or ``--hf-tok`` for the flag they begin."""

_SHORT_SECRET_FLAGS = frozenset({"k"})  # curl's and others' -k KEY (or -K); -kKEY too

# A word of a command line may itself be a shell snippet (``bash -c '... --api-key X'``): it is
# read again as pieces between whitespace (any Unicode whitespace: a no-break space is not a
# shell separator, but some tools split on it) and shell punctuation.
_PIECE = re.compile(r"""[^\s;&|()<>{}\[\]`'",]+""")
_DASHES = str.maketrans(
    dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d", "-")
)
_FLAG = re.compile(r"(--?)([^=:]*)([=:]?)")  # on the piece with its dashes made ASCII
_IDENTIFIER = re.compile(r"[^\W\d]\w*")  # NAME of NAME=value or NAME: value (any script)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^/\s@:?#]*:([^/\s@?#]+)@")
_BEARER = "bearer"


def _words(name: str) -> list[str]:
    """The words of a name, lower case; trailing numbers dropped (``--api-key-1``)."""
    name = _CAMEL.sub("-", unicodedata.normalize("NFKC", name))
    words = [w for w in re.split(r"[\W_]+", name.lower()) if w]
    while words and words[-1].isdigit():
        words.pop()
    return words


def _secret_word(word: str, words: list[str]) -> bool:
    if word in ("tokens", "keys") and _COUNT_WORDS.intersection(words):
        return False
    return word in SECRET_WORDS or word.endswith(_SECRET_SUFFIXES)


def _secret_flag(name: str) -> bool:
    """Whether ``--name`` carries a secret, by its last word or as an abbreviation.

    By the last word, so ``--tokenizer``, ``--ssl-keyfile`` or ``--return-tokens-as-token-ids``
    pass.
    """
    words = _words(name)
    if words and _secret_word(words[-1], words):
        return True
    flag = "--" + "-".join(words)
    return len(flag) >= 5 and any(f.startswith(flag) for f in _SECRET_FLAGS)


def _secret_variable(name: str) -> bool:
    """Whether ``NAME=value`` is a secret: by any word of the name (``API_KEY_FOR_LOG``)."""
    words = _words(name)
    return any(_secret_word(w, words) for w in words)


class _Found(NamedTuple):
    """A secret in a text: who names it, and where its value is."""

    name: str
    start: int
    end: int
    """Where the value ends; equal to `start` at the end of the text when the value is the
    next word (``--api-key`` last)."""


def _piece_secret(piece: str) -> tuple[str, int | None] | None:
    """The name a piece gives a secret and where in it the value starts (None: the next piece).

    ``--api-key``, ``--api-key=X``, ``-kX``, ``HF_TOKEN=X``, ``Authorization:``, ``Bearer``.
    """
    ascii_dashes = piece.translate(_DASHES)
    flag = _FLAG.match(ascii_dashes)
    if flag is not None:
        dashes, name, sep = flag.groups()
        if len(dashes) == 1:
            if name[:1].lower() not in _SHORT_SECRET_FLAGS:
                return None
            return piece[:2], (2 if len(piece) > 2 else None)
        if not _secret_flag(name):
            return None
        cut = len(dashes) + len(name)
        return piece[:cut], (cut + 1 if sep else None)
    name, sep, _ = piece.partition("=") if "=" in piece else piece.partition(":")
    if (
        sep
        and _IDENTIFIER.fullmatch(unicodedata.normalize("NFKC", name))
        and _secret_variable(name)
    ):
        return name, len(name) + 1
    if piece.lower() == _BEARER:
        return piece, None
    return None


def _scan(text: str, *, word: bool) -> list[_Found]:
    """Every secret in `text`, in order: the one decision behind refusing and redacting.

    `word`: `text` is one word of a command line, so a flag or assignment that begins it
    (``--api-key=a b``) owns the whole rest of it as its value.
    """
    found: list[_Found] = []
    pending: str | None = None
    for match in _PIECE.finditer(text):
        piece, at = match.group(), match.start()
        name, value_at = _piece_secret(piece) or ("", -1)
        if name and value_at is not None and word and at == 0 and value_at < len(text):
            # ``--api-key=a b``, ``--auth="x"``: all the rest of the word is the value.
            found.append(_Found(name, value_at, len(text)))
            break
        if name and (value_at is None or value_at >= len(piece)):
            pending = name  # the value is the next piece (``Authorization: Bearer X``)
            continue
        if pending is not None:
            found.append(_Found(pending, at, match.end()))
            pending = None
            continue
        for url in _URL_CREDENTIALS.finditer(piece):
            found.append(_Found("a password in a URL", at + url.start(1), at + url.end(1)))
        if not name or value_at is None:
            continue
        found.append(_Found(name, at + value_at, match.end()))
    if pending is not None:
        found.append(_Found(pending, len(text), len(text)))
    return found


def secret_argument(arg: str) -> str | None:
    """The name of a secret `arg` carries or introduces on a command line, else None.

    A flag whose last word says secret (`SECRET_WORDS`: ``--api-key``, ``--hf_token=...``,
    ``--apikey``, ``--auth``, ``--passwd``, ``--api-key-1``, ``--secretkey``), an
    abbreviation argparse would expand to one (``--api``, ``--hf-tok``), ``-k``/``-K``, a
    ``NAME=value`` or ``NAME: value`` with any word of NAME saying secret (``HF_TOKEN``,
    ``API_KEY_FOR_LOG``, ``PGPASSWORD``, ``Authorization:``), ``Bearer``, and a password in a
    URL (``https://user:pass@host``). The word is also read as a shell snippet (``bash -c
    '... --api-key X'``): each of its pieces between whitespace and shell punctuation is
    judged alike. ``--tokenizer``, ``--ssl-keyfile``, ``--max-num-batched-tokens`` or
    ``--return-tokens-as-token-ids`` are not secrets.

    Returns:
        The flag or variable name (never its value), to name in a message; None.

    """
    found = _scan(arg, word=True)
    return found[0].name if found else None


def _blank(text: str, found: list[_Found]) -> str:
    for item in reversed(found):  # from the end, so earlier offsets stay right
        if item.end > item.start:
            text = text[: item.start] + REDACTED + text[item.end :]
    return text


def redact_text(text: str) -> str:
    """`text` (a command line, or any text holding one) with every secret value replaced.

    What counts is what `secret_argument` refuses; ``sk-...`` keys go too. For a command line
    shown in a message before it could be split into words (an unclosed quote).
    """
    return _PATTERNS[1].sub(REDACTED, _blank(text, _scan(text, word=False)))


def redact_command(argv: Sequence[str]) -> list[str]:
    """`argv` with the value of every secret (`secret_argument`) replaced by `REDACTED`.

    ``--api-key X`` becomes ``--api-key [redacted]``, ``--api-key=X`` ``--api-key=[redacted]``,
    ``-kX`` ``-k[redacted]``, ``HF_TOKEN=X`` ``HF_TOKEN=[redacted]``, and inside a snippet
    (``bash -c '... --api-key X; ...'``) the value only; for a command line written to a log,
    a record or a message.
    """
    out: list[str] = []
    pending = False
    for arg in argv:
        if pending:
            out.append(REDACTED)
            pending = False
            continue
        found = _scan(arg, word=True)
        pending = bool(found) and found[-1].start == found[-1].end == len(arg)
        out.append(_PATTERNS[1].sub(REDACTED, _blank(arg, found)))
    return out


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

    The key is remembered for `scrub_secrets` and `scrub_answer`; a key shorter than
    `MIN_ANSWER_SECRET_LENGTH` is logged as a warning (once), naming the variable: it cannot
    be kept out of answers.

    Args:
        key_env: The environment variable holding the key.
        base_url: The server's URL; None means the hosted API.
        what: Who needs the key, for the message (e.g. "the orchestrator").

    Raises:
        ValueError: No key is set and the server is not local; the message names the variable
            (never a key).

    """
    key = os.environ.get(key_env)
    if key:
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
