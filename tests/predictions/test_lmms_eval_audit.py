"""``score --audit`` on lmms-eval's MMMU log: lmms-eval's own verdicts, from its ``parsed_pred``.

The fixture's log and ``results.json`` were written by lmms-eval 0.7.3 (see
``fixtures/lmms_eval/README.md``); its figure there is ``mmmu_acc,none`` 0.14286.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Value
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import (  # noqa: F401 (a fixture)
    own_datasets_cache,
    tiny_png,
    write_hub_snapshot,
)

from lmmprobe.predictions.imported import READERS, ReadOptions

HERE = Path(__file__).parent / "fixtures" / "lmms_eval"
LOG = HERE / "20261127_105239_samples_mmmu_local.jsonl"
RESULTS = json.loads((HERE / "20261127_105239_results.json").read_text())
FIGURE = RESULTS["results"]["mmmu_local"]["mmmu_acc,none"]

pytestmark = pytest.mark.usefixtures("own_datasets_cache")


def _mmmu(tmp_path: Path) -> str:
    """An MMMU validation copy of the documents lmms-eval ran (``mmmu_local.json``)."""
    docs = json.loads((HERE / "mmmu_local.json").read_text())
    n = len(docs)
    rows: dict[str, list[Any]] = {
        "id": [d["id"] for d in docs],
        "question": [d["question"] for d in docs],
        "options": [d["options"] for d in docs],
        "explanation": [""] * n,
        "image_1": [{"bytes": tiny_png(), "path": "1.png"}] * n,
        **{f"image_{k}": [None] * n for k in range(2, 8)},
        "img_type": ["['Paintings']"] * n,
        "answer": [d["answer"] for d in docs],
        "topic_difficulty": ["Easy"] * n,
        "question_type": [d["question_type"] for d in docs],
        "subfield": ["x"] * n,
    }
    feats = Features({k: (Image() if k.startswith("image_") else Value("string")) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "mmmu", {"validation": Dataset.from_dict(rows, features=feats)}
    )
    return f"mmmu,path={folder}"


def _score(tmp_path: Path, *more: str) -> str:
    return _score_log(tmp_path, LOG, *more)


def test_audit_gives_lmms_evals_own_figure_from_its_parsed_pred(tmp_path: Path) -> None:
    # lmms-eval's verdict is its parsed_pred against the answer (evaluate_mmmu); MMMU's own
    # script's seed-42 letters are never put under lmms-eval's name.
    audit = json.loads(_score(tmp_path, "--format", "json"))["audit"]
    assert audit["label_b"] == "lmms-eval" and audit["n"] == 7
    assert audit["accuracy_b"] == pytest.approx(FIGURE, abs=5e-6)
    assert audit["accuracy_a"] == pytest.approx(FIGURE, abs=5e-6)
    assert audit["gap_items"] == 0 and not audit["items"]
    logged = [json.loads(line)["mmmu_acc"] for line in LOG.read_text().splitlines()]
    assert [m["parsed_pred"] for m in logged][:6] == [["D"], ["D"], ["A"], ["C"], ["D"], ["D"]]


def test_audit_table_says_lmms_evals_figure(tmp_path: Path) -> None:
    out = _score(tmp_path)
    assert f"lmmprobe {100 * FIGURE:.2f} vs lmms-eval {100 * FIGURE:.2f} on 7 paired items" in out


def test_the_reader_gives_evaluate_mmmus_verdict_on_every_generated_entry(tmp_path: Path) -> None:
    # Parity: mmmu_verdicts.json holds lmms-eval's own evaluate_mmmu verdicts (README there).
    cases = json.loads((HERE / "mmmu_verdicts.json").read_text())
    log = tmp_path / "20260101_000000_samples_mmmu_val.jsonl"
    with log.open("w") as f:
        for n, case in enumerate(cases):
            metric = {k: v for k, v in case.items() if k != "verdict"} | {"subdomain": "Art"}
            record = {"doc_id": n, "target": "A", "filtered_resps": ["x"], "mmmu_acc": metric}
            f.write(json.dumps(record) + "\n")
    read = list(READERS.get("lmms-eval").read(log, ReadOptions()))
    got = [p.tool_verdict for p in read]
    assert got == [float(case["verdict"]) for case in cases]
    assert 0 < sum(got) < len(got)


# lmms-eval v0.3.0 and earlier log one parsed answer per document (a choice's letter, an open
# question's candidate list); later versions a list with one entry per response.
V030 = json.loads((HERE / "mmmu_verdicts_v030.json").read_text())
UNTELLING = [
    c for c in V030
    if c["question_type"] == "open" and all(isinstance(p, str) for p in c["parsed_pred"])
]  # fmt: skip


def _log(path: Path, cases: list[dict[str, Any]], **beside: Any) -> Path:
    with path.open("w") as f:
        for n, case in enumerate(cases):
            metric = {k: case[k] for k in ("id", "question_type", "answer", "parsed_pred")}
            record = {"doc_id": n, "target": "A", "filtered_resps": ["x"], "mmmu_acc": metric}
            f.write(json.dumps(record | {k: metric for k in beside}) + "\n")
    return path


def _verdicts(log: Path) -> list[float | None]:
    return [p.tool_verdict for p in READERS.get("lmms-eval").read(log, ReadOptions())]


def test_a_v030_log_gets_v030s_evaluate_mmmu_verdict_on_every_generated_entry(
    tmp_path: Path,
) -> None:
    # Parity: lmms-eval v0.3.0's own evaluate_mmmu (README there); its choice letters say the
    # layout, so the open entries whose lists fit both layouts are read as v0.3.0 reads them.
    got = _verdicts(_log(tmp_path / "20241001_000000_samples_mmmu_val.jsonl", V030))
    assert got == [float(c["verdict"]) for c in V030]
    assert any(c["verdict"] != c["verdict_per_response"] for c in UNTELLING)


def test_an_untelling_log_leaves_lmms_evals_verdict_unrecorded_where_the_layouts_part(
    tmp_path: Path,
) -> None:
    got = _verdicts(_log(tmp_path / "samples_mmmu_val.jsonl", UNTELLING))
    want = [float(c["verdict"]) if c["verdict"] == c["verdict_per_response"] else None
            for c in UNTELLING]  # fmt: skip
    assert got == want and None in got and 0.0 in got


def test_mmmu_acc_pass_at_k_beside_it_says_one_entry_per_response(tmp_path: Path) -> None:
    # mmmu_process_results logs it from v0.3.1 on, where each list entry is one response.
    log = _log(tmp_path / "samples_mmmu_val.jsonl", UNTELLING, mmmu_acc_pass_at_k=True)
    assert _verdicts(log) == [float(c["verdict_per_response"]) for c in UNTELLING]


def _as_v030(tmp_path: Path, keep: slice = slice(None)) -> Path:
    """The fixture log in v0.3.0's layout: each document's one parsed answer."""
    out = tmp_path / "20241001_000000_samples_mmmu_local.jsonl"
    lines = []
    for line in LOG.read_text().splitlines()[keep]:
        record = json.loads(line)
        record["mmmu_acc"]["parsed_pred"] = record["mmmu_acc"]["parsed_pred"][0]
        lines.append(json.dumps(record))
    out.write_text("\n".join(lines) + "\n")
    return out


def _score_log(tmp_path: Path, log: Path, *more: str) -> str:
    done = lmmprobe(
        "score", log, "--benchmark", _mmmu(tmp_path), "--audit", *more,
        HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "cli-datasets-cache"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_audit_of_a_v030_log_gives_lmms_evals_figure(tmp_path: Path) -> None:
    # The open answer ["yellow"] is right in v0.3.0's evaluate_mmmu (review 27b, finding 1).
    audit = json.loads(_score_log(tmp_path, _as_v030(tmp_path), "--format", "json"))["audit"]
    assert audit["n"] == 7 and audit["accuracy_b"] == pytest.approx(FIGURE, abs=5e-6)
    assert audit["gap_items"] == 0 and not audit["items"]


def test_audit_of_an_untelling_log_says_why_it_records_no_verdict(tmp_path: Path) -> None:
    # The note is prose and wraps with the terminal (and the temporary path's length).
    out = " ".join(_score_log(tmp_path, _as_v030(tmp_path, slice(6, 7))).split())
    assert "does not tell which lmms-eval wrote it" in out
    assert "left unrecorded for the 1 open answer the two readings" in out
    assert "no item has a verdict on both sides" in out
