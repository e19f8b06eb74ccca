"""An id read as a position takes ASCII digits only (re-test 20 #19).

lmms-eval's ``doc_id`` is the item's position in its split; a file whose ``doc_id`` is the text
``"²"`` (which `str.isdigit` accepts and `int` refuses) or 5,000 digits (past Python's
4,300-digit limit) ended ``import`` in a traceback; ``"٣"`` was read as position 3.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.predictions.test_id_schemes import _copy, _import, _lmms_log


@pytest.mark.parametrize("doc_id", ["²", "9" * 5_000, "٣"], ids=["super", "huge", "arabic"])
def test_a_position_of_odd_digits_is_a_row_not_joined(tmp_path: Path, doc_id: str) -> None:
    data = _copy(tmp_path, "mmvet")
    records = [
        {"doc_id": n, "target": "x", "resps": [["x"]], "filtered_resps": ["x"]} for n in (0, doc_id)
    ]
    done, joined = _import(tmp_path, _lmms_log(tmp_path, "mmvet", records), data)
    said = " ".join((done.stdout + done.stderr).split())
    assert "Traceback" not in said, said[-2000:]
    assert done.returncode == 0, said[-2000:]
    assert joined == {1: ["mmvet/v1_0"]}
    assert ": row 2: id: " in said and "is not in" in said, said[-2000:]
