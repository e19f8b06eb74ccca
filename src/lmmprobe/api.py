"""The Python API: what the CLI calls, usable directly from a notebook or script."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.report import Results, build_results, write_results
from lmmprobe.run import Executor, ProgressSink, RunOutcome, execute_run
from lmmprobe.schema import RunSpec
from lmmprobe.store import Store


@dataclass
class Evaluation:
    """A finished evaluation: the run outcome, its results and where they were written."""

    outcome: RunOutcome
    results: Results
    results_json: Path
    results_md: Path

    @property
    def run_id(self) -> str:
        """The run's id in the store."""
        return self.outcome.run_id


def evaluate(
    spec: RunSpec | None = None,
    *,
    progress: ProgressSink | None = None,
    executor: Executor | None = None,
    **overrides: Any,
) -> Evaluation:
    """Run an evaluation and write results.json and results.md.

    Args:
        spec: The run; defaults to the demo data and the built-in baselines.
        progress: Progress reporting (none by default; the CLI shows a rich bar).
        executor: Where requests run (the local executor by default).
        **overrides: Fields of `RunSpec` to set, e.g. ``models=["random"], limit=50``.

    Returns:
        The evaluation, with metrics per model under ``results.models``.

    """
    # Validate overrides like any other input (a dict for `formulate` becomes a FormulateConfig).
    spec = RunSpec.model_validate({**(spec or RunSpec()).model_dump(), **overrides})
    with Store(spec.db) as store:
        outcome = execute_run(spec, store=store, progress=progress, executor=executor)
        with store.checkpoint_in_background():
            results = build_results(outcome)
        store.update_run(outcome.run_id, results=results.model_dump(mode="json"))
    j, md = write_results(results, outcome.out_dir)
    return Evaluation(outcome, results, j, md)
