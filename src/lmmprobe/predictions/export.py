"""Scoring rows exported by ``lmmprobe export``: the run metrics per model.

Without a matcher the rows are summarized as exported (the verdicts the run recorded). With a
matcher name (an entry of `lmmprobe.parse.MATCHERS`, e.g. ``reform`` or ``dysca``), every
generated answer is scored again from its raw output (``text``) by the run's own scoring
(`lmmprobe.run.scoring.score_response`) under that matcher: choice answers are read with it, and
OCR/KIE answers follow its rules (ReForm-Eval's exact ones under ``reform``). Failed requests and
likelihood rankings have no text to read and are kept as exported. Re-reading needs what the
run recorded per row: the sample's ``formulation`` and, for choice questions, the options in
display order (``options``), their ``marks`` and the original index of each (``order``); rows
stored before lmmprobe recorded them are refused by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from lmmprobe.data.base import DataError
from lmmprobe.metrics.choice import AnswerSums
from lmmprobe.metrics.stability import category_key, instability_of
from lmmprobe.parse import MATCHERS
from lmmprobe.predictions._rows import sample_refusal
from lmmprobe.run.scoring import score_response
from lmmprobe.schema import FormulateConfig, Request, Response, Sample, Score
from lmmprobe.schema.rows import CHUNK_ROWS, chunk_of_scores


def _row_name(i: int, r: dict[str, Any]) -> str:
    return (
        f"row {i} (model {r.get('model')!r}, sample {r.get('sample_id')!r}, "
        f"repeat {r.get('repeat')!r})"
    )


def _missing(i: int, r: dict[str, Any], field: str) -> DataError:
    return DataError(
        f"{_row_name(i, r)}: {field}: missing or malformed; re-reading an answer with a matcher "
        "needs the formulation and, for choice questions, the displayed options, their marks "
        "and their original indices (columns formulation, options, marks, order), which rows "
        "scored by lmmprobe before store version 3 lack"
    )


def _strings(i: int, r: dict[str, Any], field: str) -> list[str]:
    value = r.get(field)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _missing(i, r, field)
    return value


def _asked(i: int, r: dict[str, Any]) -> tuple[Sample, Request]:
    """The sample and request of an exported row, as far as scoring needs them."""
    formulation = r.get("formulation")
    if not isinstance(formulation, str):
        raise _missing(i, r, "formulation")
    choices: list[str] | None = None
    options = marks = order = None
    if isinstance(r.get("gold"), int):
        options, marks = _strings(i, r, "options"), _strings(i, r, "marks")
        order = r.get("order")
        if not isinstance(order, list) or sorted(order) != list(range(len(options))):
            raise _missing(i, r, "order")
        # The sample's own order: the option shown at position p is choice order[p].
        choices = [""] * len(options)
        for position, original in enumerate(order):
            choices[original] = options[position]
    try:
        sample = Sample.model_validate(
            {
                "id": str(r.get("sample_id")),
                "question": "(exported row)",
                "choices": choices,
                "answer": r.get("gold"),
                "formulation": formulation,
                "metadata": r.get("metadata") or {},
            }
        )
    except ValidationError as exc:  # pydantic's own text is several lines, with a web link
        raise DataError(f"{_row_name(i, r)}: not a scorable row: {sample_refusal(exc)}") from None
    except ValueError as exc:
        raise DataError(f"{_row_name(i, r)}: not a scorable row: {exc}") from None
    request = Request(
        key=str(r.get("key") or ""),
        sample_id=sample.id,
        repeat=int(r.get("repeat") or 0),
        method="generate",
        messages=[],
        prompt=str(r.get("prompt") or ""),
        options=options,
        marks=marks,
        order=order,
    )
    return sample, request


def _reread(i: int, r: dict[str, Any], config: FormulateConfig) -> dict[str, Any]:
    """The row as a run with ``config.matcher`` would have scored it."""
    if r.get("stage") == "error" or r.get("loglikelihoods") is not None:
        return r  # a failed request or a likelihood ranking: no text for a matcher to read
    text = r.get("text")
    if text is not None and not isinstance(text, str):
        raise DataError(f"{_row_name(i, r)}: text: expected the raw output, got {text!r}")
    sample, request = _asked(i, r)
    finish = r.get("finish_reason")  # in exports since store layout 8: a cut-off is truncated
    response = Response(
        key=request.key,
        text=text,
        latency_s=0.0,
        finish_reason=finish if isinstance(finish, str) else None,
    )
    try:
        score = score_response(str(r.get("model")), sample, request, response, config)
    except ValueError as exc:  # a matcher naming an option that was not shown
        raise DataError(f"{_row_name(i, r)}: {exc}") from None
    return {**r, **score.model_dump(exclude={"model", "key"})}


MAX_MODELS = 1000
"""Models one export may name. Each gets its own bootstrapped summary (1,000 resamples), so
50,000 one-row "models" ran for minutes: a file naming more is not the export of a run (nor of
a sweep), and is refused in one line before any model is summarized."""


def score_export(
    records: Iterable[dict[str, Any]],
    matcher: str | None = None,
    n_boot: int = 1000,
    config: FormulateConfig | None = None,
) -> dict[str, Any]:
    """Run metrics per model from rows of ``lmmprobe export --format jsonl``.

    Args:
        records: The exported rows.
        matcher: A registered matcher name to score every generated answer again with, as a
            run with that matcher would (None: use the verdicts as exported). Likelihood and
            error rows are kept as exported.
        n_boot: Bootstrap resamples for the confidence intervals.
        config: Formulation settings the matcher sees (e.g. ``fuzzy_threshold``); default
            settings with ``matcher`` otherwise.

    Returns:
        Per model, its metrics as `summarize` gives them, plus ``instability`` where some
        sample has more than one row (repeats): the same figures, reduced a chunk of rows at
        a time (`AnswerSums`), so memory holds per-sample sums, not the rows.

    Raises:
        DataError: A row lacks the columns re-reading needs (named by row, model, sample and
            repeat), or is not a valid score row.
        RegistryError: `matcher` is not a registered matcher.
        DataError: The rows name more than `MAX_MODELS` models.

    """
    if matcher is not None:
        MATCHERS.get(matcher)  # an unknown name fails before any row is read
        config = (config or FormulateConfig()).model_copy(update={"matcher": matcher})
    models: dict[str, _ModelRows] = {}
    fields = set(Score.model_fields)
    for i, r in enumerate(records, start=1):
        row = _reread(i, r, config) if matcher is not None and config else r
        try:
            score = Score.model_validate({k: v for k, v in row.items() if k in fields})
        except ValueError as exc:
            raise DataError(f"{_row_name(i, r)}: not a score row: {exc}") from None
        name = str(row["model"])
        found = models.get(name)
        if found is None:
            if len(models) >= MAX_MODELS:
                raise DataError(
                    f"{_row_name(i, r)}: model: more than {MAX_MODELS:,} models in one file; an "
                    "export of runs names a few (each model is summarized with its own "
                    "bootstrap), so this is not one: score each run's export apart"
                )
            found = models[name] = _ModelRows()
        found.add(score)
    out: dict[str, Any] = {}
    for model, rows in models.items():
        out[model] = rows.metrics(n_boot)
    return out


class _ModelRows:
    """One model's rows, reduced as they come, a chunk of Scores at a time, none kept.

    `AnswerSums` is `summarize`'s table; each sample's answer categories give `instability`.
    """

    def __init__(self) -> None:
        self.sums = AnswerSums()
        self.pending: list[Score] = []
        self.categories: dict[str, list[str | bytes]] = {}
        self.rows = 0

    def add(self, score: Score) -> None:
        self.pending.append(score)
        self.rows += 1
        found = self.categories.setdefault(score.sample_id, [])
        if score.error_type is None and score.stage != "error":
            # `instability`'s category (the predicted text), as a short key: equal where equal.
            found.append(category_key(score.prediction_text))
        if len(self.pending) >= CHUNK_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.sums.add(chunk_of_scores(self.pending))
            self.pending = []

    def metrics(self, n_boot: int) -> dict[str, Any]:
        """`summarize`'s figures, and ``instability`` where some sample has more than one row."""
        self.flush()
        metrics = {k: v.to_dict() for k, v in self.sums.summarize(n_boot=n_boot).items()}
        if self.rows > len(self.categories):
            # As a run's table: instability is defined over repeats; one row a sample says 0.
            metrics["instability"] = instability_of(self.categories, n_boot=n_boot).to_dict()
        return metrics
