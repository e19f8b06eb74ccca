"""What a researcher new to lmmprobe meets on the README's path (re-test 20b, issue 34 part B).

Each test is one reproduction from the re-test, run through the real console script.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.console import as_from_a_shell, lmmprobe, lmmprobe_with_key

from lmmprobe.testing.openai_server import FakeOpenAIServer


def test_a_folder_given_as_data_says_how_to_read_it(tmp_path: Path) -> None:
    # `make demo` writes lmmprobe-runs/synth-demo; a new user passes that folder as --data.
    # It was "unknown data source 'lmmprobe-runs/synth-demo'", as if the path were wrong.
    synthetic = tmp_path / "synth-demo"
    synthetic.mkdir()
    (synthetic / "samples.jsonl").write_text("")
    (synthetic / "manifest.json").write_text("{}")
    plain = tmp_path / "photos"
    plain.mkdir()

    shown = lmmprobe("run", "--data", synthetic, "--dry-run", timeout=120)
    assert shown.returncode == 2
    assert "unknown data source" not in shown.stderr
    assert f"read it with --data synth:{synthetic}" in shown.stderr

    shown = lmmprobe("run", "--data", plain, "--dry-run", timeout=120)
    assert shown.returncode == 2
    assert "unknown data source" not in shown.stderr
    assert f"{plain} is a folder" in shown.stderr
    assert f"imagefolder:{plain}" in shown.stderr
    assert len(shown.stderr.strip().splitlines()) == 1

    # A name that is no folder is still an unknown source, with its close matches.
    shown = lmmprobe("run", "--data", "mmbnech", "--dry-run", timeout=120)
    assert shown.returncode == 2
    assert "unknown data source 'mmbnech'; did you mean mmbench" in shown.stderr


def test_a_misspelt_registry_name_is_named_with_the_one_meant(tmp_path: Path) -> None:
    # `-m randm` listed the backends without the one meant, while `--data mmbnech` said
    # "did you mean mmbench?": every registry's typo now gets the close names.
    cases = [
        (["run", "-m", "randm"], "unknown model backend 'randm'; did you mean random? known:"),
        (["run", "--matcher", "refrom"], "unknown matcher 'refrom'; did you mean reform? known:"),
        (["run", "--prompt-style", "Dysca"], "'Dysca'; did you mean dysca? known:"),
        (["list", "matcher"], "unknown registry 'matcher'; did you mean matchers? known:"),
    ]
    for args, expected in cases:
        shown = (
            lmmprobe(*args, "--db", tmp_path / "s.db", timeout=120)
            if args[0] == "run"
            else lmmprobe(*args, timeout=120)
        )
        assert shown.returncode == 2, args
        assert expected in shown.stderr, (args, shown.stderr)
    # A name close to nothing gets no guess.
    shown = lmmprobe("run", "-m", "zzqx", "--db", tmp_path / "s.db", timeout=120)
    assert "unknown model backend 'zzqx'; known:" in shown.stderr


def test_ctrl_c_mid_run_says_what_was_kept_and_the_rerun_resumes(tmp_path: Path) -> None:
    # Ctrl-C during a run ended it with status 130 and not a word (typer's silent Exit), so a
    # new user could not tell whether the answers paid for were lost.
    db = tmp_path / "s.db"
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    with FakeOpenAIServer(latency=1.0) as server:
        args = ["run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "demo,n=200"]
        args += ["--db", str(db), "-q"]
        proc = subprocess.Popen(
            [exe, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=as_from_a_shell,
            env={**os.environ, "OPENAI_API_KEY": "test-key", "COLUMNS": "160"},
        )
        try:
            deadline = time.monotonic() + 120
            while server.completed < 20 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert server.completed >= 20, "no answer arrived"
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 130, err
        found = re.search(r"interrupted: run (\d{8}-\d{6}-[0-9a-f]{6}) is marked interrupted", err)
        assert found, err
        assert "the same command resumes" in err
        assert "Traceback" not in err
        # Its export was empty and, to stdout, said nothing: it says why now.
        exported = lmmprobe("export", found.group(1), "--db", db, timeout=120)
        assert exported.returncode == 0, exported.stderr
        assert exported.stdout == ""
        assert f"run {found.group(1)} (interrupted) holds no scored rows" in exported.stderr
        assert "run its command again" in exported.stderr
        again = lmmprobe_with_key(*args, timeout=240)
    assert again.returncode == 0, again.stderr
    kept = re.search(r"fake-vlm: 200 requests, (\d+) from the store", again.stdout)
    assert kept and int(kept.group(1)) > 0, again.stdout


def _page_data(page: str) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" id="lmmprobe-data">(.*?)</script>', page, re.S
    )
    assert found
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_a_models_bars_wear_its_swatch_colour_whichever_run_is_given_first(
    tmp_path: Path,
) -> None:
    # README: run with images, run --blind, then `report RUN_A RUN_B`. Given the blind run
    # first (`runs` lists newest first), the dimension bars of "M1 random blind" wore M1's
    # swatch colour and "M1 random" (with images) another: read against the model table, the
    # blind bars passed for the model's own.
    db = tmp_path / "s.db"
    common = ["-m", "random", "-m", "first", "--data", "demo,n=24", "-q", "--db", db]
    with_images = lmmprobe("run", *common, "--out", tmp_path / "img", timeout=240)
    assert with_images.returncode == 0, with_images.stderr
    blind = lmmprobe("run", *common, "--blind", "--out", tmp_path / "blind", timeout=240)
    assert blind.returncode == 0, blind.stderr
    runs = [
        json.loads((tmp_path / f / "results.json").read_text())["run_id"] for f in ("blind", "img")
    ]
    page_file = tmp_path / "r.html"
    shown = lmmprobe("report", *runs, "--db", db, "-o", page_file, timeout=300)
    assert shown.returncode == 0, shown.stderr
    page = page_file.read_text(encoding="utf-8")
    swatch = {
        name: colour
        for colour, name in re.findall(
            r'<span class="swatch" style="background:(#[0-9a-f]{6})"></span>(M\d [^<]+)<', page
        )
    }
    assert set(swatch) == {"M1 random", "M2 first"}, swatch
    bars: dict[str, str] = {}
    for fig_id, fig in _page_data(page)["figures"].items():
        if fig_id.startswith("fig-dim"):
            for trace in fig["data"]:
                bars[trace["name"]] = trace["marker"]["color"]
    assert bars, "no dimension chart"
    for name, colour in swatch.items():
        assert bars[name] == colour, (name, bars)
        assert bars[f"{name} blind"] != colour, (name, bars)


def test_the_dysca_recipe_without_a_renderer_names_the_offline_way_to_try_it(
    tmp_path: Path,
) -> None:
    # `synth generate --recipe dysca` alone said to pass --diffusion-model PATH_OR_ID (SDXL,
    # about 7 GB), not the tiny pipeline the README offers to try the recipe offline.
    shown = lmmprobe("synth", "generate", "--recipe", "dysca", "--n", "1", "--out", tmp_path / "d")
    assert shown.returncode == 2
    assert "--renderer diffusion --diffusion-model PATH_OR_ID" in shown.stderr
    assert "--diffusion-model tiny" in shown.stderr
    assert not (tmp_path / "d").exists()


def test_an_import_refused_before_any_row_joins_records_no_run(tmp_path: Path) -> None:
    # `import FILE --benchmark mathvsta` (a typo) and `import empty.jsonl` are bad input, one
    # line and exit 2, yet each left a `failed` run with no rows: `latest` then named it, so
    # `export latest` printed nothing and `judge latest` judged an empty run.
    db = tmp_path / "s.db"
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"pid": "1", "response": "A"}) + "\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    typo = lmmprobe("import", answers, "--benchmark", "mathvsta", "--db", db, timeout=120)
    assert typo.returncode == 2
    assert "unknown data source 'mathvsta'; did you mean mathvista" in typo.stderr
    nothing = lmmprobe("import", empty, "--db", db, timeout=120)
    assert nothing.returncode == 2
    assert "the file is empty" in nothing.stderr
    listed = lmmprobe("runs", "--db", db, "--format", "json", timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []


def test_the_results_path_a_run_prints_names_that_run(tmp_path: Path) -> None:
    # A run ends "results: lmmprobe-runs/RUN_ID/results.json"; given that path (or the folder,
    # or an --out folder), show, export, compare and judge said "no run '...'".
    db = tmp_path / "s.db"
    done = lmmprobe("run", "--data", "demo,n=10", "-q", "--db", db, timeout=240)
    assert done.returncode == 0, done.stderr
    printed = re.search(r"results: (\S+results\.json)", done.stdout)
    assert printed, done.stdout
    run_id = Path(printed.group(1)).parent.name
    other = lmmprobe(
        "run", "--data", "demo,n=12", "-q", "--db", db, "--out", tmp_path / "mine", timeout=240
    )
    assert other.returncode == 0, other.stderr
    for ref in (printed.group(1), str(Path(printed.group(1)).parent)):
        shown = lmmprobe("show", ref, "--db", db, timeout=120)
        assert shown.returncode == 0, shown.stderr
        assert f"run {run_id} (complete)" in shown.stdout
    exported = lmmprobe("export", tmp_path / "mine", "--db", db, timeout=120)
    assert exported.returncode == 0, exported.stderr
    assert len(exported.stdout.splitlines()) == 24  # two models x 12 samples: the --out run
    compared = lmmprobe(
        "compare", f"{printed.group(1)}", "-m", "random", "-m", "first", "--db", db, timeout=120
    )
    assert compared.returncode == 0, compared.stderr
    # A path naming no run is still "no run".
    missing = lmmprobe("show", tmp_path / "nowhere", "--db", db, timeout=120)
    assert missing.returncode == 2
    assert "no run" in missing.stderr


def test_a_fetch_command_names_the_hf_installed_beside_lmmprobe(tmp_path: Path) -> None:
    # Before the virtual environment is activated (`.venv/bin/lmmprobe data show mmbench`),
    # the printed fetch command `hf download ...` failed with "hf: command not found": `make`
    # installs `hf` (and `gdown`) into .venv/bin, which is not on $PATH yet. lmmprobe's own
    # hints already named the path it was started by.
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "hf").is_file() or not (bin_dir / "gdown").is_file():
        pytest.skip("hf and gdown are not installed beside this Python")
    bare = "/usr/bin:/bin"  # lmmprobe, hf and gdown not on it: a shell before activation
    for name, tool in (("mmbench", "hf"), ("dysca", "gdown")):
        shown = lmmprobe("data", "show", name, PATH=bare, timeout=120)
        assert shown.returncode == 0, shown.stderr
        fetch = shown.stdout.split("fetch:", 1)[1]
        assert f"{bin_dir / tool} " in fetch, fetch
        assert f" {tool} " not in fetch.replace(f"{bin_dir / tool} ", ""), fetch
    # The same hint in an error, once the environment is activated, is the bare tool name.
    shown = lmmprobe("data", "show", "mmbench", PATH=f"{bin_dir}:{bare}", timeout=120)
    assert "\n  hf download lmms-lab/MMBench" in shown.stdout, shown.stdout


def test_an_empty_free_form_answer_is_empty_on_serves_sample_page(tmp_path: Path) -> None:
    # The run page counts the baselines' empty descriptions as "empty" (the README: "counted
    # `empty`, not unparsed"), the report's browser says "empty", but serve's sample page gave
    # their stage as "unparsed".
    from tests.serve.conftest import client

    db = tmp_path / "s.db"
    done = lmmprobe("run", "--data", "synth,n=2,tasks=color", "-q", "--db", db, timeout=240)
    assert done.returncode == 0, done.stderr
    run_id = json.loads(lmmprobe("runs", "--db", db, "-f", "json").stdout)[0]["id"]
    with client(db) as c:
        listing = c.get(f"/runs/{run_id}/samples", params={"text": "-ff@"})
        assert listing.status_code == 200
        found = re.search(rf'href="/runs/{run_id}/samples/([^"]*-ff[^"]*)"', listing.text)
        assert found, listing.text[-2000:]
        page = c.get(f"/runs/{run_id}/samples/{found.group(1)}")
    assert page.status_code == 200
    stages = re.findall(r"<dt>Stage</dt><dd>([^<]*?)</dd>", page.text)
    assert stages and set(stages) == {"empty"}, stages


def test_a_frame_sweep_breaks_down_in_the_order_of_its_frame_counts(tmp_path: Path) -> None:
    # README: `synth generate --video`, then `run --data synth:DIR --frames 8,16`. The table
    # "accuracy by frame_policy" listed frames=16 before frames=8 (text order): with
    # `--frames 8,16,32` the curve read 16, 32, 8.
    folder = tmp_path / "v"
    made = lmmprobe(
        "synth", "generate", "--video", "--n", "2", "--size", "64", "--out", folder, timeout=300
    )
    assert made.returncode == 0, made.stderr
    done = lmmprobe(
        "run", "-m", "first", "--data", f"synth:{folder}", "--frames", "8,16,32", "-q",
        "--db", tmp_path / "s.db", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    table = done.stdout.split("accuracy by frame_policy", 1)[1]
    shown = re.findall(r"^\s*(frames=\d+)\s", table, re.M)
    assert shown == ["frames=8", "frames=16", "frames=32"], table


def test_a_dry_run_says_when_its_max_cost_is_less_than_the_completions_may_cost(
    tmp_path: Path,
) -> None:
    # README: `--dry-run` and `--max-cost` are the two safeguards for paid runs. Given both,
    # the dry run printed what the completions may cost ($0.0160) and not that the budget
    # ($0.001) is less: the real run then stopped part-way with exit 3, unforeseen.
    spec = "openai:m@http://127.0.0.1:9/v1,price=2.5:10"  # never asked: a dry run sends nothing
    args = ["run", "-m", spec, "--data", "demo,n=50", "--dry-run", "--db", tmp_path / "s.db"]
    low = lmmprobe(*args, "--max-cost", "0.001", timeout=120)
    assert low.returncode == 0, low.stderr
    assert "--max-cost $0.001 is less than these completions may cost" in low.stdout
    assert "exit 3" in low.stdout
    enough = lmmprobe(*args, "--max-cost", "5", timeout=120)
    assert enough.returncode == 0, enough.stderr
    assert "--max-cost" not in enough.stdout


def test_synth_show_names_the_pipeline_that_drew_the_images(tmp_path: Path) -> None:
    # README: "--diffusion-model tiny ... its images are noise". `synth show` of that set said
    # "recipe dysca, renderer diffusion", as it does for a set SDXL drew: nothing told a
    # reader that its pictures are noise. Nor did it name the set's scenarios.
    folder = tmp_path / "dysca-try"
    made = lmmprobe(
        "synth", "generate", "--recipe", "dysca", "--renderer", "diffusion",
        "--diffusion-model", "tiny", "--n", "1", "--tasks", "animal", "--out", folder,
        timeout=600,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    shown = lmmprobe("synth", "show", folder, timeout=120)
    assert shown.returncode == 0, shown.stderr
    first = " ".join(shown.stdout.split("by subtask", 1)[0].split())
    assert "renderer diffusion (tiny: random weights, noise images)" in first, first
    assert "scenarios clean" in first, first
    # Its filters as words, not a Python dict's repr.
    assert "filter dysca_postprocess: reference Benchmark-Dysca/Dysca@" in shown.stdout
    assert "{'" not in shown.stdout, shown.stdout


def test_importing_an_lmmprobe_export_is_refused_not_scored_as_another_tools_file(
    tmp_path: Path,
) -> None:
    # `export RUN -o run.jsonl` then `import run.jsonl --model mine`: sniffed as the mapped
    # reader, the option indices were read as answer texts, both models' rows merged under
    # "mine" with ids row-1..., and a meaningless accuracy stored as a complete run.
    db = tmp_path / "s.db"
    done = lmmprobe("run", "--data", "demo,n=6", "-q", "--db", db, timeout=240)
    assert done.returncode == 0, done.stderr
    rows = tmp_path / "run.jsonl"
    exported = lmmprobe("export", "latest", "--db", db, "-o", rows, timeout=120)
    assert exported.returncode == 0, exported.stderr
    imported = lmmprobe("import", rows, "--model", "mine", "--db", db, timeout=120)
    assert imported.returncode == 2
    assert "holds rows of `" in imported.stderr and "score FILE" in imported.stderr
    listed = json.loads(lmmprobe("runs", "--db", db, "-f", "json").stdout)
    assert [r["models"] for r in listed] == [["random", "first"]], listed
    scored = lmmprobe("score", rows, timeout=120)  # what the refusal points to works
    assert scored.returncode == 0, scored.stderr
    assert "lmmprobe-export" in scored.stdout


def test_comparing_runs_of_other_data_says_why_in_words(tmp_path: Path) -> None:
    # `compare RUN_A RUN_B -m random` on runs of different data: "share no answer scored right
    # or wrong (6 only_a, 8 only_b)", the counts' code names, where the table says "only in A".
    db = tmp_path / "s.db"
    for n in ("6", "8"):
        done = lmmprobe("run", "-m", "random", "--data", f"demo,n={n},seed={n}", "-q", "--db", db)
        assert done.returncode == 0, done.stderr
    ids = [r["id"] for r in json.loads(lmmprobe("runs", "--db", db, "-f", "json").stdout)]
    shown = lmmprobe("compare", *ids, "-m", "random", "--db", db, timeout=120)
    assert shown.returncode == 2
    assert "only_a" not in shown.stderr and "only_b" not in shown.stderr
    assert re.search(r"\d+ only in A, \d+ only in B", shown.stderr), shown.stderr


def test_a_csv_given_as_data_names_the_source_that_reads_it(tmp_path: Path) -> None:
    # `--data my.csv` (or .json, .parquet) is read as JSON Lines, as any existing file is:
    # every row was "invalid JSON", with no word that `hf:my.csv` reads a CSV file.
    table = tmp_path / "my.csv"
    table.write_text("id,question,answer\nq1,What is it?,a cat\n")
    shown = lmmprobe("run", "--data", table, "--dry-run", "--db", tmp_path / "s.db")
    assert shown.returncode == 2
    assert "invalid JSON" in shown.stderr
    assert f"a CSV file is read with --data hf:{table}" in shown.stderr
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([{"id": "q1", "question": "What?", "answer": ["x"]}]))
    shown = lmmprobe("run", "--data", rows, "--dry-run", "--db", tmp_path / "s.db")
    assert f"--data hf:{rows} (or reform:{rows}" in shown.stderr


def test_a_second_campaign_in_the_same_out_keeps_the_first_ones_report(tmp_path: Path) -> None:
    # README: `apex "Can models identify rotated images?" -m hf:tiny-llava -m random --out
    # apex-rot/`, whose report.json a replay reads. The same command with other models and the
    # same --out replaced report.json and report.md without a word: the first campaign's
    # record was gone.
    out = tmp_path / "apex-rot"
    small = ["--max-experiments", "1", "--images-per-answer", "2", "--bootstrap", "10", "-q"]
    question = "Can models identify rotated images?"
    first = lmmprobe("apex", question, "-m", "first", "--out", out, *small, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "note:" not in first.stdout
    second = lmmprobe("apex", question, "-m", "random", "--out", out, *small, timeout=300)
    assert second.returncode == 0, second.stderr
    assert "held an earlier campaign's report; it is kept as report.previous.json" in " ".join(
        second.stdout.split()
    )
    assert json.loads((out / "report.previous.json").read_text())["models"] == ["first"]
    assert json.loads((out / "report.json").read_text())["models"] == ["random"]
    assert "first" in (out / "report.previous.md").read_text()


def test_a_misspelt_field_of_a_data_row_is_named_before_the_field_it_misses(
    tmp_path: Path,
) -> None:
    # `"image": "cat.png"` (the README's field is `images`, a list) said only "images: missing
    # required field"; `formulaton` beside `images` was named, `image` was not.
    data = tmp_path / "my.jsonl"
    row = {"id": "q1", "image": "cat.png", "question": "What?", "choices": ["a", "b"], "answer": 1}
    data.write_text(json.dumps(row) + "\n")
    shown = lmmprobe("run", "--data", data, "--dry-run", "--db", tmp_path / "s.db")
    assert shown.returncode == 2
    assert "my.jsonl:1: image: unknown field (did you mean 'images'? known:" in shown.stderr


def test_a_run_stopped_by_an_unreachable_server_says_how_to_resume_once(tmp_path: Path) -> None:
    # A dead port: "... then re-run to resume (run X, status stopped_unreachable); the same
    # command resumes it": the advice twice in one line (re-test 20b #4).
    shown = lmmprobe_with_key(
        "run", "-m", "openai:m@http://127.0.0.1:9/v1", "--data", "demo,n=4", "-q",
        "--db", tmp_path / "s.db", timeout=240,
    )  # fmt: skip
    assert shown.returncode == 1, shown.stderr
    line = next(x for x in shown.stderr.splitlines() if x.startswith("error:"))
    assert "status stopped_unreachable); the same command resumes it" in line, line
    assert line.count("resume") == 1, line


def test_an_empty_free_form_answer_is_settled_without_paying_a_judge(tmp_path: Path) -> None:
    # `lmmprobe judge RUN --judge SPEC` on the baselines' run paid a judge call for every
    # empty free-form answer (a judge has nothing to read in it), and its dry run counted
    # each model's calls apart: 52 where 26 were sent (the second model's from the store),
    # without "at most" (re-test 20b #1).
    db = tmp_path / "s.db"
    done = lmmprobe("run", "--data", "synth,n=4,tasks=color", "-q", "--db", db, timeout=240)
    assert done.returncode == 0, done.stderr
    with FakeOpenAIServer() as server:
        judge = ["judge", "latest", "--judge", f"openai:fake-vlm@{server.base_url}", "--db", db]
        dry = lmmprobe_with_key(*judge, "--dry-run", timeout=120)
        assert dry.returncode == 0, dry.stderr
        assert "dry run: 0 judge call(s) would be sent" in dry.stdout, dry.stdout
        judged = lmmprobe_with_key(*judge, "-q", "--out", tmp_path / "j", timeout=240)
        assert judged.returncode == 0, judged.stderr
        assert server.requests_total == 0
    assert "12 by rule (4 empty, settled without a judge)" in judged.stdout, judged.stdout
    results = json.loads((tmp_path / "j" / "results.json").read_text())
    for model in ("random", "first"):
        recorded = results["models"][model]["judge"]
        assert recorded["settled"] == 4, recorded
        assert recorded["decided"] == {"rule": 12, "judge": 0, "unjudged": 0}, recorded


def test_a_judge_dry_run_counts_a_prompt_two_models_share_once(tmp_path: Path) -> None:
    # Answers of two models that make the same judge prompt are asked once (the second
    # model's verdict comes from the store): the dry run counted them once per model.
    db = tmp_path / "s.db"
    done = lmmprobe("run", "--data", "demo,n=20", "-q", "--db", db, timeout=240)
    assert done.returncode == 0, done.stderr
    with FakeOpenAIServer(reply_table=[("model_answer", "A")]) as server:
        judge = ["judge", "latest", "--judge", f"openai:fake-vlm@{server.base_url}", "--db", db]
        judge += ["--judge-when", "always"]
        dry = lmmprobe_with_key(*judge, "--dry-run", timeout=120)
        assert dry.returncode == 0, dry.stderr
        counted = re.search(r"dry run: (\d+) judge call\(s\) would be sent", dry.stdout)
        assert counted, dry.stdout
        judged = lmmprobe_with_key(*judge, "-q", "--out", tmp_path / "j", timeout=240)
        assert judged.returncode == 0, judged.stderr
        assert int(counted.group(1)) == server.requests_total < 40, dry.stdout


def _interrupted(args: list[str | Path], ready: Any, timeout: float = 240) -> str:
    """Start `lmmprobe ARGS`, send Ctrl-C once `ready(pid)` holds; its stderr (exit 130)."""
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    proc = subprocess.Popen(
        [exe, *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_from_a_shell,
        env={**os.environ, "COLUMNS": "160"},
    )
    try:
        deadline = time.monotonic() + timeout
        while not ready(proc.pid) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1]
            time.sleep(0.1)
        assert proc.poll() is None, "it ended before Ctrl-C"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    return err


def _in_its_command(pid: int) -> bool:
    # numpy is imported by no command's start-up (tests/cli/test_startup_imports.py), only by
    # what a command's body runs; a second on, the command is at work.
    try:
        mapped = "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False
    if mapped and not hasattr(_in_its_command, "since"):
        _in_its_command.since = time.monotonic()  # type: ignore[attr-defined]
    since = getattr(_in_its_command, "since", None)
    if since is not None and time.monotonic() - since >= 1.0:
        del _in_its_command.since  # type: ignore[attr-defined]
        return True
    return False


def _holds_a_run(db: Path) -> bool:
    import sqlite3

    if not db.exists():
        return False
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1) as conn:
            return bool(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
    except sqlite3.Error:
        return False


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/PID/maps")
def test_ctrl_c_in_generate_import_score_report_and_apex_says_what_is_kept(
    tmp_path: Path,
) -> None:
    # run and judge said what Ctrl-C kept and how to go on; synth generate, import, score,
    # report and apex ended with status 130 and not a word (re-test 20b #5).
    out = tmp_path / "set"
    err = _interrupted(
        ["synth", "generate", "--n", "5000", "--size", "64", "--out", out],
        lambda pid: any(p.name.startswith(".") for p in tmp_path.iterdir()),
    )
    assert f"interrupted: nothing was written: {out} is as it was" in err, err
    assert "the same command generates the set again" in err
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]

    answers = tmp_path / "a.jsonl"
    rows = ({"id": f"q{i}", "answer": "x" if i % 3 else "y", "gt": "x"} for i in range(20_000))
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    fields = ["--field", "id=id,prediction=answer,gold=gt"]
    db = tmp_path / "s.db"
    err = _interrupted(
        ["import", answers, *fields, "--model", "m", "--db", db], lambda pid: _holds_a_run(db)
    )
    found = re.search(r"interrupted: run (\S+) is marked interrupted: it holds the rows", err)
    assert found, err
    assert "the same command imports the file again as a new run" in err
    listed = json.loads(lmmprobe("runs", "--db", db, "-f", "json").stdout)
    assert [(r["id"], r["status"]) for r in listed] == [(found.group(1), "interrupted")]

    err = _interrupted(["score", answers, *fields], _in_its_command)
    assert "interrupted: score writes nothing" in err, err

    done = lmmprobe("import", answers, *fields, "--model", "m2", "--db", db, timeout=300)
    assert done.returncode == 0, done.stderr
    page = tmp_path / "r.html"
    page.write_text("earlier")
    err = _interrupted(["report", "latest", "--db", db, "-o", page], _in_its_command)
    assert "interrupted: no report was written (a file already at its path is as it" in err
    assert page.read_text() == "earlier"

    apex_db = tmp_path / "apex.db"
    err = _interrupted(
        ["apex", "Can models identify rotated images?", "-m", "first", "--out", tmp_path / "x",
         "--db", apex_db, "-q"],
        lambda pid: _holds_a_run(apex_db),
    )  # fmt: skip
    assert "interrupted: the campaign stopped before its report was written" in err, err
    assert "the same command runs the campaign again" in err


def test_the_frame_spread_has_its_interval_and_small_groups_are_marked(tmp_path: Path) -> None:
    # README's frame sweep: the terminal's "frame spread" column had no interval (the curve's
    # one figure, read as exact); and every group of two rows showed [0.00, 0.00], a
    # zero-width interval with no warning (re-test 20b #2, #7).
    folder = tmp_path / "v"
    made = lmmprobe(
        "synth", "generate", "--video", "--n", "2", "--size", "64", "--out", folder, timeout=300
    )
    assert made.returncode == 0, made.stderr
    done = lmmprobe(
        "run", "-m", "first", "--data", f"synth:{folder}", "--frames", "8,16", "--by",
        "subtask", "-q", "--db", tmp_path / "s.db", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    headline = done.stdout.split("accuracy by subtask", 1)[0]
    assert "frame spread [95% CI]" in headline, headline
    rows = [line for line in headline.splitlines() if line.startswith(" first ")]
    assert sum(line.count(" [0.") + line.count(" [1.") for line in rows) == 2, headline
    groups = done.stdout.split("accuracy by subtask", 1)[1]
    assert re.search(r"^\s*direction\s+2 \*\s+0\.\d{3} \[", groups, re.M), groups
    assert done.stdout.count("* fewer than 10 rows: the interval") == 1, done.stdout
    # A group of enough rows is not marked, nor footnoted.
    big = lmmprobe("run", "-m", "first", "--data", "demo,n=30", "-q", "--db", tmp_path / "d.db")
    assert big.returncode == 0, big.stderr
    assert " * " not in big.stdout and "fewer than 10 rows" not in big.stdout, big.stdout


def test_data_list_at_80_columns_says_what_it_leaves_out(tmp_path: Path) -> None:
    # At 80 columns `data list` drops the formulation, the title and some groups' row
    # counts, and said nothing: the list read as all there is (re-test 20b #6).
    narrow = lmmprobe("data", "list", columns=80, timeout=120)
    assert narrow.returncode == 0, narrow.stderr
    said = " ".join(narrow.stdout.split())
    assert "at 80 columns the list leaves out rows (in the widest groups), formulation, title" in (
        said
    ), said
    # `lmmprobe`, or the path that runs it where it is not on $PATH.
    assert re.search(r"`COLUMNS=140 \S*lmmprobe data list`", said), said
    wide = lmmprobe("data", "list", columns=160, timeout=120)
    assert "leaves out" not in wide.stdout and "formulation" in wide.stdout


def test_the_thinking_variant_of_a_checkpoint_is_labelled_beside_its_thinking_off_twin(
    tmp_path: Path,
) -> None:
    # README: `hf:tiny-llava-think` and `...,chat_template_kwargs=enable_thinking=false`.
    # The second row read "tiny-llava-think thinking off", the first the bare spec: nothing
    # said that it is the thinking variant (re-test 20b #3).
    think = "hf:tiny-llava-think"
    done = lmmprobe(
        "run", "-m", think, "-m", f"{think},chat_template_kwargs=enable_thinking=false",
        "--data", "demo,n=2", "--max-new-tokens", "4", "-q", "--db", tmp_path / "s.db",
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [line.split()[:3] for line in done.stdout.splitlines() if "tiny-llava-think " in line]
    assert ["tiny-llava-think", "thinking", "default"] in rows, done.stdout
    assert ["tiny-llava-think", "thinking", "off"] in rows, done.stdout
    assert "  tiny-llava-think thinking default = hf:tiny-llava-think\n" in done.stdout
    # One spec alone, or two that differ in no thinking setting, keeps its plain label.
    alone = lmmprobe("run", "-m", "random", "-m", "first", "--data", "demo,n=2", "-q",
                     "--db", tmp_path / "s.db")  # fmt: skip
    assert "default" not in alone.stdout, alone.stdout


def test_the_fetch_hint_for_a_missing_path_writes_the_copy_to_that_path(tmp_path: Path) -> None:
    # `--data mmbench,path=FOLDER` with no FOLDER printed a fetch command writing to
    # "$LMMPROBE_DATA_DIR/mmbench": pasted as printed, the same spec still found nothing
    # (re-test 20b #8).
    folder = tmp_path / "my copy"
    shown = lmmprobe(
        "run", "--data", f"mmbench,path={folder}", "--dry-run", "--db", tmp_path / "s.db",
        timeout=120,
    )  # fmt: skip
    assert shown.returncode == 2
    assert f"Fetch it into {folder} with:" in shown.stderr, shown.stderr
    command = shown.stderr.split("with:", 1)[1].strip().splitlines()[0]
    assert f"--local-dir '{folder}'" in command, command
    assert "LMMPROBE_DATA_DIR" not in shown.stderr


def test_an_option_of_one_value_given_twice_is_refused_not_silently_the_last(
    tmp_path: Path,
) -> None:
    # `runs --db a.db --db b.db` listed b.db's runs alone, as if a.db held none; click keeps
    # an option's last value without a word (re-test 21b).
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    for db in (a, b):
        done = lmmprobe("run", "-m", "random", "--data", "demo,n=2", "-q", "--db", db)
        assert done.returncode == 0, done.stderr
    for args in (
        ["runs", "--db", a, "--db", b],
        ["run", "--data", "demo,n=2", "--data=demo,n=3", "--db", a, "--dry-run"],
    ):
        shown = lmmprobe(*args, timeout=120)
        assert shown.returncode == 2, (args, shown.stdout)
        assert "is given more than once; it takes one value" in shown.stderr, shown.stderr
    # Repeatable options stay repeatable.
    shown = lmmprobe("run", "-m", "random", "-m", "first", "--data", "demo,n=2", "--dry-run",
                     "--db", a, timeout=120)  # fmt: skip
    assert shown.returncode == 0, shown.stderr


def test_a_one_letter_option_given_twice_with_its_value_glued_on_is_refused(
    tmp_path: Path,
) -> None:
    # Re-test 22: click reads `-ob.html` as `-o b.html` and `-qo X` as `-q -o X`; the check of
    # a repeated option read such a word as no option, and the last value won silently.
    db = tmp_path / "a.db"
    done = lmmprobe("run", "-m", "random", "--data", "demo,n=2", "-q", "--db", db)
    assert done.returncode == 0, done.stderr
    for args in (
        ["report", "latest", "--db", db, "-o", tmp_path / "a.html", f"-o{tmp_path / 'b.html'}"],
        ["report", "latest", "--db", db, "-fmd", "-f", "html", "-o", tmp_path / "c.out"],
        ["run", "-m", "random", "-qd", "demo,n=2", "--data", "demo,n=3", "--db", db,
         "--dry-run"],
    ):  # fmt: skip
        shown = lmmprobe(*args, timeout=120)
        assert shown.returncode == 2, (args, shown.stdout, shown.stderr)
        assert "is given more than once; it takes one value" in shown.stderr, shown.stderr
    assert not list(tmp_path.glob("*.html")) and not (tmp_path / "c.out").exists()
    # Given once, glued or not, they are read as before.
    shown = lmmprobe("report", "latest", "--db", db, "-fmd", f"-o{tmp_path / 'r.md'}")
    assert shown.returncode == 0 and (tmp_path / "r.md").exists(), shown.stderr


def test_compare_of_three_runs_names_the_command_that_takes_more(tmp_path: Path) -> None:
    # `compare A B C` said only "Got unexpected extra argument(s) (C)" (re-test 21b).
    db = tmp_path / "s.db"
    for n in ("2", "3", "4"):
        done = lmmprobe("run", "-m", "random", "--data", f"demo,n={n}", "-q", "--db", db)
        assert done.returncode == 0, done.stderr
    ids = [r["id"] for r in json.loads(lmmprobe("runs", "--db", db, "-f", "json").stdout)]
    shown = lmmprobe("compare", *ids, "-m", "random", "--db", db, timeout=120)
    assert shown.returncode == 2
    # `lmmprobe`, or the path that runs it where it is not on $PATH (a fresh clone, CI).
    said = " ".join(shown.stderr.split())
    assert "compare takes one or two runs: `" in said, said
    assert "lmmprobe report RUN...` puts any number side by side" in said, said
