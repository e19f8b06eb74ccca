"""Per-run outputs: ``results.json`` (everything) and ``results.md`` (for people)."""

from __future__ import annotations

import contextlib
import json
import logging
import operator
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from lmmprobe._inert import inert
from lmmprobe._secrets import redact_record
from lmmprobe.metrics import (
    MetricValue,
    compute_metrics,
    covariate_shift_sensitivity_from_scores,
    headline_metrics,
    metric_digits,
    question_type_sensitivity_from_scores,
    scenario_deltas,
)
from lmmprobe.metrics.builtin.answers import RULES_ONLY
from lmmprobe.metrics.outcome import ACCURACY_N, COUNT_HELP
from lmmprobe.metrics.reduction import CachedRows, GroupRows, RowSummary, summarize_rows
from lmmprobe.metrics.synth import (
    MULTIPLE_CHOICE,
    TRUE_FALSE,
    accuracy_by,
    covariate_shift_of,
    question_type_sensitivity_of,
    scenario_deltas_of,
)
from lmmprobe.report._format import format_metric, md_cell
from lmmprobe.report.leaderboard import leaderboard_notes
from lmmprobe.report.model import (
    DataSummary,
    JudgedHeadline,
    JudgeResults,
    Manifest,
    Metrics,
    ModelResults,
    ModelStats,
    QuestionTypeSensitivity,
    Results,
    RowCounts,
    Sensitivity,
    results_from_dict,
)
from lmmprobe.report.settings import run_notes
from lmmprobe.schema import RowSource, RunSpec, Score
from lmmprobe.schema.record import RunRecord
from lmmprobe.schema.rows import ABSENT
from lmmprobe.schema.text import shown_path
from lmmprobe.store import Store

log = logging.getLogger(__name__)

__all__ = [
    "TEXT_SCORES",
    "build_results",
    "format_metric",
    "model_results",
    "no_text_to_score",
    "rebuild_results",
    "render_markdown",
    "row_counts",
    "sensitivity_metrics",
    "split_adversarial",
    "write_results",
]


TEXT_SCORES = frozenset({"freeform_score", "dysca_caption_score"})
"""Metrics that score the text of free-form answers."""


class _FreeFormCounts(Protocol):
    @property
    def free_text(self) -> int: ...
    @property
    def empty(self) -> int: ...


def no_text_to_score(metric: str, counts: _FreeFormCounts | None) -> bool:
    """Whether `metric` would score free-form text a model never gave.

    The baselines (``random``, ``first``) answer every open question with nothing: their
    free-form score of 0.000 read as a score they earned. Tables show ``-`` instead when no
    free-form or caption row of the model (or group) has text; results.json keeps lmmprobe's 0,
    and Dysca's caption score is not computed for such rows at all (see
    `lmmprobe.metrics.builtin.description.dysca_caption_metric`).

    Args:
        metric: A metric name.
        counts: The rows' outcome counts (`RowCounts`, `OutcomeCounts`), or None (unknown).

    """
    return (
        metric in TEXT_SCORES and counts is not None and counts.empty > 0 and not counts.free_text
    )


def split_adversarial(scores: list[Score], identity: dict[str, Any] | None) -> list[Score]:
    """Relabel adversarial rows by the model's relation to the attack's proxy.

    Dysca attacks one proxy model; for that model the attack is white-box, for every other
    model it is a transfer attack. Reporting them under one ``adversarial`` label would mix the
    two, so rows become ``adversarial/white-box`` or ``adversarial/transfer``.
    """
    if identity is None or not any("adversarial" in s.metadata for s in scores):
        return scores
    from lmmprobe.synth.adversarial import proxy_relation

    out = []
    for s in scores:
        record = s.metadata.get("adversarial")
        if s.metadata.get("scenario") == "adversarial" and isinstance(record, dict):
            label = f"adversarial/{proxy_relation(record, identity)}"
            s = s.model_copy(update={"metadata": {**s.metadata, "scenario": label}})
        out.append(s)
    return out


def sensitivity_metrics(scores: list[Score]) -> Sensitivity:
    """Dysca's sensitivities where the metadata allows them (scales: `SENSITIVITY_SCALES`).

    SQ needs both true/false and multiple-choice rows (``metadata.question_type``), SC two or
    more ``metadata.style`` values, scenario deltas a ``clean`` ``metadata.scenario``.
    """
    out = Sensitivity()
    metadata = list(map(operator.attrgetter("metadata"), scores))  # fetched once for three passes
    types = {m.get("question_type") for m in metadata}
    if {TRUE_FALSE, MULTIPLE_CHOICE} <= types:
        qt = None
        with contextlib.suppress(ValueError):  # e.g. every row of one type failed
            qt = question_type_sensitivity_from_scores(scores)
        if qt is not None:  # validated outside the suppress: a schema mismatch is a bug, not n/a
            out.question_type = QuestionTypeSensitivity.model_validate(qt)
    if len({m["style"] for m in metadata if "style" in m}) > 1:
        with contextlib.suppress(ValueError):
            out.covariate_shift_SC = covariate_shift_sensitivity_from_scores(scores)
    if any(m.get("scenario") == "clean" for m in metadata):
        with contextlib.suppress(ValueError):
            out.scenario_deltas = scenario_deltas(scores)
    return out


_SENSITIVITY_KEYS = ("question_type", "style", "scenario")


def rows_sensitivity(
    rows: RowSource, summary: RowSummary, identity: dict[str, Any] | None
) -> Sensitivity | None:
    """`sensitivity_metrics` of `split_adversarial`'s rows, reduced chunk by chunk.

    The sensitivities are functions of per-label accuracies (`scores_by`), so one pass over
    the rows' columns counts the judged and right rows per question type, style and scenario
    (an adversarial row's scenario relabelled as `split_adversarial` does) and no Score is
    built. None where some question type or style is unhashable (a list): then the Score-list
    code runs and says what it makes of it, as before.
    """
    from lmmprobe.synth.adversarial import proxy_relation

    relabel = identity is not None and summary.adversarial
    judged: dict[str, dict[str, int]] = {k: {} for k in _SENSITIVITY_KEYS}
    right: dict[str, dict[str, int]] = {k: {} for k in _SENSITIVITY_KEYS}
    types: set[Any] = set()
    styles: set[Any] = set()
    clean = False
    for chunk in rows.chunks():
        meta = chunk.meta
        for i, (error, stage, verdict) in enumerate(
            zip(chunk.error_type, chunk.stage, chunk.correct, strict=True)
        ):
            values = {k: meta[k][i] for k in _SENSITIVITY_KEYS}
            if relabel and values["scenario"] == "adversarial":
                record = meta["adversarial"][i]
                if isinstance(record, dict) and identity is not None:
                    values["scenario"] = f"adversarial/{proxy_relation(record, identity)}"
            try:
                types.add(None if values["question_type"] is ABSENT else values["question_type"])
                if values["style"] is not ABSENT:
                    styles.add(values["style"])
            except TypeError:  # unhashable: the Score-list code's error, not a guess
                return None
            clean = clean or values["scenario"] == "clean"
            # `scores_by`'s rule: errors and rows without a verdict are not judged; a judged
            # unparsed answer is wrong.
            if error is not None or verdict is None or stage == "error":
                continue
            ok = verdict and stage != "unparsed"
            for key, raw in values.items():
                if raw is ABSENT:
                    continue
                label = str(raw)
                judged[key][label] = judged[key].get(label, 0) + 1
                if ok:
                    right[key][label] = right[key].get(label, 0) + 1
    out = Sensitivity()
    if {TRUE_FALSE, MULTIPLE_CHOICE} <= types:
        qt = None
        with contextlib.suppress(ValueError):  # e.g. every row of one type failed
            qt = question_type_sensitivity_of(accuracy_by(judged["question_type"], right["question_type"]))  # fmt: skip
        if qt is not None:  # validated outside the suppress: a schema mismatch is a bug, not n/a
            out.question_type = QuestionTypeSensitivity.model_validate(qt)
    if len(styles) > 1:
        with contextlib.suppress(ValueError):
            out.covariate_shift_SC = covariate_shift_of(
                accuracy_by(judged["style"], right["style"])
            )
    if clean:
        with contextlib.suppress(ValueError):
            out.scenario_deltas = scenario_deltas_of(
                accuracy_by(judged["scenario"], right["scenario"])
            )
    return out


def _sensitivity_applies(summary: RowSummary) -> bool:
    """Whether `sensitivity_metrics` could give anything for rows of this summary."""
    return (
        {TRUE_FALSE, MULTIPLE_CHOICE} <= summary.question_types
        or len(summary.styles) > 1
        or summary.unhashable_style  # as today: `sensitivity_metrics` says what it makes of it
        or summary.clean_scenario
    )


def model_results(
    rows: RowSource,
    spec: RunSpec,
    *,
    identity: dict[str, Any] | None,
    stats: ModelStats,
    judge: JudgeResults | None = None,
) -> ModelResults:
    """One model's results (metrics, ``--by`` breakdowns, sensitivity, counts) from its rows.

    One pass over `rows` gives the summaries of the model and of every ``--by`` group
    (`summarize_rows`); a metric that needs Scores builds them once (`MetricContext.scores`),
    so a plain single-choice run reduces its rows without building any.

    Args:
        rows: The model's rows (a stored run's, or Scores in memory: `ScoreRows`).
        spec: The run's spec.
        identity: The model's identity in the manifest (adversarial rows are split by it).
        stats: Its request counts and usage.
        judge: How its answers were judged, if they were.

    """
    source = CachedRows(rows)
    whole, groups = summarize_rows(source, list(spec.by), track_cost=bool(spec.prices))
    source.summary = whole  # decides which metrics' row extracts the one pass makes
    sensitivity = Sensitivity()
    if _sensitivity_applies(whole):
        reduced = rows_sensitivity(source, whole, identity)
        sensitivity = (
            reduced
            if reduced is not None
            else sensitivity_metrics(split_adversarial(list(source.scores()), identity))
        )
    metrics = compute_metrics(source, spec, summary=whole)
    return ModelResults(
        metrics=metrics,
        breakdown={
            key: {
                label: compute_metrics(
                    GroupRows(source, key, label), spec, group=f"{key}={label}", summary=summary
                )
                for label, summary in by_label.items()
            }
            for key, by_label in groups.items()
        },
        sensitivity=sensitivity,
        stats=stats,
        counts=RowCounts.of(whole.outcomes()),
        breakdown_counts={
            key: {label: RowCounts.of(summary.outcomes()) for label, summary in by_label.items()}
            for key, by_label in groups.items()
        },
        judge=judge,
        judged_headline=judged_headline(whole, metrics, judge),
    )


def judged_headline(
    summary: RowSummary, metrics: Mapping[str, MetricValue], judge: JudgeResults | None
) -> JudgedHeadline | None:
    """How a judge decided a model's headline answer rates (`JudgedHeadline`); None: it did not.

    Args:
        summary: The model's rows' summary (its answer sums count the answers judges decided).
        metrics: Its metrics (the judged rates with a ``_rules_only`` companion are named).
        judge: How its answers were judged (the judges named), if recorded.

    """
    answers = summary.answers
    if not answers.judge_decided:
        return None
    return JudgedHeadline(
        judges=list(judge.judges) if judge is not None else [],
        answers=answers.judge_decided,
        correct=answers.judge_right,
        metrics=[m for m in RULES_ONLY if f"{m}_rules_only" in metrics],
    )


def build_results(record: RunRecord, *, rows: Mapping[str, RowSource]) -> Results:
    """Metrics with 95% CIs, breakdowns, counts, the spec and the manifest of a run.

    Every figure is computed from each model's rows (`model_results`): a run's stored rows
    (`Store.rows`), read in chunks. What rows cannot tell (request counts, how answers were
    judged, the data summary, status, spec and manifest) is the run's `RunRecord`, which the
    step that ran or judged it fills (`lmmprobe.run.RunOutcome.record`).

    Args:
        record: The run's record.
        rows: Each model's rows by spec (a stored run's, `Store.rows`; Scores in memory,
            `ScoreRows`).

    Raises:
        KeyError: A model of the record has no rows in `rows`.

    """
    spec = record.spec
    identities = record.manifest.get("models", {})
    models: dict[str, ModelResults] = {}
    for mo in record.models:
        models[mo.spec] = model_results(
            rows[mo.spec],
            spec,
            identity=identities.get(mo.spec),
            stats=ModelStats.model_validate(mo.stats),
            judge=None if mo.judge is None else JudgeResults.model_validate(mo.judge),
        )
    return Results(
        run_id=record.run_id,
        status=record.status,
        finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        store=str(record.store),
        data=DataSummary(
            source=record.source,
            samples=record.samples,
            invalid=record.invalid,
            problems=list(record.problems),
        ),
        models=models,
        spec=spec,
        manifest=Manifest.model_validate(record.manifest),
        notes=run_notes(spec, models) + leaderboard_notes(spec, models),
    )


def rebuild_results(store: Store, run_id: str) -> Results:
    """A stored run's results computed again from its rows in the store, chunk by chunk.

    What rows cannot tell (the data summary, request counts, how answers were judged, the
    status, spec and manifest) is the run's stored results'; every metric, breakdown,
    sensitivity and count is computed from the stored rows (`Store.rows`) as `build_results`
    computes it, so the figures are those of a run whose Scores came from the store.

    Args:
        store: The store holding the run.
        run_id: The run.

    Raises:
        KeyError: The store holds no such run.
        ValueError: The run has no stored results (it never finished): run it again.
        ResultsFormatError: Its stored results cannot be read.

    """
    run = store.get_run(run_id)
    if not run["results"]:
        raise ValueError(
            f"run {run_id} in {store.path} has no results to rebuild ({run['status']}): run it "
            "again with the command that started it"
        )
    stored = results_from_dict(run["results"], f"run {run_id} in {store.path}")
    identities = stored.manifest.models
    models = {
        model: model_results(
            store.rows(run_id, model),
            stored.spec,
            identity=identities.get(model),
            stats=previous.stats,
            judge=previous.judge,
        )
        for model, previous in stored.models.items()
    }
    # The notes too: results stored before lmmprobe recorded them get theirs.
    notes = run_notes(stored.spec, models) + leaderboard_notes(stored.spec, models)
    return stored.model_copy(update={"models": models, "notes": notes})


# Markdown's inline syntax (code, emphasis, links, strikethrough, a heading's closing #s); an
# underscore inside a word (question_type) emphasizes nothing and stays as it is, for reading.
_MD_SPECIAL = re.compile(r"[\\`*\[\]#~]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def md_text(text: object) -> str:
    """Untrusted text (a ``--by`` key, a group, a model spec) for a Markdown heading or cell.

    `md_cell` (HTML escaped, pipes and newlines neutralized) with Markdown's inline syntax
    backslash-escaped, so a metadata key like ``*x*|[y](z)`` shows as written.
    """
    return md_cell(None if text is None else _MD_SPECIAL.sub(r"\\\g<0>", str(text)))


def row_counts(metrics: Metrics, counts: RowCounts | None) -> tuple[int, int]:
    """``(rows, judged)`` of a model or group: its counts, else its metrics' denominators.

    Files written before lmmprobe recorded counts have no `counts`: every row is the error
    rate's n and the judged rows are accuracy's (`lmmprobe.metrics.outcome` defines both).
    """
    if counts is not None:
        return counts.rows, counts.judged
    errors, accuracy = metrics.get("error_rate"), metrics.get("accuracy")
    return (errors.n if errors else 0), (accuracy.n if accuracy else 0)


def _table(rows: list[tuple[str, Metrics, RowCounts | None]], first: str) -> list[str]:
    names = [m.name for m in headline_metrics() if any(m.name in r[1] for r in rows)]
    lines = [
        "| " + " | ".join([md_text(first), "rows", ACCURACY_N, *names]) + " |",
        "|" + "---|" * (len(names) + 3),
    ]
    for label, metrics, counts in rows:
        n_rows, judged = row_counts(metrics, counts)
        cells = [
            "-"
            if no_text_to_score(k, counts)
            else format_metric(metrics.get(k), digits=metric_digits(k))
            for k in names
        ]
        lines.append("| " + " | ".join([md_text(label), str(n_rows), str(judged), *cells]) + " |")
    return lines


def _sensitivity_lines(sens: Sensitivity) -> list[str]:
    lines = []
    if sens.question_type is not None:
        q = sens.question_type
        lines.append(
            f"- question type: S_tf {q.S_tf:.1f} %, S_mc {q.S_mc:.1f} %; TFSQ {q.TFSQ:.1f}, "
            f"MCSQ {q.MCSQ:.1f} (0 = chance, 100 = perfect); SQ {q.SQ:.1f} (their variance, "
            "points²)"
        )
    if sens.covariate_shift_SC is not None:
        lines.append(
            f"- covariate shift across styles: SC {sens.covariate_shift_SC:.1f} (variance of "
            "accuracy over styles, points²)"
        )
    for scen, delta in (sens.scenario_deltas or {}).items():
        lines.append(f"- {md_cell(scen)} vs clean: {delta:+.1f} points")
    return lines


def _judge_lines(results: Results) -> list[str]:
    """The judges section: who judged with which protocol, what each path decided, agreement."""
    judged = {m: r.judge for m, r in results.models.items() if r.judge is not None}
    if not judged:
        return []
    first = next(iter(judged.values()))
    protocols = sorted(
        {f"{p} (version {v})" for j in judged.values() for p, v in j.protocols.items()}
    )
    lines = [
        "",
        "## Judges",
        "",
        f"Judges: {', '.join(f'`{md_cell(j)}`' for j in first.judges)}; protocols: "
        f"{md_cell(', '.join(protocols) or 'none applied')}. judge_score is the judged figure "
        "(majority verdict, or mean grade) over the answers that have one; judge_coverage the "
        "share of the answers a protocol applies to that have one (unjudged answers are counted "
        "apart, never guessed)."
        + (
            " A judge marked (recorded) is the other tool's, its readings recorded in the "
            "imported file: no judge was called."
            if any(v == "recorded" for j in judged.values() for v in j.protocols.values())
            else ""
        ),
        "",
        "| model | decided by rule | by judge | unjudged | judge_score | judge_coverage | agreement |",
        "|---|---|---|---|---|---|---|",
    ]
    for m, j in judged.items():
        metrics = results.models[m].metrics
        agree = ", ".join(f"{k} {v:.3f}" for k, v in j.agreement.items() if isinstance(v, float))
        lines.append(
            f"| {md_cell(m)} | {j.decided.get('rule', 0)} | {j.decided.get('judge', 0)} "
            f"| {j.decided.get('unjudged', 0)} | {format_metric(metrics.get('judge_score'))} "
            f"| {format_metric(metrics.get('judge_coverage'))} | {md_cell(agree or '-')} |"
        )
    priced = [
        (m, s, c.cost) for m, j in judged.items() for s, c in j.calls.items() if c.cost is not None
    ]
    if priced:
        # Apart from the model's own `cost` metric, which counts its answers only.
        lines += ["", "Judge cost (apart from the models' own `cost`):", ""]
        lines += [f"- {md_cell(m)}, judged by `{md_cell(s)}`: ${c:.4f}" for m, s, c in priced]
    return lines


def judged_headline_text(headline: JudgedHeadline, metrics: Metrics) -> str:
    """One sentence naming a judged headline: what the judges decided, and the rules' figures.

    Said wherever the headline is shown (results.md, the terminal), so that a judged
    ``accuracy`` is never read as the rules' own.
    """
    rules = [
        f"{m}_rules_only {format_metric(metrics.get(f'{m}_rules_only'), digits=metric_digits(m))}"
        for m in headline.metrics
    ]
    return headline.sentence() + (f"; the rules alone read {', '.join(rules)}" if rules else "")


def render_markdown(results: Results) -> str:
    """The run as Markdown: headline table, breakdowns, data problems, reproducibility facts."""
    data, spec = results.data, results.spec
    # Said only where a judge decided answers: a run without one reads as before.
    judged_words = (
        ", except an unparsed answer a judge read, which counts as the judge read it (a "
        "Judged line below names it)"
        if any(r.judged_headline is not None for r in results.models.values())
        else ""
    )
    lines = [
        f"# lmmprobe run {results.run_id}",
        "",
        f"Status: **{results.status}**. Data: `{md_cell(data.source)}`, "
        f"{data.samples} samples ({data.invalid} invalid rows skipped). "
        f"Repeats: {spec.repeats}, seed {spec.seed}, method {spec.formulate.method}.",
        "",
        "Values are fractions with 95% bootstrap confidence intervals (resampling samples). "
        "Errors are excluded from accuracy and counted in error_rate; unparsed and truncated "
        "answers (cut off before their answer) count as wrong" + judged_words + ".",
        "",
        f"rows: {COUNT_HELP['rows']}; {ACCURACY_N}: {COUNT_HELP['judged']}. Captions and "
        "free-form descriptions are scored neither right nor wrong: they are rows, not in "
        "accuracy.",
        "",
    ]
    lines += _table([(m, r.metrics, r.counts) for m, r in results.models.items()], "model")
    for m, r in results.models.items():
        if r.judged_headline is not None:
            lines += ["", f"Judged: {md_text(m)}: {md_text(judged_headline_text(r.judged_headline, r.metrics))}."]  # fmt: skip
    for note in results.notes:
        lines += ["", f"Note: {md_text(note)}."]
    silent = [
        md_text(m)
        for m, r in results.models.items()
        if "freeform_score" in r.metrics and no_text_to_score("freeform_score", r.counts)
    ]
    if silent:
        lines += ["", f"freeform_score `-`: {', '.join(silent)} gave no free-form text to score "
                  "(every open answer empty; results.json keeps the 0)."]  # fmt: skip
    lines += ["", "| model | requests | cached | called | errors | prompt tokens | completion tokens |",
              "|---|---|---|---|---|---|---|"]  # fmt: skip
    for m, r in results.models.items():
        s = r.stats
        lines.append(
            f"| {md_cell(m)} | {s.requests} | {s.cached} | {s.called} | {s.errors} "
            f"| {s.prompt_tokens} | {s.completion_tokens} |"
        )
    for m, r in results.models.items():
        if r.stats.refused:
            lines += ["", f"{md_text(m)}: {r.stats.refused} request(s) refused by the backend's "
                      "own budget (`max_requests=`, `max_tokens_total=`) before they were sent: "
                      "not called, counted in errors (`budget`)."]  # fmt: skip
        if r.stats.not_sent:
            lines += ["", f"{md_text(m)}: {r.stats.not_sent} request(s) refused before sending "
                      "for what they hold (images over what one request may carry or show): "
                      "not called, counted in errors (`unsupported_input`)."]  # fmt: skip
    for m, r in results.models.items():
        if r.stats.redacted:
            lines += ["", f"{md_text(m)}: {r.stats.redacted} answer(s) quoted the API key; it was "
                      "replaced by `[redacted]` before they were stored."]  # fmt: skip
    for m, r in results.models.items():
        for key, groups in r.breakdown.items():
            lines += ["", f"## {md_text(m)} by {md_text(key)}", ""]
            per_group = r.breakdown_counts.get(key, {})
            lines += _table([(g, ms, per_group.get(g)) for g, ms in groups.items()], key)
    lines += _judge_lines(results)
    for m, r in results.models.items():
        sens = _sensitivity_lines(r.sensitivity)
        if sens:
            lines += ["", f"## {md_text(m)}: sensitivity (Dysca)", "", *sens]
    if data.problems:
        lines += ["", f"## Invalid input rows (first {len(data.problems)} of {data.invalid})", ""]
        lines += [f"- {md_cell(p)}" for p in data.problems]
    man = results.manifest
    lines += [
        "",
        "## Reproducibility",
        "",
        f"- lmmprobe {man.lmmprobe}, Python {man.python}, git commit {man.git_commit or 'n/a'}",
        f"- data fingerprint `{man.data.fingerprint[:16]}`",
    ]
    for spec_, ident in man.models.items():
        lines.append(f"- model `{md_cell(spec_)}`: {md_cell(json.dumps(ident, sort_keys=True))}")
    return "\n".join(lines) + "\n"


def write_results(results: Results, out_dir: Path) -> tuple[Path, Path]:
    """Write results.json (the model's dump) and results.md into `out_dir`; return both paths.

    Both are written with the secrets of every spec redacted (`redact_record`): a secret in a
    spec that was not refused (a password in a server's URL) still never reaches the files.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    results = Results.model_validate(redact_record(results.model_dump(mode="json")))
    j = out_dir / "results.json"
    md = out_dir / "results.md"
    j.write_text(results.to_json(), encoding="utf-8")
    # Shown in terminals (cat, less -R): control characters from data and models are escaped,
    # and so are the bytes of a file name that is not UTF-8 (``r\xff.jsonl``).
    md.write_text(shown_path(inert(render_markdown(results))), encoding="utf-8")
    return j, md
