"""Agreement between benchmarks: rank correlation of model rankings and kernel MMD of images.

Dysca (Zhang et al., 2024, "Dysca: A Dynamic and Scalable Benchmark for Evaluating Perception
Ability of LVLMs") validates a synthetic benchmark two ways: the models' ranking on it should
agree with their ranking on real benchmarks (Spearman's rho and Kendall's tau between the two
score lists), and its images should be distributed like real ones (kernel maximum mean
discrepancy, Gretton et al., 2012, "A Kernel Two-Sample Test", between CLIP image embeddings
of the two sets, with a Gaussian RBF kernel).

scipy is imported inside `rank_correlation`, so importing `lmmprobe.metrics` stays light.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["median_heuristic_gamma", "mmd_rbf", "rank_correlation"]

_SCIPY_HINT = "pip install 'lmmprobe[metrics]'"


def rank_correlation(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, Any]:
    """Spearman's rho and Kendall's tau between two benchmarks' scores of the same models.

    Only models scored by both benchmarks count. Ties are handled as scipy does (average ranks
    for rho, tau-b for tau); p-values are scipy's two-sided ones (exact for small samples
    without ties where scipy computes it so).

    Args:
        a: Model -> score on the first benchmark.
        b: Model -> score on the second benchmark.

    Returns:
        ``{"models": [...], "n": n, "spearman_rho": ..., "spearman_p": ...,
        "kendall_tau": ..., "kendall_p": ...}``; a correlation is NaN when one side is
        constant over the common models.

    Raises:
        ValueError: Fewer than 3 models are common to both, or a score is not finite.
        ImportError: scipy is missing.

    """
    models = sorted(set(a) & set(b))
    if len(models) < 3:
        raise ValueError(
            f"rank correlation needs at least 3 models scored by both benchmarks, got "
            f"{len(models)} ({', '.join(models) or 'none'})"
        )
    x = _finite([a[m] for m in models], models, "a")
    y = _finite([b[m] for m in models], models, "b")
    try:
        from scipy import stats  # type: ignore[import-untyped]
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"rank correlation needs scipy ({exc}); run: {_SCIPY_HINT}") from exc
    # A constant side gives NaN, which the docstring promises and callers explain; scipy's
    # warning about it would only reach the user's terminal as noise.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        rho = stats.spearmanr(x, y)
        tau = stats.kendalltau(x, y)
    return {
        "models": models,
        "n": len(models),
        "spearman_rho": float(rho.statistic),
        "spearman_p": float(rho.pvalue),
        "kendall_tau": float(tau.statistic),
        "kendall_p": float(tau.pvalue),
    }


def _finite(values: list[float], models: list[str], side: str) -> npt.NDArray[np.float64]:
    out = np.asarray(values, dtype=np.float64)
    for model, value in zip(models, out, strict=True):
        if not math.isfinite(value):
            raise ValueError(f"{side}[{model!r}] is {value}; scores must be finite numbers")
    return out


def _squared_distances(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    # ||x||^2 + ||y||^2 - 2 x.y, clipped at 0 against rounding.
    d: npt.NDArray[np.float64] = (
        np.sum(x * x, axis=1)[:, None] + np.sum(y * y, axis=1)[None, :] - 2.0 * (x @ y.T)
    )
    return np.maximum(d, 0.0)


def median_heuristic_gamma(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """RBF ``gamma`` from the median heuristic: 1 / median squared distance of the pooled set.

    Args:
        x: ``(n, d)`` points.
        y: ``(m, d)`` points.

    Returns:
        ``1 / median(||p - q||^2)`` over all pairs of distinct points of ``x`` and ``y`` pooled;
        1.0 when that median is 0 (all points equal).

    """
    pooled = np.concatenate([_points(x, "x"), _points(y, "y")], axis=0)
    d = _squared_distances(pooled, pooled)
    upper = d[np.triu_indices(pooled.shape[0], k=1)]
    med = float(np.median(upper)) if upper.size else 0.0
    return 1.0 / med if med > 0 else 1.0


def _points(v: npt.ArrayLike, name: str) -> npt.NDArray[np.float64]:
    arr = np.asarray(v, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty (n, d) array, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} holds NaN or infinite values")
    return arr


def mmd_rbf(
    x: npt.ArrayLike, y: npt.ArrayLike, gamma: float | None = None, *, unbiased: bool = False
) -> float:
    """Squared kernel MMD between two samples with the RBF kernel ``exp(-gamma ||p - q||^2)``.

    By default the biased (V-statistic) estimate
    ``mean k(x, x') + mean k(y, y') - 2 mean k(x, y)`` over all pairs including each point
    with itself: never negative, and exactly 0 when the two samples are the same multiset.
    ``unbiased=True`` leaves the self-pairs out of the within-sample means (the U-statistic);
    it can be slightly negative and is not 0 for identical samples.

    Args:
        x: ``(n, d)`` embeddings of the first set (e.g. CLIP image embeddings).
        y: ``(m, d)`` embeddings of the second set, same ``d``.
        gamma: Kernel width parameter; None picks it by `median_heuristic_gamma` on the pooled
            samples.
        unbiased: Use the unbiased estimate (needs at least 2 points per set).

    Returns:
        The MMD² estimate.

    Raises:
        ValueError: Inputs are not non-empty 2-D arrays of equal width, hold non-finite
            values, `gamma` is not positive, or ``unbiased`` with fewer than 2 points in a set.

    """
    xa, ya = _points(x, "x"), _points(y, "y")
    if xa.shape[1] != ya.shape[1]:
        raise ValueError(f"x and y differ in dimension: {xa.shape[1]} vs {ya.shape[1]}")
    g = median_heuristic_gamma(xa, ya) if gamma is None else float(gamma)
    if not (math.isfinite(g) and g > 0):
        raise ValueError(f"gamma must be a positive number, got {gamma}")
    kxx = np.exp(-g * _squared_distances(xa, xa))
    kyy = np.exp(-g * _squared_distances(ya, ya))
    kxy = np.exp(-g * _squared_distances(xa, ya))
    n, m = xa.shape[0], ya.shape[0]
    if unbiased:
        if n < 2 or m < 2:
            raise ValueError(f"the unbiased MMD needs >= 2 points per set, got {n} and {m}")
        # The diagonal of an RBF kernel matrix is exactly 1.
        xx = (kxx.sum() - n) / (n * (n - 1))
        yy = (kyy.sum() - m) / (m * (m - 1))
    else:
        xx, yy = kxx.mean(), kyy.mean()
    return float(xx + yy - 2.0 * kxy.mean())
