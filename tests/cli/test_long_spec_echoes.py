"""A long model spec is shown shortened wherever a command echoes it (re-test 8 #6).

The repro: ``chat_template_kwargs=a=`` followed by 100,000 ``[`` (a value, so the spec parses).
The dry run already showed it redacted and cut after 200 characters with its length; the run's
legend, ``show``, the ``--max-cost`` refusal and ``compare``'s model lists printed it whole (a
100 KB line). The stored spec stays whole: it keys the run's answers.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.console import lmmprobe

from lmmprobe.testing import FakeOpenAIServer

_DEEP = "[" * 100_000


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A store holding one run of a model whose spec is 100 KB long, and that run's stdout."""
    root = tmp_path_factory.mktemp("longspec")
    db = root / "db.sqlite"
    with FakeOpenAIServer() as server:
        spec = f"openai:fake-vlm@{server.base_url},chat_template_kwargs=a={_DEEP}"
        proc = lmmprobe("run", "-m", spec, "-d", "demo,n=2", "--db", db, "--out", root / "o",
                        OPENAI_API_KEY="test-key")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return db, spec, proc.stdout


def _shortened(spec: str) -> str:
    return f"{'[' * 20}\u2026 ({len(spec):,} characters)"


def test_the_run_and_show_legends_show_the_spec_shortened(ran: tuple[Path, str, str]) -> None:
    db, spec, run_out = ran
    shown = lmmprobe("show", "latest", "--db", db)
    assert shown.returncode == 0, shown.stderr[-2000:]
    for out in (run_out, shown.stdout):
        assert "fake-vlm = openai:fake-vlm@" in out
        assert _shortened(spec) in out
        assert len(out) < 5_000, len(out)
    with sqlite3.connect(db) as conn:  # what is stored stays whole
        (model,) = conn.execute("SELECT DISTINCT model FROM scores").fetchone()
    assert model == spec


def test_the_max_cost_refusal_names_the_unpriced_model_shortened(tmp_path: Path) -> None:
    spec = f"openai:fake-vlm@http://127.0.0.1:9/v1,chat_template_kwargs=a={_DEEP}"
    proc = lmmprobe("run", "-m", spec, "-d", "demo,n=2", "--db", tmp_path / "db",
                    "--max-cost", "1", "--dry-run", OPENAI_API_KEY="test-key")  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and len(line) < 600, line[:800]
    assert "--max-cost needs a price for every model; 'openai:fake-vlm@" in line
    assert _shortened(spec) in line


def test_compare_lists_the_run_models_shortened(ran: tuple[Path, str, str]) -> None:
    db, spec, _ = ran
    proc = lmmprobe("compare", "latest", "latest", "--db", db)
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = " ".join(proc.stderr.split())
    assert len(line) < 600, line[:800]
    assert "(it has: openai:fake-vlm@" in line and _shortened(spec) in line


def test_the_judging_summary_names_the_judge_shortened(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    made = lmmprobe("run", "-q", "-m", "random", "-d", "demo,n=4", "--db", db,
                    "--out", tmp_path / "o")  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    with FakeOpenAIServer() as server:  # the rule decides every choice answer: never asked
        spec = f"openai:judge@{server.base_url},chat_template_kwargs=a={_DEEP}"
        proc = lmmprobe("judge", "latest", "--judge", spec, "--db", db, "--out", tmp_path / "j",
                        OPENAI_API_KEY="test-key")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    said = " ".join(proc.stdout.split())
    assert f"judge openai:judge@{server.base_url}" in said
    assert f"{_shortened(spec)}: 0 requests" in said
    assert len(proc.stdout) < 5_000, len(proc.stdout)


def test_a_bad_price_names_its_model_spec_shortened(tmp_path: Path) -> None:
    spec = f"openai:fake-vlm@http://127.0.0.1:9/v1,price=x,chat_template_kwargs=a={_DEEP}"
    proc = lmmprobe("run", "-m", spec, "-d", "demo,n=2", "--db", tmp_path / "db", "--dry-run",
                    OPENAI_API_KEY="test-key")  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and len(line) < 600, line[:800]
    assert "price='x' is not a price" in line and _shortened(spec) in line


@pytest.mark.parametrize("value", ["x" * 10_000, "fps=" + "9" * 10_000])
def test_a_refused_frames_value_is_echoed_shortened(value: str, tmp_path: Path) -> None:
    # Re-test 14: a refused --frames was echoed whole, twice ("frame policy '...'" and
    # "(got '...')"); it is cut as --max-cost's value is, and said once.
    proc = lmmprobe("run", "-m", "first", "-d", "demo,n=2", "--db", tmp_path / "db",
                    "--frames", value, "--dry-run")  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and len(line) < 400, line[:800]
    assert f"{value[:40]}... ({len(value):,} characters)" in line, line
    assert line.count(value[:40]) == 1, line


def test_a_refused_hf_video_option_is_echoed_shortened(tmp_path: Path) -> None:
    # Re-test 15 #6: hf's video= value was echoed whole (5,000 characters for 5,000).
    pytest.importorskip("transformers")
    value = "A" * 5000
    proc = lmmprobe("run", "-m", f"hf:tiny-llava,video={value}", "-d", "demo,n=2",
                    "--db", tmp_path / "db", "--dry-run", HF_HUB_OFFLINE="1")  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and len(line) < 400, line[:800]
    assert "must be auto or frames" in line and "(5,000 characters)" in line, line


@pytest.mark.parametrize("data", ["z" * 100_000, "z" * 100_000 + ":x"])
def test_a_data_path_past_any_real_one_is_echoed_shortened(data: str, tmp_path: Path) -> None:
    # Re-test 17: the system's "File name too long" named the whole path, a 100 KB line.
    proc = lmmprobe("run", "-m", "first", "--data", data, "--db", tmp_path / "db")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: {'z' * 300}... ({len(data):,} characters): File name too long"
    )


def test_a_refused_think_value_is_echoed_shortened(tmp_path: Path) -> None:
    # Re-test 19: a think= value that is no tag pair was echoed whole (5,000 characters).
    value = "x" * 5000
    proc = lmmprobe("run", "-m", f"random,think={value}", "-d", "demo,n=2",
                    "--db", tmp_path / "db", "--dry-run")  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and len(line) < 400, line[:800]
    assert f"think='{value[:40]}... (5,000 characters)': expected off, on" in line, line
