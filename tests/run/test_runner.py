"""Runner behaviour: resume from the store, errors, unparsed answers, batching, concurrency."""

from __future__ import annotations

import json

import pytest
from tests.run.fakes import AsyncRecordingModel, ExplodingModel, RecordingModel

from lmmprobe import RunSpec, evaluate
from lmmprobe.data import load_source
from lmmprobe.models.base import MODELS, Capabilities, ModelIdentity
from lmmprobe.run import RunAborted, execute_run, plan_requests, run_model
from lmmprobe.schema import FormulateConfig, ImageRef, Sample
from lmmprobe.store import Store


@pytest.fixture
def samples() -> list[Sample]:
    return load_source("demo,n=24").samples


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "db.sqlite") as s:
        yield s


def spec(**kw) -> RunSpec:
    return RunSpec(models=["x"], **kw)


def test_rerun_answers_from_store_and_calls_model_only_for_missing(samples, store):
    model = RecordingModel()
    first = run_model("x", model, samples[:12], spec(), store)
    assert len(model.calls) == 12 and first.cached == 0
    again = RecordingModel()
    second = run_model("x", again, samples, spec(), store)
    assert second.cached == 12 and second.called == 12
    assert set(again.calls).isdisjoint(model.calls)
    assert [s.prediction for s in second.scores[:12]] == [s.prediction for s in first.scores]


def test_no_cache_calls_model_again(samples, store):
    run_model("x", RecordingModel(), samples, spec(), store)
    model = RecordingModel()
    out = run_model("x", model, samples, spec(no_cache=True), store)
    assert len(model.calls) == len(samples) and out.cached == 0


def test_cache_key_changes_with_model_prompt_and_generation(samples):
    base = RecordingModel(name="a").identity
    other = RecordingModel(name="b").identity
    k = lambda ident, **kw: plan_requests(samples[:1], spec(**kw), ident)[0][1].key  # noqa: E731
    assert k(base) == k(base)
    assert k(base) != k(other)
    assert k(base) != k(base, formulate=FormulateConfig(option_marks="lower"))
    assert k(base) != k(base, gen={"max_new_tokens": 5})


def test_errors_are_stored_not_scored_and_retried_on_resume(samples, store):
    keys = [r.key for _, r in plan_requests(samples, spec(), RecordingModel().identity)]
    failing = set(keys[:5])
    out = run_model("x", RecordingModel(fail_keys=failing), samples, spec(), store)
    errs = [s for s in out.scores if s.stage == "error"]
    assert len(errs) == 5 and out.errors == 5
    assert all(
        s.correct is None and s.error_type == "rate_limit" and s.prediction is None for s in errs
    )
    stored = store.get_responses(failing, include_errors=True)
    assert all(r.error is not None and r.text is None for r in stored.values())
    retry = RecordingModel()
    out2 = run_model("x", retry, samples, spec(), store)
    assert sorted(retry.calls) == sorted(failing)
    assert out2.errors == 0 and not any(s.stage == "error" for s in out2.scores)


def test_unparsed_answers_are_incorrect_never_random(samples, store):
    out = run_model(
        "x", RecordingModel(text="I cannot tell from this picture."), samples, spec(), store
    )
    assert all(
        s.stage == "unparsed" and s.correct is False and s.prediction is None for s in out.scores
    )
    assert not any(s.format_hit for s in out.scores)


def test_batches_respect_max_batch_size(samples, store):
    model = RecordingModel(batch=5)
    run_model("x", model, samples, spec(), store)
    assert max(model.batch_sizes) == 5 and sum(model.batch_sizes) == len(samples)


def test_repeats_expand_and_shuffle(samples, store):
    model = RecordingModel()
    out = run_model("x", model, samples[:6], spec(repeats=3), store)
    assert len(out.scores) == 18
    assert {(s.sample_id, s.repeat) for s in out.scores} == {
        (x.id, r) for x in samples[:6] for r in range(3)
    }


def test_likelihood_needs_capability(samples, store):
    with pytest.raises(ValueError, match="likelihood"):
        run_model(
            "x",
            RecordingModel(likelihood=False),
            samples,
            spec(formulate={"method": "likelihood"}),
            store,
        )


def test_likelihood_ranking_maps_back_to_original_choice(samples, store):
    # The fake scores -len(candidate): the shortest option text wins, whatever the display order.
    out = run_model(
        "x", RecordingModel(), samples, spec(repeats=2, formulate={"method": "likelihood"}), store
    )
    by_id = {s.id: s for s in samples}
    for sc in out.scores:
        choices = by_id[sc.sample_id].choices
        assert sc.stage == "likelihood" and sc.format_hit
        assert len(choices[sc.prediction]) == min(len(c) for c in choices)


def test_too_many_images_is_an_error_without_a_model_call(tmp_path, store):
    img = tmp_path / "a.png"
    from PIL import Image

    Image.new("RGB", (8, 8), "red").save(img)
    two = Sample(
        id="two", images=[ImageRef.from_path(img)] * 2, question="q?", choices=["a", "b"], answer=0
    )
    model = RecordingModel(max_images=1)
    out = run_model("x", model, [two], spec(), store)
    assert model.calls == []
    assert out.scores[0].stage == "error" and out.scores[0].error_type == "unsupported_input"


def test_async_backend_concurrency_is_bounded(samples, store):
    model = AsyncRecordingModel(concurrency=3)
    out = run_model("x", model, samples, spec(), store)
    assert model.calls == len(samples) and 1 < model.peak <= 3
    assert not any(s.stage == "error" for s in out.scores)


def test_unexpected_backend_exceptions_are_stored_then_abort(samples, store):
    model = ExplodingModel()
    with pytest.raises(RunAborted):
        run_model("x", model, samples, spec(), store)
    stored = store.get_responses(
        [r.key for _, r in plan_requests(samples, spec(), model.identity)], include_errors=True
    )
    assert len(stored) == 20 and all(
        r.error.type == "internal" and "ZeroDivisionError" in r.error.message
        for r in stored.values()
    )


def test_evaluate_writes_results_with_manifest(tmp_path):
    ev = evaluate(
        models=["random", "first"],
        data="demo,n=40",
        db=str(tmp_path / "db"),
        out=str(tmp_path / "o"),
        by=["subtask"],
    )
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert set(res["models"]) == {"random", "first"}
    m = res["models"]["first"]["metrics"]["accuracy"]
    assert 0 <= m["low"] <= m["value"] <= m["high"] <= 1 and m["n"] == 40
    assert set(res["models"]["first"]["breakdown"]["subtask"]) == {
        "color",
        "color_tf",
        "count",
        "shape",
    }
    man = res["manifest"]
    for field in (
        "lmmprobe",
        "libraries",
        "git_commit",
        "models",
        "data",
        "prompts",
        "generation",
        "seed",
    ):
        assert field in man
    assert man["data"]["samples"] == 40 and len(man["data"]["fingerprint"]) == 64
    assert "# lmmprobe run" in (tmp_path / "o" / "results.md").read_text()
    assert ev.results.model_dump(mode="json") == res


def test_same_spec_and_seed_give_same_requests(samples):
    ident = ModelIdentity(backend="x", name="x")
    a = [
        r.to_request().model_dump(exclude={"images"})
        for _, r in plan_requests(samples, spec(repeats=2, seed=7), ident)
    ]
    b = [
        r.to_request().model_dump(exclude={"images"})
        for _, r in plan_requests(samples, spec(repeats=2, seed=7), ident)
    ]
    c = [
        r.to_request().model_dump(exclude={"images"})
        for _, r in plan_requests(samples, spec(repeats=2, seed=8), ident)
    ]
    assert a == b and a != c


def test_registered_model_runs_through_execute_run(tmp_path):
    made: list[RecordingModel] = []

    @MODELS.register("test-recording")
    def factory(target, options):
        made.append(RecordingModel())
        return made[-1]

    out = execute_run(RunSpec(models=["test-recording"], data="demo,n=10", db=str(tmp_path / "db")))
    assert out.status == "complete" and len(made[0].calls) == 10
    assert isinstance(made[0].capabilities, Capabilities)


def test_cache_key_covers_images_and_candidates(samples, tmp_path):
    from PIL import Image

    ident = ModelIdentity(backend="x", name="x")
    paths = []
    for i, color in enumerate(("red", "blue")):
        paths.append(tmp_path / f"{i}.png")
        Image.new("RGB", (8, 8), color).save(paths[-1])

    def key(path, choices, method="generate"):
        s = Sample(
            id="s", images=[ImageRef.from_path(path)], question="q?", choices=choices, answer=0
        )
        return plan_requests([s], spec(formulate={"method": method}), ident)[0][1].key

    assert key(paths[0], ["a", "b"]) != key(paths[1], ["a", "b"])
    assert key(paths[0], ["a", "b"], "likelihood") != key(paths[0], ["a", "c"], "likelihood")
    # Same content at another path: same key (content hash, not file name).
    copy = tmp_path / "copy.png"
    copy.write_bytes(paths[0].read_bytes())
    assert key(paths[0], ["a", "b"]) == key(copy, ["a", "b"])


def test_rich_progress_reports_done_errors_and_eta(samples, store):
    import io

    from rich.console import Console

    from lmmprobe.run import RichProgress

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=200)
    keys = [r.key for _, r in plan_requests(samples, spec(), RecordingModel().identity)]
    run_model(
        "x",
        RecordingModel(fail_keys={keys[0]}),
        samples,
        spec(),
        store,
        progress=RichProgress(console),
    )
    text = buf.getvalue()
    assert f"{len(samples)}/{len(samples)}" in text and "errors: 1" in text and "ETA" in text


def test_reform_matcher_is_strict(samples, store):
    # "The answer is (X)." has a mark; "blue" alone is an exact option text; anything else is
    # unmatched under ReForm-Eval's rule even where lmmprobe's pipeline would read it.
    loose = RecordingModel(text="I would say the shapes are blue")
    ours = run_model("x", loose, samples, spec(no_cache=True), store)
    theirs = run_model(
        "x", loose, samples, spec(no_cache=True, formulate={"matcher": "reform"}), store
    )
    assert any(s.stage == "text" for s in ours.scores)
    assert all(s.stage == "unparsed" for s in theirs.scores)
    marked = run_model(
        "x", RecordingModel(name="other"), samples, spec(formulate={"matcher": "reform"}), store
    )
    assert all(s.stage == "mark" for s in marked.scores)


def test_instruction_pool_needs_whole_rounds():
    with pytest.raises(ValueError, match="multiple of 5"):
        RunSpec(repeats=3, formulate={"instruction_pool": True})
    assert RunSpec(repeats=10, formulate={"instruction_pool": True}).repeats == 10
