"""The Ray executor gives the local executor's answers: same keys, same errors, same metrics.

One local Ray instance (2 CPUs) serves the whole module; the tests run models with 2 replicas.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

ray = pytest.importorskip("ray")

import lmmprobe.judge.step as judge_step  # noqa: E402
import lmmprobe.run.runner as runner  # noqa: E402
from lmmprobe import evaluate  # noqa: E402
from lmmprobe.models.base import MODELS  # noqa: E402
from lmmprobe.models.baselines import FirstBaseline  # noqa: E402
from lmmprobe.run.ray_executor import RayExecutor  # noqa: E402
from lmmprobe.schema import JudgeConfig, Request  # noqa: E402
from lmmprobe.testing import FakeOpenAIServer, FaultPlan  # noqa: E402

SCORES = (
    "SELECT sample_id, repeat, key, prediction, correct, error_type FROM scores ORDER BY 1, 2, 3"
)
RESPONSES = (
    "SELECT key, model, text, loglikelihoods, error_type, error_message FROM responses ORDER BY key"
)


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _rows(db: Path, query: str) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute(query).fetchall()


def _metrics(ev) -> dict:
    return {m: {k: v.value for k, v in r.metrics.items()} for m, r in ev.results.models.items()}


def test_demo_with_ray_equals_local(tmp_path):
    kw = {"models": ["random,seed=3", "first"], "data": "demo,n=30", "repeats": 2, "bootstrap": 0}
    local = evaluate(db=str(tmp_path / "l.db"), out=str(tmp_path / "l"), **kw)
    ex = RayExecutor(replicas=2)
    remote = evaluate(db=str(tmp_path / "r.db"), out=str(tmp_path / "r"), executor=ex, **kw)
    # The batches ran in the replicas' worker processes, not here.
    assert ex.stats["batches"] > 0
    assert len(set(ex.stats["pids"])) == 2  # the last model's two replicas
    assert os.getpid() not in ex.stats["pids"]
    # The stored spec records what ran: the executor object's settings.
    assert remote.outcome.spec.executor == "ray" and remote.outcome.spec.replicas == 2
    with sqlite3.connect(tmp_path / "r.db") as c:
        (stored,) = c.execute("SELECT spec FROM runs").fetchone()
    assert json.loads(stored)["executor"] == "ray" and json.loads(stored)["replicas"] == 2
    assert [m.called for m in remote.outcome.models] == [m.called for m in local.outcome.models]
    assert _rows(tmp_path / "r.db", SCORES) == _rows(tmp_path / "l.db", SCORES)
    assert _rows(tmp_path / "r.db", RESPONSES) == _rows(tmp_path / "l.db", RESPONSES)
    assert _metrics(remote) == _metrics(local)
    # Executor settings change neither the manifest (what determines answers) nor the data.
    assert remote.outcome.manifest["data"] == local.outcome.manifest["data"]
    assert remote.outcome.manifest["models"] == local.outcome.manifest["models"]
    # The same setting given twice must agree, or it is refused before anything runs.
    again = evaluate(
        executor=ex, replicas=2, db=str(tmp_path / "r.db"), out=str(tmp_path / "a"), **kw
    )
    assert again.outcome.spec.replicas == 2 and all(m.called == 0 for m in again.outcome.models)
    with pytest.raises(ValueError, match=r"replicas=3 differs from the executor object's"):
        evaluate(executor=ex, replicas=3, db=str(tmp_path / "x.db"), **kw)
    assert not (tmp_path / "x.db").exists()


class CountedFirst(FirstBaseline):
    """The ``first`` baseline, writing its worker's pid to a file each time it is built.

    A test's model, sent to the replicas by value: each line its file gains in a worker is one
    replica started (and its model built: an ``hf`` model loading its weights).
    """

    def __init__(self, log: Path, backend: str, target: str | None, options: dict[str, str]):
        self.backend = backend  # two models of this class, told apart by their identity
        super().__init__(target, options)
        with log.open("a") as f:
            f.write(f"{backend} {os.getpid()}\n")


@pytest.fixture
def counted(tmp_path):
    """Two backends of `CountedFirst` (``counted_a``, ``counted_b``); yields their log file."""
    log = tmp_path / "built.log"
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    names = ("counted_a", "counted_b")
    for name in names:
        MODELS.register(name)(
            lambda target, options, name=name: CountedFirst(log, name, target, options)
        )
    yield log
    for name in names:
        MODELS.unregister(name)
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _intervals(ev) -> dict:
    return {m: {k: v.to_dict() for k, v in r.metrics.items()} for m, r in ev.results.models.items()}


def _built_in_workers(log: Path) -> list[tuple[str, int]]:
    """(backend, pid) of each model built outside this process (in a replica)."""
    rows = [line.split() for line in log.read_text().splitlines()]
    return [(name, int(pid)) for name, pid in rows if int(pid) != os.getpid()]


def _replicas_gone(pids: list[int]) -> bool:
    """Whether every replica has released its CPU and its worker process has ended."""
    deadline = time.monotonic() + 30  # Ray frees a killed actor's resources asynchronously
    while time.monotonic() < deadline:
        free = ray.available_resources().get("CPU", 0) == ray.cluster_resources()["CPU"]
        if free and not [p for p in pids if _alive(p)]:
            return True
        time.sleep(0.1)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Interrupt:
    """A progress sink that raises KeyboardInterrupt (a Ctrl-C) once `after` requests are in."""

    def __init__(self, after: int) -> None:
        self.after, self.done = after, 0

    def start(self, model: str, total: int, cached: int) -> None:
        pass

    def advance(self, done: int, errors: int) -> None:
        self.done += done
        if self.done >= self.after:
            raise KeyboardInterrupt

    def finish(self) -> None:
        pass


def test_replicas_live_across_a_models_chunks_and_end_with_it(tmp_path, counted, monkeypatch):
    """A run of 4 chunks starts each replica once per model, as a run of one chunk does.

    Its figures are the local executor's, and when it ends (finished, or interrupted in its
    second chunk) no replica is left holding the cluster's CPUs.
    """
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", 8)  # 30 samples: chunks of 8, 8, 8 and 6
    kw = {"models": ["counted_a,batch=4", "counted_b,batch=4"], "data": "demo,n=30",
          "repeats": 2, "bootstrap": 50}  # fmt: skip
    local = evaluate(db=str(tmp_path / "l.db"), out=str(tmp_path / "l"), **kw)
    assert _built_in_workers(counted) == []  # the local run built its models here
    remote = evaluate(
        db=str(tmp_path / "r.db"), out=str(tmp_path / "r"), executor=RayExecutor(replicas=2), **kw
    )
    built = _built_in_workers(counted)
    # Two replicas a model, each started once for all four chunks, in its own worker.
    assert sorted(name for name, _ in built) == ["counted_a"] * 2 + ["counted_b"] * 2
    assert len({pid for _, pid in built}) == 4
    assert [m.called for m in remote.outcome.models] == [m.called for m in local.outcome.models]
    assert _rows(tmp_path / "r.db", SCORES) == _rows(tmp_path / "l.db", SCORES)
    assert _rows(tmp_path / "r.db", RESPONSES) == _rows(tmp_path / "l.db", RESPONSES)
    # Every figure with its interval (a bootstrap over the rows of every chunk).
    assert _intervals(remote) == _intervals(local)
    assert _replicas_gone([pid for _, pid in built])
    # A Ctrl-C in the second chunk: the replicas end with the run, none is left behind.
    counted.write_text("")
    with pytest.raises(KeyboardInterrupt):
        evaluate(
            db=str(tmp_path / "i.db"), out=str(tmp_path / "i"), executor=RayExecutor(replicas=2),
            progress=Interrupt(after=20), **kw,
        )  # fmt: skip
    built = _built_in_workers(counted)
    assert [name for name, _ in built] == ["counted_a"] * 2
    assert _replicas_gone([pid for _, pid in built])


JUDGEMENTS = (
    "SELECT model, sample_id, repeat, judge, decided_by, key, reading, reason FROM judgements "
    "ORDER BY 1, 2, 3"
)


def test_a_sole_judges_replicas_live_across_every_chunk_and_model(tmp_path, counted, monkeypatch):
    """A judge on Ray starts its replicas once for the whole judging step (8 times before).

    Two models of 30 samples judged in chunks of 8: the judge's two replicas are built once,
    and its calls, verdicts and counts are the local executor's.
    """
    monkeypatch.setattr(judge_step, "CHUNK_SAMPLES", 8)
    kw = {"models": ["first", "random,seed=2"], "data": "demo,n=30", "bootstrap": 0,
          "judge": JudgeConfig(judges=["counted_a,batch=4"], when="always")}  # fmt: skip
    local = evaluate(db=str(tmp_path / "l.db"), out=str(tmp_path / "l"), **kw)
    assert _built_in_workers(counted) == []
    remote = evaluate(
        db=str(tmp_path / "r.db"), out=str(tmp_path / "r"), executor=RayExecutor(replicas=2), **kw
    )
    built = _built_in_workers(counted)
    assert sorted(name for name, _ in built) == ["counted_a"] * 2, built
    assert remote.judging is not None and local.judging is not None
    assert remote.judging.results() == local.judging.results()
    assert _rows(tmp_path / "r.db", JUDGEMENTS) == _rows(tmp_path / "l.db", JUDGEMENTS)
    assert _replicas_gone([pid for _, pid in built])


def _two_tone(recipe: dict) -> Image.Image:
    """A renderer of the test's own: the replicas know it only if the driver sends it."""
    return Image.new("RGB", (8, 8), tuple(recipe["rgb"]))


class Looking(FirstBaseline):
    """The ``first`` baseline, but an image's colour decides: (A) when red, else (B)."""

    backend = "looking"

    def _answer(self, request: Request) -> str:
        if not request.images:
            return super()._answer(request)
        red, _, blue = request.images[0].load().getpixel((0, 0))
        return "(A)" if red > blue else "(B)"


def test_a_renderer_first_needed_in_a_later_chunk_reaches_the_running_replicas(
    tmp_path, monkeypatch
):
    """Replicas started for a chunk of one renderer's images draw a later chunk's other one."""
    from lmmprobe.data import load_source
    from lmmprobe.run import run_model
    from lmmprobe.schema import ImageRef, RunSpec, Sample
    from lmmprobe.schema.image import register_renderer
    from lmmprobe.store import Store

    monkeypatch.setattr(runner, "CHUNK_SAMPLES", 8)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    register_renderer("two-tone-test", "1", _two_tone)
    MODELS.register(Looking.backend)(Looking)
    try:
        text = load_source("demo,n=8").samples
        assert {i.renderer for s in text for i in s.images} == {"demo-shapes"}
        drawn = [
            Sample.model_validate({
                "id": f"c{i}", "question": "Red or blue?", "choices": ["red", "blue"],
                "answer": i % 2, "images": [ImageRef.from_recipe(
                    "two-tone-test", {"rgb": [200, 20, 20] if i % 2 == 0 else [20, 20, 200]}
                )],
            })
            for i in range(8)
        ]  # fmt: skip
        spec = RunSpec(models=["looking"], data="demo,n=1", bootstrap=0)
        ex = RayExecutor(replicas=1)
        with Store(tmp_path / "r.db") as store:
            got = run_model("looking", Looking(None, {}), [*text, *drawn], spec, store, executor=ex)
    finally:
        MODELS.unregister(Looking.backend)
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert len(set(ex.stats["pids"])) == 1  # one replica, started once for both chunks
    assert got.errors == 0
    assert [s.correct for s in got.scores[8:]] == [True] * 8


def test_replicas_the_cluster_cannot_hold_fail_before_any_starts():
    """4 replicas of 1 CPU on a 2-CPU instance: refused at once, saying what fits."""
    from lmmprobe.models import load_model

    model = load_model("first")
    ex = RayExecutor(replicas=4, cpus_per_replica=1)
    with pytest.raises(ValueError, match=r"cannot place 4 replicas.*4 x 1 = 4 CPUs.*2 CPUs") as e:
        ex.execute_spec("first", model, [_request(model)], lambda *_: None)
    assert "pass --replicas 2" in str(e.value)
    # Re-test 13 left "cannot place 1 replicas: they ask for 1 x 1 = 1 GPUs".
    one = r"cannot place 1 replica: it asks for 1 x 1 = 1 GPU, and it has .* 0 GPUs"
    with pytest.raises(ValueError, match=one + r".*pass --gpus-per-replica 0"):
        RayExecutor(replicas=1, gpus_per_replica=1).execute_spec(
            "first", model, [_request(model)], lambda *_: None
        )


def test_a_replica_that_is_never_placed_fails_after_the_timeout_naming_resources():
    """Resources taken by someone else: the run fails after `ready_timeout_s`, not never."""
    from lmmprobe.models import load_model

    model = load_model("first")
    # Another job's reservation of both CPUs (a placement group: Ray's own way to hold them).
    hog = ray.util.placement_group([{"CPU": 2}])
    try:
        ray.get(hog.ready())
        with pytest.raises(ValueError, match=r"not ready within 1 s.*1 CPU and 0 GPU.*0 CPUs"):
            RayExecutor(replicas=1, ready_timeout_s=1).execute_spec(
                "first", model, [_request(model)], lambda *_: None
            )
    finally:
        ray.util.remove_placement_group(hog)


@pytest.mark.slow
def test_likelihood_on_ray_equals_local(tmp_path):
    kw = {"models": ["random"], "data": "demo,n=12", "bootstrap": 0}
    kw["formulate"] = {"method": "likelihood"}
    local = evaluate(db=str(tmp_path / "l.db"), out=str(tmp_path / "l"), **kw)
    remote = evaluate(
        db=str(tmp_path / "r.db"), out=str(tmp_path / "r"), executor=RayExecutor(replicas=2), **kw
    )
    assert _rows(tmp_path / "r.db", RESPONSES) == _rows(tmp_path / "l.db", RESPONSES)
    assert _metrics(remote) == _metrics(local)


def _color_files(tmp_path: Path) -> Path:
    colors = {"red": (220, 30, 30), "blue": (30, 70, 220), "green": (30, 160, 50)}
    rows = []
    for i in range(9):
        color = list(colors)[i % 3]
        path = tmp_path / f"{i}.png"
        Image.new("RGB", (24 + i, 24), colors[color]).save(path)
        choices = list(colors)
        rows.append({"id": str(i), "images": [path.name], "question": "What color is it?",
                     "choices": choices, "answer": choices.index(color)})  # fmt: skip
    data = tmp_path / "colors.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data


@pytest.mark.slow
def test_openai_replicas_ship_file_images_and_keep_typed_errors(tmp_path):
    """Async replicas: images sent through the object store arrive intact, errors stay typed."""
    data = _color_files(tmp_path)
    # Every attempt of some requests is refused (400): a PermanentError inside the replica.
    # (A server per run: the same body then meets the same faults, drawn from its hash.)
    faults = FaultPlan(rate=0.4, kinds=("bad_request",), max_per_request=9, seed=1)
    with FakeOpenAIServer(faults=faults) as server:
        model = f"openai:fake-vlm@{server.base_url},max_attempts=1,backoff=0.01"
        kw = {"models": [model], "data": str(data), "repeats": 2, "bootstrap": 0}
        local = evaluate(db=str(tmp_path / "l.db"), out=str(tmp_path / "l"), **kw)
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    with FakeOpenAIServer(faults=faults, port=port) as server:
        ex = RayExecutor(replicas=2, images="object_store")
        remote = evaluate(db=str(tmp_path / "r.db"), out=str(tmp_path / "r"), executor=ex, **kw)
    got, want = _rows(tmp_path / "r.db", RESPONSES), _rows(tmp_path / "l.db", RESPONSES)
    assert got == want
    errors = {row[4] for row in want}
    assert errors == {None, "bad_request"}, "the fault plan should fail some requests, not all"
    assert _metrics(remote) == _metrics(local)
    answered = [row for row in got if row[4] is None]
    assert answered and all(row[2] for row in answered)
    assert remote.results.models[model].metrics["accuracy"].value == 1.0  # colours seen


@pytest.mark.slow
def test_a_replica_with_another_identity_is_refused(tmp_path):
    """A replica must build the driver's model, or its answers would go under other keys."""
    from lmmprobe.models import load_model

    driver = load_model("random,seed=1")
    with pytest.raises(ValueError, match="another identity"):
        RayExecutor(replicas=1).execute_spec(
            "random,seed=2", driver, [_request(driver)], lambda *_: None
        )


def _request(model):
    from lmmprobe.data import load_source
    from lmmprobe.run import plan_requests
    from lmmprobe.schema import RunSpec

    spec = RunSpec(models=["random"], data="demo,n=1")
    ((_, ask),) = plan_requests(load_source(spec.data).samples, spec, model.identity)
    return ask.to_request()


@pytest.mark.slow
def test_tiny_hf_model_on_ray_equals_local_and_the_driver_never_loads_weights(tmp_path):
    pytest.importorskip("transformers")
    from lmmprobe.data import load_source
    from lmmprobe.models import load_model
    from lmmprobe.run import run_model
    from lmmprobe.schema import RunSpec
    from lmmprobe.store import Store

    spec = RunSpec(models=["hf:tiny-llava"], data="demo,n=6", bootstrap=0)
    local = evaluate(spec, db=str(tmp_path / "l.db"), out=str(tmp_path / "l"))
    (want,) = local.outcome.models
    driver = load_model("hf:tiny-llava")
    samples = load_source(spec.data).samples
    with Store(tmp_path / "r.db") as store:
        got = run_model(
            "hf:tiny-llava", driver, samples, spec, store, executor=RayExecutor(replicas=2)
        )
    assert not driver.weights_loaded  # only the replicas loaded the model
    assert got.called == want.called > 0
    assert _rows(tmp_path / "r.db", RESPONSES) == _rows(tmp_path / "l.db", RESPONSES)
    fields = [(s.sample_id, s.repeat, s.key, s.prediction, s.correct) for s in got.scores]
    with Store(tmp_path / "l.db") as store:  # a run keeps no Scores: they are in the store
        stored = store.model_scores(local.run_id, "hf:tiny-llava")
    assert fields == [(s.sample_id, s.repeat, s.key, s.prediction, s.correct) for s in stored]


@pytest.mark.slow
def test_a_dead_server_stops_a_ray_run_as_it_stops_a_local_one(tmp_path):
    from lmmprobe.run import ServerUnreachable

    with FakeOpenAIServer(always="disconnect") as server:
        model = f"openai:fake-vlm@{server.base_url},max_attempts=1,backoff=0.01,unreachable_after=3"
        with pytest.raises(ServerUnreachable) as info:
            evaluate(
                models=[model], data="demo,n=40", db=str(tmp_path / "db"), out=str(tmp_path / "a"),
                executor=RayExecutor(replicas=2),
            )  # fmt: skip
    assert server.base_url in str(info.value) and info.value.run_id is not None
    with sqlite3.connect(tmp_path / "db") as c:
        (status,) = c.execute("SELECT status FROM runs").fetchone()
        types = {t for (t,) in c.execute("SELECT error_type FROM responses")}
    assert status == "stopped_unreachable"
    assert types <= {"connection", "unreachable"}


@pytest.mark.slow
def test_an_unhealthy_server_stops_a_ray_run_as_it_stops_a_local_one(tmp_path):
    from lmmprobe.run import ServerUnhealthy
    from lmmprobe.run.executor import DEFAULT_MAX_TRANSIENT_FAILURES

    with FakeOpenAIServer(always="server_error") as server:
        model = f"openai:fake-vlm@{server.base_url},max_attempts=1,max_concurrency=2"
        with pytest.raises(ServerUnhealthy) as info:
            evaluate(
                models=[model], data="demo,n=60", db=str(tmp_path / "db"), out=str(tmp_path / "a"),
                executor=RayExecutor(replicas=2),
            )  # fmt: skip
    assert "server looks unhealthy" in str(info.value) and info.value.run_id is not None
    with sqlite3.connect(tmp_path / "db") as c:
        (status,) = c.execute("SELECT status FROM runs").fetchone()
        types = [t for (t,) in c.execute("SELECT error_type FROM responses")]
    assert status == "stopped_unhealthy"
    # The driver stops at the same count as the local executor; nothing unanswered is stored.
    assert types == ["transient"] * DEFAULT_MAX_TRANSIENT_FAILURES
