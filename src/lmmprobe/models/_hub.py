"""What the ``hf`` backend checks before transformers is asked for a checkpoint.

A hub id (``hf:ORG/NAME``) that is not in the Hugging Face cache, asked for while the Hub cannot
be reached, used to cost minutes of the hub client's retries (five per file, several files)
before failing. Offline is known without waiting, by the probe data loading uses too
(`lmmprobe._hub.hub_offline`): an offline switch is set, or the Hub's host does not accept a
TCP connection within a few seconds. Then a cached checkpoint is read from the cache alone, and a missing one is refused
at once with the command that fetches it.

A ``device`` the machine does not have is refused here too, before any request is sent,
instead of failing every request once the weights are first needed.
"""

from __future__ import annotations

import torch
from huggingface_hub.errors import HFValidationError

from lmmprobe._hub import NotCached, fetch_command, read_from_cache
from lmmprobe._hub import hub_offline as _probe_hub

__all__ = ["cache_only", "check_device", "fetch_command", "hub_offline"]


def hub_offline() -> str | None:
    """Why the Hub cannot be reached right now, or None when it can (`lmmprobe._hub`)."""
    return _probe_hub(("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def cache_only(repo_id: str, revision: str | None = None) -> bool:
    """Whether a hub checkpoint must be read from the local cache alone.

    True when the Hub cannot be reached and the checkpoint's config is in the cache: the
    caller then loads with ``local_files_only`` instead of letting the hub client retry.
    False when the Hub can be reached.

    Raises:
        ValueError: The Hub cannot be reached and the checkpoint is not cached (the message
            gives the command that fetches it), or `repo_id` is no valid hub id.

    """
    try:
        return read_from_cache(
            repo_id,
            "config.json",
            revision=revision,
            switches=("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"),
        )
    except HFValidationError as exc:
        raise ValueError(
            f"hf:{repo_id} is neither a local folder nor a hub id (ORG/NAME): {exc}"
        ) from exc
    except NotCached as exc:
        # The command ends the line, so it can be copied from "with: " to the end as it is.
        raise ValueError(
            f"hf:{exc}; fetch it to {exc.folder} (then use -m hf:{exc.folder}) where the Hub "
            f"is reachable, with: {exc.command}"
        ) from None


def check_device(device: str) -> None:
    """Refuse a ``device`` option this machine does not have.

    Raises:
        ValueError: ``cuda`` or ``cuda:N`` without CUDA, or ``cuda:N`` past the last GPU, in
            one line naming the option and the devices there are.

    """
    if not device.startswith("cuda"):
        return
    if not torch.cuda.is_available():
        build = "built without CUDA" if torch.version.cuda is None else "no CUDA device visible"
        raise ValueError(
            f"hf backend: device={device} needs CUDA, and this machine has none (torch "
            f"{torch.__version__}, {build}); available: device=cpu (or device=auto)"
        )
    count = torch.cuda.device_count()
    index = torch.device(device).index
    if index is not None and index >= count:
        gpus = "cuda:0" if count == 1 else f"cuda:0 to cuda:{count - 1}"
        raise ValueError(
            f"hf backend: device={device}, but this machine has {count} CUDA device(s); "
            f"available: device=cpu, cuda, {gpus} (or auto)"
        )
