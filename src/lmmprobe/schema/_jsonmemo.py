"""JSON text of metadata dicts, remembered for the flat dicts of strings that repeat in a run.

Metadata such as ``{"task": ..., "subtask": ...}`` takes few distinct values across a data set,
yet the runner writes it for every sample (fingerprints) and every score (the store).
"""

from __future__ import annotations

import json
from typing import Any


class MetadataJSON:
    """``encoder.encode(metadata)``, remembered for flat dicts whose keys and values are strings.

    Only such dicts are remembered: equal memo keys then always encode equally (unlike ``1``,
    ``1.0`` and ``True``, which compare equal but encode apart).

    Args:
        encoder: The encoder that writes the text (e.g. with ``sort_keys`` or ``default``).
        limit: Distinct dicts remembered before the memo starts afresh.

    """

    def __init__(self, encoder: json.JSONEncoder, limit: int = 4096) -> None:
        self._encode = encoder.encode
        self._limit = limit
        self._memo: dict[tuple[Any, ...], str] = {}

    def __call__(self, metadata: dict[str, Any]) -> str:
        """The JSON text of `metadata`."""
        # The keys then the values: a flat tuple is quicker to build and hash than one of
        # pairs, and still tells dicts apart (its length gives the number of keys).
        flat = (*metadata, *metadata.values())
        try:
            known = self._memo.get(flat)
        except TypeError:  # an unhashable value (list, dict): not a flat dict of strings
            return self._encode(metadata)
        if known is None:
            text = self._encode(metadata)
            if any(type(item) is not str for item in flat):
                return text
            if len(self._memo) >= self._limit:
                self._memo.clear()
            known = self._memo[flat] = text
        # A hit needs no type check: only strings (and str subclasses, which encode as the
        # same text) compare equal to the all-string tuples remembered.
        return known
