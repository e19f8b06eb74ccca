"""Human pairwise battles: average win rates and Elo ratings, HEMM's and lmmprobe's.

HEMM (Liang et al., 2024, "HEMM: Holistic Evaluation of Multimodal Foundation Models") has
people compare two models' answers to the same input and vote for one or call a tie, then
ranks models two ways. Both are reproduced exactly as HEMM's released code
(``hemm/evaluation/calc_elo.py``) computes them:

- HEMM's average win rate (`hemm_win_rates`). For models a and b, ``w_ab = W_ab / (T_ab -
  ties_ab)``: battles a won over the battles between them that were not ties. A model's win
  rate is the mean of its row of ``w`` over **all** M models, its own zero diagonal included;
  a pair that never met or only tied gives 0/0 = NaN, and that NaN makes the whole row NaN.
- lmmprobe's win rate over opponents met (`win_rates`): the mean of ``w_ab`` over the opponents
  a model met with at least one decided battle. With every pair met and decided it is HEMM's
  times M / (M - 1); the ranking is the same.
- Elo (Elo, 1978, as in Chatbot Arena). Every model starts at 1000. A battle between ratings
  ``R_a`` and ``R_b`` expects ``E_a = 1 / (1 + base^((R_b - R_a) / scale))`` for a, and moves
  ``R_a += K (S_a - E_a)`` and ``R_b += K ((1 - S_a) - E_b)``, with ``S_a`` = 1 for a win,
  0 for a loss and 0.5 for a tie; K = 4, scale 400, base 10. The result depends on the order of
  battles, so HEMM shuffles the battle list 1,000 times (each shuffle applied to the list the
  previous one left), replays each order and reports each model's median (`elo_ratings`), which
  it prints as ``int(median + 0.5)`` (`hemm_rounded`).

`elo_table` joins them into one row per model; ``lmmprobe elo`` prints it and the arena's live
leaderboard (``lmmprobe serve``) shows it, so both give the same numbers by construction.

Battle files are JSONL (one object per line) or CSV (a header row), with fields ``model_a``,
``model_b`` and ``winner``; ``winner`` is ``a``, ``b`` or ``tie`` (``model_a``/``model_b``,
either model's own name, and Chatbot Arena's ``tie (bothbad)`` are accepted too).
"""

from __future__ import annotations

import csv
import json
import math
import random
import statistics
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import numpy.typing as npt

from lmmprobe._file_kind import not_regular_file
from lmmprobe.schema.text import repeated_column, safe_text

__all__ = [
    "MAX_ELO_RATINGS",
    "MAX_ELO_REPLAYS",
    "MAX_ELO_SHUFFLES",
    "WIN_RATE_DEFINITIONS",
    "Battle",
    "BattleFileError",
    "EloTooLargeError",
    "WinRateDefinition",
    "check_elo_size",
    "elo_ratings",
    "elo_sequence",
    "elo_table",
    "hemm_rounded",
    "hemm_win_rates",
    "load_battles",
    "win_rates",
]

WinRateDefinition = Literal["hemm", "met"]
"""``"hemm"``: HEMM's average win rate (`hemm_win_rates`); ``"met"``: lmmprobe's win rate
over opponents met (`win_rates`)."""

WIN_RATE_DEFINITIONS: dict[str, str] = {
    "hemm": "HEMM's average win rate (calc_elo.py): mean over all M models of "
    "wins / (battles - ties), own zero diagonal included; NaN when a pair never met or only tied",
    "met": "lmmprobe's win rate over opponents met: mean of wins / (wins + losses) over the "
    "opponents with at least one decided battle",
}
"""Plain-language description of each win-rate definition, as results name them."""

Winner = Literal["a", "b", "tie"]

_MAX_ORDER_CELLS = 1 << 22
"""Upper bound on orders x battles held at once by `elo_ratings`."""

MAX_ELO_RATINGS = 1 << 25
"""The most ratings (models x shuffles) `elo_ratings` holds to take each model's median: 256 MiB
of float64, e.g. 33,554 models over HEMM's 1,000 shuffles. The median of each model needs every
order's rating of it; a larger file (or more shuffles) is refused before any is replayed."""

MAX_ELO_SHUFFLES = 100_000
"""The most shuffled orders `elo_ratings` replays: a hundred times HEMM's 1,000. Each order costs
a shuffle of the whole list besides its replay, so even a short file over millions of orders
runs for many minutes; more orders change a median in its last decimals only."""

MAX_ELO_REPLAYS = 100_000_000
"""The most battles `elo_ratings` replays in all (battles x shuffles), about a minute and a half
of work: 100,000 votes over HEMM's 1,000 shuffles. An arena's or HEMM's tens of thousands of
votes fit well inside; a larger file (or more shuffles) is refused before any is replayed, the
message saying how many shuffles fit, rather than left running for half an hour in silence."""

_WINNERS: dict[str, Winner] = {
    "a": "a",
    "model_a": "a",
    "b": "b",
    "model_b": "b",
    "tie": "tie",
    "tie (bothbad)": "tie",
    "both_bad": "tie",
    "draw": "tie",
}


@dataclass(frozen=True, slots=True)
class Battle:
    """One human vote between two models' answers.

    Attributes:
        model_a: The first model.
        model_b: The second model (a different one).
        winner: ``"a"``, ``"b"`` or ``"tie"``.

    """

    model_a: str
    model_b: str
    winner: Winner

    def __post_init__(self) -> None:
        for name in ("model_a", "model_b"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{name} must be a non-empty model name, got {value!r}")
        if self.model_a == self.model_b:
            raise ValueError(f"a battle needs two different models, got {self.model_a!r} twice")
        if self.winner not in ("a", "b", "tie"):
            raise ValueError(f"winner must be 'a', 'b' or 'tie', got {self.winner!r}")


class BattleFileError(ValueError):
    """A battle file is unreadable or holds a bad row (the message names file:line)."""


class EloTooLargeError(ValueError):
    """A rating past `MAX_ELO_RATINGS`, `MAX_ELO_SHUFFLES` or `MAX_ELO_REPLAYS` (see `fit`)."""

    def __init__(self, message: str, fit: int) -> None:
        super().__init__(message)
        self.fit = fit
        """The most shuffles that fit for these models (0: none, replay the file order)."""


def _battle_from_row(row: Any, where: str) -> Battle:
    if not isinstance(row, dict):
        raise BattleFileError(f"{where}: expected an object with model_a, model_b, winner")
    missing = [k for k in ("model_a", "model_b", "winner") if row.get(k) in (None, "")]
    if missing:
        raise BattleFileError(f"{where}: missing field(s) {', '.join(missing)}")
    for key in ("model_a", "model_b", "winner"):
        if isinstance(row[key], dict | list):
            kind = "an object" if isinstance(row[key], dict) else "a list"
            raise BattleFileError(f"{where}: {key} must be a name, not {kind}")
    a, b = safe_text(str(row["model_a"])).strip(), safe_text(str(row["model_b"])).strip()
    raw = safe_text(str(row["winner"])).strip()
    winner: Winner | None = _WINNERS.get(raw.lower())
    if winner is None:
        winner = "a" if raw == a else "b" if raw == b else None
    if winner is None:
        raise BattleFileError(
            f"{where}: winner {raw!r} is not 'a', 'b', 'tie' or one of the two models"
        )
    try:
        return Battle(a, b, winner)
    except ValueError as exc:
        raise BattleFileError(f"{where}: {exc}") from exc


MAX_LINE_BYTES = 1 << 20
"""Longest line (or CSV field) of a battle file: a vote names two models and a winner."""


def load_battles(path: str | Path) -> list[Battle]:
    """Read battles from a JSONL or CSV file (chosen by the ``.csv`` extension).

    Blank lines (and, in JSONL, lines starting with ``#``) are skipped. A vote file is outside
    text: a line over `MAX_LINE_BYTES`, bytes that are not UTF-8, JSON nested past what the
    decoder follows and a CSV field too large are refused naming ``file:line``; a lone
    surrogate in a name (valid JSON) becomes U+FFFD (`lmmprobe.schema.text.safe_text`).

    Args:
        path: The battle file.

    Returns:
        The battles in file order.

    Raises:
        FileNotFoundError: The file does not exist (or is not a regular file).
        BattleFileError: A row is not valid JSON, lacks a field, names the same model twice or
            has an unknown winner, or the file is unreadable as above; the message names
            ``file:line``.

    """
    p = Path(path)
    # A FIFO, a device or a kernel file is no file of votes: reading one could hang.
    unreadable = not_regular_file(p, "battles")
    if unreadable or not p.is_file():
        raise FileNotFoundError(unreadable or f"battle file {p} does not exist")
    if p.suffix.lower() == ".csv":
        return _csv_battles(p)
    battles: list[Battle] = []
    with p.open("rb") as f:
        for number, text in enumerate(_lines(p, f), start=1):
            if not text or text.startswith("#"):
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                raise BattleFileError(f"{p}:{number}: not valid JSON ({exc.msg})") from exc
            except RecursionError:  # past what the decoder follows (about 1,000 levels)
                raise BattleFileError(f"{p}:{number}: nested too deeply to read") from None
            battles.append(_battle_from_row(row, f"{p}:{number}"))
    return battles


def _lines(path: Path, f: IO[bytes]) -> Iterator[str]:
    """`f`'s lines decoded and stripped, each at most `MAX_LINE_BYTES` long (else refused)."""
    number = 0
    while line := f.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            raise BattleFileError(
                f"{path}:{number}: a line longer than {MAX_LINE_BYTES:,} bytes; a vote names "
                "two models and a winner"
            )
        try:
            yield line.decode("utf-8-sig" if number == 1 else "utf-8").strip()
        except UnicodeDecodeError as exc:
            raise BattleFileError(
                f"{path}:{number}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
                f"column {exc.start + 1}); save the file as UTF-8"
            ) from None


def _csv_battles(path: Path) -> list[Battle]:
    battles: list[Battle] = []
    read = 0  # lines handed to the CSV reader: where a malformed row ends

    def counted(lines: Iterator[str]) -> Iterator[str]:
        nonlocal read
        for line in lines:
            read += 1
            yield line

    with path.open("rb") as f:
        # Stripped lines lose a quoted field's line breaks: rows of votes have none, and a
        # field that did is refused below as a malformed row.
        reader = csv.DictReader(counted(_lines(path, f)))
        try:
            names = list(reader.fieldnames or [])
            # A row's dict would keep the last of two columns of one name silently: a vote
            # between other models, or another winner.
            if twice := repeated_column(names):
                raise BattleFileError(f"{path}:1: {twice}")
            need = {"model_a", "model_b", "winner"} - set(names)
            if need:
                raise BattleFileError(
                    f"{path}:1: the CSV header lacks column(s) {', '.join(sorted(need))}"
                )
            for row in reader:
                if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
                    continue
                battles.append(_battle_from_row(row, f"{path}:{reader.line_num}"))
        except csv.Error as exc:
            raise BattleFileError(f"{path}:{read}: not a CSV row ({exc})") from None
    return battles


def win_rates(
    battles: Iterable[Battle], *, ties: Literal["ignore", "half"] = "ignore"
) -> dict[str, float]:
    """Win rate over opponents met (lmmprobe's definition), of every model.

    Not HEMM's number: HEMM's released code averages over all M models, itself included, and
    gives NaN when any pair never met or only tied (`hemm_win_rates`). This one averages over
    the opponents met instead, so with every pair met and decided it is HEMM's x M / (M - 1).

    Args:
        battles: The votes.
        ties: ``"ignore"`` (as HEMM: a tie is a win for neither side) or ``"half"`` (half a
            win for each side).

    Returns:
        Model -> mean over its opponents of ``N_model / (N_model + N_opponent)``. An opponent
        against whom every battle was a tie (with ``ties="ignore"``) is left out of the mean;
        a model with no decided battle at all gets NaN. Models are sorted by name.

    Raises:
        ValueError: `ties` is unknown.

    """
    if ties not in ("ignore", "half"):
        raise ValueError(f"ties must be 'ignore' or 'half', got {ties!r}")
    wins: defaultdict[tuple[str, str], float] = defaultdict(float)
    models: set[str] = set()
    for battle in battles:
        a, b = battle.model_a, battle.model_b
        models.update((a, b))
        # Touch both cells so a pair that only tied is still known to have met.
        wins[(a, b)] += 0.0
        wins[(b, a)] += 0.0
        if battle.winner == "a":
            wins[(a, b)] += 1.0
        elif battle.winner == "b":
            wins[(b, a)] += 1.0
        elif ties == "half":
            wins[(a, b)] += 0.5
            wins[(b, a)] += 0.5
    rates: defaultdict[str, list[float]] = defaultdict(list)
    for (a, b), n_a in wins.items():
        total = n_a + wins[(b, a)]
        if total > 0:
            rates[a].append(n_a / total)
    return {m: (statistics.fmean(rates[m]) if rates[m] else math.nan) for m in sorted(models)}


def _check_elo_params(k: float, scale: float, base: float) -> None:
    if not (math.isfinite(k) and k > 0):
        raise ValueError(f"k must be a positive number, got {k}")
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive number, got {scale}")
    if not (math.isfinite(base) and base > 1):
        raise ValueError(f"base must be a number > 1, got {base}")


def elo_sequence(
    battles: Sequence[Battle],
    *,
    k: float = 4.0,
    initial: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
) -> dict[str, float]:
    """Elo ratings after replaying the battles once, in the order given.

    Args:
        battles: The votes, in the order to replay them.
        k: Update step K (HEMM: 4).
        initial: Every model's starting rating (HEMM: 1000).
        scale: Rating difference at which the expected score odds are ``base`` to 1 (400).
        base: Base of the logistic expectation (10).

    Returns:
        Model -> final rating, sorted by name.

    Raises:
        ValueError: A parameter is out of range.

    """
    _check_elo_params(k, scale, base)
    rating: dict[str, float] = {}
    for battle in battles:
        ra = rating.setdefault(battle.model_a, initial)
        rb = rating.setdefault(battle.model_b, initial)
        ea = 1.0 / (1.0 + base ** ((rb - ra) / scale))
        eb = 1.0 / (1.0 + base ** ((ra - rb) / scale))
        sa = 1.0 if battle.winner == "a" else 0.0 if battle.winner == "b" else 0.5
        rating[battle.model_a] = ra + k * (sa - ea)
        rating[battle.model_b] = rb + k * ((1.0 - sa) - eb)
    return dict(sorted(rating.items()))


def elo_ratings(
    battles: Iterable[Battle],
    *,
    k: float = 4.0,
    initial: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    shuffles: int = 1000,
    seed: int = 0,
) -> dict[str, float]:
    """HEMM's Elo ratings: each model's median rating over shuffled orders of the battles.

    The orders are HEMM's (``get_bootstrap_result`` in ``calc_elo.py``): one battle list is
    shuffled ``shuffles`` times with Python's ``random.shuffle``, each shuffle applied to the
    order the previous one left, and the battles are replayed from scratch after every shuffle.
    Drawing them from ``random.Random(seed)`` gives exactly the orders HEMM gets after
    ``random.seed(seed)``, and the medians are bit-identical to HEMM's (tests/parity). The
    orders are then replayed side by side (one row of a ratings matrix per order); the
    exponentiation goes through Python's ``**``, because numpy's vectorized power can differ
    from it in the last bit on some CPUs.

    Args:
        battles: The votes, in file order (HEMM shuffles the list as it was built).
        k: Update step K (HEMM: 4).
        initial: Starting rating (HEMM: 1000).
        scale: Logistic scale (400).
        base: Logistic base (10).
        shuffles: Number of shuffled orders (HEMM: 1,000); 0 replays the given order once,
            as `elo_sequence`.
        seed: Seed of ``random.Random`` drawing the shuffles, so the result is reproducible.

    Returns:
        Model -> median final rating over the orders (the mean of the two middle ones for an
        even count, as pandas' median), sorted by name.

    Memory: the ratings of every model after every order are held for the medians (models x
    shuffles float64, at most `MAX_ELO_RATINGS`), plus a block of orders being replayed. Time:
    battles x shuffles replays, at most `MAX_ELO_REPLAYS`, and at most `MAX_ELO_SHUFFLES` orders.

    Raises:
        EloTooLargeError: Models x shuffles is over `MAX_ELO_RATINGS`, shuffles over
            `MAX_ELO_SHUFFLES` or battles x shuffles over `MAX_ELO_REPLAYS` (checked before any
            order is replayed).
        ValueError: `shuffles` is negative or a parameter is out of range.

    """
    order = list(battles)
    if shuffles < 0:
        raise ValueError(f"shuffles must be >= 0, got {shuffles}")
    if shuffles == 0:
        return elo_sequence(order, k=k, initial=initial, scale=scale, base=base)
    _check_elo_params(k, scale, base)
    models = sorted({m for b in order for m in (b.model_a, b.model_b)})
    if not order:
        return {}
    check_elo_size(len(order), len(models), shuffles)
    index = {m: i for i, m in enumerate(models)}
    a = np.array([index[b.model_a] for b in order], dtype=np.intp)
    b = np.array([index[b.model_b] for b in order], dtype=np.intp)
    score_a = np.array([1.0 if x.winner == "a" else 0.0 if x.winner == "b" else 0.5 for x in order])
    rng = random.Random(seed)
    # Shuffling a list of positions makes the same draws as shuffling the battles themselves
    # (random.shuffle only looks at the length), and keeping one list makes them cumulative.
    positions = list(range(len(order)))
    n = len(order)
    # One (orders, models) matrix of final ratings, each block of orders replayed in place in
    # its rows: no block is copied into it afterwards.
    finals: npt.NDArray[np.float64] = np.empty((shuffles, len(models)))
    # Orders are replayed in blocks so the (orders, battles) permutation matrix stays small.
    block = max(1, _MAX_ORDER_CELLS // n)
    for start in range(0, shuffles, block):
        rows = min(block, shuffles - start)
        perms = np.empty((rows, n), dtype=np.intp)
        for r in range(rows):
            rng.shuffle(positions)
            perms[r] = positions
        ratings = finals[start : start + rows]
        ratings.fill(float(initial))
        which = np.arange(rows)
        for t in range(n):
            step = perms[:, t]
            ia, ib, sa = a[step], b[step], score_a[step]
            ra, rb = ratings[which, ia], ratings[which, ib]
            pa = np.array([base**x for x in ((rb - ra) / scale).tolist()])
            pb = np.array([base**x for x in ((ra - rb) / scale).tolist()])
            ea = 1.0 / (1.0 + pa)
            eb = 1.0 / (1.0 + pb)
            # ia != ib in every row (a battle has two different models), so the two
            # scattered updates never touch the same cell.
            ratings[which, ia] = ra + k * (sa - ea)
            ratings[which, ib] = rb + k * ((1.0 - sa) - eb)
    # The median partitions a copy of what it is given: a block of models at a time keeps that
    # copy small. Each model's median is its own column's, so the blocks change no value.
    medians = np.empty(len(models))
    width = max(1, _MAX_ORDER_CELLS // shuffles)
    for first in range(0, len(models), width):
        medians[first : first + width] = np.median(finals[:, first : first + width], axis=0)
    return {m: float(v) for m, v in zip(models, medians, strict=True)}


def check_elo_size(battles: int, models: int, shuffles: int) -> None:
    """Refuse a rating past `MAX_ELO_RATINGS`, `MAX_ELO_SHUFFLES` or `MAX_ELO_REPLAYS`.

    `elo_ratings` checks it before replaying; a caller with costly work before the rating
    (a judge's calls) checks it first.

    Args:
        battles: The votes to rate (at least one).
        models: The models among them (at least two).
        shuffles: The shuffled orders asked for.

    Raises:
        EloTooLargeError: The first limit passed, with the most shuffles fitting all three.

    """
    fit = min(MAX_ELO_RATINGS // models, MAX_ELO_SHUFFLES, MAX_ELO_REPLAYS // battles)
    if models * shuffles > MAX_ELO_RATINGS:
        raise EloTooLargeError(
            f"{models:,} models over {shuffles:,} shuffles is {models * shuffles:,} "
            f"ratings to hold for the medians, more than the {MAX_ELO_RATINGS:,} lmmprobe holds",
            fit,
        )
    if shuffles > MAX_ELO_SHUFFLES:
        raise EloTooLargeError(
            f"{shuffles:,} shuffles is more than the {MAX_ELO_SHUFFLES:,} lmmprobe replays "
            "(HEMM takes 1,000)",
            fit,
        )
    if battles * shuffles > MAX_ELO_REPLAYS:
        raise EloTooLargeError(
            f"{battles:,} votes over {shuffles:,} shuffles is {battles * shuffles:,} battles to "
            f"replay, more than the {MAX_ELO_REPLAYS:,} lmmprobe replays in one rating "
            "(minutes of work)",
            fit,
        )


def hemm_rounded(ratings: Mapping[str, float]) -> dict[str, int]:
    """Ratings as HEMM prints them: ``(median + 0.5).astype(int)``.

    That truncates toward zero after adding one half, i.e. rounds half up for the positive
    ratings Elo gives (1000.5 -> 1001, 999.49 -> 999).

    Args:
        ratings: Model -> rating (`elo_ratings`).

    Returns:
        Model -> integer rating, same order.

    """
    return {m: int(float(v) + 0.5) for m, v in ratings.items()}


def hemm_win_rates(
    battles: Iterable[Battle], *, models: Sequence[str] | None = None
) -> dict[str, float]:
    """HEMM's average win rate, exactly as ``hemm/evaluation/calc_elo.py`` computes it.

    With ``W_ij`` the battles i won against j, ``T_ij`` all battles between them and
    ``ties_ij`` their ties, ``w_ij = W_ij / (T_ij - ties_ij)``, the diagonal set to 0, and a
    model's win rate is the mean of its row over all M models (its own zero included). A pair
    that never met, or only tied, gives 0/0 = NaN, and a NaN in a row makes that model's win
    rate NaN, as in the reference. With every pair met and decided this is the win rate over
    opponents met (`win_rates`) times (M - 1) / M.

    Args:
        battles: The votes.
        models: The model set and its order (HEMM's ``models`` list). The order only decides
            the summation order of the row means (their last bit) and the order of the result;
            a model listed but in no battle has a NaN row and makes every rate NaN, as in the
            reference. Default: the models of the battles, sorted by name.

    Returns:
        Model -> win rate (NaN where HEMM's is), in the order of `models`.

    Raises:
        ValueError: `models` repeats a model or lacks one that is in a battle.

    """
    order = list(battles)
    names = (
        list(models)
        if models is not None
        else sorted({m for b in order for m in (b.model_a, b.model_b)})
    )
    if len(set(names)) != len(names):
        raise ValueError("models lists a model twice")
    index = {m: i for i, m in enumerate(names)}
    size = len(names)
    # Counts per pair that met, not M x M tables: a file of battles between thousands of
    # models would ask for gigabytes. (wins of the first, wins of the second, all, ties)
    pairs: dict[tuple[int, int], list[int]] = {}
    for battle in order:
        i, j = index.get(battle.model_a), index.get(battle.model_b)
        if i is None or j is None:
            missing = battle.model_a if i is None else battle.model_b
            raise ValueError(f"model {missing!r} of a battle is not in models")
        lo, hi = (i, j) if i < j else (j, i)
        counts = pairs.setdefault((lo, hi), [0, 0, 0, 0])
        counts[2] += 1
        if battle.winner == "tie":
            counts[3] += 1
        elif (battle.winner == "a") == (i == lo):
            counts[0] += 1
        else:
            counts[1] += 1
    decided: list[dict[int, float]] = [{} for _ in range(size)]
    for (lo, hi), (w_lo, w_hi, total, tied) in pairs.items():
        if total - tied:  # 0/0 (never decided) is NaN: left out, and the row is NaN below
            decided[lo][hi] = w_lo / (total - tied)
            decided[hi][lo] = w_hi / (total - tied)
    rates: dict[str, float] = {}
    for i, name in enumerate(names):
        if len(decided[i]) < size - 1:  # a pair never met or only tied: NaN in the row
            rates[name] = math.nan
            continue
        # A model decided against every other one has a battle with each: building its row
        # costs no more than those battles did. The row and its mean are the reference's.
        row = np.zeros(size)
        for j, rate in decided[i].items():
            row[j] = rate
        rates[name] = float(row.mean())
    return rates


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def elo_table(
    battles: Sequence[Battle],
    *,
    k: float = 4.0,
    shuffles: int = 1000,
    seed: int = 0,
    win_rate: WinRateDefinition = "hemm",
) -> list[dict[str, Any]]:
    """One row per model: median Elo, average win rate and its battle record, best Elo first.

    The one implementation behind ``lmmprobe elo`` and the arena's leaderboard.

    Args:
        battles: The votes, in file (or vote) order: the shuffled orders start from it.
        k: Elo update step (HEMM: 4).
        shuffles: Shuffled battle orders the median is taken over (HEMM: 1,000).
        seed: Seed of the orders (``random.Random(seed)``, HEMM's ``random.shuffle`` orders).
        win_rate: Which definition ``win_rate`` holds: ``"hemm"`` (HEMM's average win rate)
            or ``"met"`` (lmmprobe's win rate over opponents met).

    Returns:
        Dicts with ``model``, ``elo``, ``elo_hemm_int`` (HEMM's printed ``int(median + 0.5)``),
        ``win_rate`` (the chosen definition), ``hemm_win_rate`` and
        ``win_rate_over_opponents_met`` (None where the value is NaN: for HEMM's, some pair of
        models never met or only tied; for ours, the model won or lost no battle), ``battles``,
        ``wins``, ``losses`` and ``ties``; sorted by Elo (descending), then name.

    Raises:
        EloTooLargeError: The votes are too many to rate over `shuffles` (`elo_ratings`).
        ValueError: `k`, `shuffles` or `win_rate` is out of range.

    """
    if win_rate not in WIN_RATE_DEFINITIONS:
        raise ValueError(
            f"win_rate must be one of {', '.join(WIN_RATE_DEFINITIONS)}, got {win_rate!r}"
        )
    ratings = elo_ratings(battles, k=k, shuffles=shuffles, seed=seed)
    rounded = hemm_rounded(ratings)
    hemm = hemm_win_rates(battles)
    met = win_rates(battles)
    record: dict[str, dict[str, int]] = {
        m: {"battles": 0, "wins": 0, "losses": 0, "ties": 0} for m in ratings
    }
    for b in battles:
        for side, model in (("a", b.model_a), ("b", b.model_b)):
            rec = record[model]
            rec["battles"] += 1
            if b.winner == "tie":
                rec["ties"] += 1
            else:
                rec["wins" if b.winner == side else "losses"] += 1
    order = sorted(ratings, key=lambda m: (-ratings[m], m))
    return [
        {
            "model": m,
            "elo": ratings[m],
            "elo_hemm_int": rounded[m],
            "win_rate": _finite((hemm if win_rate == "hemm" else met)[m]),
            "hemm_win_rate": _finite(hemm[m]),
            "win_rate_over_opponents_met": _finite(met[m]),
            **record[m],
        }
        for m in order
    ]
