"""HEMM's score of text answers: BARTScore with bart-large-cnn (``hemm_bart_score``).

HEMM (Liang et al., 2024) scores every text-generating dataset with
``BartScoreMetric.compute`` (``hemm/metrics/bartscore_metric.py``), reproduced by
`lmmprobe.metrics.generation.hemm_bart_scores`: outputs and references stripped and
lowercased, the output the source and the reference the target, a dataset whose references
are lists scored one pair at a time keeping the best, others in batches. This metric applies
it to the rows of HEMM's datasets (their official metric is ``hemm_bart_score``: the
``hemm-*`` benchmarks), each dataset as HEMM scores it (``metadata["hemm_multi_ref"]``), with
the output rewritten first where HEMM's loader does so (``metadata["hemm_prediction_filter"]``:
NLVR2 keeps the letters of the lowercased output). The value is the mean over rows: HEMM's
number for a run of one dataset, with the cluster-bootstrap interval every official metric has
(`lmmprobe.metrics.builtin._official`); ``--by benchmark`` gives it per dataset. Failed requests are
errors, left out; an empty answer is scored as the empty text HEMM would score.

The model is never downloaded: ``LMMPROBE_BART_MODEL`` names a local folder holding
facebook/bart-large-cnn (``hf download facebook/bart-large-cnn --local-dir
FOLDER``). Without it, or without torch and transformers, the metric is skipped with a warning
saying what to set or install: never a number from another model.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import replace

from lmmprobe.metrics.builtin._official import answer_text, answered, mean_value
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import Score

log = logging.getLogger(__name__)

NAME = "hemm_bart_score"
MODEL_ENV = "LMMPROBE_BART_MODEL"
"""Environment variable naming the local bart-large-cnn folder."""
# The metadata keys the hemm-* definitions set (lmmprobe.data.benchmarks.hemm_common; metrics
# may not import the data layer, so the names are repeated here).
MULTI_REF = "hemm_multi_ref"
PREDICTION_FILTER = "hemm_prediction_filter"
_CACHE_LIMIT = 200_000

# (model folder, multi-reference, prediction, references) -> score: breakdown groups and
# re-scoring reuse the scores of rows already scored with the same model.
_cache: dict[tuple[str, bool, str, tuple[str, ...]], float] = {}


def hemm_prediction(score: Score) -> str:
    """The text HEMM scores for a row: the answer (stripped), rewritten as its loader does."""
    text = answer_text(score)
    if score.metadata.get(PREDICTION_FILTER) == "alpha":
        # HEMM's NLVR2 loop: ''.join(filter(str.isalpha, answer.lower())).
        return "".join(ch for ch in text.lower() if ch.isalpha())
    return text


def _references(score: Score) -> tuple[str, ...]:
    gold = score.gold
    if isinstance(gold, list):
        return tuple(str(g) for g in gold)
    return (score.gold_text or "",)


def _score_rows(rows: Sequence[Score], model: str) -> list[float]:
    from lmmprobe.metrics.generation import hemm_bart_scores

    keys = [
        (model, bool(s.metadata.get(MULTI_REF)), hemm_prediction(s), _references(s)) for s in rows
    ]
    todo: dict[bool, list[tuple[str, bool, str, tuple[str, ...]]]] = {True: [], False: []}
    for key in dict.fromkeys(keys):
        if key not in _cache:
            todo[key[1]].append(key)
    for multi, pending in todo.items():
        if not pending:
            continue
        preds = [k[2] for k in pending]
        if multi:
            values = hemm_bart_scores(preds, [list(k[3]) for k in pending], model)
        else:
            values = hemm_bart_scores(preds, [k[3][0] for k in pending], model)
        if len(_cache) + len(pending) > _CACHE_LIMIT:
            _cache.clear()
        _cache.update(zip(pending, values, strict=True))
    return [_cache[k] for k in keys]


_warned: set[str] = set()


def _skip(message: str) -> None:
    # Once per reason and process: the metric is asked once per breakdown group too.
    if message not in _warned:
        _warned.add(message)
        log.warning("%s skipped: %s", NAME, message)


def bart_model_folder() -> str | None:
    """The bart-large-cnn folder `MODEL_ENV` names, or None (with a warning saying what to do)."""
    folder = os.environ.get(MODEL_ENV, "").strip()
    if not folder:
        _skip(
            "HEMM scores answers with BARTScore (facebook/bart-large-cnn), which lmmprobe never "
            "downloads. Fetch it with `hf download facebook/bart-large-cnn "
            f"--local-dir FOLDER`, set {MODEL_ENV}=FOLDER and re-score the run "
            "(lmmprobe score RUN_ID)"
        )
        return None
    return folder


@run_metric(
    NAME,
    summary="HEMM's BARTScore (bart-large-cnn, output -> reference, best of several references), "
    "mean over the rows of HEMM's datasets; needs LMMPROBE_BART_MODEL=local bart-large-cnn folder.",
    label="BARTScore",
    family="hemm",
)
def hemm_bart_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined for rows of HEMM's datasets when the BART model and its libraries are present."""
    rows = answered(ctx, NAME)
    if not rows:
        return None
    model = bart_model_folder()
    if model is None:
        return None
    try:
        values = _score_rows(rows, model)
    except ImportError as exc:  # torch / transformers missing
        _skip(f"{exc} (pip install 'lmmprobe[hf]')")
        return None
    except FileNotFoundError as exc:  # not a checkpoint folder
        _skip(f"{MODEL_ENV}={model}: {exc}")
        return None
    import numpy as np

    # np.mean, as HEMM averages, so the value is bit-identical to its number.
    return replace(mean_value(ctx, rows, values), value=float(np.mean(np.array(values))))


def hemm_task_score(rows: Sequence[Score]) -> tuple[float, float] | None:
    """One HEMM dataset's BARTScore and its ceiling, as the holistic analysis normalizes them.

    Args:
        rows: One model's rows of one HEMM dataset (`Score.official_metric` is NAME); failed
            requests are left out, as the run metric leaves them out.

    Returns:
        ``(mean BARTScore, mean identity BARTScore of the first references)``: the dataset's
        raw score and the maximum `lmmprobe.holistic.normalize_scores` divides by (HEMM
        normalizes by a stored identity score per dataset; this computes the same quantity on
        the rows asked). None when the model or its libraries are missing (warned once).

    """
    scored = [s for s in rows if s.error_type is None]
    if not scored:
        return None
    model = bart_model_folder()
    if model is None:
        return None
    try:
        values = _score_rows(scored, model)
        from lmmprobe.metrics.generation import bart_identity_scores, hemm_lower

        _, refs = hemm_lower([""] * len(scored), [_references(s)[0] for s in scored])
        ceiling = bart_identity_scores([str(r) for r in refs], model)
    except ImportError as exc:
        _skip(f"{exc} (pip install 'lmmprobe[hf]')")
        return None
    except FileNotFoundError as exc:
        _skip(f"{MODEL_ENV}={model}: {exc}")
        return None
    import numpy as np

    return float(np.mean(np.array(values))), float(np.mean(np.array(ceiling)))
