"""Faults on Ray: a replica's worker SIGKILLed mid-run, too many deaths, the driver SIGKILLed.

One local Ray instance (2 CPUs) serves the module; the driver test runs the real console script
as a second Ray driver joining it (``--executor ray:ADDRESS``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

ray = pytest.importorskip("ray")

from lmmprobe import evaluate  # noqa: E402
from lmmprobe.models.base import MODELS, ModelIdentity  # noqa: E402
from lmmprobe.models.baselines import FirstBaseline  # noqa: E402
from lmmprobe.run.ray_executor import RayExecutor, ReplicasLost  # noqa: E402
from lmmprobe.schema import Request  # noqa: E402

pytestmark = pytest.mark.slow

MODEL = "first,delay=0.02,batch=4"  # 80 ms a batch: a kill lands while batches are in flight
SCORES = (
    "SELECT sample_id, repeat, key, prediction, correct, error_type FROM scores ORDER BY 1, 2, 3"
)
RESPONSES = "SELECT key, text, error_type FROM responses ORDER BY key"
LMMPROBE = Path(sys.executable).with_name("lmmprobe")


@pytest.fixture(scope="module")
def address():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def _rows(db: Path, query: str) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute(query).fetchall()


class KillReplica:
    """A progress sink that SIGKILLs replica 0's worker once `after` requests are stored."""

    def __init__(self, executor: RayExecutor, after: int) -> None:
        self.executor, self.after, self.done, self.killed = executor, after, 0, []

    def start(self, model: str, total: int, cached: int) -> None:
        pass

    def advance(self, done: int, errors: int) -> None:
        self.done += done
        if self.done >= self.after and not self.killed:
            pid = self.executor.replica_info()[0].pid
            assert pid is not None and pid != os.getpid()
            os.kill(pid, signal.SIGKILL)
            self.killed.append(pid)

    def finish(self) -> None:
        pass


def test_a_killed_replica_is_restarted_and_the_run_equals_an_uninterrupted_one(tmp_path, address):
    kw = {"models": [MODEL], "data": "demo,n=40", "repeats": 2, "bootstrap": 0}
    clean = evaluate(db=str(tmp_path / "clean.db"), out=str(tmp_path / "c"), **kw)
    ex = RayExecutor(replicas=2, max_restarts=2)
    sink = KillReplica(ex, after=8)
    ev = evaluate(
        db=str(tmp_path / "k.db"), out=str(tmp_path / "k"), executor=ex, progress=sink, **kw
    )
    assert sink.killed, "the replica was never killed"
    assert ex.stats["restarts"] == 1
    assert sink.done == ev.outcome.models[0].called == clean.outcome.models[0].called
    assert ev.results.status == "complete"
    # Every request stored once, with the answers and scores of the uninterrupted run.
    assert _rows(tmp_path / "k.db", RESPONSES) == _rows(tmp_path / "clean.db", RESPONSES)
    assert _rows(tmp_path / "k.db", SCORES) == _rows(tmp_path / "clean.db", SCORES)


def test_a_replica_dying_past_the_limit_stops_the_run_and_a_rerun_resumes(tmp_path, address):
    kw = {"models": [MODEL], "data": "demo,n=40", "bootstrap": 0, "db": str(tmp_path / "db")}
    ex = RayExecutor(replicas=2, max_restarts=0)
    with pytest.raises(ReplicasLost, match=r"replica 0 of first.* died 1 times \(the limit is 0"):
        evaluate(out=str(tmp_path / "a"), executor=ex, progress=KillReplica(ex, after=8), **kw)
    stored = len(_rows(tmp_path / "db", RESPONSES))
    assert stored >= 8
    again = evaluate(out=str(tmp_path / "b"), executor=RayExecutor(replicas=2), **kw)
    mo = again.outcome.models[0]
    assert mo.cached == stored and mo.called == mo.requests - stored
    assert again.results.status == "complete"


def _cli(db: Path, out: Path, address: str) -> subprocess.Popen[str]:
    args = [str(LMMPROBE), "run", "--executor", f"ray:{address}", "--replicas", "2",
            "--model", "first,delay=0.05,batch=2", "--data", "demo,n=60", "--db", str(db),
            "--out", str(out), "--bootstrap", "0", "-q"]  # fmt: skip
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stored(db: Path) -> int:
    try:
        return len(_rows(db, RESPONSES))
    except sqlite3.OperationalError:  # the store is not created yet
        return 0


def test_a_killed_driver_resumes_from_the_store(tmp_path, address):
    db = tmp_path / "run.db"
    proc = _cli(db, tmp_path / "a", address)
    deadline = time.monotonic() + 120
    while _stored(db) < 10:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run stored nothing"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stored = _stored(db)
    assert stored < 60, "the run finished before it was killed"

    resumed = _cli(db, tmp_path / "b", address)
    out, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    found = re.search(r"(\d+) requests, (\d+) from the store, (\d+) sent", out)
    assert found, out
    total, cached, sent = map(int, found.groups())
    assert cached >= stored and sent == total - cached < total  # fewer model calls
    assert _stored(db) == total  # nothing stored twice

    clean = evaluate(
        models=["first,delay=0.05,batch=2"], data="demo,n=60", bootstrap=0,
        db=str(tmp_path / "clean.db"), out=str(tmp_path / "c"),
    )  # fmt: skip
    assert clean.outcome.models[0].requests == total
    assert _rows(db, RESPONSES) == _rows(tmp_path / "clean.db", RESPONSES)
    q = "SELECT s.sample_id, s.repeat, s.key, s.prediction, s.correct FROM scores s JOIN runs r ON r.id = s.run_id WHERE r.status = 'complete' ORDER BY 1, 2, 3"
    assert _rows(db, q) == _rows(tmp_path / "clean.db", q)


class CrashOnMarker(FirstBaseline):
    """The ``first`` baseline whose worker dies (as on a segfault) on a question saying CRASH.

    Defined here and sent to the replicas by value: it is a test's model, not lmmprobe's.
    """

    backend = "crash_on_marker"

    def _answer(self, request: Request) -> str:
        if "CRASH" in request.prompt:
            os._exit(1)  # only ever called in a Ray worker: the driver answers nothing
        return super()._answer(request)


@pytest.fixture
def crash_model():
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    MODELS.register(CrashOnMarker.backend)(CrashOnMarker)
    yield CrashOnMarker.backend
    MODELS.unregister(CrashOnMarker.backend)
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def test_a_request_that_kills_its_replica_twice_is_stored_as_an_error_and_the_run_goes_on(
    tmp_path, address, crash_model
):
    Image.new("RGB", (8, 8), (200, 40, 40)).save(tmp_path / "red.png")
    rows = [
        {"id": str(i), "images": ["red.png"], "question": "CRASH?" if i == 5 else f"Is {i} red?",
         "choices": ["yes", "no"], "answer": 0}
        for i in range(8)
    ]  # fmt: skip
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # One restart allowed: the deaths the lone suspect causes are its own, not the replica's.
    ex = RayExecutor(replicas=2, max_restarts=1)
    ev = evaluate(
        models=[f"{crash_model},batch=4"], data=str(data), bootstrap=0, db=str(tmp_path / "db"),
        out=str(tmp_path / "o"), executor=ex,
    )  # fmt: skip
    assert ex.stats["splits"] == 2  # 4 -> 2 + 2 -> 1 + 1
    with sqlite3.connect(tmp_path / "db") as c:
        got = c.execute(
            "SELECT s.sample_id, r.text, r.error_type, r.error_message FROM scores s "
            "JOIN responses r ON r.key = s.key ORDER BY 1"
        ).fetchall()
    assert [(sid, text) for sid, text, _, _ in got if sid != "5"] == [
        (str(i), "(A)") for i in range(8) if i != 5
    ]
    ((_, text, kind, message),) = [row for row in got if row[0] == "5"]
    assert text is None and kind == "internal"
    assert "killed its Ray replica's worker 2 times" in message
    assert ev.outcome.models[0].errors == 1


class OtherAfterTwoReplicas(FirstBaseline):
    """The ``first`` baseline whose 4th build in a run (a restarted replica) has another identity.

    Builds are numbered across processes by creating files `builds`.1, .2, ... atomically: the
    driver's and the first two replicas' builds agree; the replica started again after a death
    does not, as a replacement landing on a node of another kind might not.
    """

    backend = "other_after_two_replicas"
    builds = ""  # set by the test; travels with the class, which is sent by value

    def __init__(self, target: str | None, options: dict[str, str]) -> None:
        super().__init__(target, options)
        n = 1
        while True:
            try:
                os.close(os.open(f"{self.builds}.{n}", os.O_CREAT | os.O_EXCL))
                break
            except FileExistsError:
                n += 1
        if n > 3:
            self.identity = ModelIdentity(backend=self.backend, name="elsewhere", options={})


def test_a_restarted_replica_with_another_identity_stops_the_run(tmp_path, address):
    OtherAfterTwoReplicas.builds = str(tmp_path / "builds")
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    MODELS.register(OtherAfterTwoReplicas.backend)(OtherAfterTwoReplicas)
    try:
        ex = RayExecutor(replicas=2)
        with pytest.raises(ValueError, match=r"replica 0 of other_after.* another identity"):
            evaluate(
                models=[f"{OtherAfterTwoReplicas.backend},delay=0.02,batch=4"], data="demo,n=40",
                bootstrap=0, db=str(tmp_path / "db"), out=str(tmp_path / "o"), executor=ex,
                progress=KillReplica(ex, after=8),
            )  # fmt: skip
    finally:
        MODELS.unregister(OtherAfterTwoReplicas.backend)
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    with sqlite3.connect(tmp_path / "db") as c:
        (status,) = c.execute("SELECT status FROM runs").fetchone()
        answered = {m for (m,) in c.execute("SELECT DISTINCT model FROM responses")}
    assert status == "failed"
    assert len(list(tmp_path.glob("builds.*"))) == 4  # driver, 2 replicas, 1 restart
    assert answered <= {f"{OtherAfterTwoReplicas.backend},delay=0.02,batch=4"}
