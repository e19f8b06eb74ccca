"""An async model's run collects garbage rarely, and leaves the collector as it found it."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator, Sequence

import pytest

from lmmprobe.models.base import Capabilities, ModelIdentity, UnsupportedInputError
from lmmprobe.run import LocalExecutor
from lmmprobe.run.executor import GC_YOUNG_THRESHOLD
from lmmprobe.schema import Request, Response


class _ThresholdModel:
    """Records the collector's thresholds while it answers; fails when told to."""

    def __init__(self, fail: bool = False) -> None:
        self.identity = ModelIdentity(backend="fake-async", name="gc")
        self.capabilities = Capabilities(is_async=True, max_concurrency=2, max_batch_size=1)
        self.fail = fail
        self.seen: list[tuple[int, int, int]] = []

    async def agenerate(self, requests: Sequence[Request]) -> list[Response]:
        self.seen.append(gc.get_threshold())
        if self.fail:
            raise KeyboardInterrupt  # not stored as an answer: it ends the run
        return [Response(key=r.key, text="A") for r in requests]

    async def aloglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        raise UnsupportedInputError("no likelihoods")


def _requests(n: int) -> list[Request]:
    return [
        Request(key=f"k{i}", sample_id=f"s{i}", method="generate", messages=[], prompt="?")
        for i in range(n)
    ]


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*before)


def test_an_async_run_raises_the_young_threshold_and_puts_it_back(thresholds):
    model = _ThresholdModel()
    stored: list[Response] = []
    LocalExecutor().execute(model, _requests(4), lambda _b, rs: stored.extend(rs))
    assert len(stored) == 4
    assert set(model.seen) == {(GC_YOUNG_THRESHOLD, 10, 10)}
    assert gc.get_threshold() == thresholds


def test_the_thresholds_are_put_back_when_the_run_ends_in_an_exception(thresholds):
    model = _ThresholdModel(fail=True)
    with pytest.raises(KeyboardInterrupt):
        LocalExecutor().execute(model, _requests(2), lambda _b, _rs: None)
    assert model.seen and gc.get_threshold() == thresholds


def test_a_collector_switched_off_stays_off(thresholds):
    gc.set_threshold(0, 10, 10)
    model = _ThresholdModel()
    LocalExecutor().execute(model, _requests(2), lambda _b, _rs: None)
    assert set(model.seen) == {(0, 10, 10)} and gc.get_threshold() == (0, 10, 10)


class _WaitingModel(_ThresholdModel):
    """Answers once `go` is set, after setting `started`."""

    def __init__(self, started: threading.Event, go: threading.Event) -> None:
        super().__init__()
        self.started, self.go = started, go

    async def agenerate(self, requests: Sequence[Request]) -> list[Response]:
        self.started.set()
        assert self.go.wait(30)
        return await super().agenerate(requests)


def test_runs_in_threads_that_end_in_any_order_put_the_thresholds_back(thresholds):
    # Re-test 17: the thresholds are the process's. Run A started, then B (which found A's
    # raised ones), A ended (putting 700 back), B ended putting A's 50,000 back for good.
    a_started, b_started, a_done, never = (threading.Event() for _ in range(4))
    a, b = _WaitingModel(a_started, b_started), _WaitingModel(b_started, a_done)

    def run(model: _ThresholdModel, done: threading.Event | None) -> None:
        LocalExecutor().execute(model, _requests(1), lambda _b, _rs: None)
        if done is not None:
            done.set()

    first = threading.Thread(target=run, args=(a, a_done))
    first.start()
    assert a_started.wait(30)
    second = threading.Thread(target=run, args=(b, never))
    second.start()
    first.join(30)
    second.join(30)
    assert a.seen and b.seen and not first.is_alive() and not second.is_alive()
    assert gc.get_threshold() == thresholds
