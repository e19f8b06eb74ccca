"""Image tools: APEx's select tools and transforms, Dysca's corruptions and print attack.

The registry (`registry`) derives each tool's argument schema from its signature; `compose`
validates orchestrator-written calls and runs one select call then any transforms, seeded.
"""

from lmmprobe.tools.compose import ComposedImage, ToolCall, catalog, compose, validate_call
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
    ToolKind,
    ToolSpec,
    call_tool,
    get_tool,
    select_tool,
    tool,
    tool_catalog,
    tool_names,
)
from lmmprobe.tools.retrieval import (
    ClassTaxonomy,
    CollectionError,
    LabelledCollection,
    imagenet_x_taxonomy,
    open_collection,
)
from lmmprobe.tools.select import SelectContext, SelectedImage

__all__ = [
    "ANGLES",
    "CORRUPTIONS",
    "FONT_SIZES_1024",
    "GRID",
    "OPACITIES",
    "PRINT_COLORS",
    "TOOLS",
    "ClassTaxonomy",
    "CollectionError",
    "ComposedImage",
    "LabelledCollection",
    "PrintAttack",
    "SelectContext",
    "SelectedImage",
    "ToolCall",
    "ToolCallError",
    "ToolKind",
    "ToolSpec",
    "apply_print_attack",
    "call_tool",
    "catalog",
    "cell_box",
    "compose",
    "corrupt",
    "get_tool",
    "imagenet_x_taxonomy",
    "open_collection",
    "sample_print_attack",
    "select_tool",
    "severity_params",
    "tool",
    "tool_catalog",
    "tool_names",
    "validate_call",
]
