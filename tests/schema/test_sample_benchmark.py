"""A sample's benchmark prompt and tag: typed fields, absent when unset, read from old data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from lmmprobe.data import load_source
from lmmprobe.formulate.prompt import formulate
from lmmprobe.schema import BenchmarkTag, FormulateConfig, PromptTemplate, Sample

TEMPLATE = "{context}{question}\n{options}\nAnswer with the option's letter directly."
SOURCE = "github.com/open-compass/VLMEvalKit/blob/0123abc/vlmeval/dataset/image_mcq.py"


def _legacy(**meta: Any) -> dict[str, Any]:
    """A benchmark sample as the loader wrote it before the typed fields (JSONL, export, store)."""
    return {
        "id": "mmbench/7",
        "question": "Which colour?",
        "choices": ["red", "green"],
        "answer": 1,
        "context": "A hint.",
        "metadata": {
            "category": "colour",
            "benchmark": "mmbench",
            "metric": "mmbench_circular",
            "prompt_style": "benchmark",
            "prompt_template": TEMPLATE,
            "option_format": "{mark}) {text}",
            "option_sep": "\n",
            "context_format": "{context}\n",
            "split": "dev",
            **meta,
        },
    }


def _asked(sample: Sample, style: str = "auto") -> str:
    return formulate(sample, config=FormulateConfig(prompt_style=style)).prompt


def test_a_sample_without_a_benchmark_dumps_only_the_fields_it_always_had() -> None:
    sample = Sample(id="s", question="Q?", choices=["a", "b"], answer=0, metadata={"k": 1})
    always = {"id", "images", "question", "choices", "answer", "formulation", "context",
              "history", "metadata"}  # fmt: skip
    assert set(json.loads(sample.model_dump_json())) == always
    assert set(sample.model_dump()) == always
    assert sample.row_metadata == {"k": 1}


def test_an_old_benchmark_sample_is_read_into_the_typed_fields() -> None:
    sample = Sample.model_validate(_legacy())
    assert sample.prompt == PromptTemplate(TEMPLATE, option_format="{mark}) {text}")
    assert sample.benchmark == BenchmarkTag(name="mmbench", split="dev", metric="mmbench_circular")
    # The reader's own annotations stay; the stamp is gone from metadata...
    assert sample.metadata == {"category": "colour"}
    # ...and a recorded row still shows benchmark, split and metric where it showed them.
    assert sample.row_metadata == {
        "category": "colour",
        "benchmark": "mmbench",
        "split": "dev",
        "metric": "mmbench_circular",
    }
    # Written again, it reads back the same.
    assert Sample.model_validate_json(sample.model_dump_json()) == sample


def test_an_old_benchmark_sample_is_asked_as_a_loaded_one() -> None:
    old = Sample.model_validate(_legacy())
    typed = Sample(
        id="mmbench/7",
        question="Which colour?",
        choices=["red", "green"],
        answer=1,
        context="A hint.",
        metadata={"category": "colour"},
        prompt=PromptTemplate(TEMPLATE, SOURCE, option_format="{mark}) {text}"),
        benchmark=BenchmarkTag(name="mmbench", split="dev", metric="mmbench_circular"),
    )
    expected = "A hint.\nWhich colour?\nA) red\nB) green\nAnswer with the option's letter directly."
    assert _asked(old) == _asked(typed) == expected
    assert _asked(old, "reform") == _asked(typed, "reform") != expected


def test_own_jsonl_with_a_template_is_asked_with_it_under_the_benchmark_style(
    tmp_path: Path,
) -> None:
    rows = [
        {"id": "a", "images": [], "question": "Q a?", "choices": ["x", "y"], "answer": 0,
         "metadata": {"prompt_template": "Pick: {question}\n{options}", "topic": "t"}},
        {"id": "b", "images": [], "question": "Q b?", "choices": ["x", "y"], "answer": 0,
         "metadata": {"prompt_template": "Pick: {question}\n{options}",
                      "prompt_style": "benchmark"}},
    ]  # fmt: skip
    path = tmp_path / "own.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    a, b = load_source(str(path)).samples
    assert a.benchmark is None and a.metadata == {"topic": "t"}
    assert _asked(a, "benchmark") == "Pick: Q a?\nA. x\nB. y"
    assert _asked(b, "benchmark") == "Pick: Q b?\nA. x\nB. y"
    # Under auto a template is used only where the sample asks for it, as before.
    assert _asked(a) == _asked(a, "reform")
    assert _asked(b) == _asked(b, "benchmark")
    # What a recorded row keeps of an own sample is its metadata, unchanged.
    assert b.row_metadata == {"prompt_style": "benchmark"}


def test_a_bad_template_field_is_an_error_naming_it() -> None:
    with pytest.raises(ValidationError, match=r"prompt\.option_format"):
        Sample.model_validate(_legacy(option_format=3))
