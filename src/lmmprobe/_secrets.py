"""The one rule of what a secret on a command line or in a spec looks like, and its redaction.

`secret_argument` decides whether a word of a command line carries a secret (a served model's
``command=``/``args=`` are refused by it); `redact_command` and `redact_text` replace the
secrets it finds (a server's log); `redact_spec` and `redact_record` do the same to a recorded
model, judge or data spec and to the run records holding them (the store's runs, responses,
scores and judgements, the manifest, results.json and results.md), so that a secret of a shape
the refusal lets through still never reaches a file.

Kept below every package (it needs nothing of lmmprobe's): the store, which may not import the
model backends, redacts what it writes with it; `lmmprobe.models.api_keys` re-exports it.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Sequence
from typing import Any, NamedTuple
from urllib.parse import unquote

REDACTED = "[redacted]"
"""What a scrubbed secret is replaced with."""

KEY_SHAPE = re.compile(
    # Weak prefixes: not right after a letter, digit, "_" or "-". A key inside a model's or a
    # task's name (``org/task-sk-12345678``, ``LLaVA-ghp_...``) is part of that name; after
    # "/", "=", ":" or a space it is a key pasted there. An sk-/pk-/rk- body holds a digit
    # (real keys mix letters and digits): ``hf:sk-learn-model-abcdefgh`` is a name.
    r"(?<![\w-])(?:(?:sk|pk|rk)-(?=[A-Za-z0-9_\-]*\d)[A-Za-z0-9_\-]{12,}"  # OpenAI and others
    r"|hf_[A-Za-z0-9]{16,}"  # Hugging Face
    r"|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}"  # GitHub
    r"|glpat-[A-Za-z0-9_\-]{16,}"  # GitLab
    r"|AIza[A-Za-z0-9_\-]{16,}"  # Google API keys
    r"|(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{8,}"  # Slack
    r"|(?:gsk|r8|xai|pplx)[_-][A-Za-z0-9]{20,}|fw_[A-Za-z0-9]{16,})"  # Groq, Replicate, xAI...
    # Strong shapes, wherever they stand, glued to other characters too (``xAKIA...``,
    # ``1ghp_...``): a distinctive prefix and the full length of a real key, which no name
    # reaches by chance.
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"  # AWS access key ids: exactly 20 characters
    r"|gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82}"  # GitHub's full lengths
    r"|hf_[A-Za-z0-9]{34}"  # Hugging Face: 34 after hf_
    r"|glpat-[A-Za-z0-9_\-]{20}"  # GitLab: 20 after glpat-
    r"|AIza[A-Za-z0-9_\-]{35}"  # Google: 39 characters in all
    r"|xox[abposre]-\d{6,}-[A-Za-z0-9\-]{8,}"  # Slack: a team's number after the prefix
    r"|sk-(?:proj|ant|svcacct|admin)-[A-Za-z0-9_\-]{40,}"  # OpenAI's, Anthropic's long keys
    r"|eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}"  # a JSON web token: header.payload.signature
)
"""Key-shaped words: sk-..., sk-proj-..., sk-ant-..., the pk-/rk- variants some providers use,
and the prefixed tokens of Hugging Face (hf_), GitHub (ghp_, gho_, github_pat_...), GitLab
(glpat-), Google (AIza...), AWS (AKIA...), Slack (xoxb-, xapp-...), Groq (gsk_), Replicate
(r8_), xAI (xai-), Perplexity (pplx-), Fireworks (fw_), and JSON web tokens (eyJ...).

The rule: the prefix, then at least as many characters as below (real keys hold far more:
OpenAI's 48 or more after sk-, GitHub's 36 after ghp_, Hugging Face's 34 after hf_), and
nothing but the key's own characters; the shortest lengths keep ordinary names safe
("sk-learn", ``revision=sk-abc12345678``, ``hf_transfer``, ``fw_version``), and an sk-/pk-/rk-
body without a digit is a name (``sk-learn-model-abcdefgh``). A key-shaped word right after a
letter, digit, "_" or "-" is part of a longer name (``org/task-sk-12345678``,
``LLaVA-ghp_...``) and not taken for a key; one after "/", "=", ":", "@" or a space is.

The trade-off: hiding too little writes a key to a file; hiding too much hides a name, and two
models differing only there are refused as recorded alike (`lmmprobe.run.runner`). So a shape
glued to other characters counts only where it is strong: a distinctive prefix and a real key's
full, fixed length (AWS's AKIA/ASIA + 16, GitHub's ghp_ + 36 and github_pat_ + 82, Hugging
Face's hf_ + 34, GitLab's glpat- + 20, Google's AIza + 35, Slack's xoxb-NUMBER-..., OpenAI's
sk-proj-/Anthropic's sk-ant- + 40 or more, a JSON web token); a weak prefix (sk-, pk-, rk-, a
shorter ghp_ or hf_...) counts only at a word's start."""

SECRET_WORDS = frozenset(
    {
        "apikey", "auth", "authorization", "bearer", "cookie", "cred", "creds", "credential",
        "credentials", "hmac", "jwt", "key", "keys", "pass", "passphrase", "passwd", "password",
        "pat", "pw", "pwd", "secret", "session", "tok", "token", "tokens",
    }
)  # fmt: skip
"""Words of a flag's or a variable's name that say its value is a secret."""

_SECRET_SUFFIXES = ("key", "token", "secret", "password", "passwd", "passphrase")
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
_DASH_CHARS = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"
_LONG_DASHES = "\u2013\u2014\u2015"  # an en or em dash is what ``--`` becomes when typeset
_FLAG_NAME = re.compile(r"([^=:]*)([=:]?)")  # after a flag's dashes
# Letters of other scripts drawn like Latin ones (a subset of Unicode's confusables, those of
# Cyrillic and Greek, which NFKC leaves alone): ``--api-kеy`` with a Cyrillic е is --api-key.
_CONFUSABLES = str.maketrans(
    "аеорсухіјԁһкԛѕԝӏвмнтАВЕКМНОРСТХІЈЅУαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧıɑ",
    "aeopcyxijdhkqswlbmhtABEKMHOPCTXIJSYabeiknoptuxABEZHIKMNOPTYXia",
)
# NAME of NAME=value or NAME: value (any script); a dash too: a header (``X-Api-Key: v``)
_IDENTIFIER = re.compile(r"[^\W\d][\w-]*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# A password in a URL, with its scheme (``https://user:pass@host``) or without one where a host
# with a port or a path follows (``user:pass@host:8000/v1``, as a base URL after ``@``).
# A user without a password (``http://TOKEN@host/v1``) is taken for a token: a key given as
# the user, which a server reads as basic authentication's or as a bearer token.
# A scheme is read from the start of its run of scheme characters only (the look-behind): tried
# at every letter of a long word, it made reading the word quadratic.
_SCHEME = r"(?<![A-Za-z0-9+.\-])[A-Za-z0-9+.\-]+://"
_URL_CREDENTIALS = re.compile(
    # With a scheme the password runs to the authority's last "@", as httpx and urllib read
    # it: an unencoded "@" in a password (``u:p@ss@host``) is still the password's.
    _SCHEME + r"[^/\s@:?#]*:([^/\s?#]+)@"
    # Without one, after the "@" ending a model's name (``openai:m@u:p@ss@h:8000/v1``) or an
    # "=", the password too runs to the last "@" before the host; a part after an "@" holds no
    # ":". At the text's start, where ``openai:m@user@h:8000`` reads alike, to the first "@".
    r"|(?:^[^/\s@:?#=]+:([^/\s@?#]+)"
    r"|(?<=[@=])[^/\s@:?#=]+:([^/\s@?#]+(?:@[^/\s@:?#]+)*))@(?=[\w.\-]+(?::\d+)?(?:/|$))"
    # A user without a password, or with an empty one (``http://TOKEN:@host``, curl's ``-u
    # KEY:``, sent as basic authentication all the same): the user is the token.
    r"|" + _SCHEME + r"([^/\s@:?#]+):?@"
)
# A parameter in a URL's query or fragment (``?key=X``, ``&api-key=X``, ``#token=X``): judged by
# its name, as ``NAME=value`` is; the value runs to the next parameter. Spaces around the "="
# (``?key =X``, ``? key= X``) are looked through: a server may strip them, and a key pasted so
# is still a key. Before the name only after "?": "; " and "& " end a shell's command.
_URL_PARAMETER = re.compile(r"(?:\?[ \t]*|[#&;])([^=?#&;/\s]+)[ \t]*=[ \t]*([^&#;\s]*)")
# A path segment ``/NAME=VALUE`` (``http://h/v1/key=X``; a server's error quoting the path): judged
# as a query's parameter is, the value running to the segment's end.
_PATH_PARAMETER = re.compile(r"/([^=?#&;/\s]+)[ \t]*=[ \t]*([^/?#&;\s]*)")
# The same with a ":" (``/token:X/v1``) or a percent-encoded "=" or ":" (``/key%3DX``, which the
# server decodes as it decodes the query; encoded again, ``%253D``, by a proxy decoding twice)
# between name and value. Not right after a scheme's
# "://": there ``user:password`` and ``host:port`` stand (`_URL_CREDENTIALS` reads the first).
_PATH_PARAMETER_ENCODED = re.compile(
    r"(?<!:)(?<!:/)/((?:[^=:?#&;/\s%]|%(?!(?:25)*3[AaDd]))+)(?::|%(?:25)*3[AaDd])([^/?#&;\s]*)"
)
# A URL's path (``scheme://host/a/b``), where a segment naming a secret holds the next one as its
# value (``http://h/api_key/X/v1``). Read in URLs with a scheme only: a file's path
# (``/etc/keys/token/README``) is no URL.
# A fragment shaped as a path (``http://h/v1#/key/X``, a client-side route) is read as one too.
_URL_PATH = re.compile(_SCHEME + r"[^\s/?#]*([/#][^\s?]*)")
_QUERY_SECRETS = frozenset(
    {"sig", "signature", "code", "x-amz-signature", "x-goog-signature", "sas", "pw"}
)  # fmt: skip
"""Query parameters holding a secret whose names no secret word makes one: a signed URL's
signature (Azure's ``sig`` and ``sas``, S3's and GCS's), an OAuth ``code``, a ``pw``."""
_QUERY_SECRET_WORDS = frozenset(
    {
        "sig", "signature", "sas", "sid", "sessid", "sessionid", "jsessionid", "phpsessid",
        "ticket", "otp", "csrf", "xsrf", "verifier", "samlresponse", "samlart", "pw",
    }
)  # fmt: skip
"""Words of a query parameter's name that make its value a secret though no secret word is
among them: a signature (``oauth_signature``, ``X-Amz-Signature``, ``hmac_sig``), a session id
(``sid``, ``JSESSIONID``, ``PHPSESSID``), a single-sign-on ``ticket`` (CAS) or SAML message, a
one-time password, a CSRF token, an OAuth ``oauth_verifier`` (re-test 20 #16: ``oauth_signature``,
``sid`` and ``ticket`` reached results.json). Read for a parameter only (``?NAME=``,
``/NAME=``), not as a path's word (``/ticket/12`` names a resource); a name ending in an amount
(``sig_count``) stays one."""
_PATH_SECRET_WORDS = (SECRET_WORDS | _QUERY_SECRETS) - {"keys", "tokens", "code"}
"""The last word of a path segment whose next segment is a secret: the words that make a query
parameter one (``/key/X``, ``/api_key/X``, ``/auth/X``, ``/session/X``, ``/sig/X``), but not a
collection's (``/keys/list``, ``/tokens/12``), a run-together word's (``/monkey/x``), nor
``code``, a folder's name in a path as often as not (an OAuth code comes in the query)."""
_BEARER = "bearer"


def _words(name: str) -> list[str]:
    """The words of a name, lower case; trailing numbers dropped (``--api-key-1``)."""
    # Invisible format characters (a zero-width space) dropped, look-alike letters folded.
    name = "".join(c for c in name if unicodedata.category(c) != "Cf")
    name = unicodedata.normalize("NFKC", name).translate(_CONFUSABLES)
    name = _CAMEL.sub("-", name)
    words = [w for w in re.split(r"[\W_]+", name.lower()) if w]
    while words and words[-1].isdigit():
        words.pop()
    return words


_TOKEN_NUMBER_WORDS = frozenset({"id", "ids", "idx", "index", "indices", "indexes"})
"""After ``token``: the number of a token in a vocabulary (``eos_token_id``,
``image_token_index``), a tokenizer's setting."""

_SPECIAL_TOKEN_WORDS = frozenset(
    {
        "pad", "eos", "bos", "unk", "sep", "cls", "mask", "eot", "eom", "image", "img", "video",
        "audio", "vision", "boi", "eoi", "boa", "eoa", "bov", "eov", "placeholder", "special",
        "start", "end", "begin", "stop", "think", "answer", "tool",
    }
)  # fmt: skip
"""Before ``token``: a special token of a tokenizer or a chat template (``pad_token=<pad>``,
``bos_token=<s>``, ``image_token=<image>``), not a credential."""


def _secret_word(words: list[str], at: int) -> bool:
    """Whether ``words[at]`` says the value of a name made of `words` is a secret.

    Over-redaction has a cost too (two models differing only in a hidden value are refused as
    recorded alike), so ``token`` naming a tokenizer's setting is no secret: before ``id``,
    ``ids`` or ``index`` (`_TOKEN_NUMBER_WORDS`), or after a special token's word
    (`_SPECIAL_TOKEN_WORDS`: ``pad_token``, ``eos_token_id``); another secret word in the same
    name still makes it one (``auth_token_id``).
    """
    word = words[at]
    if word in ("tokens", "keys") and _COUNT_WORDS.intersection(words):
        return False
    if word in ("token", "tokens"):
        after = words[at + 1] if at + 1 < len(words) else ""
        before = words[at - 1] if at > 0 else ""
        if after in _TOKEN_NUMBER_WORDS or before in _SPECIAL_TOKEN_WORDS:
            return False
    return word in SECRET_WORDS or word.endswith(_SECRET_SUFFIXES)


def _secret_flag(name: str) -> bool:
    """Whether ``--name`` carries a secret, by its last word or as an abbreviation.

    By the last word, so ``--tokenizer``, ``--ssl-keyfile`` or ``--return-tokens-as-token-ids``
    pass.
    """
    words = _words(name)
    if words and _secret_word(words, len(words) - 1):
        return True
    flag = "--" + "-".join(words)
    return len(flag) >= 5 and any(f.startswith(flag) for f in _SECRET_FLAGS)


def _secret_parameter(name: str) -> bool:
    """Whether a URL's query parameter ``name=value`` holds a secret (``key``, ``api_key``).

    The name is judged as the server reads it: percent-decoded (``%6Bey`` is ``key``) and
    without the ``[]`` of a list (``key[]``).
    """
    name = unquote(name).removesuffix("[]")
    if name.lower() in _QUERY_SECRETS:
        return True
    # `_secret_variable`'s rule, the name's words read once (a URL holds many parameters).
    words = _words(name)
    if not words or words[-1] in _QUANTITY_WORDS:
        return False
    return bool(_QUERY_SECRET_WORDS.intersection(words)) or any(
        _secret_word(words, at) for at in range(len(words))
    )


_QUANTITY_WORDS = frozenset(
    {"budget", "cap", "count", "len", "length", "limit", "max", "min", "num", "size"}
)  # fmt: skip
"""A name ending in one of these holds an amount (``thinking_token_budget=64``,
``key_count=3``), never a secret: hiding it would record two settings the same."""


_RUN_TOGETHER_HEADS = frozenset(
    {"access", "admin", "api", "auth", "bearer", "client", "master", "private", "refresh",
     "secret", "service", "session"}
)  # fmt: skip
"""Words that, run together with a secret suffix, name a secret in a path (``/secretkey/X``,
``/accesstoken/X``): a known head only, so ``/monkey/x`` or ``/hotkey/x`` stay names."""
_RUN_TOGETHER_NAMES = frozenset(h + s for h in _RUN_TOGETHER_HEADS for s in _SECRET_SUFFIXES)
"""Every head run together with every secret suffix (``apikey``, ``sessiontoken``...): made once,
since a URL of many path segments asks of each."""


def _path_secret(segment: str) -> bool:
    """Whether a URL's path segment names a secret that the next segment holds (`_URL_PATH`).

    Trailing digits are dropped as for a flag (``/key1/X``, ``/api_key_2/X``), and a
    run-together name counts when a known word heads it (`_RUN_TOGETHER_NAMES`).
    """
    name = unquote(segment).rstrip("0123456789")
    words = _words(name)
    if not words:
        return False
    last = words[-1]
    if last in _PATH_SECRET_WORDS:
        return _secret_parameter(name)
    return last in _RUN_TOGETHER_NAMES


def _url_secrets(text: str) -> list[_Found]:
    """The secret parameters of the URLs in `text`: in a query, as path segments, and a path's.

    ``?key=X``, ``&api-key=X``, ``#token=X`` (`_URL_PARAMETER`), ``/key=X``, ``/token:X`` and
    ``/key%3DX`` (`_PATH_PARAMETER`, `_PATH_PARAMETER_ENCODED`) and ``scheme://h/api_key/X``
    (`_URL_PATH`); each judged by its name, percent-decoded (`_secret_parameter`).
    """
    found = [
        _Found(parameter.group(1), parameter.start(2), parameter.end(2))
        for pattern in (_URL_PARAMETER, _PATH_PARAMETER, _PATH_PARAMETER_ENCODED)
        for parameter in pattern.finditer(text)
        if parameter.end(2) > parameter.start(2) and _secret_parameter(parameter.group(1))
    ]
    for url in _URL_PATH.finditer(text):
        # Each segment with where it starts; empty and "." segments dropped, as a server
        # normalising the path drops them (``/key//X`` and ``/key/./X`` are ``/key/X``).
        segments: list[tuple[str, int]] = []
        at = url.start(1) + 1  # the first segment, after the path's "/" (or "#")
        for segment in url.group(1)[1:].split("/"):
            if segment not in ("", "."):
                segments.append((segment, at))
            at += len(segment) + 1
        for segment, start in segments:
            # ``/bearer%20X``: an Authorization header's value pasted as a segment.
            if segment[:9].lower() == "bearer%20" and len(segment) > 9:
                found.append(_Found(_BEARER, start + 9, start + len(segment)))
        for (name, _), (value, start) in itertools.pairwise(segments):
            if _path_secret(name):
                found.append(_Found(name, start, start + len(value)))
        for segment, start in segments:
            glued = _glued_value(segment)
            if glued is not None:
                found.append(_Found(glued[0], start + glued[1], start + len(segment)))
        # ``/key /X``, ``/Bearer X``: the value after a space ends the path (a server may
        # strip the space, a client encode it); taken only where it looks like a value.
        after = _AFTER_SPACE.match(text, url.end())
        if (
            segments
            and after
            and _path_secret(segments[-1][0])
            and _looks_like_value(after.group(1))
        ):
            found.append(_Found(segments[-1][0], after.start(1), after.end(1)))
    return found


# A value run into its name (``/token.X``, ``/token_X``, ``/password-X``, ``/key;X``,
# ``/key,X``): the name runs to one of these, and is at most this long (a secret's name is
# short; a long segment is not tried at every one of its characters).
_GLUE = re.compile(r"[._\-;,+~]")
_GLUED_NAME_LENGTH = 64
_PARAMETER_SIGN = re.compile("[=:]")
_AFTER_SPACE = re.compile(r"[ \t]+/?([^\s/?#,;&]+)")
# One word of a name: a capital or none then small letters, camel-case words after it
# (``tokenUsage``), or capitals alone (``API``). Each repetition starts with a capital, so the
# pattern cannot backtrack.
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+")
_VALUE_LENGTH = 8
"""A glued or spaced value shorter than this is taken for a name's part (``/token.json``,
``/key-2``): keys and tokens are longer."""
_NOT_GLUED_VALUES = _TOKEN_NUMBER_WORDS | _QUANTITY_WORDS | _COUNT_WORDS
"""A first word after the name saying it is no secret (``/token_ids_...``, ``/key_count``)."""


def _looks_like_value(text: str) -> bool:
    """Whether `text`, run into a secret's name or after a space, reads as a value, not words.

    A value is `_VALUE_LENGTH` characters or more and not made of plain words (letters in
    lower, title, camel or upper case, joined by ``.``, ``_`` or ``-``): ``Zq7secretVALUE99``
    and ``sk7f...`` are values, ``reset_confirmation``, ``verificationEndpoint`` and
    ``returned`` (prose after a URL) are not.
    """
    if len(text) < _VALUE_LENGTH:
        return False
    words = re.split(r"[._\-]", unquote(text))
    if words[0].lower() in _NOT_GLUED_VALUES:
        return False
    return not all(_NAME_WORD.fullmatch(word) for word in words)


def _glued_value(segment: str) -> tuple[str, int] | None:
    """The name and where the value starts, for a segment holding a value run into its name.

    ``token.X``, ``token_X``, ``password-X``, ``key;X``, ``key,X``: the first "glue" character
    after which the name so far names a secret (`_path_secret`) and the rest looks like a
    value (`_looks_like_value`); ``token_usage``, ``password-reset``, ``key.json`` keep theirs.
    """
    for glue in _GLUE.finditer(segment, 0, _GLUED_NAME_LENGTH):
        name, rest = segment[: glue.start()], segment[glue.end() :]
        # A "=" or ":" in the rest makes it a parameter (``/key,timeout=5``), read by
        # `_PATH_PARAMETER` and its kin, or another spec (``/v1/key,hf:org/model``).
        if (
            name
            and _path_secret(name)
            and not _PARAMETER_SIGN.search(rest)
            and _looks_like_value(rest)
        ):
            return name, glue.end()
    return None


def url_secret_values(url: str) -> list[str]:
    """The values `redact_urls` hides in `url` (a password, a key in its query or its path).

    A model's backend remembers them as it remembers its key (`models.api_keys`), so that a
    server quoting its own route in an error (``unknown route POST /api_key/X/v1/...``, no
    scheme to read it as a URL by) still shows none.
    """
    # Read as after a model's name: `url` is a base URL alone, so a password may hold an "@"
    # (``u:p@ss@h:8000/v1``) as `redact_spec` reads it in ``openai:m@u:p@ss@h:8000/v1``.
    text = "@" + url
    return [text[f.start : f.end] for f in _url_found(text) if f.end > f.start]


def _secret_variable(name: str) -> bool:
    """Whether ``NAME=value`` is a secret: by any word of the name (``API_KEY_FOR_LOG``)."""
    words = _words(name)
    if words and words[-1] in _QUANTITY_WORDS:
        return False
    return any(_secret_word(words, at) for at in range(len(words)))


def _url_secret(url: re.Match[str]) -> tuple[str, int]:
    """What a match of `_URL_CREDENTIALS` found, to name, and its group holding the value."""
    group = url.lastindex or 1  # one group per alternative: the one that matched
    return ("a token in a URL" if group == 4 else "a password in a URL"), group


class _Found(NamedTuple):
    """A secret in a text: who names it, and where its value is."""

    name: str
    start: int
    end: int
    """Where the value ends; equal to `start` at the end of the text when the value is the
    next word (``--api-key`` last)."""
    rest: bool = False
    """The value is all the rest of the word (``--auth='x'``), its quotes included."""


def _piece_secret(piece: str) -> tuple[str, int | None] | None:
    """The name a piece gives a secret and where in it the value starts (None: the next piece).

    ``--api-key``, ``--api-key=X``, ``-kX``, ``HF_TOKEN=X``, ``Authorization:``, ``Bearer``;
    also as the value of an option (``note=--api-key``, ``--extra=--token=X``: one level).
    """
    found = _piece_secret_alone(piece)
    if found is None and _glued_short_flag(piece):
        # curl's ``-HAuthorization:Bearer X`` (or ``-H'x-api-key: X'``): a header glued to its
        # short flag is judged as the header alone
        inner = _piece_secret_alone(piece[2:])
        if inner is not None:
            name, value_at = inner
            return name, (None if value_at is None else 2 + value_at)
    if found is not None:
        return found
    # ``--extra=--token=X``, a header given as a flag's value (``--header=Authorization:X``),
    # and an assignment (``--env=VLLM_API_KEY=X``, docker's; ``--set:password=X``): the value
    # after a flag's "=" or ":", or an assignment's "=", judged as a piece of its own.
    flag = piece[:1] in _DASH_CHARS
    seps = [at for at in (piece.find("="), piece.find(":") if flag else -1) if at > 0]
    if seps:
        eq = min(seps)
        inner = _piece_secret_alone(piece[eq + 1 :]) if piece[eq + 1 :] else None
        if inner is not None:
            name, value_at = inner
            return name, (None if value_at is None else eq + 1 + value_at)
    return None


def _glued_short_flag(piece: str) -> bool:
    """Whether `piece` is a one-letter flag with its value glued on (``-HName:value``)."""
    return (
        len(piece) > 2
        and piece[0] in _DASH_CHARS
        and piece[0] not in _LONG_DASHES
        and piece[1] not in _DASH_CHARS
    )


def _piece_secret_alone(piece: str) -> tuple[str, int | None] | None:
    """`_piece_secret` of a piece that is a flag, an assignment or ``Bearer`` itself."""
    lead = len(piece) - len(piece.lstrip(_DASH_CHARS))  # a flag's dashes, of any kind
    if lead:
        match = _FLAG_NAME.match(piece, lead)
        name, sep = match.groups() if match else ("", "")
        if lead == 1 and piece[0] not in _LONG_DASHES:
            if name[:1].translate(_CONFUSABLES).lower() not in _SHORT_SECRET_FLAGS:
                return None
            return piece[:2], (2 if len(piece) > 2 else None)
        if not _secret_flag(name):
            return None
        cut = lead + len(name)
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


# Quotes join what they touch into one shell word (``--a'pi-key'`` is ``--api-key``) and wrap
# the names of JSON and Python key-value pairs (``{"api_key": "X"}``, ``os.environ['K']='X'``):
# the text is judged with them (and a backslash escaping one) taken out.
_QUOTE = re.compile(r"""\\?["']""")
_COMMAND_END = re.compile(r"[;&|\n]")
# Between a name and the "=" or ":" giving it a value, besides spaces: ``['K']='X'``, ``(K)``.
_CLOSING = frozenset(" \t])")


def _unquoted(text: str) -> tuple[str, list[int]]:
    """`text` without its quotes, and where each of its characters (and its end) stood."""
    plain: list[str] = []
    where: list[int] = []
    last = 0
    for quote in _QUOTE.finditer(text):
        plain.append(text[last : quote.start()])
        where.extend(range(last, quote.start()))
        last = quote.end()
    plain.append(text[last:])
    where.extend(range(last, len(text) + 1))
    return "".join(plain), where


def _scan(text: str, *, word: bool) -> list[_Found]:
    """Every secret in `text`, in order: the one decision behind refusing and redacting.

    `word`: `text` is one word of a command line, so a flag or assignment that begins it
    (``--api-key=a b``) owns the whole rest of it as its value. Quotes are looked through
    (`_unquoted`); what is found is placed in `text` itself (`_placed`).
    """
    plain, where = _unquoted(text)
    found = [_placed(text, where, item) for item in _scan_plain(plain, word=word)]
    if found and found[0].rest and found[0].end > found[0].start:
        return found[:1]  # ``--auth=''``: the quotes are its value, not the next word
    # A URL's parameters read whole as well: the pieces split a name at shell punctuation
    # (``?key[]=X``).
    found += _url_secrets(text) + _url_userinfo(text)
    return sorted(found, key=lambda item: item.start)


def _placed(text: str, where: list[int], item: _Found) -> _Found:
    """`item`, found in `text` without its quotes, placed in `text` over its whole value.

    The quotes inside the value are covered, and up to the quote closing it where one opens it.
    """
    if item.rest:
        # All the rest of the word from just after its "=" (or ``-k``): quotes at either end
        # included (``--auth='`` + ``x'y'``, ``HF_TOKEN=''``).
        return _Found(item.name, where[item.start - 1] + 1, len(text), rest=True)
    if item.end == item.start:
        return _Found(item.name, where[item.start], where[item.start])
    start, end = where[item.start], where[item.end - 1] + 1
    quote = text[start - 1] if start > 0 else ""
    if quote in ("'", '"'):
        # ``--api-key 'a b'``: the value runs to its closing quote, spaces and all (to the end
        # of the text if none closes it); one find from `start`, so linear in all.
        close = text.find(quote, start)
        end = max(end, close if close >= 0 else len(text))
    return _Found(item.name, start, end)


def _bare_name(piece: str) -> bool:
    """Whether `piece` is a name alone that says secret (``VLLM_API_KEY``, ``api_key``)."""
    normal = unicodedata.normalize("NFKC", piece)
    return bool(_IDENTIFIER.fullmatch(normal)) and _secret_variable(piece)


def _scan_plain(text: str, *, word: bool) -> list[_Found]:
    """`_scan` of a text without quotes.

    Besides the pieces `_piece_secret` names: a name alone followed by ``=`` or ``:``
    (``os.environ[K] = X``, ``{api_key : X}``); and the shell's two builtins that assign a
    variable by its name, ``printf -v NAME ...`` (the rest of its command is the value) and
    ``read NAME <<< X``.
    """
    found: list[_Found] = []
    pending: str | None = None
    bare: str | None = None  # a secret name alone, last piece: a "=" or ":" may follow it
    previous = ""
    builtin = ""  # "printf" or "read" while in such a command
    reading: str | None = None  # the secret name `read` assigns, until its command ends
    end = 0
    for match in _PIECE.finditer(text):
        piece, at = match.group(), match.start()
        gap = text[end:at]
        end = match.end()
        if _COMMAND_END.search(gap):
            builtin, reading = "", None
        elif reading is not None and "<<<" in gap:
            found.append(_Found(reading, at, match.end()))
            builtin, reading = "", None
            continue
        if bare is not None and set(gap) <= _CLOSING and piece[:1] in ("=", ":"):
            name, value_at = bare, (1 if len(piece) > 1 else None)
        else:
            name, value_at = _piece_secret(piece) or ("", -1)
        bare = None
        if not name and _bare_name(piece):
            bare = piece
            if builtin == "printf" and previous == "-v":
                # printf -v NAME FORMAT ARGS...: the rest of the command makes the value.
                stop = _COMMAND_END.search(text, match.end())
                rest = text[match.end() : stop.start() if stop else len(text)]
                start = match.end() + len(rest) - len(rest.lstrip())
                found.append(_Found(piece, start, match.end() + len(rest.rstrip())))
            elif builtin == "read" and reading is None:
                reading = piece
        elif piece in ("printf", "read") and not builtin:
            builtin = piece
        previous = piece
        if name and value_at is not None and piece[value_at:].lower() == _BEARER:
            value_at = None  # ``Authorization:Bearer X``: the token is the next piece
        if name and value_at is not None and word and at == 0:
            # ``--api-key=a b``, ``--auth="x"``: all the rest of the word is the value; if
            # nothing is left of it (``--auth=``), the next word is (`_scan` decides which).
            found.append(_Found(name, value_at, len(text), rest=True))
            if value_at < len(text):
                break
        if name and (value_at is None or value_at >= len(piece)):
            pending = name  # the value is the next piece (``Authorization: Bearer X``)
            continue
        if pending is not None:
            found.append(_Found(pending, at, match.end()))
            pending = None
            continue
        for url in _URL_CREDENTIALS.finditer(piece):
            name, group = _url_secret(url)
            found.append(_Found(name, at + url.start(group), at + url.end(group)))
        for key in KEY_SHAPE.finditer(piece):  # a key alone (``ghp_...``, ``hf_...``)
            found.append(_Found("a key-shaped word", at + key.start(), at + key.end()))
        for item in _url_secrets(piece):
            found.append(item._replace(start=at + item.start, end=at + item.end))
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
    ``API_KEY_FOR_LOG``, ``PGPASSWORD``, ``Authorization:``; also glued to a one-letter flag,
    curl's ``-HAuthorization:Bearer X``), ``Bearer``, and a password in a
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
    """`text` with each value of `found` replaced by `REDACTED`; overlapping values merged."""
    spans: list[list[int]] = []
    for item in sorted(found, key=lambda f: f.start):
        if item.end <= item.start:
            continue
        if spans and item.start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], item.end)
        else:
            spans.append([item.start, item.end])
    for start, end in reversed(spans):  # from the end, so earlier offsets stay right
        # (a value already redacted, read as the piece inside its brackets, stays as is)
        if not (start > 0 and text[start - 1 : end + 1] == REDACTED):
            text = text[:start] + REDACTED + text[end:]
    return text


def redact_text(text: str) -> str:
    """`text` (a command line, or any text holding one) with every secret value replaced.

    What counts is what `secret_argument` refuses; ``sk-...`` keys go too. For a command line
    shown in a message before it could be split into words (an unclosed quote).
    """
    return KEY_SHAPE.sub(REDACTED, _blank(text, _scan(text, word=False)))


def redact_urls(text: str) -> str:
    """`text` with the secrets of every URL in it replaced: a password and secret parameters.

    ``https://user:pass@host`` and ``http://h/v1?key=X`` (or ``&api-key=X``, ``#token=X``:
    a parameter `redact_text` would redact) lose their values; the rest of the text is left as
    it is. For messages that may quote a configured URL (a server's error naming its base URL),
    where `redact_text`'s reading of ``name: value`` prose would take out too much.
    """
    return _blank(text, _url_found(text))


def _url_found(text: str) -> list[_Found]:
    """Every secret of the URLs in `text`: a password or a token as the user, and parameters."""
    found: list[_Found] = []
    for url in _URL_CREDENTIALS.finditer(text):
        name, group = _url_secret(url)
        found.append(_Found(name, url.start(group), url.end(group)))
    return found + _url_secrets(text) + _url_userinfo(text)


_SCHEME_RE = re.compile(_SCHEME)
_AUTHORITY_END = re.compile(r"[/?#]")
_AUTHORITY_OR_SPACE_END = re.compile(r"[/?#\s]")
_HOST_AFTER = re.compile(r"[\w.\-]+(?::\d*)?(?=[/?#\s]|$)")
_HOST_ENDING = re.compile(r"[\w.\-]+(?::\d*)?[/?#]|[\w.\-]+:\d+$")
_SPACE = re.compile(r"\s")
_USERINFO_REACH = 256
"""How far past a URL's host part an "@" is looked for (`_url_userinfo`): no password is longer,
and a bound keeps a text of many URLs linear."""


def _url_userinfo(text: str, *, spaces: bool = False) -> list[_Found]:
    """The user and password of each URL in `text` as a client reads them, whatever they hold.

    `_URL_CREDENTIALS` (and `_scan`'s pieces, split at shell punctuation) end a password at a
    character a password may well hold: ``u:pa;ss@h``, ``u:p&w(x@h``, ``u:p{q|r<s@h``, ``u:p]q@h``
    are sent (or refused) by httpx and urllib, which read the userinfo as all of the authority
    (``scheme://`` up to the first ``/``, ``?`` or ``#``) before its last ``@``. A password
    holding one of those three ends the authority early (``u:pa/ss@h``: host ``u``, port
    ``pa``); the ``@`` after it, with a host after that, still marks what the user meant as
    credentials. `spaces`: a space or tab may stand in the password too (a spec, where it is
    part of the URL, ``openai:m@http://u:a b@h/v1``, which httpx sends); in other text (a
    message, a command line) a space ends the URL.
    """
    found: list[_Found] = []
    ends = _AUTHORITY_END if spaces else _AUTHORITY_OR_SPACE_END
    for scheme in _SCHEME_RE.finditer(text):
        start = scheme.end()
        end_match = ends.search(text, start)
        stop = end_match.start() if end_match else len(text)
        authority = text[start:stop]
        at = authority.rfind("@")
        if at >= 0:
            end = start + at
        else:
            # ``u:pa/ss@h``: only where a ":" is followed by no port.
            user, colon, port = authority.partition(":")
            if not colon or (port.isascii() and port.isdigit()):
                continue
            at = text.find("@", stop, stop + _USERINFO_REACH)
            if at < 0 or (not spaces and _SPACE.search(text, stop, at)):
                continue
            end = at
        if not _HOST_AFTER.match(text, end + 1):
            continue
        userinfo = text[start:end]
        if _SPACE.search(userinfo) and not _HOST_ENDING.match(text, end + 1):
            # A space in it only where a path or a port ends the host (``u:a b@h/v1``,
            # ``u:a b@h:8000``), not in prose (``see http://h:8000 or mail me@x.org``).
            continue
        user, colon, _ = userinfo.partition(":")
        if colon:
            found.append(_Found("a password in a URL", start + len(user) + 1, end))
        else:
            found.append(_Found("a token in a URL", start, end))
    return found


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
        found = _scan(arg, word=True)
        # A value is redacted whole; one that is itself a secret's name (``Bearer --api-key
        # X``: ``--api-key`` is Bearer's value) still makes the next word a value.
        out.append(REDACTED if pending else KEY_SHAPE.sub(REDACTED, _blank(arg, found)))
        pending = bool(found) and found[-1].start == found[-1].end == len(arg)
    return out


def redact_spec(spec: str) -> str:
    """A model, judge or data spec as it may be recorded: every secret value replaced.

    Each of its comma-separated parts is redacted as `redact_text` does, and so is the value of
    each ``key=value`` option on its own (``args=--api-key X``: the flag is the value's first
    word). The value of an option naming an environment variable (``key_env=MY_KEY``: its
    last word is ``env``) is kept when it is a plain variable's name (`plain_variable_name`:
    ``MY_API_KEY``), which no key looks like; any other (``key_env=hunter2``, perhaps a key
    pasted there) is hidden like a secret, whether or not such a variable is set: what is
    recorded does not depend on the environment.
    """
    return ",".join(_redact_part(part) for part in _comma_values(_password_parts(spec)))


_OPEN_AUTHORITY = re.compile(r"://[^/?#@\s]*\Z")
"""Text ending inside a URL's authority, before any "@" (``...@http://u:pa``)."""


def splits_a_password(before: str, piece: str) -> bool:
    """Whether a "," between `before` and `piece` falls inside a URL's user or password.

    ``openai:m@http://u:pa,ss@host/v1``: split there, neither half reads as a URL holding a
    password (``pa`` looks like a port, ``ss@host`` like a spec of its own).
    """
    return bool(_OPEN_AUTHORITY.search(before)) and "@" in re.split(r"[/?#]", piece, maxsplit=1)[0]


def _password_parts(spec: str) -> list[str]:
    """`spec` split at its commas, but not at one inside a URL's user or password."""
    parts: list[str] = []
    for piece in spec.split(","):
        if parts and splits_a_password(parts[-1], piece):
            parts[-1] += "," + piece
        else:
            parts.append(piece)
    return parts


def _comma_values(parts: list[str]) -> list[str]:
    """A spec's comma-separated `parts`, a value glued by "," to its name hidden.

    ``openai:m@http://h/v1/key,X``: the "," ends the spec's part, yet the URL's last segment
    names a secret and ``X`` is its value (`_comma_value`).
    """
    out = parts[:1]
    for before, part in itertools.pairwise(parts):
        end = _comma_value(before, part)
        out.append(REDACTED + part[end:] if end else part)
    return out


def continues_a_secret(before: str, piece: str) -> bool:
    """Whether `piece`, after a "," that ended `before`, is the value of a secret `before` names.

    ``openai:m@http://h/v1/key,X``: a list of specs split at its commas must keep ``X`` with the
    URL naming it, or it is shown alone as another spec (``unknown model backend 'X'``).
    """
    return _comma_value(before, piece) > 0


_COMMA_VALUE = re.compile(r"[^/?#\s=:]+(?=[/?#\s]|$)")


def _comma_value(before: str, part: str) -> int:
    """Where the value at the start of `part` ends, if the part `before` names it; else 0.

    `before` must end in a URL whose last path segment names a secret (``.../v1/key``), and
    `part` start with what looks like a value (`_looks_like_value`) and be no option
    (``timeout=5``: a "=" before its first "/") nor another spec (``hf:org/model``).
    """
    head = _COMMA_VALUE.match(part)
    if not head or not _looks_like_value(head.group()):
        return 0
    urls = list(_URL_PATH.finditer(before))
    if not urls or urls[-1].end() != len(before):
        return 0
    segments = [s for s in urls[-1].group(1)[1:].split("/") if s not in ("", ".")]
    return head.end() if segments and _path_secret(segments[-1]) else 0


SHOWN_SPEC_CHARS = 200
"""How much of a long spec a line echoes (`shown_spec`): a spec is stored and keyed whole."""


def shown_spec(spec: str) -> str:
    """A spec as a printed line echoes it: redacted, and cut after `SHOWN_SPEC_CHARS` characters.

    Only for what is shown: a 100 KB ``chat_template_kwargs=`` value would otherwise be printed
    whole; where a spec is stored or keyed, `redact_spec` gives it whole.
    """
    text = redact_spec(spec)
    if len(text) <= SHOWN_SPEC_CHARS:
        return text
    return f"{text[:SHOWN_SPEC_CHARS]}… ({len(text):,} characters)"


def _redact_part(part: str) -> str:
    key, sep, value = part.partition("=")
    if sep and value:
        part = key + sep + _redact_spec_text(value)
    return _redact_spec_text(part)


def _redact_spec_text(text: str) -> str:
    found = [f for f in _scan(text, word=False) if not _names_a_variable(text, f)]
    found += _url_userinfo(text, spaces=True)  # a space in a spec's URL is the URL's
    return KEY_SHAPE.sub(REDACTED, _blank(text, found))


def _names_a_variable(text: str, found: _Found) -> bool:
    words = _words(found.name)
    return bool(words) and words[-1] == "env" and plain_variable_name(text[found.start : found.end])


def spec_secret_values(spec: str) -> list[str]:
    """The values `redact_spec` hides in `spec`, longest first: for `redact_values`.

    A message may quote a spec's pieces apart from the spec (``dataset not found: PATH``,
    ``option n='X' is not an integer``), or changed (a path with ``//`` made ``/``), where
    `redact_spec` could not read them in place: their values are looked for instead.
    """
    values: set[str] = set()
    parts = spec.split(",")
    for before, part in itertools.pairwise(parts):
        values.add(part[: _comma_value(before, part)])
    for part in parts:
        _, sep, value = part.partition("=")
        for text in (part, value) if sep and value else (part,):
            found = [f for f in _scan(text, word=False) if not _names_a_variable(text, f)]
            found += _url_userinfo(text, spaces=True)
            values.update(text[f.start : f.end] for f in found if f.end > f.start)
            values.update(shape.group() for shape in KEY_SHAPE.finditer(text))
    values -= {REDACTED, ""}
    return sorted(values, key=len, reverse=True)


_SHORT_VALUE = 4
"""A hidden value shorter than this is a common word or a piece of one (``token=a``):
`redact_values` takes it out only where it stands as a value, right after "=", ":" or "/" and
with no letter or digit after it, so "a save_to_disk folder" keeps its "a"."""


def redact_values(text: str, values: Sequence[str]) -> str:
    """`text` with each of `values` (`spec_secret_values`) replaced by `REDACTED`, in one pass.

    A value of `_SHORT_VALUE` characters or more is replaced wherever it stands; a shorter one
    only right after "=", ":" or "/" and with no letter or digit after it.
    """
    if not values:
        return text
    alternatives = [
        re.escape(v) if len(v) >= _SHORT_VALUE else rf"(?<=[=:/]){re.escape(v)}(?![^\W_])"
        for v in sorted(values, key=len, reverse=True)  # the longest first, where two overlap
    ]
    return re.sub("|".join(alternatives), REDACTED, text)


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A key of hexadecimal digits alone (Azure's 32, Together's 64): no variable is named so. Not a
# key shape elsewhere: a commit's hash (``revision=`` 40 hex digits) is no secret.
_LONG_HEX = re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{32,}")


def key_env_name(value: str) -> str:
    """`value`, an option naming the environment variable that holds a key (``key_env=``).

    A key pasted there by mistake would be recorded with the spec and shown in messages:
    a value that is no variable's name (``[A-Za-z_][A-Za-z0-9_]*``) or that looks like a key
    (`KEY_SHAPE`: ``gsk_...``, ``r8_...``, ``fw_...`` among others; 32 hexadecimal digits or
    more, as Azure's and Together's keys are; or 20 characters or more mixing lower case,
    upper case and digits with no ``_``, as generated tokens do) is refused, and the message
    never shows it.

    Args:
        value: The option's value.

    Returns:
        `value`, a variable's name.

    Raises:
        ValueError: `value` is not a variable's name, or looks like a key.

    """
    looks_generated = (
        len(value) >= 20
        and "_" not in value
        and any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and any(c.isdigit() for c in value)
    )
    if (
        not _ENV_NAME.fullmatch(value)
        or KEY_SHAPE.search(value)
        or _LONG_HEX.search(value)
        or looks_generated
    ):
        raise ValueError(
            "key_env must name the environment variable that holds the key (letters, "
            "digits and _, as OPENAI_API_KEY), and what was given is not such a name or looks "
            "like a key itself (not shown): put the key in a variable, then pass key_env=VAR"
        )
    return value


_PLAIN_VARIABLE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def plain_variable_name(name: str) -> bool:
    """Whether `name` reads as a variable's name that no key looks like (``TOGETHER_API_KEY``).

    Capitals and digits in words joined by ``_``, one of them saying key or token
    (``OPENAI_API_KEY``, ``HF_TOKEN``, ``MY_KEY_2``), and no key's shape in it. A ``key_env``
    naming a variable that is not set may be shown only if its name is so plain: any other value
    (``hunter2``, ``AbCdEfGh12345``) may be a key pasted there, and is not shown.
    """
    return (
        bool(_PLAIN_VARIABLE.fullmatch(name))
        and _secret_variable(name)
        and not KEY_SHAPE.search(name)
        and not _LONG_HEX.search(name)
    )


NOT_SPECS = frozenset(
    {
        "formulate", "gen", "generation", "prompt", "prompts",  # prompt text
        "breakdown", "breakdown_counts", "sensitivity",  # results by the data's groups
    }
)  # fmt: skip
"""Fields of a run record holding prompt text or the data's group names, not specs: left as
they are by `redact_record` (an instruction may well say "Answer key: ...", a group be named
"auth: login"); lmmprobe records no secret in them."""


def redact_record(doc: Any) -> Any:
    """A copy of a JSON document of a run (spec, manifest, results) with `redact_spec` applied.

    Every string, dictionary keys included (the manifest and results key models by spec), is
    redacted, except under `NOT_SPECS`. Whatever is not a dict, list or string is
    returned as is.
    """
    if isinstance(doc, str):
        return redact_spec(doc)
    if isinstance(doc, list | tuple):
        return [redact_record(item) for item in doc]
    if isinstance(doc, dict):
        return {
            (redact_spec(k) if isinstance(k, str) else k): (
                v if k in NOT_SPECS else redact_record(v)
            )
            for k, v in doc.items()
        }
    return doc
