"""Orchestrators are found by name in `ORCHESTRATORS`, like every other extension point."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lmmprobe.apex import ORCHESTRATORS, load_orchestrator
from lmmprobe.apex.orchestrators.rules import RulesOrchestrator


@pytest.fixture
def echo() -> Iterator[None]:
    @ORCHESTRATORS.register("echo-xyz", summary="echo-xyz:NAME  a rules planner renamed")
    def make(target: str | None) -> RulesOrchestrator:
        orch = RulesOrchestrator()
        orch.name = f"echo:{target}"
        return orch

    yield
    ORCHESTRATORS.unregister("echo-xyz")


def test_the_built_in_orchestrators_are_registered() -> None:
    assert {"openai", "replay", "rules"} <= set(ORCHESTRATORS.names())
    assert all(ORCHESTRATORS.origin(n) == "built-in" for n in ("openai", "replay", "rules"))
    assert isinstance(load_orchestrator("rules"), RulesOrchestrator)


def test_a_registered_orchestrator_is_built_by_its_spec(echo: None) -> None:
    assert load_orchestrator("echo-xyz:hello").name == "echo:hello"
    with pytest.raises(ValueError, match=r"unknown orchestrator 'nope'.*registered: echo-xyz"):
        load_orchestrator("nope")


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("rules:x", "the rules orchestrator takes no target"),
        ("openai", "the openai orchestrator needs a model"),
        ("replay:", "the replay orchestrator needs a report"),
    ],
)
def test_a_target_an_orchestrator_cannot_take_is_a_value_error(spec: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        load_orchestrator(spec)
