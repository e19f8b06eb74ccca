"""Scripted orchestrator replies for the LLM-orchestrator tests (what a chat model would write)."""

from __future__ import annotations

import json
from typing import Any

GEN = {"tool": "TextToImageGeneration", "args": {"class_name": "random"}}


def answer(
    text: str, *transforms: dict[str, Any], select: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One answer with its select and transform calls."""
    return {"text": text, "select": select or GEN, "transforms": list(transforms)}


def call(tool: str, **args: Any) -> dict[str, Any]:
    """A tool call."""
    return {"tool": tool, "args": args}


def experiment_json(
    question: str = "Is this image rotated?",
    answers: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> str:
    """An Experiment as an LLM would write it (a rotation yes/no by default)."""
    if answers is None:
        answers = [answer("yes", call("RotateImage", angle=90)), answer("no", call("Identity"))]
    body = {
        "question": question,
        "answers": answers,
        "difficulty": "easy",
        "rationale": "presence first",
        **extra,
    }
    return json.dumps(body)


def init_json() -> str:
    return json.dumps({"open_questions": ["Is rotation detectable?"]})


def discuss_json() -> str:
    return json.dumps(
        {
            "findings": [{"statement": "The model is at chance.", "model": "random"}],
            "open_questions": ["Does it hold for mild rotation?"],
        }
    )


def judge_json(sufficient: bool = True) -> str:
    return json.dumps({"sufficient": sufficient, "reason": "the interval covers chance"})


def conclude_json() -> str:
    return json.dumps({"conclusions": ["random cannot identify rotation."]})
