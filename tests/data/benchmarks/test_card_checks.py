"""A local copy's dataset card is read by the bounded reader: a bad card is one line, fast."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe

from lmmprobe.data.base import DataError
from lmmprobe.data.hf_dataset import card_configs

# Nine aliases of nine aliases of ...: a kilobyte that yaml.safe_load-based readers expand
# into hundreds of millions of strings (datasets took 28 s and a gigabyte on it).
_ITEMS = ['"en/*.parquet"'] + [",".join([f"*a{i - 1}"] * 9) for i in range(1, 9)]
_BOMB = (
    "---\n"
    + "".join(f"x{i}: &a{i} [{items}]\n" for i, items in enumerate(_ITEMS))
    + "configs:\n- config_name: en\n  data_files: [{split: dev, path: *a7}]\n---\n"
)


def _copy(tmp_path: Path, card: str) -> Path:
    folder = tmp_path / "mmbench"
    (folder / "en").mkdir(parents=True)
    (folder / "README.md").write_text(card, encoding="utf-8")
    return folder


def _one_line_error(tmp_path: Path, folder: Path, data: str) -> str:
    out = lmmprobe(
        "run",
        "-m",
        "first",
        "--data",
        data,
        "--db",
        tmp_path / "db.sqlite",
        timeout=60,
        HF_HUB_OFFLINE="1",
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("error: ")
    return lines[0]


def test_a_path_that_is_not_a_pattern_is_named_with_its_file_and_field(tmp_path: Path) -> None:
    card = "---\nconfigs:\n- config_name: en\n  data_files: [{split: dev, path: [[x]]}]\n---\n"
    folder = _copy(tmp_path, card)
    line = _one_line_error(tmp_path, folder, f"mmbench,path={folder}")
    assert f"{folder / 'README.md'}:2:" in line
    assert "configs[0] (config_name 'en'): data_files[0].path must be a file pattern" in line


@pytest.mark.parametrize(
    ("path", "says"),
    [('"/etc/*"', "is an absolute file pattern ('/etc/*')"), ('""', "is an empty file pattern")],
)
def test_an_absolute_or_empty_pattern_is_one_line_naming_the_card(
    tmp_path: Path, path: str, says: str
) -> None:
    card = f"---\nconfigs:\n- config_name: en\n  data_files: [{{split: dev, path: {path}}}]\n---\n"
    folder = _copy(tmp_path, card)
    line = _one_line_error(tmp_path, folder, f"mmbench,path={folder}")
    assert f"{folder / 'README.md'}:2: configs[0] (config_name 'en'): data_files[0].path " in line
    assert says in line


def test_an_alias_bomb_card_is_refused_before_anything_expands(tmp_path: Path) -> None:
    folder = _copy(tmp_path, _BOMB)
    line = _one_line_error(tmp_path, folder, f"mmbench,path={folder}")
    assert f"{folder / 'README.md'}:3: YAML aliases (*a0) are not allowed" in line


def test_the_hf_source_checks_the_card_too(tmp_path: Path) -> None:
    folder = _copy(tmp_path, _BOMB)
    line = _one_line_error(tmp_path, folder, f"hf:{folder},config=en,split=dev")
    assert "YAML aliases" in line and "README.md:3" in line


@pytest.mark.parametrize(
    ("data_files", "says"),
    [
        ("7", "data_files must be a file pattern or a list, not int"),
        ("[{split: dev}]", "data_files[0] must have exactly the keys split"),
        ("[{split: dev, path: []}]", "data_files[0].path must be a file pattern"),
        ("[3]", "data_files[0] must be a file pattern or {split, path}, not int"),
        ('""', "data_files is an empty file pattern"),
        ("[' ']", "data_files[0] is an empty file pattern"),
        ("/etc/*", "data_files is an absolute file pattern ('/etc/*')"),
        ("['C:\\x\\*']", "data_files[0] is an absolute file pattern"),
        ("[{split: dev, path: [a/*, ../x/*]}]", "data_files[0].path[1] climbs out of the folder"),
        ("[{split: dev, path: a/../../x}]", "data_files[0].path climbs out of the folder"),
    ],
)
def test_each_shape_datasets_refuses_is_named(tmp_path: Path, data_files: str, says: str) -> None:
    folder = _copy(tmp_path, f"---\nconfigs:\n- config_name: en\n  data_files: {data_files}\n---\n")
    with pytest.raises(DataError, match=r"README\.md:2: configs\[0\]") as err:
        card_configs(folder)
    assert says in str(err.value)


@pytest.mark.parametrize(
    ("data_dir", "says"),
    [
        ("../E2", "data_dir climbs out of the folder ('../E2'); it must stay inside it"),
        ("a/../../x", "data_dir climbs out of the folder"),
        ("/tmp/E", "data_dir is an absolute folder ('/tmp/E'); it must be relative"),
        ("'~/E'", "data_dir is an absolute folder"),
        ("' '", "data_dir is an empty folder"),
        ("[x]", "data_dir must be a folder inside the dataset's, not list"),
    ],
)
def test_a_data_dir_leaving_the_folder_is_named(tmp_path: Path, data_dir: str, says: str) -> None:
    # Re-test 10 #2: datasets joins a config's data_dir to the folder and reads what it finds
    # there, so `../E2` had it convert files outside the dataset, unchecked.
    folder = _copy(tmp_path, f"---\nconfigs:\n- config_name: en\n  data_dir: {data_dir}\n---\n")
    with pytest.raises(
        DataError, match=r"README\.md:2: configs\[0\] \(config_name 'en'\): "
    ) as err:
        card_configs(folder)
    assert says in str(err.value)


def test_the_shapes_datasets_reads_pass(tmp_path: Path) -> None:
    card = (
        "---\nlicense: mit\nconfigs:\n- config_name: a\n  data_files: d/*.csv\n"
        "- config_name: b\n  data_files: [p0/*, p1/*]\n"
        "- config_name: c\n  data_files:\n  - split: test\n    path: [t/1/*, t/2/*]\n"
        "  - split: dev\n    path: ./dev/../dev/*\n- config_name: d\n  data_dir: d/../e\n"
        "- config_name: e\n  data_dir: ''\n---\n# prose \xff below\n"
    )
    names = [c["config_name"] for c in card_configs(_copy(tmp_path, card))]
    assert names == ["a", "b", "c", "d", "e"]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_front_matter_is_read_or_refused_as_data_error(
    tmp_path_factory: pytest.TempPathFactory, body: str
) -> None:
    folder = tmp_path_factory.mktemp("card")
    (folder / "README.md").write_text(f"---\n{body}\n---\n", encoding="utf-8", errors="replace")
    try:
        configs = card_configs(folder)
    except DataError:
        return
    assert isinstance(configs, list)
