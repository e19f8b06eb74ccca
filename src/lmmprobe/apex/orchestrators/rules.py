"""``rules``: an offline, deterministic APEx orchestrator for the query families APEx evaluates.

Origin: APEx (Conti et al.) plans experiments with an LLM; this planner covers the query families
of its evaluation without one, so campaigns run offline and reproducibly:

- "Can models identify {data type} in images?" for Udandarao et al.'s 27 visual data types
  (with synonyms, `lmmprobe.apex.datatypes`) and every transform tool by name;
- "Can models identify {geometric|pixel|style|semantic} transformations?";
- "Can models recognize {class or class group}?" (a class such as dogs, a renderer group such as
  vehicles, a planner set such as fruits, or a retrieval collection's taxonomy group);
- any of these "... under {data type}?" (the data type is applied to every image; "heavy",
  "slight" and the like choose its severity).

Each family has a ladder of experiments from easy to hard — presence (yes/no), then
discrimination among alternatives of the same group, then milder severities or more
alternatives — and the group family adapts: after the discriminations it asks yes/no about the
members the models confused most. Stopping is statistical, per model, on the 95% accuracy
interval against chance: a model is resolved when it stayed at chance on the last two
experiments, when it was above chance earlier and no longer is (its limit is found), or when
it is above chance on the hardest rung; the report is sufficient when every model is resolved
or the ladder is done.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from lmmprobe.apex.datatypes import (
    APEX27,
    GROUPS,
    NONE_LABEL,
    DataType,
    Group,
    find_data_type,
    group_members,
)
from lmmprobe.apex.evaluation import statistical_findings
from lmmprobe.apex.orchestrators.base import (
    Attempt,
    PlanExhausted,
    PlanningEnv,
    QueryError,
    Reply,
)
from lmmprobe.apex.schema import (
    MAX_ANSWERS,
    Answer,
    Conclusions,
    Difficulty,
    Discussion,
    Experiment,
    ExperimentRecord,
    Initialization,
    Report,
    Sufficiency,
)
from lmmprobe.tools.compose import ToolCall

# Sets of renderer classes a query may name that the renderer does not group by itself.
CLASS_SETS: dict[str, tuple[str, ...]] = {
    "fruit": ("apple", "pear", "tangerine", "lemon", "banana", "watermelon", "grape",
              "strawberry", "cherry", "peach", "pineapple", "coconut", "kiwi"),
    "vegetable": ("tomato", "eggplant", "avocado", "carrot", "corn", "chili pepper", "broccoli",
                  "garlic", "onion", "potato"),
    "bird": ("turkey", "rooster", "bird", "eagle", "duck", "swan", "owl", "flamingo", "peacock",
             "parrot", "penguin"),
    "insect": ("butterfly", "ant", "bee", "ladybug", "mosquito", "grasshopper"),
    "sea animal": ("whale", "dolphin", "fish", "shark", "octopus", "crab", "lobster", "shrimp",
                   "squid", "seal"),
    "farm animal": ("horse", "cow", "pig", "sheep", "goat", "rooster", "turkey", "duck"),
    "reptile": ("crocodile", "turtle", "lizard", "snake"),
    "flower": ("sunflower", "rose", "tulip", "hibiscus", "cherry blossom", "daisy", "lotus",
               "hyacinth"),
    "tree": ("palm tree", "pine tree", "tree", "christmas tree", "bare tree"),
    "dessert": ("ice cream", "doughnut", "cookie", "cake", "birthday cake", "cupcake", "pie",
                "chocolate bar", "candy", "lollipop"),
    "drink": ("milk", "coffee", "wine glass", "cocktail", "beer"),
    "tool": ("hammer", "wrench", "scissors", "axe", "saw", "screwdriver"),
    "boat": ("sailboat", "speedboat", "ship", "canoe"),
    "aircraft": ("airplane", "helicopter", "rocket", "flying saucer"),
    "car": ("car", "taxi", "police car", "racing car", "ambulance", "pickup truck", "van"),
    "ball": ("soccer ball", "basketball", "american football", "baseball", "volleyball",
             "rugby ball"),
}  # fmt: skip
"""Planner sets: name → renderer classes (only those the renderer draws are used)."""

GROUP_ALIASES: dict[str, str] = {
    "animals": "animal",
    "foods": "food",
    "food items": "food",
    "plants": "plant",
    "objects": "object",
    "things": "object",
    "household objects": "object",
    "clothes": "clothing",
    "clothing items": "clothing",
    "garments": "clothing",
    "sports": "sport",
    "sport equipment": "sport",
    "sports equipment": "sport",
    "buildings": "building",
    "vehicles": "vehicle",
    "shapes": "shape",
    "geometric shapes": "shape",
    "fruits": "fruit",
    "vegetables": "vegetable",
    "birds": "bird",
    "insects": "insect",
    "sea animals": "sea animal",
    "marine animals": "sea animal",
    "farm animals": "farm animal",
    "reptiles": "reptile",
    "flowers": "flower",
    "trees": "tree",
    "desserts": "dessert",
    "sweets": "dessert",
    "drinks": "drink",
    "beverages": "drink",
    "tools": "tool",
    "boats": "boat",
    "ships": "boat",
    "aircrafts": "aircraft",
    "planes": "aircraft",
    "cars": "car",
    "balls": "ball",
}

_STRONG = re.compile(r"\b(heavy|heavily|strong|strongly|severe|severely|extreme|intense|lots of)\b")
_MILD = re.compile(r"\b(slight|slightly|mild|mildly|light|lightly|subtle|little|weak|a bit of)\b")
_VERBS = (
    r"recogni[sz]e|identify|classify|distinguish|differentiate|discriminate|tell apart|tell|"
    r"detect|see|spot|name|notice|perceive|understand|find"
)
_CONDITION_WORDS = (" under ", " despite ", " in the presence of ", " with ", " in ", " after ")
_GROUP_QUERY = re.compile(
    r"\b(geometric|pixel|pixel-level|style|stylistic|semantic)\s+(?:level\s+)?"
    r"(transformations?|transforms?|data\s*types?|changes?|edits?|manipulations?|"
    r"alterations?|perturbations?|distortions?|corruptions?|modifications?)\b"
)
_FILLER = re.compile(
    r"\b(the|a|an|different|various|types? of|kinds? of|breeds? of|species of|images? of|"
    r"photos? of|pictures? of|in images|in photos|in pictures|images|photos|pictures|apart|"
    r"from each other|from one another|correctly|reliably|well)\b"
)
_FINE = re.compile(r"\b(breeds?|species|types?|kinds?|varieties|models)\b")


def supported_forms(env: PlanningEnv | None = None) -> str:
    """The message for a query the rules orchestrator cannot plan."""
    types = ", ".join(d.name for d in APEX27)
    groups = ", ".join(sorted(env.groups())) if env is not None else "animal, food, vehicle, ..."
    sets = ", ".join(sorted(CLASS_SETS))
    return (
        "supported query forms:\n"
        '  - "Can models identify {data type} in images?"  e.g. "Can models identify rotated '
        'images?", "... JPEG compression?", or a transform tool name ("... RotateImage?")\n'
        '  - "Can models identify {geometric|pixel|style|semantic} transformations?"\n'
        '  - "Can models recognize {class or class group}?"  e.g. dogs, vehicles, fruits\n'
        '  - any of these followed by "under {data type}", e.g. "Can models recognize '
        'vehicles under heavy blur?"\n'
        f"data types: {types} (and every transform tool)\n"
        f"class groups: {groups}; sets: {sets}; or any single class the renderer draws"
    )


# ---------------------------------------------------------------------------------------------
# Subjects of recognition queries


@dataclass
class Subject:
    """What a recognition query is about.

    Attributes:
        kind: ``class`` (one class), ``group`` (a group select tools can sample with
            ``random:GROUP``) or ``set`` (a list of classes).
        label: How questions name it ("dog", "vehicle").
        classes: The class, or the members of the group or set.
        group: The group the class belongs to (class), or the group itself (group).
        note: How the query was read when it asked for more than can be drawn.

    """

    kind: Literal["class", "group", "set"]
    label: str
    classes: list[str]
    group: str | None = None
    note: str | None = None


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 \-]+", " ", text.lower().replace("_", " ")).split())


def _singulars(phrase: str) -> list[str]:
    words = phrase.split()
    if not words:
        return []
    last = words[-1]
    irregular = {"mice": "mouse", "geese": "goose", "people": "person", "teeth": "tooth",
                 "knives": "knife", "leaves": "leaf", "wolves": "wolf", "fish": "fish",
                 "sheep": "sheep", "buses": "bus", "glasses": "glasses"}  # fmt: skip
    options = [last]
    if last in irregular:
        options.append(irregular[last])
    if last.endswith("ies") and len(last) > 4:
        options.append(last[:-3] + "y")
    if last.endswith("es") and re.search(r"(s|x|z|ch|sh|o)es$", last):
        options.append(last[:-2])
    if last.endswith("s") and not last.endswith("ss"):
        options.append(last[:-1])
    return [" ".join([*words[:-1], w]) for w in dict.fromkeys(options)]


def _other_group(env: PlanningEnv, group: str | None) -> str | None:
    preferred = ("object", "animal", "vehicle", "food", "building", "plant")
    groups = [g for g in env.groups() if g not in (group, "other", "shape")]
    for p in preferred:
        if p in groups:
            return p
    return groups[0] if groups else None


def resolve_subject(phrase: str, env: PlanningEnv) -> Subject | None:
    """Read a recognition query's subject as a class, a group or a set (None if unknown)."""
    text = _norm(phrase)
    fine = bool(_FINE.search(text))
    core = " ".join(_FILLER.sub(" ", _FINE.sub(" ", text)).split())
    if not core:
        return None
    groups = {_norm(g): g for g in env.groups()}
    classes = {_norm(c): c for c in env.classes()}
    retrieval = env.collection is not None
    for cand in [core, *_singulars(core)]:
        key = GROUP_ALIASES.get(cand, cand)
        if key in groups and len(env.groups()[groups[key]]) >= 2:
            g = groups[key]
            return Subject("group", key, env.groups()[g], g)
        if key in CLASS_SETS and not retrieval:
            members = [c for c in CLASS_SETS[key] if c in env.drawable]
            if len(members) >= 2:
                return Subject("set", key, members)
    for cand in [core, *_singulars(core)]:
        if cand in classes:
            c = classes[cand]
            grp = env.collection.group_of(c) if env.collection else env.drawable.get(c)
            note: str | None = None
            if fine:
                note = (
                    f"the query asks about kinds of {c}, which the image source does not "
                    f"have; the plan asks about {c} among other classes"
                    + (
                        ""
                        if retrieval
                        else " (give --retrieval with a labelled collection "
                        "whose taxonomy has them, e.g. ImageNet with ImageNet-X's groups)"
                    )
                )
            return Subject("class", c, [c], grp, note)
    return None


# ---------------------------------------------------------------------------------------------
# Plans


@dataclass
class Rung:
    """One planned experiment: its purpose and how to build it from the report so far."""

    title: str
    difficulty: Difficulty
    build: Callable[[Report], Experiment | None]


@dataclass
class Plan:
    """A query's reading and its ladder of experiments."""

    family: str
    task: str
    rungs: list[Rung]
    notes: list[str] = field(default_factory=list)
    position: int = 0

    def next(self, report: Report) -> tuple[Rung, Experiment]:
        """The next buildable rung.

        Raises:
            PlanExhausted: No rung is left.

        """
        while self.position < len(self.rungs):
            rung = self.rungs[self.position]
            self.position += 1
            try:
                exp = rung.build(report)
            except ValueError as exc:  # a rung this query cannot fill (e.g. too few classes)
                self.notes.append(f"skipped {rung.title!r}: {exc}")
                continue
            if exp is not None:
                return rung, exp
        raise PlanExhausted(f"the plan for this query has no experiment after {len(self.rungs)}")

    @property
    def exhausted(self) -> bool:
        """Whether every rung has been used."""
        return self.position >= len(self.rungs)


def _call(tool: str, **args: object) -> ToolCall:
    return ToolCall(tool=tool, args=dict(args))


def plural(word: str) -> str:
    """An English plural good enough for class names ("bus" → "buses", "fly" → "flies")."""
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    return word + "s"


def _article(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


class _Builder:
    """Shared pieces: the select call, the condition, experiments from answers."""

    def __init__(
        self,
        env: PlanningEnv,
        seed: int,
        condition: DataType | None,
        condition_severity: Literal["strong", "mild"],
    ) -> None:
        self.env = env
        self.seed = seed
        self.condition = condition
        self.condition_severity = condition_severity

    def select(self, class_name: str) -> ToolCall:
        return _call(self.env.select_tool, class_name=class_name)

    def cond(self, use: bool = True, severity: str | None = None) -> list[ToolCall]:
        if self.condition is None or not use:
            return []
        sev = severity or self.condition_severity
        return self.condition.calls("mild" if sev == "mild" else "strong")

    def experiment(
        self,
        question: str,
        answers: Sequence[tuple[str, ToolCall, list[ToolCall]]],
        difficulty: Difficulty,
        rationale: str,
    ) -> Experiment:
        return Experiment(
            question=question,
            answers=[Answer(text=t, select=s, transforms=tr) for t, s, tr in answers],
            difficulty=difficulty,
            rationale=rationale,
        )

    def rng(self, *parts: object) -> random.Random:
        return random.Random(":".join(str(p) for p in (self.seed, *parts)))


def _transform_answers(
    b: _Builder,
    members: Sequence[DataType],
    severity: Literal["strong", "mild"],
    with_none: bool = True,
    base_class: str = "random",
) -> list[tuple[str, ToolCall, list[ToolCall]]]:
    base = b.select(base_class)
    out = [(d.label, base, [*d.calls(severity), *b.cond()]) for d in members]
    if with_none:
        out.append((NONE_LABEL, base, [_call("Identity"), *b.cond()]))
    return out


def _presence(
    b: _Builder, d: DataType, severity: Literal["strong", "mild"], base: str
) -> list[tuple[str, ToolCall, list[ToolCall]]]:
    sel = b.select(base)
    return [
        ("yes", sel, [*d.calls(severity), *b.cond()]),
        ("no", sel, [_call("Identity"), *b.cond()]),
    ]


def _alternatives(d: DataType, k: int) -> list[DataType]:
    """Up to `k` other 27-type members of the data type's group (nearest in list order)."""
    members = [m for m in group_members(d.group) if m.strong != d.strong and m.label != d.label]
    return members[:k]


def _cond_text(b: _Builder) -> str:
    if b.condition is None:
        return ""
    return f" under {'mild ' if b.condition_severity == 'mild' else ''}{b.condition.name}"


def data_type_plan(d: DataType, b: _Builder) -> Plan:
    """Presence → discrimination → mild presence → discrimination in the group → mild/other."""
    cond = _cond_text(b)
    task = f"identify {d.name}{cond}"
    alts = _alternatives(d, 2)
    others = [m for m in group_members(d.group) if m.strong != d.strong and m.label != d.label]
    everyone = [d, *others][: MAX_ANSWERS - 1]
    rungs = [
        Rung(
            f"Is {d.name} detectable at all (yes/no, strong){cond}?",
            "easy",
            lambda r: b.experiment(
                d.question,
                _presence(b, d, "strong", "random"),
                "easy",
                f"Presence first: can the models tell {d.name} (strong) from untouched images"
                f"{cond}? An easy start locates their level.",
            ),
        ),
        Rung(
            f"Can {d.name} be told apart from {', '.join(a.name for a in alts) or 'no change'}?",
            "medium",
            lambda r: b.experiment(
                "Which of these describes this image?",
                _transform_answers(b, [d, *alts], "strong"),
                "medium",
                f"Discrimination: {d.name} among other {d.group} data types"
                f"{cond}, so that noticing 'something changed' is not enough.",
            ),
        ),
    ]
    if d.mild is not None:
        rungs.append(
            Rung(
                f"Is a mild {d.name} detectable (yes/no)?",
                "hard",
                lambda r: b.experiment(
                    d.question,
                    _presence(b, d, "mild", "random"),
                    "hard",
                    f"Severity: a milder {d.name}{cond}, to find where detection fails.",
                ),
            )
        )
    rungs.append(
        Rung(
            f"Can {d.name} be told apart from every {d.group} data type?",
            "hard",
            lambda r: b.experiment(
                "Which of these describes this image?",
                _transform_answers(b, everyone, "strong"),
                "hard",
                f"Fine discrimination among {len(everyone)} {d.group} data types and no change"
                f"{cond}.",
            ),
        )
    )
    if d.mild is not None:
        rungs.append(
            Rung(
                f"Can a mild {d.name} be told apart from the alternatives?",
                "hard",
                lambda r: b.experiment(
                    "Which of these describes this image?",
                    _transform_answers(b, [d, *alts], "mild"),
                    "hard",
                    f"Discrimination at mild severity{cond}.",
                ),
            )
        )
    other = _other_group(b.env, None)
    rungs.append(
        Rung(
            f"Does detection of {d.name} hold on other pictures ({other or 'random'})?",
            "medium",
            lambda r: b.experiment(
                d.question,
                _presence(b, d, "strong", f"random:{other}" if other else "random"),
                "medium",
                f"Transfer: {d.name} on pictures of one group ({other}), to check that the "
                "result does not depend on the subjects shown.",
            ),
        )
    )
    if d.mild is None:
        rungs.append(
            Rung(
                f"Does the discrimination hold on other pictures ({other or 'random'})?",
                "hard",
                lambda r: b.experiment(
                    "Which of these describes this image?",
                    _transform_answers(
                        b, [d, *alts], "strong", base_class=f"random:{other}" if other else "random"
                    ),
                    "hard",
                    f"Transfer of the discrimination to pictures of one group ({other}){cond}.",
                ),
            )
        )
    notes = [d.stand_in] if d.stand_in else []
    return Plan("data_type", task, rungs, notes)


def _mean_answer_accuracy(report: Report) -> dict[str, float]:
    """Mean accuracy per answer text over every model and experiment so far."""
    sums: dict[str, list[float]] = {}
    for rec in report.experiments:
        for r in rec.results.models:
            for a, iv in r.per_answer.items():
                if iv.value is not None:
                    sums.setdefault(a, []).append(iv.value)
    return {a: sum(v) / len(v) for a, v in sums.items()}


def group_plan(group: Group, b: _Builder) -> Plan:
    """Two discriminations → yes/no on the most confused members → mild discrimination."""
    members = group_members(group)
    cond = _cond_text(b)
    first, second = members[:3], members[3:7]

    def hardest(rank: int) -> Callable[[Report], Experiment | None]:
        def build(report: Report) -> Experiment | None:
            acc = _mean_answer_accuracy(report)
            seen = [d for d in members if d.label in acc]
            order = sorted(seen, key=lambda d: (acc[d.label], members.index(d)))
            asked = {
                rec.experiment.question for rec in report.experiments
            }  # skip members already asked yes/no
            order = [d for d in order if d.question not in asked] or members
            d = order[min(rank, len(order) - 1)]
            return b.experiment(
                d.question,
                _presence(b, d, "strong", "random"),
                "medium",
                f"Adaptive: {d.name} had the lowest accuracy in the discriminations so far "
                f"({acc.get(d.label, float('nan')):.2f}); is it detectable on its own{cond}?",
            )

        return build

    rungs = [
        Rung(
            f"Which {group} transformation: {', '.join(d.name for d in first)} or none?",
            "easy",
            lambda r: b.experiment(
                "Which of these describes this image?",
                _transform_answers(b, first, "strong"),
                "easy",
                f"Start with {len(first)} strong {group} transformations and no change{cond}.",
            ),
        ),
    ]
    if second:
        rungs.append(
            Rung(
                f"Which {group} transformation: {', '.join(d.name for d in second)} or none?",
                "easy",
                lambda r: b.experiment(
                    "Which of these describes this image?",
                    _transform_answers(b, second, "strong"),
                    "easy",
                    f"The other {len(second)} {group} transformations{cond}.",
                ),
            )
        )
    rungs += [
        Rung(f"Is the most confused {group} transformation detectable alone?", "medium",
             hardest(0)),
        Rung(f"Is the second most confused {group} transformation detectable alone?", "medium",
             hardest(1)),
        Rung(
            f"Can all {group} transformations be told apart at once?",
            "hard",
            lambda r: b.experiment(
                "Which of these describes this image?",
                _transform_answers(b, members[: MAX_ANSWERS - 1], "strong"),
                "hard",
                f"All {min(len(members), MAX_ANSWERS - 1)} {group} transformations and no "
                f"change together{cond}.",
            ),
        ),
        Rung(
            f"Can mild {group} transformations be told apart?",
            "hard",
            lambda r: b.experiment(
                "Which of these describes this image?",
                _transform_answers(b, first, "mild"),
                "hard",
                f"The first {len(first)} at mild severity{cond}.",
            ),
        ),
    ]  # fmt: skip
    notes = [d.stand_in for d in members if d.stand_in]
    return Plan("group", f"identify {group} transformations{cond}", rungs, notes)


def recognition_plan(s: Subject, b: _Builder) -> Plan:
    """Presence → 4-way → 6-way → conditions (or the clean control when under a condition)."""
    env = b.env
    cond = _cond_text(b)
    other = _other_group(env, s.group)
    if s.kind == "class":
        # Alternatives come from the class's group, or from every class when it has none.
        members = env.groups().get(s.group or "") or env.classes()
        pool = [c for c in members if c != s.label]
    else:
        pool = list(s.classes)

    def pick(k: int, tag: str) -> list[str]:
        rng = b.rng("pick", s.label, tag)
        if s.kind == "class":
            return [s.label, *rng.sample(pool, min(k - 1, len(pool)))]
        return rng.sample(pool, min(k, len(pool)))

    four, six = pick(4, "four"), pick(6, "six")
    which = (
        "What is shown in this image?"
        if s.kind == "class"
        else f"Which {s.label} is shown in this image?"
    )

    def classes_exp(
        classes: list[str],
        difficulty: Difficulty,
        why: str,
        extra: list[ToolCall] | None = None,
        use_cond: bool = True,
        severity: str | None = None,
    ) -> Experiment | None:
        if len(classes) < 2:
            return None
        answers = [(c, b.select(c), [*(extra or []), *b.cond(use_cond, severity)]) for c in classes]
        return b.experiment(which, answers, difficulty, why)

    rungs: list[Rung] = []
    if s.kind == "class" and other is None and pool:
        # No other group to contrast with: "no" shows one other class.
        other_class = b.rng("no", s.label).choice(sorted(pool))
        rungs.append(
            Rung(
                f"Is there {_article(s.label)} in the image (yes/no){cond}?",
                "easy",
                lambda r: b.experiment(
                    f"Is there {_article(s.label)} in this image?",
                    [
                        ("yes", b.select(s.label), b.cond()),
                        ("no", b.select(other_class), b.cond()),
                    ],
                    "easy",
                    f"Presence first: {s.label} against pictures of {other_class}{cond}.",
                ),
            )
        )
    elif s.kind in ("class", "group") and other is not None:
        target = s.label if s.kind == "class" else f"random:{s.group}"
        rungs.append(
            Rung(
                f"Is there {_article(s.label)} in the image (yes/no){cond}?",
                "easy",
                lambda r: b.experiment(
                    f"Is there {_article(s.label)} in this image?",
                    [
                        ("yes", b.select(target), b.cond()),
                        ("no", b.select(f"random:{other}"), b.cond()),
                    ],
                    "easy",
                    f"Presence first: {s.label} against pictures of {other}{cond}.",
                ),
            )
        )
    else:
        two = pick(2, "two")
        rungs.append(
            Rung(
                f"Can two {plural(s.label)} be told apart ({' vs '.join(two)}){cond}?",
                "easy",
                lambda r: classes_exp(two, "easy", f"Two {s.label} classes{cond} to start."),
            )
        )
    rungs += [
        Rung(
            f"Can {' / '.join(four)} be told apart{cond}?",
            "medium",
            lambda r: classes_exp(
                four, "medium", f"Discrimination among {len(four)} classes of one group{cond}."
            ),
        ),
        Rung(
            f"Can {len(six)} classes be told apart{cond}?",
            "hard",
            lambda r: classes_exp(six, "hard", f"More alternatives: {len(six)} classes{cond}."),
        ),
    ]
    if b.condition is None:
        blur = find_data_type("defocus blur")
        noise = find_data_type("gaussian noise")
        assert blur is not None and noise is not None
        rungs += [
            Rung(
                "Does recognition survive strong blur?",
                "hard",
                lambda r: classes_exp(
                    four, "hard", "The 4-way discrimination under strong defocus blur.",
                    blur[0].calls("strong"),
                ),
            ),
            Rung(
                "Does recognition survive strong noise?",
                "hard",
                lambda r: classes_exp(
                    four, "hard", "The 4-way discrimination under strong Gaussian noise.",
                    noise[0].calls("strong"),
                ),
            ),
        ]  # fmt: skip
    else:
        rungs += [
            Rung(
                "Control: the same discrimination without the condition",
                "medium",
                lambda r: classes_exp(
                    four, "medium", f"Control without {b.condition.name if b.condition else ''},"
                    " to measure the condition's effect.", use_cond=False,
                ),
            ),
            Rung(
                "The discrimination under the other severity of the condition",
                "hard",
                lambda r: classes_exp(
                    four, "hard", "The condition at the other severity.",
                    severity="strong" if b.condition_severity == "mild" else "mild",
                ),
            ),
        ]  # fmt: skip
    notes = [s.note] if s.note else []
    if b.condition is not None and b.condition.stand_in:
        notes.append(b.condition.stand_in)
    return Plan("recognition", f"recognize {plural(s.label)}{cond}", rungs, notes)


# ---------------------------------------------------------------------------------------------
# Reading a query


def _severity(text: str) -> Literal["strong", "mild"]:
    return "mild" if _MILD.search(text) and not _STRONG.search(text) else "strong"


def _subject_text(text: str) -> str:
    m = re.search(rf"\b(?:{_VERBS})\b(.*)$", text)
    return (m.group(1) if m else text).strip()


def parse_query(query: str, env: PlanningEnv, seed: int = 0) -> Plan:
    """Read a query into a plan.

    Raises:
        QueryError: The query fits no supported form (the message lists them).

    """
    # Tool names are CamelCase ("RotateImage"): split them into words before lowercasing.
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", query)
    text = " ".join(spaced.lower().replace("?", " ").replace("-", " ").split())
    if not text:
        raise QueryError("the query is empty; " + supported_forms(env))
    subject_part, condition = text, None
    cond_sev: Literal["strong", "mild"] = "strong"
    padded = f" {text} "
    for word in _CONDITION_WORDS:
        idx = padded.rfind(word)
        if idx <= 0:
            continue
        head, tail = padded[:idx].strip(), padded[idx + len(word) :].strip()
        found = find_data_type(tail)
        if found is None:
            continue
        # Accept the split only if the head still names something on its own.
        if (
            find_data_type(_subject_text(head))
            or resolve_subject(_subject_text(head), env)
            or (_GROUP_QUERY.search(head))
        ):
            subject_part, condition, cond_sev = head, found[0], _severity(tail)
            break
    group_m = _GROUP_QUERY.search(subject_part)
    if group_m:
        g = group_m.group(1).replace("pixel-level", "pixel").replace("stylistic", "style")
        group: Group = next(x for x in GROUPS if x == g)
        return group_plan(group, _Builder(env, seed, condition, cond_sev))
    # A class or group the images can show wins over a data type synonym ("shapes").
    subject = resolve_subject(_subject_text(subject_part), env)
    if subject is not None:
        return recognition_plan(subject, _Builder(env, seed, condition, cond_sev))
    found = find_data_type(_subject_text(subject_part)) or find_data_type(subject_part)
    if found is not None:
        return data_type_plan(found[0], _Builder(env, seed, condition, cond_sev))
    raise QueryError(f"cannot plan for {query!r}; " + supported_forms(env))


# ---------------------------------------------------------------------------------------------
# The orchestrator


def _model_history(report: Report, model: str) -> list[str]:
    return [r.verdict for rec in report.experiments for r in rec.results.models if r.model == model]


def resolution(history: Sequence[str], exhausted: bool) -> str | None:
    """Why a model needs no more experiments, or None (the statistical stopping rule)."""
    if not history:
        return None
    above = [v == "above_chance" for v in history]
    if len(history) >= 2 and not any(above):
        return "never above chance, and not in the last two experiments"
    if any(above[:-1]) and not above[-1]:
        return "above chance earlier but not in the latest, harder experiment (limit found)"
    if above[-1] and exhausted:
        return "above chance on the hardest planned experiment"
    return None


class RulesOrchestrator:
    """The offline planner (see the module docstring)."""

    name = "rules"

    def __init__(self) -> None:
        self.plan: Plan | None = None

    def _plan(self, report: Report, env: PlanningEnv) -> Plan:
        if self.plan is None:
            self.plan = parse_query(report.query, env, report.settings.seed)
        return self.plan

    def init(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Read the query into a plan; open questions are the ladder's rungs.

        Raises:
            QueryError: The query fits no supported form.

        """
        plan = self._plan(report, env)
        lines = [f"family: {plan.family}; task: {plan.task}", "ladder:"]
        lines += [f"  {i + 1}. [{r.difficulty}] {r.title}" for i, r in enumerate(plan.rungs)]
        lines += [f"note: {n}" for n in plan.notes]
        return Reply(
            Initialization(open_questions=[r.title for r in plan.rungs][:10]),
            [("planner", "\n".join(lines))],
        )

    def design(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """The next rung of the ladder (after a rejection, the one after it).

        Raises:
            PlanExhausted: No rung is left.

        """
        plan = self._plan(report, env)
        rung, exp = plan.next(report)
        if retries:
            exp = exp.model_copy(
                update={
                    "rationale": f"{exp.rationale} (The previous design was rejected: "
                    f"{retries[-1].error[:200]})"
                }
            )
        return Reply(
            exp, [("planner", f"rung {plan.position}: {rung.title}\n{exp.model_dump_json()}")]
        )

    def discuss(
        self,
        report: Report,
        env: PlanningEnv,
        record: ExperimentRecord,
        retries: Sequence[Attempt],
    ) -> Reply:
        """Statistical findings; open questions are the rungs still ahead."""
        plan = self._plan(report, env)
        ahead = [r.title for r in plan.rungs[plan.position :]][:10]
        disc = Discussion(findings=statistical_findings(record.results), open_questions=ahead)
        return Reply(disc, [("planner", disc.model_dump_json())])

    def judge(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """The statistical stopping rule, per model."""
        plan = self._plan(report, env)
        reasons = {m: resolution(_model_history(report, m), plan.exhausted) for m in report.models}
        open_models = [m for m, why in reasons.items() if why is None]
        if plan.exhausted:
            verdict = Sufficiency(
                sufficient=True,
                reason=f"the plan's {len(plan.rungs)} experiments have run; "
                + "; ".join(f"{m}: {why or 'not resolved'}" for m, why in reasons.items()),
            )
        elif not open_models:
            verdict = Sufficiency(
                sufficient=True,
                reason="every model is resolved: "
                + "; ".join(f"{m}: {why}" for m, why in reasons.items()),
            )
        else:
            verdict = Sufficiency(
                sufficient=False,
                reason=f"not yet resolved: {', '.join(open_models)}; next: "
                f"{plan.rungs[plan.position].title}",
            )
        return Reply(verdict, [("planner", verdict.model_dump_json())])

    def conclude(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Per model, what it could do and where it stopped."""
        plan = self._plan(report, env)
        lines = []
        for m in report.models:
            rows = [
                (rec, r) for rec in report.experiments for r in rec.results.models if r.model == m
            ]
            above = [rec for rec, r in rows if r.verdict == "above_chance"]
            if not rows:
                continue
            if len(above) == len(rows):
                hardest = rows[-1][0]
                lines.append(
                    f"{m} can {plan.task}: above chance in all {len(rows)} experiments, the "
                    f"last being E{hardest.index} ({hardest.experiment.difficulty})."
                )
            elif not above:
                lines.append(
                    f"{m} cannot {plan.task} reliably: not above chance in any of "
                    f"{len(rows)} experiments."
                )
            else:
                fails = [rec for rec, r in rows if r.verdict != "above_chance"]
                lines.append(
                    f"{m} can {plan.task} only partly: above chance in "
                    f"{', '.join(f'E{x.index}' for x in above)}; not in "
                    f"{', '.join(f'E{x.index} ({x.experiment.difficulty})' for x in fails)}."
                )
        lines += [f"Note: {n}" for n in plan.notes]
        n_img = report.settings.images_per_answer
        lines.append(
            f"Evidence: {len(report.experiments)} experiments, {n_img} images per answer, "
            "95% cluster-bootstrap intervals against chance."
        )
        return Reply(Conclusions(conclusions=lines[:20]), [("planner", "\n".join(lines))])
