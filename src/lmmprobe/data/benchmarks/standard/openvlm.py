"""The OpenVLM leaderboard's default set: ``--data openvlm`` runs its 8 columns' benchmarks."""

from __future__ import annotations

from lmmprobe.data.benchmarks.standard._leaderboard import leaderboard_set
from lmmprobe.metrics.leaderboard import OPENVLM_DEFAULT

__all__ = ["OPENVLM"]

OPENVLM = leaderboard_set(
    "openvlm",
    "OpenVLM leaderboard: its default 8 columns and Avg Score (DEFAULT_BENCH)",
    OPENVLM_DEFAULT,
    "openvlm_avg",
)
"""MMBench v1.1 (EN, CN), MMStar, MMMU val, MathVista, OCRBench, AI2D, HallusionBench, MM-Vet:
the columns the leaderboard averages when it opens."""
