"""The offline rules orchestrator: reading queries, planning easy → hard, stopping, end to end."""

from __future__ import annotations

import json

import pytest

from lmmprobe.apex import QueryError, Settings, run_campaign
from lmmprobe.apex.datatypes import APEX27, DATA_TYPES, GROUPS, find_data_type, group_members
from lmmprobe.apex.orchestrators.rules import resolution
from lmmprobe.apex.plans import plan_query
from lmmprobe.apex.protocol import PlanningEnv
from lmmprobe.tools.select import drawable_classes


@pytest.fixture(scope="module")
def env() -> PlanningEnv:
    return PlanningEnv(models=["random"], drawable=drawable_classes())


@pytest.mark.parametrize(
    ("query", "family", "task"),
    [
        ("Can models identify rotated images?", "data_type", "identify rotation"),
        ("Can models identify images rotated to the left?", "data_type", "identify left rotation"),
        ("Can models identify upside-down images?", "data_type", "identify vertical flip"),
        ("Can models identify JPEG compression in images?", "data_type", "identify jpeg compression"),
        ("Can models identify AddGaussianNoise?", "data_type", "identify gaussian noise"),
        ("Can models identify embroidery?", "data_type", "identify embroidery"),
        ("Can models identify images with text?", "data_type", "identify typographic text"),
        ("Can models identify geometric transformations?", "group", "identify geometric transformations"),
        ("Can models identify style changes?", "group", "identify style transformations"),
        ("Can models recognize dogs?", "recognition", "recognize dogs"),
        ("Can models recognize vehicles?", "recognition", "recognize vehicles"),
        ("Can models recognize fruits?", "recognition", "recognize fruits"),
        ("Can models recognize vehicles under heavy blur?", "recognition",
         "recognize vehicles under defocus blur"),
        ("Can models recognize birds under slight noise?", "recognition",
         "recognize birds under mild gaussian noise"),
        ("Can models identify rotation in the snow?", "data_type", "identify rotation under snow"),
    ],
)  # fmt: skip
def test_query_families(env, query, family, task):
    plan = plan_query(query, env)
    assert (plan.family, plan.task) == (family, task)
    assert len(plan.rungs) >= 5  # enough for the default 5 experiments
    # Easy to hard: the first rung is never harder than the last.
    order = {"easy": 0, "medium": 1, "hard": 2}
    assert order[plan.rungs[0].difficulty] <= order[plan.rungs[-1].difficulty]


def test_unsupported_query_lists_the_supported_forms(env):
    with pytest.raises(QueryError) as err:
        plan_query("What is the meaning of life?", env)
    message = str(err.value)
    assert "supported query forms" in message and "Can models recognize" in message
    assert "tiger stripes" in message and "vehicle" in message


def test_the_27_data_types_and_their_synonyms():
    assert len(APEX27) == 27
    assert [len(group_members(g)) for g in GROUPS] == [5, 8, 8, 6]
    for name, expected in [
        ("counterclockwise rotation", "left rotation"),
        ("clockwise rotation", "right rotation"),
        ("patch and reshuffle", "patch and reshuffle"),
        ("out of focus", "defocus blur"),
        ("overexposed", "high brightness"),
        ("washed out", "low contrast"),
        ("pencil sketches", "pencil sketch"),
        ("plush toy", "plushie"),
        ("several identical objects", "several identical objects"),
        ("cut-mix", "cutmix"),
    ]:
        found = find_data_type(name)
        assert found is not None and found[0].name == expected, name


def test_every_data_type_changes_the_image():
    import numpy as np

    from lmmprobe.tools.compose import ToolCall, compose
    from lmmprobe.tools.select import SelectContext

    ctx = SelectContext(size=48)
    base = ToolCall(tool="TextToImageGeneration", args={"class_name": "random"})
    plain = np.asarray(compose(base, [], seed=5, context=ctx).image, dtype=np.int16)
    for d in DATA_TYPES:
        for severity in ("strong", "mild"):
            made = np.asarray(compose(base, d.calls(severity), seed=5, context=ctx).image)
            assert np.abs(made.astype(np.int16) - plain).mean() > 0.1, (d.name, severity)


def test_stopping_rule():
    assert resolution([], exhausted=False) is None
    assert resolution(["at_chance"], exhausted=False) is None
    assert "never above chance" in (resolution(["at_chance", "at_chance"], exhausted=False) or "")
    assert "limit found" in (resolution(["above_chance", "at_chance"], exhausted=False) or "")
    assert resolution(["above_chance", "above_chance"], exhausted=False) is None
    assert "hardest" in (resolution(["above_chance"], exhausted=True) or "")


@pytest.mark.parametrize(
    "query",
    [
        "Can models identify rotated images?",
        "Can models identify pixel transformations?",
        "Can models recognize vehicles under heavy blur?",
    ],
)
def test_end_to_end_with_baselines(tmp_path, small, cache_dir, query):
    campaign = run_campaign(
        query, ["random", "first"], "rules", out=tmp_path, settings=small, cache_dir=cache_dir
    )
    report = campaign.report
    # Baselines never beat chance: the rule stops after two experiments at chance.
    assert report.status == "sufficient" and len(report.experiments) == 2
    assert report.sufficiency is not None and "never above chance" in report.sufficiency.reason
    assert report.orchestrator_calls == 1 + 2 * 3 + 1
    for rec in report.experiments:
        assert {r.model for r in rec.results.models} == {"random", "first"}
        for r in rec.results.models:
            assert r.verdict in ("at_chance", "below_chance")
            assert r.chance == pytest.approx(1 / len(rec.experiment.answers))
            assert set(r.per_answer) == {a.text for a in rec.experiment.answers}
        # The first-option model answers the first option for every image.
        first = next(r for r in rec.results.models if r.model == "first")
        assert first.per_answer[rec.experiment.answers[0].text].value == 1.0
    difficulty = [rec.experiment.difficulty for rec in report.experiments]
    assert difficulty[0] == "easy"
    assert any(c.startswith("random cannot") for c in report.conclusions)
    saved = json.loads(campaign.report_json.read_text())
    assert saved["status"] == "sufficient" and saved["transcript"][0]["role"] == "planner"


def test_run_all_goes_to_max_experiments_and_the_unknown_option(tmp_path, cache_dir):
    settings = Settings(images_per_answer=2, image_size=32, bootstrap=50, max_experiments=3,
                        stop_when_sufficient=False, unknown_option=True)  # fmt: skip
    campaign = run_campaign(
        "Can models identify low contrast?", ["random"], "rules", out=tmp_path,
        settings=settings, cache_dir=cache_dir,
    )  # fmt: skip
    report = campaign.report
    assert report.status == "max_experiments" and len(report.experiments) == 3
    for rec in report.experiments:
        r = rec.results.models[0]
        assert r.abstention_rate is not None
        assert r.chance == pytest.approx(1 / (len(rec.experiment.answers) + 1))


def test_tiny_llava_end_to_end(tmp_path, cache_dir):
    settings = Settings(images_per_answer=2, image_size=32, bootstrap=50, max_experiments=1)
    campaign = run_campaign(
        "Can models recognize fruits?", ["hf:tiny-llava", "first"], "rules", out=tmp_path,
        settings=settings, cache_dir=cache_dir,
    )  # fmt: skip
    report = campaign.report
    assert len(report.experiments) == 1 and report.status == "max_experiments"
    llava = report.experiments[0].results.models[0]
    assert llava.model == "hf:tiny-llava" and llava.method == "likelihood"
    assert llava.error_rate.value == 0.0 and llava.accuracy.n == 4


def test_every_rung_of_every_plan_is_a_valid_experiment(env):
    from lmmprobe.apex.experiment_data import validated_calls
    from lmmprobe.apex.experiments import Report

    queries = [f"Can models identify {d.name}?" for d in DATA_TYPES if d.name != "geometric shapes"]
    queries += [f"Can models identify {g} transformations?" for g in GROUPS]
    queries += ["Can models recognize dogs under fog?", "Can models recognize shapes?"]
    for query in queries:
        plan = plan_query(query, env)
        for rung in plan.rungs:
            report = Report(query=query, models=["random"], orchestrator="rules")
            experiment = plan.build(rung, report)
            assert experiment is not None, (query, rung.title)
            validated_calls(experiment)  # raises on an unknown tool or a bad argument


def test_retrieval_collection_recognition(tmp_path, cache_dir, write_png):
    colors = {"horse": (200, 30, 30), "cow": (30, 200, 30), "cat": (30, 30, 200), "dog": (9, 9, 9)}
    for name, color in colors.items():
        for i in range(2):
            write_png(tmp_path / "coll" / name / f"{i}.png", size=(24, 24), color=color)
    settings = Settings(images_per_answer=2, image_size=32, bootstrap=50, max_experiments=2,
                        retrieval=str(tmp_path / "coll"), stop_when_sufficient=False)  # fmt: skip
    campaign = run_campaign(
        "Can models recognize horses?", ["first"], "rules", out=tmp_path / "out",
        settings=settings, cache_dir=cache_dir,
    )  # fmt: skip
    report = campaign.report
    assert len(report.experiments) == 2
    first = report.experiments[0].experiment
    assert first.answers[0].select.tool == "TextToImageRetrieval"
    assert first.answers[0].select.args["class_name"] == "horse"
    second = report.experiments[1].experiment
    assert {a.text for a in second.answers} == set(colors)  # the collection's classes
    assert campaign.datasets[0].provenance[0]["select"]["source"] == "retrieved"


def test_models_without_likelihood_generate_and_answers_are_extracted(tmp_path, small, cache_dir):
    from lmmprobe.testing import FakeOpenAIServer

    settings = small.model_copy(update={"max_experiments": 1})
    with FakeOpenAIServer() as server:
        spec = f"openai:fake-vlm@{server.base_url}"
        campaign = run_campaign(
            "Can models recognize fruits?", [spec], "rules", out=tmp_path, settings=settings,
            cache_dir=cache_dir,
        )  # fmt: skip
        asked = server.completed
    [result] = campaign.report.experiments[0].results.models
    assert result.method == "generate" and result.error_rate.value == 0.0
    assert asked == campaign.report.experiments[0].results.n_images
    assert campaign.report.metadata["methods"] == {spec: "generate"}
