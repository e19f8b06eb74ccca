"""``python -m lmmprobe.testing.openai_server``: the fake API served from a terminal (issue 23, 18).

The README's way to try the ``openai:`` backend offline: start the command, paste the URL it
prints into ``lmmprobe run -m openai:MODEL@URL``, stop it with Ctrl-C.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.console import as_from_a_shell

EXE = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))


# A shell whose virtual environment is not activated: lmmprobe is not on its $PATH.
NOT_ACTIVATED = {
    **os.environ,
    "PATH": os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep)
        if p and not (Path(p) / "lmmprobe").exists()
    ),
}  # fmt: skip


def test_the_command_serves_a_run_until_ctrl_c(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "lmmprobe.testing.openai_server", "--port", "0"],
        preexec_fn=as_from_a_shell,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=NOT_ACTIVATED,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+/v1) \(Ctrl-C stops it\)", first)
        assert match, first
        url = match.group(1)
        # The hint names the console script as this shell can start it (a bare `lmmprobe` is
        # not on its $PATH), and it runs as printed.
        assert EXE is not None
        hint = server.stdout.readline().strip()
        assert hint == f"try: {shlex.quote(EXE)} run -m openai:fake-vlm@{url}"
        run = subprocess.run(
            [*shlex.split(hint.removeprefix("try: ")), "-d", "demo,n=6,size=64", "-q",
             "--db", str(tmp_path / "db"), "--out", str(tmp_path / "out")],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
            env={k: v for k, v in NOT_ACTIVATED.items() if k != "OPENAI_API_KEY"},
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        results = json.loads((tmp_path / "out" / "results.json").read_text())
        metrics = results["models"][f"openai:fake-vlm@{url}"]["metrics"]
        # Every request answered (none failed), and the fake, naming the colour it sees, gets
        # the demo's colour questions right.
        assert metrics["error_rate"]["value"] == 0.0
        assert metrics["accuracy"]["value"] > 0.0
    finally:
        server.send_signal(signal.SIGINT)  # what Ctrl-C sends
        out, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    assert "Traceback" not in err and "RuntimeWarning" not in err, err
    served = re.search(r"stopped after (\d+) chat completion", out)
    assert served and int(served.group(1)) >= 6, out


@pytest.mark.parametrize("activated", [False, True])
def test_the_hint_is_relative_below_the_working_folder_and_bare_once_activated(
    activated: bool,
) -> None:
    assert EXE is not None
    venv = Path(EXE).parent.parent
    env = NOT_ACTIVATED
    if activated:
        env = {**env, "PATH": os.pathsep.join([str(Path(EXE).parent), env["PATH"]])}
    server = subprocess.Popen(
        [sys.executable, "-m", "lmmprobe.testing.openai_server", "--port", "0"],
        preexec_fn=as_from_a_shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=venv.parent, env=env,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        server.stdout.readline()
        hint = server.stdout.readline()
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)
    program = "lmmprobe" if activated else f"{venv.name}/bin/lmmprobe"
    assert hint.startswith(f"try: {program} run -m openai:fake-vlm@"), hint


def test_a_busy_port_is_one_line_and_exit_2() -> None:
    first = subprocess.Popen(
        [sys.executable, "-m", "lmmprobe.testing.openai_server", "--port", "0"],
        preexec_fn=as_from_a_shell,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stdout is not None
        port = re.search(r":(\d+)/v1", first.stdout.readline())
        assert port
        second = subprocess.run(
            [sys.executable, "-m", "lmmprobe.testing.openai_server", "--port", port.group(1)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert second.returncode == 2
        assert second.stderr.strip().count("\n") == 0
        assert f"cannot listen on 127.0.0.1:{port.group(1)}" in second.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)
    assert first.returncode == 0


@pytest.mark.parametrize(
    ("flag", "text", "says"),
    [
        ("--reply-table", "[" * 5000 + "]" * 5000, "{f}: nested too deeply to read"),
        ("--reply-table", '{"a": "A", "a": "B"}', "{f}: the key 'a' is given twice"),
        (
            "--reply-table",
            '{"contains": "x", "reply": "y"}\n{"q": {"k": 1, "k": 2}}\n',
            "{f}:2: the key 'k' is given twice",
        ),
        ("--reply-table", "", "{f}: the file is empty"),
        ("--reply-table", "\n\n", "{f}: the file is empty"),
        ("--reply-table", "{}", "{f}: no entries"),
        ("--replies", "[]", "{f}: no replies"),
        ("--replies", "", "{f}: the file is empty"),
        ("--replies", '"a"\n\xff\n', "{f}:2: not UTF-8 text"),
        # Before: these loaded, and a matching request was dropped unanswered, or served as a
        # 200 no client can read.
        ("--reply-table", '{"x": "!slow=abc:hi"}', "{f}:1: the reply '!slow=abc:hi': write"),
        ("--reply-table", '{"x": "!slow=1e308:hi"}', "seconds from 0 to 3,600"),
        ("--reply-table", '["a", "b"]\n["x", "!slow=-5:hi"]\n', "{f}:2: the reply '!slow=-5"),
        ("--reply-table", '{"x": "!slow=nan:hi"}', "seconds from 0 to 3,600"),
        ("--reply-table", '{"x": "!slow=5"}', "write !slow=S:TEXT"),
        (
            "--replies",
            '[{"content": {"a": 1}}]',
            '{f}:1: reply 1: content must be text, null or a list of parts, got {{"a": 1}}',
        ),
        (
            "--replies",
            '"ok"\n{"content": NaN}\n',
            "{f}:2: reply 2: content must be text, null or a list of parts, got NaN",
        ),
        (
            "--replies",
            '[{"tool_calls": "x"}]',
            "{f}:1: reply 1: tool_calls must be a list of objects",
        ),
        ("--replies", '[{"tool_calls": [1]}]', "reply 1: tool_calls must be a list of objects"),
        ("--replies", '[{"finish_reason": 3}]', "reply 1: finish_reason must be text, got 3"),
    ],
)
def test_a_bad_script_file_is_one_line_and_exit_2(
    tmp_path: Path, flag: str, text: str, says: str
) -> None:
    # Before: JSON nested 5,000 deep was a RecursionError traceback, and a key given twice or
    # an empty file was accepted silently (the server then scripted nothing, or the wrong reply).
    script = tmp_path / "script.json"
    script.write_bytes(text.encode("utf-8").replace("\xff".encode(), b"\xff"))
    proc = subprocess.run(
        [sys.executable, "-m", "lmmprobe.testing.openai_server", "--port", "0", flag, script],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert says.format(f=script) in proc.stderr.strip().splitlines()[-1]
