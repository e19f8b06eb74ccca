"""Agreement between raters: judges with judges, judges with rules, judges with people.

Five statistics, each on plain Python lists so a caller needs no table library:

- `percent_agreement(a, b)`: the share of items two raters label the same.
- `cohen_kappa(a, b)`: Cohen's (1960) kappa for two raters, ``(p_o - p_e) / (1 - p_e)`` with
  ``p_e`` from each rater's own label frequencies; unweighted. Equal to scikit-learn's
  ``cohen_kappa_score`` (tests/metrics/test_agreement.py checks it on random data).
- `fleiss_kappa(ratings)`: Fleiss' (1971) kappa for any number of raters, one row per item and
  one label per rater (every row as long as the first). Equal to statsmodels'
  ``fleiss_kappa(aggregate_raters(ratings)[0])`` (checked the same way).
- `krippendorff_alpha(ratings, level)`: Krippendorff's alpha, one row per rater and one column
  per item, ``None`` where a rater gave no rating, at the nominal, interval or ordinal level;
  computed by the `krippendorff` package (PyPI, ``lmmprobe[metrics]``).
- `position_consistency(first, swapped)`: the share of pairwise verdicts that name the same
  winner when the two answers are shown in the other order (a tie both times counts as
  consistent, as in Zheng et al., 2023, "Judging LLM-as-a-Judge", Table 2).

Degenerate cases have one documented answer each, so a report never shows a NaN:

- No items (or, for alpha, no item rated by two raters): `ValueError`.
- Lists of different lengths, rows of different lengths: `ValueError` naming both lengths.
- Raters that agree on every item give 1.0 even when one category was used throughout, where
  the chance correction is 0/0 (scikit-learn and statsmodels return NaN there; the
  `krippendorff` package raises): perfect agreement is what was observed.
- Raters that disagree while chance agreement is 1 cannot happen (``p_e = 1`` needs every label
  the same), so every other case is the textbook formula.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Literal

from lmmprobe._optional import require

__all__ = [
    "AgreementLevel",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    "percent_agreement",
    "position_consistency",
]

AgreementLevel = Literal["nominal", "interval", "ordinal"]
"""Krippendorff's levels of measurement lmmprobe offers: labels, numbers, ordered ranks."""


def _paired(a: Sequence[Hashable], b: Sequence[Hashable], what: str) -> int:
    if len(a) != len(b):
        raise ValueError(f"{what} needs two equally long lists, got {len(a)} and {len(b)} items")
    if not a:
        raise ValueError(f"{what} needs at least one item, got none")
    return len(a)


def percent_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """The share of items on which two raters give the same label.

    Args:
        a: One rater's labels, one per item.
        b: The other rater's labels for the same items, in the same order.

    Returns:
        Matching items / items, in [0, 1].

    Raises:
        ValueError: The lists differ in length or are empty.

    """
    n = _paired(a, b, "percent_agreement")
    return sum(x == y for x, y in zip(a, b, strict=True)) / n


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa (unweighted) between two raters.

    ``kappa = (p_o - p_e) / (1 - p_e)``, ``p_o`` the observed agreement and ``p_e = sum_k
    (n_ak / n)(n_bk / n)`` the agreement expected from each rater's label frequencies.

    Args:
        a: One rater's labels, one per item (any hashable labels: ``"A"``, ``"tie"``, 1).
        b: The other rater's labels for the same items.

    Returns:
        Kappa in [-1, 1]; 1.0 when the raters agree on every item (also when they used one
        label throughout, where the formula is 0/0).

    Raises:
        ValueError: The lists differ in length or are empty.

    """
    n = _paired(a, b, "cohen_kappa")
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    if observed == 1.0:
        return 1.0
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[k] * count_b[k] for k in count_a) / (n * n)
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float:
    """Fleiss' kappa: agreement among a fixed number of raters per item.

    With ``n`` raters per item, ``P_i = (sum_k n_ik^2 - n) / (n (n - 1))`` for item i,
    ``P̄`` their mean, ``p_k`` the share of all ratings in category k and ``P_e = sum_k p_k^2``:
    ``kappa = (P̄ - P_e) / (1 - P_e)``.

    Args:
        ratings: One row per item, one label per rater; every row equally long (at least 2).

    Returns:
        Kappa (at most 1); 1.0 when every item's raters agree (also when one label was used
        throughout, where the formula is 0/0).

    Raises:
        ValueError: No items, fewer than two raters, or rows of different lengths (the first
            such row is named).

    """
    if not ratings:
        raise ValueError("fleiss_kappa needs at least one item, got none")
    raters = len(ratings[0])
    if raters < 2:
        raise ValueError(f"fleiss_kappa needs at least 2 ratings per item, row 0 has {raters}")
    for index, row in enumerate(ratings):
        if len(row) != raters:
            raise ValueError(
                f"fleiss_kappa needs the same number of ratings per item: row 0 has {raters}, "
                f"row {index} has {len(row)}"
            )
    totals: Counter[Hashable] = Counter()
    agreement = 0.0
    for row in ratings:
        counts = Counter(row)
        totals.update(counts)
        agreement += (sum(c * c for c in counts.values()) - raters) / (raters * (raters - 1))
    mean_agreement = agreement / len(ratings)
    if mean_agreement == 1.0:
        return 1.0
    all_ratings = len(ratings) * raters
    expected = sum((c / all_ratings) ** 2 for c in totals.values())
    return (mean_agreement - expected) / (1.0 - expected)


def krippendorff_alpha(
    ratings: Sequence[Sequence[Hashable | None]], level: AgreementLevel = "nominal"
) -> float:
    """Krippendorff's alpha over raters with missing ratings.

    ``alpha = 1 - D_o / D_e`` over the items at least two raters rated, with the squared
    difference (interval), the rank distance (ordinal) or 0/1 (nominal) between values, as
    computed by the `krippendorff` package.

    Args:
        ratings: One row per rater, one column per item, ``None`` (or NaN) where the rater
            gave no rating. Nominal labels may be any hashable values (strings are coded as
            integers first); interval and ordinal ratings must be numbers.
        level: ``"nominal"``, ``"interval"`` or ``"ordinal"``.

    Returns:
        Alpha (at most 1); 1.0 when every rating of every item rated twice or more is the
        same value (where the package raises "more than one value in the domain").

    Raises:
        ValueError: Fewer than two raters, rows of different lengths, no item rated by two
            raters, a non-number at the interval or ordinal level, or an unknown level.
        ImportError: The `krippendorff` package is missing (``pip install 'lmmprobe[metrics]'``).

    """
    if level not in ("nominal", "interval", "ordinal"):
        raise ValueError(
            f"krippendorff_alpha: unknown level {level!r}; use nominal, interval or ordinal"
        )
    if len(ratings) < 2:
        raise ValueError(f"krippendorff_alpha needs at least 2 raters (rows), got {len(ratings)}")
    items = len(ratings[0])
    for index, row in enumerate(ratings):
        if len(row) != items:
            raise ValueError(
                f"krippendorff_alpha needs one column per item for every rater: row 0 has "
                f"{items}, row {index} has {len(row)}"
            )
    codes: dict[Hashable, int] = {}
    matrix: list[list[float]] = []
    for rater, row in enumerate(ratings):
        coded: list[float] = []
        for item, value in enumerate(row):
            if value is None or (isinstance(value, float) and math.isnan(value)):
                coded.append(math.nan)
            elif level == "nominal":
                coded.append(float(codes.setdefault(value, len(codes))))
            elif isinstance(value, int | float) and not isinstance(value, bool):
                coded.append(float(value))
            else:
                raise ValueError(
                    f"krippendorff_alpha: rater {rater}, item {item}: {value!r} is not a number "
                    f"({level} level)"
                )
        matrix.append(coded)
    pairable = [[row[i] for row in matrix if not math.isnan(row[i])] for i in range(items)]
    pairable = [values for values in pairable if len(values) >= 2]
    if not pairable:
        raise ValueError("krippendorff_alpha needs at least one item rated by 2 raters, got none")
    if len({v for values in pairable for v in values}) == 1:
        return 1.0
    (krippendorff,) = require("krippendorff", extra="metrics", purpose="Krippendorff's alpha")
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def position_consistency(first: Sequence[Hashable], swapped: Sequence[Hashable]) -> float:
    """The share of pairwise verdicts unchanged when the two answers swap places.

    Both lists name the winner by the answer, not by the position it was shown in: ``"A"``
    is the same answer in both orders (the caller maps the swapped order's positional
    verdict back). A verdict is consistent when both orders give the same value; a tie
    both times is consistent, a win one way and a tie the other is not.

    Args:
        first: Verdicts with answer A shown first (``"A"``, ``"B"``, ``"tie"``).
        swapped: Verdicts on the same pairs with answer B shown first, in answer terms.

    Returns:
        Consistent pairs / pairs, in [0, 1].

    Raises:
        ValueError: The lists differ in length or are empty.

    """
    n = _paired(first, swapped, "position_consistency")
    return sum(x == y for x, y in zip(first, swapped, strict=True)) / n
