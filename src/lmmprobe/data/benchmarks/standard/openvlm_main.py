"""The OpenVLM leaderboard's every column: ``--data openvlm-main`` runs its 18 (MAIN_FIELDS)."""

from __future__ import annotations

from lmmprobe.data.benchmarks.standard._leaderboard import leaderboard_set
from lmmprobe.metrics.leaderboard import OPENVLM_MAIN

__all__ = ["OPENVLM_MAIN_SET"]

OPENVLM_MAIN_SET = leaderboard_set(
    "openvlm-main",
    "OpenVLM leaderboard: all 18 columns and their Avg Score (MAIN_FIELDS)",
    OPENVLM_MAIN,
    "openvlm_avg",
)
"""Every column a user can tick on the leaderboard; its average is the one the leaderboard shows
with every box ticked (MME and LLaVA-Bench among them)."""
