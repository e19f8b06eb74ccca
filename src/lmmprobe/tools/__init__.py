"""Image tools: Dysca's corruptions and print attack, APEx's transforms, and their registry."""

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
from lmmprobe.tools.registry import (
    TOOLS,
    ToolCallError,
    ToolSpec,
    call_tool,
    get_tool,
    tool,
    tool_catalog,
)

__all__ = [
    "ANGLES",
    "CORRUPTIONS",
    "FONT_SIZES_1024",
    "GRID",
    "OPACITIES",
    "PRINT_COLORS",
    "TOOLS",
    "PrintAttack",
    "ToolCallError",
    "ToolSpec",
    "apply_print_attack",
    "call_tool",
    "cell_box",
    "corrupt",
    "get_tool",
    "sample_print_attack",
    "severity_params",
    "tool",
    "tool_catalog",
]
