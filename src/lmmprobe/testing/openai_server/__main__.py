"""The command that serves the fake OpenAI-compatible server until Ctrl-C.

``python -m lmmprobe.testing.openai_server [--port N] [--latency S] [--api-key KEY] ...`` starts
`FakeOpenAIServer` on 127.0.0.1, prints its URL and the ``lmmprobe run`` line that uses it, and
serves until interrupted (Ctrl-C or SIGTERM), so the ``openai:`` backend can be tried without a
network or a GPU. It is a ``python -m`` entry rather than an ``lmmprobe`` subcommand because the
package never imports `lmmprobe.testing` (an import-linter contract).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from lmmprobe.testing.openai_server import FAULT_KINDS, MODEL_ID, FakeOpenAIServer, FaultPlan

DEFAULT_PORT = 8000
_PROG = "python -m lmmprobe.testing.openai_server"


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
    server = FakeOpenAIServer(
        latency=args.latency,
        faults=faults,
        api_key=args.api_key,
        always=args.always,
        logprobs=not args.no_logprobs,
        port=args.port,
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
        print(f"try: lmmprobe run -m openai:{MODEL_ID}@{url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C (or SIGTERM, below) ends serving
            threading.Event().wait()  # serving happens on the server's thread
    finally:
        server.__exit__(None, None, None)
    print(f"stopped after {server.requests_total} chat completion(s)", flush=True)
    return 0


if __name__ == "__main__":  # python -m lmmprobe.testing.openai_server: serve until Ctrl-C
    raise SystemExit(main())
