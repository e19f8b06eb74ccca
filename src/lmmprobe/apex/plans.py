"""Plans of the rules orchestrator: a query's ladder filled in, and experiments from its rungs.

Origin: APEx (Conti et al.) plans experiments from easy to hard. `build_plan` takes a query's
reading (`lmmprobe.apex.query`) and its family's ladder (`lmmprobe.apex.ladders`, data), works
out the words, lists of data types or classes and pictures the rungs name — the alternatives of a
data type, the classes of a 4-way discrimination (seeded), a group to contrast with — and keeps
the rungs whose condition holds. `Plan.next` builds the next rung's experiment from the report
so far: the adaptive rungs read the accuracies of the experiments already run.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from lmmprobe.apex.datatypes import NONE_LABEL, DataType, Group, by_name, group_members
from lmmprobe.apex.experiments import MAX_ANSWERS, Answer, Difficulty, Experiment, Report
from lmmprobe.apex.ladders import LADDERS, Family, RungRow
from lmmprobe.apex.protocol import PlanExhausted, PlanningEnv
from lmmprobe.apex.query import Condition, QueryReading, Severity, Subject, read_query
from lmmprobe.tools.compose import ToolCall


@dataclass(frozen=True)
class _Context:
    """What a query's rungs are built from: its words, lists and choices of pictures."""

    env: PlanningEnv
    seed: int
    condition: Condition | None
    words: dict[str, object]
    conditions: dict[str, bool]
    data_types: dict[str, list[DataType]] = field(default_factory=dict)
    classes: dict[str, list[str]] = field(default_factory=dict)
    present: DataType | None = None
    bases: dict[str, str] = field(default_factory=dict)
    target: str = ""
    contrasts: dict[str, str] = field(default_factory=dict)

    def select(self, class_name: str) -> ToolCall:
        return ToolCall(tool=self.env.select_tool, args={"class_name": class_name})

    def cond(self, use: bool = True, severity: Severity | None = None) -> list[ToolCall]:
        if self.condition is None or not use:
            return []
        return self.condition.data_type.calls(severity or self.condition.severity)

    def presence(
        self, d: DataType, severity: Severity, base: str
    ) -> list[tuple[str, ToolCall, list[ToolCall]]]:
        sel = self.select(base)
        return [
            ("yes", sel, [*d.calls(severity), *self.cond()]),
            ("no", sel, [ToolCall(tool="Identity"), *self.cond()]),
        ]

    def transforms(
        self, members: Sequence[DataType], severity: Severity, base: str
    ) -> list[tuple[str, ToolCall, list[ToolCall]]]:
        sel = self.select(base)
        out = [(d.label, sel, [*d.calls(severity), *self.cond()]) for d in members]
        out.append((NONE_LABEL, sel, [ToolCall(tool="Identity"), *self.cond()]))
        return out


def _mean_answer_accuracy(report: Report) -> dict[str, float]:
    """Mean accuracy per answer text over every model and experiment so far."""
    sums: dict[str, list[float]] = {}
    for rec in report.experiments:
        for r in rec.results.models:
            for a, iv in r.per_answer.items():
                if iv.value is not None:
                    sums.setdefault(a, []).append(iv.value)
    return {a: sum(v) / len(v) for a, v in sums.items()}


def _most_confused(members: list[DataType], report: Report, rank: int) -> tuple[DataType, float]:
    """The member with the `rank`-th lowest accuracy so far not yet asked alone, and it."""
    acc = _mean_answer_accuracy(report)
    seen = [d for d in members if d.label in acc]
    order = sorted(seen, key=lambda d: (acc[d.label], members.index(d)))
    asked = {rec.experiment.question for rec in report.experiments}
    order = [d for d in order if d.question not in asked] or members
    d = order[min(rank, len(order) - 1)]
    return d, acc.get(d.label, float("nan"))


def build_experiment(row: RungRow, ctx: _Context, report: Report) -> Experiment | None:
    """The experiment a rung asks for, given the report so far (None: it cannot be filled).

    Raises:
        ValueError: The experiment does not validate (e.g. repeated answer texts).

    """
    words = ctx.words
    answers: list[tuple[str, ToolCall, list[ToolCall]]]
    if row.answers == "presence":
        assert ctx.present is not None  # the data type family sets it
        answers = ctx.presence(ctx.present, row.severity, ctx.bases[row.base])
    elif row.answers == "transforms":
        members = ctx.data_types[row.members or ""]
        answers = ctx.transforms(members, row.severity, ctx.bases[row.base])
    elif row.answers == "most confused":
        d, accuracy = _most_confused(ctx.data_types["all members"], report, row.rank)
        words = {**words, "name": d.name, "question": d.question, "accuracy": accuracy}
        answers = ctx.presence(d, "strong", "random")
    elif row.answers == "class presence":
        contrast = ctx.contrasts[row.contrast or ""]
        answers = [("yes", ctx.select(ctx.target), ctx.cond()),
                   ("no", ctx.select(contrast), ctx.cond())]  # fmt: skip
    else:
        classes = ctx.classes[row.members or ""]
        if len(classes) < 2:
            return None
        extra = by_name(row.extra).calls("strong") if row.extra else []
        severity: Severity | None = None
        if row.condition == "other severity" and ctx.condition is not None:
            severity = "strong" if ctx.condition.severity == "mild" else "mild"
        use = row.condition != "none"
        answers = [(c, ctx.select(c), [*extra, *ctx.cond(use, severity)]) for c in classes]
    return Experiment(
        question=row.question.format(**words),
        answers=[Answer(text=t, select=s, transforms=tr) for t, s, tr in answers],
        difficulty=row.difficulty,
        rationale=row.rationale.format(**words),
    )


@dataclass(frozen=True)
class Rung:
    """One planned experiment: its title (filled in), difficulty and row of the ladder."""

    title: str
    difficulty: Difficulty
    row: RungRow


@dataclass
class Plan:
    """A query's reading and its ladder of experiments."""

    family: Family
    task: str
    rungs: list[Rung]
    notes: list[str]
    context: _Context
    position: int = 0

    def build(self, rung: Rung, report: Report) -> Experiment | None:
        """The experiment of one rung given the report so far (None: it cannot be filled)."""
        return build_experiment(rung.row, self.context, report)

    def next(self, report: Report) -> tuple[Rung, Experiment]:
        """The next buildable rung.

        Raises:
            PlanExhausted: No rung is left.

        """
        while self.position < len(self.rungs):
            rung = self.rungs[self.position]
            self.position += 1
            try:
                exp = self.build(rung, report)
            except ValueError as exc:  # a rung this query cannot fill (e.g. too few classes)
                self.notes.append(f"skipped {rung.title!r}: {exc}")
                continue
            if exp is not None:
                return rung, exp
        raise PlanExhausted(f"the plan for this query has no experiment after {len(self.rungs)}")

    def peek(self, report: Report) -> Experiment | None:
        """The experiment `next` would build from `report`, without moving on (None: no rung left).

        What a step announces as coming next is this experiment, not a rung's title: a title
        names data types (``vertical flip``) where the experiment asks their answer texts
        (``upside down``), and a rung that cannot be filled is skipped.
        """
        for rung in self.rungs[self.position :]:
            try:
                exp = self.build(rung, report)
            except ValueError:  # skipped by `next` as well (which notes why)
                continue
            if exp is not None:
                return exp
        return None

    @property
    def exhausted(self) -> bool:
        """Whether every rung has been used."""
        return self.position >= len(self.rungs)


def plural(word: str) -> str:
    """An English plural good enough for class names ("bus" → "buses", "fly" → "flies")."""
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    return word + "s"


def _article(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def _other_group(env: PlanningEnv, group: str | None) -> str | None:
    """A group to contrast with: the first of a preferred list that exists, else any."""
    preferred = ("object", "animal", "vehicle", "food", "building", "plant")
    groups = [g for g in env.groups() if g not in (group, "other", "shape")]
    for p in preferred:
        if p in groups:
            return p
    return groups[0] if groups else None


def _cond_text(condition: Condition | None) -> str:
    if condition is None:
        return ""
    mild = "mild " if condition.severity == "mild" else ""
    return f" under {mild}{condition.data_type.name}"


def _data_type_context(
    d: DataType, env: PlanningEnv, seed: int, condition: Condition | None
) -> tuple[_Context, list[str]]:
    others = [m for m in group_members(d.group) if m.strong != d.strong and m.label != d.label]
    alts = others[:2]  # the nearest in list order
    everyone = [d, *others][: MAX_ANSWERS - 1]
    other = _other_group(env, None)
    words: dict[str, object] = {
        "name": d.name,
        "group": d.group,
        "question": d.question,
        "alternatives": ", ".join(a.name for a in alts) or "no change",
        "n_everyone": len(everyone),
        "other": other,
        "other_or_random": other or "random",
        "cond": _cond_text(condition),
    }
    ctx = _Context(
        env, seed, condition, words,
        conditions={"mild": d.mild is not None, "no mild": d.mild is None},
        data_types={"alternatives": [d, *alts], "everyone": everyone},
        present=d,
        bases={"random": "random", "other group": f"random:{other}" if other else "random"},
    )  # fmt: skip
    return ctx, [d.stand_in] if d.stand_in else []


def _group_context(
    group: Group, env: PlanningEnv, seed: int, condition: Condition | None
) -> tuple[_Context, list[str]]:
    members = group_members(group)
    first, second, every = members[:3], members[3:7], members[: MAX_ANSWERS - 1]
    words: dict[str, object] = {
        "group": group,
        "first": ", ".join(d.name for d in first),
        "second": ", ".join(d.name for d in second),
        "n_first": len(first),
        "n_second": len(second),
        "n_all": len(every),
        "cond": _cond_text(condition),
    }
    ctx = _Context(
        env, seed, condition, words,
        conditions={"second": bool(second)},
        data_types={"first": first, "second": second, "all": every, "all members": members},
        bases={"random": "random"},
    )  # fmt: skip
    return ctx, [d.stand_in for d in members if d.stand_in]


def _recognition_context(
    s: Subject, env: PlanningEnv, seed: int, condition: Condition | None
) -> tuple[_Context, list[str]]:
    other = _other_group(env, s.group)
    if s.kind == "class":
        # Alternatives come from the class's group, or from every class when it has none.
        in_group = env.groups().get(s.group or "") or env.classes()
        pool = [c for c in in_group if c != s.label]
    else:
        pool = list(s.classes)

    def rng(*parts: object) -> random.Random:
        return random.Random(":".join(str(p) for p in (seed, *parts)))

    def pick(k: int, tag: str) -> list[str]:
        r = rng("pick", s.label, tag)
        if s.kind == "class":
            return [s.label, *r.sample(pool, min(k - 1, len(pool)))]
        return r.sample(pool, min(k, len(pool)))

    two, four, six = pick(2, "two"), pick(4, "four"), pick(6, "six")
    # With no other group to contrast with, "no" shows one other class.
    other_class = rng("no", s.label).choice(sorted(pool)) if pool else ""
    contrast_class = s.kind == "class" and other is None and bool(pool)
    contrast_group = s.kind in ("class", "group") and other is not None
    words: dict[str, object] = {
        "label": s.label,
        "a_label": _article(s.label),
        "labels": plural(s.label),
        "two": " vs ".join(two),
        "four": " / ".join(four),
        "n_four": len(four),
        "n_six": len(six),
        "other": other,
        "other_class": other_class,
        "condition": condition.data_type.name if condition else "",
        "cond": _cond_text(condition),
        "which": "What is shown in this image?"
        if s.kind == "class"
        else f"Which {s.label} is shown in this image?",
    }
    ctx = _Context(
        env, seed, condition, words,
        conditions={
            "contrast class": contrast_class,
            "contrast group": contrast_group,
            "no contrast": not contrast_class and not contrast_group,
            "condition": condition is not None,
            "no condition": condition is None,
        },
        classes={"two": two, "four": four, "six": six},
        target=s.label if s.kind == "class" else f"random:{s.group}",
        contrasts={"other class": other_class, "other group": f"random:{other}"},
    )  # fmt: skip
    notes = [s.note] if s.note else []
    if condition is not None and condition.data_type.stand_in:
        notes.append(condition.data_type.stand_in)
    return ctx, notes


def build_plan(reading: QueryReading, env: PlanningEnv, seed: int = 0) -> Plan:
    """The ladder of the reading's family, filled in for its target and condition."""
    target, condition = reading.target, reading.condition
    if isinstance(target, DataType):
        ctx, notes = _data_type_context(target, env, seed, condition)
    elif isinstance(target, Subject):
        ctx, notes = _recognition_context(target, env, seed, condition)
    else:
        ctx, notes = _group_context(target, env, seed, condition)
    ladder = LADDERS[reading.family]
    rungs = [
        Rung(row.title.format(**ctx.words), row.difficulty, row)
        for row in ladder.rungs
        if row.when is None or ctx.conditions[row.when]
    ]
    return Plan(reading.family, ladder.task.format(**ctx.words), rungs, notes, ctx)


def plan_query(query: str, env: PlanningEnv, seed: int = 0) -> Plan:
    """Read a query and plan its ladder.

    Raises:
        QueryError: The query fits no supported form (the message lists them).

    """
    return build_plan(read_query(query, env), env, seed)
