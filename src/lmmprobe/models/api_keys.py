"""API keys for OpenAI-compatible servers, shared by the model backend and APEx's orchestrator.

Kept apart from `openai_api` so that a caller can resolve a key without importing the openai
client.
"""

from __future__ import annotations

import os

LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]", "0.0.0.0")
"""Hosts of local servers (vLLM, SGLang, Ollama), which accept any key."""


def resolve_api_key(key_env: str, base_url: str | None, *, what: str = "") -> str:
    """The key in the environment variable `key_env`, or "EMPTY" for a local server.

    Args:
        key_env: The environment variable holding the key.
        base_url: The server's URL; None means the hosted API.
        what: Who needs the key, for the message (e.g. "the orchestrator").

    Raises:
        ValueError: No key is set and the server is not local; the message names the variable
            (never a key).

    """
    key = os.environ.get(key_env)
    if key:
        return key
    if base_url is not None and any(host in base_url for host in LOCAL_HOSTS):
        return "EMPTY"
    whose = f" for {what}" if what else ""
    raise ValueError(
        f"no API key{whose}: set the environment variable {key_env} "
        "(or name another with key_env=VAR)"
    )
