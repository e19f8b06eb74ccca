"""How far a run's judges agree with each other and with the rules, per model.

Over the answers a judge protocol applies to, each judge's rating of an answer is its
reading where the protocol reads one (an option mark, ``correct``/``incorrect``) and its grade
otherwise (the mean of its repeats). The figures (our definitions, docs/judges.md):

- ``percent``: share of answers all judges rated alike (answers every judge rated);
- ``cohen_kappa`` (two judges) or ``fleiss_kappa`` (three or more) on the ratings as
  categories, where the protocol reads a category;
- ``krippendorff_alpha`` (interval level) over every judge's grade, where the protocol grades
  on a scale (answers some judge left unjudged count as missing);
- ``with_rules``: per judge, its agreement with the rules' reading on the answers both read
  (``--judge-when always`` on single-choice data): ``percent`` and ``cohen_kappa``.

The statistics are `lmmprobe.metrics.agreement`'s. A figure that cannot be computed (fewer than
two answers, no answer two judges graded) is left out.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from lmmprobe.judge.protocol import Reading
from lmmprobe.metrics.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha
from lmmprobe.schema import Judgement, Score

__all__ = ["AgreementRow", "agreement_figures", "agreement_rows", "figures_of", "ratings"]

log = logging.getLogger(__name__)


_STATS: dict[str, Callable[..., float]] = {
    "cohen_kappa": cohen_kappa,
    "fleiss_kappa": fleiss_kappa,
    "krippendorff_alpha": krippendorff_alpha,
}


def _call(name: str, *args: Any, **kwargs: Any) -> float | None:
    # A statistic that cannot be computed on these ratings (too few items) is left out.
    try:
        value = float(_STATS[name](*args, **kwargs))
    except ValueError as exc:
        log.debug("%s not computed: %s", name, exc)
        return None
    except ImportError as exc:  # Krippendorff's alpha needs the `krippendorff` package
        log.warning("%s left out: %s", name, exc)
        return None
    return value if math.isfinite(value) else None


def ratings(judgements: Sequence[Judgement], judge: str) -> Hashable | float | None:
    """One judge's rating of one answer: its reading (first readable repeat), else its grade.

    A reading is a nominal label (an option letter, an extraction, a correctness mark) and is
    compared as such, even where its verdict also carries the protocol's 1.0/0.0.
    """
    mine = [j for j in judgements if j.judge == judge and j.decided_by == "judge"]
    if not mine:
        return None
    readings = [j.reading for j in sorted(mine, key=lambda j: j.attempt) if j.reading is not None]
    if readings:
        return readings[0]
    values = [j.value for j in mine if j.value is not None]
    return sum(values) / len(values) if values else None


def _graded(rows: Sequence[Sequence[Any]]) -> bool:
    # A scale: numeric ratings (readings are texts).
    return any(isinstance(v, float) for row in rows for v in row if v is not None)


AgreementRow = tuple[tuple[Hashable | float | None, ...], Hashable | None]
"""One judged answer as the figures read it: each judge's rating (judges in order), and the
rules' reading of it (None where the rules read none)."""


def agreement_rows(
    scores: Sequence[Score], judges: Sequence[str], rules: Mapping[tuple[str, int], Reading]
) -> list[AgreementRow]:
    """What the figures read of each of `scores` (`AgreementRow`), without the Scores.

    The judging step works through a run in chunks and keeps these rows alone.
    """
    out: list[AgreementRow] = []
    for s in scores:
        rule = rules.get((s.sample_id, s.repeat))
        reading = rule.reading if rule is not None else None
        out.append((tuple(ratings(s.judgements, j) for j in judges), reading))
    return out


def agreement_figures(
    scores: Sequence[Score], judges: Sequence[str], rules: Mapping[tuple[str, int], Reading]
) -> dict[str, Any]:
    """The agreement figures of one model's judged answers (module docstring).

    Args:
        scores: The answers a protocol applies to, with their judgements.
        judges: The judge specs, in order.
        rules: (sample id, repeat) → the rules' reading, where the rules read the answer.

    Returns:
        The figures, only those that apply (empty with one judge and no rule readings).

    """
    return figures_of(agreement_rows(scores, judges, rules), judges)


def figures_of(rows: Sequence[AgreementRow], judges: Sequence[str]) -> dict[str, Any]:
    """The agreement figures of one model's judged answers, from their `agreement_rows`."""
    out: dict[str, Any] = {}
    table = [list(r) for r, _ in rows]
    if len(judges) >= 2 and table:
        full = [row for row in table if all(v is not None for v in row)]
        out["items"] = len(full)
        if full:
            out["percent"] = sum(1 for row in full if len(set(row)) == 1) / len(full)
        if _graded(table):
            by_rater = [[_num(row[i]) for row in table] for i in range(len(judges))]
            alpha = _call("krippendorff_alpha", by_rater, level="interval")
            if alpha is not None:
                out["krippendorff_alpha"] = alpha
        elif len(full) >= 2:
            if len(judges) == 2:
                kappa = _call("cohen_kappa", [r[0] for r in full], [r[1] for r in full])
                if kappa is not None:
                    out["cohen_kappa"] = kappa
            else:
                fleiss = _call("fleiss_kappa", full)
                if fleiss is not None:
                    out["fleiss_kappa"] = fleiss
    with_rules: dict[str, dict[str, float | int]] = {}
    for i, judge in enumerate(judges):
        pairs = [
            (reading, row[i]) for row, reading in rows if reading is not None and row[i] is not None
        ]
        if not pairs:
            continue
        figures: dict[str, float | int] = {
            "items": len(pairs),
            "percent": sum(1 for a, b in pairs if a == b) / len(pairs),
        }
        kappa = _call("cohen_kappa", [a for a, _ in pairs], [b for _, b in pairs])
        if kappa is not None:
            figures["cohen_kappa"] = kappa
        with_rules[judge] = figures
    if with_rules:
        out["with_rules"] = with_rules
    return out


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
