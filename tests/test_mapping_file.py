"""The one reader of name -> entry files (catalogs, model cards, price tables): file:line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# ---- the line of each entry's fields (issue 34 re-test: a card's bad field named the model's line)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("t.yaml", "m:\n  input: 1\n  output: 2\nn: {input: 3,\n  output: 4}\n"),
        ("t.json", '{"m": {\n  "input": 1,\n  "output": 2},\n "n": {"input": 3,\n  "output": 4}}'),
    ],
)
def test_each_field_of_an_entry_has_its_line(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    data, lines = read_mapping(path)
    assert data == {"m": {"input": 1, "output": 2}, "n": {"input": 3, "output": 4}}
    assert where(path, lines, "m", "output") == f"{path}:3"
    assert where(path, lines, "n", "input") == f"{path}:4"
    assert where(path, lines, "n", "output") == f"{path}:5"
    assert where(path, lines, "n") == f"{path}:4"
    # A field not given is placed at its entry's name.
    assert where(path, lines, "m", "nope") == f"{path}:1"


# ---- YAML read as pyyaml's safe loader reads it, in one pass of the C parser's events

SCALARS = """\
plain: text
quoted: "1"
single: '2'
int: 12
hex: 0x1f
octal: 0o17
float: 2.5
exp: 1e3
inf: .inf
nan_text: .NaN
yes: yes
bool: true
null_word: null
tilde: ~
empty:
date: 2024-01-02
stamp: 2024-01-02T03:04:05Z
binary: !!binary aGVsbG8=
tagged_str: !!str 12
tagged_int: !!int "7"
bang: ! 12
anchored: &x 5
"1.5": key that is a number
10: int key
block: |
  two
  lines
folded: >
  one
  line
list: [1, two, {three: 3}, [4]]
nested:
  deeper:
    - a: 1
      b: [x, y]
"""


def test_scalars_and_collections_are_read_as_the_safe_loader_reads_them(tmp_path: Path) -> None:
    import math

    import yaml

    path = tmp_path / "t.yaml"
    path.write_text(SCALARS)
    data, _ = read_mapping(path)
    wanted = {str(k): v for k, v in yaml.safe_load(SCALARS).items()}
    assert math.isnan(data.pop("nan_text")) and math.isnan(wanted.pop("nan_text"))
    assert data == wanted
    assert [type(v) for v in data.values()] == [type(v) for v in wanted.values()]


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        # Features the event pass leaves to pyyaml's node tree (small files): read as before.
        ("s: !!set {a, b}\n", {"s": {"a", "b"}}),
        ("o: !!omap [{a: 1}, {b: 2}]\n", {"o": [("a", 1), ("b", 2)]}),
        ("m:\n  <<: {input: 1}\n  output: 2\n", {"m": {"input": 1, "output": 2}}),
        ("m:\n  =: 1\n", {"m": {"=": 1}}),
    ],
)
def test_rare_yaml_features_are_still_read(tmp_path: Path, text: str, wanted: object) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    assert read_mapping(path)[0] == wanted


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("a: 1\n---\nb: 2\n", "t.yaml:2: not valid YAML (expected a single document"),
        ("a: !custom 1\n", "t.yaml:1: not valid YAML (could not determine a constructor"),
        ("? [a, b]\n: 1\n", "not valid YAML (while constructing a mapping"),
        ("a: !!int abc\n", "t.yaml:1: not valid YAML ('abc' is not a int"),
        ("a: !!binary 'a'\n", "t.yaml:1: not valid YAML (failed to decode base64"),
        (
            "a:\n  b: 1\n  c: [1, {b: 2, b: 3}]\n",
            "t.yaml:3: 'b' is defined twice (first on line 3)",
        ),
        ("1: a\n'1': b\n", "t.yaml:2: '1' is defined twice (first on line 1)"),
        ("a: &x [1]\nb: *x\n", "t.yaml:2: YAML aliases (*x) are not allowed here"),
    ],
)
def test_bad_yaml_is_one_line_naming_file_and_line(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(MappingFileError) as err:
        read_mapping(path)
    assert said in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_a_rare_yaml_feature_in_a_large_file_is_refused_in_one_line(tmp_path: Path) -> None:
    # The node tree those features need takes ~250 bytes a byte: only small files get it.
    path = tmp_path / "t.yaml"
    path.write_text(
        "".join(f"m{i}: {{input: 1, output: 2}}\n" for i in range(60_000)) + "s: !!set {a}\n"
    )
    with pytest.raises(MappingFileError) as err:
        read_mapping(path)
    assert str(err.value) == (
        f"{path}:60001: the YAML tag tag:yaml.org,2002:set is read only in files up to 1 MiB; "
        "write it as a plain mapping or list"
    )


# ---- large files: bounded, linear time and memory (issue 34 re-test: a 1 MiB price table took
# 43 s and 465 MB, 4 MiB over 120 s; an 11 MiB JSON file with a repeated key 31 s)


def _many_entries(suffix: str, size: int) -> str:
    """A price-table-like file of about `size` bytes: many entries, each with small mappings."""
    if suffix == ".json":
        entry = '"openai:m{i}": {{"input": {i}, "output": 2.5, "x": [{{"a": 1}}, {{"a": 2}}]}}'
        count = size // len(entry.format(i=10**5))
        return "{\n" + ",\n".join(entry.format(i=i) for i in range(count)) + "\n}\n"
    entry = "openai:m{i}:\n  input: {i}\n  output: 2.5\n  x: [{{a: 1}}, {{a: 2}}]\n"
    count = size // len(entry.format(i=10**5))
    return "".join(entry.format(i=i) for i in range(count))


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_large_file_of_many_entries_is_read_in_bounded_time(tmp_path: Path, suffix: str) -> None:
    from tests.bounded import bounded

    path = tmp_path / f"prices{suffix}"
    path.write_text(_many_entries(suffix, 2 * 1024 * 1024))
    # Generous: read in about a second on a loaded 2-core machine; it took minutes (JSON: the
    # line of each name was searched from the start of the text; YAML: the node tree, twice).
    data, lines = bounded(read_mapping, path, seconds=10)
    assert len(data) > 20_000
    last = list(data)[-1]
    assert data[last]["x"] == [{"a": 1}, {"a": 2}]
    # The last entry's last field: the file's last line (JSON: the one before the closing brace).
    last_line = path.read_text().count("\n") - (1 if suffix == ".json" else 0)
    assert where(path, lines, last, "x") == f"{path}:{last_line}"


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_large_file_with_a_key_given_twice_is_placed_in_bounded_time(
    tmp_path: Path, suffix: str
) -> None:
    from tests.bounded import bounded

    text = _many_entries(suffix, 2 * 1024 * 1024)
    if suffix == ".json":
        text = text[: text.rindex("}")] + ', "openai:m7": {"input": 1, "output": 2}}\n'
    else:
        text += "openai:m7: {input: 1, output: 2}\n"
    path = tmp_path / f"prices{suffix}"
    path.write_text(text)
    first = 2 + 7 if suffix == ".json" else 1 + 7 * 4  # the JSON file starts with "{" alone
    line = text.count("\n")

    def refused() -> str:
        with pytest.raises(MappingFileError) as err:
            read_mapping(path)
        return str(err.value)

    said = bounded(refused, seconds=10)
    assert said == f"{path}:{line}: 'openai:m7' is defined twice (first on line {first})"


def test_a_large_yaml_file_is_read_in_memory_linear_in_its_size(tmp_path: Path) -> None:
    import tracemalloc

    path = tmp_path / "prices.yaml"
    path.write_text(_many_entries(".yaml", 1024 * 1024))
    size = path.stat().st_size
    read_mapping(path)  # imports and caches first
    tracemalloc.start()
    try:
        data, _ = read_mapping(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(data) > 15_000
    # The value itself takes ~20 bytes a byte of text, the read buffer 16 MiB at most; pyyaml's
    # node tree, built twice, took over 120 bytes a byte (465 MB for 1 MiB).
    assert peak < 60 * size, f"{peak / size:.0f} bytes of memory a byte of text"


# ---- fuzzing: the one-pass reader agrees with pyyaml's safe loader, and anything else is one line

_SCALAR_VALUES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["yes", "~", "1e3", "0x1f", "2024-01-02", "null", "", " a", "=", "<<"])
)
_VALUES = st.recursive(
    _SCALAR_VALUES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(
    data=st.dictionaries(st.text(min_size=1, max_size=8), _VALUES, max_size=6),
    flow=st.sampled_from([None, True, False]),
)
def test_yaml_is_read_as_the_safe_loader_reads_it(
    data: dict[str, object], flow: bool | None
) -> None:
    import tempfile

    import yaml

    text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.yaml"
        path.write_text(text, encoding="utf-8")
        read, _ = read_mapping(path)
    assert read == {str(k): v for k, v in (yaml.safe_load(text) or {}).items()}


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("ab:-,[]{}&*!?|>'\"#%@`\n\t 01.~<=")), max_size=80),
    suffix=st.sampled_from([".yaml", ".json"]),
)
def test_any_text_is_read_or_refused_in_one_line(text: str, suffix: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"t{suffix}"
        path.write_text(text, encoding="utf-8")
        try:
            data, lines = read_mapping(path)
        except MappingFileError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(str(path))
            return
        for name in data:  # every name is placed in the file, or the file alone is named
            assert where(path, lines, name).startswith(str(path))
