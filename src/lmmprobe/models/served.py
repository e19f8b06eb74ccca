"""A local vLLM or SGLang server for the run: ``vllm:PATH_OR_ID[,option=value...]``, ``sglang:``.

The backend starts the server on a free loopback port when the run starts (its log in the run
folder), evaluates through the ``openai`` backend (`lmmprobe.models.openai_api`), and stops it
when the run ends, on Ctrl-C or when lmmprobe dies (`lmmprobe.models._local_server`).

Options that reach the server's command line (`SERVER_FLAGS`):

=========================  ===========================  ===========================
option                     vllm serve                   sglang.launch_server
=========================  ===========================  ===========================
tensor_parallel_size       --tensor-parallel-size       --tp-size
max_model_len              --max-model-len              --context-length
reasoning_parser           --reasoning-parser           --reasoning-parser
gpu_memory_utilization     --gpu-memory-utilization     --mem-fraction-static
max_num_seqs               --max-num-seqs               --max-running-requests
dtype                      --dtype                      --dtype
revision                   --revision                   --revision
trust_remote_code=true     --trust-remote-code          --trust-remote-code
args="--any --more 1"      appended as written          appended as written
=========================  ===========================  ===========================

lmmprobe's own options: ``command`` (the server command instead of ``vllm serve`` /
``python -m sglang.launch_server``; also ``$LMMPROBE_VLLM_COMMAND`` / ``$LMMPROBE_SGLANG_COMMAND``;
the model and ``--host 127.0.0.1 --port N`` and the flags above are appended),
``startup_timeout`` (seconds to wait for the first answer, 1800), ``max_concurrency`` (requests
in flight: ``max_num_seqs`` when given, else 64), ``timeout`` (seconds per request, 600), and
every other option of the ``openai`` backend (``max_attempts``, ``image_format``...).

The server is given a random key for the run, in its environment: vLLM reads ``VLLM_API_KEY``;
SGLang takes ``--api-key``, which lmmprobe's launcher (run in place of ``python -m
sglang.launch_server``) reads from ``LMMPROBE_SERVER_KEY``, so it never shows on a command line
(``ps``); a ``command=`` for SGLang must pass ``$LMMPROBE_SERVER_KEY`` as ``--api-key`` itself.
The server counts as started once ``/v1/models`` refuses a request without the key and answers
one with it (another local process may bind the free port first, while the model loads); the
client then sends it. lmmprobe never prints, logs or stores the key (it is scrubbed from every
message and answer as a configured key is); SGLang itself writes its arguments, the key among
them, to its log in the run folder: a key good only while that server runs.

No secret goes on the server's command line: the spec is recorded (manifest, results) and the
command line is written to the server's log, by lmmprobe and by the server itself. A flag that
looks like it carries one (`secret_argument`: ``--api-key``, ``--key``, ``-k``, ``--auth``,
``--passwd``, ``--hf-token``..., or ``HF_TOKEN=...`` before the command) in ``command=``,
``args=`` or ``$LMMPROBE_VLLM_COMMAND`` is refused in one line naming the flag, never its value;
the server takes its secrets from its environment, which it inherits.

The model identity (every cache key) records what was served, not where: backend ``vllm`` or
``sglang``, the path (resolved) or hub id, the revision (the option, or the Hugging Face cache's
``refs/main``), a local folder's fingerprint, the server version it reports, and the options
that change answers (``max_model_len``, ``reasoning_parser``, ``dtype``, ``args``); never the
port, so runs on different ports share the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import os
import re
import secrets
import shlex
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from lmmprobe.models import openai_api
from lmmprobe.models._fingerprint import weights_fingerprint
from lmmprobe.models._local_server import LOOPBACK, LocalServer, free_port
from lmmprobe.models.api_keys import redact_text, remember_secret, secret_argument
from lmmprobe.models.base import ModelIdentity, SpendGuard
from lmmprobe.schema import ErrorInfo, Request, Response
from lmmprobe.schema.text import shown_value

log = logging.getLogger(__name__)

__all__ = ["SERVERS", "SERVER_FLAGS", "ServedModel", "ServerKind", "load_sglang", "load_vllm"]

SERVER_FLAGS: dict[str, tuple[str, str]] = {
    "tensor_parallel_size": ("--tensor-parallel-size", "--tp-size"),
    "max_model_len": ("--max-model-len", "--context-length"),
    "reasoning_parser": ("--reasoning-parser", "--reasoning-parser"),
    "gpu_memory_utilization": ("--gpu-memory-utilization", "--mem-fraction-static"),
    "max_num_seqs": ("--max-num-seqs", "--max-running-requests"),
    "dtype": ("--dtype", "--dtype"),
    "revision": ("--revision", "--revision"),
    "trust_remote_code": ("--trust-remote-code", "--trust-remote-code"),
}
"""Option → (vLLM flag, SGLang flag)."""

_FLAG_ONLY = frozenset({"trust_remote_code"})  # true: the bare flag; false: nothing
_INTEGER = frozenset({"tensor_parallel_size", "max_model_len", "max_num_seqs"})
_IDENTITY = ("max_model_len", "reasoning_parser", "dtype", "args", "revision")
"""Server options that change answers, so they are part of the identity. The parallel layout,
memory share and batch size are not: they change speed, not what a request is answered."""
_OWN = ("command", "startup_timeout", "args")


_CONNECTION_ERRORS = frozenset({"connection", "unreachable"})
_WATCH_S = 0.5  # how often a request in flight looks whether the server is still alive
_DEFAULT_CONCURRENCY = 64
_DEFAULT_TIMEOUT = "600"  # a thinking model's long answer on a busy local GPU, per attempt
_DEFAULT_STARTUP_S = 1800.0  # download, load, compile and capture graphs of a large model
KEY_VARIABLES = ("VLLM_API_KEY", "LMMPROBE_SERVER_KEY")
"""Where the server finds its key for the run: vLLM's own variable, and lmmprobe's (read by the
SGLang launcher, `SGLANG_LAUNCHER`, and free for a ``command=`` wrapper to pass on)."""
SGLANG_LAUNCHER = (
    "import os, runpy, sys; "
    "sys.argv[1:1] = ['--api-key=' + os.environ.pop('LMMPROBE_SERVER_KEY')]; "
    "runpy.run_module('sglang.launch_server', run_name='__main__', alter_sys=True)"
)
"""Run as ``python -c`` in place of ``python -m sglang.launch_server``: SGLang takes its key as
``--api-key`` only, and a flag set here is not on the process's command line (``ps``). One word
(``--api-key=KEY``): a key `secrets.token_urlsafe` makes begins with ``-`` once in 64, and
argparse would take it for an option after a separate ``--api-key``."""


@dataclass(frozen=True)
class ServerKind:
    """How one server program is started."""

    name: str
    """Backend name (``vllm``)."""
    command: tuple[str, ...]
    """Default command; the model and the options follow it."""
    model_flag: str | None
    """The flag before the model (None: the model is the first argument)."""
    flag_column: int
    """Which column of `SERVER_FLAGS` is this server's."""
    install: str
    """What to install when the default command is missing."""

    @property
    def env_var(self) -> str:
        """The environment variable that replaces the default command."""
        return f"LMMPROBE_{self.name.upper()}_COMMAND"

    def missing(self) -> bool:
        """Whether the default command cannot run here."""
        if self.command[0] == "python":
            return find_spec(self.command[2].partition(".")[0]) is None
        return shutil.which(self.command[0]) is None


SERVERS = {
    "vllm": ServerKind("vllm", ("vllm", "serve"), None, 0, "pip install vllm"),
    "sglang": ServerKind(
        "sglang", ("python", "-m", "sglang.launch_server"), "--model-path", 1, "pip install sglang"
    ),
}


@dataclass(frozen=True)
class ServedOptions:
    """A served spec, checked: what to serve, how, and the openai backend's options."""

    kind: ServerKind
    model: str
    command: tuple[str, ...]
    server_args: tuple[str, ...]
    identity_options: Mapping[str, str]
    startup_timeout: float
    client: openai_api.OpenAIOptions


def _split(kind: ServerKind, option: str, text: str) -> list[str]:
    """Shell words of an option's value (quotes group words, as in a shell)."""
    try:
        return shlex.split(text)
    except ValueError as exc:  # an unclosed quote
        shown = redact_text(text)  # a secret in it is not echoed, however it is spaced
        raise ValueError(f"{kind.name} backend: option {option}={shown!r}: {exc}") from exc


_RECORDED = "the spec is recorded in the run's manifest, results and log"
_LOGGED = "the command line is written to the server's log, by lmmprobe and by the server"


def _no_secret(kind: ServerKind, where: str, argv: Sequence[str], recorded: str) -> None:
    """Refuse a secret on the server's command line (`secret_argument`), naming the flag only.

    A command line is written down: by lmmprobe in the server's log, by the server itself
    (vLLM logs its non-default arguments), and, given in the spec, in the run's manifest and
    results. The one place a secret stays unwritten is the environment.
    """
    for arg in argv:
        name = secret_argument(arg)
        if name is not None:
            raise ValueError(
                f"{kind.name} backend: {where} cannot pass {name}: {recorded}; give the server "
                "its secrets through its environment instead (HF_TOKEN, VLLM_API_KEY...), "
                "which lmmprobe passes on and never records"
            )


def _command(kind: ServerKind, written: str | None) -> tuple[str, ...]:
    text = written if written is not None else os.environ.get(kind.env_var)
    if text is not None:
        argv = tuple(_split(kind, "command", text))
        if not argv:
            raise ValueError(
                f"{kind.name}: the server command (command= or ${kind.env_var}) is empty"
            )
        if written is not None:
            _no_secret(kind, "command=", argv, _RECORDED)
        else:
            _no_secret(kind, f"${kind.env_var}", argv, _LOGGED)
        return argv
    if kind.missing():
        raise ValueError(
            f"{kind.name}: {' '.join(kind.command)} is not installed here ({kind.install}); "
            f"or name the server command with command=... or ${kind.env_var}"
        )
    if kind.command[0] == "python":  # this interpreter, so the server sees the same packages
        return (sys.executable, *kind.command[1:])
    return kind.command


def parse_options(kind: ServerKind, target: str | None, options: dict[str, str]) -> ServedOptions:
    """Check a served spec's options and build the server's command line (port excepted).

    Raises:
        ValueError: No target, an unknown option, a value of the wrong type, or no server
            command to run.

    """
    if not target:
        raise ValueError(f"the {kind.name} backend needs a model: {kind.name}:PATH_OR_ID")
    client_names = set(openai_api._CONVERT) - {"key_env"}
    known = set(SERVER_FLAGS) | set(_OWN) | client_names
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(
            f"{kind.name} backend: unknown option(s) {unknown}; server options: "
            f"{sorted(SERVER_FLAGS)} and args=; own: command, startup_timeout; "
            f"client: {sorted(client_names)}"
        )
    args: list[str] = []
    for name, flags in SERVER_FLAGS.items():
        value = options.get(name)
        if value is None:
            continue
        if name in _FLAG_ONLY:
            if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(f"{kind.name} backend: option {name}={value!r} is true or false")
            if value.lower() in ("true", "1", "yes"):
                args.append(flags[kind.flag_column])
            continue
        # ASCII digits only: int() raises on "²" (which isdigit accepts) and on 4,300 digits
        # or more, and reads "٣" as 3, which the server's own parser would refuse.
        if name in _INTEGER and not (
            value.isascii() and value.isdigit() and len(value) <= 18 and int(value) >= 1
        ):
            raise ValueError(
                f"{kind.name} backend: option {name}={shown_value(value, 40)!r} must be a whole "
                "number, at least 1"
            )
        if name == "gpu_memory_utilization":
            _fraction(kind, name, value)
        args += [flags[kind.flag_column], value]
    extra = _split(kind, "args", options.get("args", ""))
    # A spec is recorded (manifest, results, the server's log): a secret never goes in it.
    _no_secret(kind, "args=", extra, _RECORDED)
    for arg in extra:
        if arg.split("=")[0] in ("--host", "--port"):
            # Loopback only, on a port that was free: the server is ours alone.
            raise ValueError(
                f"{kind.name} backend: args= cannot set {arg.split('=')[0]}; the server listens "
                f"on {LOOPBACK} at a free port lmmprobe picks"
            )
    startup = options.get("startup_timeout", str(_DEFAULT_STARTUP_S))
    try:
        startup_timeout = float(startup)
    except ValueError as exc:
        raise ValueError(
            f"{kind.name} backend: option startup_timeout={startup!r} is invalid"
        ) from exc
    openai_api.check_range(
        f"{kind.name} backend", "startup_timeout", startup, startup_timeout, math.ulp(0.0),
        openai_api.MAX_SECONDS, "a number of seconds above 0",
    )  # fmt: skip
    client = {k: v for k, v in options.items() if k in client_names}
    client.setdefault("timeout", _DEFAULT_TIMEOUT)
    client.setdefault("max_concurrency", options.get("max_num_seqs", str(_DEFAULT_CONCURRENCY)))
    # The address is the server's, known once it runs; this checks the options now.
    client_opts = openai_api.parse_options(f"{target}@http://{LOOPBACK}/v1", client)
    client_opts = dataclasses.replace(client_opts, key_env="LMMPROBE_SERVED_API_KEY")
    return ServedOptions(
        kind=kind,
        model=target,
        command=_command(kind, options.get("command")),
        server_args=(*args, *extra),
        identity_options={k: options[k] for k in _IDENTITY if options.get(k)},
        startup_timeout=startup_timeout,
        client=client_opts,
    )


def _fraction(kind: ServerKind, name: str, value: str) -> None:
    """Refuse a share of GPU memory that is not a number above 0 and at most 1, in one line."""
    try:
        share = float(value)
    except ValueError:
        share = math.nan
    if not 0 < share <= 1:  # NaN fails too
        raise ValueError(
            f"{kind.name} backend: option {name}={value[:40]!r} must be a number above 0 and "
            "at most 1 (a share of the GPU's memory)"
        )


def hub_revision(repo_id: str, revision: str | None) -> str | None:
    """The commit a hub id resolves to in the local Hugging Face cache (None if not cached)."""
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.expanduser("~/.cache/huggingface"), "hub"
    )
    ref = Path(hub) / f"models--{repo_id.replace('/', '--')}" / "refs" / (revision or "main")
    try:
        return ref.read_text().strip() or revision
    except (OSError, ValueError):
        return revision


class ServedModel:
    """A model served by a local vLLM/SGLang server for the run, asked through ``openai``.

    `start` runs the server (the runner calls it with the run folder, for the log); the
    identity is known from then on. `stop` ends it. Reading `identity` before `start` starts
    the server with its log in a temporary file, named in messages.
    """

    def __init__(self, opts: ServedOptions) -> None:
        self.opts = opts
        self._client = openai_api.OpenAIChatModel(opts.client)
        self.capabilities = self._client.capabilities
        self._identity: ModelIdentity | None = None
        self.server: LocalServer | None = None

    def __repr__(self) -> str:
        return f"ServedModel({self.opts.kind.name}:{self.opts.model})"

    @property
    def what(self) -> str:
        """The spec's head, as messages name the model."""
        return f"{self.opts.kind.name}:{self.opts.model}"

    def _command_line(self, port: int) -> list[str]:
        o = self.opts
        model = [o.kind.model_flag, o.model] if o.kind.model_flag else [o.model]
        command = list(o.command)
        if o.kind.name == "sglang" and tuple(command[1:]) == SERVERS["sglang"].command[1:]:
            command = [command[0], "-c", SGLANG_LAUNCHER]  # the key from the environment
        return [*command, *model, "--host", LOOPBACK, "--port", str(port), *o.server_args]

    def start(self, log_dir: Path | None = None) -> None:
        """Start the server, wait until it answers, and record what it serves.

        Args:
            log_dir: The run folder: the log is ``server-<backend>-<model>.log`` there. None:
                a temporary file, named in messages.

        Raises:
            ServerStartError: The server exited first or did not answer in time (a
                `ValueError` whose one line quotes the end of its log).

        """
        if self.server is not None and self.server.running:
            return
        if log_dir is None:
            fd, name = tempfile.mkstemp(prefix=f"lmmprobe-{self.opts.kind.name}-", suffix=".log")
            os.close(fd)
            log_path = Path(name)
            log.warning("%s: the server's log is %s", self.what, log_path)
        else:
            safe = re.sub(r"[^A-Za-z0-9._-]+", "_", self.opts.model).strip("._") or "model"
            log_path = log_dir / f"server-{self.opts.kind.name}-{safe}.log"
        port = free_port()
        # The server's own key for the run: whatever else answers on the port is refused.
        key = secrets.token_urlsafe(32)
        remember_secret(key)  # scrubbed from every message and answer, as a configured key
        server = LocalServer(
            self.what,
            self._command_line(port),
            port,
            log_path,
            key=key,
            env=dict.fromkeys(KEY_VARIABLES, key),
        )
        self.server = server
        listed = server.start(self.opts.startup_timeout)
        # The name the server answers to: the first it lists (vLLM's is the path or id as
        # given, or --served-model-name); the model as written when it lists none.
        data = listed.get("data") if isinstance(listed, dict) else None
        served = self.opts.model
        if isinstance(data, list) and data and isinstance(data[0], dict) and data[0].get("id"):
            served = str(data[0]["id"])
        client = dataclasses.replace(
            self.opts.client, model=served, base_url=f"{server.base_url}/v1"
        )
        self._client = openai_api.OpenAIChatModel(client, api_key=key)
        self._identity = self._make_identity(server.version())

    def _make_identity(self, version: str | None) -> ModelIdentity:
        o = self.opts
        local = Path(o.model).expanduser()
        revision = o.identity_options.get("revision")
        options: dict[str, Any] = {
            k: v for k, v in self._client.identity.options.items() if k != "base_url"
        }
        options.update({k: v for k, v in o.identity_options.items() if k != "revision"})
        options["server_version"] = version
        if local.is_dir():
            return ModelIdentity(
                backend=o.kind.name,
                name=str(local.resolve()),
                revision=revision,
                fingerprint=weights_fingerprint(local),
                options=options,
            )
        return ModelIdentity(
            backend=o.kind.name,
            name=o.model,
            revision=hub_revision(o.model, revision),
            options=options,
        )

    @property
    def identity(self) -> ModelIdentity:
        """What was served (see the module docstring); starts the server if not yet started."""
        if self._identity is None:
            self.start(None)
        assert self._identity is not None
        return self._identity

    def stop(self) -> None:
        """Stop the server (and anything it started); safe to call when none runs."""
        if self.server is not None:
            self.server.stop()

    # -- the openai backend does the asking ----------------------------------------------

    def _explained(self, responses: list[Response]) -> list[Response]:
        """Connection errors after the server died say so, with the end of its log."""
        note = self.server.exit_note() if self.server is not None else None
        if note is None:
            return responses
        out = []
        for r in responses:
            if r.error is not None and r.error.type in _CONNECTION_ERRORS:
                error = r.error.model_copy(update={"message": f"{r.error.message}; {note}"})
                r = r.model_copy(update={"error": error})
            out.append(r)
        return out

    def _gone(self, requests: Sequence[Request]) -> list[Response] | None:
        """``unreachable`` errors at once when the server has exited (the runner stops on them)."""
        note = self.server.exit_note() if self.server is not None else None
        if note is None:
            return None
        info = ErrorInfo(type="unreachable", message=note, retryable=True)
        return [Response(key=r.key, error=info) for r in requests]

    async def _watched(
        self,
        call: Callable[[Sequence[Request]], Awaitable[list[Response]]],
        requests: Sequence[Request],
    ) -> list[Response]:
        """`call`, given up as soon as the server exits (not after minutes of retries)."""
        gone = self._gone(requests)
        if gone is not None:
            return gone
        task = asyncio.ensure_future(call(requests))
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=_WATCH_S)
                if done:
                    return self._explained(task.result())
                gone = self._gone(requests)
                if gone is not None:
                    return gone
        finally:
            if not task.done():  # the server died, or our caller was cancelled
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    @property
    def spend_guard(self) -> SpendGuard | None:
        """The run's cost meter, as its client asks it (`lmmprobe.models.base.MeteredModel`)."""
        return self._client.spend_guard

    @spend_guard.setter
    def spend_guard(self, guard: SpendGuard | None) -> None:
        self._client.spend_guard = guard

    @property
    def requests_sent(self) -> int:
        """Attempts its client sent, retries included."""
        return self._client.requests_sent

    async def agenerate(self, requests: Sequence[Request]) -> list[Response]:
        """Generate through the server (`OpenAIChatModel.agenerate`)."""
        return await self._watched(self._client.agenerate, requests)

    async def aloglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        """Chat servers do not score continuations (`OpenAIChatModel.aloglikelihood`)."""
        return await self._client.aloglikelihood(requests)

    async def amark_logprobs(self, requests: Sequence[Request]) -> list[Response]:
        """Option-mark log-probabilities through the server."""
        return await self._watched(self._client.amark_logprobs, requests)

    async def aclose(self) -> None:
        """Close the HTTP clients of the running event loop (the server keeps running)."""
        await self._client.aclose()


def load_vllm(target: str | None, options: dict[str, str]) -> ServedModel:
    """Registry factory for ``vllm:PATH_OR_ID[,option=value...]``."""
    return ServedModel(parse_options(SERVERS["vllm"], target, options))


def load_sglang(target: str | None, options: dict[str, str]) -> ServedModel:
    """Registry factory for ``sglang:PATH_OR_ID[,option=value...]``."""
    return ServedModel(parse_options(SERVERS["sglang"], target, options))
