"""What the standard benchmark definitions share: lmms-eval citations and text fields.

The definitions in ``standard/`` cite lmms-eval's task files at one commit, so they build
their citations here. (Their fetch commands come from each definition's
hub id, revision and ``include`` patterns: see `lmmprobe.data.benchmarks._fetch`.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks.base import RowError

LMMS_EVAL = "EvolvingLMMs-Lab/lmms-eval"
LMMS_EVAL_COMMIT = "75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3"


def lmms_source(path: str) -> str:
    """Where a prompt or reader comes from: ``lmms-eval lmms_eval/tasks/PATH @ COMMIT``."""
    return f"{LMMS_EVAL} lmms_eval/tasks/{path} @ {LMMS_EVAL_COMMIT}"


def required_text(row: Mapping[str, Any], field: str) -> str:
    """The row's `field` as non-empty text.

    Raises:
        RowError: The field holds anything else (naming the field and the value).

    """
    value = row[field]
    if not isinstance(value, str) or not value.strip():
        raise RowError(field, f"expected non-empty text, got {value!r}")
    return value
