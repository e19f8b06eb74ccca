"""`Results`: what a run's ``results.json`` is a dump of, typed and versioned.

``results.json`` is exactly ``Results.model_dump_json(indent=2)``; results.md, the terminal
tables, the HTML report and `lmmprobe.api.evaluate` read the typed object. Files are
versioned by ``format_version``:

- version 1 (lmmprobe 0.1 before typed results): no ``format_version`` field, otherwise the
  shape of version 2. It is read by adding the field.
- version 2: this model.

A file newer than `FORMAT_VERSION` is refused with a `ResultsFormatError` naming the file and
both versions (upgrade lmmprobe to read it), never half-read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    model_serializer,
)
from pydantic_core import PydanticCustomError, PydanticSerializationError

from lmmprobe.data.jsonl import read_json_file
from lmmprobe.metrics import MetricValue
from lmmprobe.metrics.outcome import COUNT_HELP, OutcomeCounts
from lmmprobe.metrics.value import stored_metric_problem
from lmmprobe.schema import RunSpec
from lmmprobe.schema.text import json_escaped

__all__ = [
    "FORMAT_VERSION",
    "SENSITIVITY_HEADERS",
    "SENSITIVITY_SCALES",
    "DataSummary",
    "JudgeCalls",
    "JudgeResults",
    "JudgedHeadline",
    "Manifest",
    "ModelResults",
    "ModelStats",
    "QuestionTypeSensitivity",
    "Results",
    "ResultsFormatError",
    "RowCounts",
    "Sensitivity",
    "load_results",
    "results_from_dict",
]

FORMAT_VERSION = 2
"""The ``format_version`` this lmmprobe writes and the newest it reads."""

_STORED_METRIC = "stored_metric"
"""Error type of a metric `stored_metric_problem` refuses (its field is in the context)."""

_READING = "reading results"
"""Validation context key `results_from_dict` sets: the document comes from a file or a store."""


def _read_metric(doc: Any, info: ValidationInfo) -> Any:
    """A stored metric object checked and made a `MetricValue` (when reading results).

    Built results pass through unchanged. Read ones are checked (`stored_metric_problem`: a
    figure that is text, an interval that does not hold its value or a negative count is
    refused) and made the instance pydantic's strict mode wants.
    """
    if not (info.context or {}).get(_READING) or not isinstance(doc, dict):
        return doc
    missing = [key for key in ("value", "low", "high", "n") if key not in doc]
    problem = (missing[0], "missing") if missing else stored_metric_problem(doc)
    if problem is not None:
        field, what = problem
        raise PydanticCustomError(_STORED_METRIC, "{what}", {"field": field, "what": what})
    return MetricValue(doc["value"], doc["low"], doc["high"], doc["n"])


Metrics = dict[str, Annotated[MetricValue, BeforeValidator(_read_metric)]]
"""Metric name → value with its 95% interval (see `lmmprobe.metrics.RUN_METRICS`)."""


class ResultsFormatError(ValueError):
    """A results document that cannot be read: too new, or not lmmprobe results."""


class DataSummary(BaseModel):
    """What the run's data source gave."""

    source: str = Field(description="The data spec, e.g. ``demo`` or ``reform:PATH``.")
    samples: int = Field(description="Valid samples loaded.")
    invalid: int = Field(default=0, description="Rows skipped as invalid.")
    problems: list[str] = Field(
        default_factory=list, description="The first invalid rows: ``file:line: field: reason``."
    )


SENSITIVITY_SCALES = (
    "S_tf, S_mc: accuracy in percent; TFSQ, MCSQ: 0 = chance, 100 = perfect; "
    "SQ, SC: variances, in squared points"
)
"""What each of Dysca's sensitivity figures is measured in, said wherever they are shown: SQ
(1975.3 is a plausible value) and SC are variances, not on the percent scale of S_tf and S_mc."""

SENSITIVITY_HEADERS: dict[str, str] = {
    "S_tf": "S_tf %",
    "S_mc": "S_mc %",
    "TFSQ": "TFSQ",
    "MCSQ": "MCSQ",
    "SQ": "SQ (points²)",
    "SC": "SC (points²)",
}
"""Table header of each sensitivity figure, its unit in it (`SENSITIVITY_SCALES`)."""


class QuestionTypeSensitivity(BaseModel):
    """Dysca's sensitivity to question type (`SENSITIVITY_SCALES` gives each field's scale)."""

    TFSQ: float = Field(description="True/false accuracy normalized by chance: (S_tf-50)/50*100.")
    MCSQ: float = Field(description="Multiple-choice accuracy normalized: (S_mc-25)/75*100.")
    SQ: float = Field(description="Population variance of TFSQ and MCSQ (squared points).")
    S_tf: float = Field(description="True/false accuracy in percent.")
    S_mc: float = Field(description="Multiple-choice accuracy in percent.")


class Sensitivity(BaseModel):
    """Dysca's sensitivities, each present only where the run's metadata allows it."""

    question_type: QuestionTypeSensitivity | None = Field(
        default=None, description="Needs true/false and multiple-choice rows."
    )
    covariate_shift_SC: float | None = Field(
        default=None,
        description="SC: variance of accuracy (percent) over two or more image styles "
        "(squared points).",
    )
    scenario_deltas: dict[str, float] | None = Field(
        default=None, description="Scenario → accuracy points against ``clean``."
    )

    @model_serializer(mode="wrap")
    def _present_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # What was not computed is absent from the file rather than null, as it always was.
        out: dict[str, Any] = handler(self)
        return {k: v for k, v in out.items() if v is not None}


class ModelStats(BaseModel):
    """Request counts and usage of one model in the run."""

    requests: int = Field(description="Requests the run needed.")
    cached: int = Field(description="Answered from the store.")
    called: int = Field(description="Sent to the model.")
    refused: int = Field(
        default=0,
        description="Requests the backend's own budget (``max_requests=``, "
        "``max_tokens_total=``) refused before sending them: not in ``called``, stored as "
        "``budget`` errors (counted in ``errors``); 0 in files written before, which counted them in ``called``.",
    )
    not_sent: int = Field(
        default=0,
        exclude_if=lambda v: not v,
        description="Requests refused before sending for what they hold (a sample's images "
        "over what one request may carry or show, unreadable, or more than the model takes): "
        "not in ``called``, stored as ``unsupported_input`` errors (counted in ``errors``); "
        "absent from the file when 0 (files written before counted the backend's in "
        "``called``).",
    )
    attempts: int = Field(
        default=0,
        exclude_if=lambda v: not v,
        description="Attempts sent for the requests in ``called``, retries included, where the "
        "backend retried (a reply malformed or empty is asked again, and paid each time): "
        "absent from the file when no request took more than one.",
    )
    errors: int = Field(description="Requests that ended in an error.")
    prompt_tokens: int = Field(default=0, description="Prompt tokens reported by the backend.")
    completion_tokens: int = Field(default=0, description="Completion tokens reported.")
    mean_latency_s: float | None = Field(default=None, description="Mean seconds per request.")
    redacted: int = Field(
        default=0,
        description="Answers from which the configured API key was taken out before they were "
        "stored (the server or model quoted it; `Response.redacted`).",
    )


class RowCounts(BaseModel):
    """A model's rows by outcome (`lmmprobe.metrics.outcome`): what every ``n`` shown counts."""

    rows: int = Field(description=COUNT_HELP["rows"] + ".")
    judged: int = Field(description=COUNT_HELP["judged"] + ".")
    correct: int = Field(description=COUNT_HELP["correct"] + ".")
    wrong: int = Field(description=COUNT_HELP["wrong"] + ".")
    unparsed: int = Field(description=COUNT_HELP["unparsed"] + ".")
    truncated: int = Field(
        default=0,
        description=COUNT_HELP["truncated"] + " (0 in files written before lmmprobe named them).",
    )
    free_text: int = Field(description=COUNT_HELP["free_text"] + ".")
    empty: int = Field(description=COUNT_HELP["empty"] + ".")
    error: int = Field(description=COUNT_HELP["error"] + ".")

    @classmethod
    def of(cls, counts: OutcomeCounts) -> RowCounts:
        """The typed counts of `counts`."""
        return cls.model_validate(counts.to_dict())


class JudgeCalls(BaseModel):
    """One judge's calls about one model's answers."""

    requests: int = Field(
        description="Judge requests the answers needed: one per distinct judge prompt (answers "
        "whose prompts are identical share one request; a grouped protocol's prompt grades "
        "several answers)."
    )
    verdicts: int | None = Field(
        default=None,
        description="Verdicts the requests gave (one per answer and protocol repeat): more "
        "than ``requests`` where answers share a judge prompt; None in files written before.",
    )
    cached: int = Field(description="Answered from the store.")
    called: int = Field(description="Sent to the judge.")
    errors: int = Field(
        description="Requests that ended in an error (this judge's verdicts on their answers "
        "unjudged)."
    )
    read: int | None = Field(
        default=None,
        description="This judge's verdicts that were read (decided by it); None in files "
        "written before. With ``unjudged`` it adds up to ``verdicts``.",
    )
    unjudged: dict[str, int] = Field(
        default_factory=dict,
        description="This judge's unjudged verdicts by why (the reasons of "
        "`JudgeResults.unjudged`, which sums them over the judges).",
    )
    cost: float | None = Field(
        default=None,
        description="Dollars this judge's responses about the model's answers cost at the "
        "judge's price (each response once, those from the store too, as the model's ``cost`` "
        "metric counts its own); None: the judge has no price. Never part of the model's cost.",
    )


class JudgeResults(BaseModel):
    """How one model's answers were judged (``--judge``)."""

    judges: list[str] = Field(description="Judge model specs, in order.")
    protocols: dict[str, str] = Field(description="Protocol name → version, of those applied.")
    decided: dict[str, int] = Field(
        description="Answers a protocol applies to, by the path that decided them: ``rule`` "
        "(rules read it, no judge asked), ``judge`` (a judge's reply was read) and "
        "``unjudged`` (every judge failed or replied unreadably: counted apart)."
    )
    settled: int = Field(
        default=0,
        description="Of ``decided['rule']``, answers settled without a judge call whatever "
        "``--judge-when`` says: an empty answer is wrong (lmmprobe's own protocols).",
    )
    calls: dict[str, JudgeCalls] = Field(
        default_factory=dict, description="Judge spec → its calls about this model's answers."
    )
    unjudged: dict[str, int] = Field(
        default_factory=dict,
        description="Unjudged verdicts (one per judge call about an answer) by why: ``failed "
        "call`` (asked again by the same command), ``not sent (budget)``, ``unreadable reply`` "
        "and ``truncated`` (read again, not asked again), ``not asked``.",
    )
    agreement: dict[str, Any] = Field(
        default_factory=dict,
        description="Agreement between judges (percent, Cohen's or Fleiss' kappa, "
        "Krippendorff's alpha) and with the rules (``with_rules``); see docs/judges.md.",
    )


class JudgedHeadline(BaseModel):
    """Where a judge's verdict decides answers in a model's headline answer rates.

    An answer lmmprobe's rules could not read (unparsed) that a judge read counts right or
    wrong by the judges' verdict (`lmmprobe.schema.judgement.judges_verdict`) in ``accuracy``
    and ``balanced_accuracy`` (and their ``--by`` groups and intervals); ``METRIC_rules_only``
    beside each gives the rules' reading alone. Answers neither read are not correct.
    """

    judges: list[str] = Field(
        description="The judges whose verdicts may decide (the run's ``--judge`` specs, or "
        "the tool a file's recorded verdicts came from), in order."
    )
    answers: int = Field(
        description="Answered rows the rules could not read whose verdict in the headline is "
        "the judges'."
    )
    correct: int = Field(description="Of them, those the judges read as right.")
    metrics: list[str] = Field(
        description="The judged figures, each with its ``METRIC_rules_only`` companion."
    )

    def sentence(self) -> str:
        """What the judges decided in the headline, in words (the figures aside)."""
        names = ", ".join(self.metrics) or "the answer rates"
        by = ", ".join(self.judges) or "recorded judges"
        return (
            f"{names} judged: {self.answers} answer(s) the rules could not read count as {by} "
            f"read them ({self.correct} right); answers neither read count as not correct"
        )


class ModelResults(BaseModel):
    """One model's results."""

    metrics: Metrics = Field(description="Run-level metrics with 95% bootstrap intervals.")
    breakdown: dict[str, dict[str, Metrics]] = Field(
        default_factory=dict,
        description="Metadata key (``--by``) → group value → metrics of the group's rows.",
    )
    sensitivity: Sensitivity = Field(default_factory=Sensitivity, description="Dysca's SQ/SC.")
    stats: ModelStats = Field(description="Request counts and usage.")
    counts: RowCounts | None = Field(
        default=None,
        description="The model's rows by outcome; None in files written before lmmprobe "
        "recorded them (the metrics' n then say as much).",
    )
    breakdown_counts: dict[str, dict[str, RowCounts]] = Field(
        default_factory=dict,
        description="Metadata key (``--by``) → group value → the group's rows by outcome.",
    )
    judge: JudgeResults | None = Field(
        default=None, description="How the answers were judged; None (left out): no judge."
    )
    judged_headline: JudgedHeadline | None = Field(
        default=None,
        description="Where the headline answer rates take a judge's verdict on answers the "
        "rules could not read; None (left out): they are the rules' reading alone.",
    )

    @model_serializer(mode="wrap")
    def _counts_when_recorded(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A file written before counts were recorded reads back and dumps as it was.
        out: dict[str, Any] = handler(self)
        if out.get("counts") is None:
            out.pop("counts", None)
        if not out.get("breakdown_counts"):
            out.pop("breakdown_counts", None)
        if out.get("judge") is None:
            out.pop("judge", None)
        if out.get("judged_headline") is None:
            out.pop("judged_headline", None)
        return out


class ManifestData(BaseModel):
    """The data part of the manifest."""

    model_config = ConfigDict(extra="allow")

    spec: str = Field(description="The data spec.")
    fingerprint: str = Field(description="Hash of every sample (questions, answers, images).")
    fingerprint_version: int = Field(
        default=1, description="How the fingerprint was computed (files before it existed: 1)."
    )
    samples: int | None = Field(default=None, description="Samples fingerprinted.")


class Manifest(BaseModel):
    """The reproducibility manifest (`lmmprobe.run.manifest`); further fields are kept as they are."""

    model_config = ConfigDict(extra="allow")

    lmmprobe: str = Field(description="lmmprobe version.")
    python: str = Field(description="Python version.")
    git_commit: str | None = Field(default=None, description="Commit of the lmmprobe checkout.")
    models: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Model spec → identity (backend, name, revision...)."
    )
    data: ManifestData = Field(description="Data spec and fingerprint.")


class Results(BaseModel):
    """A run's results: ``results.json`` is its dump."""

    format_version: int = Field(default=FORMAT_VERSION, description="Version of this layout.")
    run_id: str = Field(description="The run's id in the store.")
    status: str = Field(
        description="complete, complete_with_errors, stopped_budget, judging_failed, ..."
    )
    finished_at: str = Field(description="When the results were built (ISO 8601, local time).")
    store: str = Field(description="The SQLite store holding every response.")
    data: DataSummary = Field(description="What the data source gave.")
    models: dict[str, ModelResults] = Field(description="Model spec → its results.")
    spec: RunSpec = Field(description="The run's spec.")
    manifest: Manifest = Field(description="Versions, identities, fingerprint, prompts, seeds.")
    notes: list[str] = Field(
        default_factory=list,
        description="What a reader of the figures must know that they cannot say "
        "(`lmmprobe.report.settings.run_notes`: baselines run with ``--method likelihood`` "
        "score options with made-up log-likelihoods); absent when there is none.",
    )

    @model_serializer(mode="wrap")
    def _notes_when_any(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Most runs have no note: their files stay as they were.
        out: dict[str, Any] = handler(self)
        if not out.get("notes"):
            out.pop("notes", None)
        return out

    def to_json(self) -> str:
        r"""The ``results.json`` text.

        A path that is not UTF-8 (the store's, the data's: a Linux name may be any bytes, which
        Python reads as lone surrogates) is written with JSON's escape of each such character
        (``\udcff``): still UTF-8 JSON, read back by `load_results` as the same path.
        """
        try:
            return self.model_dump_json(indent=2) + "\n"
        except PydanticSerializationError as exc:
            if "surrogates not allowed" not in str(exc):
                raise
        text = json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False)
        return json_escaped(text) + "\n"


def _migrate(doc: dict[str, Any], source: str) -> dict[str, Any]:
    """`doc` brought to `FORMAT_VERSION`, or a `ResultsFormatError` saying why not."""
    version = doc.get("format_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ResultsFormatError(
            f"{source}: format_version must be a whole number >= 1, not {version!r}"
        )
    if version > FORMAT_VERSION:
        raise ResultsFormatError(
            f"{source}: results format version {version} is newer than this lmmprobe reads "
            f"(up to {FORMAT_VERSION}); upgrade lmmprobe to read it"
        )
    if version == 1:
        # Version 1 differs only in lacking the version field.
        doc = {**doc, "format_version": 2}
    return doc


def results_from_dict(doc: Any, source: str) -> Results:
    """Validate a results document (migrating an older version), strictly.

    Read as pydantic's strict mode reads (a figure written as text is refused, not converted),
    and every metric checked (`lmmprobe.metrics.value.stored_metric_problem`: finite numbers, ``n >= 0``,
    ``low <= value <= high``): a store or file edited by hand gives one line naming the field,
    never a headline lmmprobe did not compute.

    Args:
        doc: The decoded JSON (``results.json``, or a run's results in the store).
        source: Where it came from, for messages (a file path, ``run X in DB``).

    Raises:
        ResultsFormatError: Too new, or not lmmprobe results (the message names the field).

    """
    if not isinstance(doc, dict):
        raise ResultsFormatError(f"{source}: not lmmprobe results (a JSON object is expected)")
    try:
        return Results.model_validate(_migrate(doc, source), strict=True, context={_READING: True})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(p) for p in first["loc"]]
        if first["type"] == _STORED_METRIC:  # the metric's own field, as pydantic would name it
            loc.append(str(first.get("ctx", {}).get("field")))
        where = ".".join(loc) or "(top level)"
        raise ResultsFormatError(
            f"{source}: not readable lmmprobe results: {where}: {first['msg']}"
            + (f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else "")
        ) from exc


def load_results(path: str | Path) -> Results:
    """Read a ``results.json`` file, migrating an older version.

    Raises:
        ResultsFormatError: The file is not JSON, too new, or not lmmprobe results; the
            message names the file.
        OSError: The file cannot be read.

    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        # The bounded reader of outside JSON: a regular file, size-capped, nested at most
        # 100 levels (a results.json may come from elsewhere).
        doc = read_json_file(path, what="a run's results.json")
    except ValueError as exc:
        raise ResultsFormatError(str(exc)) from None
    return results_from_dict(doc, str(path))
