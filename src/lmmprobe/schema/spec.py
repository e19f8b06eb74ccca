"""The full description of a run; stored in the manifest so a run can be repeated."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from lmmprobe.schema.judgement import JudgeConfig
from lmmprobe.schema.price import Price
from lmmprobe.schema.request import GenerationParams
from lmmprobe.schema.video import FramePolicy, parse_policies

MarkStyle = Literal["upper", "lower", "number"]
MarkChoice = Literal["upper", "lower", "number", "random"]
InferenceMethod = Literal["generate", "likelihood", "mark_logprob"]


class FormulateConfig(BaseModel):
    """How samples become prompts."""

    method: InferenceMethod = Field(
        default="generate",
        description="generate: options in the prompt, answer parsed from text; "
        "likelihood: options scored as continuations (needs a white-box backend); "
        "mark_logprob: options in the prompt, ranked by the log-probability of each mark as the "
        "first answer token (APIs with logprobs).",
    )
    option_marks: MarkChoice = Field(
        default="upper",
        description="(A) / (a) / (1) option marks, or random: a seeded style per request.",
    )
    instruction: str | None = Field(
        default=None,
        description="Instruction after the question; None uses the formulation's default.",
    )
    instruction_pool: bool = Field(
        default=False,
        description="Rotate through the formulation's instruction pool across repeats "
        "(ReForm-Eval: duplicate i uses pool[i % len(pool)]).",
    )
    in_context_example: bool = Field(
        default=False,
        description="Prepend ReForm-Eval's example turn (can you see the image? ... -> (A) yes).",
    )
    response_prefix: str | None = Field(
        default=None, description="Text the answer starts with, e.g. 'The answer is'."
    )
    circular: bool = Field(
        default=False,
        description="CircularEval: ask each choice sample once per rotation of its options "
        "(replaces repeats for choice samples).",
    )
    prompt_style: str = Field(
        default="auto",
        min_length=1,
        description="Name of a registered prompt style (``lmmprobe list prompt-styles``; checked "
        "when a run starts). Built in: reform: 'question Options: (A) x; (B) y. instruction'; "
        "dysca: Dysca's wording ('Question: ...' with one option per line, its hint, 'Your "
        "answer is:'); auto: the sample's own ``metadata.prompt_style`` (synthetic samples ask "
        "for dysca), else reform.",
    )
    blind: bool = Field(
        default=False,
        description="Ask without the images (Dysca's blind setting: what can be answered from "
        "the text alone).",
    )
    system_prompt: str | None = Field(default=None, description="Optional system message.")
    shuffle_repeats: bool = Field(
        default=True, description="Shuffle option order (seeded) on repeats after the first."
    )
    likelihood_reduction: Literal["sum", "mean"] = Field(
        default="sum", description="Rank candidates by summed or mean per-token log-likelihood."
    )
    matcher: str = Field(
        default="lmmprobe",
        min_length=1,
        description="Name of a registered matcher reading generated choice answers (``lmmprobe "
        "list matchers``; checked when a run starts). Built in: lmmprobe's pipeline (mark, "
        "option text, refusal, fuzzy), reform: ReForm-Eval's exact rule (first '(X)' mark, else "
        "exact option text; also makes OCR/KIE ReForm-Eval's exact rules), dysca: Dysca's "
        "(last '(x)' mark, else last capital, else the nearest '(X) text' line by edit "
        "distance, ties to the last); benchmark: each sample read by its own benchmark's "
        "matcher (a set's runs, lmmprobe's for a sample of none).",
    )
    matchers: dict[str, str] = Field(
        default_factory=dict,
        max_length=10_000,
        description="Under matcher ``benchmark``: each benchmark's matcher by benchmark name "
        "(filled where the run starts from the benchmarks' definitions; a benchmark not named "
        "here is read by lmmprobe's).",
    )
    fuzzy_threshold: float = Field(
        default=75.0, ge=0.0, le=100.0, description="Minimum rapidfuzz ratio for the fuzzy stage."
    )


def check_executor(value: str) -> str:
    """`value` stripped if it names an executor: ``local``, ``ray``, ``ray:ADDRESS``.

    Raises:
        ValueError: Anything else, saying what is accepted.

    """
    value = value.strip()
    if value in ("local", "ray") or (value.startswith("ray:") and value not in ("ray:", "ray://")):
        return value
    raise ValueError(
        f"unknown executor {value!r}: use local, ray, ray:auto, ray:HOST:PORT or ray://HOST:PORT"
    )


def ray_address(value: str) -> str | None:
    """The Ray address an executor spec names (``ray`` → None: a local instance or $RAY_ADDRESS).

    Raises:
        ValueError: `value` does not name the Ray executor (`check_executor`'s grammar).

    """
    value = check_executor(value)
    if value == "local":
        raise ValueError("executor 'local' names no Ray cluster: use ray or ray:ADDRESS")
    if value == "ray" or value.startswith("ray://"):
        return None if value == "ray" else value
    return value[4:]


RAY_RESOURCE_STEP = 0.0001
"""The finest fraction of a CPU or GPU Ray reserves (its ``num_cpus`` precision)."""


def check_ray_resource(value: float | None) -> float | None:
    """`value` (CPUs or GPUs per replica) if Ray can reserve it: 0 or a `RAY_RESOURCE_STEP` multiple.

    ``1e-300`` was refused by Ray only once its instance had started (20 s), in words naming no
    option; ``inf`` was "cannot place 1 replicas" (re-test 13 #4).

    Raises:
        ValueError: Naming the value and the rule.

    """
    if value is None:
        return None
    if not (math.isfinite(value) and value >= 0):
        raise ValueError("must be a finite number, 0 or more")
    steps = value / RAY_RESOURCE_STEP
    if (value and round(steps) == 0) or abs(steps - round(steps)) > 1e-6 * max(1.0, steps):
        raise ValueError("finer than Ray reserves: give 0 or a multiple of 0.0001")
    return value


MAX_BOOTSTRAP = 100_000
"""The most bootstrap resamples a run takes (``RunSpec.bootstrap`` and every ``--bootstrap``): a
95% interval is steady long before (the default is 1,000), and 10^8 was a MemoryError traceback
(re-test 11 #12)."""

POOL_SIZE = 5
"""Instructions per pool; with instruction_pool, repeats must be a multiple (ReForm-Eval)."""


FRAME_POLICY_KEY = "frame_policy"
"""The row metadata naming the frame policy a row was asked under, in a run of several."""


class RunSpec(BaseModel):
    """Everything that determines a run's requests and scoring."""

    models: list[str] = Field(
        default_factory=lambda: ["random", "first"], description="Model specs."
    )
    data: str = Field(
        default="demo", description="Data source spec: a .jsonl path or a source name."
    )
    limit: int | None = Field(default=None, ge=1, description="Use at most this many samples.")
    repeats: int = Field(default=1, ge=1, description="Ask each sample this many times.")
    seed: int = Field(default=0, description="Seed for every random choice of the run.")
    by: list[str] = Field(
        default_factory=list, description="Metadata keys to break results down by."
    )
    out: str | None = Field(default=None, description="Output folder; default beside the store.")
    strict: bool = Field(default=False, description="Fail on the first invalid sample.")
    no_cache: bool = Field(default=False, description="Ignore stored responses and call the model.")
    db: str | None = Field(default=None, description="SQLite store path.")
    bootstrap: int = Field(
        default=1000, ge=0, le=MAX_BOOTSTRAP, description="Bootstrap resamples for 95% CIs."
    )
    formulate: FormulateConfig = Field(default_factory=FormulateConfig, description="Prompting.")
    gen: GenerationParams = Field(default_factory=GenerationParams, description="Decoding.")
    # Where requests run. These fields change how fast a run goes, never what it answers: they
    # are not part of any cache key, the data fingerprint or the manifest (which records what
    # determines the answers); the run's stored spec keeps them.
    executor: str = Field(
        default="local",
        description="Where requests run: local (this process), or ray[:ADDRESS] for model "
        "replicas as Ray actors: ray starts a local Ray instance (or joins $RAY_ADDRESS), "
        "ray:auto joins the cluster this machine is part of (`ray start`), ray:HOST:PORT a "
        "head node's address, ray://HOST:PORT through Ray Client.",
    )
    replicas: int | None = Field(
        default=None,
        ge=1,
        description="Model replicas (Ray actors) per model; default one per GPU of the cluster "
        "when replicas use GPUs (hf on a cluster with GPUs), else one: a CPU model's replicas "
        "would each load the weights, an API model's multiply its concurrency, so ask for more "
        "explicitly. Ray executor only.",
    )
    # No ge=0 on the two resources: `check_ray_resource` refuses a negative value and NaN in
    # one rule ("a finite number, 0 or more"); ge=0 said NaN was not "greater than or equal
    # to 0", and so a negative value was worded apart from infinity.
    gpus_per_replica: float | None = Field(
        default=None,
        json_schema_extra={"minimum": 0},
        description="GPUs each replica reserves; default 1 for hf models when the cluster has "
        "GPUs, else 0. Ray executor only.",
    )
    cpus_per_replica: float | None = Field(
        default=None,
        json_schema_extra={"minimum": 0},
        description="CPUs each replica reserves (default 1). Ray executor only.",
    )
    # What tokens cost, and how much a run may spend. Like the executor fields, they change no
    # answer: not part of any cache key; the run's stored spec keeps them.
    prices: dict[str, Price] = Field(
        default_factory=dict,
        description="Price per model spec (dollars per million prompt / completion tokens): "
        "a price table's entries before the run starts, the price each model of the run gets "
        "once it has started (its ``price=IN:OUT`` option, else its table entry); models "
        "without one have no cost metrics.",
    )
    max_cost: float | None = Field(
        default=None,
        gt=0,
        description="Dollars this invocation may spend on model calls (every model priced); "
        "None: no limit. Once spent, nothing new is sent (what is in flight is stored and "
        "counted), the remaining requests are stored as ``budget`` errors and the run stops "
        "as ``stopped_budget``; a re-run resumes.",
    )
    judge: JudgeConfig | None = Field(
        default=None,
        # Left out of every dump while unset, so runs without a judge record what they did.
        exclude_if=lambda v: v is None,
        description="Judges of the run's answers (``--judge``); None: no judge.",
    )

    frames: str | None = Field(
        default=None,
        # Left out of every dump while unset, so runs without video record what they did.
        exclude_if=lambda v: v is None,
        description="The frame policy every video is sampled with (``--frames``: frames=N, "
        "fps=F or fps=F,max_frames=M), over each video's own; None: each video's own policy, "
        "else frames=8. Several (``8,16,32``; ``fps=1;fps=2``): every sample is asked under "
        "each, its rows carrying ``frame_policy``, and the run breaks its figures down by it.",
    )

    @field_validator("executor")
    @classmethod
    def _executor_spec(cls, value: str) -> str:
        return check_executor(value)

    @field_validator("gpus_per_replica", "cpus_per_replica")
    @classmethod
    def _ray_resource(cls, value: float | None) -> float | None:
        return check_ray_resource(value)

    @field_validator("frames")
    @classmethod
    def _frame_policies(cls, value: str | None) -> str | None:
        # Kept as the policies' own labels, so equal policies written apart are one spec.
        return None if value is None else ";".join(p.label for p in parse_policies(value))

    @model_validator(mode="after")
    def _frame_sweep(self) -> RunSpec:
        if len(self.frame_policies()) > 1:
            if self.formulate.circular:
                raise ValueError(
                    "frames: several frame policies and --circular both ask a sample again; "
                    "give one of them"
                )
            if FRAME_POLICY_KEY not in self.by:
                # The accuracy curve over the policies is the breakdown by them.
                self.by = [*self.by, FRAME_POLICY_KEY]
        return self

    def frame_policies(self) -> list[FramePolicy]:
        """The run's frame policies (`frames`) parsed, in order; empty where it gives none."""
        return [] if self.frames is None else parse_policies(self.frames)

    def check_executor_settings(self) -> None:
        """Refuse replica settings given with the local executor (they would be ignored).

        Raises:
            ValueError: Naming the options and what to add.

        """
        given = [
            name
            for name in ("replicas", "gpus_per_replica", "cpus_per_replica")
            if getattr(self, name) is not None
        ]
        if given and self.executor == "local":
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            raise ValueError(
                f"{flags}: used by the Ray executor only; add --executor ray (or leave it out)"
            )

    @model_validator(mode="after")
    def _whole_pool_rounds(self) -> RunSpec:
        # ReForm-Eval duplicates each sample N times with N a multiple of the pool size, so
        # every instruction is used equally often; other counts would bias the instability.
        if self.formulate.instruction_pool and self.repeats > 1 and self.repeats % POOL_SIZE:
            raise ValueError(
                f"with instruction_pool, repeats must be a multiple of {POOL_SIZE} "
                f"(got {self.repeats})"
            )
        return self
