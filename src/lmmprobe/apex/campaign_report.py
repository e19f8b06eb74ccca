"""Writing an APEx campaign: report.json (everything), report.md (narrative), thumbnails.

Origin: APEx (Conti et al.) answers a query with a written report of its experiments. Here
report.json holds the whole `Report` — experiments with their datasets, results and findings,
open questions, the sufficiency decision, conclusions, rejected outputs and the orchestrator's
full transcript — and report.md tells it for people: per experiment the question, the answers
and their tools, a results table (accuracy with 95% intervals, class-balanced accuracy,
abstention, per-answer accuracy, verdict against chance), example thumbnails per answer and
the findings. `lmmprobe.report.apex_section` renders the same folder inside the HTML report, with the
same `results_table`.

Orchestrator text is untrusted: in Markdown it is escaped (pipes, angle brackets, ampersands,
backticks) and file names derived from it go through `safe_name`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from PIL import Image

from lmmprobe._inert import inert
from lmmprobe._secrets import redact_record, redact_spec, redact_text
from lmmprobe.apex.experiment_data import ExperimentDataset
from lmmprobe.apex.experiments import ExperimentRecord, Interval, Report
from lmmprobe.apex.orchestrator_output import safe_name

REPORT_JSON = "report.json"
REPORT_MD = "report.md"
THUMB_DIR = "thumbnails"
THUMBS_PER_ANSWER = 3
THUMB_SIZE = 96


def md_escape(text: str) -> str:
    """Escape text for a Markdown table cell or paragraph (no HTML, no table breaks)."""
    return (
        " ".join(str(text).split())
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
        .replace("`", "\\`")
        .replace("[", "\\[")
        .replace("]", "\\]")
    )


def format_interval(iv: Interval | None, ci: bool = True, missing: str = "-") -> str:
    """A metric as ``0.750 [0.61, 0.86]`` (three decimals, the 95% interval when asked)."""
    if iv is None or iv.value is None:
        return missing
    out = f"{iv.value:.3f}"
    if ci and iv.low is not None and iv.high is not None:
        out += f" [{iv.low:.2f}, {iv.high:.2f}]"
    return out


def call_text(tool: str, args: Mapping[str, object]) -> str:
    """A tool call as people read it: ``RotateImage(angle=90.0)``."""
    inner = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{tool}({inner})"


def results_table(
    rec: ExperimentRecord, escape: Callable[[str], str] = str, missing: str = "-"
) -> tuple[list[str], list[list[str]]]:
    """An experiment's results as a table: the header and one row per model, as plain text.

    Args:
        rec: The experiment.
        escape: Applied to the untrusted texts (model specs, answer texts) and nothing else,
            so a renderer can escape them for its format.
        missing: Shown for an undefined metric.

    Returns:
        The header (model, method, accuracy with its interval, balanced accuracy, abstention,
        errors, accuracy per answer, verdict) and the rows, in `rec.results.models` order.

    """
    answers = [a.text for a in rec.experiment.answers]
    head = ["model", "method", "accuracy [95% CI]", "balanced", "abstention", "errors"]
    head += [f"acc: {escape(a)}" for a in answers] + ["verdict"]
    rows = [
        [
            escape(r.model),
            r.method,
            format_interval(r.accuracy, missing=missing),
            format_interval(r.balanced_accuracy, ci=False, missing=missing),
            format_interval(r.abstention_rate, ci=False, missing=missing),
            format_interval(r.error_rate, ci=False, missing=missing),
            *(format_interval(r.per_answer.get(a), ci=False, missing=missing) for a in answers),
            r.verdict.replace("_", " "),
        ]
        for r in rec.results.models
    ]
    return head, rows


def write_thumbnails(
    record: ExperimentRecord, dataset: ExperimentDataset, out_dir: Path
) -> dict[str, list[str]]:
    """Save the first images of each answer as small PNGs; paths relative to `out_dir`."""
    folder = out_dir / THUMB_DIR / f"e{record.index}"
    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, list[str]] = {}
    for answer, refs in dataset.images.items():
        paths = []
        for j, ref in enumerate(refs[:THUMBS_PER_ANSWER]):
            image = ref.load().convert("RGB")
            image.thumbnail((THUMB_SIZE, THUMB_SIZE), Image.Resampling.LANCZOS)
            path = folder / f"{safe_name(answer)}-{j}.png"
            image.save(path, format="PNG")
            paths.append(path.relative_to(out_dir).as_posix())
        out[answer] = paths
    return out


def _experiment_md(rec: ExperimentRecord) -> list[str]:
    exp = rec.experiment
    lines = [
        f"## Experiment {rec.index} ({exp.difficulty}): {md_escape(exp.question)}",
        "",
    ]
    if exp.rationale:
        lines += [f"*Why:* {md_escape(exp.rationale)}", ""]
    lines += ["| answer | select | transforms |", "|---|---|---|"]
    for a in exp.answers:
        transforms = " → ".join(call_text(t.tool, t.args) for t in a.transforms) or "(none)"
        lines.append(
            f"| {md_escape(a.text)} | {md_escape(call_text(a.select.tool, a.select.args))} | "
            f"{md_escape(transforms)} |"
        )
    ds = rec.dataset
    unknown = ", with an 'Unknown' option" if ds.unknown_option else ""
    lines += [
        "",
        f"Dataset: {ds.images_per_answer} images per answer ({rec.results.n_images} in all"
        f"{unknown}), seed {ds.seed}, fingerprint `{ds.fingerprint[:12]}`; "
        f"{ds.made} composed, {ds.cached} from the cache. Chance accuracy: "
        f"{rec.results.chance:.3f}.",
    ]
    for note in ds.notes:
        lines.append(f"- note: {md_escape(note)}")
    head, rows = results_table(rec, md_escape)
    lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    if ds.thumbnails:
        lines += ["", "Examples:", ""]
        for answer, paths in ds.thumbnails.items():
            images = " ".join(f"![{md_escape(answer)}]({p})" for p in paths)
            lines.append(f"- {md_escape(answer)}: {images}")
    if rec.findings:
        lines += ["", "Findings:", ""]
        for f in rec.findings:
            lines.append(f"- {md_escape(f.statement)}")
    if rec.attempts > 1:
        lines += ["", f"(designed in {rec.attempts} attempts; see the rejections below)"]
    return [*lines, ""]


def render_markdown(report: Report) -> str:
    """The report as Markdown (results table per experiment)."""
    s = report.settings
    lines = [
        f"# APEx: {md_escape(report.query)}",
        "",
        f"Models: {', '.join(md_escape(m) for m in report.models)} · orchestrator: "
        f"{md_escape(report.orchestrator)} · status: {report.status} · experiments: "
        f"{len(report.experiments)} · {report.calls_text()} · "
        f"seed {s.seed} · {s.images_per_answer} images per answer",
        "",
        "## Conclusions",
        "",
    ]
    lines += [f"- {md_escape(c)}" for c in report.conclusions] or ["(none)"]
    if report.sufficiency is not None:
        word = "sufficient" if report.sufficiency.sufficient else "not sufficient"
        lines += ["", f"**Sufficiency:** {word} — {md_escape(report.sufficiency.reason)}"]
    lines.append("")
    for rec in report.experiments:
        lines += _experiment_md(rec)
    if report.open_questions:
        lines += ["## Open questions", ""]
        lines += [f"- {md_escape(q)}" for q in report.open_questions]
        lines.append("")
    if report.rejections:
        lines += [f"## Rejected orchestrator outputs ({len(report.rejections)})", ""]
        for rj in report.rejections:
            lines.append(f"- {rj.step}, attempt {rj.attempt}: {md_escape(rj.error[:300])}")
        lines.append("")
    models = " ".join(f"--model {shlex.quote(m)}" for m in report.models)
    lines += [
        "## Reproduce",
        "",
        "Re-run these exact experiments (identical datasets for the same seed), on any models:",
        "",
        "```",
        f"lmmprobe apex {shlex.quote(report.query)} {models} --orchestrator replay:{REPORT_JSON}",
        "```",
        "",
        f"The orchestrator transcript ({len(report.transcript)} messages) is in {REPORT_JSON}.",
        "",
    ]
    return "\n".join(lines)


def write_report(
    report: Report, out_dir: Path, datasets: Sequence[ExperimentDataset] = ()
) -> tuple[Path, Path]:
    """Write thumbnails, report.json and report.md into `out_dir`.

    Args:
        report: The campaign's report; thumbnails are recorded in it.
        out_dir: Output folder (created).
        datasets: The experiments' datasets, in order, for thumbnails.

    Returns:
        Paths of report.json and report.md.

    """
    out_dir.mkdir(parents=True, exist_ok=True)
    for rec, ds in zip(report.experiments, datasets, strict=False):
        rec.dataset.thumbnails = write_thumbnails(rec, ds, out_dir)
    j = out_dir / REPORT_JSON
    md = out_dir / REPORT_MD
    shown = _redacted(report)
    j.write_text(shown.model_dump_json(indent=2), encoding="utf-8")
    # Shown in terminals (cat, less -R): control characters from the query and the orchestrator
    # are escaped.
    md.write_text(inert(render_markdown(shown)), encoding="utf-8")
    return j, md


def shown_specs(report: Report) -> Callable[[str], str]:
    """A function writing `report`'s model specs inside a text as `redact_spec` writes them.

    For prose that names a model by its spec (``openai:m@http://u:PASSWORD@h/v1: above
    chance...``): its other words are left as they are, where `redact_text` would also take
    ``key: the red one`` for a secret.
    """
    secret = [(m, redact_spec(m)) for m in sorted(report.models, key=len, reverse=True)]
    secret = [(m, shown) for m, shown in secret if shown != m]

    def prose(text: str) -> str:
        for spec, shown in secret:
            text = text.replace(spec, shown)
        return text

    return prose


def _redacted(report: Report) -> Report:
    """A copy of `report` as it may be written: the secrets of every spec redacted.

    The model and orchestrator specs (``vllm:m,args=--api-key X``), wherever they are named,
    and the transcript and rejected outputs, which hold the specs the orchestrator was shown,
    go through the one rule of `lmmprobe._secrets`; figures and the experiments are untouched.
    """
    shown = report.model_copy(deep=True)
    # Prose names models by their specs (conclusions from the numbers, the rules' findings):
    # each spec in it is written as the spec fields are, its secrets redacted (re-test 22).
    prose = shown_specs(report)
    shown.conclusions = [prose(c) for c in shown.conclusions]
    shown.open_questions = [prose(q) for q in shown.open_questions]
    if shown.sufficiency is not None:
        shown.sufficiency.reason = prose(shown.sufficiency.reason)
    for rec in shown.experiments:
        for finding in rec.findings:
            finding.statement = prose(finding.statement)
    for rejection in shown.rejections:
        rejection.error = prose(rejection.error)
    shown.models = [redact_spec(m) for m in shown.models]
    shown.orchestrator = redact_spec(shown.orchestrator)
    shown.metadata = redact_record(shown.metadata)
    for rec in shown.experiments:
        for result in rec.results.models:
            result.model = redact_spec(result.model)
        for finding in rec.findings:
            finding.model = None if finding.model is None else redact_spec(finding.model)
    for entry in shown.transcript:
        entry.content = redact_text(entry.content)
    for rejection in shown.rejections:
        rejection.output = redact_text(rejection.output)
    return shown
