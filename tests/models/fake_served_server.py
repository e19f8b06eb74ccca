"""A vLLM-shaped server command over the fake OpenAI server, for the served-backend tests.

Run as ``python fake_served_server.py MODEL --host 127.0.0.1 --port N [vllm flags...]`` (or with
``--model-path MODEL``, as SGLang's launcher takes it): it prints the arguments it was given (the
tests read them in the server log), ignores the server flags it does not know, and serves
``python -m lmmprobe.testing.openai_server`` on the port. ``--fake-*`` flags make it misbehave
as a real server can: slow answers, an exit at start, never answering, a child process (as
vLLM's engine processes), a crash mid-run, and a file naming its process ids.
"""

from __future__ import annotations

import argparse
import os
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
    p.add_argument("--fake-exit", default=None, help="print this to stderr, exit 3 at start")
    p.add_argument("--fake-never-answer", action="store_true", help="start but never listen")
    p.add_argument("--fake-child", action="store_true", help="start a child that sleeps")
    p.add_argument("--fake-die-after", type=float, default=None, help="exit 5 after S seconds")
    p.add_argument("--fake-pidfile", default=None, help="write 'SERVER_PID CHILD_PID' here")
    return p


def main() -> int:
    """Behave as told, then serve until SIGTERM."""
    args, ignored = _parser().parse_known_args()
    print(f"fake server: model {args.model or args.model_path}; args {sys.argv[1:]}", flush=True)
    print(f"fake server: ignoring {ignored}", flush=True)
    assert args.host == "127.0.0.1", "served models listen on loopback only"
    child = None
    if args.fake_child:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    if args.fake_pidfile:
        pids = f"{os.getpid()} {child.pid if child else ''}".strip()
        Path(args.fake_pidfile).write_text(pids)
    if args.fake_exit:
        print("loading weights...", flush=True)
        print(args.fake_exit, file=sys.stderr, flush=True)
        return 3
    if args.fake_never_answer:
        time.sleep(600)
        return 0
    if args.fake_die_after is not None:

        def die() -> None:
            print("fake server: Fatal Python error: Segmentation fault", flush=True)
            os._exit(5)

        threading.Timer(args.fake_die_after, die).start()
    return serve(["--port", str(args.port), "--latency", str(args.fake_latency)])


if __name__ == "__main__":
    sys.exit(main())
