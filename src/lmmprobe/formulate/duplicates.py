"""ReForm-Eval's duplicates: what repeat ``r`` of a ReForm-Eval sample asks, as its class asks it.

ReForm-Eval (Li et al., 2023; FudanDISC/ReForm-Eval @ df1cfa7b, each dataset class's
``__getitem__`` under ``build/``) duplicates every sample N times. With ``random_instruct``,
duplicate ``r = index % N`` asks entry ``r % 5`` of the class's instruction list, and where the
class (or the item) holds several wordings of the question, wording ``r % len`` of those; under
likelihood inference the classes switch to their likelihood lists and the preprocessor shows no
options (``instruct + ' ' + question``). With ``shuffle_options`` every duplicate's options are
reshuffled (``random.shuffle``, unseeded): lmmprobe shuffles each of a run's repeats with a
seeded generator instead, so a run is reproducible. The caption classes ask wording
``r % 5`` when N > 1 and draw one with ``random.choice`` when N = 1: lmmprobe draws it seeded by
the run seed and the sample id.

A sample loaded from a ``reform-eval-*`` dataset carries its class's lists in
``metadata["reform_wordings"]`` (`WORDINGS`); other samples are asked as before.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from lmmprobe.schema import Sample

WORDINGS = "reform_wordings"
"""The metadata key: ``{"instruct"|"question": {"generate"|"likelihood": [wordings]}}``;
``"one_duplicate": "random"`` where a single duplicate draws its wording at random."""


def duplicates(sample: Sample) -> bool:
    """Whether `sample` carries ReForm-Eval's per-duplicate wordings."""
    return isinstance(sample.metadata.get(WORDINGS), dict)


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _pick(
    wordings: dict[str, Any], part: str, method: str, repeat: int, draw: random.Random | None
) -> str | None:
    lists = wordings.get(part)
    if not isinstance(lists, dict):
        return None
    listed = lists.get(method) or lists.get("generate")
    if not isinstance(listed, list) or not listed:
        return None
    if draw is not None:
        return str(draw.choice(listed))
    return str(listed[repeat % len(listed)])


def duplicate(
    sample: Sample, repeat: int, *, likelihood: bool = False, repeats: int = 1, seed: int = 0
) -> Sample:
    """`sample` as ReForm-Eval's duplicate `repeat` of `repeats` asks it.

    Args:
        sample: A sample; one without `WORDINGS` is returned unchanged.
        repeat: The duplicate (``index % N``).
        likelihood: Likelihood inference: the likelihood lists, and the instruct put before
            the question (no options are shown).
        repeats: The run's number of repeats (N); 1 makes a caption draw its wording.
        seed: The run seed (the caption's draw).

    Returns:
        The sample with this duplicate's question, instruct and template.

    """
    wordings = sample.metadata.get(WORDINGS)
    if not isinstance(wordings, dict):
        return sample
    method = "likelihood" if likelihood else "generate"
    draw = None
    if repeats == 1 and wordings.get("one_duplicate") == "random":
        draw = random.Random(f"{seed}:{sample.id}:wording")
    instruct = _pick(wordings, "instruct", method, repeat, None)
    question = _pick(wordings, "question", method, repeat, draw)
    update: dict[str, Any] = {}
    if question is not None:
        update["question"] = question
    if instruct is not None:
        old = sample.metadata.get("instruct")
        update["metadata"] = {**sample.metadata, "instruct": instruct}
        prefix = _escape(old) + " " if isinstance(old, str) else None
        if sample.prompt is not None and prefix and sample.prompt.template.startswith(prefix):
            rest = sample.prompt.template[len(prefix) :]
            update["prompt"] = dataclasses.replace(
                sample.prompt, template=_escape(instruct) + " " + rest
            )
        if likelihood:
            # The preprocessor joins instruct and question; the options are scored, not shown.
            update["question"] = f"{instruct} {update.get('question', sample.question)}"
    return sample.model_copy(update=update) if update else sample


def duplicate_order(sample: Sample, repeat: int, seed: int) -> list[int]:
    """The option order of duplicate `repeat` under ``shuffle_options``: every one shuffled.

    Seeded as lmmprobe's repeat shuffles are (`option_order`), so repeats after the first keep
    the order a shuffled run gives them; the first is shuffled too, as ReForm-Eval's is.
    """
    order = list(range(len(sample.choices or ())))
    random.Random(f"{seed}:{sample.id}:{repeat}").shuffle(order)
    return order
