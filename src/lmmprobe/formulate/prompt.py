"""Turning a sample into a request: option order, marks, instruction and chat messages."""

from __future__ import annotations

import random

from lmmprobe.formulate.ask import Ask, Turn
from lmmprobe.formulate.duplicates import duplicate, duplicate_order, duplicates
from lmmprobe.formulate.frame_texts import place
from lmmprobe.formulate.options import option_marks, render_options
from lmmprobe.formulate.pools import (
    CHOICE_POOL,
    EXAMPLE_OPTIONS,
    EXAMPLE_QUESTION,
    OPEN_POOL,
    POOLS,
)
from lmmprobe.formulate.styles import PROMPT_STYLES, ChoicePrompt, PromptStyle
from lmmprobe.formulate.styles.benchmark import whole_prompt
from lmmprobe.schema import FormulateConfig, GenerationParams, MarkStyle, Method, Request, Sample
from lmmprobe.schema.frame_texts import FRAME_TEXTS, frame_texts
from lmmprobe.schema.sample import CHOICE_FORMULATIONS

CHOICE_INSTRUCTION = CHOICE_POOL[0]
OPEN_INSTRUCTION = OPEN_POOL[0]
_MARK_STYLES: tuple[MarkStyle, ...] = ("upper", "lower", "number")


def fixed_options(sample: Sample) -> bool:
    """Whether the sample's options must be shown as published: in order, marked A, B, C...

    A benchmark whose question text already holds its lettered options (MMStar,
    RealWorldQA) sets ``metadata["fixed_options"] = True``: the model sees those letters
    whatever the run's shuffle, rotation or mark settings, so the request keeps them too and
    the matcher reads the model's letter as the option the text gave it.
    """
    return sample.metadata.get("fixed_options") is True


def mark_style(sample: Sample, repeat: int, config: FormulateConfig, seed: int) -> MarkStyle:
    """The mark style of one request; ``random`` draws one per (sample, repeat), seeded."""
    if fixed_options(sample):
        return "upper"
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


def _example_turns(config: FormulateConfig, style: MarkStyle) -> tuple[Turn, ...]:
    """ReForm-Eval's in-context example as a user turn and the assistant's answer."""
    marks = option_marks(style, len(EXAMPLE_OPTIONS))
    if config.method == "likelihood":
        question, answer = EXAMPLE_QUESTION, EXAMPLE_OPTIONS[0]
    else:
        question = f"{EXAMPLE_QUESTION} {render_options(list(EXAMPLE_OPTIONS), marks)}"
        answer = f"({marks[0]}) {EXAMPLE_OPTIONS[0]}"
    return (("user", question), ("assistant", answer))


def option_order(sample: Sample, repeat: int, config: FormulateConfig, seed: int) -> list[int]:
    """Display order of the sample's choices for a repeat.

    Repeat 0 keeps the original order; later repeats are seeded shuffles, or rotations by the
    repeat index under CircularEval; a sample with `fixed_options` keeps its order.
    """
    n = len(sample.choices or [])
    if fixed_options(sample):
        return list(range(n))
    if config.circular:  # CircularEval: repeat r shows the options rotated by r
        return [(i + repeat) % n for i in range(n)] if n else []
    order = list(range(n))
    if repeat > 0 and config.shuffle_repeats:
        random.Random(f"{seed}:{sample.id}:{repeat}").shuffle(order)
    return order


def _candidates(
    method: Method, options: list[str] | None, marks: list[str] | None
) -> list[str] | None:
    if method == "likelihood":
        return list(options or [])
    if method == "mark_logprob":
        return list(marks or [])
    return None


class Formulator:
    """Builds the asks of one formulation config, decoding settings and seed.

    What depends only on the config (the system turn, the in-context example per mark style,
    the default instruction per formulation, mark style and pool entry, the decoding settings
    per repeat) is worked out once and reused for every sample of a run.
    """

    def __init__(
        self,
        config: FormulateConfig | None = None,
        gen: GenerationParams | None = None,
        seed: int = 0,
        repeats: int = 1,
    ) -> None:
        """Prepare for `config` (default: `FormulateConfig()`), `gen` and the run `seed`.

        `repeats` is the run's number of repeats: ReForm-Eval's duplicates (samples loaded
        from ``reform-eval-*``) shuffle every repeat's options when there are several, and a
        caption draws its wording when there is one (`lmmprobe.formulate.duplicates`).
        """
        self.config = config = config or FormulateConfig()
        self.gen = gen or GenerationParams()
        self.seed = seed
        self.repeats = repeats
        self._system: tuple[Turn, ...] = (
            (("system", config.system_prompt),) if config.system_prompt else ()
        )
        self._examples: dict[MarkStyle, tuple[Turn, ...]] = {}
        self._instructions: dict[tuple[str, MarkStyle, int], str] = {}
        self._gens: dict[int, GenerationParams] = {}
        self._marks: dict[tuple[MarkStyle, int], list[str]] = {}
        # Resolved now, so an unknown name fails before anything is asked.
        self._prompt_style: PromptStyle = PROMPT_STYLES.get(config.prompt_style)
        # Config fields read for every ask, held as plain attributes.
        self._style = config.option_marks
        self._method = config.method
        self._circular = config.circular
        self._shuffle = config.shuffle_repeats
        self._blind = config.blind
        self._pool = config.instruction_pool
        self._fixed_gen = None if self.gen.temperature > 0 and self.gen.seed is None else self.gen

    def _gen_for(self, repeat: int) -> GenerationParams:
        # Sampled repeats must differ, and the same run seed must give the same samples.
        known = self._gens.get(repeat)
        if known is None:
            known = self._gens[repeat] = self.gen.model_copy(update={"seed": self.seed + repeat})
        return known

    def _instruction(self, sample: Sample, repeat: int, style: MarkStyle) -> str:
        index = repeat if self.config.instruction_pool else 0
        memo = (sample.formulation, style, index)
        known = self._instructions.get(memo)
        if known is None:
            known = self._instructions[memo] = default_instruction(
                sample, self.config, repeat=repeat, style=style
            )
        return known

    def _example(self, style: MarkStyle) -> tuple[Turn, ...]:
        known = self._examples.get(style)
        if known is None:
            known = self._examples[style] = _example_turns(self.config, style)
        return known

    def _marks_for(self, style: MarkStyle, n: int) -> list[str]:
        known = self._marks.get((style, n))
        if known is None:
            known = self._marks[(style, n)] = option_marks(style, n)
        return known

    def ask(self, sample: Sample, repeat: int = 0) -> Ask:
        """Plan how `sample` is asked on `repeat` (its key is set later by the runner).

        Choice samples under generation show their options with marks and an instruction;
        under likelihood inference the options are not shown and become the candidates.
        Open-ended samples are always generated.
        """
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 0:
            raise ValueError(f"repeat must be a non-negative integer, got {repeat!r}")
        config = self.config
        reform = duplicates(sample)
        if reform:
            # ReForm-Eval's duplicate: its class's wording for this repeat and method.
            sample = duplicate(
                sample,
                repeat,
                likelihood=self._method == "likelihood" and sample.is_choice,
                repeats=self.repeats,
                seed=self.seed,
            )
        style = self._style
        if style == "random" or fixed_options(sample):
            style = mark_style(sample, repeat, config, self.seed)
        choices = sample.choices
        choice = sample.formulation in CHOICE_FORMULATIONS
        options: list[str] | None = None
        marks: list[str] | None = None
        order: list[int] | None = None
        method: Method = "generate"
        if choice:
            assert choices is not None
            if reform and self.repeats > 1 and self._shuffle and not self._circular:
                # shuffle_options: every duplicate's options reshuffled, the first one too.
                order = duplicate_order(sample, repeat, self.seed)
                options = [choices[i] for i in order]
            elif repeat and (self._circular or self._shuffle) and not fixed_options(sample):
                order = option_order(sample, repeat, config, self.seed)
                options = [choices[i] for i in order]
            else:  # the original order (repeat 0 of a rotation is a rotation by 0)
                order = list(range(len(choices)))
                options = list(choices)
            # A fresh list per ask: asks share nothing mutable.
            marks = list(self._marks_for(style, len(options)))
            if self._method == "likelihood":
                method = "likelihood"
            elif self._method == "mark_logprob":
                method = "mark_logprob"
        shown = method != "likelihood"
        whole = (
            whole_prompt(config.prompt_style, sample, options, marks, config.instruction)
            if shown
            else None
        )
        if whole is not None:
            # A benchmark loaded by name words the whole message, context included, in the
            # template its definition cites (choice and open-ended alike).
            lines = whole
        elif options is not None and marks is not None and shown:
            # Shown options: the prompt style words the question, options and instruction.
            lines = self._prompt_style(
                ChoicePrompt(
                    sample,
                    sample.question,
                    options,
                    marks,
                    config.instruction,
                    self._instruction(sample, repeat, style),
                )
            )
        else:
            instruction = config.instruction
            if instruction is None:
                instruction = self._instruction(sample, repeat, style)
            lines = [sample.question, instruction] if instruction else [sample.question]
        parts = [sample.context, *lines] if sample.context and whole is None else lines
        preamble = self._system
        if choice and config.in_context_example:
            preamble = preamble + self._example(style)
        if sample.history:
            preamble = preamble + tuple((t.role, t.content) for t in sample.history)
        return Ask(
            sample.id,
            repeat,
            method,
            "\n".join(parts),
            [] if self._blind else sample.media,
            _candidates(method, options, marks),
            options,
            marks,
            order,
            config.response_prefix,
            self._fixed_gen if self._fixed_gen is not None else self._gen_for(repeat),
            preamble,
            video=None if self._blind else sample.video,
            between=() if self._blind else _between(sample),
        )


def _between(sample: Sample) -> tuple[tuple[int, str], ...]:
    """The sample's timed texts placed among the frames it was sampled with (none without)."""
    video = sample.video
    if video is None or not video.frames or FRAME_TEXTS not in sample.metadata:
        return ()
    try:
        texts = frame_texts(sample.metadata)
    except ValueError as exc:
        raise ValueError(f"sample {sample.id}: {exc}") from None
    return tuple(place(texts, [f.time for f in video.frames]))


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
    Open-ended samples are always generated. A run builds many: `Formulator` does the same
    with the config's fixed parts worked out once.
    """
    return Formulator(config, gen, seed).ask(sample, repeat).to_request()
