"""What a researcher new to lmmprobe meets walking through the README (issue 34 part B, s19).

Each test is one reproduction from the walk-through in a fresh clone, run through the real
console script.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.console import lmmprobe


def test_the_csv_of_an_export_is_refused_by_import_and_score_not_merged(tmp_path: Path) -> None:
    # README: `export latest --format csv -o r.csv`, then a newcomer imports or scores it.
    # `import r.csv --model x` read it as a mapped file and stored both models' 2 x N rows
    # under "x" as one complete run (unparsed 0.333, a figure of no model); `score r.csv`
    # said "--as-published: r.csv: no published figure..." for a flag never given.
    db = tmp_path / "s.db"
    done = lmmprobe("run", "--data", "demo,n=6", "-q", "--db", db, timeout=240)
    assert done.returncode == 0, done.stderr
    table = tmp_path / "r.csv"
    exported = lmmprobe("export", "latest", "--format", "csv", "--db", db, "-o", table)
    assert exported.returncode == 0, exported.stderr

    imported = lmmprobe("import", table, "--model", "x", "--db", db, timeout=120)
    assert imported.returncode == 2, imported.stdout
    assert imported.stderr.count("\n") == 1, imported.stderr
    assert "is a CSV written by `" in imported.stderr and "export --format csv`" in imported.stderr
    assert "export RUN -o run.jsonl`, then `" in imported.stderr
    listed = json.loads(lmmprobe("runs", "--db", db, "-f", "json").stdout)
    assert [r["models"] for r in listed] == [["random", "first"]], listed

    scored = lmmprobe("score", table, timeout=120)
    assert scored.returncode == 2, scored.stdout
    assert scored.stderr.count("\n") == 1, scored.stderr
    assert "--as-published" not in scored.stderr
    assert "score run.jsonl`" in scored.stderr

    # What the refusal points to works: the JSON lines export, scored per model.
    rows = tmp_path / "run.jsonl"
    assert lmmprobe("export", "latest", "--db", db, "-o", rows).returncode == 0
    per_model = lmmprobe("score", rows, timeout=120)
    assert per_model.returncode == 0, per_model.stderr
    assert "random" in per_model.stdout and "first" in per_model.stdout


def test_a_plain_score_of_a_file_with_its_golds_needs_no_as_published(tmp_path: Path) -> None:
    # `score answers.jsonl` of {id, prediction, gold} rows: import scored and stored it, but
    # score refused it: "--as-published: answers.jsonl: no published figure for a mapped file
    # whose name tells the benchmark; there is one for: ai2d ..." (a flag never given, 17
    # benchmarks listed), though the same file scores with --reader mapped.
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        '{"id": "1", "prediction": "cat", "gold": "cat"}\n'
        '{"id": "2", "prediction": "dog", "gold": "cat"}\n'
    )
    scored = lmmprobe("score", answers, timeout=120)
    assert scored.returncode == 0, scored.stderr
    assert "--as-published" not in scored.stderr + scored.stdout
    assert "2 predictions scored against the golds the file gives" in scored.stdout
    assert "0.500" in scored.stdout  # accuracy: one of two

    # Asked for, the tool's own figure is still refused in one line where there is none.
    published = lmmprobe("score", answers, "--as-published", timeout=120)
    assert published.returncode == 2
    assert "no published figure for a mapped file" in published.stderr


def test_an_exports_outcome_column_counts_as_the_run_counts(tmp_path: Path) -> None:
    # `make demo`, then `export latest --format csv -o r.csv`: the baselines' empty free-form
    # answers are stored with stage "unparsed", so a spreadsheet filter on the stage counted
    # 304 unparsed rows where `show` says unparsed 0.000 (results.json: unparsed 0, empty 152).
    # Each row now says the outcome the run's counts put it in.
    import csv

    db = tmp_path / "s.db"
    done = lmmprobe("run", "--data", "synth,n=4", "-q", "--db", db, timeout=240)
    assert done.returncode == 0, done.stderr
    table = tmp_path / "r.csv"
    exported = lmmprobe("export", "latest", "--format", "csv", "--db", db, "-o", table)
    assert exported.returncode == 0, exported.stderr
    with table.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    (written,) = tmp_path.glob("*/results.json")  # the run's folder beside its store
    results = json.loads(written.read_text())
    for model, result in results["models"].items():
        counts = result["counts"]
        mine = [r for r in rows if r["model"] == model]
        assert len(mine) == counts["rows"]
        for outcome in ("correct", "wrong", "unparsed", "truncated", "free_text", "empty"):
            got = sum(r["outcome"] == outcome for r in mine)
            assert got == counts[outcome], (model, outcome, got, counts)
        assert counts["empty"] > 0  # the case met: empty descriptions, stored "unparsed"
        assert any(r["stage"] == "unparsed" and r["outcome"] == "empty" for r in mine)


def test_compare_of_a_one_model_run_says_to_compare_it_with_another_run(tmp_path: Path) -> None:
    # README: `compare latest -m random -m first`; after `import` (one model) a newcomer tries
    # `compare latest`: "name two of its models with --model A --model B (it has: x)".
    db = tmp_path / "s.db"
    done = lmmprobe("run", "-m", "random", "--data", "demo,n=6", "-q", "--db", db, timeout=240)
    assert done.returncode == 0, done.stderr
    compared = lmmprobe("compare", "latest", "--db", db)
    assert compared.returncode == 2
    assert compared.stderr.count("\n") == 1, compared.stderr
    assert "holds one model (random)" in compared.stderr
    assert "compare RUN_A RUN_B` compares it with another run" in compared.stderr


def test_compare_judge_says_why_its_requests_are_fewer_than_two_a_pair(tmp_path: Path) -> None:
    # `compare latest -m random -m first --judge ...` (docs/judges.md): "360 pairs" judged
    # "in both orders", then "judge calls: 372 requests": identical prompts (a pair whose
    # answers read alike) share one request, which the line did not say.
    from lmmprobe.testing.openai_server import FakeOpenAIServer

    db = tmp_path / "s.db"
    done = lmmprobe("run", "--data", "demo,n=20", "-q", "--db", db, timeout=240)
    assert done.returncode == 0, done.stderr
    with FakeOpenAIServer(reply_table=[("Verdict", "Verdict: tie")]) as server:
        judge = f"openai:judge@{server.base_url}"
        compared = lmmprobe(
            "compare", "latest", "-m", "random", "-m", "first", "--judge", judge, "--db", db,
            timeout=240, OPENAI_API_KEY="sk-test",
        )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    text = " ".join(compared.stdout.split())
    pairs = int(text.split(" pairs", 1)[0].rsplit(" ", 1)[-1])
    requests = int(text.split("judge calls: ", 1)[1].split(" ", 1)[0])
    assert requests < 2 * pairs, text  # the case met: some pairs answered alike
    assert f"for {pairs} pairs in two orders (identical judge prompts" in text, text


def test_a_store_given_to_score_or_import_says_how_a_store_is_read(tmp_path: Path) -> None:
    # `score lmmprobe-runs/lmmprobe.db`: "no reader recognises this layout (readers: ...);
    # name one with --reader NAME, or map its fields with --reader mapped --field ...".
    db = tmp_path / "s.db"
    done = lmmprobe("run", "--data", "demo,n=4", "-q", "--db", db, timeout=240)
    assert done.returncode == 0, done.stderr
    for command in (["score", db], ["import", db, "--model", "x", "--db", tmp_path / "o.db"]):
        refused = lmmprobe(*command, timeout=120)
        assert refused.returncode == 2, refused.stdout
        assert refused.stderr.count("\n") == 1, refused.stderr
        assert "no reader recognises" not in refused.stderr
        assert "is a SQLite file, such as an lmmprobe store, not predictions" in refused.stderr
        assert f"runs --db {db}` lists its runs" in refused.stderr


def test_apex_on_the_terminal_explains_its_marks_and_says_sufficient_in_words(
    tmp_path: Path,
) -> None:
    # README's first apex example: each step printed "sufficient: False — not yet resolved"
    # (Python's False), and the table's cells "0.47 [0.33, 0.65] =" with no word on "=".
    done = lmmprobe(
        "apex", "Can models identify rotated images?", "-m", "random", "-m", "first",
        "--images-per-answer", "4", "--bootstrap", "50", "--out", tmp_path / "rot",
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "sufficient: False" not in text and "sufficient: True" not in text
    assert "not sufficient yet: " in text or "  sufficient: " in text
    assert "+ above chance, = at chance, - below chance" in " ".join(text.split())


def test_a_bare_list_names_the_registries_it_lists() -> None:
    # `lmmprobe list` (the help lists `list` among the commands): "Missing argument 'KIND'."
    listed = lmmprobe("list")
    assert listed.returncode == 2
    assert listed.stderr.count("\n") == 1, listed.stderr
    assert "Missing argument" not in listed.stderr
    assert "list KIND`, KIND one of matchers, prompt-styles, sources" in listed.stderr
