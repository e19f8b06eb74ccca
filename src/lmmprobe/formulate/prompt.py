"""Turning a sample into a request: option order, marks, instruction and chat messages."""

from __future__ import annotations

import random
from functools import lru_cache

from lmmprobe.formulate.options import option_marks, render_options
from lmmprobe.formulate.pools import (
    CHOICE_POOL,
    DYSCA_CHOICE_HINT,
    EXAMPLE_OPTIONS,
    EXAMPLE_QUESTION,
    OPEN_POOL,
    POOLS,
)
from lmmprobe.schema import (
    ContentPart,
    FormulateConfig,
    GenerationParams,
    MarkStyle,
    Message,
    Method,
    Request,
    Sample,
)
from lmmprobe.schema._trusted import trusted

CHOICE_INSTRUCTION = CHOICE_POOL[0]
OPEN_INSTRUCTION = OPEN_POOL[0]
_MARK_STYLES: tuple[MarkStyle, ...] = ("upper", "lower", "number")


def mark_style(sample: Sample, repeat: int, config: FormulateConfig, seed: int) -> MarkStyle:
    """The mark style of one request; ``random`` draws one per (sample, repeat), seeded."""
    if config.option_marks == "random":
        return random.Random(f"{seed}:{sample.id}:{repeat}:marks").choice(_MARK_STYLES)
    return config.option_marks


def default_instruction(
    sample: Sample, config: FormulateConfig, *, repeat: int = 0, style: MarkStyle | None = None
) -> str:
    """The instruction used when the config gives none.

    The pool's first entry, or with ``instruction_pool`` entry ``repeat % len(pool)``; the
    example mark follows the request's mark style.
    """
    index = repeat if config.instruction_pool else 0
    if not sample.is_choice:
        if sample.formulation == "free_form":
            return ""  # Dysca's free-form question carries its own instruction
        pool = POOLS.get(sample.formulation, OPEN_POOL)
        return pool[index % len(pool)]
    if config.method == "likelihood":
        return ""  # options are scored, not shown, so there is nothing to pick from in the text
    mark = option_marks(style or mark_style(sample, repeat, config, 0), 1)[0]
    return CHOICE_POOL[index % len(CHOICE_POOL)].format(mark=mark)


def _example_turns(config: FormulateConfig, style: MarkStyle) -> list[Message]:
    """ReForm-Eval's in-context example as a user turn and the assistant's answer."""
    marks = option_marks(style, len(EXAMPLE_OPTIONS))
    if config.method == "likelihood":
        question, answer = EXAMPLE_QUESTION, EXAMPLE_OPTIONS[0]
    else:
        question = f"{EXAMPLE_QUESTION} {render_options(list(EXAMPLE_OPTIONS), marks)}"
        answer = f"({marks[0]}) {EXAMPLE_OPTIONS[0]}"
    return [_text_message("user", question), _text_message("assistant", answer)]


def _text_message(role: str, text: str) -> Message:
    # Built without validation: roles and texts come from validated samples and configs.
    part = trusted(ContentPart, {"type": "text", "text": text, "image": None})
    return trusted(Message, {"role": role, "content": [part]})


@lru_cache(maxsize=64)
def _image_part(index: int) -> ContentPart:
    # Parts are frozen, so one instance per index serves every request.
    return ContentPart(type="image", image=index)


def option_order(sample: Sample, repeat: int, config: FormulateConfig, seed: int) -> list[int]:
    """Display order of the sample's choices for a repeat.

    Repeat 0 keeps the original order; later repeats are seeded shuffles, or rotations by the
    repeat index under CircularEval.
    """
    n = len(sample.choices or [])
    if config.circular:  # CircularEval: repeat r shows the options rotated by r
        return [(i + repeat) % n for i in range(n)] if n else []
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
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 0:
        raise ValueError(f"repeat must be a non-negative integer, got {repeat!r}")
    config = config or FormulateConfig()
    gen = gen or GenerationParams()
    if gen.temperature > 0 and gen.seed is None:
        # Sampled repeats must differ, and the same run seed must give the same samples.
        gen = gen.model_copy(update={"seed": seed + repeat})
    style = mark_style(sample, repeat, config, seed)
    style_name = config.prompt_style
    if style_name == "auto":
        style_name = "dysca" if sample.metadata.get("prompt_style") == "dysca" else "reform"
    dysca = style_name == "dysca" and sample.is_choice and config.method != "likelihood"
    parts: list[str] = []
    if sample.context:
        parts.append(sample.context)
    parts.append(f"Question: {sample.question}" if dysca else sample.question)
    options: list[str] | None = None
    marks: list[str] | None = None
    order: list[int] | None = None
    method: Method = "generate"
    if sample.is_choice:
        assert sample.choices is not None
        order = option_order(sample, repeat, config, seed)
        options = [sample.choices[i] for i in order]
        marks = option_marks(style, len(options))
        if config.method == "likelihood":
            method = "loglikelihood"
        else:
            if dysca:  # one option per line, as Dysca asks
                parts.extend(f"({m}) {o}" for m, o in zip(marks, options, strict=True))
            else:
                parts.append(render_options(options, marks))
            if config.method == "mark_logprob":
                method = "mark_logprob"
    if config.instruction is not None:
        instruction = config.instruction
    elif dysca:
        instruction = DYSCA_CHOICE_HINT
    else:
        instruction = default_instruction(sample, config, repeat=repeat, style=style)
    if instruction:
        parts.append(instruction)
    text = "\n".join(parts)
    messages: list[Message] = []
    if config.system_prompt:
        messages.append(_text_message("system", config.system_prompt))
    if config.in_context_example and sample.is_choice:
        messages.extend(_example_turns(config, style))
    messages += [_text_message(t.role, t.content) for t in sample.history]
    images = [] if config.blind else list(sample.images)
    user: list[ContentPart] = [_image_part(i) for i in range(len(images))]
    user.append(trusted(ContentPart, {"type": "text", "text": text, "image": None}))
    messages.append(trusted(Message, {"role": "user", "content": user}))
    # Every value below is valid by construction (a validated sample, config and decoding
    # settings, lists built here), so the request is assembled without validating it again.
    return trusted(
        Request,
        {
            "key": "",
            "sample_id": sample.id,
            "repeat": repeat,
            "method": method,
            "messages": messages,
            "prompt": text,
            "images": images,
            "candidates": _candidates(method, options, marks),
            "options": options,
            "marks": marks,
            "order": order,
            "response_prefix": config.response_prefix,
            "gen": gen,
        },
    )
