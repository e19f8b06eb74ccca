"""Whether the Hugging Face Hub can be reached now, known without waiting.

The hub client retries a refused or silent connection for minutes before it fails. Data
loading (benchmarks by name) and the ``hf`` model backend ask here first: an offline switch is
set, or the Hub's host does not accept a TCP connection within `PROBE_TIMEOUT` seconds, and
they then read their local copies alone or say which command fetches one. This module imports
nothing of lmmprobe's (and huggingface_hub only when it is installed), so every layer may use
it.
"""

from __future__ import annotations

import importlib
import os
import socket
from collections.abc import Sequence
from urllib.parse import urlparse

__all__ = ["PROBE_TIMEOUT", "hub_offline"]

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
