"""Turning a sample into a request: option order, marks, instruction and chat messages."""

from __future__ import annotations

import random
from functools import lru_cache

from lmmprobe.formulate.options import option_marks, render_options
from lmmprobe.schema import (
    ContentPart,
    FormulateConfig,
    GenerationParams,
    Message,
    Method,
    Request,
    Sample,
)

CHOICE_INSTRUCTION = "Answer with the option's mark from the given choices directly, e.g. ({mark})."
OPEN_INSTRUCTION = "Answer the question briefly."


def default_instruction(sample: Sample, config: FormulateConfig) -> str:
    """The instruction used when the config gives none; the example mark follows the style."""
    if not sample.is_choice:
        return OPEN_INSTRUCTION
    if config.method == "likelihood":
        return ""  # options are scored, not shown, so there is nothing to pick from in the text
    return CHOICE_INSTRUCTION.format(mark=option_marks(config.option_marks, 1)[0])


@lru_cache(maxsize=64)
def _image_part(index: int) -> ContentPart:
    # Parts are frozen, so one instance per index serves every request.
    return ContentPart(type="image", image=index)


def option_order(sample: Sample, repeat: int, config: FormulateConfig, seed: int) -> list[int]:
    """Display order of the sample's choices for a repeat: original first, then seeded shuffles."""
    n = len(sample.choices or [])
    order = list(range(n))
    if repeat > 0 and config.shuffle_repeats:
        random.Random(f"{seed}:{sample.id}:{repeat}").shuffle(order)
    return order


def _candidates(
    method: Method, options: list[str] | None, marks: list[str] | None
) -> list[str] | None:
    if method == "loglikelihood":
        return list(options or [])
    if method == "mark_logprob":
        return list(marks or [])
    return None


def formulate(
    sample: Sample,
    *,
    repeat: int = 0,
    config: FormulateConfig | None = None,
    gen: GenerationParams | None = None,
    seed: int = 0,
) -> Request:
    """Build the request asking `sample` (its key is set later by the runner).

    Choice samples under generation show their options with marks and an instruction; under
    likelihood inference the options are not shown and become the request's candidates.
    Open-ended samples are always generated.
    """
    config = config or FormulateConfig()
    gen = gen or GenerationParams()
    if gen.temperature > 0 and gen.seed is None:
        # Sampled repeats must differ, and the same run seed must give the same samples.
        gen = gen.model_copy(update={"seed": seed + repeat})
    parts: list[str] = []
    if sample.context:
        parts.append(sample.context)
    parts.append(sample.question)
    options: list[str] | None = None
    marks: list[str] | None = None
    order: list[int] | None = None
    method: Method = "generate"
    if sample.is_choice:
        assert sample.choices is not None
        order = option_order(sample, repeat, config, seed)
        options = [sample.choices[i] for i in order]
        marks = option_marks(config.option_marks, len(options))
        if config.method == "likelihood":
            method = "loglikelihood"
        else:
            parts.append(render_options(options, marks))
            if config.method == "mark_logprob":
                method = "mark_logprob"
    instruction = (
        config.instruction
        if config.instruction is not None
        else default_instruction(sample, config)
    )
    if instruction:
        parts.append(instruction)
    text = "\n".join(parts)
    messages: list[Message] = []
    if config.system_prompt:
        messages.append(
            Message(role="system", content=[ContentPart(type="text", text=config.system_prompt)])
        )
    messages.extend(
        Message(role=t.role, content=[ContentPart(type="text", text=t.content)])
        for t in sample.history
    )
    user = [_image_part(i) for i in range(len(sample.images))]
    user.append(ContentPart(type="text", text=text))
    messages.append(Message(role="user", content=user))
    return Request(
        sample_id=sample.id,
        repeat=repeat,
        method=method,
        messages=messages,
        prompt=text,
        images=list(sample.images),
        candidates=_candidates(method, options, marks),
        options=options,
        marks=marks,
        order=order,
        gen=gen,
    )
