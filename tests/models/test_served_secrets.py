"""Secrets on a served model's command line are refused, never recorded (issue 34, item 8).

A key given to the server on its command line (``command=``, ``args=`` or
``$LMMPROBE_VLLM_COMMAND``) would be written to the run's manifest and results (a spec is
recorded), and to the server's log by lmmprobe and by the server itself (vLLM logs its
arguments). Every flag that looks like it carries a secret is refused in one line that names
the flag and never its value; the server's secrets go through its environment.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from tests.models.test_served import _command, _lmmprobe, _one_line_error

from lmmprobe._secrets import redact_spec
from lmmprobe.models._local_server import LocalServer, free_port
from lmmprobe.models.api_keys import (
    REDACTED,
    redact_command,
    redact_text,
    scrub_secrets,
    secret_argument,
)
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


@pytest.mark.parametrize("flag", ["--creds", "--cred", "--pw", "--db-creds", "--admin-pw"])
def test_short_names_for_credentials_and_passwords_are_secret_flags(flag: str) -> None:
    # Re-test 13 noticed ``--creds X`` and ``--pw X`` passed the check (``-p`` is a port).
    assert secret_argument(f"{flag}={SECRET}") == flag
    assert SECRET not in redact_text(f"serve model {flag} {SECRET} --port 8000")
    assert secret_argument("-p") is None


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
     "--return-tokens-as-token-ids", "--kv-cache-dtype fp8", "-HContent-Type:text/plain"],
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
# Found by this test once quotes were looked through (issue 34, re-test 2 #5): a value holding
# quotes was redacted only in part (``--auth='`` + value) or not at all (``--auth=''``).
@example(["--auth=", "--api-key"], "'")
@example(["--auth=", "--auth="], '"')
@example(["HF_TOKEN="], "x'y'z")
@example(["--auth="], "\\'")
@example(["--api-key"], "BEARER")  # a value that is itself a secret's name
@example(["--x", "--api-key"], "BEARER")  # ``Bearer --api-key X``: X is a value too
def test_redaction_leaves_no_value_after_a_secret_flag(flags: list[str], value: str) -> None:
    argv: list[str] = []
    flag_at: list[int] = []  # where each flag (not a value) stands in argv
    for flag in flags:
        flag_at.append(len(argv))
        argv += [flag + value] if flag.endswith("=") else [flag, value]
    out = redact_command(argv)
    assert len(out) == len(argv)
    for i in flag_at:
        arg = argv[i]
        name = secret_argument(arg)
        if name is not None and arg == name:
            assert out[i + 1] == REDACTED  # the value that follows
        elif name is not None and arg.startswith(name + "="):
            assert out[i] == f"{name}={REDACTED}"  # the rest of the word, whatever it holds


# The hostile re-test of issue 34 (finding 5): each was accepted, and the key reached
# results.json, results.md, the server's log and the store.
HOSTILE = [
    (f"--api-keys {SECRET}", "--api-keys"),
    (f"--api-ke {SECRET}", "--api-ke"),  # argparse takes an abbreviation for the flag
    (f"--api {SECRET}", "--api"),
    (f"--hf-tok {SECRET}", "--hf-tok"),
    (f"-K {SECRET}", "-K"),
    (f"PGPASSWORD={SECRET}", "PGPASSWORD"),
    (f"GITHUB_PAT={SECRET}", "GITHUB_PAT"),
    (f"--api-key-1 {SECRET}", "--api-key-1"),
    (f"--headers 'Authorization: Bearer {SECRET}'", "Authorization"),
    (f"--download-dir https://u:{SECRET}@h/x", "a password in a URL"),
    (f"--api-key\u00a0{SECRET}", "--api-key"),  # a no-break space: one shell word
    (f"--apiKey {SECRET}", "--apiKey"),
    (f"--secretkey {SECRET}", "--secretkey"),
    (f"--keyfile-password {SECRET}", "--keyfile-password"),
    (f"\uff3fAPI_KEY={SECRET}", "\uff3fAPI_KEY"),
    (f"--session-cookie {SECRET}", "--session-cookie"),
    # Re-test 3 of issue 34 (item 4): headers as a flag's value, and more names of secrets.
    (f"-H 'x-api-key: {SECRET}'", "x-api-key"),
    (f"--header=Authorization:Bearer {SECRET}", "Authorization"),
    (f"--passphrase {SECRET}", "--passphrase"),
    (f"--jwt {SECRET}", "--jwt"),
    (f"--hmac={SECRET}", "--hmac"),
    (f'--credentials-json \'{{"private_key":"{SECRET}"}}\'', "private_key"),
    # Re-test 19 of issue 34 (#20): curl's header glued to its short flag.
    (f"-HAuthorization:Bearer {SECRET}", "Authorization"),
    (f"-H'Authorization: {SECRET}'", "Authorization"),
    (f"-Hx-api-key:{SECRET}", "x-api-key"),
]
# Keys recognised by their shape alone (re-test 3, item 4): refused and redacted anywhere.
KEYS = [
    "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7",
    "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7xY9z01234567",
    "gho_" + "aB3dE5gH7jK9mN1pQ3sT5vW7",
    "github_pat_" + "11AB3dE5g_H7jK9mN1pQ3sT5vW7",
    "AIza" + "SyA-b3dE5gH7jK9mN1pQ3sT5vW7xY9z0",
    "AKIA" + "IOSFODNN7EXAMPL3",
    "xoxb-" + "1234-5678-aB3dE5gH7",
    "xoxp-" + "1234-5678-aB3dE5gH7",
    "sk-proj-" + "aB3dE5gH7jK9",
    # Re-test 4 of issue 34 (items 3, 4): more providers' prefixes, and JSON web tokens.
    "gsk_" + "aB3dE5gH7jK9mN1pQ3sT5vW7xY9z",  # Groq
    "r8_" + "aB3dE5gH7jK9mN1pQ3sT5vW7xY9z",  # Replicate
    "fw_" + "3ZaB3dE5gH7jK9mN1pQ3sT",  # Fireworks
    "glpat-" + "aB3dE5gH7jK9mN1pQ3sT",  # GitLab
    "xapp-" + "1-A0123-4567-aB3dE5gH7",  # Slack's app tokens
    "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0In0" + ".aB3dE5gH7jK9mN1p",
]
SNIPPETS = [
    (f"bash -c 'API_KEY_FOR_LOG={SECRET}; exec vllm serve m' _", "API_KEY_FOR_LOG"),
    (f"bash -c 'vllm serve --api-key {SECRET}'", "--api-key"),
    (f'sh -c "VLLM_API_KEY={SECRET} vllm serve"', "VLLM_API_KEY"),
    (f"env -S 'HF_TOKEN={SECRET} vllm serve'", "HF_TOKEN"),
    (f"bash -c 'x=1;--token\t{SECRET}'", "--token"),
]


@pytest.mark.parametrize(("args", "name"), HOSTILE)
def test_every_spelling_of_a_secret_flag_is_refused(args: str, name: str) -> None:
    kind = SERVERS["vllm"]
    with pytest.raises(ValueError, match="cannot pass") as refused:
        parse_options(kind, "some/model", {"command": "true", "args": args})
    assert f"args= cannot pass {name}:" in str(refused.value)
    assert SECRET not in str(refused.value)
    assert SECRET not in " ".join(redact_command(shlex.split(f"vllm serve {args}")))


@pytest.mark.parametrize("key", KEYS)
def test_a_key_shaped_word_is_refused_and_redacted_everywhere(key: str) -> None:
    with pytest.raises(ValueError, match="cannot pass") as refused:
        parse_options(SERVERS["vllm"], "some/model", {"command": "true", "args": f"--x {key}"})
    assert "args= cannot pass a key-shaped word:" in str(refused.value)
    assert key not in str(refused.value)
    for shown in (redact_text(f"use {key} now"), redact_spec(f"vllm:m,note={key}"),
                  " ".join(redact_command(["vllm", "serve", key])), scrub_secrets(f"bad {key}")):  # fmt: skip
        assert key not in shown and REDACTED in shown


@pytest.mark.parametrize(
    "text",
    ["hf_transfer", "--hf-token-path /dev/stdin", "ghp_short", "AKIA", "xoxb", "sk-learn",
     "openai:gpt-4o@https://api.example.com/v1", "hf:Qwen/Qwen2-VL-2B-Instruct", "--pin-memory",
     # re-test 4 of issue 34 (item 9): names holding a key's prefix, keys too short to be real
     "hf:org/task-sk-12345678", "hf:ghp_Studio/LLaVA-ghp_1234567890abcdefgh",
     "hf:m,revision=sk-abc12345678", "fw_version", "gsk_models", "hf:m,revision=" + "0f" * 20],
)  # fmt: skip
def test_names_that_only_resemble_keys_are_kept(text: str) -> None:
    assert redact_text(text) == text and redact_spec(text) == text


@pytest.mark.parametrize(("command", "name"), SNIPPETS)
def test_a_secret_inside_a_shell_snippet_is_refused(command: str, name: str) -> None:
    with pytest.raises(ValueError, match="cannot pass") as refused:
        parse_options(SERVERS["vllm"], "some/model", {"command": command})
    assert f"command= cannot pass {name}:" in str(refused.value)
    assert SECRET not in str(refused.value)
    assert SECRET not in " ".join(redact_command(shlex.split(command)))


def test_a_snippet_with_a_key_is_refused_and_nothing_recorded(tmp_path: Path) -> None:
    # The re-test's reproduction: the fake server started by a shell that first sets a key.
    snippet = f'API_KEY_FOR_LOG={SECRET}; exec {_command()} "$@"'
    spec = f"vllm:some/model,command=bash -c {shlex.quote(snippet)} _"
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "--db", tmp_path / "db",
                     "--out", tmp_path / "o")  # fmt: skip
    assert "command= cannot pass API_KEY_FOR_LOG:" in _one_line_error(proc)
    assert not (tmp_path / "o").exists()
    _nothing_recorded(tmp_path, proc.stdout + proc.stderr)


# Re-test 2 of issue 34 (finding 5): a name in quotes was split from its value by them; each
# was accepted and the key reached results.json, results.md, the server's log and the store.
QUOTED = [
    ("args", f"""--kv-transfer-config '{{"api_key":"{SECRET}"}}'""", "api_key"),
    ("args", f"""--kv-transfer-config '{{"api_key": "{SECRET}"}}'""", "api_key"),
    ("args", f"""--hf-overrides '{{"hf_token": "{SECRET}"}}'""", "hf_token"),
    ("args", f"""--headers '{{"X-Api-Key" : "{SECRET}"}}'""", "X-Api-Key"),
    ("command", f"""bash -c "vllm serve --a'pi-key' {SECRET}\"""", "--api-key"),
    ("command", f"""bash -c "vllm serve --ap''i-key {SECRET}\"""", "--api-key"),
    (
        "command",
        f"""python -c "import os; os.environ['VLLM_API_KEY']='{SECRET}'; import runpy\"""",
        "VLLM_API_KEY",
    ),
    (
        "command",
        f"""python -c "import os; os.environ[\\"VLLM_API_KEY\\"] = '{SECRET}'\"""",
        "VLLM_API_KEY",
    ),
    (
        "command",
        f"""python -c "import os; os.environ.update({{'VLLM_API_KEY': '{SECRET}'}})\"""",
        "VLLM_API_KEY",
    ),
    ("command", f"bash -c 'printf -v VLLM_API_KEY {SECRET}; vllm serve'", "VLLM_API_KEY"),
    ("command", f"bash -c 'printf -v VLLM_API_KEY %s {SECRET}; vllm serve'", "VLLM_API_KEY"),
    ("command", f"bash -c 'read -r VLLM_API_KEY <<< {SECRET}; vllm serve'", "VLLM_API_KEY"),
]


@pytest.mark.parametrize(("option", "text", "name"), QUOTED)
def test_a_secret_whose_name_is_quoted_is_refused_and_redacted(
    option: str, text: str, name: str
) -> None:
    options = {"command": "true", "args": text} if option == "args" else {"command": text}
    with pytest.raises(ValueError, match="cannot pass") as refused:
        parse_options(SERVERS["vllm"], "some/model", options)
    assert f"{option}= cannot pass {name}:" in str(refused.value)
    assert SECRET not in str(refused.value)
    # Redacted too, should one ever reach a writer.
    assert SECRET not in " ".join(redact_command(shlex.split(text)))
    assert SECRET not in redact_text(text)
    assert SECRET not in redact_spec(f"vllm:some/model,{option}={text}")


def test_a_json_quoted_key_is_refused_and_nothing_recorded(tmp_path: Path) -> None:
    # The re-test's t_sec_e2e.sh: the key reached four files.
    args = f"""--kv-transfer-config '{{"api_key":"{SECRET}"}}'"""
    spec = f"vllm:some/model,command={_command()},args={args}"
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "--db", tmp_path / "db",
                     "--out", tmp_path / "o")  # fmt: skip
    assert "args= cannot pass api_key:" in _one_line_error(proc)
    assert not (tmp_path / "o").exists()
    _nothing_recorded(tmp_path, proc.stdout + proc.stderr)


# Look-alike spellings of a secret flag and a URL's password without its scheme passed.
LOOK_ALIKES = [
    (f"--api-k\u0435y {SECRET}", "--api-k\u0435y"),  # a Cyrillic е
    (f"--\u0430pi-key={SECRET}", "--\u0430pi-key"),  # a Cyrillic а
    (f"--api-\u03baey {SECRET}", "--api-\u03baey"),  # a Greek κ
    (f"\u2014api-key {SECRET}", "\u2014api-key"),  # an em dash for "--"
    (f"\u2013hf-token {SECRET}", "\u2013hf-token"),  # an en dash
    (f"--api\u200b-key {SECRET}", "--api\u200b-key"),  # a zero-width space
    (f"--url user:{SECRET}@host:8000/v1", "a password in a URL"),
]


@pytest.mark.parametrize(("text", "name"), LOOK_ALIKES)
def test_look_alike_spellings_are_refused_and_redacted(text: str, name: str) -> None:
    with pytest.raises(ValueError, match="cannot pass") as refused:
        parse_options(SERVERS["vllm"], "some/model", {"command": "true", "args": text})
    assert f"args= cannot pass {name}:" in str(refused.value)
    assert SECRET not in str(refused.value)
    assert SECRET not in " ".join(redact_command(shlex.split(text)))
    assert SECRET not in redact_text(text)
    assert SECRET not in redact_spec(f"vllm:some/model,args={text}")


def test_a_look_alike_flag_is_refused_through_the_console_script(tmp_path: Path) -> None:
    spec = f"vllm:some/model,command={_command()},args=\u2014api-k\u0435y {SECRET}"
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "--db", tmp_path / "db",
                     "--out", tmp_path / "o")  # fmt: skip
    assert "args= cannot pass \u2014api-k\u0435y:" in _one_line_error(proc)
    _nothing_recorded(tmp_path, proc.stdout + proc.stderr)


def test_a_url_password_without_a_scheme_is_not_recorded() -> None:
    spec = f"openai:m@user:{SECRET}@host:8000/v1"
    assert redact_spec(spec) == f"openai:m@user:{REDACTED}@host:8000/v1"
    # Nor are a model named like a URL's user and host without a password, or a git address.
    for plain in ["openai:m@http://127.0.0.1:9/v1", "git@github.com:org/repo"]:
        assert redact_spec(plain) == plain


@pytest.mark.parametrize(
    ("option", "text"),
    [
        ("args", """--hf-overrides '{"max_tokens": 5, "architectures": ["X"]}'"""),
        ("args", "--served-model-name api-key-model"),
        ("args", """--override-generation-config '{"top_k": 5, "max_new_tokens": 9}'"""),
        ("command", "bash -c 'read -r HF_TOKEN < /run/hf_token; export HF_TOKEN; vllm serve'"),
        ("command", "bash -c 'printf -v port %s 8000; vllm serve --port $port'"),
        ("command", "bash -c 'export VLLM_API_KEY; curl -v API_KEY_DOCS; vllm serve'"),
    ],
)
def test_quoted_look_alikes_still_pass(option: str, text: str) -> None:
    options = {"command": "true", "args": text} if option == "args" else {"command": text}
    parse_options(SERVERS["vllm"], "some/model", options)


@pytest.mark.parametrize(
    "text",
    [f"--api-key\t{SECRET} 'x", f"--api-key  {SECRET} 'x", f'"--api-key {SECRET}'],
)
@pytest.mark.parametrize("option", ["args", "command"])
def test_an_unclosed_quote_never_echoes_a_secret_however_spaced(
    tmp_path: Path, option: str, text: str
) -> None:
    spec = f"vllm:some/model,command={_command()}" if option == "args" else "vllm:some/model"
    spec += f",{option}={text}"
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "--db", tmp_path / "db")
    assert "No closing quotation" in _one_line_error(proc)
    _nothing_recorded(tmp_path, proc.stdout + proc.stderr)


@pytest.mark.parametrize(
    "args",
    ["--max-num-batched-tokens 8", "--max-total-tokens 8", "--api-server-count 2",
     "--tokenizer-mode slow", "--hf-token-path /p", "--enable-prompt-tokens-details",
     "--override-generation-config {}"],
)  # fmt: skip
def test_look_alikes_of_secret_flags_still_pass(args: str) -> None:
    opts = parse_options(SERVERS["vllm"], "some/model", {"command": "true", "args": args})
    assert " ".join(opts.server_args) == args


SECRET_VALUES = st.text(
    st.characters(codec="ascii", categories=["L", "N"]), min_size=8, max_size=40
)
TEMPLATES = [
    "vllm serve --api-key {}", "vllm serve --api-key={}", "vllm serve -K{}",
    "bash -c 'vllm serve --api-ke {}'", "env HF_TOKEN={} vllm serve",
    "sh -c \"export API_KEY_FOR_LOG={}; vllm serve\"",
    "vllm serve --headers 'Authorization: Bearer {}'", "vllm serve --x https://me:{}@host/",
    "vllm serve --api-key\u00a0{}", "vllm serve --api-key\u2003{} --port 1",
    "bash -c 'PGPASSWORD={}\tvllm serve'", "vllm serve --hf-tok {}", "GITHUB_PAT={} vllm",
    # quoted names (issue 34, re-test 2 #5) and look-alike spellings
    "vllm serve --kv-transfer-config '{{\"api_key\": \"{}\"}}'",
    "python -c \"import os; os.environ['VLLM_API_KEY']='{}'\"", "vllm serve --a'pi-key' {}",
    "bash -c 'printf -v VLLM_API_KEY {}; vllm serve'", "bash -c 'read K_TOKEN <<< {}; vllm'",
    "vllm serve --api-k\u0435y {}", "vllm serve \u2014api-key {}", "vllm serve \u2013token={}",
    "vllm serve --url me:{}@host:8000/v1", "vllm serve --api-key 'x {} y'",
    # re-test 3 of issue 34: URL parameters, headers as values, key shapes
    "vllm serve --endpoint https://h/x?api_key={}", "vllm serve --u http://h/v1?x=1&token={}",
    "vllm serve --header=Authorization:Bearer {}", "vllm serve -H 'x-api-key: {}'",
    "vllm serve --passphrase {}", "vllm serve --jwt={}", "vllm serve hf_{}xxxxxxxxxxxxxxxx",
    "vllm serve --x ghp_{}xxxxxxxxxxxxxxxx",
    # re-test 4 of issue 34: a token as a URL's user, parameter names encoded or as lists
    "vllm serve --x http://{}@h/v1", "vllm serve --u 'http://h/v1?key[]={}'",
    "vllm serve --u http://h/v1?ke%79={}", "vllm serve --u http://h/v1?%6Bey={}",
    "vllm serve --u http://h/v1?sas={}", "vllm serve --u http://h/v1?pw={}",
    "vllm serve --x gsk_{}xxxxxxxxxxxxxxxxxxxx", "vllm serve --x glpat-{}xxxxxxxxxxxxxxxx",
    # re-test 5 of issue 34: a URL's path, spaces around a parameter's "="
    "vllm serve --u http://h/v1/key={}", "vllm serve --u http://h/api_key/{}/v1",
    "vllm serve --u 'http://h/v1?key ={}'", "vllm serve --u 'http://h/v1? token= {}'",
]  # fmt: skip


@given(st.sampled_from(TEMPLATES), SECRET_VALUES)
def test_no_generated_secret_is_ever_shown_or_written(template: str, value: str) -> None:
    assume(value not in template.format(""))
    # A value of letters alone can be a word the message holds anyway ("lmmprobe"): keys hold
    # digits, and such a value would prove nothing about redaction.
    assume(any(c.isdigit() for c in value))
    command = template.format(value)
    with pytest.raises(ValueError, match="cannot pass") as refused:
        parse_options(SERVERS["vllm"], "m", {"command": command})
    assert value not in str(refused.value)
    assert value not in " ".join(redact_command(shlex.split(command)))
    assert value not in redact_text(command)
    assert value not in redact_text(command + " 'unclosed")


@pytest.mark.parametrize(
    "value", ["hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7", "AIza" + "SyAb3dE5gH7jK9mN1pQ3sT5vW7xY9z0",
              "aB3dE5gH7jK9mN1pQ3sT5vW7", "sk-x y", "1ABC",
              # re-test 4 of issue 34 (item 3): keys with "_", keys of hexadecimal digits
              "gsk_" + "aB3dE5gH7jK9mN1pQ3sT5vW7xY9z", "r8_" + "aB3dE5gH7jK9mN1pQ3sT5vW7xY9z",
              "fw_" + "3ZaB3dE5gH7jK9mN1pQ3sT", "a3f9c2e1b4d5678901234567890abcde",
              "e5f3a1c9d7b2468013579bdf2468ace0a1b2c3d4e5f60718293a4b5c6d7e8f90"],
)  # fmt: skip
def test_a_key_pasted_into_key_env_is_refused_unshown(tmp_path: Path, value: str) -> None:
    # Re-test 3 (item 4): key_env= names a variable; a key pasted there was recorded 52 times.
    proc = _lmmprobe("run", "-m", f"openai:m@http://127.0.0.1:9/v1,key_env={value}",
                     "--limit", "2", "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    line = _one_line_error(proc)
    assert "key_env must name the environment variable" in line
    assert not (tmp_path / "o").exists()
    out = proc.stdout + proc.stderr
    assert value not in out
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert value.encode() not in path.read_bytes(), path


def test_key_env_naming_a_variable_is_accepted() -> None:
    from lmmprobe.apex.orchestrators.llm import parse_spec
    from lmmprobe.models.api_keys import key_env_name

    for name in ("OPENAI_API_KEY", "MY_KEY_2", "judge_key", "_K"):
        assert key_env_name(name) == name
    assert parse_spec("gpt-4o,key_env=ORCH_KEY").key_env == "ORCH_KEY"
    with pytest.raises(ValueError, match="key_env must name") as refused:
        parse_spec("gpt-4o,key_env=hf_aB3dE5gH7jK9mN1pQ3sT5vW7")
    assert "aB3dE5" not in str(refused.value)


# Re-test 4 of issue 34 (item 4): each URL was recorded as typed, its secret with it.
URL_SECRETS = [
    f"http://{SECRET}@h/v1",  # a bearer token given as the URL's user
    f"http://h/v1?pw={SECRET}",
    f"http://h/v1?pwd={SECRET}",
    f"http://h/v1?sas={SECRET}",
    f"http://h/v1?%6Bey={SECRET}",  # "key", percent-encoded
    f"http://h/v1?ke%79={SECRET}",
    f"http://h/v1?key[]={SECRET}",
    f"http://h/v1?x=1&api%5Fkey[]={SECRET}#f",
]


@pytest.mark.parametrize("url", URL_SECRETS)
def test_every_secret_of_a_url_is_redacted(url: str) -> None:
    from lmmprobe._secrets import redact_urls

    spec = f"openai:m@{url}"
    for shown in (redact_spec(spec), redact_text(spec), redact_urls(spec), scrub_secrets(spec)):
        assert SECRET not in shown and REDACTED in shown
    assert secret_argument(url) is not None


def test_ordinary_url_parameters_and_users_are_kept() -> None:
    from lmmprobe._secrets import redact_urls

    for url in ("http://h/v1?api-version=2024-02-01", "http://h/v1?%70age=2&sort[]=a",
                "openai:m@user@h:8000/v1", "http://127.0.0.1:9/v1"):  # fmt: skip
        assert redact_spec(url) == url and redact_urls(url) == url


# Re-test 22: an assignment as a flag's value (docker's ``--env=NAME=VALUE``) or after a
# flag's ":" passed the check: the spec, the key in it, reached the terminal and the records.
FLAG_VALUE_ASSIGNMENTS = [
    ("command", f"docker run --env=VLLM_API_KEY={SECRET} vllm/vllm-openai", "VLLM_API_KEY"),
    ("command", f"docker run -e=HF_TOKEN={SECRET} vllm/vllm-openai", "HF_TOKEN"),
    ("args", f"--set=password={SECRET}", "password"),
    ("args", f"--define:token={SECRET}", "token"),
]


@pytest.mark.parametrize(("option", "text", "name"), FLAG_VALUE_ASSIGNMENTS)
def test_an_assignment_as_a_flags_value_is_refused_and_redacted(
    tmp_path: Path, option: str, text: str, name: str
) -> None:
    spec = f"vllm:some/model,{option}={text}"
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "--db", tmp_path / "db",
                     "--out", tmp_path / "o", "--dry-run")  # fmt: skip
    assert f"{option}= cannot pass {name}:" in _one_line_error(proc)
    _nothing_recorded(tmp_path, proc.stdout + proc.stderr)
    assert SECRET not in redact_text(text) and SECRET not in redact_spec(spec)
