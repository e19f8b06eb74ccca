"""Finding a leaderboard set's files in a folder of predictions, whatever the folder holds (issue 37).

The file names are outside text: any name a file system takes must give each member at most
one file, found only by lmmprobe's name or VLMEvalKit's ``_DATASET`` ending, or one clear
`DataError`; never a traceback, never a sidecar taken for predictions.
"""

from __future__ import annotations

import string
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmmprobe.data.base import DataError
from lmmprobe.metrics.leaderboard import OPENVLM_COLUMNS, OPENVLM_MAIN
from lmmprobe.predictions.leaderboard import SUFFIXES, find_member_files

DATASETS = [n for f in OPENVLM_MAIN for n in OPENVLM_COLUMNS[f].vlmevalkit]
MEMBERS = [b for f in OPENVLM_MAIN for b in OPENVLM_COLUMNS[f].benchmarks]

_chars = string.ascii_letters + string.digits + "_-. ()[]éü中"
_stem = st.one_of(
    st.text(_chars, min_size=1, max_size=40),
    st.builds(lambda m, d: f"{m}_{d}", st.text(_chars, max_size=12), st.sampled_from(DATASETS)),
    st.builds(lambda d, tail: f"M_{d}{tail}", st.sampled_from(DATASETS),
              st.sampled_from(["_acc", "_gpt-4-turbo", "_score", "", "_openai_result"])),
    st.sampled_from(MEMBERS),
)  # fmt: skip
_name = st.builds(lambda s, x: s + x, _stem, st.sampled_from([*SUFFIXES, ".txt", "", ".XLSX"]))


@settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_name, max_size=12, unique=True))
def test_any_folder_gives_each_member_one_file_or_a_clear_error(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in names:
            if name.strip(". ") and "/" not in name:
                (folder / name).write_bytes(b"x")
        try:
            found, problems = find_member_files(folder, "openvlm-main")
        except DataError as exc:
            assert "files for" in str(exc) and "\n" not in str(exc)
            return
    assert set(found) | set(problems) == set(MEMBERS)
    assert not set(found) & set(problems)
    for member, path in found.items():
        (dataset,) = [
            d for f in OPENVLM_MAIN for b, d in zip(
                OPENVLM_COLUMNS[f].benchmarks, OPENVLM_COLUMNS[f].vlmevalkit, strict=True
            ) if b == member
        ]  # fmt: skip
        assert path.suffix.lower() in SUFFIXES
        assert path.stem == member or path.stem.endswith(f"_{dataset}")


def test_not_a_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a folder"):
        find_member_files(tmp_path / "nothing", "openvlm")
