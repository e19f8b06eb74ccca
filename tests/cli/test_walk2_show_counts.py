"""walk2 items through the console script: what ``show``, the truncation note and ``synth
generate`` told a new user that did not add up.

#12: ``show`` of an imported run gave no mark that it was imported (``runs`` says ``[imported
from mapped ...]``) and ``results:`` named the run's folder, not results.json. #14: ``-m
openai:fake-vlm+open@...`` had 20/20 truncated at ``out tokens 17.0`` and advised "raise
--max-new-tokens (this run: 32)": the fake said ``finish_reason=length`` at 17 of 32 tokens,
and the advice did not look at where the outputs stopped. #15: ``synth generate`` said "wrote
18 samples" beside "asked 12 ... 9 kept" under two scenarios, the numbers not adding up.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.console import lmmprobe, lmmprobe_with_key

from lmmprobe.testing.openai_server import FakeOpenAIServer


def _answers(tmp_path: Path) -> Path:
    answers = tmp_path / "answers.jsonl"
    rows = [
        {"qid": "a", "answer": "cat", "ref": "cat"},
        {"qid": "b", "answer": "dog", "ref": "cow"},
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return answers


def test_show_of_an_imported_run_says_so_and_names_results_json(tmp_path: Path) -> None:
    answers, db = _answers(tmp_path), tmp_path / "store.db"
    done = lmmprobe(
        "import", answers, "--field", "id=qid,prediction=answer,gold=ref", "--db", db,
        "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    imported = json.loads(done.stdout)
    run_dir = tmp_path / imported["run_id"]
    shown = lmmprobe("show", imported["run_id"], "--db", db)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    sha = imported["origin"]["sha256"][:8]
    # The same words `runs` marks it with, and the file its predictions came from.
    assert f"imported from mapped (sha256 {sha}): {answers}" in lines, lines
    assert f"results: {run_dir / 'results.json'}" in lines, lines
    assert f"         {run_dir / 'results.md'}" in lines, lines
    listed = lmmprobe("runs", "--db", db, "--format", "json")
    (row,) = json.loads(listed.stdout)
    assert row["setting"][0] == f"imported from mapped (sha256 {sha})"


def test_show_of_a_run_whose_folder_is_gone_says_so(tmp_path: Path) -> None:
    db, out = tmp_path / "db", tmp_path / "o"
    made = lmmprobe("run", "-m", "random", "-d", "demo,n=4", "-q", "--db", db, "--out", out)
    assert made.returncode == 0, made.stderr
    shown = lmmprobe("show", "latest", "--db", db)
    assert f"results: {out / 'results.json'}" in shown.stdout.splitlines()
    assert "imported from" not in shown.stdout  # a run lmmprobe's models answered
    (out / "results.json").unlink()
    again = lmmprobe("show", "latest", "--db", db)
    assert again.returncode == 0, again.stderr
    assert (
        f"results: {out / 'results.json'} (not there now: moved or removed; this store still "
        "holds the results shown)"
    ) in again.stdout.splitlines()


def _truncated_run(tmp_path: Path, server: FakeOpenAIServer) -> tuple[str, dict[str, object]]:
    out = tmp_path / "o"
    made = lmmprobe_with_key(
        "run", "-m", f"openai:fake-vlm+open@{server.base_url}", "-d", "demo,n=6", "-q",
        "--db", tmp_path / "db", "--out", out,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    return " ".join(made.stdout.split()), model


def test_thinking_cut_off_at_the_limit_uses_the_whole_limit(tmp_path: Path) -> None:
    # The fake's `+open` mode is a think block the token limit cut off: it runs to the limit.
    with FakeOpenAIServer() as server:
        said, model = _truncated_run(tmp_path, server)
    assert model["counts"]["truncated"] == 6
    assert model["metrics"]["output_tokens"]["value"] == 32.0
    assert "raise --max-new-tokens (this run: 32) to give the model room to answer" in said
    assert "will not help" not in said


def test_outputs_the_server_stopped_below_the_limit_are_not_blamed_on_it(tmp_path: Path) -> None:
    # The server's own limit (a context length) stops replies at 10 tokens; 32 were allowed.
    with FakeOpenAIServer(token_limit=10) as server:
        said, model = _truncated_run(tmp_path, server)
        assert model["metrics"]["output_tokens"]["value"] == 10.0
        assert "raise --max-new-tokens" not in said, said
        assert (
            "6 of 6 answers truncated, each stopped at 10 tokens or fewer, below "
            "--max-new-tokens (this run: 32): the server's own limit (its max tokens or context "
            "length) or the model stopped them, so raising --max-new-tokens will not help"
        ) in said, said
        # `show` reads the same from the store.
        shown = lmmprobe("show", "latest", "--db", tmp_path / "db")
    assert shown.returncode == 0, shown.stderr
    assert "each stopped at 10 tokens or fewer" in " ".join(shown.stdout.split())


def test_one_token_is_singular(tmp_path: Path) -> None:
    # It said "each stopped at 1 tokens or fewer".
    with FakeOpenAIServer(token_limit=1) as server:
        said, _ = _truncated_run(tmp_path, server)
    assert "6 of 6 answers truncated, each stopped at 1 token or fewer, below" in said, said


def test_dysca_counts_add_up_to_the_samples_under_several_scenarios(
    tmp_path: Path, tiny_cache: Path
) -> None:
    out = tmp_path / "d"
    made = lmmprobe(
        "synth", "generate", "--recipe", "dysca", "--renderer", "diffusion", "--diffusion-model",
        "tiny", "--n", "2", "--size", "32", "--tasks", "animal,text", "--scenarios",
        "clean,corruption", "--out", out, HF_HUB_OFFLINE="1", LMMPROBE_CACHE=str(tiny_cache),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    samples = manifest["counts"]["samples"]
    (post,) = [f for f in manifest["filters"] if f["name"] == "dysca_postprocess"]
    kept = post["questions_kept"]
    assert samples == 2 * kept  # each kept question under both scenarios
    assert f"wrote {samples} samples" in made.stdout
    # The sentence that counts questions (wrapped between words at 160) ends on the samples.
    said = " ".join(made.stdout.split())
    assert (
        f"{kept} kept; each a sample under every scenario its item is shown in: {samples} "
        "samples evaluate with:"
    ) in said, said
