"""Reading an English research question into what the rules orchestrator plans for.

Origin: APEx (Conti et al.) has an LLM read the query; the offline ``rules`` orchestrator reads
the query families of APEx's evaluation with these rules instead. Supported forms:

- "Can models identify {data type} in images?" for Udandarao et al.'s 27 visual data types
  (with synonyms, `lmmprobe.apex.datatypes`) and every transform tool by name
  ("... rotated images?", "... JPEG compression?", "... RotateImage?");
- "Can models identify {geometric|pixel|style|semantic} transformations?" (also "changes",
  "edits", "perturbations"...);
- "Can models recognize {class or class group}?": a class such as dogs, a renderer group such
  as vehicles, a planner set such as fruits (`CLASS_SETS`), or a retrieval collection's taxonomy
  group; "breeds of dogs" and the like are read as the class, with a note;
- any of these followed by "under / despite / with / in / after {data type}": the data type is
  applied to every image, and "heavy", "slight" and the like choose its severity.

`read_query` returns a `QueryReading`; `lmmprobe.apex.plans` turns it into a plan of experiments
from its family's ladder (`lmmprobe.apex.ladders`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from lmmprobe.apex.datatypes import APEX27, GROUPS, DataType, Group, find_data_type
from lmmprobe.apex.protocol import PlanningEnv, QueryError

Severity = Literal["strong", "mild"]

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
    "animals": "animal", "foods": "food", "food items": "food", "plants": "plant",
    "objects": "object", "things": "object", "household objects": "object",
    "clothes": "clothing", "clothing items": "clothing", "garments": "clothing",
    "sports": "sport", "sport equipment": "sport", "sports equipment": "sport",
    "buildings": "building", "vehicles": "vehicle", "shapes": "shape", "geometric shapes": "shape",
    "fruits": "fruit", "vegetables": "vegetable", "birds": "bird", "insects": "insect",
    "sea animals": "sea animal", "marine animals": "sea animal", "farm animals": "farm animal",
    "reptiles": "reptile", "flowers": "flower", "trees": "tree", "desserts": "dessert",
    "sweets": "dessert", "drinks": "drink", "beverages": "drink", "tools": "tool",
    "boats": "boat", "ships": "boat", "aircrafts": "aircraft", "planes": "aircraft",
    "cars": "car", "balls": "ball",
}  # fmt: skip
"""Words a query may use for a group or a planner set → its name."""

_STRONG = re.compile(r"\b(heavy|heavily|strong|strongly|severe|severely|extreme|intense|lots of)\b")
_MILD = re.compile(r"\b(slight|slightly|mild|mildly|light|lightly|subtle|little|weak|a bit of)\b")
_VERBS = (
    r"recogni[sz]e|identify|classify|distinguish|differentiate|discriminate|tell apart|tell|"
    r"detect|see|spot|name|notice|perceive|understand|find"
)
# Tried in this order; the last occurrence of a word splits subject from condition.
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
_IRREGULAR = {"mice": "mouse", "geese": "goose", "people": "person", "teeth": "tooth",
              "knives": "knife", "leaves": "leaf", "wolves": "wolf", "fish": "fish",
              "sheep": "sheep", "buses": "bus", "glasses": "glasses"}  # fmt: skip


def supported_forms(env: PlanningEnv | None = None) -> str:
    """The message for a query the rules orchestrator cannot plan (lists what it can)."""
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Condition:
    """A data type applied to every image of a query ("... under heavy blur")."""

    data_type: DataType
    severity: Severity


@dataclass(frozen=True)
class QueryReading:
    """How a query was read.

    Attributes:
        target: A data type ("identify rotated images"), a data type group ("identify
            geometric transformations") or a recognition subject ("recognize dogs").
        condition: What every image goes through, or None.

    """

    target: DataType | Group | Subject
    condition: Condition | None = None

    @property
    def family(self) -> Literal["data_type", "group", "recognition"]:
        """The query family, which picks the ladder of experiments."""
        if isinstance(self.target, DataType):
            return "data_type"
        if isinstance(self.target, Subject):
            return "recognition"
        return "group"


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 \-]+", " ", text.lower().replace("_", " ")).split())


def _singulars(phrase: str) -> list[str]:
    words = phrase.split()
    if not words:
        return []
    last = words[-1]
    options = [last]
    if last in _IRREGULAR:
        options.append(_IRREGULAR[last])
    if last.endswith("ies") and len(last) > 4:
        options.append(last[:-3] + "y")
    if last.endswith("es") and re.search(r"(s|x|z|ch|sh|o)es$", last):
        options.append(last[:-2])
    if last.endswith("s") and not last.endswith("ss"):
        options.append(last[:-1])
    return [" ".join([*words[:-1], w]) for w in dict.fromkeys(options)]


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


def _severity(text: str) -> Severity:
    return "mild" if _MILD.search(text) and not _STRONG.search(text) else "strong"


def _subject_text(text: str) -> str:
    m = re.search(rf"\b(?:{_VERBS})\b(.*)$", text)
    return (m.group(1) if m else text).strip()


def _split_condition(text: str, env: PlanningEnv) -> tuple[str, Condition | None]:
    """The subject part of the query and its condition ("... under heavy blur"), if any."""
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
            return head, Condition(found[0], _severity(tail))
    return text, None


def read_query(query: str, env: PlanningEnv) -> QueryReading:
    """Read a query into its target and condition (see the module docstring for the forms).

    Raises:
        QueryError: The query fits no supported form (the message lists them).

    """
    # Tool names are CamelCase ("RotateImage"): split them into words before lowercasing.
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", query)
    text = " ".join(spaced.lower().replace("?", " ").replace("-", " ").split())
    if not text:
        raise QueryError("the query is empty; " + supported_forms(env))
    subject_part, condition = _split_condition(text, env)
    group_m = _GROUP_QUERY.search(subject_part)
    if group_m:
        g = group_m.group(1).replace("pixel-level", "pixel").replace("stylistic", "style")
        group: Group = next(x for x in GROUPS if x == g)
        return QueryReading(group, condition)
    # A class or group the images can show wins over a data type synonym ("shapes").
    subject = resolve_subject(_subject_text(subject_part), env)
    if subject is not None:
        return QueryReading(subject, condition)
    found = find_data_type(_subject_text(subject_part)) or find_data_type(subject_part)
    if found is not None:
        return QueryReading(found[0], condition)
    raise QueryError(f"cannot plan for {query!r}; " + supported_forms(env))
