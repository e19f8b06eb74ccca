"""Multi-round dialogue: later rounds carry earlier questions with the model's own answers."""

from __future__ import annotations

import pytest
from tests.run.fakes import RecordingModel

from lmmprobe import RunSpec
from lmmprobe.run import run_model
from lmmprobe.run.runner import dialogue_stages
from lmmprobe.schema import Sample
from lmmprobe.store import Store


class Capturing(RecordingModel):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.seen = []

    def generate(self, requests):
        self.seen.extend(requests)
        return super().generate(requests)


def dialogue(did: str) -> list[Sample]:
    return [
        Sample(id=f"{did}-{r}", question=q, choices=["red", "blue"], answer=0,
               metadata={"dialogue_id": did, "round": r})
        for r, q in enumerate(["What color is the car?", "And the sky?", "Are you sure?"])
    ]  # fmt: skip


def test_rounds_are_ordered_and_validated():
    samples = [*dialogue("d1"), Sample(id="solo", question="q", choices=["a", "b"], answer=0)]
    stages = dialogue_stages(list(reversed(samples)))
    assert [[s.id for s in st] for st in stages] == [["solo", "d1-0"], ["d1-1"], ["d1-2"]]
    assert dialogue_stages([samples[-1]]) is None
    twice = [*dialogue("d"), dialogue("d")[0]]
    with pytest.raises(ValueError, match="round 0 twice"):
        dialogue_stages(twice)


def test_model_answers_are_fed_back_online(tmp_path):
    model = Capturing()
    samples = dialogue("d1") + dialogue("d2")
    with Store(tmp_path / "db") as store:
        out = run_model("m", model, samples, RunSpec(models=["m"]), store)
        by_id = {r.sample_id: r for r in model.seen}
        third = by_id["d1-2"].messages
        # history: round 0 question, its answer, round 1 question, its answer, then the question
        assert [m.role for m in third] == ["user", "assistant", "user", "assistant", "user"]
        first_answer = next(s for s in out.scores if s.sample_id == "d1-0")
        assert "What color is the car?" in third[0].text
        assert (
            third[1].text.startswith("The answer is (")
            and "(" + "AB"[first_answer.prediction] in third[1].text
        )
        assert "And the sky?" in third[2].text and "Are you sure?" in third[4].text

        again = Capturing()
        resumed = run_model("m", again, samples, RunSpec(models=["m"]), store)
    assert again.seen == [] and resumed.called == 0 and resumed.cached == resumed.requests
    assert [s.prediction for s in resumed.scores] == [s.prediction for s in out.scores]


def test_a_different_answer_changes_later_prompts(tmp_path):
    samples = dialogue("d1")
    a, b = Capturing(name="a", text="(A)"), Capturing(name="b", text="(B)")
    with Store(tmp_path / "db") as store:
        run_model("a", a, samples, RunSpec(models=["a"]), store)
        run_model("b", b, samples, RunSpec(models=["b"]), store)
    second = {m.identity.name: {r.sample_id: r for r in m.seen}["d1-1"] for m in (a, b)}
    assert second["a"].messages[1].text == "(A)" and second["b"].messages[1].text == "(B)"


def test_dialogues_are_not_asked_under_several_frame_policies(tmp_path):
    model = Capturing()
    spec = RunSpec(models=["m"], frames="8,16")
    with Store(tmp_path / "db") as store, pytest.raises(ValueError, match="give one policy"):
        run_model("m", model, dialogue("d1"), spec, store)
    assert model.seen == []
