"""What the web app reads of judges' verdicts: per answer, per run, and the browser's filters.

The verdicts live in the ``judgements`` table (schema 9, one row per answer, judge, protocol,
version and attempt); a judge's own prompt and reply are a response like any other, under the
verdict's ``key``. A store older than schema 9 opened read-only has no such table: every
reader here then finds no judge and no verdict instead of failing.

The sample browser's judge filters (`judge_clauses`), as SQL conditions on a scores row ``s``:

- ``judged by J``: judge J gave a verdict (``decided_by = 'judge'``) on the answer;
- ``unjudged``: some judge was asked about the answer and could not decide it (its call
  failed or its reply could not be read), whatever other judges did;
- ``judges disagree``: two judges (of one protocol and version) rated the answer differently:
  each judge's rating is its reading (an option mark, an extraction) where it read one, else
  the mean of its grades over its attempts (rounded to 6 decimals).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Literal

from lmmprobe.schema.text import stored_json
from lmmprobe.store.layout import shown_capped

__all__ = [
    "JUDGE_FILTERS",
    "JudgeFilter",
    "JudgeVerdict",
    "has_judgements",
    "judge_clauses",
    "run_judges",
    "sample_verdicts",
]

JudgeFilter = Literal["unjudged", "disagree"]
JUDGE_FILTERS: tuple[JudgeFilter, ...] = ("unjudged", "disagree")
"""The browser's judgement filters besides "judged by"."""

_SAME_ROW = (
    "j.run_id = s.run_id AND j.model = s.model AND j.sample_id = s.sample_id "
    "AND j.repeat = s.repeat"
)


def has_judgements(conn: sqlite3.Connection) -> bool:
    """Whether the store has the ``judgements`` table (schema 9 or later)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'judgements'"
    ).fetchone()
    return row is not None


def run_judges(conn: sqlite3.Connection, run_id: str) -> list[str]:
    """The judges (specs as given) that judged answers of a run, sorted; rules left out."""
    if not has_judgements(conn):
        return []
    rows = conn.execute(
        "SELECT DISTINCT judge FROM judgements WHERE run_id = ? AND judge != '' ORDER BY judge",
        (run_id,),
    )
    return [r[0] for r in rows]


def judge_clauses(judge: str | None, judgement: JudgeFilter | None) -> tuple[list[str], list[Any]]:
    """SQL conditions (on scores row ``s``) and their arguments for the judge filters.

    Args:
        judge: Only answers this judge gave a verdict on.
        judgement: ``unjudged`` or ``disagree`` (module docstring).

    Returns:
        The conditions, to be joined by AND with the browser's others, and their arguments.

    """
    clauses: list[str] = []
    args: list[Any] = []
    if judge:
        clauses.append(
            f"EXISTS (SELECT 1 FROM judgements j WHERE {_SAME_ROW} AND j.judge = ? "
            "AND j.decided_by = 'judge')"
        )
        args.append(judge)
    if judgement == "unjudged":
        clauses.append(
            f"EXISTS (SELECT 1 FROM judgements j WHERE {_SAME_ROW} AND j.decided_by = 'unjudged')"
        )
    elif judgement == "disagree":
        # One rating per judge (reading, else the mean grade), compared within a protocol.
        clauses.append(
            "EXISTS (SELECT 1 FROM (SELECT j.protocol, j.version, j.judge, "
            "COALESCE(MAX(j.reading), printf('%.6f', AVG(j.value))) AS rating "
            f"FROM judgements j WHERE {_SAME_ROW} AND j.decided_by = 'judge' "
            "GROUP BY j.protocol, j.version, j.judge) GROUP BY protocol, version "
            "HAVING COUNT(DISTINCT rating) > 1)"
        )
    return clauses, args


@dataclass
class JudgeVerdict:
    """One judge's (or rule's) verdict on an answer, with the judge's prompt and reply.

    Attributes:
        judge: The judge's spec as given; None where a rule decided.
        protocol: The judge protocol's name.
        version: The protocol's version.
        attempt: The repeat of a protocol that asks several times.
        decided_by: ``rule``, ``judge`` or ``unjudged``.
        value: The numeric verdict (1/0, a grade), if any.
        reading: The answer the judge read, if any.
        detail: Protocol-specific figures.
        reason: Why the answer is unjudged.
        key: Store key of the judge's response.
        prompt: The judge prompt's final user message, as sent (None: not stored).
        reply: The judge's reply (None: none stored, or the call failed).
        error: ``TYPE: message`` of a failed judge call.

    """

    judge: str | None
    protocol: str
    version: str
    attempt: int
    decided_by: str
    value: float | None
    reading: str | None
    detail: dict[str, Any]
    reason: str | None
    key: str | None
    prompt: str | None
    reply: str | None
    error: str | None


def sample_verdicts(
    conn: sqlite3.Connection, run_id: str, sample_id: str
) -> dict[tuple[str, int], list[JudgeVerdict]]:
    """Every verdict on one sample's answers, by (model, repeat), rules first, then judges.

    The free texts (the judge's reading, reason, reply and error message) past what lmmprobe
    stores are measured in SQL, never read: a marker naming the length is shown in their place
    (`lmmprobe.store.layout.shown_capped`).
    """
    if not has_judgements(conn):
        return {}
    rows = conn.execute(
        f"""SELECT j.model, j.repeat, j.judge, j.protocol, j.version, j.attempt, j.decided_by,
                  j.value, {shown_capped("j.reading")}, j.detail, {shown_capped("j.reason")},
                  j.key, r.prompt, {shown_capped("r.text")}, r.error_type,
                  {shown_capped("r.error_message")}
           FROM judgements j LEFT JOIN responses r ON r.key = j.key
           WHERE j.run_id = ? AND j.sample_id = ?
           ORDER BY j.model, j.repeat, j.protocol, j.version, j.judge, j.attempt""",
        (run_id, sample_id),
    ).fetchall()
    out: dict[tuple[str, int], list[JudgeVerdict]] = {}
    for model, repeat, judge, protocol, version, attempt, by, value, reading, *rest in rows:
        detail, reason, key, prompt, reply, error_type, error_message = rest
        try:
            details = stored_json(detail) if detail else {}
        except ValueError:
            details = {}
        out.setdefault((model, int(repeat)), []).append(
            JudgeVerdict(
                judge=judge or None,
                protocol=protocol,
                version=version,
                attempt=int(attempt),
                decided_by=by,
                value=value,
                reading=reading,
                detail=details if isinstance(details, dict) else {},
                reason=reason,
                key=key,
                prompt=prompt,
                reply=reply,
                error=f"{error_type}: {error_message or ''}" if error_type else None,
            )
        )
    return out
