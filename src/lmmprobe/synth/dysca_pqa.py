"""Dysca's own generator: metadata → prompt, questions, options, answers, as Dysca's code makes them.

Origin: Dysca (Zhang et al., 2024), ``pqa_generate/pqa_generate.py`` of
https://github.com/Benchmark-Dysca/Dysca at commit 442ef7565029ca62756bea79138b63c038cfb7e4
(classes ``Prompt`` and ``QA``, functions ``main`` and ``remove_duplicate_prompts``). This is
lmmprobe's own code; its metadata lists, styles and text templates are Dysca's files, shipped
as ``synth/data/dysca/metadata.json`` (made by ``scripts/dysca_metadata.py``, origin and
license inside).

What is reproduced exactly, quirks included (``tests/synth/test_dysca_pqa.py`` checks it byte
for byte against the output of Dysca's own code):

- the 14 foreground groups of Dysca's ``mapping_dict`` (``face`` asks about age, gender,
  expression and race), whose question majorities are Dysca's 20 subtasks; the free-form
  question of a ``face`` item is labelled ``face``, as in Dysca;
- prompt = the content phrase of the group, ``", "``, the style's prompt with ``" {}."``
  replaced by ``","``; the negative prompt is the style's;
- the order of every random draw (item attributes, then for each question type and majority
  its draws, then the shuffle of the options unless they are True/False), so that a
  `random.Random` seeded like Dysca's ``set_seed(2024)`` gives Dysca's file for the same
  ``prompt_num``;
- Dysca's quirks: clothes, landmark and profession items are asked about a background their
  prompt does not mention (their ``background`` setting is ``[]``, which is not None); a style
  multiple-choice question may repeat a distractor (Dysca checks a style dict against option
  names); a style true/false question may ask about the true style and answer ``False`` (it
  compares a style dict with a name); gender's options are always ``male, female`` and
  expression's the three expressions; the free-form reference adds ``" background"`` to
  backgrounds that already end in it; prompts repeated within a group are dropped after all
  draws (``remove_duplicate_prompts``); numbers are always ``1``.

Where this departs from the released script: its ``__main__`` passes ``tasks=["recognition"]``
for every group, which gives the ``text`` group empty questions (the ``QA`` class only asks
about scene text under ``task == "OCR"``); here the text group uses the OCR task, as Dysca's
released test set does. Dysca's script draws from Python's global `random`; here every draw
comes from one local `random.Random` (same algorithm, same call order), seeded by the caller.
Dysca's post-processing (``pqa_postprocess.py``: random deletion of questions, 13,000-question
caps) is not part of generation and is not applied.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = [
    "GROUPS",
    "QUESTION_TYPES",
    "SUBTASKS",
    "DyscaMetadata",
    "generate_group",
    "generate_pqa",
    "load_metadata",
]

# Dysca's mapping_dict: group → (attributes asked about, background setting). The background
# setting is Dysca's value: "background", [] (asked about anyway: [] is not None) or None.
_MAPPING: dict[str, tuple[tuple[str, ...], str | list[str] | None]] = {
    "face": (("age", "gender", "expression", "race"), "background"),
    "animal": (("color",), "background"),
    "plant": ((), "background"),
    "clothes": (("color",), []),
    "object": (("color",), "background"),
    "food": ((), "background"),
    "landmark": ((), []),
    "action": ((), "background"),
    "celebrity": ((), "background"),
    "profession": ((), []),
    "movie": ((), []),
    "tv show": ((), []),
    "anime": ((), []),
    "text": ((), []),
}

GROUPS: tuple[str, ...] = tuple(_MAPPING)
"""Dysca's 14 foreground groups, in the order its ``overall`` run makes them."""

SUBTASKS: tuple[str, ...] = (
    "style",
    "background",
    "color",
    "animal",
    "object",
    "plant",
    "food",
    "age",
    "gender",
    "expression",
    "race",
    "celebrity",
    "action",
    "text",
    "clothes",
    "movie",
    "anime",
    "landmark",
    "profession",
    "tv show",
)
"""Dysca's 20 perceptual subtasks (the ``question_majority`` of its questions)."""

QUESTION_TYPES: tuple[str, ...] = ("multi choice", "true or false", "image caption")
"""Dysca's question types, in the order it asks them."""

_OBJECTS = ("animal", "plant", "clothes", "object", "food", "landmark")
_PEOPLE = ("action", "celebrity", "profession")
_SCENES = ("tv show", "movie", "anime")


@dataclass(frozen=True)
class DyscaMetadata:
    """Dysca's metadata lists, styles and scene-text templates (package data).

    Attributes:
        lists: Each of Dysca's ``.txt`` lists as its generator reads it, by Dysca's key.
        styles: The style records (``name``, ``prompt``, ``negative_prompt``).
        text_templates: The scene-text prompt templates (``template`` holds ``{}``).
        origin: Repository, commit, paths and license of the files.

    """

    lists: dict[str, list[str]]
    styles: list[dict[str, str]]
    text_templates: list[dict[str, str]]
    origin: dict[str, Any]


@cache
def load_metadata() -> DyscaMetadata:
    """Dysca's metadata as shipped with lmmprobe (read once)."""
    text = (
        resources.files("lmmprobe.synth")
        .joinpath("data/dysca/metadata.json")
        .read_text(encoding="utf-8")
    )
    data = json.loads(text)
    return DyscaMetadata(
        lists=data["lists"],
        styles=data["styles"],
        text_templates=data["text_templates"],
        origin=data["origin"],
    )


@dataclass(frozen=True)
class _Picture:
    """Dysca's PictureInfo with its Attribute flattened."""

    kind: str
    foreground: str
    background: str | None
    style: dict[str, str]
    number: str = "1"
    color: str = ""
    age: str = ""
    gender: str = ""
    expression: str = ""
    race: str = ""
    template: str = ""  # the scene-text prompt, with the text filled in


def _content(p: _Picture) -> str:
    """Dysca's ``Prompt.generate_content``: the phrase that names what the image shows."""
    number = p.number + " " if p.number != "" else ""
    color = p.color + " " if p.color != "" else ""
    if p.kind == "text":
        return p.template
    if p.kind == "celebrity":
        return f"face portrait of {p.foreground} ,{p.background}"
    if p.kind == "object":
        return f"{number}{color}{p.foreground},{p.background}"
    if p.kind in ("animal", "plant", "food"):
        return f"{number}{color}{p.foreground}, {p.background}"
    if p.kind == "clothes":
        return f"{number}{color}{p.foreground}"
    if p.kind == "landmark":
        return f"the overall {p.foreground}"
    if p.kind == "profession":
        return f"{p.number} {p.foreground}"
    if p.kind in _SCENES:
        return f"a scene from {p.foreground}"
    if p.kind == "face":
        return f"face portrait of a {p.age} {p.gender}, {p.race}, {p.expression}, {p.background}"
    if p.kind == "action":
        return f"a person {p.foreground}, {p.background}"
    return ""


def _prompt(p: _Picture) -> tuple[str, str]:
    """Dysca's ``Prompt.generate_prompt_pair``: (prompt, negative prompt)."""
    style_prompt = p.style["prompt"].replace(" {}.", ",")
    return _content(p) + ", " + style_prompt, p.style["negative_prompt"]


# What a question about each majority asks, and where its truth and its list come from.
_MC_TEXT: dict[str, str] = {
    "celebrity": "Who is the celebrity in the image?",
    "landmark": "What is the landmark in the image?",
    "profession": "What is the occupation of the person in the picture?",
    "age": "How old is the person in the image?",
    "gender": "What is the gender of the person in the picture?",
    "race": "What is the race of the person in the picture?",
    "expression": "What is the expression of the person in the picture",
    "action": "What is the person doing in the picture?",
    "style": "What is the style of the picture?",
    "background": "What is the background in the picture?",
}
_TF_TEXT: dict[str, str] = {
    "celebrity": "Is the celebrity in the picture {} ?",
    "landmark": "Is the landmark in the picture {} ?",
    "profession": "Is the person in the picture a {} ?",
    "age": "Is the age of the person in the picture about {} ?",
    "race": "Is the person in the picture {} ?",
    "expression": "Is the person in the picture {} ?",
    "action": "Is the person in the picture {} ?",
    "style": "Is the picture {} style ?",
    "background": "Is the background in the picture {} ?",
}


def _truth(p: _Picture, majority: str) -> str:
    if majority in ("age", "gender", "race", "expression", "color"):
        return str(getattr(p, majority))
    if majority == "background":
        assert p.background is not None
        return p.background
    if majority == "style":
        return p.style["name"]
    return p.foreground


def _multi_choice(
    rng: random.Random, meta: DyscaMetadata, p: _Picture, majority: str, task: str
) -> tuple[str, str, list[str]]:
    if task == "OCR":
        majority = "text"
        question = "What are all the scene text in the image?"
    elif majority in ("animal", "plant", "clothes", "object", "food"):
        question = f"What is the {majority} in the image?"
    elif majority in _SCENES:
        question = f"Which {majority} is the scene in the picture from?"
    elif majority == "color":
        question = f"What is the color of the {p.foreground} in the picture?"
    elif majority in _MC_TEXT:
        question = _MC_TEXT[majority]
    else:  # Dysca asks nothing (e.g. scene text under the recognition task)
        return "", "", []
    truth = _truth(p, majority)
    if majority == "gender":
        return question, truth, ["male", "female"]
    if majority == "expression":
        return question, truth, ["smiling happily", "shouting furiously", "calm and placid"]
    options = [truth]
    if majority == "style":
        # Dysca compares a style record with the options' names, so only the true style
        # itself is refused: distractors may repeat.
        for _ in range(3):
            neg = rng.choice(meta.styles)
            while neg == p.style:
                neg = rng.choice(meta.styles)
            options.append(neg["name"])
        return question, truth, options
    items = meta.lists[majority]
    for _ in range(3):
        neg_item = rng.choice(items)
        while neg_item == truth or neg_item in options:
            neg_item = rng.choice(items)
        options.append(neg_item)
    return question, truth, options


def _true_false(
    rng: random.Random, meta: DyscaMetadata, p: _Picture, majority: str, task: str
) -> tuple[str, str, list[str]]:
    if task == "OCR":
        majority = "text"
    elif majority not in _TF_MAJORITIES:  # Dysca asks nothing
        return "", "", []
    options = ["True", "False"]
    truth = _truth(p, majority)
    if rng.random() > 0.5:
        if majority == "gender":
            asked = "female" if truth == "male" else "male"
        elif majority == "style":
            # Dysca compares a style record with the true style's name (never equal), so the
            # negative may be the true style, still answered False.
            asked = rng.choice(meta.styles)["name"]
        else:
            items = meta.lists[majority]
            asked = rng.choice(items)
            while asked == truth:
                asked = rng.choice(items)
        answer = "False"
    else:
        asked, answer = truth, "True"
    return _tf_question(p, majority, asked), answer, options


_TF_MAJORITIES = frozenset(
    {*_TF_TEXT, "animal", "plant", "clothes", "object", "food", *_SCENES, "gender", "color"}
)


def _tf_question(p: _Picture, majority: str, asked: str) -> str:
    if majority == "text":
        return f"Is the scene text in the picture '{asked}' ?"
    if majority in ("animal", "plant", "clothes", "object", "food"):
        return f"Is there a {asked} in the picture?"
    if majority in _SCENES:
        return f"Is the scene in the picture from the {majority} {asked} ?"
    if majority == "gender":
        # Dysca's negative question has no space before "?", its positive one has.
        return (
            f"Is the person in the picture a {asked}?"
            if asked != p.gender
            else f"Is the person in the picture a {asked} ?"
        )
    if majority == "color":
        return f"Is the color of the {p.foreground} in the picture {asked} ?"
    return _TF_TEXT[majority].format(asked)


def _caption(p: _Picture, majority: str, task: str) -> tuple[str, str]:
    aspects = "Please describe the image. You can describe it from these aspects: "
    style = p.style["name"] + " style"
    background = f"{p.background} background"
    if task == "OCR":
        return "Please describe all the scene text in the image.", p.foreground
    if task != "recognition":
        return "", ""
    if majority == "celebrity":
        q = "the identity of the person, the background, the artistic style of the image."
        return aspects + q, f"{p.foreground}, {background}, {style}"
    if majority in ("object", "animal"):
        q = "the subject of the image, its color, the background, the artistic style of the image."
        return aspects + q, f"{p.color} {p.foreground}, {background}, {style}"
    if majority == "clothes":
        q = "the subject of the image, its color, the artistic style of the image."
        return aspects + q, f"{p.color} {p.foreground}, {style}"
    if majority in ("plant", "food"):
        q = "the subject of the image, the background, the artistic style of the image."
        return aspects + q, f"{p.foreground}, {background}, {style}"
    if majority == "landmark":
        q = "the subject of the image, the artistic style of the image."
        return aspects + q, f"{p.foreground}, {style}"
    if majority == "profession":
        q = (
            "the subject of the image, the profession of the person, the background, "
            "the artistic style of the image."
        )
        return aspects + q, f"{p.foreground}, {style}"
    if majority in _SCENES:
        q = f"the {majority} from which the scene is made, the artistic style of the image."
        return aspects + q, f"{p.foreground}, {style}"
    if majority == "face":
        q = (
            "the person's gender, age, facial expression, race, the background, "
            "the artistic style of the image."
        )
        answer = f"{p.gender}, {p.age}, {p.expression}, {p.race}, {background}, {style}"
        return aspects + q, answer
    if majority == "action":
        q = "the action of the person, the background, the artistic style of the image."
        return aspects + q, f"{p.foreground}, {background}, {style}"
    return "", ""


def _qa(
    rng: random.Random,
    meta: DyscaMetadata,
    p: _Picture,
    task: str,
    question_type: str,
    majority: str,
) -> dict[str, Any]:
    """Dysca's ``QA``: one question record, in the layout of its PQA files."""
    options: list[str] = []
    if question_type == "multi choice":
        question, answer, options = _multi_choice(rng, meta, p, majority, task)
    elif question_type == "true or false":
        question, answer, options = _true_false(rng, meta, p, majority, task)
    else:
        question, answer = _caption(p, majority, task)
    if "True" not in options:
        rng.shuffle(options)
    return {
        "question": question,
        "answer": answer,
        "options": options,
        "task": task,
        "question_type": question_type,
        "question_majority": majority,
    }


def _majorities(group: str) -> list[str]:
    """The majorities a group's choice questions ask about, in Dysca's order."""
    attributes, background = _MAPPING[group]
    if group == "face":
        out = list(attributes)
    elif group in _SCENES or group == "text":
        return [group] if group == "text" else [group, "style"]
    else:
        out = [group, *(["color"] if "color" in attributes else [])]
    if background is not None:
        out.append("background")
    out.append("style")
    return out


def _draw(rng: random.Random, meta: DyscaMetadata, group: str) -> _Picture:
    """One item's metadata, drawn in Dysca's order for its group."""
    styles = meta.styles
    lists = meta.lists
    if group == "text":
        text = rng.choice(lists["text"])
        template = rng.choice(meta.text_templates)["template"].format(text)
        style = rng.choice(styles)
        # The prompt shows the filled template; the questions ask about the text itself.
        return _Picture("text", text, None, style, template=template)
    if group == "face":
        age = rng.choice(lists["age"])
        gender = rng.choice(lists["gender"])
        race = rng.choice(lists["race"])
        expression = rng.choice(lists["expression"])
        background = rng.choice(lists["background"])
        style = rng.choice(styles)
        return _Picture(
            "face", "face", background, style, age=age, gender=gender, race=race,
            expression=expression,
        )  # fmt: skip
    if group in _OBJECTS:
        obj = rng.choice(lists[group])
        color = rng.choice(lists["color"]) if "color" in _MAPPING[group][0] else ""
        number = rng.choice(["1"])
        background = rng.choice(lists["background"])
        style = rng.choice(styles)
        return _Picture(group, obj, background, style, number=number, color=color)
    if group in _PEOPLE:
        foreground = rng.choice(lists[group])
        background = rng.choice(lists["background"])
        style = rng.choice(styles)
        return _Picture(group, foreground, background, style)
    foreground = rng.choice(lists[group])
    style = rng.choice(styles)
    return _Picture(group, foreground, None, style)


def generate_group(
    rng: random.Random,
    group: str,
    prompt_num: int,
    meta: DyscaMetadata | None = None,
    *,
    details: bool = False,
) -> list[dict[str, Any]]:
    """Dysca's ``main`` for one group: `prompt_num` items, repeated prompts dropped.

    Args:
        rng: The random stream every draw comes from (Dysca: the global one, seeded 2024).
        group: One of `GROUPS`.
        prompt_num: Items to draw (Dysca's ``--prompt_num``); fewer remain when a prompt
            repeats.
        meta: Dysca's metadata (default: the shipped lists).
        details: Add ``metadata`` to each record: the drawn item (``group``, ``style`` name,
            ``background``, ``foreground``, ``color``, ``age``, ``gender``, ``expression``,
            ``race``; the scene ``text`` for the text group). Off, records are Dysca's.

    Returns:
        Records in the layout of Dysca's PQA files: ``id`` (1-based, before repeats are
        dropped), ``prompt``, ``negative_prompt``, ``q_a`` (``question``, ``answer``,
        ``options``, ``task``, ``question_type``, ``question_majority``).

    Raises:
        ValueError: Unknown group.

    """
    if group not in _MAPPING:
        raise ValueError(f"unknown Dysca group {group!r} (known: {', '.join(GROUPS)})")
    meta = meta or load_metadata()
    task = "OCR" if group == "text" else "recognition"
    majorities = _majorities(group)
    caption_majority = group
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index in range(prompt_num):
        picture = _draw(rng, meta, group)
        prompt, negative = _prompt(picture)
        qas = []
        for question_type in QUESTION_TYPES:
            if question_type == "image caption":
                qas.append(_qa(rng, meta, picture, task, question_type, caption_majority))
            else:
                for majority in majorities:
                    qas.append(_qa(rng, meta, picture, task, question_type, majority))
        record: dict[str, Any] = {
            "id": index + 1,
            "prompt": prompt,
            "negative_prompt": negative,
            "q_a": qas,
        }
        if details:
            record["metadata"] = _details(group, picture)
        if prompt not in seen:  # remove_duplicate_prompts: the first of a prompt stays
            seen.add(prompt)
            records.append(record)
    return records


def _details(group: str, p: _Picture) -> dict[str, Any]:
    out: dict[str, Any] = {"group": group, "style": p.style["name"], "background": p.background}
    if group == "text":
        out["text"] = p.foreground
    elif group != "face":
        out["foreground"] = p.foreground
    for key in ("color", "age", "gender", "expression", "race"):
        if getattr(p, key):
            out[key] = getattr(p, key)
    return out


def generate_pqa(
    seed: int, prompt_num: int, groups: tuple[str, ...] = GROUPS, *, details: bool = False
) -> list[tuple[str, list[dict[str, Any]]]]:
    """Dysca's ``overall`` run: every group in turn from one stream ``Random(seed)``.

    With ``seed=2024`` (Dysca's ``set_seed``) this is what Dysca's ``pqa_generate.py`` writes
    for the same ``--prompt_num`` (its text group under the OCR task; module docstring).

    Args:
        seed: Seed of the stream.
        prompt_num: Items drawn per group.
        groups: Groups to make, each in Dysca's order whatever the order given.
        details: Add each item's drawn metadata (`generate_group`).

    Returns:
        (group, records) per group, in Dysca's order.

    """
    bad = [g for g in groups if g not in _MAPPING]
    if bad:
        raise ValueError(f"unknown Dysca groups {bad} (known: {', '.join(GROUPS)})")
    rng = random.Random(seed)
    meta = load_metadata()
    return [
        (g, generate_group(rng, g, prompt_num, meta, details=details))
        for g in GROUPS
        if g in groups
    ]
