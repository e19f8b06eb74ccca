"""The rules orchestrator's tables: ladders and data types are data, checked when read."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from lmmprobe.apex.datatypes import DATA_TYPES, DataType
from lmmprobe.apex.experiments import Report
from lmmprobe.apex.ladders import LADDERS, Ladder, RungRow, check_ladder
from lmmprobe.apex.plans import plan_query
from lmmprobe.apex.protocol import OrchestratorError, PlanningEnv, latest_record
from lmmprobe.apex.query import read_query
from lmmprobe.tools.select import drawable_classes


@pytest.fixture(scope="module")
def env() -> PlanningEnv:
    return PlanningEnv(models=["random"], drawable=drawable_classes())


def _row(**fields: object) -> RungRow:
    base: dict[str, object] = {
        "title": "Is {name} detectable?",
        "difficulty": "easy",
        "question": "{question}",
        "answers": "presence",
        "rationale": "Presence first{cond}.",
    }
    return RungRow.model_validate({**base, **fields})


def test_a_plan_follows_its_ladder_rows(env):
    plan = plan_query("Can models identify rotated images?", env)
    rows = [r for r in LADDERS["data_type"].rungs if r.when != "no mild"]  # rotation has a mild
    assert [r.row for r in plan.rungs] == rows
    assert [r.difficulty for r in plan.rungs] == [r.difficulty for r in rows]
    report = Report(query="q", models=["random"], orchestrator="rules")
    for rung in plan.rungs:
        experiment = plan.build(rung, report)
        assert experiment is not None and experiment.difficulty == rung.difficulty


def test_the_shipped_ladders_pass_their_checks():
    for family, ladder in LADDERS.items():
        check_ladder(family, ladder)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"title": "Is {nme} detectable?"}, "data_type.rungs[0].title names ['nme']"),
        ({"when": "sometimes"}, "data_type.rungs[0].when='sometimes'"),
        ({"answers": "classes", "members": "four"}, "data_type.rungs[0].answers='classes'"),
        ({"answers": "transforms", "members": "nobody"}, "data_type.rungs[0].members='nobody'"),
        ({"extra": "sparkles"}, "data_type.rungs[0].extra: unknown data type 'sparkles'"),
        # An adaptive word is known only to the rung that picks a data type from the results.
        ({"rationale": "{accuracy:.2f}"}, "rationale names ['accuracy']"),
    ],
)
def test_a_bad_rung_is_named_with_its_field(fields, expected):
    ladder = Ladder(task="identify {name}{cond}", rungs=[_row(**fields)])
    with pytest.raises(ValueError) as err:
        check_ladder("data_type", ladder)
    assert expected in str(err.value)
    assert "ladders.json" in str(err.value)


def test_a_rung_states_each_field_once_and_nothing_else():
    with pytest.raises(ValidationError, match="difficulty"):
        _row(difficulty="trivial")
    with pytest.raises(ValidationError, match="build"):
        _row(build="lambda r: None")


def test_a_data_type_entry_is_validated():
    entry = DATA_TYPES[0].model_dump()
    assert DataType.model_validate(entry) == DATA_TYPES[0]
    with pytest.raises(ValidationError, match="group"):
        DataType.model_validate({**entry, "group": "colour"})
    with pytest.raises(ValidationError, match="strong"):
        DataType.model_validate({**entry, "strong": []})
    # calls() hands out copies: changing one cannot change the table.
    DATA_TYPES[0].calls()[0].args["angle"] = 0.0
    assert DATA_TYPES[0].calls()[0].args["angle"] != 0.0


def test_reading_a_query_with_a_condition(env):
    reading = read_query("Can models recognize birds under slight noise?", env)
    assert reading.family == "recognition"
    assert reading.condition is not None
    assert (reading.condition.data_type.name, reading.condition.severity) == (
        "gaussian noise",
        "mild",
    )
    assert read_query("Can models identify style edits?", env).target == "style"


def test_discuss_before_any_experiment_is_an_orchestrator_error():
    with pytest.raises(OrchestratorError, match="before any experiment"):
        latest_record(Report(query="q", models=["random"], orchestrator="rules"))
