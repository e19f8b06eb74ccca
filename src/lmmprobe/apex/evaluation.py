"""Evaluating every model on an experiment's dataset through lmmprobe's runner, and reading it.

Origin: APEx (Conti et al.) ranks the answers of each question by the model's mean token
log-probability and reports per-answer accuracy, class-balanced accuracy and the abstention rate.
Here a model that can score continuations (`Capabilities.likelihood`) is evaluated that way
(``method="likelihood"``, mean reduction); any other model generates an answer that lmmprobe's
extraction pipeline maps to an option. Responses go through the store like any run (resumable,
cached by request), and the metrics come with 95% cluster-bootstrap intervals
(`lmmprobe.metrics.summarize`) and the chance level, which the verdicts and statistical
findings compare against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from lmmprobe._secrets import redact_spec
from lmmprobe.apex.experiments import Finding, Interval, ModelResult, Report, Results, Verdict
from lmmprobe.metrics import MetricValue, group_by, summarize
from lmmprobe.models.base import AsyncModel, Model
from lmmprobe.run import (
    Executor,
    ProgressSink,
    build_manifest,
    new_run_id,
    run_model,
)
from lmmprobe.schema import FormulateConfig, RunSpec, Sample, Score
from lmmprobe.store import Store


def _interval(m: MetricValue) -> Interval:
    return Interval(value=m.value, low=m.low, high=m.high, n=m.n)


def verdict(accuracy: Interval, chance: float) -> Verdict:
    """Where the accuracy's 95% interval lies relative to chance."""
    if accuracy.value is None or accuracy.low is None or accuracy.high is None:
        return "undetermined"
    if accuracy.low > chance:
        return "above_chance"
    if accuracy.high < chance:
        return "below_chance"
    return "at_chance"


def method_for(model: Model | AsyncModel) -> Literal["likelihood", "generate"]:
    """Likelihood ranking when the backend supports it, else generation + extraction."""
    return "likelihood" if model.capabilities.likelihood else "generate"


def model_result(
    spec: str,
    method: Literal["likelihood", "generate"],
    scores: Sequence[Score],
    *,
    answers: Sequence[str],
    chance: float,
    n_boot: int,
    seed: int,
) -> ModelResult:
    """Summarize one model's scores on one experiment."""
    overall = summarize(scores, n_boot=n_boot, seed=seed)
    per = group_by(scores, "apex_answer")
    per_answer = {
        a: _interval(summarize(per.get(a, []), n_boot=n_boot, seed=seed)["accuracy"])
        for a in answers
    }
    acc = _interval(overall["accuracy"])
    abstention = overall["abstention_rate"]
    return ModelResult(
        model=spec,
        method=method,
        accuracy=acc,
        balanced_accuracy=_interval(overall["balanced_accuracy"]),
        per_answer=per_answer,
        abstention_rate=_interval(abstention) if abstention.value is not None else None,
        error_rate=_interval(overall["error_rate"]),
        chance=chance,
        verdict=verdict(acc, chance),
    )


def evaluate_models(
    samples: Sequence[Sample],
    models: Mapping[str, Model | AsyncModel],
    *,
    store: Store,
    answers: Sequence[str],
    seed: int,
    n_boot: int,
    label: str,
    out_dir: Path,
    data_fingerprint: str,
    executor: Executor | None = None,
    progress: ProgressSink | None = None,
) -> tuple[Results, str]:
    """Run every model on the samples and summarize; the run is recorded in the store.

    Args:
        samples: The experiment's samples.
        models: Loaded models by spec.
        store: Where responses are cached and the run recorded.
        answers: Answer texts in order (the "Unknown" option excluded).
        seed: Prompting and bootstrap seed.
        n_boot: Bootstrap resamples for the intervals (0: none, and verdicts undetermined).
        label: Data name recorded with the run (e.g. ``apex:experiment-2``).
        out_dir: Output folder recorded with the run.
        data_fingerprint: The dataset's fingerprint, for the run's manifest.
        executor: Where requests run (local by default).
        progress: Progress reporting.

    Returns:
        The results and the run's id.

    """
    n_options = len(samples[0].choices or ()) if samples else len(answers)
    chance = 1.0 / max(1, n_options)
    run_id = new_run_id()
    base = RunSpec(models=list(models), data=label, seed=seed, bootstrap=n_boot)
    methods = {spec: method_for(m) for spec, m in models.items()}
    store.create_run(run_id, base.model_dump(mode="json"), str(out_dir))
    # Recorded with the first answers, so a viewer shows each sample's question and images.
    store.put_samples(run_id, samples)
    manifest = build_manifest(
        base, {s: m.identity for s, m in models.items()}, data_fingerprint, len(samples)
    )
    manifest["methods"] = methods
    store.update_run(run_id, manifest=manifest)
    results: list[ModelResult] = []
    try:
        for spec, model in models.items():
            # APEx ranks answers by their mean token log-probability.
            run_spec = base.model_copy(
                update={
                    "formulate": FormulateConfig(method=methods[spec], likelihood_reduction="mean")
                }
            )
            outcome = run_model(
                spec, model, samples, run_spec, store, executor=executor, progress=progress
            )
            store.put_scores(run_id, outcome.scores)
            results.append(
                model_result(
                    spec,
                    methods[spec],
                    outcome.scores,
                    answers=answers,
                    chance=chance,
                    n_boot=n_boot,
                    seed=seed,
                )
            )
    except BaseException:
        store.update_run(run_id, status="failed")
        raise
    store.update_run(run_id, status="complete")
    return Results(models=results, n_images=len(samples), chance=chance), run_id


def _fmt(iv: Interval) -> str:
    if iv.value is None:
        return "undefined"
    if iv.low is None or iv.high is None:
        return f"{iv.value:.2f}"
    return f"{iv.value:.2f} [{iv.low:.2f}, {iv.high:.2f}]"


_VERDICT_TEXT = {
    "above_chance": "above chance",
    "at_chance": "not distinguishable from chance",
    "below_chance": "below chance",
    "undetermined": "undetermined (no confidence interval)",
}


def statistical_findings(results: Results) -> list[Finding]:
    """Findings that follow from the numbers alone: verdicts, response bias, best and worst.

    Used by the rules and replay orchestrators, and as the fallback when an LLM's discussion
    cannot be read.
    """
    out: list[Finding] = []
    for r in results.models:
        # Prose names a model by its spec with any secret redacted (a URL's password), as
        # every written spec is: the statements are written and shown as they are.
        name = redact_spec(r.model)
        out.append(
            Finding(
                statement=f"{name} ({r.method}): accuracy {_fmt(r.accuracy)} is "
                f"{_VERDICT_TEXT[r.verdict]} (chance {r.chance:.2f}).",
                model=r.model,
            )
        )
        per = {a: iv.value for a, iv in r.per_answer.items() if iv.value is not None}
        if len(per) >= 2:
            high = [a for a, v in per.items() if v >= 0.9]
            low = [a for a, v in per.items() if v <= 0.1]
            if len(high) == 1 and len(low) == len(per) - 1:
                out.append(
                    Finding(
                        statement=f"{name} answers {high[0]!r} for nearly every image: a "
                        "response bias, not evidence of recognition.",
                        model=r.model,
                    )
                )
            else:
                best = max(per, key=lambda a: per[a])
                worst = min(per, key=lambda a: per[a])
                if per[best] - per[worst] >= 0.3:
                    out.append(
                        Finding(
                            statement=f"{name} is most accurate on {best!r} "
                            f"({per[best]:.2f}) and least on {worst!r} ({per[worst]:.2f}).",
                            model=r.model,
                        )
                    )
        if r.abstention_rate is not None and (r.abstention_rate.value or 0) >= 0.5:
            out.append(
                Finding(
                    statement=f"{name} abstains on {r.abstention_rate.value:.0%} of images.",
                    model=r.model,
                )
            )
        if r.error_rate.value:
            out.append(
                Finding(
                    statement=f"{name}: {r.error_rate.value:.0%} of requests failed "
                    "(excluded from accuracy).",
                    model=r.model,
                )
            )
    ranked = [r for r in results.models if r.accuracy.value is not None]
    if len(ranked) >= 2:
        best_r = max(ranked, key=lambda r: r.accuracy.value or 0.0)
        worst_r = min(ranked, key=lambda r: r.accuracy.value or 0.0)
        separated = (
            best_r.accuracy.low is not None
            and worst_r.accuracy.high is not None
            and best_r.accuracy.low > worst_r.accuracy.high
        )
        if best_r is not worst_r and separated:
            out.append(
                Finding(
                    statement=f"{redact_spec(best_r.model)} is more accurate than "
                    f"{redact_spec(worst_r.model)} "
                    "(non-overlapping 95% intervals)."
                )
            )
    return out


def fallback_conclusions(report: Report) -> list[str]:
    """Conclusions from the verdicts alone (used when the orchestrator cannot be asked)."""
    out = []
    for model in report.models:
        rows = [
            (rec.index, r)
            for rec in report.experiments
            for r in rec.results.models
            if r.model == model
        ]
        above = [i for i, r in rows if r.verdict == "above_chance"]
        if not rows:
            out.append(f"{redact_spec(model)}: no experiment was run.")
            continue
        which = ", ".join(f"E{i}" for i in above) if above else "none"
        out.append(
            f"{redact_spec(model)}: above chance in {len(above)} of {len(rows)} experiments "
            f"({which})."
        )
    return out
