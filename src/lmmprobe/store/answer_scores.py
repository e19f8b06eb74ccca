"""Per-answer scores kept in the SQLite store (table ``answer_scores``, store schema 6).

A row holds one value of a score that depends only on an answer, its reference and the scoring
definition: the metric's name and version, the identity of the model computing it (a checkpoint
fingerprint) and a hash of the (answer, reference) pair. Anything else about a run (the model
that answered, the run, the response's key) does not change the value, so the same answer
scored in another run, or by another model's run, is read back rather than computed again.
`lmmprobe.metrics.answer_cache` decides what to compute; this is where the values live.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Mapping, Sequence

from lmmprobe._secrets import redact_spec
from lmmprobe.store.errors import StoreAccessError
from lmmprobe.store.sqlite import Store

__all__ = ["AnswerScores"]

log = logging.getLogger(__name__)

# Keys per IN (...) query, under SQLite's oldest limit on bound variables (999).
_CHUNK = 500


class AnswerScores:
    """The ``answer_scores`` table of an open `Store` (an `AnswerScoreStore` of metrics).

    Reading a store without the table (opened read-only before its migration) finds nothing;
    a store that cannot be written now (read-only, locked) keeps computed values out of the
    table with a warning, since they are only a cache: the figures are the same either way.

    Args:
        store: The open store.

    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._warned = False

    def get_answer_scores(
        self, metric: str, version: int, scorer: str, keys: Sequence[str]
    ) -> dict[str, float]:
        """The stored values of `keys` for one scoring definition; keys not stored are left out.

        Raises:
            StoreError: The file is damaged (one line).

        """
        out: dict[str, float] = {}
        scorer = redact_spec(scorer)  # as `put_answer_scores` recorded it
        with self.store._faults("reading stored answer scores"):
            try:
                for start in range(0, len(keys), _CHUNK):
                    chunk = list(keys[start : start + _CHUNK])
                    marks = ",".join("?" * len(chunk))
                    rows = self.store.conn.execute(
                        "SELECT pair, value FROM answer_scores WHERE metric = ? AND version = ? "
                        f"AND scorer = ? AND pair IN ({marks})",
                        (metric, version, scorer, *chunk),
                    )
                    out.update(rows)
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc):
                    raise
                return {}  # a store of schema 5 or older, opened without migrating it
        return out

    def put_answer_scores(
        self, metric: str, version: int, scorer: str, values: Mapping[str, float]
    ) -> None:
        """Keep `values` (by pair key) for one scoring definition, replacing stored ones.

        Raises:
            StoreError: The file is damaged, or the disk failed (one line).

        """
        if not values:
            return
        # The scorer names a model (a spec, a path): recorded with its secrets redacted, as
        # every spec the store holds.
        scorer = redact_spec(scorer)
        now = time.time()
        try:
            with self.store.transaction(doing="storing answer scores") as c:
                c.executemany(
                    "INSERT OR REPLACE INTO answer_scores VALUES (?, ?, ?, ?, ?, ?)",
                    [(metric, version, scorer, k, float(v), now) for k, v in values.items()],
                )
        except StoreAccessError as exc:
            if exc.reason not in ("read_only", "locked"):
                raise
            if not self._warned:  # once per store: each chunk of scores would say it again
                log.warning("computed answer scores are not kept: %s", exc)
                self._warned = True
