"""The one reader of name -> entry files (catalogs, model cards, price tables): file:line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmmprobe._mapping_file import MappingFileError, read_mapping, where


@pytest.mark.parametrize(
    ("name", "text", "wanted"),
    [
        ("t.yaml", "a: 1\nb: 2\na: 3\n", "t.yaml:3: 'a' is defined twice (first on line 1)"),
        ("t.json", '{"a": 1,\n "a": 2}', "t.json:2: 'a' is defined twice (first on line 1)"),
        ("t.yaml", "- a\n- b\n", "top level must be a mapping of names to entries, got list"),
        ("t.json", '{"a": ', "t.json:1: not valid JSON"),
        ("t.yaml", "a: {\n", "not valid YAML"),
    ],
)
def test_a_bad_file_is_named_with_its_line(
    tmp_path: Path, name: str, text: str, wanted: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(MappingFileError) as err:
        read_mapping(path)
    assert wanted in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["t.yaml", "t.json"])
def test_each_name_has_its_line(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    text = "a: 1\nb:\n  c: 2\n" if name.endswith("yaml") else '{\n  "a": 1,\n  "b": {"c": 2}\n}'
    path.write_text(text)
    data, lines = read_mapping(path)
    assert data == {"a": 1, "b": {"c": 2}}
    assert where(path, lines, "b") == f"{path}:{2 if name.endswith('yaml') else 3}"
    assert where(path, lines, "zz") == str(path)


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(MappingFileError, match="file does not exist"):
        read_mapping(tmp_path / "none.yaml")


def test_json_nested_past_the_decoder_is_named_not_a_traceback(tmp_path: Path) -> None:
    # A price table nested 5,000 deep raised RecursionError (issue 34).
    path = tmp_path / "prices.json"
    path.write_text('{"m": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(MappingFileError, match=r"prices\.json: not valid JSON \(nested too deep"):
        read_mapping(path)
