"""Model cards: HEMM's bucketing, YAML validation errors, matching cards to model specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmmprobe.holistic import (
    ModelCard,
    TaxonomyError,
    card_for,
    group_models,
    load_model_cards,
    parse_count,
)

CARDS = """\
hf:/models/llava-1.5-7b:
  parameters: 7B
  modality_processing: separate
  training_type: modular
  pretraining_data_size: 558K
  data_diversity: non-diverse
  instruction_tuning: yes
  notes: LLaVA-1.5
blip2-opt-2.7b:
  parameters: 3.8e9
  modality_processing: separate
  training_type: Modular
  pretraining_data_size: 129M
  instruction_tuning: false
openai:gpt-4o:
  proprietary: true
  modality_processing: interleaved
  training_type: end-to-end
  instruction_tuning: true
"""


@pytest.fixture
def card_file(tmp_path: Path) -> Path:
    path = tmp_path / "cards.yaml"
    path.write_text(CARDS, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("value", "count"),
    [
        ("7B", 7_000_000_000),
        ("1.6 b", 1_600_000_000),
        ("558K", 558_000),
        ("129M", 129_000_000),
        ("7,000,000", 7_000_000),
        (3.8e9, 3_800_000_000),
        (12, 12),
        ("small", None),
        ("lots", None),
        (True, None),
    ],
)
def test_parse_count(value: object, count: int | None) -> None:
    assert parse_count(value) == count


def test_counts_are_bucketed_as_hemm_does() -> None:
    # Parameters: <= 4B small, > 4B medium. Data: <= 100M small, > 100M medium.
    assert ModelCard(parameters="4B").parameters == "small"
    assert ModelCard(parameters=4_000_000_001).parameters == "medium"
    card = ModelCard(parameters="13B", pretraining_data_size="100M")
    assert (card.parameters, card.parameter_count) == ("medium", 13_000_000_000)
    assert (card.pretraining_data_size, card.pretraining_data_count) == ("small", 100_000_000)
    assert ModelCard(pretraining_data_size=100_000_001).pretraining_data_size == "medium"
    # Closed models are HEMM's "large" bucket unless told otherwise.
    closed = ModelCard(proprietary=True)
    assert (closed.parameters, closed.pretraining_data_size) == ("large", "large")
    assert ModelCard(parameters="Large").parameters == "large"


def test_load_model_cards(card_file: Path) -> None:
    cards = load_model_cards(card_file)
    assert list(cards) == ["hf:/models/llava-1.5-7b", "blip2-opt-2.7b", "openai:gpt-4o"]
    llava = cards["hf:/models/llava-1.5-7b"]
    assert llava.parameters == "medium"
    assert llava.pretraining_data_size == "small"
    assert llava.data_diversity == "non_diverse"
    assert llava.instruction_tuning is True
    blip = cards["blip2-opt-2.7b"]
    assert (blip.parameters, blip.training_type, blip.pretraining_data_size) == (
        "small",
        "modular",
        "medium",
    )
    gpt = cards["openai:gpt-4o"]
    assert (gpt.parameters, gpt.training_type) == ("large", "end_to_end")


@pytest.mark.parametrize(
    ("body", "needles"),
    [
        (
            "m1:\n  parameters: 7B\nm2:\n  parameters: huge\n",
            ["cards.yaml:4", "'m2'", "parameters"],
        ),
        (
            "m1:\n  modality_processing: mixed\n",
            ["cards.yaml:2", "'m1'", "modality_processing", "interleaved"],
        ),
        ("m1:\n  instruction_tuning: maybe\n", ["cards.yaml:2", "instruction_tuning"]),
        ("m1:\n  paramters: 7B\n", ["cards.yaml:2", "paramters", "not permitted"]),
        (
            "m1:\n  parameters: 7B\n  parameter_count: 8B\n",
            ["cards.yaml:1", "disagrees with parameter_count"],
        ),
        ("m1: [a, b]\n", ["cards.yaml:1", "expected a mapping"]),
        ("m1: {}\nm1: {}\n", ["cards.yaml:2", "defined twice"]),
    ],
)
def test_card_errors_name_file_line_and_field(
    tmp_path: Path, body: str, needles: list[str]
) -> None:
    path = tmp_path / "cards.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(TaxonomyError) as info:
        load_model_cards(path)
    for needle in needles:
        assert needle in str(info.value)


def test_card_for_matches_specs_loosely(card_file: Path) -> None:
    cards = load_model_cards(card_file)
    llava = cards["hf:/models/llava-1.5-7b"]
    assert card_for("hf:/models/llava-1.5-7b", cards) is llava
    # The same checkpoint under another folder or without the backend prefix.
    assert card_for("hf:/other/place/LLaVA-1.5-7B/", cards) == llava
    assert card_for("llava-1.5-7b", cards) == llava
    assert card_for("hf:/ckpt/blip2-opt-2.7b", cards) == cards["blip2-opt-2.7b"]
    assert card_for("openai:gpt-4o@http://localhost:8000/v1", cards) == cards["openai:gpt-4o"]
    assert card_for("random", cards) is None


def test_card_for_refuses_ambiguous_matches() -> None:
    cards = {
        "hf:/a/model-x": ModelCard(parameters="small"),
        "hf:/b/model-x": ModelCard(parameters="medium"),
    }
    with pytest.raises(TaxonomyError, match="several different cards"):
        card_for("model-x", cards)


def test_group_models(card_file: Path) -> None:
    cards = load_model_cards(card_file)
    assert group_models(cards, "instruction_tuning") == {
        "no": ["blip2-opt-2.7b"],
        "yes": ["hf:/models/llava-1.5-7b", "openai:gpt-4o"],
    }
    specs = ["hf:/x/llava-1.5-7b", "hf:/y/blip2-opt-2.7b", "random"]
    assert group_models(specs, "parameters", cards) == {
        "medium": ["hf:/x/llava-1.5-7b"],
        "small": ["hf:/y/blip2-opt-2.7b"],
    }
    # Unknown fields are left out rather than grouped as None.
    assert group_models(cards, "data_diversity") == {"non_diverse": ["hf:/models/llava-1.5-7b"]}
    with pytest.raises(KeyError, match="unknown model dimension"):
        group_models(cards, "colour")
