"""The command that serves the fake OpenAI-compatible server until Ctrl-C.

``python -m lmmprobe.testing.openai_server [--port N] [--latency S] [--api-key KEY] ...`` starts
`FakeOpenAIServer` on 127.0.0.1, prints its URL and the ``lmmprobe run`` line that uses it, and
serves until interrupted (Ctrl-C or SIGTERM), so the ``openai:`` backend can be tried without a
network or a GPU. ``--reply-table FILE`` scripts replies by prompt (a judge from a shell:
``lmmprobe run ... --judge openai:judge@URL``) and ``--replies FILE`` replies in order, as the
Python arguments ``reply_table`` and ``replies`` do. It is a ``python -m`` entry rather than an ``lmmprobe`` subcommand because the
package never imports `lmmprobe.testing` (an import-linter contract).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from lmmprobe._command import beside_python
from lmmprobe.testing.openai_server import FAULT_KINDS, MODEL_ID, FakeOpenAIServer, FaultPlan

DEFAULT_PORT = 8000
_PROG = "python -m lmmprobe.testing.openai_server"
MAX_SCRIPT_BYTES = 16 * 2**20
"""A script file larger than this is refused (it is read whole)."""


class ScriptError(ValueError):
    """A ``--reply-table`` or ``--replies`` file cannot be read (one line: file, line, why)."""


class _Twice(ValueError):
    """A key given twice in one JSON object (JSON would silently keep the last)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Twice(key)
        out[key] = value
    return out


def _loads(path: Path, number: int | None, text: str) -> Any:
    """One JSON value, refusing a key given twice and nesting past the decoder's reach.

    Raises:
        json.JSONDecodeError: Not JSON (the caller decides: JSON Lines, or an error).
        ScriptError: A key given twice, or nesting too deep (file and line named).

    """
    at = f"{path}:{number}" if number is not None else str(path)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except _Twice as exc:
        raise ScriptError(
            f"{at}: the key {str(exc)[:80]!r} is given twice (JSON would keep only the last)"
        ) from None
    except RecursionError:  # nested past what the C decoder follows (about 1,000 levels)
        raise ScriptError(f"{at}: nested too deeply to read") from None


def _documents(path: Path) -> list[tuple[int, Any]]:
    """The file's JSON values with their line numbers: one document, else one per line.

    Raises:
        ScriptError: The file cannot be read, is too large or empty, a line is not JSON, a
            key is given twice or the nesting is too deep.

    """
    try:
        if path.stat().st_size > MAX_SCRIPT_BYTES:
            raise ScriptError(f"{path}: larger than {MAX_SCRIPT_BYTES // 2**20} MiB")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        at = path.read_bytes().count(b"\n", 0, exc.start) + 1
        raise ScriptError(f"{path}:{at}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ScriptError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        return [(1, _loads(path, None, text))]
    except json.JSONDecodeError:
        pass  # not one document: JSON Lines
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((number, _loads(path, number, line)))
        except json.JSONDecodeError as exc:
            raise ScriptError(f"{path}:{number}: not JSON: {exc.msg}") from exc
    if not out:  # an empty file would script nothing, silently
        raise ScriptError(f"{path}: the file is empty (no JSON value in it)")
    return out


def _shown(value: Any) -> str:
    """The start of a value's JSON, for a message."""
    try:
        return json.dumps(value)[:80]
    except (RecursionError, ValueError):
        return type(value).__name__


def load_reply_table(path: Path) -> list[tuple[str, str]]:
    """A ``--reply-table`` file as (text, reply) pairs, in the file's order (first match wins).

    The file is a JSON object ``{"TEXT": "REPLY", ...}``, or a JSON array (or JSON Lines) of
    ``{"contains": TEXT, "reply": REPLY}`` objects or ``[TEXT, REPLY]`` pairs. A TEXT
    ``@MODEL rest`` matches requests for that model name only; a REPLY ``!fail`` answers 400,
    ``!missing`` 404 (a misspelt model), ``!slow=S:TEXT`` answers TEXT S seconds later (as `FakeOpenAIServer`'s ``reply_table``).

    Raises:
        ScriptError: The file or an entry is malformed (file, line and entry named).

    """
    docs = _documents(path)
    one = docs[0][1] if len(docs) == 1 else None
    # A JSON Lines file of one entry reads as one object too: its keys tell the two apart.
    if isinstance(one, dict) and set(one) != {"contains", "reply"}:
        entries: list[tuple[int, Any]] = [(1, [k, v]) for k, v in one.items()]
    elif isinstance(one, list) and not all(isinstance(x, str) for x in one):
        entries = [(1, e) for e in one]  # an array of entries, not one [TEXT, REPLY] line
    else:
        entries = docs
    table = []
    for number, entry in entries:
        pair = [entry.get("contains"), entry.get("reply")] if isinstance(entry, dict) else entry
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(x, str) for x in pair)
        ):
            raise ScriptError(
                f'{path}:{number}: an entry must be {{"contains": TEXT, "reply": REPLY}} '
                f"or [TEXT, REPLY] with text values, got {_shown(entry)}"
            )
        problem = _slow_problem(pair[1])
        if problem is not None:
            raise ScriptError(f"{path}:{number}: the reply {pair[1][:60]!r}: {problem}")
        table.append((pair[0], pair[1]))
    if not table:
        raise ScriptError(f"{path}: no entries; give {{TEXT: REPLY, ...}} or a list of entries")
    return table


MAX_SLOW_SECONDS = 3600.0
"""The longest delay a ``!slow=S:TEXT`` reply may ask for."""


def _slow_problem(reply: str) -> str | None:
    """What is wrong with a ``!slow=S:TEXT`` reply's S (a number of seconds), or None.

    Checked at load: a bad S would otherwise fail only when a request matches, and the server
    would then drop that connection without a word.
    """
    if not reply.startswith("!slow="):
        return None
    seconds, colon, _ = reply.removeprefix("!slow=").partition(":")
    try:
        # ASCII only: float() also reads other scripts' digits.
        value = float(seconds) if seconds.isascii() and colon else math.nan
    except ValueError:
        value = math.nan
    if not 0 <= value <= MAX_SLOW_SECONDS:  # NaN fails too
        return f"write !slow=S:TEXT with S seconds from 0 to {MAX_SLOW_SECONDS:,.0f}"
    return None


def _reply_problem(reply: dict[str, Any]) -> str | None:
    """What is wrong with a ``--replies`` message object, or None.

    Its ``content`` must be text, null or a list of content parts (objects, as Mistral's
    reasoning models send: ``[{"type": "thinking", ...}, {"type": "text", "text": ...}]``),
    its ``tool_calls`` a list of objects, as in an OpenAI assistant message, and its
    ``finish_reason`` (the choice's, e.g. ``length``) text; anything else would be served as a
    200 no client can read.
    """
    content = reply.get("content")
    parts = isinstance(content, list) and all(isinstance(p, dict) for p in content)
    if content is not None and not isinstance(content, str) and not parts:
        return f"content must be text, null or a list of parts, got {_shown(content)}"
    calls = reply.get("tool_calls")
    if calls is not None and not (
        isinstance(calls, list) and all(isinstance(c, dict) for c in calls)
    ):
        return f"tool_calls must be a list of objects, got {_shown(calls)}"
    finish = reply.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        return f"finish_reason must be text, got {_shown(finish)}"
    return None


def load_replies(path: Path) -> list[str | dict[str, Any]]:
    """A ``--replies`` file: replies sent in order, one per chat completion.

    A JSON array, or JSON Lines, of replies: a string (the message content) or an object
    merged into the assistant message (``{"tool_calls": [...]}``). Once they run out, requests
    get a 400.

    Raises:
        ScriptError: The file or a reply is malformed (file and line named).

    """
    docs = _documents(path)
    items = (
        [(1, r) for r in docs[0][1]] if len(docs) == 1 and isinstance(docs[0][1], list) else docs
    )
    replies: list[str | dict[str, Any]] = []
    for number, reply in items:
        if not isinstance(reply, str | dict):
            raise ScriptError(
                f"{path}:{number}: a reply must be a string or an object, got {_shown(reply)}"
            )
        problem = None if isinstance(reply, str) else _reply_problem(reply)
        if problem is not None:
            raise ScriptError(f"{path}:{number}: reply {len(replies) + 1}: {problem}")
        replies.append(reply)
    if not replies:
        raise ScriptError(f"{path}: no replies; give a JSON array or JSON Lines of replies")
    return replies


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=_PROG,
        description=(
            "Serve a fake OpenAI-compatible chat-completions API on 127.0.0.1 until Ctrl-C. It "
            "answers from the dominant colour of the image it receives (any model name works), "
            "for trying the openai: backend offline."
        ),
    )
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"loopback port to listen on; 0 picks a free one (default {DEFAULT_PORT})",
    )
    p.add_argument(
        "--latency", type=float, default=0.0, help="seconds each answer waits (default 0)"
    )
    p.add_argument(
        "--api-key",
        default=None,
        help="require 'Authorization: Bearer KEY' (default: any key, or none, is accepted)",
    )
    p.add_argument(
        "--fault-rate",
        type=float,
        default=0.0,
        help="probability that an attempt gets an injected fault (default 0)",
    )
    p.add_argument(
        "--fault-kinds",
        default=",".join(FaultPlan.kinds),
        help=f"comma-separated kinds to inject, of: {', '.join(FAULT_KINDS)}",
    )
    p.add_argument(
        "--always",
        choices=FAULT_KINDS,
        default=None,
        help="inject this fault kind into every chat completion",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the fault draws (default 0)")
    p.add_argument(
        "--reply-table",
        type=Path,
        metavar="FILE",
        help="replies by prompt, for a judge: a JSON object {TEXT: REPLY} or JSON Lines of "
        '{"contains": TEXT, "reply": REPLY}; a request whose last user turn contains '
        "TEXT gets REPLY (the first match; '@MODEL TEXT' for one model name; REPLY '!fail' "
        "answers 400, '!missing' 404 model_not_found); other requests are answered as usual",
    )
    p.add_argument(
        "--replies",
        type=Path,
        metavar="FILE",
        help="replies in order, one per chat completion: a JSON array or JSON Lines of "
        "strings (the content) or message objects; once they run out, requests get a 400",
    )
    p.add_argument(
        "--no-logprobs",
        action="store_true",
        help="ignore the logprobs parameter, as some servers do",
    )
    return p


def _stop_on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until interrupted; the exit status (0, or 2 for bad options or a busy port).

    Args:
        argv: The command-line arguments (default: ``sys.argv[1:]``).

    """
    parser = _parser()
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port}: must lie in 0..65535")
    try:
        kinds = tuple(k.strip() for k in args.fault_kinds.split(",") if k.strip())
        faults = (
            FaultPlan(rate=args.fault_rate, kinds=kinds, seed=args.seed)
            if args.fault_rate
            else None
        )
    except ValueError as exc:
        parser.error(f"--fault-rate/--fault-kinds: {exc}")
    try:
        table = load_reply_table(args.reply_table) if args.reply_table else []
        replies = load_replies(args.replies) if args.replies else None
    except ScriptError as exc:
        parser.error(str(exc))
    server = FakeOpenAIServer(
        latency=args.latency,
        faults=faults,
        api_key=args.api_key,
        always=args.always,
        logprobs=not args.no_logprobs,
        port=args.port,
        reply_table=table,
        replies=replies,
    )
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        server.__enter__()
    except OSError as exc:
        print(f"{_PROG}: cannot listen on 127.0.0.1:{args.port}: {exc}", file=sys.stderr)
        return 2
    try:
        url = server.base_url
        print(f"serving a fake OpenAI-compatible API at {url} (Ctrl-C stops it)", flush=True)
        # The console script as this shell can start it (`.venv/bin/lmmprobe` before activating).
        print(f"try: {beside_python()} run -m openai:{MODEL_ID}@{url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C (or SIGTERM, below) ends serving
            threading.Event().wait()  # serving happens on the server's thread
    finally:
        server.__exit__(None, None, None)
    print(f"stopped after {server.requests_total} chat completion(s)", flush=True)
    return 0


if __name__ == "__main__":  # python -m lmmprobe.testing.openai_server: serve until Ctrl-C
    raise SystemExit(main())
