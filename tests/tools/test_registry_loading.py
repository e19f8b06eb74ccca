"""The tool registry lists and resolves every built-in tool on first use, with no helper call."""

from __future__ import annotations

from tests.fresh_python import run_fresh

from lmmprobe.tools import TOOLS, tool_names


def test_fresh_registry_lists_every_builtin_tool() -> None:
    # Only the registry module: the modules defining tools are imported by its first listing,
    # so it lists what it lists once every tool module (and the package) is imported.
    first, after = run_fresh(
        "from lmmprobe.tools.registry import TOOLS\n"
        "print(' '.join(TOOLS.names()))\n"
        "import lmmprobe.tools, lmmprobe.tools.generated, lmmprobe.tools.select\n"
        "import lmmprobe.tools.transforms\n"
        "print(' '.join(TOOLS.names()))\n"
    )
    assert first == after
    assert len(first.split()) > 2


def test_fresh_registry_resolves_a_tool_by_name() -> None:
    name = next(n for n in tool_names("transform"))
    lines = run_fresh(
        f"from lmmprobe.tools.registry import TOOLS\nprint(TOOLS.get({name!r}).kind)\n"
    )
    assert lines == ["transform"]


def test_registry_and_helpers_agree() -> None:
    assert TOOLS.names() == tool_names()
    assert set(tool_names("select")) | set(tool_names("transform")) == set(tool_names())
