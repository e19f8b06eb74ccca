"""Results rebuilt from stored rows, chunk by chunk, equal the Score-list computation exactly.

Issue 35: a run's figures are reductions over its stored rows. Each stored run here is read
two ways: the old way (every row a `Score`, as `iter_score_rows` + `score_from_row` give them,
fed to `build_results`) and the new (`rebuild_results` / `build_results(rows=...)`, the store's
`RowSource`, small chunks). Every metric value and interval, every breakdown group and count
must be identical, and the answer rates, counts and token figures must also equal the old
code's own computation (`_legacy_figures`, kept verbatim). A plain single-choice run must
build no Score at all.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import random
from collections.abc import Iterator
from pathlib import Path
from types import BuiltinFunctionType, FunctionType, ModuleType
from typing import Any

import numpy as np
import pytest
from tests.report import _legacy_figures as legacy

from lmmprobe._secrets import redact_spec
from lmmprobe.api import Evaluation, evaluate, judge_stored
from lmmprobe.data.base import LoadResult
from lmmprobe.formulate import formulate
from lmmprobe.metrics import METRIC_NAMES, MetricContext, group_by, run_metric
from lmmprobe.metrics.outcome import count_outcomes
from lmmprobe.metrics.reduction import summarize_rows
from lmmprobe.metrics.run_metric import RUN_METRICS
from lmmprobe.models.base import ModelIdentity
from lmmprobe.report import Results, build_results, rebuild_results
from lmmprobe.report.model import RowCounts
from lmmprobe.run.manifest import build_manifest
from lmmprobe.run.runner import ModelOutcome, RunOutcome
from lmmprobe.schema import ErrorInfo, Price, Response, RunSpec, Sample, Score, ScoreRows, Usage
from lmmprobe.store import Store
from lmmprobe.store.rows import StoredRows
from lmmprobe.store.sqlite import score_from_row

SUBTASKS = ("color", "shape", "count")
SKILLS = ("ocr", "math", "spatial", "logic")
COLORS = ("red", "green", "blue", "yellow", "purple")


def _sample(i: int, rng: random.Random, *, plain: bool) -> Sample:
    meta: dict[str, Any] = {"subtask": SUBTASKS[i % 3]}
    if not plain:
        # A list value puts the row in each of its groups (once, a skill listed twice).
        meta["skills"] = [rng.choice(SKILLS) for _ in range(rng.randrange(0, 4))]
        if i % 4:
            meta["level"] = [2, 10, 1.5, True][i % 4]  # numbers sort numerically; some lack it
        if i % 5 == 0:
            meta.update(metric="mmbench_circular", benchmark="mmbench", circular_index=i // 10)
    if not plain and i % 7 == 3:
        # An open-ended (OCR-like) question: references, not an option index.
        return Sample(
            id=f"q{i:03d}",
            question=f"Read {i}",
            answer=["abc", "ABC"],
            formulation="ocr",
            metadata=meta,
        )
    choices = rng.sample(COLORS, 4)
    return Sample(
        id=f"q{i:03d}", question=f"Color {i}?", choices=choices, answer=rng.randrange(4),
        metadata=meta,
    )  # fmt: skip


def _rows(
    model: str, samples: list[Sample], repeats: int, rng: random.Random, *, plain: bool
) -> Iterator[tuple[Any, Response, Score]]:
    for sample in samples:
        req = formulate(sample)
        for repeat in range(repeats):
            # Repeats of some samples share one response (an identical request): paid once.
            key = f"{model}:{sample.id}:{repeat if hash(sample.id) % 3 else 0}"
            req = req.model_copy(update={"key": key})
            roll = rng.random()
            usage = None
            if plain or roll > 0.1 or model == "model-0":  # the priced model reports all
                usage = Usage(
                    prompt_tokens=rng.randrange(20, 90),
                    completion_tokens=rng.randrange(1, 40),
                    reasoning_tokens=rng.randrange(0, 9) if not plain and roll > 0.5 else None,
                )
            common: dict[str, Any] = dict(
                model=model, sample_id=sample.id, repeat=repeat, key=key, gold=sample.answer,
                gold_text=sample.gold_text, metadata=sample.metadata,
                abstain_offered=not plain and roll < 0.3,
            )  # fmt: skip
            if roll < 0.06:
                err = ErrorInfo(type="timeout", message="timed out", retryable=True)
                yield req, Response(key=key, error=err), Score(stage="error", error_type="timeout", **common)  # fmt: skip
                continue
            if sample.choices is None:
                right = roll < 0.6
                score = Score(stage="match", prediction_text="abc" if right else "x", correct=right, **common)  # fmt: skip
            elif roll < 0.12:
                score = Score(stage="unparsed", correct=False, **common)
            elif roll < 0.16:
                score = Score(stage="truncated", correct=False, **common)
            else:
                assert isinstance(sample.answer, int)
                pred = sample.answer if rng.random() < 0.6 else rng.randrange(4)
                score = Score(
                    stage="mark", prediction=pred, prediction_text=sample.choices[pred],
                    correct=pred == sample.answer, format_hit=True,
                    abstained=common["abstain_offered"] and roll < 0.22, order=[0, 1, 2, 3],
                    **common,
                )  # fmt: skip
            yield req, Response(key=key, text="(A)", usage=usage), score


def _store_run(
    db: Path, *, models: int, samples: int, repeats: int, plain: bool, by: list[str]
) -> tuple[Store, RunOutcome]:
    rng = random.Random(7)
    names = [f"model-{k}" for k in range(models)]
    spec = RunSpec(
        models=names, data="demo", db=str(db), bootstrap=300, seed=3, repeats=repeats, by=by,
        prices={names[0]: Price(input=1.5, output=6.0)},
    )  # fmt: skip
    items = [_sample(i, rng, plain=plain) for i in range(samples)]
    idents = {m: ModelIdentity(backend="test", name=m) for m in names}
    manifest = build_manifest(spec, idents, "fingerprint", len(items))
    store = Store(db)
    store.create_run("r1", spec.model_dump(mode="json"), str(db.parent / "r1"))
    store.update_run("r1", manifest=manifest)
    outcome = RunOutcome(
        "r1", spec, db, db.parent / "r1", LoadResult(samples=items, source="demo"), manifest,
        status="complete",
    )  # fmt: skip
    for model in names:
        reqs, resps, scores = zip(*_rows(model, items, repeats, rng, plain=plain), strict=True)
        store.put_responses(model, list(reqs), list(resps))
        store.put_scores("r1", list(scores))
        outcome.models.append(
            ModelOutcome(model, idents[model], list(scores), requests=len(scores))
        )
    return store, outcome


def _old_outcome(store: Store, outcome: RunOutcome) -> RunOutcome:
    """The run as the old rebuild read it: every stored row a Score, in stored order."""
    scores: dict[str, list[Score]] = {}
    for rec in store.iter_score_rows(outcome.run_id):
        scores.setdefault(str(rec["model"]), []).append(score_from_row(rec))
    models = [
        ModelOutcome(mo.spec, mo.identity, scores[mo.spec], requests=mo.requests)
        for mo in outcome.models
    ]
    return RunOutcome(
        outcome.run_id, outcome.spec, outcome.store_path, outcome.out_dir, outcome.load,
        outcome.manifest, models=models, status=outcome.status,
    )  # fmt: skip


def _held_results(outcome: RunOutcome, judging: Any = None) -> Results:
    """The old computation: each model's figures from its Scores held in memory (`ScoreRows`).

    `build_results` takes a run's record and its rows; before, it also took a run holding its
    Scores (the runner's outcome), computed from them as here.
    """
    record = outcome.record(judging.results() if judging is not None else None)
    return build_results(record, rows={mo.spec: ScoreRows(mo.scores) for mo in outcome.models})


def _figures(results: Results) -> dict[str, Any]:
    doc = results.model_dump(mode="json")
    return {m: {k: v for k, v in r.items()} for m, r in doc["models"].items()}


@pytest.fixture(autouse=True)
def _small_chunks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Many chunks per model (samples split across chunks) exercise the chunked sums."""
    from lmmprobe.store import rows, sqlite

    sizes: list[int] = []

    def small(*args: Any) -> Iterator[Any]:
        for chunk in rows.read_chunks(*args[:4], 37):
            sizes.append(len(chunk))
            yield chunk

    monkeypatch.setattr(sqlite, "read_chunks", small)
    return sizes


VARIED = {
    "varied": dict(models=3, samples=70, repeats=3, plain=False, by=["subtask", "skills", "level"]),
    "plain": dict(models=2, samples=90, repeats=1, plain=True, by=["subtask"]),
    "repeats, no breakdown": dict(models=1, samples=40, repeats=2, plain=False, by=[]),
}


@pytest.mark.parametrize("case", list(VARIED))
def test_stored_rows_give_the_score_list_results(
    tmp_path: Path, case: str, _small_chunks: list[int]
) -> None:
    store, outcome = _store_run(tmp_path / "s.db", **VARIED[case])  # type: ignore[arg-type]
    with store:
        old_outcome = _old_outcome(store, outcome)
        old = _held_results(old_outcome)
        store.update_run("r1", results=old.model_dump(mode="json"))
        rows = {mo.spec: store.rows("r1", mo.spec) for mo in outcome.models}
        new = build_results(outcome.record(), rows=rows)
        rebuilt = rebuild_results(store, "r1")
        assert _figures(new) == _figures(old)
        assert _figures(rebuilt) == _figures(old)
        for mo in old_outcome.models:
            _check_against_legacy(old.models[mo.spec].model_dump(mode="json"), mo.scores, outcome.spec)  # fmt: skip
    if case == "varied":
        got = old.models["model-0"]
        # The cases this file means to cover are there.
        assert {"instability", "mmbench_circular", "cost", "reasoning_tokens"} <= set(got.metrics)
        assert got.counts is not None and got.counts.error and got.counts.unparsed
        assert got.counts.truncated and "(missing)" in got.breakdown["level"]
        assert list(got.breakdown["level"]) == ["True", "1.5", "10", "(missing)"]  # True is 1
        assert got.metrics["abstention_rate"].n > 0


def _check_against_legacy(doc: dict[str, Any], scores: list[Score], spec: RunSpec) -> None:
    """The answer rates, counts and token figures equal the old code's, run and groups."""

    def same(metrics: dict[str, Any], rows: list[Score], counts: dict[str, Any] | None) -> None:
        want = legacy.summarize(rows, n_boot=spec.bootstrap, seed=spec.seed)
        for name in METRIC_NAMES:
            assert metrics[name] == want[name].to_dict(), name
        price = spec.prices.get(rows[0].model) if rows else None
        for name, value in legacy.token_metrics(rows, price).items():
            assert metrics[name] == value.to_dict(), name
        assert counts == RowCounts.of(count_outcomes(rows)).model_dump(mode="json")

    same(doc["metrics"], scores, doc["counts"])
    for key in spec.by:
        groups = group_by(scores, key)
        assert list(doc["breakdown"][key]) == list(groups)
        for label, rows in groups.items():
            same(doc["breakdown"][key][label], rows, doc["breakdown_counts"][key][label])


def test_a_plain_run_builds_no_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, outcome = _store_run(tmp_path / "s.db", **VARIED["plain"])  # type: ignore[arg-type]
    with store:
        old = _held_results(_old_outcome(store, outcome))
        store.update_run("r1", results=old.model_dump(mode="json"))

        def refuse(*_: Any, **__: Any) -> list[Score]:
            raise AssertionError("a Score was built for a plain single-choice run")

        monkeypatch.setattr(Store, "model_scores", refuse)
        monkeypatch.setattr(Store, "iter_score_rows", refuse)
        assert _figures(rebuild_results(store, "r1")) == _figures(old)


def test_chunk_boundaries_change_nothing() -> None:
    rng = random.Random(1)
    items = [_sample(i, rng, plain=False) for i in range(50)]
    scores = [s for _, _, s in _rows("m", items, 3, rng, plain=False)]
    spec = RunSpec(models=["m"], data="demo", bootstrap=200, by=["skills"])
    from lmmprobe.metrics import compute_metrics

    whole = compute_metrics(scores, spec)
    for size in (1, 7, 64):
        assert compute_metrics(ScoreRows(scores, chunk_rows=size), spec) == whole


def test_a_plugin_metric_reads_scores_of_stored_rows(tmp_path: Path) -> None:
    """A metric written against `MetricContext.scores` runs on stored rows (a lazy view)."""
    store, outcome = _store_run(tmp_path / "s.db", **VARIED["plain"])  # type: ignore[arg-type]
    seen: list[int] = []

    @run_metric("test_rows_seen", summary="rows a plugin saw", headline=False)
    def rows_seen(ctx: MetricContext) -> None:
        seen.append(len(ctx.scores))

    try:
        with store:
            source = StoredRows(store, "r1", "model-0")
            from lmmprobe.metrics import compute_metrics

            compute_metrics(source, outcome.spec)
    finally:
        RUN_METRICS.unregister("test_rows_seen")
    assert seen == [len(outcome.models[0].scores)]


def test_a_group_read_on_its_own_gives_its_breakdown(tmp_path: Path) -> None:
    """`GroupRows` read without its precomputed summary: the group's rows, cut from chunks."""
    from lmmprobe.metrics import compute_metrics
    from lmmprobe.metrics.reduction import CachedRows, GroupRows

    store, outcome = _store_run(tmp_path / "s.db", **VARIED["varied"])  # type: ignore[arg-type]
    with store:
        results = build_results(outcome.record(), rows={m.spec: store.rows("r1", m.spec) for m in outcome.models})  # fmt: skip
        parent = CachedRows(store.rows("r1", "model-1"))
        breakdown = results.models["model-1"].breakdown
        for key in ("skills", "level"):
            for label, metrics in breakdown[key].items():
                rows = GroupRows(parent, key, label)
                assert compute_metrics(rows, outcome.spec, group=f"{key}={label}") == metrics


def _reachable(root: object) -> int:
    """Python objects reachable from `root`: a numpy array is one, whatever its length
    (classes, modules and functions are not walked into)."""
    seen: set[int] = set()
    todo = [root]
    skip = (type, ModuleType, FunctionType, BuiltinFunctionType, np.dtype)
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        todo.extend(gc.get_referents(obj))
    return len(seen)


def test_a_stored_runs_sums_keep_no_object_per_sample(
    tmp_path: Path, _small_chunks: list[int]
) -> None:
    """The sums a stored run's figures come from hold arrays, not an id (or any object) per
    sample: ten times the samples, read in chunks of 37 rows, hold as many objects."""
    held = []
    for samples in (60, 600):
        store, _ = _store_run(
            tmp_path / f"{samples}.db", models=1, samples=samples, repeats=2, plain=True,
            by=["subtask"],
        )  # fmt: skip
        with store:
            whole, groups = summarize_rows(store.rows("r1", "model-0"), ["subtask"])
        assert whole.answers.n_samples == samples and whole.rows == 2 * samples
        held.append(_reachable((whole, groups)))
    assert held[1] - held[0] < 50, held  # one id per sample would be 540 more


def _array_bytes(root: object) -> int:
    """Bytes of the numpy arrays reachable from `root` (each buffer once)."""
    seen: set[int] = set()
    todo = [root]
    skip = (type, ModuleType, FunctionType, BuiltinFunctionType, np.dtype)
    total = 0
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray) and obj.base is None:
            total += obj.nbytes
        todo.extend(gc.get_referents(obj))
    return total


def test_the_results_steps_sums_hold_two_bytes_a_sample_with_by_groups_and_32_a_response(
    tmp_path: Path, _small_chunks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer sums `build_results` makes of a stored run, for the model and each ``--by``
    group, keep each complete sample as a 2-byte profile number: five times the samples hold
    as many objects and a few bytes more a sample (per-sample float32 sums held 44 bytes a
    sample and 16 a cell, for the model and again for its group, and the results step, which
    wraps the rows, kept a dict of every sample id). The profiles themselves (a row of
    integers each) stop growing once the samples' few dozen kinds have all been met. A
    priced model's distinct responses are kept in 32 bytes each (`ResponseTokens`), not as a
    dict entry of every key."""
    from lmmprobe.report import results as results_module

    made: list[Any] = []
    summarize = results_module.summarize_rows

    def spy(*args: Any, **kwargs: Any) -> Any:
        made.append(summarize(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(results_module, "summarize_rows", spy)
    held: list[tuple[int, int]] = []
    responses: list[tuple[int, int]] = []
    for samples in (600, 3000):
        store, outcome = _store_run(
            tmp_path / f"{samples}.db", models=1, samples=samples, repeats=2, plain=True,
            by=["subtask"],
        )  # fmt: skip
        with store:
            build_results(outcome.record(), rows={"model-0": store.rows("r1", "model-0")})
        whole, groups = made.pop()
        assert whole.answers.n_samples == samples and whole.rows == 2 * samples
        sums = (whole.answers, [g.answers for by in groups.values() for g in by.values()])
        held.append((_reachable(sums), _array_bytes(sums)))
        # The model is priced: each distinct response's tokens (its cost) in 32 bytes.
        responses.append((len(whole.responses), _reachable(whole.responses)))
        assert _array_bytes(whole.responses) <= 2 * 32 * len(whole.responses)
    assert responses[1][0] > 4 * responses[0][0]
    assert responses[1][1] == responses[0][1], responses  # no object per response
    (objects_600, bytes_600), (objects_3000, bytes_3000) = held
    assert objects_3000 - objects_600 < 50, held  # one id per sample would be 2,400 more
    # 2,400 samples more, each in the model and in one group: per-sample sums would be
    # 120 bytes a sample; profile numbers are 4, room grown by doubling and profiles aside.
    assert bytes_3000 - bytes_600 < 24 * 2400, held


# -- The run's own results: `lmmprobe.api.evaluate` and `judge_stored` read the stored rows --


def _choice_rows(path: Path, n: int) -> Path:
    """A text-only single-choice set (no metric of it needs a Score)."""
    rng = random.Random(5)
    lines = []
    for i in range(n):
        meta = {"subtask": SUBTASKS[i % 3], "skills": rng.sample(SKILLS, rng.randrange(0, 3))}
        choices = rng.sample(COLORS, 4)
        row = {"id": f"q{i:03d}", "images": [], "question": f"Color {i}?", "choices": choices,
               "answer": rng.randrange(4), "metadata": meta}  # fmt: skip
        lines.append(json.dumps(row) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _held(evaluation: Evaluation) -> Results:
    """The results the run's Scores held in memory give (as `evaluate` computed them before).

    The runner keeps no Scores (each chunk is stored and dropped): they are read back whole.
    """
    outcome = evaluation.outcome
    with Store(outcome.store_path) as store:
        models = [
            dataclasses.replace(mo, scores=store.model_scores(outcome.run_id, redact_spec(mo.spec)))
            for mo in outcome.models
        ]
    return _held_results(dataclasses.replace(outcome, models=models), evaluation.judging)


def _refuse_held_and_stored_scores(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Make building a Score, or reading the runner's Scores, fail; note the rows read."""

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("the results step read Scores, not the stored rows")

    read: list[tuple[str, str]] = []
    chunks = Store.row_chunks

    def row_chunks(self: Store, run_id: str, model: str, *args: Any) -> Iterator[Any]:
        read.append((run_id, model))
        return chunks(self, run_id, model, *args)

    monkeypatch.setattr(Store, "model_scores", refuse)
    monkeypatch.setattr(Store, "iter_score_rows", refuse)
    monkeypatch.setattr(ScoreRows, "chunks", refuse)
    monkeypatch.setattr(ScoreRows, "scores", refuse)
    monkeypatch.setattr(Store, "row_chunks", row_chunks)
    return read


def test_evaluate_builds_a_plain_runs_results_from_stored_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain run's figures come from its stored rows, and no Score is built for them."""
    data = _choice_rows(tmp_path / "rows.jsonl", 60)
    read = _refuse_held_and_stored_scores(monkeypatch)
    evaluation = evaluate(
        models=["first", "random"], data=str(data), db=str(tmp_path / "s.db"),
        out=str(tmp_path / "o"), by=["subtask", "skills"], bootstrap=200,
    )  # fmt: skip
    monkeypatch.undo()
    run = evaluation.outcome.run_id
    assert {m for r, m in read if r == run} == {"first", "random"}
    assert _figures(evaluation.results) == _figures(_held(evaluation))
    on_disk = json.loads(evaluation.results_json.read_text(encoding="utf-8"))
    assert on_disk["models"] == _figures(evaluation.results)


def test_evaluate_builds_the_demo_runs_results_from_stored_rows(tmp_path: Path) -> None:
    """The demo (true/false, free-form, Dysca scenarios): stored rows, the held Scores' figures."""
    evaluation = evaluate(
        models=["first", "random"], data="demo", db=str(tmp_path / "s.db"),
        out=str(tmp_path / "o"), by=["subtask"], bootstrap=200,
    )  # fmt: skip
    assert _figures(evaluation.results) == _figures(_held(evaluation))


JUDGED_MODEL = [
    ("Which animal is q1?", "(A)"),
    ("Which animal is q2?", "I would say the feline one"),
    ("Which animal is q3?", "Probably the barking one"),
    ("Which animal is q4?", "zzz unclear"),
]
JUDGE_REPLIES = [
    ('">\nI would say the feline one', "A"),
    ('">\nProbably the barking one', "(B)"),
    ('">\nzzz unclear', "I cannot tell, maybe"),
]


def test_judged_runs_build_their_results_from_stored_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judged run, and a stored run judged again, read their verdicts from the store."""
    from lmmprobe.testing.openai_server import FakeOpenAIServer

    data = tmp_path / "rows.jsonl"
    data.write_text("".join(
        json.dumps({"id": f"q{i}", "images": [], "question": q, "choices": ["cat", "dog"], "answer": 0}) + "\n"
        for i, (q, _) in enumerate(JUDGED_MODEL, 1)
    ), encoding="utf-8")  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeOpenAIServer(reply_table=[*JUDGE_REPLIES, *JUDGED_MODEL]) as server:
        url = server.base_url
        db = tmp_path / "s.db"
        read = _refuse_held_and_stored_scores(monkeypatch)
        # The judging step holds the Scores it judges, and the judged figures read verdicts
        # as Scores of the stored rows: only the Scores held in memory must not be read.
        monkeypatch.setattr(Store, "iter_score_rows", _ITER_SCORE_ROWS)
        monkeypatch.setattr(Store, "model_scores", _MODEL_SCORES)
        judged = evaluate(
            models=[f"openai:fake-vlm@{url}"], data=str(data), db=str(db),
            out=str(tmp_path / "o"), judge={"judges": [f"openai:judge-a@{url}"]},
        )  # fmt: skip
        again = judge_stored(
            judged.outcome.run_id, {"judges": [f"openai:judge-a@{url}", f"openai:judge-b@{url}"]},
            db=db, out=tmp_path / "o2",
        )  # fmt: skip
        monkeypatch.undo()
    assert {r for r, _ in read} == {judged.outcome.run_id, again.outcome.run_id}
    for evaluation in (judged, again):
        got = evaluation.results.models[f"openai:fake-vlm@{url}"]
        assert got.judge is not None and got.judge.decided["judge"] == 2, got.judge
        assert "judge_score" in got.metrics
        assert _figures(evaluation.results) == _figures(_held(evaluation))


_ITER_SCORE_ROWS = Store.iter_score_rows
_MODEL_SCORES = Store.model_scores
