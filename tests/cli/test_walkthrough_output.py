"""What a new user saw that was not about them (issue 34's walk-through), through the console script.

A served model's long spec was folded into pieces of its URL at 80 columns in the ``score``,
``compare --audit`` and ``runs`` tables; they now show its short label, as ``run`` does, with
the spec whole on a legend line. Building ``hf:tiny-llava`` drew transformers' "Writing model
shards" bar over lmmprobe's own output.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.console import lmmprobe

from lmmprobe.testing.openai_server import FakeOpenAIServer

LABEL = "some-long-model-name"


@pytest.fixture(scope="module")
def long_spec_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store holding one run of a served model with a long spec beside ``random``."""
    tmp = tmp_path_factory.mktemp("long-spec")
    db = tmp / "db"
    with FakeOpenAIServer() as server:
        spec = f"openai:{LABEL}@{server.base_url}"
        made = lmmprobe(
            "run", "-m", spec, "-m", "random", "-d", "demo,n=12", "-q", "--db", db,
            "--out", tmp / "o", OPENAI_API_KEY="test-key",
        )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return db, spec


def _whole(out: str, spec: str) -> None:
    """Every line fits 80 columns but the legend's; the spec and its label are never cut."""
    lines = out.splitlines()
    legend = f"  {LABEL} = {spec}"
    assert lines.count(legend) == 1, out  # the spec whole, once, on its own line
    assert all(len(line.rstrip()) <= 80 for line in lines if line != legend), out
    for line in lines:
        for word in re.findall(r"[^\s()\[\];,]+", line):
            # No piece of the spec (a cut URL, a cut model name) stands anywhere on its own.
            if len(word) >= 4 and word in spec and re.search(r"[-:@/.]", word):
                assert word in (LABEL, spec), (word, out)


def test_long_specs_stay_whole_at_80_columns_in_score_audit_and_runs(
    long_spec_run: tuple[Path, str], tmp_path: Path
) -> None:
    db, spec = long_spec_run
    listed = lmmprobe("runs", "--db", db, columns=80)
    assert listed.returncode == 0, listed.stderr
    _whole(listed.stdout, spec)
    assert any(
        LABEL in line and re.search(r"\d\.\d{3}", line) for line in listed.stdout.splitlines()
    )

    audited = lmmprobe(
        "compare", "latest", "-m", spec, "-m", "random", "--audit", "--db", db, columns=80
    )
    assert audited.returncode == 0, audited.stderr
    _whole(audited.stdout, spec)
    assert f"{LABEL} " in audited.stdout.splitlines()[0]  # the summary names the label
    # JSON keeps the spec whole as the side's label.
    doc = lmmprobe(
        "compare", "latest", "-m", spec, "-m", "random", "--audit", "--db", db, "-f", "json"
    )
    assert f'"label_a": "{spec}"' in doc.stdout

    exported = tmp_path / "e.jsonl"
    assert lmmprobe("export", "latest", "--db", db, "-o", exported).returncode == 0
    # 60 columns: without repeats (no instability column) the table fits 80 in one piece.
    scored = lmmprobe("score", exported, columns=60)
    assert scored.returncode == 0, scored.stderr
    _whole(scored.stdout, spec)
    rows = [line.split() for line in scored.stdout.splitlines()]
    # The label whole at the head of each table's row (a continuation table repeats it).
    assert sum(1 for r in rows if r[:1] == [LABEL] and r[1:2] != ["="]) >= 2
    # So in `show` at 60 columns: the rows and accuracy n beside the first metric cut the
    # label and the interval ("some-long-model-na…", "[0.25, 0.7…"); they are a table apart.
    shown = lmmprobe("show", "latest", "--db", db, columns=60)
    assert shown.returncode == 0, shown.stderr
    _whole(shown.stdout, spec)
    assert "…" not in shown.stdout and "…" not in scored.stdout, shown.stdout + scored.stdout


@pytest.mark.slow
def test_building_a_tiny_model_draws_no_library_progress_bar(tmp_path: Path) -> None:
    # A fresh cache: the model is built by this command, as on a new user's first try.
    result = lmmprobe(
        "run", "-m", "hf:tiny-llava", "--limit", "1", "-q", "--db", tmp_path / "db",
        "--out", tmp_path / "o", LMMPROBE_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert any((tmp_path / "cache").rglob("config.json"))  # built here, not found built
    assert "\r" not in result.stderr and "it/s" not in result.stderr, result.stderr
    assert "Writing model shards" not in result.stderr
