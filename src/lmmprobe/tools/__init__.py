"""Image tools: Dysca's corruptions and print attack, deterministic for a seed."""

from lmmprobe.tools.corruptions import CORRUPTIONS, corrupt, severity_params
from lmmprobe.tools.print_attack import (
    ANGLES,
    FONT_SIZES_1024,
    GRID,
    OPACITIES,
    PRINT_COLORS,
    PrintAttack,
    apply_print_attack,
    cell_box,
    sample_print_attack,
)

__all__ = [
    "ANGLES",
    "CORRUPTIONS",
    "FONT_SIZES_1024",
    "GRID",
    "OPACITIES",
    "PRINT_COLORS",
    "PrintAttack",
    "apply_print_attack",
    "cell_box",
    "corrupt",
    "sample_print_attack",
    "severity_params",
]
