"""Scoring one response against its sample: prediction, stage, correctness, abstention.

Errors are never answers: a failed request becomes a row with stage ``error`` and no
correctness. An answer that cannot be read is ``unparsed`` and incorrect, never a random option.
Only the answer is read: a generated output is split into thinking and answer first
(`lmmprobe.parse.thinking`, by the ``think=`` option of the model's spec), and an output cut off
before its answer is ``truncated``: incorrect, never read for a mark.
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache

from lmmprobe.formulate.ask import Ask
from lmmprobe.formulate.styles import PROMPT_STYLES
from lmmprobe.parse import MATCHERS
from lmmprobe.parse.open_ended import (
    kie_correct_strict,
    ocr_correct_words,
    read_yes_no,
    reform_kie_correct,
    reform_ocr_correct,
)
from lmmprobe.parse.thinking import split_answer, tags_for_model
from lmmprobe.schema import (
    FORMAT_HIT_STAGES,
    YES_NO_READING,
    FormulateConfig,
    Request,
    Response,
    Sample,
    Score,
)

SCORER_VERSION = 2
"""Version of how a response becomes a score row: bump it with ANY change to what this module,
the matchers (`lmmprobe.parse`), the prompt styles' readers or `Score`'s fields make of an
answer. Recorded in each run's manifest (``scorer_version``); a run copies an identical
earlier run's rows instead of scoring again only when this version is the same
(`lmmprobe.store.reuse`, docs/architecture.md), so a change that does not bump it would
leave re-runs showing the old scoring.

2: an open-ended sample marked `YES_NO_READING` (HEMM's yes/no datasets) is correct when what
the answer says (`read_yes_no`) is its gold, not only when the whole answer is."""

UNKNOWN_OPTIONS: frozenset[str] = frozenset(
    {
        "unknown",
        "not sure",
        "i don't know",
        "i do not know",
        "cannot be determined",
        "can't be determined",
        "cannot determine",
        "none of the above",
        "not enough information",
    }
)
_PUNCT = re.compile(r"[^\w\s]")
_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Lowercase, NFKC, punctuation removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).lower()
    return _SPACE.sub(" ", _PUNCT.sub(" ", text)).strip()


@lru_cache(maxsize=8192)
def _is_unknown(choice: str) -> bool:
    # Cached: option texts repeat across samples and this runs for every scored row.
    return normalize_text(choice) in UNKNOWN_OPTIONS


@lru_cache(maxsize=4096)
def _unknown_index(choices: tuple[str, ...]) -> int | None:
    # Cached by value: whole option lists repeat too (every repeat and model of a sample, and
    # shared answer sets), and one lookup is cheaper than one per option.
    for i, c in enumerate(choices):
        if _is_unknown(c):
            return i
    return None


def check_names(config: FormulateConfig) -> None:
    """Resolve the matcher and prompt style `config` names, so a run fails before it starts.

    Raises:
        RegistryError: A name is not registered (the message lists the known ones), or its
            plugin fails to load.

    """
    # `benchmark` is the run's choice of each benchmark's own matcher, never a benchmark's:
    # named in `matchers` it is checked (and refused) here, not met while scoring.
    for name in ({config.matcher} - {BENCHMARK_MATCHER}) | set(config.matchers.values()):
        MATCHERS.get(name)
    PROMPT_STYLES.get(config.prompt_style)


BENCHMARK_MATCHER = "benchmark"
"""The `FormulateConfig.matcher` that reads each sample with its own benchmark's matcher.

A run of a set of benchmarks (``--data openvlm``) mixes benchmarks whose official figures read
answers with different rules (MME's, POPE's, VLMEvalKit's ``can_infer``...): each row is read
by the matcher its benchmark names (`Benchmark.matcher`, recorded in the run's
`FormulateConfig.matchers`), lmmprobe's where it names none or the sample comes from no
benchmark.
"""


def matcher_for(sample: Sample, config: FormulateConfig) -> str:
    """The matcher reading `sample`'s answers: the run's, or under ``benchmark`` its benchmark's.

    Under ``benchmark`` the run's `FormulateConfig.matchers` names each benchmark's matcher
    (filled from the benchmarks' definitions where the run starts: `benchmark_matchers`); a
    sample of a benchmark it does not name, or of none, is read by lmmprobe's.
    """
    if config.matcher != BENCHMARK_MATCHER:
        return config.matcher
    tag = sample.benchmark
    return config.matchers.get(tag.name, "lmmprobe") if tag is not None else "lmmprobe"


def unknown_option(sample: Sample) -> int | None:
    """Index of an "unknown"-style option the sample offers (metadata ``unknown_option`` wins)."""
    explicit = sample.metadata.get("unknown_option")
    if explicit is not None and isinstance(explicit, int) and not isinstance(explicit, bool):
        return explicit
    return _unknown_index(tuple(sample.choices)) if sample.choices else None


def _ranked(response: Response, reduction: str) -> int | None:
    lls = response.loglikelihoods or []
    if not lls or any(math.isnan(x) for x in lls) or all(math.isinf(x) for x in lls):
        return None  # nothing was scored (e.g. no option mark among an API's top tokens)
    if reduction == "mean":
        counts = response.token_counts or [1] * len(lls)
        lls = [ll / max(c, 1) for ll, c in zip(lls, counts, strict=True)]
    return max(range(len(lls)), key=lls.__getitem__)  # first of ties, in display order


def _score(
    model: str,
    sample: Sample,
    request: Request | Ask,
    offered: bool,
    stage: str,
    correct: bool | None,
    prediction: int | None = None,
    prediction_text: str | None = None,
    format_hit: bool = False,
    abstained: bool = False,
    error_type: str | None = None,
) -> Score:
    # Validation copies the metadata dict and a reference list, so no score shares a mutable
    # value with its sample.
    return Score.model_validate(
        {
            "model": model,
            "sample_id": sample.id,
            "repeat": request.repeat,
            "key": request.key,
            "stage": stage,
            "prediction": prediction,
            "prediction_text": prediction_text,
            "correct": correct,
            "format_hit": format_hit,
            "gold": sample.answer,
            "gold_text": sample.gold_text,
            "abstain_offered": offered,
            "abstained": abstained,
            "error_type": error_type,
            "metadata": sample.row_metadata,
            # What was asked and shown, so an export can be read again by another matcher.
            "formulation": sample.formulation,
            "options": request.options,
            "marks": request.marks,
            "order": request.order,
        },
    )


def _open_correct(formulation: str, text: str, refs: list[str], matcher: str) -> bool:
    """OCR / KIE verdict: ReForm-Eval's exact rules under the ``reform`` matcher, else ours.

    ReForm-Eval joins a list of OCR answers into one ground truth and tries KIE answers one by
    one (`reform_ocr_correct`, `reform_kie_correct`); lmmprobe's own rules (the default) try
    each reference (`ocr_correct_words`, `kie_correct_strict`).
    """
    if matcher == "reform":
        if formulation == "ocr":
            return reform_ocr_correct(text, refs)
        return reform_kie_correct(text, refs)
    check = ocr_correct_words if formulation == "ocr" else kie_correct_strict
    return any(check(text, r) for r in refs)


def _score_open(
    model: str, sample: Sample, request: Request | Ask, text: str, matcher: str = "lmmprobe"
) -> Score:
    """Open-ended answers: exact match, OCR or KIE containment; captions judged as a corpus.

    A sample marked `YES_NO_READING` (a gold of yes or no) is correct when the answer says its
    gold by lmmprobe's yes/no reading (`read_yes_no`: "Yes, it is." says yes); an answer that
    says neither, both or that it cannot tell is wrong. The row keeps the answer's text as
    every open-ended row does (`Score.prediction_text`), so a metric of the text (HEMM's
    BARTScore) still reads the model's own sentence.
    """
    refs = sample.answer if isinstance(sample.answer, list) else []
    # Captions are judged as a corpus and free-form descriptions by embedding similarity
    # (metrics.embedding), so neither has a per-answer verdict.
    caption = sample.formulation in ("caption", "free_form")
    row = (model, sample, request, False)  # open-ended samples offer no "unknown" option
    if not normalize_text(text):
        return _score(*row, "unparsed", None if caption else False, prediction_text=text)
    if caption:
        return _score(*row, "match", None, prediction_text=text)
    if sample.formulation in ("ocr", "kie"):
        correct = _open_correct(sample.formulation, text, refs, matcher)
    elif sample.metadata.get(YES_NO_READING) is True:
        # Stage "match" as for any other read open answer: only the verdict changes.
        correct = read_yes_no(text) in {normalize_text(r) for r in refs}
    else:
        correct = normalize_text(text) in {normalize_text(r) for r in refs}
    return _score(*row, "match", correct, prediction_text=text)


def score_response(
    model: str,
    sample: Sample,
    request: Request | Ask,
    response: Response,
    config: FormulateConfig,
) -> Score:
    """Score one (sample, repeat) for one model, from its request or its planned ask."""
    choice = sample.is_choice
    unknown = unknown_option(sample) if choice else None
    offered = unknown is not None
    if response.error is not None:
        error_type = response.error.type
        return _score(model, sample, request, offered, "error", None, error_type=error_type)
    ranked = choice and request.method in ("likelihood", "mark_logprob")
    text = ""
    if ranked and response.loglikelihoods is None and response.finish_reason == "length":
        # A mark_logprob reply cut off before its answer's log-probabilities (inside its
        # thinking, or where the backend stops reading): nothing to rank, truncated.
        return _score(model, sample, request, offered, "truncated", False)
    if not ranked:
        thought = split_answer(
            response.text,
            reasoning=response.reasoning,
            finish_reason=response.finish_reason,
            tags=tags_for_model(model),
        )
        if thought.truncated:
            # Captions have no per-answer verdict (see `_score_open`); every other row is wrong.
            verdict = None if sample.formulation in ("caption", "free_form") else False
            return _score(model, sample, request, offered, "truncated", verdict)
        text = thought.answer
    matcher = matcher_for(sample, config)
    if not choice:
        return _score_open(model, sample, request, text, matcher)
    assert request.options is not None and request.order is not None and request.marks is not None
    if ranked:
        # Mark log-probabilities are single tokens: the reduction does not change their order.
        position = _ranked(response, config.likelihood_reduction)
        if position is None:
            return _score(model, sample, request, offered, "unparsed", False)
        stage = "likelihood"
    else:
        ext = MATCHERS.get(matcher)(text, request.options, request.marks, config)
        if ext.index is None:
            return _score(model, sample, request, offered, "unparsed", False, prediction_text=text)
        position, stage = ext.index, ext.stage
        if not 0 <= position < len(request.options):
            raise ValueError(
                f"matcher {matcher!r} returned option index {position} for a request with "
                f"{len(request.options)} options (valid: 0 to {len(request.options) - 1})"
            )
    predicted = request.order[position]
    format_hit = stage in FORMAT_HIT_STAGES
    return _score(
        model,
        sample,
        request,
        offered,
        stage,
        predicted == sample.answer,
        predicted,
        request.options[position],
        format_hit,
        offered and predicted == unknown,
    )


def with_usage(score: Score, response: Response) -> Score:
    """`score` with the token counts `response` reported (`Response.usage`), in place.

    Every scored row carries its response's usage, errors included (a refusal can be billed),
    so the token and cost metrics read the rows alone.
    """
    usage = response.usage
    if usage is not None:
        score.prompt_tokens = usage.prompt_tokens
        score.completion_tokens = usage.completion_tokens
        score.reasoning_tokens = usage.reasoning_tokens
    return score
