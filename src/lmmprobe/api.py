"""The Python API: what the CLI calls, usable directly from a notebook or script."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe._file_kind import file_kind
from lmmprobe._secrets import redact_spec
from lmmprobe.data import LoadResult, StreamedLoad, chunks_of, close_load
from lmmprobe.data.jsonl import read_json_file
from lmmprobe.judge.step import (
    JudgeRunOutcome,
    JudgingFailed,
    RunSamples,
    check_config,
    judge_run,
)
from lmmprobe.judge.stored import judged_spec, score_chunks, stored_outcome
from lmmprobe.metrics.answer_cache import scoring_scope
from lmmprobe.report import Results, build_results, write_results
from lmmprobe.run import (
    Executor,
    ProgressSink,
    RunAborted,
    RunOutcome,
    connect_ray_executor,
    execute_run,
)
from lmmprobe.schema import FormulateConfig, JudgeConfig, RowSource, RunSpec
from lmmprobe.store import Store
from lmmprobe.store.answer_scores import AnswerScores
from lmmprobe.store.runs import read_run

try:  # POSIX; elsewhere an output folder is not guarded against a second run
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".lmmprobe-run.lock"
"""File in an ``out`` folder that a run holds locked while it runs (who holds it, inside)."""


class OutputInUseError(ValueError):
    """Another run is writing to the same output folder."""


@dataclass
class Evaluation:
    """A finished evaluation: the run outcome, its results and where they were written.

    Attributes:
        replaced_run: The run whose results.json was in the output folder before and is now
            replaced (its results stay in the store), or None.
        judging: What the judging step did (None without judges); its ``failed`` names the
            judges that failed every call (the run is then ``judging_failed``).

    """

    outcome: RunOutcome
    results: Results
    results_json: Path
    results_md: Path
    replaced_run: str | None = None
    judging: JudgeRunOutcome | None = None

    @property
    def run_id(self) -> str:
        """The run's id in the store."""
        return self.outcome.run_id


@contextlib.contextmanager
def _claim(out: Path) -> Iterator[None]:
    """Hold `out` for this process while the run writes there, or refuse at once.

    An advisory lock (``flock``) on `LOCK_NAME`: the kernel drops it when the process ends,
    killed or not, so a crashed run never leaves the folder blocked.

    Raises:
        OutputInUseError: Another process holds the folder; the message names it.
        ValueError: The folder cannot be created or written.

    """
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    created = not out.exists()
    if not created and not out.is_dir():
        # mkdir would say only "File exists" of a FIFO, a device or a plain file named --out.
        kind = "a plain file" if out.is_file() else file_kind(out.stat().st_mode)
        raise ValueError(
            f"cannot write to output folder {out}: it is {kind}, not a folder; give a writable "
            "--out"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ValueError(
            f"cannot write to output folder {out}: {exc.strerror or exc}; give a writable --out"
        ) from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            raise OutputInUseError(
                f"output folder {out} is in use by another lmmprobe run ({holder}); "
                "give this run another --out, or wait for that one to finish"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(
            fd, f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}".encode(), 0
        )
        yield
    except BaseException:
        if created:
            # A run that failed before writing anything (a bad model spec, unreadable data)
            # leaves no empty output folder behind it.
            with contextlib.suppress(OSError):
                if [f.name for f in out.iterdir()] == [LOCK_NAME]:
                    (out / LOCK_NAME).unlink()
                    out.rmdir()
        raise
    finally:
        os.close(fd)  # releases the lock


def _previous_run(out_dir: Path) -> str | None:
    """The run id of the results.json already in `out_dir`, if there is a readable one."""
    # The bounded reader of a file lmmprobe may not have written: a regular file only (a FIFO
    # there hung the run's end, a link to /dev/zero read until memory ran out), size-capped.
    with contextlib.suppress(OSError, ValueError, AttributeError):
        doc = read_json_file(out_dir / "results.json", what="a run's results.json")
        run_id = doc.get("run_id")
        return run_id if isinstance(run_id, str) else None
    return None


def evaluate(
    spec: RunSpec | None = None,
    *,
    progress: ProgressSink | None = None,
    executor: Executor | str | None = None,
    reuse: bool = True,
    **overrides: Any,
) -> Evaluation:
    """Run an evaluation and write results.json and results.md.

    Args:
        spec: The run; defaults to the demo data and the built-in baselines.
        progress: Progress reporting (none by default; the CLI shows a rich bar).
        executor: Where requests run: an executor object, or a spec string ``local`` /
            ``ray[:ADDRESS]`` (the same as ``RunSpec.executor``; replica settings go with it:
            ``evaluate(executor="ray", replicas=2)``). By default ``spec.executor``. An
            object's own settings (``RayExecutor(replicas=2)``) are recorded with the run as
            the spec's ``executor`` and replica fields, since they are what ran; a replica
            setting given here as well must agree with the object's.
        reuse: Copy the rows of an identical earlier run in the store where there is one
            (`lmmprobe.store.reuse`); False: plan, answer and score every row here, the path
            the copy is held to.
        **overrides: Fields of `RunSpec` to set, e.g. ``models=["random"], limit=50``.

    Returns:
        The evaluation, with metrics per model under ``results.models``.

    Raises:
        ValueError: A replica setting given here differs from the executor object's.
        OutputInUseError: ``spec.out`` is being written by another run (checked before any
            model work starts).

    """
    if isinstance(executor, str):  # a spec, recorded with the run like any other field
        overrides["executor"], executor = executor, None
    elif executor is not None:
        # Record what runs, not the spec's default: an object says where it runs (`spec_fields`).
        fields = getattr(executor, "spec_fields", None)
        if callable(fields):
            for key, value in fields().items():
                given = overrides.get(key, value)
                if key != "executor" and given != value:  # one setting, one truth: the object's
                    raise ValueError(
                        f"{key}={given!r} differs from the executor object's {key}={value!r}: "
                        f"set it on the object (e.g. RayExecutor({key}={given!r}))"
                    )
                overrides[key] = value
    # A benchmark whose official figures rest on its own reading of the answers is read that
    # way unless a matcher is named, as the CLI does (`official_matcher`).
    formulate = overrides.get("formulate")
    named = spec is not None or (
        "matcher" in formulate if isinstance(formulate, dict) else formulate is not None
    )
    if not named and isinstance(overrides.get("data"), str):
        from lmmprobe.data.benchmarks._describe import benchmark_matchers, official_matcher

        matcher = official_matcher(overrides["data"])
        if matcher is not None:
            base = formulate if isinstance(formulate, dict) else {}
            overrides["formulate"] = {**base, "matcher": matcher}
    formulate = overrides.get("formulate")
    if isinstance(formulate, FormulateConfig):
        # The object and its dict form mean the same run (re-test 16 #15: the object's empty
        # map read every row of a set with lmmprobe's matcher).
        formulate = overrides["formulate"] = formulate.model_dump(exclude_unset=True)
    if (
        isinstance(formulate, dict)
        and formulate.get("matcher") == "benchmark"  # each row by its own benchmark's matcher
        and "matchers" not in formulate
        and isinstance(overrides.get("data"), str)
    ):
        from lmmprobe.data.benchmarks._describe import benchmark_matchers

        overrides["formulate"] = {**formulate, "matchers": benchmark_matchers(overrides["data"])}
    # Validate overrides like any other input (a dict for `formulate` becomes a FormulateConfig).
    spec = RunSpec.model_validate({**(spec or RunSpec()).model_dump(), **overrides})
    spec.check_executor_settings()  # before a store or an output folder is made
    # A folder named by `out` may be shared; the default folder is the run's own (its id).
    claim = _claim(Path(spec.out)) if spec.out else contextlib.nullcontext()
    own_executor = None
    if spec.judge is not None:
        # A bad template, protocol or mode fails before any model work.
        check_config(spec.judge, spec.data)
        if executor is None and spec.executor != "local":
            # One Ray executor (a local instance started once) for the answers and the judges.
            own_executor = executor = connect_ray_executor(spec)
    with contextlib.ExitStack() as stack:
        if own_executor is not None:
            stack.callback(own_executor.close)
        return _evaluate(spec, claim, progress, executor, reuse=reuse)


def _evaluate(
    spec: RunSpec,
    claim: contextlib.AbstractContextManager[None],
    progress: ProgressSink | None,
    executor: Executor | None,
    *,
    reuse: bool = True,
) -> Evaluation:
    judging = spec.judge

    def check_judging(load: LoadResult | StreamedLoad) -> None:
        # What the judging step checks of the data (a --judge-prompt or --judge-scale no row
        # is judged with, a mode a row's official protocol refuses) is checked before any
        # model is asked, as the dry run does: found after the answers, it cost them all.
        if judging is not None:
            RunSamples(load, judging)

    with claim, Store(spec.db) as store:
        outcome = execute_run(
            spec,
            store=store,
            progress=progress,
            executor=executor,
            reuse=reuse,
            check_load=check_judging,
        )
        try:
            return _judge_and_write(outcome, store, progress, executor)
        finally:
            # The run's data kept from its first read (a run of many chunks) is not wanted
            # past its judging and results: its spill goes (a later `chunks` reads the source).
            close_load(outcome.load)


def _failure(exc: BaseException) -> str:
    """`exc` for a person: its type and message, and never a bare type with an empty message."""
    if isinstance(exc, MemoryError):
        # Python raises it with no message: say what ran out and what to try.
        return (
            "MemoryError: not enough memory to judge the answers; the answers are stored: "
            "free memory first"
        )
    said = str(exc)
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def _judge_and_write(
    outcome: RunOutcome,
    store: Store,
    progress: ProgressSink | None,
    executor: Executor | None,
) -> Evaluation:
    """Judge a run's stored answers (when its spec has judges), then build and write results."""
    spec = outcome.spec
    judging = None
    if spec.judge is not None:
        # The judges' calls go through the run's executor, the store and the runner's path.
        try:
            judging = judge_run(outcome, spec.judge, store, executor=executor, progress=progress)
        except RunAborted as exc:
            # A judge's server unreachable or its key refused: what was judged is stored,
            # and the same command resumes (the answers come from the store).
            exc.run_id = outcome.run_id
            store.update_run(outcome.run_id, status=exc.status)
            raise
        except KeyboardInterrupt as exc:
            store.update_run(outcome.run_id, status="interrupted")
            exc.run_id = outcome.run_id  # type: ignore[attr-defined]  # for the command's line
            raise
        except Exception as exc:
            # Any other failure of the judging step (a judge server that would not start,
            # a protocol's bug): the answers are stored, the run is not complete.
            store.update_run(outcome.run_id, status=JudgingFailed.status)
            failed = JudgingFailed(f"judging failed: {_failure(exc)}")
            failed.run_id = outcome.run_id
            raise failed from exc
    # Per-answer scores (free-form similarities) are kept in the store: a re-run of the
    # same answers reads them back instead of loading an embedding model.
    cache = AnswerScores(store)
    try:
        with (
            store.checkpoint_in_background(),
            scoring_scope(cache, progress, read=not spec.no_cache),
        ):
            results = build_results(
                outcome.record(judging.results() if judging is not None else None),
                rows=_stored_rows(store, outcome),
            )
        store.update_run(outcome.run_id, results=results.model_dump(mode="json"))
        previous = _previous_run(outcome.out_dir)
        j, md = write_results(results, outcome.out_dir)
    except Exception:
        # No results written: the run is not complete (its answers are stored; the error
        # raised says why, and the same command builds the results again from the store).
        with contextlib.suppress(Exception):
            store.update_run(outcome.run_id, status="failed")
        raise
    replaced = previous if previous not in (None, outcome.run_id) else None
    return Evaluation(outcome, results, j, md, replaced, judging)


def _stored_rows(store: Store, outcome: RunOutcome) -> dict[str, RowSource]:
    """Each model's rows of `outcome`'s run as the store holds them (read in chunks).

    The runner stores each model's Scores as it finishes, and the judging step its verdicts,
    so a run's results are computed from what the store holds, whatever ran it (this process
    or Ray replicas), and a Score is built only for a metric that reads one. Rows are stored
    under the model's spec with its secrets taken out (`redact_spec`).
    """
    return {mo.spec: store.rows(outcome.run_id, redact_spec(mo.spec)) for mo in outcome.models}


def judge_stored(
    run: str,
    judge: JudgeConfig | Mapping[str, Any],
    *,
    db: str | Path | None = None,
    out: str | Path | None = None,
    prices: Mapping[str, Any] | None = None,
    max_cost: float | None = None,
    executor: Executor | None = None,
    progress: ProgressSink | None = None,
) -> Evaluation:
    """Judge a stored run's answers as the store holds them, without loading its models.

    Judging needs only what a run recorded: its samples, its answers (the responses) and
    their scores. So any stored run is judged from the store, as it was recorded: nothing is
    reloaded (a data file rewritten or moved since changes nothing), no model is asked, and
    a run whose models cannot be loaded here, an imported run above all (its model is a label
    such as ``llava (lmms-eval)``, not a backend), is judged the same way. The judged results
    are recorded as a new run with the stored run's spec and manifest (an import's ``origin``
    kept) plus the judges.

    Args:
        run: A run id, unique prefix or ``latest``.
        judge: The judges and how to use them (`JudgeConfig`, or its fields).
        db: The store (default: `lmmprobe.store.DEFAULT_DB`).
        out: The new run's folder (default: its id beside the store).
        prices: Price table entries added to the run's (the judges' prices).
        max_cost: A budget for the judge calls (every judge then needs a price; the stored
            answers cost nothing now, so the run's models need none).
        executor: Where judge calls run (local by default).
        progress: Progress sink.

    Raises:
        KeyError: The store holds no such run.
        ValueError: A judge option does not fit (see `check_config`), ``max_cost`` is set
            and a judge has no price, a model of the run has no stored answers (the run
            stopped before it was asked: resume it first), or ``--judge-prompt`` /
            ``--judge-scale`` is given and no row is judged by ``lmmprobe-open``; each before
            a run is recorded.
        RegistryError: A judge or protocol is unknown.
        JudgingFailed: The judging step raised (the new run is ``judging_failed``).

    """
    config = judge if isinstance(judge, JudgeConfig) else JudgeConfig.model_validate(judge)
    with Store(db) as store:
        source = store.resolve_run(run)
        stored = read_run(store.conn, source)
        if stored is None:  # resolve_run found it: removed since by another process
            raise KeyError(f"no run {source} in {store.path}")
        spec = judged_spec(
            stored.spec, config, db=store.path, out=out, prices=prices, max_cost=max_cost
        )
        outcome = stored_outcome(store, source, stored.status, stored.manifest, spec)
        # What the judging step checks of the samples (a --judge-prompt or --judge-scale no
        # row is judged with) is checked before the run is recorded, as `run` and the dry run
        # check it: found in the step, it left a `judging_failed` run behind.
        RunSamples(outcome.load, config)
        claim = _claim(outcome.out_dir) if out else contextlib.nullcontext()
        with claim:
            store.create_run(outcome.run_id, spec.model_dump(mode="json"), str(outcome.out_dir))
            for samples in chunks_of(outcome.load):  # a large run a chunk at a time
                store.put_samples(outcome.run_id, samples)
                del samples  # not held while the next chunk is read, nor while judging
            for mo in outcome.models:
                # Copied chunk by chunk: a run of any size is never held whole.
                for scores in score_chunks(store, source, mo.spec):
                    store.put_scores(outcome.run_id, scores)
            # `running` while judged (a process killed meanwhile leaves it `interrupted`).
            store.update_run(outcome.run_id, manifest=outcome.manifest)
            evaluation = _judge_and_write(outcome, store, progress, executor)
            store.update_run(outcome.run_id, status=outcome.status)
            return evaluation
