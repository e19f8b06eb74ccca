"""The runner-overhead benchmarks: the reference loop, and the lmms-eval comparison's inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks._reference_loop import reference_loop
from benchmarks.vs_lmms_eval import lmmprobe_command, write_lmms_inputs, write_questions

ROOT = Path(__file__).resolve().parents[2]


def test_reference_loop_counts_and_writes_every_sample(tmp_path: Path) -> None:
    # The instant model answers "A": right exactly where the first option is the answer.
    questions = [
        ("a", "Q1?", ["x", "y"], 0),
        ("b", "Q2?", ["x", "y", "z"], 2),
        ("c", "Q3?", ["x"], 0),
    ]
    accuracy, per_s = reference_loop(questions, tmp_path / "out.jsonl")
    assert accuracy == 2 / 3 and per_s > 0
    lines = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(x["id"], x["prediction"], x["correct"]) for x in lines] == [
        ("a", 0, True), ("b", 0, False), ("c", 0, True)
    ]  # fmt: skip


def test_the_compared_questions_are_what_lmmprobe_runs(tmp_path: Path) -> None:
    # Both tools read one file; lmmprobe must take every row as a four-option question, and
    # the task lmms-eval reads must name that file.
    data = tmp_path / "questions.jsonl"
    write_questions(data, 50)
    cmd = lmmprobe_command(data, tmp_path / "s.db", tmp_path / "out")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "50 requests, 0 from the store, 50 sent, 0 errors" in done.stdout
    for row in map(json.loads, data.read_text().splitlines()):
        a, b = row["question"].removeprefix("What is ").removesuffix("?").split(" + ")
        assert len(row["choices"]) == 4 and row["choices"][row["answer"]] == str(int(a) + int(b))
    tasks, plugin = write_lmms_inputs(tmp_path, data)
    assert str(data) in (tasks / "probe_mc" / "probe_mc.yaml").read_text()
    assert (plugin / "probe_instant" / "models" / "instant.py").is_file()


def test_comparison_skips_with_a_message_without_lmms_eval(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "vs_lmms_eval.py"), "--venv", str(tmp_path / "none")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("skipped: lmms-eval 0.7.3 is not installed in")


def test_the_compared_questions_with_images_each_carry_their_own_png(tmp_path: Path) -> None:
    # `--images`: every question names its own readable PNG, lmmprobe runs them all, and
    # lmms-eval's task module (a template filled with the data folder) is valid Python that
    # finds the same files.
    data = tmp_path / "questions.jsonl"
    write_questions(data, 20, images=True)
    rows = [json.loads(x) for x in data.read_text().splitlines()]
    names = [row["images"] for row in rows]
    assert all(len(n) == 1 and (tmp_path / n[0]).is_file() for n in names)
    assert len({n[0] for n in names}) == 20
    cmd = lmmprobe_command(data, tmp_path / "s.db", tmp_path / "out")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "20 requests, 0 from the store, 20 sent, 0 errors" in done.stdout
    tasks, _ = write_lmms_inputs(tmp_path, data)
    utils = (tasks / "probe_mc" / "utils.py").read_text()
    namespace: dict[str, object] = {}
    exec(compile(utils, "utils.py", "exec"), namespace)
    visual = namespace["doc_to_visual"]
    assert callable(visual)
    assert [im.size for im in visual(rows[0])] == [(16, 16)]


def test_profile_option_prints_both_runs_top_entries_without_lmms_eval(tmp_path: Path) -> None:
    # `--profile N` profiles lmmprobe alone (no lmms-eval needed): the first run and the cached
    # re-run, each a table of lmmprobe's own functions (imports left out).
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "vs_lmms_eval.py"), "--profile", "5",
         "--images", "--top", "4", "--venv", str(tmp_path / "none")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    heads = [line for line in done.stdout.splitlines() if line.startswith("profile, ")]
    assert [h.split(",")[1].strip() for h in heads] == ["first run", "cached re-run"]
    entries = [line for line in done.stdout.splitlines() if line.startswith("  ")]
    assert len(entries) == 8 and not any("<module>" in e for e in entries)
    assert all(e.split()[0].endswith("%") and e.split()[2] == "s" for e in entries)


def test_old_against_new_gives_cpu_a_question_saved_share_and_load(tmp_path: Path) -> None:
    # `--old-src` with `--no-lmms-eval`: both sides run each round (which goes first takes
    # turns), and the last line names CPU ms a question, the share saved and the load average.
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "vs_lmms_eval.py"), "--sizes", "12",
         "--rounds", "2", "--no-lmms-eval", "--old-src", str(ROOT / "src")],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rounds = [line for line in done.stdout.splitlines() if line.startswith("12 questions, round")]
    assert len(rounds) == 2 and all("(load average " in line for line in rounds)
    figures = dict(pair.split("=") for pair in done.stdout.splitlines()[-1].split())
    for name in ("new_cpu_ms_per_row_first_12", "old_cpu_ms_per_row_first_min_12",
                 "cpu_first_saved_pct_12", "load_min", "load_max"):  # fmt: skip
        float(figures[name])
    assert "first run CPU saved by new, per round: " in done.stdout
