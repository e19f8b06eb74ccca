"""Secrets on a served model's command line are refused, never recorded (issue 34, item 8).

A key given to the server on its command line (``command=``, ``args=`` or
``$LMMPROBE_VLLM_COMMAND``) would be written to the run's manifest and results (a spec is
recorded), and to the server's log by lmmprobe and by the server itself (vLLM logs its
arguments). Every flag that looks like it carries a secret is refused in one line that names
the flag and never its value; the server's secrets go through its environment.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.models.test_served import _command, _lmmprobe, _one_line_error

from lmmprobe.models._local_server import LocalServer, free_port
from lmmprobe.models.api_keys import REDACTED, redact_command, secret_argument
from lmmprobe.models.served import SERVERS, parse_options

SECRET = "hunter2-s3cr3t-value"

FLAGS = [
    (f"--api-key {SECRET}", "--api-key"),
    (f"--key {SECRET}", "--key"),
    (f"-k {SECRET}", "-k"),
    (f"-k{SECRET}", "-k"),
    (f"--apikey={SECRET}", "--apikey"),
    (f"--auth {SECRET}", "--auth"),
    (f"--passwd {SECRET}", "--passwd"),
    (f"--hf_token={SECRET}", "--hf_token"),
    (f"--admin-api-key {SECRET}", "--admin-api-key"),
]


def _nothing_recorded(tmp_path: Path, out: str) -> None:
    assert SECRET not in out
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(("flag", "name"), FLAGS)
@pytest.mark.parametrize("where", ["command=", "args=", "$LMMPROBE_VLLM_COMMAND"])
def test_a_secret_flag_is_refused_wherever_the_command_is_given(
    tmp_path: Path, where: str, flag: str, name: str
) -> None:
    env: dict[str, str] = {}
    if where == "command=":
        spec = f"vllm:some/model,command={_command()} {flag}"
    elif where == "args=":
        spec = f"vllm:some/model,command={_command()},args={flag}"
    else:
        spec = "vllm:some/model"
        env["LMMPROBE_VLLM_COMMAND"] = f"{_command()} {flag}"
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "--db", tmp_path / "db",
                     "--out", tmp_path / "o", **env)  # fmt: skip
    line = _one_line_error(proc)
    assert f"{where} cannot pass {name}:" in line
    assert "through its environment" in line
    assert not (tmp_path / "o").exists()
    _nothing_recorded(tmp_path, proc.stdout + proc.stderr)


def test_a_secret_in_an_environment_assignment_is_refused(tmp_path: Path) -> None:
    spec = f"vllm:some/model,command=env HF_TOKEN={SECRET} {_command()}"
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "--db", tmp_path / "db")
    assert "command= cannot pass HF_TOKEN:" in _one_line_error(proc)
    _nothing_recorded(tmp_path, proc.stdout + proc.stderr)


def test_an_unclosed_quote_does_not_echo_a_secret(tmp_path: Path) -> None:
    spec = f"vllm:some/model,command={_command()} --api-key '{SECRET}"
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "--db", tmp_path / "db")
    assert "No closing quotation" in _one_line_error(proc)
    _nothing_recorded(tmp_path, proc.stdout + proc.stderr)


@pytest.mark.parametrize(
    "args",
    ["--tokenizer org/tok", "--max-num-batched-tokens 8192", "--ssl-keyfile key.pem",
     "--return-tokens-as-token-ids", "--kv-cache-dtype fp8"],
)  # fmt: skip
def test_flags_that_only_mention_tokens_or_keys_pass(args: str) -> None:
    opts = parse_options(SERVERS["vllm"], "some/model", {"command": "true", "args": args})
    assert " ".join(opts.server_args) == args


def test_the_log_line_is_redacted_even_for_a_caller_that_did_not_check(tmp_path: Path) -> None:
    port = free_port()
    argv = ["/bin/sh", "-c", "exit 3", "--api-key", SECRET, f"--token={SECRET}"]
    server = LocalServer("test", argv, port, tmp_path / "server.log")
    with pytest.raises(ValueError, match="exited with status 3"):
        server.start(timeout=10)
    first = (tmp_path / "server.log").read_text().splitlines()[0]
    assert SECRET not in first
    assert f"--api-key {REDACTED} --token={REDACTED}" in first


VALUES = st.text(min_size=1).filter(lambda s: not s.startswith("-") and "=" not in s)
"""A secret: anything that is not itself a flag or an assignment."""


@given(
    st.lists(st.sampled_from(["--api-key", "-k", "--x", "--auth=", "HF_TOKEN=", "v", "--port"])),
    VALUES,
)
def test_redaction_leaves_no_value_after_a_secret_flag(flags: list[str], value: str) -> None:
    argv: list[str] = []
    for flag in flags:
        argv += [flag + value] if flag.endswith("=") else [flag, value]
    out = redact_command(argv)
    assert len(out) == len(argv)
    for i, arg in enumerate(argv):
        name = secret_argument(arg)
        if name is not None and arg == name:
            assert out[i + 1] == REDACTED  # the value that follows
        elif name is not None:
            assert out[i] == f"{name}={REDACTED}"
