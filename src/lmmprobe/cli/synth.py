"""``lmmprobe synth``: generate and inspect synthetic (Dysca-style) benchmarks."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, help="Generate and inspect synthetic benchmarks (Dysca).")
