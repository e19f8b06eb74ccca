"""``lmmprobe import`` computes its results from the stored rows, with every figure as before.

The import used to compute its figures from the Scores it kept in memory, through a run outcome
made up for it; it now stores each chunk and drops it, and computes the results from the stored
rows (`lmmprobe.predictions.importing.imported_results` over `Store.rows`). Each case below
imports one of the fixtures through the console script; what it printed (``--format json``,
and the terminal's tables for some), its results.json and results.md must equal, byte for
byte once paths, run ids and times are taken out, what the import printed and wrote before the
change: ``data/import_parity.json``, written by the code before the change (run this file with
``LMMPROBE_WRITE_IMPORT_PARITY=1`` and ``PYTHONPATH`` at that code to write it again).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import own_datasets_cache  # noqa: F401 (a fixture)
from tests.predictions.test_lmms_eval_audit import LOG
from tests.predictions.test_lmms_eval_audit import _mmmu as _lmms_eval_mmmu
from tests.predictions.test_score_and_import_cli import (
    FIXTURES,
    MMB_ROWS,
    _mathvista_copy,
    _mmmu_copy,
)
from tests.predictions.test_vlmevalkit_judged import HERE as VLMEVALKIT
from tests.predictions.test_vlmevalkit_judged import VANILLA
from tests.predictions.test_vlmevalkit_judged import _bench as _mmbench_judged

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

HERE = Path(__file__).parent
GOLDEN = HERE / "data" / "import_parity.json"
WRITE = os.environ.get("LMMPROBE_WRITE_IMPORT_PARITY") == "1"


def _mmbench_xlsx(tmp_path: Path) -> tuple[Path, str]:
    """A VLMEvalKit prediction table (xlsx) of MMBench's circular copies, and the benchmark."""
    from datasets import Dataset, Features, Image, Value
    from tests.data.benchmarks.conftest import write_hub_snapshot

    feats = Features({k: Value("string") for k in MMB_ROWS if k != "image"} | {"image": Image()})
    folder = write_hub_snapshot(
        tmp_path / "mmb", {"dev": Dataset.from_dict(MMB_ROWS, features=feats)}, config="en"
    )
    table = pd.DataFrame(
        {
            "index": [int(i) for i in MMB_ROWS["index"]],
            "question": MMB_ROWS["question"],
            "A": MMB_ROWS["A"], "B": MMB_ROWS["B"], "answer": MMB_ROWS["answer"],
            "category": MMB_ROWS["category"], "l2-category": MMB_ROWS["L2-category"],
            "prediction": ["A", "B", "B", "The answer is B"],
        }
    )  # fmt: skip
    path = tmp_path / "LLaVA_MMBench_DEV_EN.xlsx"
    table.to_excel(path, index=False, engine="openpyxl")
    return path, f"mmbench,path={folder}"


def _golds_file(tmp_path: Path) -> tuple[Path, None]:
    answers = tmp_path / "answers.jsonl"
    rows = [
        {"answer": "Cat", "gt": ["cat", "kitty"]},
        {"answer": "dog", "gt": "wolf"},
        {"answer": "x", "gt": "x"},
        {"answer": "", "gt": "y"},
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return answers, None


def _textvqa_mapped(tmp_path: Path) -> tuple[Path, str]:
    """A mapped CSV of MMMU answers by id (the mapped reader joined to a benchmark)."""
    folder, replies = _mmmu_copy(tmp_path)
    path = tmp_path / "answers.csv"
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["qid", "said"])
        for tag, reply in replies.items():
            writer.writerow([f"validation_{tag}", reply])
        writer.writerow(["validation_Nowhere_1", "A"])  # not in the benchmark
    return path, f"mmmu,path={folder}"


Case = Callable[[Path], tuple[Path, str | None]]

CASES: dict[str, tuple[Case, tuple[str, ...], bool]] = {
    # name: (file and benchmark, more arguments, also the terminal's tables)
    "mmmu_groups": (
        lambda t: (FIXTURES / "mmmu" / "llava1.5_13b", f"mmmu,path={_mmmu_copy(t)[0]}"),
        (),
        True,
    ),
    "mathvista_recorded": (
        lambda t: (
            FIXTURES / "mathvista" / "output_bard.json",
            f"mathvista,path={_mathvista_copy(t)[0]}",
        ),
        (),
        True,
    ),
    "vlmevalkit_xlsx_circular": (_mmbench_xlsx, (), False),
    "vlmevalkit_judged_by": (
        lambda t: (VLMEVALKIT / VANILLA, _mmbench_judged(t)),
        ("--by", "category", "--by", "l2-category"),
        True,
    ),
    "lmms_eval": (lambda t: (LOG, _lmms_eval_mmmu(t)), (), False),
    "mapped_golds": (_golds_file, ("--field", "prediction=answer,gold=gt"), True),
    "mapped_benchmark_by": (
        _textvqa_mapped,
        ("--field", "id=qid,prediction=said", "--by", "question_type"),
        False,
    ),
}


def _normal(text: str, tmp_path: Path, run_id: str) -> str:
    text = text.replace(str(tmp_path), "<tmp>").replace(run_id, "<run>")
    # The fixtures' folder is wherever this checkout is (a clone, a worktree, CI's).
    text = text.replace(str(HERE), "<tests>")
    # A table written here (xlsx) holds the moment it was written, hence its hash.
    for made in tmp_path.glob("*.xlsx"):
        sha = hashlib.sha256(made.read_bytes()).hexdigest()
        text = text.replace(sha, "<sha256>").replace(sha[:12], "<sha256>")
    # Times and the machine's versions are the moment's, not the figures'.
    text = re.sub(r"git commit [0-9a-f]{40}(\+dirty)?", "git commit <commit>", text)
    return re.sub(r'"(finished_at|created_at|started_at)": "[^"]*"', r'"\1": "<time>"', text)


def _volatile(doc: Any) -> Any:
    """`doc` without the manifest's record of the moment and machine (time, versions, host)."""
    if isinstance(doc, dict):
        return {
            k: _volatile(v)
            for k, v in doc.items()
            if k not in {"finished_at", "created_at", "git_commit", "platform"}
        }
    if isinstance(doc, list):
        return [_volatile(v) for v in doc]
    return doc


def _import(tmp_path: Path, name: str) -> dict[str, Any]:
    make, more, table = CASES[name]
    source, benchmark = make(tmp_path)
    db = tmp_path / "store.db"
    env = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "cli-datasets-cache")}
    head = ["import", source, *(("--benchmark", benchmark) if benchmark else ()), "--db", db]
    done = lmmprobe(*head, "--model", "m", *more, "--format", "json", **env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    run_id = doc["run_id"]
    (out,) = [p for p in tmp_path.iterdir() if p.name == run_id]
    got: dict[str, Any] = {
        "json": _volatile(json.loads(_normal(done.stdout, tmp_path, run_id))),
        "results": _volatile(
            json.loads(_normal((out / "results.json").read_text(), tmp_path, run_id))
        ),
        "md": _normal((out / "results.md").read_text(), tmp_path, run_id).splitlines(),
    }
    if table:
        shown = lmmprobe(*head, "--model", "t", *more, **env)
        assert shown.returncode == 0, shown.stderr
        lines = _normal(shown.stdout, tmp_path, run_id).splitlines()
        got["table"] = [line for line in lines if not line.startswith("stored as run")]
    return got


@pytest.mark.parametrize("name", list(CASES))
def test_import_results_equal_the_in_memory_computations(tmp_path: Path, name: str) -> None:
    got = _import(tmp_path, name)
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.is_file() else {}
    if WRITE:
        golden[name] = got
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        return
    # The golden's own record of its machine is left out the same way (a kernel update changed
    # the platform string and failed every case).
    assert got == _volatile(golden[name])
