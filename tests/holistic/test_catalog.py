"""The task catalog: HEMM's table 1, our own tasks, lookups and user annotation files."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from lmmprobe.data.demo import SUBTASKS as DEMO_SUBTASKS
from lmmprobe.holistic import (
    CATEGORIES,
    DIMENSIONS,
    Catalog,
    TaskDimensions,
    TaskEntry,
    TaxonomyError,
    load_catalog,
)
from lmmprobe.schema.sample import Formulation
from lmmprobe.synth.metadata import FINE_SUBTASKS
from lmmprobe.synth.metadata import SUBTASKS as SYNTH_SUBTASKS

# HEMM (Liang et al., 2024), table 1: interaction, fine-grained, reasoning, external
# knowledge, information flow, use case.
HEMM_TABLE = """
VQA | redundancy | yes | less | no | querying | multimedia
Visual Genome | redundancy | yes | less | no | querying | multimedia
VCR | redundancy | yes | less | no | fusion | multimedia
OK-VQA | redundancy | yes | less | yes | querying | multimedia
GQA | redundancy | yes | less | no | querying | multimedia
NoCaps | redundancy | no | less | no | translation | multimedia
Flickr30K | redundancy | no | less | no | translation | multimedia
Winoground | redundancy | yes | less | no | querying | multimedia
NLVR | redundancy | yes | less | no | querying | multimedia
NLVR2 | redundancy | no | less | no | querying | multimedia
IRFL | synergy | no | more | no | fusion | multimedia
MM-IMDb | synergy | no | less | no | fusion | multimedia
MagicBrush | synergy | yes | less | no | editing | multimedia
LNCOCO | uniqueness | yes | less | yes | translation | multimedia
NY Cartoon | synergy | no | more | yes | fusion | affect
Hateful Memes | synergy | no | more | yes | fusion | affect
MemeCap | synergy | no | more | yes | fusion | affect
Memotion | synergy | no | more | yes | fusion | affect
FER-2013 | uniqueness | no | less | no | querying | affect
ScienceQA | synergy | no | less | yes | fusion | science
Resisc45 | uniqueness | no | less | no | querying | science
UCMerced | uniqueness | no | less | no | querying | science
iNaturalist | uniqueness | yes | less | yes | querying | science
Decimer | uniqueness | no | more | yes | translation | science
PathVQA | redundancy | yes | less | yes | querying | health
VQARAD | redundancy | yes | more | yes | querying | health
OpenPath | redundancy | yes | more | yes | querying | health
Slake | redundancy | yes | more | yes | querying | health
Enrico | uniqueness | no | less | no | querying | HCI
Screen2Words | uniqueness | no | less | no | translation | HCI
"""


def _table() -> dict[str, dict[str, str]]:
    rows = {}
    for line in HEMM_TABLE.strip().splitlines():
        name, inter, fine, reas, know, flow, use = (c.strip() for c in line.split("|"))
        rows[name] = {
            "interaction": inter,
            "granularity": "fine" if fine == "yes" else "coarse",
            "reasoning": reas,
            "knowledge": know,
            "flow": flow,
            "use_case": use,
        }
    return rows


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def test_hemm_datasets_match_table_1(catalog: Catalog) -> None:
    table = _table()
    assert catalog.tasks(source="hemm") == list(table)
    for name, expected in table.items():
        dims = catalog.dimensions(name)
        assert dims is not None, name
        assert dims.model_dump() == expected, name


def test_hemm_metrics_bartscore_for_text_clip_i_for_images(catalog: Catalog) -> None:
    for name in catalog.tasks(source="hemm"):
        entry = catalog.get(name)
        assert entry is not None
        if name in ("MagicBrush", "LNCOCO"):
            assert (entry.metric, entry.bounded, entry.best) == ("clip_i", True, 1.0)
        else:
            assert (entry.metric, entry.bounded, entry.best) == ("bartscore", False, None)


def test_lookup_ignores_case_and_punctuation(catalog: Catalog) -> None:
    ok = catalog.dimensions("OK-VQA")
    assert ok is not None
    assert catalog.dimensions("ok_vqa") == ok
    assert catalog.dimensions("  OKVQA ") == ok
    assert catalog.dimensions("fer2013") == catalog.dimensions("FER-2013")
    assert catalog.dimensions("ny-cartoon") == catalog.dimensions("NY Cartoon")
    # HEMM's own code names some datasets differently.
    assert catalog.dimensions("plip") == catalog.dimensions("OpenPath")
    assert catalog.dimensions("not a dataset") is None
    assert "vqa" in catalog
    assert "nope" not in catalog


def test_our_tasks_are_annotated(catalog: Catalog) -> None:
    for task in (*SYNTH_SUBTASKS, *DEMO_SUBTASKS, *typing.get_args(Formulation)):
        assert catalog.dimensions(task) is not None, task
    for task in SYNTH_SUBTASKS:
        dims = catalog.dimensions(task)
        assert dims is not None
        # Granularity follows the synthetic benchmark's own fine/coarse labels.
        assert dims.granularity == ("fine" if task in FINE_SUBTASKS else "coarse"), task
    # ReForm-Eval's names for its formulations find them too.
    for alias, name in [
        ("SingleChoice", "single_choice"),
        ("Generation", "caption"),
        ("OCROpenEnded", "ocr"),
        ("KIEOpenEnded", "kie"),
    ]:
        assert catalog.get(alias) == catalog.get(name)
    free = catalog.get("free_form")
    assert free is not None and free.best == 100.0


def test_every_value_is_a_known_category(catalog: Catalog) -> None:
    assert set(DIMENSIONS) == set(CATEGORIES)
    for entry in catalog:
        for dim in DIMENSIONS:
            assert entry.dimensions.category(dim) in CATEGORIES[dim]


def test_user_yaml_adds_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "tasks.yaml"
    path.write_text(
        "ChartQA:\n"
        "  dimensions: {interaction: synergy, granularity: fine, reasoning: more,\n"
        "               knowledge: no, flow: fusion, use_case: science}\n"
        "  metric: accuracy\n"
        "  bounded: true\n"
        "  aliases: [chart-qa-v1]\n"
        "VQA:\n"
        "  dimensions: {interaction: synergy, granularity: coarse, reasoning: more,\n"
        "               knowledge: yes, flow: fusion, use_case: hci}\n"
        "  metric: accuracy\n"
        "  bounded: true\n",
        encoding="utf-8",
    )
    catalog = load_catalog(path)
    chart = catalog.get("chart_qa_v1")
    assert chart is not None and chart.name == "ChartQA" and chart.source == "user"
    vqa = catalog.dimensions("vqa")
    # YAML's bare `yes` is a boolean; it still means knowledge: yes. Case is normalized.
    assert vqa == TaskDimensions(
        interaction="synergy",
        granularity="coarse",
        reasoning="more",
        knowledge="yes",
        flow="fusion",
        use_case="HCI",
    )
    assert len(catalog) == len(load_catalog()) + 1


@pytest.mark.parametrize(
    ("body", "needles"),
    [
        (
            "X:\n  dimensions: {interaction: lots, granularity: fine, reasoning: more,"
            " knowledge: no, flow: fusion, use_case: science}\n  metric: a\n  bounded: true\n",
            ["tasks.yaml:2", "'X'", "dimensions.interaction"],
        ),
        (
            "ok:\n  dimensions: {interaction: synergy, granularity: fine, reasoning: more,"
            " knowledge: no, flow: fusion, use_case: science}\n  metric: a\n  bounded: true\n"
            "Y:\n  dimensions: {interaction: synergy, granularity: fine, reasoning: more,"
            " knowledge: no, flow: fusion}\n  metric: a\n  bounded: true\n",
            ["tasks.yaml:6", "'Y'", "dimensions.use_case", "Field required"],
        ),
        (
            "Z:\n  dimensions: {interaction: synergy, granularity: fine, reasoning: more,"
            " knowledge: no, flow: fusion, use_case: science}\n  metric: a\n  bounded: true\n"
            "  colour: red\n",
            ["tasks.yaml:5", "'Z'", "colour"],
        ),
        ("Z: 3\n", ["tasks.yaml:1", "expected a mapping"]),
        ("- a\n- b\n", ["tasks.yaml", "top level must be a mapping"]),
        ("A: {\n", ["tasks.yaml", "not valid YAML"]),
        ("A: {}\nA: {}\n", ["tasks.yaml:2", "defined twice"]),
        ("Ok-Vqa2: {}\nokvqa_2: {}\n", ["tasks.yaml:2", "same name"]),
    ],
)
def test_user_yaml_errors_name_file_and_field(
    tmp_path: Path, body: str, needles: list[str]
) -> None:
    path = tmp_path / "tasks.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(TaxonomyError) as info:
        load_catalog(path)
    for needle in needles:
        assert needle in str(info.value)


def test_json_user_file_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text('{"T": {"metric": "accuracy", "bounded": true}}', encoding="utf-8")
    # A JSON entry is named by its line too (the shared reader finds each name's line).
    with pytest.raises(TaxonomyError, match=r"tasks\.json:1: task 'T': field 'dimensions'"):
        load_catalog(path)
    with pytest.raises(TaxonomyError, match="does not exist"):
        load_catalog(tmp_path / "missing.yaml")


def test_alias_clash_is_an_error() -> None:
    dims = TaskDimensions(
        interaction="synergy",
        granularity="fine",
        reasoning="more",
        knowledge="no",
        flow="fusion",
        use_case="science",
    )
    a = TaskEntry(name="A", dimensions=dims, metric="m", bounded=True, aliases=("shared",))
    b = TaskEntry(name="B", dimensions=dims, metric="m", bounded=True, aliases=("SHARED",))
    with pytest.raises(TaxonomyError, match="alias 'SHARED' of task 'B'"):
        Catalog([a, b])
