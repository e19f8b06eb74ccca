"""Reference baselines: a seeded random guesser and an always-first-option model.

They need no weights, answer instantly (or after a configurable delay), and support both
generation and likelihood ranking, so every code path of the runner runs without a real model.
"""

from __future__ import annotations

import math
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence

from lmmprobe.models.base import (
    MODELS,
    Capabilities,
    ModelIdentity,
    UnsupportedInputError,
    parse_model_spec,
)
from lmmprobe.schema import Request, Response
from lmmprobe.schema.text import shown_value

BASELINES = frozenset({"random", "first"})
"""The baselines' backend names. They have no model: their likelihood scores are made up
(`RandomBaseline`: seeded random; `FirstBaseline`: the first option highest)."""


def likelihood_stand_ins(specs: Iterable[str]) -> list[str]:
    """The model specs among `specs` that only pretend to rank options by likelihood.

    Likelihood inference is a white-box method: it reads a model's log-probabilities of each
    option. The baselines implement it so that the runner's likelihood path runs without a
    model, but their scores come from no model, so their figures are not a likelihood reading.

    Args:
        specs: Model specs (``random``, ``first,delay=0.1``, ``hf:PATH``).

    Returns:
        The specs naming a baseline, in order (specs that do not parse are left out).

    """
    out = []
    for spec in specs:
        try:
            backend = parse_model_spec(spec)[0]
        except ValueError:
            continue
        if backend in BASELINES:
            out.append(spec)
    return out


def _float_opt(options: dict[str, str], name: str, default: float) -> float:
    try:
        return float(options.get(name, default))
    except ValueError as exc:
        raise ValueError(
            f"option {name}={shown_value(options[name], 40)!r} is not a number"
        ) from exc


_LIMITS = {"seed": (-(2**63), 2**63 - 1), "batch": (1, 1_000_000), "delay": (0.0, 3600.0)}
"""Each option's range: a seed a 64-bit generator takes, a batch, seconds of delay per request."""


def _option(
    backend: str, options: dict[str, str], name: str, default: float, *, whole: bool
) -> float:
    """Option `name` read as a number within `_LIMITS` (a whole one where `whole`).

    ``seed=1e400`` or ``batch=inf`` raised OverflowError out of ``int()`` (a traceback),
    ``seed=nan`` gave int()'s own message, ``seed=1.5`` was read as 1 (sharing seed 1's stored
    answers) and ``delay=nan`` or ``-1`` was taken.
    """
    value = _float_opt(options, name, default)
    least, most = _LIMITS[name]
    if not (math.isfinite(value) and least <= value <= most) or (whole and value != int(value)):
        kind = "a whole number" if whole else "a number"
        raise ValueError(
            f"the {backend!r} baseline: option {name}={shown_value(options[name], 40)!r} must "
            f"be {kind} from {least:,g} to {most:,g}"
            if isinstance(least, float)
            else f"the {backend!r} baseline: option {name}={shown_value(options[name], 40)!r} "
            f"must be {kind} from {least:,} to {most:,}"
        )
    return value


class _Baseline(ABC):
    """Shared plumbing: options, identity, delay."""

    backend = ""
    uses_seed = False

    def __init__(self, target: str | None, options: dict[str, str]) -> None:
        if target:
            raise ValueError(f"the {self.backend!r} baseline takes no target (got {target!r})")
        unknown = set(options) - {"delay", "batch", *(("seed",) if self.uses_seed else ())}
        if unknown:
            raise ValueError(f"the {self.backend!r} baseline has no option(s) {sorted(unknown)}")
        self.delay = _option(self.backend, options, "delay", 0.0, whole=False)
        self.seed = int(_option(self.backend, options, "seed", 0, whole=True))
        batch = int(_option(self.backend, options, "batch", 64, whole=True))
        # delay only slows a run down; it does not change outputs, so it is not in the identity.
        ident_opts: dict[str, object] = {"seed": self.seed} if self.uses_seed else {}
        self.identity = ModelIdentity(backend=self.backend, name=self.backend, options=ident_opts)
        self.capabilities = Capabilities(likelihood=True, multi_image=True, max_batch_size=batch)

    def _wait(self, n: int) -> None:
        if self.delay > 0:
            time.sleep(self.delay * n)

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Answer each request with an option mark (empty text for open-ended requests)."""
        self._wait(len(requests))
        return [Response(key=r.key, text=self._answer(r)) for r in requests]

    def loglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        """Score each candidate; see the subclass for the rule."""
        self._wait(len(requests))
        out = []
        for r in requests:
            if not r.candidates:
                raise UnsupportedInputError(f"request {r.key} has no candidates to score")
            scores = self._scores(r, len(r.candidates))
            out.append(Response(key=r.key, loglikelihoods=scores, token_counts=[1] * len(scores)))
        return out

    @abstractmethod
    def _answer(self, request: Request) -> str:
        """The generated text for one request."""

    @abstractmethod
    def _scores(self, request: Request, n: int) -> list[float]:
        """One log-likelihood per candidate."""


@MODELS.register("random", summary="random  seeded random option (options: seed, delay, batch)")
class RandomBaseline(_Baseline):
    """Picks an option uniformly at random, seeded by the request key (reproducible)."""

    backend = "random"
    uses_seed = True

    def _rng(self, request: Request) -> random.Random:
        return random.Random(f"{self.seed}:{request.key}")

    def _answer(self, request: Request) -> str:
        if not request.marks:
            return ""
        return f"({self._rng(request).choice(request.marks)})"

    def _scores(self, request: Request, n: int) -> list[float]:
        rng = self._rng(request)
        return [-rng.random() * 10 for _ in range(n)]


@MODELS.register("first", summary="first  always the first option shown (options: delay, batch)")
class FirstBaseline(_Baseline):
    """Always answers the first option shown; exposes position bias in a benchmark."""

    backend = "first"

    def _answer(self, request: Request) -> str:
        return f"({request.marks[0]})" if request.marks else ""

    def _scores(self, request: Request, n: int) -> list[float]:
        return [-float(i) for i in range(n)]
