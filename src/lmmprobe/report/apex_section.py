"""The APEx section of the HTML report: a campaign's experiments, results and thumbnails.

Origin: APEx (Conti et al.) reports its campaigns in prose with results per experiment. This
renders a campaign folder written by `lmmprobe apex` (report.json and thumbnails) as a
self-contained HTML fragment: the query, status and conclusions, then per experiment its
question, answers with their tool calls, a results table (accuracy with 95% intervals,
class-balanced accuracy, abstention, per-answer accuracy, verdict against chance), the findings
and example thumbnails inlined as small data URIs. Every piece of text is escaped with
`html.escape` (orchestrator and model text is untrusted), and thumbnails are read only from
inside the campaign folder.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from pydantic import ValidationError

from lmmprobe.apex.campaign_report import call_text, results_table
from lmmprobe.apex.experiments import ExperimentRecord, Report
from lmmprobe.data.jsonl import read_json_file

MAX_THUMB_BYTES = 64 * 1024
"""Thumbnails larger than this are left out (they are ~5 KB; a big file is not ours)."""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _thumb(report_dir: Path, rel: str) -> str | None:
    """A PNG thumbnail inside the campaign folder as a data URI, or None."""
    root = report_dir.resolve()
    path = (report_dir / rel).resolve()
    if path.suffix.lower() != ".png" or not path.is_relative_to(root) or not path.is_file():
        return None
    data = path.read_bytes()
    if len(data) > MAX_THUMB_BYTES or not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return None
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _experiment(rec: ExperimentRecord, report_dir: Path) -> str:
    exp = rec.experiment
    parts = [
        f'<section class="apex-experiment" id="apex-e{rec.index}">',
        f"<h3>Experiment {rec.index} ({_e(exp.difficulty)}): {_e(exp.question)}</h3>",
    ]
    if exp.rationale:
        parts.append(f'<p class="apex-rationale">{_e(exp.rationale)}</p>')
    parts.append(
        "<table><thead><tr><th>answer</th><th>tools</th><th>examples</th></tr></thead><tbody>"
    )
    for a in exp.answers:
        calls = [a.select, *a.transforms]
        tools = " → ".join(call_text(c.tool, c.args) for c in calls)
        thumbs = []
        for rel in rec.dataset.thumbnails.get(a.text, []):
            uri = _thumb(report_dir, rel)
            if uri is not None:
                thumbs.append(
                    f'<img src="{uri}" alt="{_e(a.text)}" width="64" height="64" loading="lazy">'
                )
        parts.append(
            f"<tr><td>{_e(a.text)}</td><td><code>{_e(tools)}</code></td>"
            f"<td>{''.join(thumbs)}</td></tr>"
        )
    parts.append("</tbody></table>")
    ds = rec.dataset
    parts.append(
        f'<p class="apex-dataset">{ds.images_per_answer} images per answer '
        f"({rec.results.n_images} in all), seed {ds.seed}, chance accuracy "
        f"{rec.results.chance:.3f}.</p>"
    )
    head, rows = results_table(rec, missing="–")
    parts.append(
        "<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>"
    )
    for r, cells in zip(rec.results.models, rows, strict=True):
        parts.append(
            f'<tr class="apex-{_e(r.verdict)}">'
            + "".join(f"<td>{_e(c)}</td>" for c in cells)
            + "</tr>"
        )
    parts.append("</tbody></table>")
    if rec.findings:
        parts.append('<ul class="apex-findings">')
        parts += [f"<li>{_e(f.statement)}</li>" for f in rec.findings]
        parts.append("</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def apex_section(report_dir: Path) -> str:
    """Render an APEx campaign folder as an HTML fragment for the HTML report.

    Args:
        report_dir: A folder written by ``lmmprobe apex`` (holding report.json).

    Returns:
        A ``<section>`` element; every text escaped, thumbnails inlined as data URIs.

    Raises:
        FileNotFoundError: The folder has no report.json.
        ValueError: report.json is not an APEx report.

    """
    path = Path(report_dir) / "report.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no APEx report (run `lmmprobe apex` first)")
    doc = read_json_file(path, what="an APEx report", within=Path(report_dir))
    try:
        report = Report.model_validate(doc)
    except ValidationError as exc:  # one line: the first field and what is wrong, no value
        errors = exc.errors(include_url=False, include_input=False)
        field = ".".join(str(part) for part in errors[0]["loc"]) or "(the document)"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ValueError(
            f"{path} is not an APEx report.json: {field}: {errors[0]['msg']}{more}"
        ) from None
    parts = [
        '<section class="apex">',
        f"<h2>APEx: {_e(report.query)}</h2>",
        f'<p class="apex-meta">models: {_e(", ".join(report.models))} · orchestrator: '
        f"{_e(report.orchestrator)} · status: {_e(report.status)} · experiments: "
        f"{len(report.experiments)} · {_e(report.calls_text())}</p>",
    ]
    if report.conclusions:
        parts.append("<h3>Conclusions</h3><ul>")
        parts += [f"<li>{_e(c)}</li>" for c in report.conclusions]
        parts.append("</ul>")
    if report.sufficiency is not None:
        word = "sufficient" if report.sufficiency.sufficient else "not sufficient"
        parts.append(f"<p><strong>{word}</strong>: {_e(report.sufficiency.reason)}</p>")
    parts += [_experiment(rec, Path(report_dir)) for rec in report.experiments]
    parts.append("</section>")
    return "\n".join(parts)
