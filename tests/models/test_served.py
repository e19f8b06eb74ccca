"""``-m vllm:...`` / ``sglang:`` through the console script: a local server started for the run.

The server command is the fake OpenAI server behind a vLLM-shaped command line
(`fake_served_server.py`, named with ``command=`` or ``$LMMPROBE_VLLM_COMMAND``); vLLM itself
is not installed here. Every test checks that no server process outlives the run.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.console import as_from_a_shell

from lmmprobe.models.served import SGLANG_LAUNCHER

FAKE = Path(__file__).with_name("fake_served_server.py")

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc for processes")


def _command(*fake_flags: str) -> str:
    return shlex.join([sys.executable, str(FAKE), *fake_flags])


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LMMPROBE_VLLM")}
    return {**env, "COLUMNS": "200", **extra}


def _exe() -> str:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    return exe


def _lmmprobe(*args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_exe(), *map(str, args)], capture_output=True, text=True, timeout=300, env=_env(**env)
    )


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] != b"Z"  # a zombie has ended


def _pids(pidfile: Path) -> list[int]:
    return [int(p) for p in pidfile.read_text().split()]


def _all_gone(pids: list[int], within: float = 20.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def test_a_served_model_answers_is_stopped_and_its_identity_ignores_the_port(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pids"
    spec = (
        f"vllm:some-org/some-model,command={_command('--fake-child', '--fake-pidfile', str(pidfile))}"
        ",tensor_parallel_size=2,max_model_len=4096,reasoning_parser=qwen3"
        ",gpu_memory_utilization=0.8,args=--enable-prefix-caching"
    )
    first = _lmmprobe("run", "-m", spec, "--limit", "6", "-q", "--db", tmp_path / "db",
                      "--out", tmp_path / "one")  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert "6 requests, 0 from the store, 6 sent, 0 errors" in first.stdout
    server, child = _pids(pidfile)
    assert _all_gone([server, child], within=5.0), "the server or its child outlived the run"

    # The options reached the server's command line, and its log is in the run folder.
    log = (tmp_path / "one" / "server-vllm-some-org_some-model.log").read_text()
    command = log.splitlines()[0]
    assert " some-org/some-model --host 127.0.0.1 --port " in command
    for flags in ("--tensor-parallel-size 2", "--max-model-len 4096",
                  "--reasoning-parser qwen3", "--gpu-memory-utilization 0.8",
                  "--enable-prefix-caching"):  # fmt: skip
        assert flags in command
    assert "serving a fake OpenAI-compatible API" in log

    results = json.loads((tmp_path / "one" / "results.json").read_text())
    identity = results["manifest"]["models"][spec]
    assert identity["backend"] == "vllm" and identity["name"] == "some-org/some-model"
    assert identity["options"]["server_version"] == "fake-1"
    assert identity["options"]["reasoning_parser"] == "qwen3"
    assert "127.0.0.1" not in json.dumps(identity) and "base_url" not in identity["options"]

    # Another run, on another free port, with the command from the environment instead of
    # command= (so another spec): the same identity, so every answer comes from the store.
    same = spec.replace(f",command={_command('--fake-child', '--fake-pidfile', str(pidfile))}", "")
    second = _lmmprobe(
        "run", "-m", same, "--limit", "6", "-q", "--db", tmp_path / "db", "--out", tmp_path / "two",
        LMMPROBE_VLLM_COMMAND=_command("--fake-pidfile", str(pidfile)),
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert "6 requests, 6 from the store, 0 sent, 0 errors" in second.stdout
    again = json.loads((tmp_path / "two" / "results.json").read_text())
    assert again["manifest"]["models"][same] == identity
    first_log = (tmp_path / "one" / "server-vllm-some-org_some-model.log").read_text()
    second_log = (tmp_path / "two" / "server-vllm-some-org_some-model.log").read_text()
    assert first_log.split("--port ")[1].split()[0] != second_log.split("--port ")[1].split()[0]
    assert _all_gone(_pids(pidfile), within=5.0)


def test_sglang_takes_its_own_flags(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    spec = (
        f"sglang:./weights,command={_command('--fake-pidfile', str(pidfile))}"
        ",tensor_parallel_size=2,max_model_len=8192,max_num_seqs=8"
    )
    proc = _lmmprobe("run", "-m", spec, "--limit", "3", "-q", "--db", tmp_path / "db",
                     "--out", tmp_path / "o")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    command = (tmp_path / "o" / "server-sglang-weights.log").read_text().splitlines()[0]
    assert "--model-path ./weights --host 127.0.0.1 --port " in command
    for flags in ("--tp-size 2", "--context-length 8192", "--max-running-requests 8"):
        assert flags in command
    assert _all_gone(_pids(pidfile), within=5.0)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_no_server_outlives_an_interrupted_or_killed_lmmprobe(
    tmp_path: Path, how: signal.Signals
) -> None:
    pidfile = tmp_path / "pids"
    fake = _command("--fake-child", "--fake-pidfile", str(pidfile), "--fake-latency", "0.5")
    spec = f"vllm:some/model,command={fake},max_concurrency=1"
    run = subprocess.Popen(
        [_exe(), "run", "-m", spec, "--limit", "40", "-q", "--db", str(tmp_path / "db"),
         "--out", str(tmp_path / "o")],
        preexec_fn=as_from_a_shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=_env(),
    )  # fmt: skip
    try:
        log = tmp_path / "o" / "server-vllm-some_model.log"
        deadline = time.monotonic() + 60
        while not (log.is_file() and "serving a fake" in log.read_text()):
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "the server never started"
            time.sleep(0.1)
        time.sleep(1.5)  # mid-run: a few of the 40 slow answers are in
        server, child = _pids(pidfile)
        assert _alive(server) and _alive(child)
        run.send_signal(how)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    if how == signal.SIGINT:
        assert run.returncode != 0 and "Traceback" not in err
    assert _all_gone([server, child]), f"left running after {how.name}"


def test_a_server_that_exits_at_start_is_one_line_with_its_log_tail(tmp_path: Path) -> None:
    fake = _command("--fake-exit", "torch.OutOfMemoryError: CUDA out of memory")
    proc = _lmmprobe("run", "-m", f"vllm:some/model,command={fake}", "--limit", "2",
                     "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    line = _one_line_error(proc)
    assert "vllm:some/model: the server exited with status 3 before it answered" in line
    assert "loading weights... | torch.OutOfMemoryError: CUDA out of memory" in line
    assert str(tmp_path / "o" / "server-vllm-some_model.log") in line  # where the whole log is


def test_the_log_tail_of_a_server_that_dies_shows_no_secret(tmp_path: Path) -> None:
    # Re-test 13 #8: a server printing its settings as it dies put the run's key, an
    # HF_TOKEN=... and a pasted sk-... key into the one-line error (the terminal, a CI log).
    keyfile = tmp_path / "key"
    hf, sk = "hf_abcdefghijklmnopqrstuvwx", "sk-test1234567890abcdefXYZ"
    # The secrets come from the server's environment: on its command line they are refused.
    fake = _command("--fake-keyfile", str(keyfile), "--fake-exit", "key is $KEY | $SETTINGS")
    proc = _lmmprobe("run", "-m", f"vllm:some/model,command={fake}", "--limit", "2",
                     "--db", tmp_path / "db", "--out", tmp_path / "o",
                     SETTINGS=f"HF_TOKEN={hf} | token: {sk}")  # fmt: skip
    line = _one_line_error(proc)
    key = keyfile.read_text()
    assert len(key) >= 16
    assert "the server exited with status 3 before it answered" in line
    assert "key is [redacted]" in line and "HF_TOKEN=[redacted]" in line
    for secret in (key, hf, sk):
        assert secret not in proc.stdout + proc.stderr


def test_a_server_that_never_answers_times_out_clearly(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    fake = _command("--fake-never-answer", "--fake-pidfile", str(pidfile))
    proc = _lmmprobe("run", "-m", f"vllm:some/model,command={fake},startup_timeout=3",
                     "--limit", "2", "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    line = _one_line_error(proc)
    assert "the server did not answer on http://127.0.0.1:" in line
    assert "/v1/models within 3 s (raise startup_timeout= if it is still loading)" in line
    assert "fake server: model some/model" in line  # the log's tail
    assert _all_gone(_pids(pidfile), within=5.0)


def test_vllm_not_installed_says_what_to_do(tmp_path: Path) -> None:
    if shutil.which("vllm"):
        pytest.skip("vllm is installed here")
    proc = _lmmprobe("run", "-m", "vllm:some/model", "--limit", "2", "--db", tmp_path / "db")
    line = _one_line_error(proc)
    assert "vllm serve is not installed here (pip install vllm)" in line
    assert "command=... or $LMMPROBE_VLLM_COMMAND" in line


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("tp=2", "vllm backend: unknown option(s) ['tp']"),
        ("max_model_len=4k", "option max_model_len='4k' must be a whole number, at least 1"),
        # Re-test 8 #5: values that cannot work were passed to the server or the client.
        ("max_num_seqs=0", "option max_num_seqs='0' must be a whole number, at least 1"),
        ("gpu_memory_utilization=nan", "gpu_memory_utilization='nan' must be a number above 0"),
        ("gpu_memory_utilization=1.5", "gpu_memory_utilization='1.5' must be a number above 0"),
        ("startup_timeout=1e999", "startup_timeout='1e999' must be a number of seconds above 0"),
        ("timeout=nan", "option timeout='nan' must be a number of seconds above 0"),
        ("trust_remote_code=maybe", "option trust_remote_code='maybe' is true or false"),
        ("startup_timeout=soon", "option startup_timeout='soon' is invalid"),
        ("startup_timeout=0", "option startup_timeout='0' must be a number of seconds above 0"),
        ("args=--chat-template 'x", 'option args="--chat-template \'x": No closing quotation'),
        ("args=--host 0.0.0.0", "args= cannot set --host; the server listens on 127.0.0.1"),
        ("args=--port=80", "args= cannot set --port; the server listens on 127.0.0.1"),
        # A secret in the spec would be recorded in the manifest, results and the server's log.
        ("args=--api-key sk-secret-1", "args= cannot pass --api-key: the spec is recorded"),
        ("args=--hf_token=hf_secret", "args= cannot pass --hf_token: the spec is recorded"),
    ],
)
def test_bad_served_options_are_one_line(tmp_path: Path, option: str, message: str) -> None:
    spec = f"vllm:some/model,command={_command()},{option}"
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "--db", tmp_path / "db")
    assert message in _one_line_error(proc)
    out = proc.stdout + proc.stderr
    assert "sk-secret-1" not in out and "hf_secret" not in out  # a refused value is not echoed


def test_the_python_api_stops_the_server_when_the_run_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lmmprobe.api import evaluate

    pidfile = tmp_path / "pids"
    monkeypatch.setenv(
        "LMMPROBE_VLLM_COMMAND", _command("--fake-child", "--fake-pidfile", str(pidfile))
    )
    ev = evaluate(
        models=["vllm:some/model"], limit=3, db=str(tmp_path / "db"), out=str(tmp_path / "o")
    )
    assert ev.outcome.models[0].called == 3
    # Gone when evaluate returns, not only when this interpreter exits.
    assert _all_gone(_pids(pidfile), within=5.0)


def test_identity_names_a_folder_by_fingerprint_and_a_hub_id_by_its_cached_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lmmprobe.models import load_model
    from lmmprobe.models.base import StartableModel

    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llava"}')
    commit = "0123456789abcdef0123456789abcdef01234567"
    refs = tmp_path / "hub" / "models--org--model" / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("LMMPROBE_VLLM_COMMAND", _command())

    identities = {}
    for target in (str(folder), "org/model"):
        model = load_model(f"vllm:{target},max_num_seqs=8")
        assert isinstance(model, StartableModel)
        # The concurrency the server takes: max_num_seqs when given.
        assert model.capabilities.max_concurrency == 8
        model.start(tmp_path / "logs")
        try:
            identities[target] = model.identity
        finally:
            model.stop()
    local, hub = identities[str(folder)], identities["org/model"]
    assert local.name == str(folder.resolve()) and local.fingerprint
    assert hub.name == "org/model" and hub.revision == commit and hub.fingerprint is None
    assert load_model("vllm:org/model").capabilities.max_concurrency == 64


def test_a_server_that_dies_mid_run_stops_the_run_with_its_log_tail(tmp_path: Path) -> None:
    fake = _command("--fake-latency", "0.2", "--fake-die-after", "1.5")
    spec = f"vllm:some/model,command={fake},max_concurrency=1"  # unreachable_after as default
    proc = _lmmprobe("run", "-m", spec, "--limit", "40", "-q", "--db", tmp_path / "db",
                     "--out", tmp_path / "o")  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "the vllm:some/model server exited with status 5 during the run" in proc.stderr
    assert "ends: " in proc.stderr and "Fatal Python error: Segmentation fault (run" in proc.stderr
    assert "status stopped_unreachable); the same command resumes it" in proc.stderr


def test_a_served_model_is_refused_with_the_ray_executor_before_anything_starts(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pids"
    spec = f"vllm:some/model,command={_command('--fake-pidfile', str(pidfile))}"
    proc = _lmmprobe("run", "-m", spec, "--executor", "ray", "--limit", "2",
                     "--db", tmp_path / "db")  # fmt: skip
    assert "use --executor local (the default) with it" in _one_line_error(proc)
    assert not pidfile.exists()  # no server was started


def test_a_dry_run_starts_no_server(tmp_path: Path) -> None:
    # `false` exits at once: had the dry run started the server, it would fail saying so.
    proc = _lmmprobe(
        "run", "-m", "vllm:some/model,command=false", "--limit", "3", "--dry-run",
        "--db", tmp_path / "db",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "its server is not started for a dry run" in proc.stdout
    assert "3 request(s) to send" in proc.stdout
    assert not (tmp_path / "db").exists()  # nothing recorded


# --------------------------------------------------------------------------- re-test 11 #11


def _nowhere(key: str, *places: Path | str) -> None:
    """`key` is in none of the texts or files (folders searched) given."""
    assert len(key) >= 32
    for place in places:
        if isinstance(place, str):
            assert key not in place
            continue
        files = [place] if place.is_file() else [p for p in place.rglob("*") if p.is_file()]
        for f in files:
            assert key.encode() not in f.read_bytes(), f


def test_the_server_gets_a_key_of_its_own_never_on_a_command_line(tmp_path: Path) -> None:
    # Re-test 11 #11: no key was given, so whatever bound the port first was taken as the server.
    keyfile, cmdline = tmp_path / "key", tmp_path / "cmdline"
    spec = (
        f"vllm:m,command={_command('--fake-keyfile', str(keyfile), '--fake-cmdline', str(cmdline))}"
    )
    proc = _lmmprobe("run", "-m", spec, "--limit", "3", "-q", "--db", tmp_path / "db",
                     "--out", tmp_path / "o")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "3 requests, 0 from the store, 3 sent, 0 errors" in proc.stdout
    key = keyfile.read_text()  # from VLLM_API_KEY, as vLLM reads it; every request needed it
    _nowhere(key, proc.stdout, proc.stderr, tmp_path / "o", tmp_path / "db", cmdline)


def test_sglangs_key_reaches_it_as_api_key_but_not_on_its_command_line(tmp_path: Path) -> None:
    # SGLang takes --api-key only: lmmprobe's launcher adds it inside the process.
    package = tmp_path / "pkg" / "sglang"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "launch_server.py").write_text(
        f"import runpy, sys\nsys.argv[0] = {str(FAKE)!r}\n"
        f"runpy.run_path({str(FAKE)!r}, run_name='__main__')\n"
    )
    keyfile, cmdline = tmp_path / "key", tmp_path / "cmdline"
    spec = f"sglang:m,args=--fake-keyfile {keyfile} --fake-cmdline {cmdline}"
    path = os.pathsep.join(p for p in (str(tmp_path / "pkg"), os.environ.get("PYTHONPATH")) if p)
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "-q", "--db", tmp_path / "db",
                     "--out", tmp_path / "o", PYTHONPATH=path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    key = keyfile.read_text()
    # The server's own log is left out: SGLang (and this fake) write their arguments there.
    log = tmp_path / "o" / "server-sglang-m.log"
    assert "sglang.launch_server" in log.read_text().splitlines()[0]
    _nowhere(key, proc.stdout, proc.stderr, tmp_path / "o" / "results.json", tmp_path / "db",
             cmdline)  # fmt: skip


def test_a_server_answering_without_the_key_is_not_taken_for_the_one_started(
    tmp_path: Path,
) -> None:
    # Another process on the port (or a command that takes no key) answers without it.
    spec = f"vllm:m,command={_command('--fake-open')},startup_timeout=60"
    proc = _lmmprobe("run", "-m", spec, "--limit", "2", "-q", "--db", tmp_path / "db",
                     "--out", tmp_path / "o")  # fmt: skip
    line = _one_line_error(proc)
    assert "answers without the key lmmprobe gave the server" in line, line
    assert "nothing was sent to it" in line


def test_a_readiness_probe_that_trickles_ends_at_the_startup_timeout(tmp_path: Path) -> None:
    # Re-test 11 #11 drip: /v1/models answered a byte a second, and the start never ended.
    spec = f"vllm:m,command={_command('--fake-drip')},startup_timeout=3"
    proc = subprocess.run(
        [_exe(), "run", "-m", spec, "--limit", "1", "-q", "--db", str(tmp_path / "db"),
         "--out", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=120, env=_env(), check=False,
    )  # fmt: skip
    line = _one_line_error(proc)
    assert "did not answer on" in line and "within 3 s" in line, line


def test_sglangs_launcher_passes_a_key_that_begins_with_a_dash(tmp_path: Path) -> None:
    # A run's key is secrets.token_urlsafe(32): once in 64 it begins with "-", and
    # `--api-key KEY` as two words made SGLang's argparse stop with "expected one argument".
    package = tmp_path / "sglang"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "launch_server.py").write_text(
        "import argparse\n"
        "p = argparse.ArgumentParser()\n"
        "p.add_argument('--api-key')\n"
        "p.add_argument('--model-path')\n"
        "print(repr(p.parse_args().api_key))\n"
    )
    key = "-Ab3_" + "x" * 38
    proc = subprocess.run(
        [sys.executable, "-c", SGLANG_LAUNCHER, "--model-path", "m"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "LMMPROBE_SERVER_KEY": key, "PYTHONPATH": str(tmp_path)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == repr(key)
