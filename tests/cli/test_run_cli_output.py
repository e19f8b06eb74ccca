"""``lmmprobe run`` / ``show`` as a person sees them (issue 15, items 1, 3, 4, 5, 6, 9, 16).

Every test goes through the installed console script in a subprocess, as a user would, with
``COLUMNS`` set the way a terminal sets it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

from lmmprobe.testing.openai_server import FakeOpenAIServer

HAS_HF = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))


def _lmmprobe(
    *args: str | Path, columns: int = 132, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {**os.environ, "COLUMNS": str(columns), "OPENAI_API_KEY": "test-key"}
    return subprocess.run(
        [exe, *map(str, args)], capture_output=True, text=True, timeout=300, env=env, cwd=cwd
    )


def _no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "validation error" not in proc.stderr + proc.stdout  # no raw pydantic text


# --- item 1: per-model options from `run` -------------------------------------------------------


def test_model_options_after_commas_reach_the_model(tmp_path: Path) -> None:
    proc = _lmmprobe(
        "run", "-m", "random,seed=3", "-m", "first,delay=0", "-m", "random",
        "--limit", "6", "-q", "--db", tmp_path / "db", "--out", tmp_path / "o",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert list(results["models"]) == ["random,seed=3", "first,delay=0", "random"]
    assert results["manifest"]["models"]["random,seed=3"]["options"] == {"seed": 3}
    # A comma before something that is not key=value still separates two specs.
    both = _lmmprobe(
        "run", "-m", "random,seed=3,first", "--limit", "4", "-q",
        "--db", tmp_path / "db", "--out", tmp_path / "o2",
    )  # fmt: skip
    assert both.returncode == 0, both.stderr
    two = json.loads((tmp_path / "o2" / "results.json").read_text())
    assert list(two["models"]) == ["random,seed=3", "first"]


def test_bad_model_option_is_one_line(tmp_path: Path) -> None:
    proc = _lmmprobe("run", "-m", "random,colour=3", "--limit", "4", "-q", "--db", tmp_path / "db")
    assert proc.returncode == 2
    _no_traceback(proc)
    assert "colour" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


# --- item 3: a misspelt hf model -----------------------------------------------------------------


@pytest.mark.skipif(not HAS_HF, reason="the hf backend needs torch and transformers")
def test_misspelt_tiny_model_is_one_line_naming_the_aliases(tmp_path: Path) -> None:
    proc = _lmmprobe("run", "-m", "hf:tiny-lava", "--limit", "2", "-q", "--db", tmp_path / "db")
    assert proc.returncode == 2
    _no_traceback(proc)
    err = " ".join(proc.stderr.split())
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "did you mean hf:tiny-llava?" in err and "tiny-idefics3" in err
    missing = _lmmprobe("run", "-m", "hf:./no-such-folder", "-q", "--db", tmp_path / "db")
    assert missing.returncode == 2 and "no such folder" in missing.stderr
    _no_traceback(missing)


def test_model_listings_name_the_tiny_aliases() -> None:
    for args in (("list", "models"), ("models",)):
        proc = _lmmprobe(*args, columns=200)
        assert proc.returncode == 0, proc.stderr
        for alias in ("hf:tiny-llava", "hf:tiny-idefics3", "hf:tiny-paligemma", "hf:tiny-blip2"):
            assert alias in proc.stdout


# --- item 4: bad option values, --by keys no row has ---------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "allowed"),
    [
        ("--method", "likelyhood", "generate, likelihood, mark_logprob"),
        ("--marks", "Upper", "upper, lower, number, random"),
        (
            "--matcher",
            "foo",
            "dysca, hallusionbench, lmmprobe, longvideobench, mme, mme-realworld, mvbench, pope, reform, "
            "tempcompass, tempcompass-caption-matching, tempcompass-captioning, tempcompass-yes-no, "
            "videomme, vlmevalkit",
        ),
    ],
)
def test_bad_choice_names_the_allowed_values(
    tmp_path: Path, option: str, value: str, allowed: str
) -> None:
    proc = _lmmprobe("run", option, value, "-q", "--db", tmp_path / "db", columns=200)
    assert proc.returncode == 2
    _no_traceback(proc)
    assert allowed in " ".join(proc.stderr.split())


def test_by_key_no_row_has_is_warned_with_the_keys_there_are(tmp_path: Path) -> None:
    proc = _lmmprobe(
        "run", "-m", "first", "--limit", "6", "-q", "--by", "nosuchkey",
        "--db", tmp_path / "db", "--out", tmp_path / "o",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    err = " ".join(proc.stderr.split())
    assert "warning: --by nosuchkey" in err and "'nosuchkey'" in err
    assert "subtask" in err and "question_type" in err  # the demo's metadata keys


# --- item 5: the terminal shows what the run asked for ------------------------------------------


def test_terminal_shows_breakdowns_circular_and_instability(tmp_path: Path) -> None:
    proc = _lmmprobe(
        "run", "-m", "first", "-m", "random", "--limit", "8", "-q", "--by", "subtask",
        "--circular", "--repeats", "2", "--db", tmp_path / "db", "--out", tmp_path / "o",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "accuracy by subtask" in out
    for group in ("color", "count", "shape"):
        assert any(line.split()[:1] == [group] for line in out.splitlines())
    assert "circular" in out and "instability" in out
    shown = _lmmprobe("show", "latest", "--db", tmp_path / "db")
    assert shown.returncode == 0 and "accuracy by subtask" in shown.stdout


def test_caption_run_headlines_caption_scores_not_accuracy(tmp_path: Path) -> None:
    pytest.importorskip("pycocoevalcap")
    Image.new("RGB", (16, 16), (200, 30, 30)).save(tmp_path / "red.png")
    rows = [
        {"id": f"c{i}", "images": ["red.png"], "question": "Describe the image.",
         "formulation": "caption", "answer": ["a red square", "a red image"]}
        for i in range(4)
    ]  # fmt: skip
    data = tmp_path / "cap.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = _lmmprobe(
        "run", "-m", "first", "--data", data, "-q", "--db", tmp_path / "db",
        "--out", tmp_path / "o",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "CIDEr" in proc.stdout and "BLEU-4" in proc.stdout
    assert "accuracy" not in proc.stdout


def test_all_failed_model_shows_error_types_and_exits_1(tmp_path: Path) -> None:
    with FakeOpenAIServer(always="bad_request") as server:
        spec = f"openai:fake-vlm@{server.base_url}"
        proc = _lmmprobe(
            "run", "-m", spec, "-m", "first", "--limit", "4", "-q",
            "--db", tmp_path / "db", "--out", tmp_path / "o",
        )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    _no_traceback(proc)
    assert "bad_request x4: HTTP 400" in proc.stdout
    assert f"every request of {spec} failed" in " ".join(proc.stderr.split())
    assert (tmp_path / "o" / "results.json").is_file()  # written all the same
    shown = _lmmprobe("show", "latest", "--db", tmp_path / "db")
    assert shown.returncode == 0 and "bad_request x4: HTTP 400" in shown.stdout


# --- item 6: 80 columns --------------------------------------------------------------------------


def test_80_columns_fit_with_short_labels_and_a_legend(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        long_spec = f"openai:fake-vlm@{server.base_url},max_requests=500"
        proc = _lmmprobe(
            "run", "-m", long_spec, "-m", "random,seed=3", "-m", "first", "--limit", "8",
            "-q", "--circular", "--repeats", "2", "--by", "subtask",
            "--db", tmp_path / "db", "--out", tmp_path / "o", columns=80,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # Everything but the legend and the paths (which soft-wrap whole) fits in 80 columns.
    table_lines = [x for x in lines if "  fake-vlm = " not in x and str(tmp_path) not in x]
    assert all(len(x.rstrip()) <= 80 for x in table_lines), "\n".join(lines)
    assert f"  fake-vlm = {long_spec}" in lines  # the legend gives the full spec once
    rows = [x.split() for x in lines]
    # Each model's label is whole on its rows: no name folded a few letters a line.
    for label in ("fake-vlm", "random,seed=3", "first"):
        assert sum(1 for r in rows if r[:1] == [label]) >= 2
    # Every headline column is there, some in a continuation table.
    for header in ("accuracy", "balanced", "unparsed", "errors", "instability", "circular"):
        assert header in proc.stdout


# --- item 9: two runs, one --out -----------------------------------------------------------------


def test_second_run_into_a_busy_out_folder_is_refused(tmp_path: Path) -> None:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    out = tmp_path / "shared"
    slow = subprocess.Popen(
        [exe, "run", "-m", "random,delay=0.5", "--limit", "40", "-q",
         "--db", str(tmp_path / "db1"), "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        lock = out / ".lmmprobe-run.lock"
        for _ in range(600):  # until the first run holds the folder
            if lock.is_file() and lock.read_text().startswith("pid"):
                break
            assert slow.poll() is None, slow.communicate()
            time.sleep(0.1)
        second = _lmmprobe("run", "-m", "first", "--limit", "4", "-q",
                           "--db", tmp_path / "db2", "--out", out)  # fmt: skip
        assert slow.poll() is None, "the first run ended before the check; make it slower"
    finally:
        slow.kill()
        slow.communicate()
    assert second.returncode == 2
    _no_traceback(second)
    err = " ".join(second.stderr.split())
    assert f"output folder {out} is in use by another lmmprobe run (pid {slow.pid}" in err
    assert not (out / "results.json").exists()


def test_rerun_into_the_same_out_folder_says_what_it_replaced(tmp_path: Path) -> None:
    args = ("run", "-m", "first", "--limit", "4", "-q", "--db", tmp_path / "db")
    first = _lmmprobe(*args, "--out", tmp_path / "o")
    assert first.returncode == 0, first.stderr
    old = json.loads((tmp_path / "o" / "results.json").read_text())["run_id"]
    again = _lmmprobe(*args, "--out", tmp_path / "o")
    assert again.returncode == 0, again.stderr
    assert f"held the results of run {old}" in " ".join(again.stderr.split())
    assert json.loads((tmp_path / "o" / "results.json").read_text())["run_id"] != old


# --- item 16: results.md escapes the --by key ----------------------------------------------------


def test_results_md_escapes_by_keys_and_groups(tmp_path: Path) -> None:
    Image.new("RGB", (8, 8), "blue").save(tmp_path / "b.png")
    key = "a|*b*_[c](d)"
    rows = [
        {"id": str(i), "images": ["b.png"], "question": "Color?", "choices": ["red", "blue"],
         "answer": 1, "metadata": {key: f"<g{i % 2}>|x"}}
        for i in range(4)
    ]  # fmt: skip
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = _lmmprobe(
        "run", "-m", "first", "--data", data, "--by", key, "-q",
        "--db", tmp_path / "db", "--out", tmp_path / "o",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "o" / "results.md").read_text()
    escaped = r"a\|\*b\*\_\[c\](d)"
    assert f"## first by {escaped}" in md
    header = next(line for line in md.splitlines() if line.startswith(f"| {escaped} |"))
    body = next(line for line in md.splitlines() if line.startswith("| &lt;g0&gt;\\|x |"))
    # As many cells as the header: neither the key nor a group breaks the table.
    assert header.replace("\\|", "").count("|") == body.replace("\\|", "").count("|")


def test_a_run_refused_before_it_starts_leaves_no_empty_out_folder(tmp_path: Path) -> None:
    out = tmp_path / "never"
    proc = _lmmprobe(
        "run", "-m", "random", "--data", f"jsonl:{tmp_path / 'missing.jsonl'}",
        "--out", str(out), "--db", str(tmp_path / "db"),
    )  # fmt: skip
    assert proc.returncode == 2 and "data file not found" in proc.stderr
    assert not out.exists()


def test_baselines_under_likelihood_say_once_that_they_only_pretend(tmp_path: Path) -> None:
    """Issue 34 (walk2 item 11): ``--method likelihood`` with the default baselines ran silently,
    with new numbers, though likelihood is a white-box method and the baselines have no model."""
    db = tmp_path / "store.db"
    done = _lmmprobe("run", "--method", "likelihood", "--db", db, "--out", tmp_path / "lik")
    assert done.returncode == 0, done.stdout + done.stderr
    flat = " ".join(done.stdout.split())  # the note is prose, wrapped to the terminal
    assert flat.count("note: random, first are baselines with no model") == 1, done.stdout
    assert "white-box" in flat and "made up" in flat
    # Their behaviour is unchanged: the likelihood rows are still theirs and scored.
    results = json.loads((tmp_path / "lik" / "results.json").read_text())
    assert results["spec"]["formulate"]["method"] == "likelihood"
    assert results["models"]["first"]["metrics"]["accuracy"]["n"] == 120
    plain = _lmmprobe("run", "--db", db, "--out", tmp_path / "gen")
    assert plain.returncode == 0 and "are baselines with no model" not in plain.stdout


def test_the_likelihood_baselines_note_is_saved_with_the_results(tmp_path: Path) -> None:
    """Retest 3, item 7: the note was in the terminal only; results.json, results.md and
    ``report --format md`` said nothing of it, though they carry the same made-up figures."""
    db = tmp_path / "store.db"
    done = _lmmprobe("run", "--method", "likelihood", "--db", db, "--out", tmp_path / "lik")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "lik" / "results.json").read_text())
    (note,) = results["notes"]
    assert note.startswith("random, first are baselines with no model") and "made up" in note
    md = (tmp_path / "lik" / "results.md").read_text()
    assert "Note: random, first are baselines with no model" in md and "white-box" in md
    report = _lmmprobe("report", "latest", "--db", db, "--format", "md")
    assert report.returncode == 0, report.stderr
    assert f"run {results['run_id']}: random, first are baselines with no model" in report.stdout
    # A run without the note has no "notes" in its results.json.
    plain = _lmmprobe("run", "--db", db, "--out", tmp_path / "gen")
    assert plain.returncode == 0, plain.stderr
    assert "notes" not in json.loads((tmp_path / "gen" / "results.json").read_text())
    assert "Note:" not in (tmp_path / "gen" / "results.md").read_text()
