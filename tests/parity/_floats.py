"""How parity tests compare floats that come out of BLAS/torch kernels.

Pure-Python definitions (ANLS, VQA accuracy, Elo, HEMM's normalization...) are compared bit for
bit. Values computed by float32 torch kernels (BARTScore, BERTScore, MiniLM cosines) are not:
the kernel a CPU dispatches to (AVX2 or AVX-512, one thread or several) and the library release
change the order of the float32 sums, and with it the last bits, while the definition is the
same. Those values are compared within `F32_TOLERANCE`, stated next to each parity row in
docs/definitions.md.

Why 1e-6: float32 keeps 24 bits, one unit in the last place (ulp) of a value in [1, 2) is
2**-23 ~ 1.19e-7, so 1e-6 is about 8 ulp at magnitude 1: room for a reordered reduction, far
below any difference a definition would make (a changed token, length or reference moves these
scores by 1e-3 or more). The bound is relative above magnitude 1 (BARTScore's log-probabilities
are around -5 to -20) and absolute below it, because a value near 0 (a cosine, a BERTScore
rescaled as (s - b) / (1 - b)) inherits its error from operands of magnitude about 1.
"""

from __future__ import annotations

import math
from typing import Any

F32_TOLERANCE = 1e-6
"""Bound on |got - want| / max(1, |want|) for values from float32 kernels."""


def close_f32(got: float, want: float, tolerance: float = F32_TOLERANCE) -> bool:
    """Whether a kernel-computed float equals the reference within `tolerance` (NaN equals NaN)."""
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= tolerance * max(1.0, abs(want))


def close_tree(got: Any, want: Any, tolerance: float = F32_TOLERANCE) -> bool:
    """`close_f32` over nested dicts and lists of floats; keys and lengths must match exactly."""
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and got.keys() == want.keys()
            and all(close_tree(got[k], want[k], tolerance) for k in want)
        )
    if isinstance(want, list | tuple):
        return (
            isinstance(got, list | tuple)
            and len(got) == len(want)
            and all(close_tree(g, w, tolerance) for g, w in zip(got, want, strict=True))
        )
    if want is None or got is None:
        return got is want
    return close_f32(float(got), float(want), tolerance)


def rounded_close(got: float, expected: float, unrounded: float, digits: int) -> bool:
    """A value rounded to `digits` after a float32 kernel, against the reference's.

    Equal, or, where the reference's unrounded value lies within `F32_TOLERANCE` of a rounding
    boundary, the neighbour that the same value a few ulp away rounds to.
    """
    if got == expected:
        return True
    step = F32_TOLERANCE * max(1.0, abs(unrounded))
    return got in (round(unrounded - step, digits), round(unrounded + step, digits))
