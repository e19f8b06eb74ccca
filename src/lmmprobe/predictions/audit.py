"""Why two figures for the same answers differ: every differing item, with its cause.

An audit pairs two sides' verdicts on the same items (lmmprobe's reading of an imported file
against the other tool's own per-item verdicts; or two runs, lmmprobe's or imported, of one
model on one benchmark) and gives each item where the credit differs exactly one cause, in
this order of precedence:

1. ``gold``: the two sides scored against different gold answers (an older answer key);
2. ``answer``: the model's answer text differs (two runs sampled different outputs);
3. ``circular_group``: a side's verdict is a CircularEval group's, not the item's own (a
   VLMEvalKit CircularEval result table read without its prediction table: ``hit`` on a
   question's first row says whether every circular copy was right);
4. ``random_fallback``: the official code could read nothing and drew a random option (MMMU's
   ``random.choice``, VLMEvalKit's guess after three judge failures); lmmprobe counts it wrong;
5. ``rule_version``: a side's reading was made by an older version of its tool's rules, whose
   latest version reads the answer as the other side does (VLMEvalKit's ``can_infer``, which
   changed on 2025-08-04 and 2026-06-17: a 2024 table read with its own rules);
6. ``judge``: a judge model read the answer on one side, and the readings differ;
7. ``extraction``: the two rule-based readings of the same text differ;
8. ``normalization``: both read the same answer, yet their verdicts differ (how a reading is
   compared with the gold: case, number formats, containment);
9. ``unrecorded``: a side recorded its verdict but not what it read, so extraction and
   normalization cannot be told apart.

Each item's contribution to the gap is ``credit_a - credit_b`` (±1 for right/wrong verdicts,
a fraction for partial credit), so the causes' contributions add up to the headline gap
``sum(credit_a) - sum(credit_b)`` exactly (sums are kept as exact fractions). The sides and the
sign are `lmmprobe compare`'s (A first, the difference A - B), and so are the paired statistics:
a cluster-bootstrap interval of the difference over samples and McNemar's exact test (on
right/wrong verdicts).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal, get_args

from lmmprobe.metrics.paired import LEVEL, difference_interval, mcnemar, natural_key

__all__ = [
    "CAUSES",
    "CAUSE_TEXT",
    "Audit",
    "AuditItem",
    "Cause",
    "CauseCount",
    "LeftOut",
    "Verdict",
    "audit",
    "cause_of",
]

Cause = Literal[
    "gold",
    "answer",
    "circular_group",
    "random_fallback",
    "rule_version",
    "judge",
    "extraction",
    "normalization",
    "unrecorded",
]
CAUSES: tuple[Cause, ...] = get_args(Cause)
"""Every cause, in order of precedence."""

CAUSE_TEXT: Mapping[Cause, str] = {
    "gold": "different gold answer",
    "answer": "different model answer",
    "circular_group": "CircularEval group verdict (the tool's hit is its question's, every copy)",
    "random_fallback": "random fallback (the official code guessed)",
    "rule_version": "rule version (the tool's rules of the version that wrote the file read "
    "the answer otherwise than its rules today)",
    "judge": "judge read the answer differently",
    "extraction": "answer extraction (each side read another answer)",
    "normalization": "normalization (same reading, another verdict)",
    "unrecorded": "reading not recorded (extraction or normalization)",
}
"""What each cause means, as the summary says it."""

_SPACE = re.compile(r"\s+")


def _canon(text: str | None) -> str | None:
    return None if text is None else _SPACE.sub(" ", text).strip().casefold()


def _golds(gold: Sequence[str] | None) -> frozenset[str] | None:
    if gold is None:
        return None
    return frozenset(c for g in gold if (c := _canon(g)) is not None)


@dataclass(frozen=True)
class Verdict:
    """One side's verdict on one item: what it read, against which gold, with what credit."""

    sample_id: str
    credit: float
    """1.0 right, 0.0 wrong, or a partial credit."""
    repeat: int = 0
    raw: str | None = None
    """The model's answer text this side scored (None: not known)."""
    reading: str | None = None
    """What this side read as the answer; None when it read nothing (see `recorded`)."""
    recorded: bool = True
    """False when this side did not record what it read (only its verdict)."""
    gold: tuple[str, ...] | None = None
    """The gold answer(s) this side scored against (None: not known)."""
    judged: bool = False
    """The reading came from a judge model, not from rules."""
    guessed: bool = False
    """This side's verdict rests on a random option the official code drew (nothing was
    readable); on a lmmprobe side (two runs), where the official code would have guessed."""
    row: int | None = None
    """The row of the file this verdict was read from, when imported."""
    group: bool = False
    """This side's credit is a CircularEval group's verdict (every circular copy of the
    question right), not this item's own (a VLMEvalKit CircularEval result table)."""
    rule_version: str | None = None
    """The older version of its tool's rules this side's reading was made with, where the
    latest version reads the answer otherwise (`latest_reading`); None otherwise."""
    latest_reading: str | None = None
    """With `rule_version`: what the tool's latest rules read (None: nothing)."""

    @property
    def key(self) -> tuple[str, int]:
        """What pairs it with the other side's verdict."""
        return (self.sample_id, self.repeat)


def cause_of(a: Verdict, b: Verdict) -> Cause:
    """The cause of a difference between two verdicts on one item (module docstring order)."""
    ga, gb = _golds(a.gold), _golds(b.gold)
    if ga is not None and gb is not None and ga != gb:
        return "gold"
    if a.raw is not None and b.raw is not None and _canon(a.raw) != _canon(b.raw):
        return "answer"
    if a.group or b.group:
        return "circular_group"
    if a.guessed or b.guessed:
        return "random_fallback"
    for old, other in ((a, b), (b, a)):
        # Read with today's rules, this side would have read what the other side did.
        if (
            old.rule_version is not None
            and other.recorded
            and _canon(old.latest_reading) == _canon(other.reading)
        ):
            return "rule_version"
    if not (a.recorded and b.recorded):
        return "judge" if a.judged or b.judged else "unrecorded"
    if _canon(a.reading) != _canon(b.reading):
        return "judge" if a.judged or b.judged else "extraction"
    return "normalization"


@dataclass(frozen=True)
class AuditItem:
    """One item whose credit differs between the two sides."""

    cause: Cause
    a: Verdict
    b: Verdict

    @property
    def delta(self) -> Fraction:
        """Its contribution to the gap: credit A - credit B, exactly."""
        return Fraction(self.a.credit) - Fraction(self.b.credit)


@dataclass(frozen=True)
class CauseCount:
    """How much of the gap one cause explains."""

    items: int
    """Differing items of this cause."""
    b_higher: int
    """Of them, items where side B gave more credit."""
    a_higher: int
    """Of them, items where side A gave more credit."""
    net: Fraction
    """Their summed contribution to the gap (credit A - credit B)."""


@dataclass(frozen=True)
class LeftOut:
    """Items only one side gave a verdict (the other left them unjudged or lacks them)."""

    items: int
    credit: Fraction
    """Their credit on the side that scored them (right answers, or partial credit)."""
    guessed: int
    """Of them, items whose verdict rests on a random option that side's code drew."""


@dataclass(frozen=True)
class Audit:
    """Two sides' verdicts paired item by item, and why they differ (module docstring)."""

    label_a: str
    label_b: str
    n: int
    """Paired items (verdicts on both sides)."""
    samples: int
    """Distinct samples among them (what the bootstrap resamples)."""
    credit_a: Fraction
    credit_b: Fraction
    by_cause: Mapping[Cause, CauseCount]
    """Every cause with at least one item, in order of precedence."""
    items: Sequence[AuditItem]
    """The differing items, in sample order."""
    guessed: int
    """Paired items where the official code guesses (random fallback), whether or not the
    verdicts differ."""
    left_out: Mapping[str, int] = field(default_factory=dict)
    """Items not paired, by reason: ``only_a``, ``only_b`` (one side has no verdict)."""
    left_out_detail: Mapping[str, LeftOut] = field(default_factory=dict)
    """The same items with their credit and random draws on the side that scored them: what
    the paired gap leaves out of the two sides' whole figures."""
    low: float | None = None
    high: float | None = None
    """Paired cluster-bootstrap interval of accuracy A - accuracy B (over samples)."""
    level: float = LEVEL
    n_boot: int = 0
    seed: int = 0
    mcnemar_p: float | None = None
    """Two-sided exact McNemar p-value; None where any credit is partial."""

    @property
    def gap(self) -> Fraction:
        """Credit A - credit B over the paired items: what the causes explain, exactly."""
        return self.credit_a - self.credit_b

    @property
    def accuracy_a(self) -> float | None:
        """Side A's accuracy (mean credit) on the paired items."""
        return float(self.credit_a / self.n) if self.n else None

    @property
    def accuracy_b(self) -> float | None:
        """Side B's accuracy on the paired items."""
        return float(self.credit_b / self.n) if self.n else None

    @property
    def difference(self) -> float | None:
        """Accuracy A - accuracy B (the headline gap as a share), as `lmmprobe compare`'s."""
        return float(self.gap / self.n) if self.n else None

    def summary(self) -> list[str]:
        """The gap and each cause's share of it, one line each, in plain words."""
        if not self.n:
            return [f"no item has a verdict on both sides ({self.label_a}, {self.label_b})"]
        pts = 100 / self.n
        lines = [
            f"{self.label_a} {float(self.credit_a) * pts:.2f} vs {self.label_b} "
            f"{float(self.credit_b) * pts:.2f} on {self.n} paired item{'' if self.n == 1 else 's'}: gap "
            f"{float(self.gap) * pts:+.2f} points ({self.label_a} - {self.label_b}; "
            f"{_num(self.gap)} items)"
        ]
        for cause, c in self.by_cause.items():
            lines.append(
                f"  {CAUSE_TEXT[cause]}: {c.items} item{'' if c.items == 1 else 's'} ({self.label_a} higher on "
                f"{c.a_higher}, {self.label_b} on {c.b_higher}), explains "
                f"{float(c.net) * pts:+.2f} points ({_num(c.net)} items)"
            )
        if self.guessed:
            lines.append(f"  the official code guesses on {self.guessed} of the paired items")
        for side, label, credit in (
            ("only_a", self.label_a, self.credit_a),
            ("only_b", self.label_b, self.credit_b),
        ):
            left = self.left_out_detail.get(side)
            if left is None:
                continue
            drawn = f", {left.guessed} of them its random draws" if left.guessed else ""
            whole = (credit + left.credit) / (self.n + left.items)
            lines.append(
                f"  not paired: {left.items} items only {label} scored "
                f"({_num(left.credit).lstrip('+')} right there{drawn}); {label} over all its "
                f"{self.n + left.items} items: {float(whole) * 100:.2f}"
            )
        return lines


def _num(x: Fraction) -> str:
    return f"{int(x):+d}" if x.denominator == 1 else f"{float(x):+.3f}"


def audit(
    a: Iterable[Verdict],
    b: Iterable[Verdict],
    *,
    label_a: str = "lmmprobe",
    label_b: str = "official",
    n_boot: int = 1000,
    seed: int = 0,
) -> Audit:
    """Pair two sides' verdicts by (sample, repeat) and explain every difference.

    Args:
        a: Side A's verdicts (lmmprobe's, or the first run's).
        b: Side B's verdicts (the other tool's, or the second run's).
        label_a: How the summary names side A.
        label_b: How the summary names side B.
        n_boot: Bootstrap resamples of the difference's interval (0: none).
        seed: Seed of the bootstrap (`numpy.random.default_rng`).

    Returns:
        The audit; its causes' ``net`` contributions sum to its ``gap`` exactly.

    Raises:
        ValueError: One side holds two verdicts for the same (sample, repeat).
        ImportError: scipy is missing (McNemar's test needs it).

    """
    side_a, side_b = _keyed(a, label_a), _keyed(b, label_b)
    keys = sorted(side_a.keys() & side_b.keys(), key=lambda k: (natural_key(k[0]), k[1]))
    pairs = [(side_a[k], side_b[k]) for k in keys]
    items = [AuditItem(cause_of(x, y), x, y) for x, y in pairs if x.credit != y.credit]
    by_cause: dict[Cause, CauseCount] = {}
    for cause in CAUSES:
        mine = [it for it in items if it.cause == cause]
        if mine:
            by_cause[cause] = CauseCount(
                items=len(mine),
                b_higher=sum(it.delta < 0 for it in mine),
                a_higher=sum(it.delta > 0 for it in mine),
                net=sum((it.delta for it in mine), Fraction(0)),
            )
    alone = {
        "only_a": [side_a[k] for k in side_a.keys() - side_b.keys()],
        "only_b": [side_b[k] for k in side_b.keys() - side_a.keys()],
    }
    left = {k: len(v) for k, v in alone.items()}
    detail = {
        k: LeftOut(
            items=len(v),
            credit=sum((Fraction(x.credit) for x in v), Fraction(0)),
            guessed=sum(x.guessed for x in v),
        )
        for k, v in alone.items()
        if v
    }
    # Samples are resampled with their repeats, as `lmmprobe compare` does.
    low, high, samples = difference_interval(
        [x.sample_id for x, _ in pairs], [x.credit - y.credit for x, y in pairs],
        n_boot=n_boot, seed=seed,
    )  # fmt: skip
    binary = all(v.credit in (0.0, 1.0) for pair in pairs for v in pair)
    p = None
    if binary:
        p = mcnemar(
            sum(x.credit > y.credit for x, y in pairs), sum(y.credit > x.credit for x, y in pairs)
        )
    return Audit(
        label_a=label_a,
        label_b=label_b,
        n=len(pairs),
        samples=samples,
        credit_a=sum((Fraction(x.credit) for x, _ in pairs), Fraction(0)),
        credit_b=sum((Fraction(y.credit) for _, y in pairs), Fraction(0)),
        by_cause=by_cause,
        items=items,
        guessed=sum(x.guessed or y.guessed for x, y in pairs),
        left_out={k: v for k, v in left.items() if v},
        left_out_detail=detail,
        low=low,
        high=high,
        n_boot=n_boot,
        seed=seed,
        mcnemar_p=p,
    )


def _keyed(verdicts: Iterable[Verdict], label: str) -> dict[tuple[str, int], Verdict]:
    out: dict[tuple[str, int], Verdict] = {}
    for v in verdicts:
        if v.key in out:
            where = f" (row {v.row})" if v.row is not None else ""
            raise ValueError(
                f"{label}: sample {v.sample_id!r} repeat {v.repeat} has two verdicts{where}"
            )
        out[v.key] = v
    return out
