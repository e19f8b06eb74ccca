"""A vLLM-shaped server command over the fake OpenAI server, for the served-backend tests.

Run as ``python fake_served_server.py MODEL --host 127.0.0.1 --port N [vllm flags...]`` (or with
``--model-path MODEL``, as SGLang's launcher takes it): it prints the arguments it was given (the
tests read them in the server log), ignores the server flags it does not know, and serves
``python -m lmmprobe.testing.openai_server`` on the port. ``--fake-*`` flags make it misbehave
as a real server can: slow answers, an exit at start, never answering, a child process (as
vLLM's engine processes), a crash mid-run, and a file naming its process ids.

It requires the key vLLM would (``$VLLM_API_KEY``, or ``--api-key`` as SGLang takes it) on every
request, as vLLM does; ``--fake-open`` answers without it (a server that takes no key, or
another process on the port), ``--fake-drip`` answers ``GET /v1/models`` with its headers and
then a byte a second, ``--fake-keyfile FILE`` writes the key it was given there and
``--fake-cmdline FILE`` its command line as the system shows it (``/proc/self/cmdline``).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from lmmprobe.testing.openai_server.__main__ import main as serve


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fake_served_server.py")
    p.add_argument("model", nargs="?")
    p.add_argument("--model-path")
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--fake-latency", type=float, default=0.0, help="seconds per answer")
    p.add_argument(
        "--fake-exit",
        default=None,
        help="print this to stderr ($KEY: the key, $VAR: the variable), exit 3 at start",
    )
    p.add_argument("--fake-never-answer", action="store_true", help="start but never listen")
    p.add_argument("--fake-child", action="store_true", help="start a child that sleeps")
    p.add_argument("--fake-die-after", type=float, default=None, help="exit 5 after S seconds")
    p.add_argument("--fake-pidfile", default=None, help="write 'SERVER_PID CHILD_PID' here")
    p.add_argument("--api-key", default=None, help="the key, as SGLang takes it")
    p.add_argument("--fake-open", action="store_true", help="answer without the key")
    p.add_argument("--fake-drip", action="store_true", help="send /v1/models a byte a second")
    p.add_argument("--fake-keyfile", default=None, help="write the key it was given here")
    p.add_argument("--fake-cmdline", default=None, help="write its /proc/self/cmdline here")
    return p


def _drip(port: int) -> int:
    """Answer every request with headers, then one byte of a body a second, for ten minutes."""
    listener = socket.create_server(("127.0.0.1", port))

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000000\r\n\r\n{")  # fmt: skip
            for _ in range(600):
                time.sleep(1)
                conn.sendall(b" ")

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


def main() -> int:
    """Behave as told, then serve until SIGTERM."""
    args, ignored = _parser().parse_known_args()
    print(f"fake server: model {args.model or args.model_path}; args {sys.argv[1:]}", flush=True)
    print(f"fake server: ignoring {ignored}", flush=True)
    assert args.host == "127.0.0.1", "served models listen on loopback only"
    child = None
    if args.fake_child:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    key = args.api_key or os.environ.get("VLLM_API_KEY")
    if args.fake_keyfile:
        Path(args.fake_keyfile).write_text(key or "")
    if args.fake_cmdline:
        Path(args.fake_cmdline).write_bytes(Path("/proc/self/cmdline").read_bytes())
    if args.fake_pidfile:
        pids = f"{os.getpid()} {child.pid if child else ''}".strip()
        Path(args.fake_pidfile).write_text(pids)
    if args.fake_exit:
        print("loading weights...", flush=True)
        said = os.path.expandvars(args.fake_exit.replace("$KEY", key or ""))
        print(said, file=sys.stderr, flush=True)
        return 3
    if args.fake_never_answer:
        time.sleep(600)
        return 0
    if args.fake_die_after is not None:

        def die() -> None:
            print("fake server: Fatal Python error: Segmentation fault", flush=True)
            os._exit(5)

        threading.Timer(args.fake_die_after, die).start()
    if args.fake_drip:
        return _drip(args.port)
    # One word: a key token_urlsafe made may begin with "-", which argparse would take for an
    # option after a separate "--api-key" (1 run in 64 failed so).
    needs = [] if args.fake_open or not key else [f"--api-key={key}"]
    return serve(["--port", str(args.port), "--latency", str(args.fake_latency), *needs])


if __name__ == "__main__":
    sys.exit(main())
