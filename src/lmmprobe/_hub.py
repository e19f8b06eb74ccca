"""Whether the Hugging Face Hub can be reached now, known without waiting.

The hub client retries a refused or silent connection for minutes before it fails. Data
loading (benchmarks by name) and the ``hf`` model backend ask here first: an offline switch is
set, or the Hub's host does not accept a TCP connection within `PROBE_TIMEOUT` seconds, and
they then read their local copies alone or say which command fetches one. `read_from_cache`
joins the probe to the cache for one checkpoint (the ``hf`` backend's weights, the diffusion
renderer's pipeline): read the cache alone, or refuse at once with the command that fetches it.
This module imports nothing of lmmprobe's (and huggingface_hub only when it is installed), so
every layer may use it.
"""

from __future__ import annotations

import importlib
import os
import shlex
import socket
from collections.abc import Sequence
from urllib.parse import urlparse

__all__ = ["PROBE_TIMEOUT", "NotCached", "fetch_command", "hub_offline", "read_from_cache"]

PROBE_TIMEOUT = 3.0
"""Seconds to wait for the Hub's host to accept a connection before calling it unreachable."""
_TRUE = frozenset({"1", "true", "yes", "on"})


def hub_offline(switches: Sequence[str] = ("HF_HUB_OFFLINE",)) -> str | None:
    """Why the Hub cannot be reached right now, or None when it can.

    Never waits long: the offline `switches` (environment variables; data loading adds
    ``HF_DATASETS_OFFLINE``, the model backend ``TRANSFORMERS_OFFLINE``) are read first, then
    huggingface_hub's own offline mode, then one TCP connection to the Hub's host
    (``HF_ENDPOINT``, else huggingface.co) is tried for at most `PROBE_TIMEOUT` seconds.

    Args:
        switches: Environment variables that, set to a true value, mean offline.

    Returns:
        A reason to show ("HF_HUB_OFFLINE is set", "cannot connect to host:443: ..."), or None.

    """
    for name in switches:
        if os.environ.get(name, "").strip().lower() in _TRUE:
            return f"{name} is set"
    try:
        constants = importlib.import_module("huggingface_hub.constants")
    except ModuleNotFoundError:
        return "huggingface_hub is not installed (pip install 'lmmprobe[datasets]')"
    if constants.HF_HUB_OFFLINE:
        return "huggingface_hub is in offline mode"
    url = urlparse(os.environ.get("HF_ENDPOINT") or constants.ENDPOINT)
    host = url.hostname or "huggingface.co"
    port = url.port or (80 if url.scheme == "http" else 443)
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT):
            return None
    except OSError as exc:
        return f"cannot connect to {host}:{port}: {exc}"


def fetch_command(repo_id: str, revision: str | None = None) -> tuple[str, str]:
    """The shell command that downloads a hub checkpoint to a folder, and that folder.

    Returns:
        ``(command, folder)``: the command shell-quoted, to paste as it is; the folder then
        loads the copy without the network.

    """
    folder = f"./checkpoints/{repo_id.rstrip('/').rsplit('/', 1)[-1]}"
    args = ["hf", "download", repo_id]
    if revision:
        args += ["--revision", revision]
    args += ["--local-dir", folder]
    return shlex.join(args), folder


class NotCached(ValueError):
    """A hub checkpoint is not in the Hugging Face cache and the Hub cannot be reached.

    Attributes:
        repo_id: The hub id asked for.
        revision: The revision asked for, or None.
        why: Why the Hub cannot be reached (`hub_offline`'s reason).
        command: The shell command that fetches it (`fetch_command`).
        folder: The folder that command writes.

    """

    def __init__(self, repo_id: str, revision: str | None, why: str) -> None:
        self.repo_id, self.revision, self.why = repo_id, revision, why
        self.command, self.folder = fetch_command(repo_id, revision)
        at = f" at revision {revision}" if revision else ""
        super().__init__(
            f"{repo_id}{at} is not in the Hugging Face cache and the Hub cannot be reached ({why})"
        )


def read_from_cache(
    repo_id: str,
    filename: str,
    *,
    revision: str | None = None,
    switches: Sequence[str] = ("HF_HUB_OFFLINE",),
) -> bool:
    """Whether a hub checkpoint must be read from the local cache alone, known without waiting.

    Args:
        repo_id: The hub id (``ORG/NAME``).
        filename: A file every copy of the checkpoint holds (``config.json``,
            ``model_index.json``): its presence in the cache stands for the checkpoint's.
        revision: The revision asked for (None: the default branch).
        switches: Offline switches, as `hub_offline` reads them.

    Returns:
        True when the Hub cannot be reached and `filename` is cached (load with
        ``local_files_only``); False when the Hub can be reached.

    Raises:
        NotCached: The Hub cannot be reached and the checkpoint is not cached; raised at once,
            instead of the hub client's minutes of retries.
        ValueError: `repo_id` is no valid hub id (huggingface_hub's ``HFValidationError``).

    """
    why = hub_offline(switches)
    if why is None:
        return False
    hub = importlib.import_module("huggingface_hub")
    cached = hub.try_to_load_from_cache(repo_id, filename, revision=revision)
    if isinstance(cached, str):
        return True
    raise NotCached(repo_id, revision, why)
