"""The redaction rules' edges found by the fifth hostile re-test of issue 34 (item 8).

Four kinds of finding, each a test that failed before: a secret in a URL's path or in a query
with spaces around its "=" was recorded and shown; a ``key_env`` value that names no variable
(``hunter2``, a key pasted there) was shown in the message and recorded; a key shape glued to
other characters (``xAKIA...``) was not taken for a key; and tokenizer settings
(``pad_token=<pad>``, ``eos_token_id=2``) and names starting ``sk-`` were hidden, so that two
models differing only there were refused as recorded alike.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from tests.bounded import bounded_each
from tests.console import lmmprobe
from tests.models.test_served import _command, _lmmprobe, _one_line_error

from lmmprobe._secrets import (
    REDACTED,
    plain_variable_name,
    redact_command,
    redact_spec,
    redact_text,
    redact_urls,
    redact_values,
    secret_argument,
    spec_secret_values,
)
from lmmprobe.models.api_keys import scrub_secrets
from lmmprobe.models.served import SERVERS, parse_options
from lmmprobe.testing.openai_server import FakeOpenAIServer

PASSWORD = "hunter2-s3cr3t-pw"


def _nothing_recorded(root: Path, secret: str = PASSWORD) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def _everywhere(text: str) -> list[str]:
    """`text` as each writer and message shows it."""
    return [redact_spec(text), redact_text(text), redact_urls(text), scrub_secrets(text)]


# 1. A secret in a URL's path, or in its query with spaces around the "=".

URL_PATHS = [
    f"http://h/v1/key={PASSWORD}",
    f"http://h/token={PASSWORD}/v1",
    f"http://h/v1;api_key={PASSWORD}",
    f"http://h/api_key/{PASSWORD}",
    f"http://h/v1/apiKey/{PASSWORD}/chat",
    f"https://h/access-token/{PASSWORD}?x=1",
    f"http://h/v1?key ={PASSWORD}",
    f"http://h/v1? key= {PASSWORD}",
    f"http://h/v1?x=1&token = {PASSWORD}",
    # Re-test 6: a ":" or a percent-encoded "=" between name and value, and path words that
    # make a query parameter a secret (``?sig=X``) but were not read as one in a path.
    f"http://h/token:{PASSWORD}/v1",
    f"http://h/v1/key%3D{PASSWORD}",
    f"http://h/v1/key%3d{PASSWORD}",
    f"http://h/v1/%6Bey%3A{PASSWORD}",
    f"http://h/v1/credential/{PASSWORD}",
    f"http://h/session/{PASSWORD}",
    f"http://h/sig/{PASSWORD}",
    f"http://h/auth/{PASSWORD}/v1",
    f"http://h/bearer/{PASSWORD}/v1",
    # Re-test 7: a token as the user with an empty password, a name with trailing digits or
    # run together, empty and "." segments between name and value (a server drops them), a
    # fragment shaped as a path, a "=" encoded twice, and a bearer token as a segment.
    f"http://{PASSWORD}:@h/v1",
    f"http://h/key1/{PASSWORD}",
    f"http://h/secretkey/{PASSWORD}",
    f"http://h/v1/accesstoken/{PASSWORD}",
    f"http://h/key//{PASSWORD}",
    f"http://h/key/./{PASSWORD}",
    f"http://h/v1#/key/{PASSWORD}",
    f"http://h/v1/token%253D{PASSWORD}",
    f"http://h/v1/bearer%20{PASSWORD}",
    # Re-test 7 (#10), the last: a value glued to its name by ".", "_", "-", ";" or ",", and
    # one after a space (a server may strip it; a client encodes it).
    f"http://h/v1/token.{PASSWORD}",
    f"http://h/v1/token_{PASSWORD}",
    f"http://h/v1/password-{PASSWORD}",
    f"http://h/v1/key;{PASSWORD}",
    f"http://h/v1/key,{PASSWORD}",
    f"http://h/v1/key /{PASSWORD}",
    f"http://h/v1/Bearer {PASSWORD}",
    f"http://h/v1/api_key-{PASSWORD}/chat",
]


@pytest.mark.parametrize("url", URL_PATHS)
def test_a_secret_in_a_url_path_or_a_spaced_query_is_redacted(url: str) -> None:
    for shown in _everywhere(f"openai:m@{url}"):
        assert PASSWORD not in shown and REDACTED in shown, shown
    assert secret_argument(url) is not None
    # A server quoting its route in an error (no scheme): a NAME=VALUE segment still goes.
    assert PASSWORD not in scrub_secrets(f"unknown route POST /v1/key={PASSWORD}/chat")


@pytest.mark.parametrize(
    "text",
    ["http://h/v1/keys/list", "http://h/v1/monkey/x", "http://h/v1/models/token-classifier",
     "/etc/keys/token/README", "--download-dir /data/max_tokens=5/x", "http://h/v1/token",
     "http://h/v1/tokens/12", "http://h/v1/pad_token/x", "hf:./ckpt/step=100",
     "http://h:8000/v1/models/gemini-1.5:generateContent", "http://token:8000/v1",
     "https://r.openai.azure.com/openai/deployments/gpt-4o", "http://h/v1/code/x",
     "openai:m@user@h:8000/v1", "openai:llama3:8b@http://[::1]:8000/v1",
     "http://h/v1/hotkey/x", "http://h/v1/keys//list", "http://h/v1/v2/./models",
     "http://h:8000/v1#/models/x",
     # Names run into words, not values: ordinary paths keep them (re-test 7 #10's fix).
     "http://h/v1/chat/completions", "http://h/keyboard/", "http://h/tokenizer/",
     "http://h/monkey/", "http://h/v1/token_usage", "http://h/password-reset_confirmation",
     "http://h/v1/token.json", "http://h/v1/key-2", "http://h/v1/token_ids_123456789",
     "http://h/v1/key_count_12345678", "http://h/tokenizer_config.json",
     "http://h/v1/tokenVerificationEndpoint", "POST http://h/oauth/token returned 401",
     "GET http://h/v1/key now", "openai:m@http://h/v1/token,llava-onevision",
     "openai:m@http://h/v1/key,first", "random,first"],
)  # fmt: skip
def test_url_paths_that_hold_no_secret_are_kept(text: str) -> None:
    assert all(shown == text for shown in _everywhere(text))


@pytest.mark.parametrize(
    "suffix",
    [f"/key={PASSWORD}", f"/api_key/{PASSWORD}", f"?key ={PASSWORD}", f"? key= {PASSWORD}",
     f"/token:{PASSWORD}", f"/key%3D{PASSWORD}", f"/session/{PASSWORD}",
     f"/key1/{PASSWORD}", f"/secretkey/{PASSWORD}", f"/key//{PASSWORD}", f"/key/./{PASSWORD}",
     f"/token.{PASSWORD}", f"/token_{PASSWORD}", f"/password-{PASSWORD}", f"/key;{PASSWORD}",
     f"/key /{PASSWORD}", f"/Bearer {PASSWORD}"],
)  # fmt: skip
def test_a_key_in_a_url_path_is_never_recorded_or_shown(tmp_path: Path, suffix: str) -> None:
    # The re-test's reproduction: each reached results.json, results.md, the store (the fake
    # server's 404 quotes its route) and the terminal.
    with FakeOpenAIServer() as server:
        model = f"openai:fake-vlm@{server.base_url}{suffix}"
        ran = lmmprobe("run", "-m", model, "--limit", "2",
                       "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    out = ran.stdout + ran.stderr
    assert "Traceback" not in out, out
    assert PASSWORD not in out, out
    _nothing_recorded(tmp_path)
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert list(results["models"]) == [model.replace(PASSWORD, REDACTED)]


def test_a_key_glued_by_a_comma_is_not_shown_as_another_model(tmp_path: Path) -> None:
    # Re-test 7: ``-m ...@http://h/v1/key,X`` split at the comma and named X as an unknown
    # backend; the spec then named it as its option without "=".
    with FakeOpenAIServer() as server:
        model = f"openai:fake-vlm@{server.base_url}/key,{PASSWORD}"
        proc = _lmmprobe("run", "-m", model, "--limit", "2", "--db", tmp_path / "db")
    line = _one_line_error(proc)
    assert PASSWORD not in proc.stdout + proc.stderr
    assert "option '[redacted]' has no '='" in line
    _nothing_recorded(tmp_path)


def test_a_token_as_the_url_user_with_an_empty_password_is_never_recorded_or_shown(
    tmp_path: Path,
) -> None:
    # Re-test 7: ``http://TOKEN:@host`` (curl's ``-u KEY:``) reached the terminal, results.json,
    # results.md and the store; ``http://TOKEN@host`` without the ":" did not.
    with FakeOpenAIServer() as server:
        url = server.base_url.replace("://", f"://{PASSWORD}:@", 1)
        ran = lmmprobe("run", "-m", f"openai:fake-vlm@{url}", "--limit", "1",
                       "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    out = ran.stdout + ran.stderr
    assert "Traceback" not in out, out
    assert PASSWORD not in out, out
    _nothing_recorded(tmp_path)
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert list(results["models"]) == [f"openai:fake-vlm@{url.replace(PASSWORD, REDACTED)}"]


def test_a_url_password_holding_an_at_sign_is_redacted_whole(tmp_path: Path) -> None:
    # Re-test 6: the password was redacted up to its first "@" (``u:[redacted]@ssZq7...``),
    # though httpx reads the userinfo up to the authority's last "@"; the rest reached every
    # file and the terminal.
    rest = "ssZq7secretVALUE99"
    with FakeOpenAIServer() as server:
        url = server.base_url.replace("http://", f"http://u:p@{rest}@")
        model = f"openai:fake-vlm@{url}"
        ran = lmmprobe("run", "-m", model, "--limit", "2",
                       "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    out = ran.stdout + ran.stderr
    assert ran.returncode == 0, out
    assert rest not in out, out
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert rest.encode() not in path.read_bytes(), path
    for shown in _everywhere(model):
        assert rest not in shown and "u:[redacted]@127.0.0.1" in shown, shown


def test_a_schemeless_url_password_holding_an_at_sign_is_redacted_whole(tmp_path: Path) -> None:
    # Re-test 6: without a scheme (``MODEL@user:pass@host:port/v1``) the password was read only
    # when it held no "@"; ``p@ssZq7...`` was shown and recorded whole.
    rest = "ssZq7secretVALUE99"
    model = f"openai:fake-vlm@u:p@{rest}@127.0.0.1:9/v1"
    ran = lmmprobe("run", "-m", model, "--limit", "2",
                   "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    out = ran.stdout + ran.stderr
    assert "Traceback" not in out, out
    assert rest not in out, out
    _nothing_recorded(tmp_path, rest)
    for shown in _everywhere(model):
        assert rest not in shown and "u:[redacted]@127.0.0.1" in shown, shown


# 2. key_env naming a variable that is not set.


@pytest.mark.parametrize("value", ["hunter2", "AbCdEfGh12345", "s3cr3tPassw0rd", "judge_key"])
@pytest.mark.parametrize("url", ["http://127.0.0.1:9/v1", "https://api.example.invalid/v1"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_key_env_naming_no_set_variable_is_refused_unshown(
    tmp_path: Path, value: str, url: str, dry_run: bool
) -> None:
    # Before: the message said "set the environment variable hunter2", a dry run "a real run
    # needs $hunter2", and a local server's run recorded ``key_env=hunter2`` in every file.
    args = ["run", "-m", f"openai:m@{url},key_env={value}", "--limit", "2",
            "--db", tmp_path / "db", "--out", tmp_path / "o"]  # fmt: skip
    proc = _lmmprobe(*args, *(["--dry-run"] if dry_run else []))
    line = _one_line_error(proc)
    assert "key_env names a variable that is not set; the value is not shown" in line
    assert value not in proc.stdout + proc.stderr
    assert not (tmp_path / "o").exists()
    _nothing_recorded(tmp_path, value)


def test_a_judge_whose_key_env_is_not_set_is_refused_unshown(tmp_path: Path) -> None:
    judge = "openai:j@http://127.0.0.1:9/v1,key_env=AbCdEfGh12345"
    proc = _lmmprobe("run", "-m", "random", "--limit", "2", "--judge", judge,
                     "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "key_env names a variable that is not set" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "AbCdEfGh12345" not in proc.stdout + proc.stderr
    _nothing_recorded(tmp_path, "AbCdEfGh12345")


def test_key_env_naming_a_set_variable_runs_and_reads_back_without_it(tmp_path: Path) -> None:
    # A variable that is set is a variable, whatever its name: the run goes ahead, and records
    # the name hidden (it is not plain: what is recorded does not depend on the environment).
    # The stored run is read back by report, runs, show and compare with the variable gone
    # (they load no model).
    db = tmp_path / "db"
    with FakeOpenAIServer() as server:
        model = f"openai:fake-vlm@{server.base_url},key_env=lmmprobe_judge_key"
        ran = lmmprobe("run", "-m", model, "--limit", "2", "--db", db, "--out", tmp_path / "o",
                       lmmprobe_judge_key="k-test")  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert list(results["models"]) == [model.replace("lmmprobe_judge_key", REDACTED)]
    for args in (("report", "latest", "--format", "md", "--out", tmp_path / "r.md"),
                 ("runs",), ("show", "latest"), ("compare", "latest", "-m", model, "-m", model)):  # fmt: skip
        done = lmmprobe(*args, "--db", db)
        assert "Traceback" not in done.stderr, done.stderr
        assert "key_env names a variable" not in done.stdout + done.stderr, args
        assert done.returncode == 0 or args[0] == "compare", done.stdout + done.stderr


def test_plain_names_are_still_named_when_not_set(tmp_path: Path) -> None:
    proc = _lmmprobe("run", "-m", "openai:m@https://api.example.invalid/v1,key_env=TOGETHER_API_KEY",
                     "--limit", "2", "--db", tmp_path / "db")  # fmt: skip
    assert "set the environment variable TOGETHER_API_KEY" in _one_line_error(proc)
    for name in ("OPENAI_API_KEY", "HF_TOKEN", "MY_KEY_2", "LMMPROBE_SERVED_API_KEY"):
        assert plain_variable_name(name), name
    for name in ("hunter2", "AbCdEfGh12345", "judge_key", "K1", "TOGETHER", "AKIAIOSFODNN7EXAMPLE"):
        assert not plain_variable_name(name), name


def test_key_env_is_recorded_only_when_its_name_is_plain() -> None:
    for name in ("MY_API_KEY", "OPENAI_API_KEY", "JUDGE_KEY"):
        assert redact_spec(f"openai:m,key_env={name}") == f"openai:m,key_env={name}"
    for value in ("hunter2", "AbCdEfGh12345", "judge_key", "TOGETHER"):
        assert redact_spec(f"openai:m,key_env={value}") == f"openai:m,key_env={REDACTED}"


# 3. Key shapes glued to other characters.

GLUED = [  # (what it is glued to, the key)
    ("x", "AKIA" + "IOSFODNN7EXAMPLE"),
    ("1", "ASIA" + "IOSFODNN7EXAMPL3"),
    ("1", "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7xY9z01234567"),
    ("model-", "gho_" + "aB3dE5gH7jK9mN1pQ3sT5vW7xY9z01234567"),
    ("x", "github_pat_" + "11AB3dE5g0" + "aB3dE5gH7jK9" * 6),
    ("org_", "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7xY9z012345"),
    ("x", "glpat-" + "aB3dE5gH7jK9mN1pQ3sT"),
    ("x", "AIza" + "SyA-b3dE5gH7jK9mN1pQ3sT5vW7xY9z0123"),
    ("x", "xoxb-" + "123456789012-1234567890123-aB3dE5gH7jK9"),
    ("task-", "sk-proj-" + "aB3dE5gH7jK9mN1pQ3sT5vW7xY9z0123456789ab"),
    ("x", "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0In0" + ".aB3dE5gH7jK9mN1p"),
]


@pytest.mark.parametrize(("glue", "key"), GLUED)
def test_a_strong_key_shape_glued_to_other_characters_is_redacted(glue: str, key: str) -> None:
    glued = glue + key
    spec = f"hf:m,note={glued}"  # (`redact_urls` reads URLs only, and no key shapes)
    for shown in (redact_spec(spec), redact_text(spec), scrub_secrets(spec),
                  " ".join(redact_command(["x", glued]))):  # fmt: skip
        assert key not in shown and REDACTED in shown, shown
    with pytest.raises(ValueError, match="cannot pass a key-shaped word"):
        parse_options(SERVERS["vllm"], "some/model", {"command": "true", "args": f"--x {glued}"})


def test_a_glued_key_is_refused_through_the_console_script(tmp_path: Path) -> None:
    key = "AKIA" + "IOSFODNN7EXAMPL3"
    spec = f"vllm:some/model,command={_command()},args=--served-model-name x{key}"
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "--db", tmp_path / "db",
                     "--out", tmp_path / "o")  # fmt: skip
    assert "args= cannot pass a key-shaped word:" in _one_line_error(proc)
    _nothing_recorded(tmp_path, key)
    assert key not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "text",
    # weak prefixes keep the word-start rule; strong shapes short of a real key's length pass
    ["hf:org/task-sk-12345678abcd", "hf:m,revision=xsk-abc12345678901", "LLaVA-ghp_1234567890ab",
     "my-hf_transfer-model", "xAKIA1234", "TAKIAXYZ", "model_glpat-short"],
)  # fmt: skip
def test_weak_or_short_shapes_inside_names_are_kept(text: str) -> None:
    assert all(shown == text for shown in _everywhere(text))


# 4. Over-redaction: tokenizer settings and sk- names.

KEPT = [
    "hf:m,pad_token=<pad>", "hf:m,eos_token_id=2", "hf:m,image_token_index=32000",
    "hf:m,bos_token=<s>", "hf:m,unk_token=<unk>", "hf:m,stop_token_ids=2;3",
    "hf:m,video_token=<video>", "hf:m,padTokenId=0", "hf:sk-learn-model-abcdefgh",
    "openai:sk-learn-model-abcdefgh@http://h/v1",
]  # fmt: skip


@pytest.mark.parametrize("text", KEPT)
def test_tokenizer_settings_and_sk_names_are_kept(text: str) -> None:
    assert redact_spec(text) == text and redact_text(text) == text


@pytest.mark.parametrize(
    "text",
    [f"hf:m,hf_token={PASSWORD}", f"hf:m,access_token={PASSWORD}",
     f"hf:m,auth_token_id={PASSWORD}", f"hf:m,session_token={PASSWORD}",
     f"hf:m,token={PASSWORD}", f"hf:m,api_key={PASSWORD}", "hf:m,note=sk-abcdefgh12345678"],
)  # fmt: skip
def test_credentials_named_with_token_are_still_redacted(text: str) -> None:
    assert redact_spec(text) != text and REDACTED in redact_spec(text)


@pytest.mark.parametrize("args", ["--pad-token <pad>", "--eos-token-id 2", "--image-token-index 9"])
def test_tokenizer_flags_pass_a_served_models_check(args: str) -> None:
    opts = parse_options(SERVERS["vllm"], "some/model", {"command": "true", "args": args})
    assert shlex.join(opts.server_args) == shlex.join(shlex.split(args))


@pytest.mark.parametrize(
    ("first", "second"),
    [("chat_template_kwargs=pad_token=<pad>", "chat_template_kwargs=pad_token=<unk>"),
     ("chat_template_kwargs=image_token_index=1", "chat_template_kwargs=image_token_index=2"),
     ("chat_template_kwargs=eos_token_id=2", "chat_template_kwargs=eos_token_id=3")],
)  # fmt: skip
def test_models_differing_in_a_tokenizer_setting_are_two_models(
    tmp_path: Path, first: str, second: str
) -> None:
    # Before: both were recorded as ``...=[redacted]`` and refused as "recorded alike".
    with FakeOpenAIServer() as server:
        models = [f"openai:fake-vlm@{server.base_url},{option}" for option in (first, second)]
        ran = lmmprobe("run", "-m", models[0], "-m", models[1], "--limit", "2", "-q",
                       "--db", tmp_path / "db", "--out", tmp_path / "o",
                       OPENAI_API_KEY="k-test")  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert list(results["models"]) == models


def test_models_named_sk_something_are_two_models(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        models = [f"openai:sk-learn-model-{n}@{server.base_url}" for n in ("abcdefgh", "hgfedcba")]
        ran = lmmprobe("run", "-m", models[0], "-m", models[1], "--limit", "2", "-q",
                       "--db", tmp_path / "db", "--out", tmp_path / "o",
                       OPENAI_API_KEY="k-test")  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert list(results["models"]) == models


# Reading a long word took quadratic time (a URL's scheme was tried at each of its letters).


def test_redaction_reads_long_words_in_linear_time() -> None:
    n = 100_000
    texts = {
        "letters": "a" * n,
        "letters, then ://": "a" * n + "://",
        "sk- and letters": "sk-" + "a" * n,
        "digits and letters": "a1" * (n // 2),
        "path segments": "http://h" + "/a" * (n // 2),
        "path parameters": "/a=" * (n // 3),
        "path parameters, colons": "/a:" * (n // 3),
        "path parameters, encoded": "/a%3D" * (n // 5),
        "passwords holding at signs": "@u:p" + "@a" * (n // 2),
        "users and passwords": "@u:p" * (n // 4),
        "query, spaces": "?" + " " * n + "x",
        "glued prefixes": "ghp_" * (n // 4),
        "glued path names": "http://h/" + "key_" * (n // 4),
        "glued path names, digits": "http://h/" + "key_1" * (n // 5),
        "spaced path names": "http://h/key" + " " * n + "x",
        "comma path names": "openai:m@http://h/key," * (n // 22),
    }
    calls = {}
    for name, text in texts.items():
        for fn in (redact_spec, redact_text, redact_urls, scrub_secrets):
            calls[f"{fn.__name__} on {name}"] = lambda fn=fn, text=text: fn(text)
    bounded_each(calls)


# Re-test 6: a data spec's secret was shown whole in its error lines, a model spec's hidden.


@pytest.mark.parametrize(
    "data",
    ["hf:org/ds?token={s}", "hf:http://h/ds?token={s}", "rows.jsonl?api_key={s}",
     "jsonl:rows.jsonl?api_key={s}", "reform:x.json?token={s}", "mmmu,path=/x?token={s}",
     "demo,n=7?token={s}", "hf:org/ds?token=a{s},split=test"],
)  # fmt: skip
@pytest.mark.parametrize("command", ["run", "score", "import"])
def test_a_data_spec_s_secret_is_never_shown(tmp_path: Path, data: str, command: str) -> None:
    spec = data.format(s=PASSWORD)
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"id": "c0", "prediction": "A"}\n', encoding="utf-8")
    args = {
        "run": ["run", "-m", "first", "--data", spec, "--dry-run"],
        "score": ["score", predictions, "--benchmark", spec],
        "import": ["import", predictions, "--benchmark", spec,
                   "--field", "id=id,prediction=prediction", "--model", "m"],
    }[command]  # fmt: skip
    proc = _lmmprobe(*args, "--db", tmp_path / "db") if command != "score" else _lmmprobe(*args)
    out = proc.stdout + proc.stderr
    assert PASSWORD not in out, out
    assert "Traceback" not in out, out
    assert REDACTED in _one_line_error(proc)


def test_a_short_hidden_value_is_taken_out_only_where_it_stands_as_a_value() -> None:
    hidden = spec_secret_values("hf:org/ds?token=a,split=x")
    assert hidden == ["a"]
    told = "dataset not found: org/ds?token=a (a save_to_disk folder)"
    assert redact_values(told, hidden) == (
        "dataset not found: org/ds?token=[redacted] (a save_to_disk folder)"
    )
