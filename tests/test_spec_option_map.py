"""Options whose value is a mapping (``chat_template_kwargs``): `lmmprobe.spec.parse_option_map`."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.console import lmmprobe

from lmmprobe.spec import parse_option_map, parse_spec


def test_pairs_are_read_as_json_scalars_inside_one_spec_option() -> None:
    spec = parse_spec(
        "hf:x,chat_template_kwargs=enable_thinking=false;thinking_budget=512;mode=fast"
    )
    value = parse_option_map(spec.options["chat_template_kwargs"], "chat_template_kwargs")
    assert value == {"enable_thinking": False, "thinking_budget": 512, "mode": "fast"}
    assert parse_option_map('a=True;b=null;c=0.5;d="7";', "o") == {
        "a": True, "b": None, "c": 0.5, "d": "7",
    }  # fmt: skip
    assert parse_option_map("x=[1]", "o") == {"x": "[1]"}  # nothing nests: kept as text
    deep = "[" * 100_000  # never decoded: no RecursionError
    assert parse_option_map(f"x={deep};y={{" + deep, "o") == {"x": deep, "y": "{" + deep}


@pytest.mark.parametrize(
    ("value", "wanted"),
    [
        ("enable_thinking", "option o: 'enable_thinking' is not key=value"),
        ("1a=2", "'1a=2' is not key=value"),
        ("a=1;a=2", "key 'a' is given twice"),
        (";", "no key=value pair"),
    ],
)
def test_bad_maps_say_which_pair(value: str, wanted: str) -> None:
    with pytest.raises(ValueError, match=wanted) as info:
        parse_option_map(value, "o")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("value", "wanted"),
    [
        ("a=NaN", "a: 'NaN' is not a finite number"),
        ("a=Infinity", "a: 'Infinity' is not a finite number"),
        ("a=-Infinity", "a: '-Infinity' is not a finite number"),
        ("a=1e999", "a: '1e999' is not a finite number"),
        ('a="\\ud800"', "a: the value holds a lone surrogate"),
    ],
)
def test_values_no_request_can_carry_are_refused_at_parse(
    tmp_path: Path, value: str, wanted: str
) -> None:
    # Re-test 7 #14: accepted, then every request failed as the server's fault ("malformed
    # response: ValueError: Out of range float values are not JSON compliant"), retried.
    model = f"openai:m@http://127.0.0.1:1/v1,chat_template_kwargs={value}"
    ran = lmmprobe("run", "-m", model, "--limit", "1",
                   "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    assert ran.returncode == 2, ran.stdout + ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and "option chat_template_kwargs: " + wanted in lines[0], ran.stderr
    assert not (tmp_path / "o").exists()
