"""The float comparison the parity tests use for kernel-computed values is tight, not a pass."""

import math

from tests.parity._floats import F32_TOLERANCE, close_f32, close_tree, rounded_close


def test_last_bits_pass_and_real_differences_fail() -> None:
    assert close_f32(0.590488851070404, 0.5904888510704041)
    assert close_f32(-12.3456, -12.3456 * (1 + 0.5 * F32_TOLERANCE))
    assert not close_f32(-12.3456, -12.3456 * (1 + 3 * F32_TOLERANCE))
    assert not close_f32(0.5, 0.5 + 1e-5)  # a 1e-5 change is a different score
    assert close_f32(1e-9, 5e-7)  # near zero the bound is absolute
    assert not close_f32(1e-9, 5e-6)


def test_nan_matches_only_nan_and_shapes_must_match() -> None:
    assert close_f32(math.nan, math.nan)
    assert not close_f32(math.nan, 0.0)
    assert not close_f32(0.0, math.nan)
    assert close_tree({"f1": [0.5, math.nan]}, {"f1": [0.5 + 1e-8, math.nan]})
    assert not close_tree({"f1": [0.5]}, {"f1": [0.5, 0.5]})
    assert not close_tree({"p": [0.5]}, {"f1": [0.5]})


def test_rounded_values_may_flip_only_on_a_boundary() -> None:
    assert rounded_close(0.08, 0.08, 0.0841, 2)
    assert not rounded_close(0.09, 0.08, 0.0841, 2)  # far from 0.085: no flip allowed
    assert rounded_close(0.09, 0.08, 0.08499999995, 2)  # on the boundary: either side
