"""A stored run's score rows as `RowChunk`s: the columns run metrics reduce, read in chunks.

`read_chunks` reads one model's rows of one run with one query over the ``scores`` table
(token counts joined from ``responses``, whether verdicts exist from ``judgements``), in the
order `lmmprobe.store.Store.iter_score_rows` gives them, a few thousand at a time: nothing
holds the run. `StoredRows` is the `lmmprobe.schema.rows.RowSource` over it.

A chunk holding answers the rules could not read that carry verdicts reads those answers'
judges' verdicts with one more query (`_judge_correct`), keyed by the chunk's own sample ids:
the judges' reading of each (`RowChunk.judge_correct`), as its `Score.judgements` give it. A
run no judge touched makes no such query.

Each column is read as `lmmprobe.store.sqlite.score_from_row` would set the Score's field:
flags as bools, ``correct`` as None/True/False, the gold as a choice index when its JSON is
not a list (a stored gold is an int or a list of references), metadata decoded by Python's
own JSON reader (so values such as NaN or ``1.0`` read exactly as a Score's metadata holds
them). A row that stores none of its own metadata (`lmmprobe.store.layout.metadata_part`)
reads its sample's, decoded once for the sample's consecutive rows and shared by them (the
chunk's values are only read).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from lmmprobe.schema import Judgement, Score
from lmmprobe.schema import rows as schema_rows
from lmmprobe.schema.judgement import judges_verdict
from lmmprobe.schema.rows import ABSENT, FACT_KEYS, RowChunk, judge_decides
from lmmprobe.schema.text import stored_json
from lmmprobe.store.errors import StoreDamagedError
from lmmprobe.store.layout import metadata_whole

__all__ = ["StoredRows", "read_chunks"]

_QUERY = """
SELECT s.model, s.sample_id, s.repeat, s.key, s.stage, s.correct, s.format_hit,
       substr(s.gold, 1, 1) <> '[', s.gold_text, s.abstain_offered, s.abstained, s.error_type,
       r.prompt_tokens, r.completion_tokens, r.reasoning_tokens,
       EXISTS (SELECT 1 FROM judgements j WHERE j.run_id = s.run_id AND j.model = s.model
               AND j.sample_id = s.sample_id AND j.repeat = s.repeat),
       s.metadata,
       CASE WHEN substr(s.metadata, 1, 1) = '{' THEN NULL
            ELSE (SELECT sm.row_metadata FROM samples sm
                  WHERE sm.run_id = s.run_id AND sm.sample_id = s.sample_id) END
FROM scores s LEFT JOIN responses r ON r.key = s.key
WHERE s.run_id = ? AND s.model = ?
ORDER BY s.model, s.sample_id, s.repeat
"""


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


class _Decoded:
    """Rows' metadata decoded, the last shared text's decoding kept for the rows after it."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.value: dict[str, Any] = {}

    def __call__(self, part: str, shared: str | None) -> dict[str, Any]:
        if part != "" or shared is None:
            try:
                whole = metadata_whole(shared, part)
            except ValueError as exc:
                raise StoreDamagedError(f"{exc} (damaged, or edited by hand)") from exc
            value: dict[str, Any] = _metadata(whole)
            return value
        if shared != self.text:
            self.text, self.value = shared, _metadata(shared)
        return self.value


def _metadata(text: str) -> dict[str, Any]:
    """A score row's metadata decoded (the 100-level rule, no infinite number), else refused."""
    try:
        value = stored_json(text)
    except ValueError as exc:
        raise StoreDamagedError(
            f"a score row's metadata does not hold JSON as lmmprobe writes it (damaged, or "
            f"edited by hand: {exc}); re-run the run, or pass another --db"
        ) from None
    if not isinstance(value, dict):
        raise StoreDamagedError(
            "a score row's metadata does not hold a JSON object (damaged, or edited by hand); "
            "re-run the run, or pass another --db"
        )
    return value


_VERDICTS = """
SELECT sample_id, repeat, judge, protocol, version, attempt, value, reading IS NOT NULL
FROM judgements
WHERE run_id = ? AND model = ? AND decided_by = 'judge' AND sample_id IN ({marks})
"""

_IDS_PER_QUERY = 4000
"""Sample ids one verdict query names (SQLite's older builds take at most 32,766 parameters)."""


def _judge_correct(
    conn: sqlite3.Connection, run_id: str, model: str, chunk: RowChunk
) -> list[bool | None]:
    """`RowChunk.judge_correct` of a chunk read from the store: its judges' stored verdicts.

    Read only for the rows whose judges' verdict is their headline verdict
    (`lmmprobe.schema.rows.judge_decides`) and that carry verdicts; the rest get None. The
    verdicts are those `Score.judgements` holds (the judges' own, ``decided_by = 'judge'``),
    each with its judge, value and whether it is a reading.
    """
    out: list[bool | None] = [None] * len(chunk)
    if not any(chunk.judged):
        return out  # no verdict in the chunk (every chunk of a run no judge touched)
    at = [
        i
        for i, (judged, stage, correct, error) in enumerate(
            zip(chunk.judged, chunk.stage, chunk.correct, chunk.error_type, strict=True)
        )
        if judged and judge_decides(stage, correct, error)
    ]
    if not at:
        return out
    ids = list(dict.fromkeys(chunk.sample_id[i] for i in at))
    found: dict[tuple[str, int], list[Judgement]] = {}
    for start in range(0, len(ids), _IDS_PER_QUERY):
        part = ids[start : start + _IDS_PER_QUERY]
        query = _VERDICTS.format(marks=",".join("?" * len(part)))
        for sid, repeat, judge, protocol, version, attempt, value, read in conn.execute(
            query, (run_id, model, *part)
        ):
            # Whether the verdict is a reading is all `judges_verdict` asks of its text, so
            # the text itself (up to the store's cap) is never read here.
            found.setdefault((sid, int(repeat)), []).append(
                Judgement(
                    judge=judge or None, protocol=protocol, version=version, attempt=attempt,
                    decided_by="judge", value=value, reading="" if read else None,
                )
            )  # fmt: skip
    for i in at:
        verdicts = found.get((chunk.sample_id[i], chunk.repeat[i]))
        if verdicts:
            out[i] = judges_verdict(verdicts)
    return out


def _chunk(rows: list[tuple[Any, ...]], keys: Sequence[str], decode: _Decoded) -> RowChunk:
    (model, sid, repeat, key, stage, correct, hit, choice, gold_text, offered, abstained,
     error, pt, ct, rt, judged, metadata, shared) = (list(c) for c in zip(*rows, strict=True))  # fmt: skip
    decoded = list(map(decode, metadata, shared))
    return RowChunk(
        model=model,
        sample_id=sid,
        repeat=repeat,
        key=key,
        stage=stage,
        correct=[_flag(v) for v in correct],
        format_hit=[bool(v) for v in hit],
        choice=[bool(v) for v in choice],
        gold_text=gold_text,
        abstain_offered=[bool(v) for v in offered],
        abstained=[bool(v) for v in abstained],
        error_type=error,
        prompt_tokens=pt,
        completion_tokens=ct,
        reasoning_tokens=rt,
        judged=[bool(v) for v in judged],
        meta={k: [m.get(k, ABSENT) for m in decoded] for k in dict.fromkeys([*FACT_KEYS, *keys])},
    )


def read_chunks(
    conn: sqlite3.Connection,
    run_id: str,
    model: str,
    keys: Sequence[str] = (),
    chunk_rows: int | None = None,
) -> Iterator[RowChunk]:
    """Model `model`'s rows of run `run_id`, `chunk_rows` at a time, in stored row order.

    Args:
        conn: The store's connection.
        run_id: The run.
        model: The model spec the rows were scored for.
        keys: Metadata keys each chunk carries besides `FACT_KEYS` (``--by`` keys).
        chunk_rows: Rows per chunk; when None, `lmmprobe.schema.rows.CHUNK_ROWS` as it is at
            the call (read then, so that a test can make a small file span several chunks).

    """
    size = chunk_rows or schema_rows.CHUNK_ROWS
    cur = conn.execute(_QUERY, (run_id, model))
    decode = _Decoded()
    try:
        while rows := cur.fetchmany(size):
            chunk = _chunk(rows, keys, decode)
            chunk.judge_correct = _judge_correct(conn, run_id, model, chunk)
            yield chunk
    finally:
        cur.close()


class _RowStore(Protocol):
    def row_chunks(
        self, run_id: str, model: str, keys: Sequence[str] = ()
    ) -> Iterator[RowChunk]: ...

    def model_scores(self, run_id: str, model: str) -> list[Score]: ...

    def iter_model_scores(self, run_id: str, model: str) -> Iterator[Score]: ...


class StoredRows:
    """The `RowSource` of one model's rows of a stored run."""

    by_sample = True
    """Rows come in sample-id order (`read_chunks` orders them so): the reductions over them
    keep no id per sample (`lmmprobe.metrics.reduction.BySample`)."""

    def __init__(self, store: _RowStore, run_id: str, model: str) -> None:
        """Rows of `model` in run `run_id` of `store` (read on each pass, never held)."""
        self.store = store
        self.run_id = run_id
        self.model = model

    def chunks(self, keys: Sequence[str] = ()) -> Iterator[RowChunk]:
        """The rows in chunks (`read_chunks`)."""
        return self.store.row_chunks(self.run_id, self.model, keys)

    def scores(self) -> list[Score]:
        """Every row as a `Score`, as `Store.iter_score_rows` and `score_from_row` build it."""
        return self.store.model_scores(self.run_id, self.model)

    def iter_scores(self) -> Iterator[Score]:
        """The rows as Scores one at a time, in the same order (nothing holds them all)."""
        return self.store.iter_model_scores(self.run_id, self.model)
