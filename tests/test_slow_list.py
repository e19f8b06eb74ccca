"""`tests/slow_tests.txt` names tests that exist, and `make test` leaves them out (issue 34, 17).

The list is written by `benchmarks/suite_cpu.py --write-slow` from measured CPU; a test renamed
or removed since would leave a line that marks nothing, and its successor would run in the fast
suite unnoticed (or the reverse), so each line must still name a test function in its file,
and the conftest warns of a listed case its file, collected whole, no longer has.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import SLOW_LIST, listed_slow

ROOT = Path(__file__).parents[1]


def test_every_listed_slow_test_names_a_test_function_in_its_file() -> None:
    stale = []
    sources: dict[str, str] = {}
    for nodeid in sorted(listed_slow()):
        file, _, rest = nodeid.partition("::")
        path = ROOT / file
        if not path.is_file():
            stale.append(f"{nodeid}: no file {file}")
            continue
        text = sources.setdefault(file, path.read_text(encoding="utf-8"))
        name = rest.split("[", 1)[0].split("::")[-1]
        if not re.search(rf"^\s*(async\s+)?def {re.escape(name)}\(", text, re.MULTILINE):
            stale.append(f"{nodeid}: no test {name} in {file}")
    assert not stale, "\n".join(stale)


def test_the_list_reads_comments_blank_lines_and_whole_parametrized_tests(tmp_path: Path) -> None:
    listing = tmp_path / "slow.txt"
    listing.write_text(
        "# header\n\n  tests/a.py::test_x[#1 case]  \ntests/b.py::test_y\n", encoding="utf-8"
    )
    assert listed_slow(listing) == {"tests/a.py::test_x[#1 case]", "tests/b.py::test_y"}
    assert listed_slow(tmp_path / "none.txt") == set()


def test_a_listed_test_is_left_out_of_the_suite_but_runs_when_its_file_is_named(
    tmp_path: Path,
) -> None:
    listed = sorted(listed_slow())
    if not listed:
        return  # nothing listed: nothing is left out
    nodeid = listed[0]
    file = nodeid.split("::", 1)[0]
    folder = str(Path(file).parent)

    def collected(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-n0", "-p", "no:cacheprovider",
             *args],
            cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        return done.stdout

    assert nodeid not in collected(folder)  # a folder: the default `-m 'not slow'` leaves it out
    assert nodeid in collected(file)  # its file named: it runs
    assert nodeid in collected("-m", "slow", file)  # the file's slow tests, asked for by mark
    assert nodeid not in collected("-m", "not slow", file)  # a mark given: the marks stand
    assert SLOW_LIST.exists()


def test_a_listed_case_its_file_no_longer_has_is_named_when_the_file_is_collected_whole(
    tmp_path: Path,
) -> None:
    """Re-test 18: a listed ``test_x[case]`` whose case was renamed marked nothing, silently,
    and the case went back into the fast suite. The suite's own conftest, run by pytest on a
    project of its own with a list of its own, now warns where a collected file tells."""
    tests = tmp_path / "tests"
    tests.mkdir()
    shutil.copy(ROOT / "tests" / "conftest.py", tests / "conftest.py")
    (tests / "__init__.py").write_text("")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: listed\n")
    (tests / "test_p.py").write_text(
        "import pytest\n\n\n"
        "@pytest.mark.parametrize('v', [1, 2], ids=['a', 'b'])\n"
        "def test_q(v):\n    pass\n\n\n"
        "def test_r():\n    pass\n"
    )
    (tests / "test_o.py").write_text("def test_z():\n    pass\n")
    (tests / "slow_tests.txt").write_text(
        "# a comment\ntests/test_p.py::test_q[a]\ntests/test_p.py::test_q[gone]\n"
        "tests/test_p.py::test_renamed\ntests/test_o.py::test_z[x]\n"
    )

    def stale(*args: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n0",
             "-p", "no:cacheprovider", *args],
            cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        said = re.findall(r"StaleSlowListWarning: (.*)", done.stdout)
        assert len(said) <= 1, said
        if not said:
            return []
        assert said[0].startswith("slow_tests.txt: "), said[0]
        return said[0].split("--write-slow, or edit it): ", 1)[1].split(", ")

    # The file collected whole: the renamed case and the removed test are named, not test_q[a];
    # test_o.py was not collected, so its line is not judged. -k deselects after the check.
    whole = ["tests/test_p.py::test_q[gone]", "tests/test_p.py::test_renamed"]
    assert stale("tests/test_p.py") == whole
    assert stale("-k", "test_r", "tests/test_p.py") == whole
    assert stale("tests") == ["tests/test_o.py::test_z[x]", *whole]
    # Tests chosen by node id: the file is not collected whole, so nothing can be told.
    assert stale("tests/test_p.py::test_q") == []
    assert stale("tests/test_p.py::test_r", "tests/test_o.py") == ["tests/test_o.py::test_z[x]"]
