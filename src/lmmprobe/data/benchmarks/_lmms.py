"""What the standard benchmark definitions share: lmms-eval citations, fetch commands, text fields.

The definitions in `standard_choice` and `standard_open` cite lmms-eval's task files at one
commit and fetch their data with the same ``huggingface-cli`` command, so both build them here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks.base import RowError

LMMS_EVAL = "EvolvingLMMs-Lab/lmms-eval"
LMMS_EVAL_COMMIT = "75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3"
_FETCH = (
    "huggingface-cli download {hub} --repo-type dataset{rev}{include} "
    "--local-dir $LMMPROBE_DATA_DIR/{name}"
)


def lmms_source(path: str) -> str:
    """Where a prompt or reader comes from: ``lmms-eval lmms_eval/tasks/PATH @ COMMIT``."""
    return f"{LMMS_EVAL} lmms_eval/tasks/{path} @ {LMMS_EVAL_COMMIT}"


def hub_fetch(name: str, hub: str, revision: str | None, include: str = "") -> str:
    """The command that downloads benchmark `name` from dataset repo `hub` into the data dir.

    Args:
        name: The benchmark's name (its folder under ``$LMMPROBE_DATA_DIR``).
        hub: The dataset repository.
        revision: The pinned commit, or None where none is known.
        include: A file pattern to download only part of the repository (quoted for the shell;
            the loader reads it back to fetch the same files).

    """
    rev = f" --revision {revision}" if revision else ""
    inc = f" --include '{include}'" if include else ""
    return _FETCH.format(hub=hub, rev=rev, include=inc, name=name)


def required_text(row: Mapping[str, Any], field: str) -> str:
    """The row's `field` as non-empty text.

    Raises:
        RowError: The field holds anything else (naming the field and the value).

    """
    value = row[field]
    if not isinstance(value, str) or not value.strip():
        raise RowError(field, f"expected non-empty text, got {value!r}")
    return value
