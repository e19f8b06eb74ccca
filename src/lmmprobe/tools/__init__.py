"""Image tools: APEx's select tools and transforms, as a registry an orchestrator calls by name.

The registry (`registry`) derives each tool's argument schema from its signature; `compose`
validates orchestrator-written calls and runs one select call then any transforms, seeded.
The pixels come from `lmmprobe.imaging` (renderers, Dysca's corruptions and print attack),
which the transforms wrap as tools.
"""

from lmmprobe.tools.compose import ComposedImage, ToolCall, catalog, compose, validate_call
from lmmprobe.tools.registry import (
    TOOLS,
    SelectedImage,
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
from lmmprobe.tools.select import SelectContext

__all__ = [
    "TOOLS",
    "ClassTaxonomy",
    "CollectionError",
    "ComposedImage",
    "LabelledCollection",
    "SelectContext",
    "SelectedImage",
    "ToolCall",
    "ToolCallError",
    "ToolKind",
    "ToolSpec",
    "call_tool",
    "catalog",
    "compose",
    "get_tool",
    "imagenet_x_taxonomy",
    "open_collection",
    "select_tool",
    "tool",
    "tool_catalog",
    "tool_names",
    "validate_call",
]
