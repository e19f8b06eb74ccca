"""``lmmprobe elo`` on hostile vote files (issue 34, re-test 5 #9 and #10).

A vote file is outside text. Each of these gave a traceback or took the machine's memory: a
lone surrogate in a model name (valid JSON) failed while printing; JSON nested 100,000 deep
raised RecursionError; a CSV field over 128 KiB raised ``_csv.Error``; a UTF-16 file said
"'utf-8' codec can't decode" naming no file; 16,000 battles between new models asked numpy for
7.6 GiB (HEMM's win rate was computed on models x models tables).
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe

from lmmprobe.metrics.elo import Battle, hemm_win_rates


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("deep.jsonl", '{"model_a": ' + "[" * 100_000 + "]" * 100_000 + ', "model_b": "b", '
         '"winner": "a"}\n', "deep.jsonl:1: nested too deeply to read"),
        ("big.csv", 'model_a,model_b,winner\n"' + "x" * 200_000 + '",b,a\n',
         "big.csv:2: not a CSV row (field larger than field limit"),
        ("u16.jsonl", "\ufeff" + '{"model_a": "x", "model_b": "y", "winner": "a"}\n',
         "u16.jsonl:1: not UTF-8 text (byte 0xff at column 1)"),
        ("long.jsonl", '{"model_a": "' + "x" * (1 << 21) + '", "model_b": "y", "winner": "a"}\n',
         "long.jsonl:1: a line longer than 1,048,576 bytes"),
        ("nested.jsonl", '{"model_a": ["x"], "model_b": "y", "winner": "a"}\n',
         "nested.jsonl:1: model_a must be a name, not a list"),
    ],
)  # fmt: skip
def test_a_hostile_vote_file_is_one_line_naming_file_and_line(
    tmp_path: Path, name: str, content: str, says: str
) -> None:
    path = tmp_path / name
    data = content.encode("utf-16") if name.startswith("u16") else content.encode()
    path.write_bytes(data)
    done = lmmprobe("elo", path, "--shuffles", "0")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.strip()]
    assert says in line, line
    assert str(tmp_path) in line


def test_a_lone_surrogate_in_a_name_is_read_as_a_replacement_character(tmp_path: Path) -> None:
    path = tmp_path / "votes.jsonl"
    path.write_text(
        '{"model_a": "\\ud800", "model_b": "b", "winner": "a"}\n'
        '{"model_a": "x", "model_b": "b", "winner": "tie"}\n',
        encoding="utf-8",
    )
    done = lmmprobe("elo", path, "--shuffles", "0")
    assert done.returncode == 0, done.stderr
    assert "\ufffd" in done.stdout
    as_json = lmmprobe("elo", path, "--shuffles", "0", "--format", "json")
    models = {r["model"] for r in json.loads(as_json.stdout)["models"]}
    assert models == {"\ufffd", "b", "x"}


def test_battles_between_thousands_of_new_models_need_no_models_squared_memory(
    tmp_path: Path,
) -> None:
    # 8,000 battles, 16,000 models: the old tables were 3 x 16,000^2 floats (5.7 GiB), past
    # the 3 GiB of address space the console script gets here.
    path = tmp_path / "votes.jsonl"
    path.write_text(
        "".join(
            json.dumps({"model_a": f"a{i}", "model_b": f"b{i}", "winner": "a"}) + "\n"
            for i in range(8_000)
        )
    )
    script = Path(sys.executable).parent / "lmmprobe"
    command = f"ulimit -v 3000000; exec {shlex.quote(str(script))} elo {shlex.quote(str(path))}"
    done = subprocess.run(
        ["bash", "-c", command + " --shuffles 0 --format json"],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout)["models"]
    assert len(rows) == 16_000
    assert all(r["win_rate"] is None for r in rows)  # no model met every other: NaN, as HEMM


def _matrix_win_rates(battles: list[Battle], names: list[str]) -> dict[str, float]:
    """HEMM's calc_elo.py tables, as lmmprobe computed them before (models x models)."""
    index = {m: i for i, m in enumerate(names)}
    size = len(names)
    wins, ties, total = np.zeros((size, size)), np.zeros((size, size)), np.zeros((size, size))
    for b in battles:
        i, j = index[b.model_a], index[b.model_b]
        total[i, j] += 1
        total[j, i] += 1
        if b.winner == "a":
            wins[i, j] += 1
        elif b.winner == "b":
            wins[j, i] += 1
        else:
            ties[i, j] += 1
            ties[j, i] += 1
    with np.errstate(divide="ignore", invalid="ignore"):
        pairwise = wins / (total - ties)
    np.fill_diagonal(pairwise, 0.0)
    rates = pairwise.mean(axis=1) if size else np.zeros(0)
    return {m: float(v) for m, v in zip(names, rates, strict=True)}


_MODELS = ["m0", "m1", "m2", "m3", "m4", "m5"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_MODELS), st.sampled_from(_MODELS), st.sampled_from(["a", "b", "tie"])
        ).filter(lambda t: t[0] != t[1]),
        max_size=60,
    ),
    st.booleans(),
)
def test_hemm_win_rates_equal_the_models_by_models_tables_bit_for_bit(
    rows: list[tuple[str, str, str]], listed: bool
) -> None:
    battles = [Battle(a, b, w) for a, b, w in rows]  # type: ignore[arg-type]
    seen = sorted({m for b in battles for m in (b.model_a, b.model_b)})
    names = list(reversed(_MODELS)) if listed else seen
    if listed and not battles:
        return
    got = hemm_win_rates(battles, models=names if listed else None)
    want = _matrix_win_rates(battles, names)
    assert list(got) == list(want)
    for m in names:
        assert (math.isnan(got[m]) and math.isnan(want[m])) or got[m] == want[m], (m, got, want)


def _new_pairs(path: Path, battles: int) -> Path:
    path.write_text(
        "".join(
            json.dumps({"model_a": f"a{i}", "model_b": f"b{i}", "winner": "a"}) + "\n"
            for i in range(battles)
        )
    )
    return path


@pytest.mark.parametrize(
    ("battles", "shuffles", "says"),
    [
        (20_000, "1000", "40,000 models over 1,000 shuffles is 40,000,000 ratings"),
        (1_000, "1000000", "2,000 models over 1,000,000 shuffles is 2,000,000,000 ratings"),
    ],
)
def test_more_models_x_shuffles_than_lmmprobe_holds_is_refused_in_one_line(
    tmp_path: Path, battles: int, shuffles: str, says: str
) -> None:
    """Re-test 6 of issue 34, finding 5: the medians were taken over a (shuffles, models)
    float64 array built whole (and copied twice): 40,000 battles between new models asked
    numpy for 1.3 GB at a time and ended in a MemoryError traceback; so did --shuffles
    1000000 on 1,000 battles, after 50 s."""
    path = _new_pairs(tmp_path / "votes.jsonl", battles)
    done = lmmprobe("elo", path, "--shuffles", shuffles, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    (line,) = [x for x in done.stderr.splitlines() if x.strip()]
    fit = (1 << 25) // (2 * battles)
    assert str(path) in line and says in line and f"use --shuffles {fit} or fewer" in line
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr


def test_medians_taken_in_blocks_equal_the_whole_matrix_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The orders replayed in blocks, the medians taken a block of models at a time: each
    value is what one (shuffles, models) matrix and one np.median gave."""
    from lmmprobe.metrics import elo

    battles = [
        Battle(f"m{i % 7}", f"m{(i * 3 + 1) % 7}", ("a", "b", "tie")[i % 3])
        for i in range(40)
        if i % 7 != (i * 3 + 1) % 7
    ]
    whole = elo.elo_ratings(battles, shuffles=101, seed=3)
    monkeypatch.setattr(elo, "_MAX_ORDER_CELLS", 64)  # 2 orders a block, 1 model a block
    assert elo.elo_ratings(battles, shuffles=101, seed=3) == whole


def _two_models(path: Path, battles: int) -> Path:
    # Re-test 7's mkelo7.py: battles between just two models, a third won by b.
    path.write_text(
        "".join(
            json.dumps({"model_a": "a", "model_b": "b", "winner": "b" if i % 3 == 0 else "a"})
            + "\n"
            for i in range(battles)
        )
    )
    return path


@pytest.mark.parametrize(
    ("battles", "shuffles", "says", "fit"),
    [
        (100, "10000000", "10,000,000 shuffles is more than the 100,000 lmmprobe replays", 100_000),
        (1_001, "100000", "1,001 votes over 100,000 shuffles is 100,100,000 battles to replay, "
         "more than the 100,000,000 lmmprobe replays in one rating", 99_900),
        (100_001, "1000", "100,001 votes over 1,000 shuffles is 100,001,000 battles", 999),
    ],
)  # fmt: skip
def test_more_replays_than_lmmprobe_does_are_refused_up_front_in_one_line(
    tmp_path: Path, battles: int, shuffles: str, says: str, fit: int
) -> None:
    """Re-test 7 of issue 34, finding 18: the time of a rating was unbounded and silent (200,000
    votes: three minutes; ``--shuffles 10000000`` on 100 votes: about fifteen)."""
    path = _two_models(tmp_path / "votes.jsonl", battles)
    done = lmmprobe("elo", path, "--shuffles", shuffles, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    (line,) = [x for x in done.stderr.splitlines() if x.strip()]
    assert str(path) in line and says in line and f"use --shuffles {fit} or fewer" in line
    assert "Traceback" not in done.stderr and not done.stdout


def test_at_the_replay_limit_a_rating_is_made_and_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The limits bound the work and change no figure: at the limit a rating is what it was,
    one shuffle past it is refused, saying how many fit."""
    from lmmprobe.metrics import elo

    battles = [Battle("a", "b", ("a", "b", "tie")[i % 3]) for i in range(10)]
    want = elo.elo_ratings(battles, shuffles=7, seed=1)
    monkeypatch.setattr(elo, "MAX_ELO_REPLAYS", 70)
    assert elo.elo_ratings(battles, shuffles=7, seed=1) == want
    with pytest.raises(elo.EloTooLargeError) as refused:
        elo.elo_ratings(battles, shuffles=8, seed=1)
    assert refused.value.fit == 7


def _many_models(path: Path, votes: int) -> Path:
    """A votes file where each vote is between two new models (re-test 12 #9's shape)."""
    lines = (
        json.dumps({"model_a": f"a{i:05d}", "model_b": f"b{i:05d}", "winner": "a"})
        for i in range(votes)
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_table_of_a_file_naming_many_models_shows_the_top_and_says_how_to_see_all(
    tmp_path: Path,
) -> None:
    # Re-test 12 #9: 40,000 models held the terminal for over a minute laying out a table of
    # 40,000 rows (rich, ~1.6 ms a row); `-f json` took 6 s. The table shows the top 100.
    votes = _many_models(tmp_path / "many.jsonl", 150)  # 300 models
    done = lmmprobe("elo", votes, "--shuffles", "0")
    assert done.returncode == 0, done.stderr[-2000:]
    ranks = re.findall(r"^ *(\d+) +[ab]\d{5} ", done.stdout, flags=re.MULTILINE)
    assert ranks == [str(i) for i in range(1, 101)], ranks[-3:]
    # The winners (1002.0) come first; none of the 200 models past the top is drawn.
    assert "a00000" in done.stdout and "b00000" not in done.stdout
    said = " ".join(done.stdout.split())
    assert "200 more models not shown (the table shows the top 100 of 300)" in said
    assert "-f json` lists all, --top 0 shows all here" in said
    # The JSON lists every model; --top sets the table's rows, --top 0 shows all.
    doc = json.loads(lmmprobe("elo", votes, "--shuffles", "0", "-f", "json").stdout)
    assert len(doc["models"]) == 300
    few = lmmprobe("elo", votes, "--shuffles", "0", "--top", "5")
    assert "295 more models not shown (the table shows the top 5 of 300)" in " ".join(
        few.stdout.split()
    )
    every = lmmprobe("elo", votes, "--shuffles", "0", "--top", "0")
    assert "b00149" in every.stdout and "not shown" not in every.stdout


def test_a_table_within_the_top_says_nothing_of_more(tmp_path: Path) -> None:
    votes = _many_models(tmp_path / "few.jsonl", 50)  # 100 models: all shown
    done = lmmprobe("elo", votes, "--shuffles", "0")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "b00049" in done.stdout and "not shown" not in done.stdout
