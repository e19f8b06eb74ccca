"""The local Ray instance lmmprobe starts: loopback only, token-authenticated, ending with us.

`start_local` is what ``--executor ray`` (no address, no ``$RAY_ADDRESS``) does instead of a
bare ``ray.init()``, which on Linux starts a node that

- listens on every interface: Ray resolves ``127.0.0.1`` to the machine's address
  (``services.resolve_ip_for_localhost``) unless its single-machine mode is on
  (``ray_constants.ENABLE_RAY_CLUSTER`` false, the default on macOS and Windows), and its gRPC
  servers (GCS, raylet, every worker) bind all interfaces unless the node's address is
  loopback. Here the node's address is ``127.0.0.1`` with that mode on while Ray starts, so
  every server and agent binds loopback only;
- turns token authentication on by default and says so in a warning on every run (Ray 2.60),
  writing the token to ``~/.ray/auth_token`` when none is there. Here the mode is set
  explicitly (``RAY_AUTH_MODE=token``, which is what silences the warning: Ray warns only when
  it chose the mode itself) with a fresh token for this instance in ``RAY_AUTH_TOKEN``: other
  users of the machine cannot drive it through its loopback ports, and no token is written to
  disk;
- leaves the dashboard and runtime-env agents running for a minute after a SIGKILLed driver:
  a reaper process (`lmmprobe._reaper`) ends every process of the instance as soon
  as the driver is gone.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LOOPBACK", "OWNER_VARIABLE", "LocalRay", "start_local"]

LOOPBACK = "127.0.0.1"
OWNER_VARIABLE = "LMMPROBE_RAY_OWNER"
"""Set in the environment of every process of the local instance (the reaper's mark)."""
_AUTH = {"RAY_AUTH_MODE": "token"}


@dataclass
class LocalRay:
    """A local instance this process started; `shutdown` ends it and restores the environment."""

    ray: Any
    reaper: subprocess.Popen[bytes] | None
    saved_env: dict[str, str | None] = field(default_factory=dict)

    def shutdown(self) -> None:
        """Shut Ray down, let the reaper end any straggler, and restore the auth variables."""
        try:
            self.ray.shutdown()
        finally:
            if self.reaper is not None and self.reaper.stdin is not None:
                self.reaper.stdin.close()  # end of file: the reaper sweeps, then exits
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.reaper.wait(timeout=15)
            _restore(self.saved_env)
            if self.saved_env:
                _reload_auth(self.ray)


def start_local(ray: Any, **init_kwargs: Any) -> LocalRay:
    """Start a local Ray instance bound to loopback (see the module docstring) and join it.

    Args:
        ray: The ``ray`` module.
        **init_kwargs: More arguments for ``ray.init`` (``num_cpus``, ``log_to_driver``...).

    Returns:
        The instance, to `LocalRay.shutdown` when done.

    Raises:
        ConnectionError, RuntimeError, ValueError: As ``ray.init``.

    """
    saved = _set_auth(ray)
    marker = secrets.token_hex(16)
    reaper = _start_reaper(marker)
    try:
        # Only the processes Ray starts now (and the workers the raylet starts later, from its
        # own environment) carry the mark; it leaves ours again once they have it.
        os.environ[OWNER_VARIABLE] = marker
        with _single_machine():
            # "local": a new instance, even where `ray start` left one for ray.init() to join.
            ray.init(
                address="local", _node_ip_address=LOOPBACK, include_dashboard=False, **init_kwargs
            )
    except BaseException:
        os.environ.pop(OWNER_VARIABLE, None)
        if reaper is not None and reaper.stdin is not None:
            reaper.stdin.close()
        _restore(saved)
        if saved:
            _reload_auth(ray)
        raise
    os.environ.pop(OWNER_VARIABLE, None)
    return LocalRay(ray, reaper, saved)


def _set_auth(ray: Any) -> dict[str, str | None]:
    """Token auth with a fresh token, unless the user configured Ray's auth themselves."""
    if "RAY_AUTH_MODE" in os.environ:
        return {}  # their choice (``disabled``, or ``token`` with their own token)
    if not hasattr(ray._raylet, "AuthenticationTokenLoader"):
        return {}  # a Ray without token authentication: nothing to configure
    wanted = {**_AUTH, "RAY_AUTH_TOKEN": secrets.token_hex(32)}  # as `ray get-auth-token`
    saved = {k: os.environ.get(k) for k in (*wanted, "RAY_AUTH_TOKEN_PATH")}
    os.environ.pop("RAY_AUTH_TOKEN_PATH", None)  # the token above is the one to use
    os.environ.update(wanted)
    _reload_auth(ray)
    return saved


def _reload_auth(ray: Any) -> None:
    """Make this process read the auth variables again, as Ray does when it sets them itself.

    Ray's C++ side caches its configuration and the token once read (at import, or at an
    earlier ``ray.init``); ``authentication_token_setup._enable_token_auth`` refreshes the
    first the same way.
    """
    raylet = ray._raylet
    raylet.Config.initialize("")
    raylet.AuthenticationTokenLoader.instance().reset_cache()


def _restore(saved: dict[str, str | None]) -> None:
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@contextlib.contextmanager
def _single_machine() -> Iterator[None]:
    """Ray's single-machine mode while it starts, so ``127.0.0.1`` stays the node's address.

    ``ENABLE_RAY_CLUSTER`` is read when the node's address is resolved; Ray exposes no
    argument for it (only ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``, read once at import).
    """
    constants: Any = importlib.import_module("ray._private.ray_constants")
    before = constants.ENABLE_RAY_CLUSTER
    constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        constants.ENABLE_RAY_CLUSTER = before


def _start_reaper(marker: str) -> subprocess.Popen[bytes] | None:
    """The reaper, waiting on a pipe only this process holds (None where /proc is missing)."""
    if not Path("/proc").is_dir():
        return None
    script = Path(__file__).resolve().parents[1] / "_reaper.py"
    env = {k: v for k, v in os.environ.items() if k != OWNER_VARIABLE}
    return subprocess.Popen(
        [sys.executable, "-I", str(script), marker, str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        # Its own session: a Ctrl-C or a kill of the driver's process group leaves it to sweep.
        start_new_session=True,
    )
