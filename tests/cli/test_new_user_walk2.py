"""What a second new-user walk-through (walk2) tripped on, through the console script.

#7: ``score`` of an export of a run without repeats printed ``instability 0.000 [0.00, 0.00]``
where ``show`` of the same run has no instability column. #8: ``arena export`` before any vote
wrote an empty file and ``elo`` of it said "no votes in the file" without saying where votes
come from. #5: with ``$LMMPROBE_DATA_DIR`` unset, the fetch hint of ``run --data mmbench`` and
``data show`` began ``mkdir -p "$LMMPROBE_DATA_DIR"/hemm-vqa && cd ...``, which pasted as printed
writes to /hemm-vqa; the "set it first" note came after.
"""

from __future__ import annotations

from pathlib import Path

from tests.console import lmmprobe


def _header(out: str) -> str:
    return next(line for line in out.splitlines() if "accuracy" in line)


def test_score_of_a_run_without_repeats_shows_no_instability(tmp_path: Path) -> None:
    db, out, exported = tmp_path / "db", tmp_path / "o", tmp_path / "run.jsonl"
    made = lmmprobe("run", "-m", "random", "-d", "demo,n=12", "-q", "--db", db, "--out", out)
    assert made.returncode == 0, made.stderr
    assert lmmprobe("export", "latest", "--db", db, "-o", exported).returncode == 0
    shown = lmmprobe("show", "latest", "--db", db)
    assert "instability" not in shown.stdout, shown.stdout
    scored = lmmprobe("score", exported, "--matcher", "reform")
    assert scored.returncode == 0, scored.stderr
    assert "instability" not in scored.stdout, scored.stdout
    assert "format_hit_rate" in _header(scored.stdout)
    as_json = lmmprobe("score", exported, "--matcher", "reform", "-f", "json")
    assert '"instability"' not in as_json.stdout

    # With repeats both show it.
    again = lmmprobe(
        "run", "-m", "random", "-d", "demo,n=12", "--repeats", "2", "-q", "--db", db,
        "--out", out,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert lmmprobe("export", "latest", "--db", db, "-o", exported).returncode == 0
    assert "instability" in lmmprobe("show", "latest", "--db", db).stdout
    scored = lmmprobe("score", exported, "--matcher", "reform")
    assert "instability" in scored.stdout, scored.stdout


def test_export_and_elo_without_votes_say_how_to_vote(tmp_path: Path) -> None:
    # walk2 #8: README's order (`arena export`, then `elo`) before any vote.
    db, battles = tmp_path / "db", tmp_path / "battles.jsonl"
    made = lmmprobe("run", "-m", "random", "-d", "demo,n=4", "-q", "--db", db, "--out", tmp_path)
    assert made.returncode == 0, made.stderr
    exported = lmmprobe("arena", "export", "-o", battles, "--db", db)
    assert exported.returncode == 0, exported.stderr
    assert battles.read_text(encoding="utf-8") == ""
    said = " ".join(exported.stdout.split())  # rich may fold the long path onto a new line
    assert "0 votes" in said and "lmmprobe serve`'s arena" in said, said
    ranked = lmmprobe("elo", battles)
    assert ranked.returncode == 2
    said = " ".join(ranked.stderr.split())
    assert "no votes in the file" in said
    assert "lmmprobe serve`'s arena" in said, said
    assert f"lmmprobe arena export -o {battles}`" in said, said


def _fetch_lines(text: str) -> list[str]:
    """The indented command lines of the first fetch hint in `text`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(("Fetch it with", "fetch:")))
    block = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        block.append(line.strip())
    return block


def test_fetch_hints_set_the_data_folder_before_using_it(tmp_path: Path) -> None:
    unset = {"LMMPROBE_DATA_DIR": "", "HF_HUB_OFFLINE": "1"}  # empty counts as unset
    db, out = tmp_path / "db", tmp_path / "o"
    ran = lmmprobe("run", "--data", "mmbench", "-m", "random", "--db", db, "--out", out, **unset)
    assert ran.returncode == 2
    shown = lmmprobe("data", "show", "hemm-vqa", **unset)
    assert shown.returncode == 0, shown.stderr
    for said in (ran.stderr, shown.stdout):
        block = _fetch_lines(said)
        assert block[0] == 'export LMMPROBE_DATA_DIR="$HOME/lmmprobe-data"', said
        assert "$LMMPROBE_DATA_DIR" in block[1], said
    # With the variable set, the hint is the command alone.
    ran = lmmprobe(
        "run", "--data", "mmbench", "-m", "random", "--db", db, "--out", out,
        LMMPROBE_DATA_DIR=str(tmp_path), HF_HUB_OFFLINE="1",
    )  # fmt: skip
    # `hf`, or the one beside lmmprobe by its path where `hf` is not on $PATH.
    first = _fetch_lines(ran.stderr)[0]
    assert first.startswith("hf download") or first.split()[0].endswith("/hf"), ran.stderr
