"""No package of lmmprobe has an import circle inside it.

The layer contracts (pyproject ``[tool.importlinter]``) order the packages and the insides of
several; this test covers every package, those without a contract included (the benchmark
definitions of ``data.benchmarks``, ``models``, ``synth``...). Two views, as grimp (import-linter's
graph library) sees the imports, those inside functions and under ``TYPE_CHECKING`` included:

- modules: no set of modules imports itself round (a strongly connected component);
- packages: no circle among the children of any package, a subpackage counted as one (what a
  layers contract of that package would need).

Run as a script, it prints every circle it finds: ``python tests/test_import_circles.py``.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp
import pytest

Graph = Mapping[str, set[str]]


def module_graph(package: str) -> dict[str, set[str]]:
    """Every module of `package` and the modules of `package` it imports directly."""
    # cache_dir=None: grimp would otherwise write a cache folder into the working directory.
    g = grimp.build_graph(package, cache_dir=None)
    return {m: set(g.find_modules_directly_imported_by(m)) & g.modules for m in g.modules}


def strongly_connected(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a deep import chain cannot hit Python's recursion limit.
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def one_circle(graph: Graph, component: Iterable[str]) -> list[str]:
    """A shortest import circle through the first module of `component`, as a path."""
    members = set(component)
    start = min(members)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(graph.get(node, set()) & members):
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if target not in came_from:
                came_from[target] = node
                queue.append(target)
    return sorted(members)  # unreachable for a strongly connected component


def children_graph(graph: Graph, package: str) -> dict[str, set[str]]:
    """Imports among the children of `package`, each child standing for everything under it."""
    prefix = package + "."
    children = {
        m[: len(prefix)] + m[len(prefix) :].split(".")[0] for m in graph if m.startswith(prefix)
    }

    def child(module: str) -> str | None:
        if not module.startswith(prefix):
            return None
        return prefix + module[len(prefix) :].split(".")[0]

    out: dict[str, set[str]] = {c: set() for c in children}
    for module, targets in graph.items():
        source = child(module)
        if source is None:
            continue
        for target in targets:
            owner = child(target)
            if owner is not None and owner != source:
                out[source].add(owner)
    return out


def circles(package: str) -> list[str]:
    """Every import circle inside `package`, one line each naming its path."""
    graph = module_graph(package)
    lines = [
        "modules: " + " -> ".join(one_circle(graph, component))
        for component in strongly_connected(graph)
    ]
    packages = sorted({m.rsplit(".", 1)[0] for m in graph if "." in m} | {package})
    for parent in packages:
        if parent not in graph:
            continue
        squashed = children_graph(graph, parent)
        for component in strongly_connected(squashed):
            path = " -> ".join(one_circle(squashed, component))
            lines.append(f"children of {parent}: {path}")
    return lines


def test_no_package_of_lmmprobe_has_an_import_circle() -> None:
    found = circles("lmmprobe")
    assert not found, "import circles inside lmmprobe's packages:\n" + "\n".join(found)


PACKAGE = {
    "__init__.py": "",
    "low.py": "X = 1\n",
    "a.py": "from circ_pkg_xyz import b\n",
    "b.py": "def f():\n    from circ_pkg_xyz import c  # inside a function: still an import\n",
    "c.py": "from circ_pkg_xyz import a, low\n",
    "sub/__init__.py": "",
    "sub/x.py": "from circ_pkg_xyz import top\n",
    "sub/y.py": "",
    "top.py": "from circ_pkg_xyz.sub import y\n",
}


@pytest.fixture
def circular_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A package with a three-module circle and a circle only between a module and a subpackage."""
    for name, source in PACKAGE.items():
        path = tmp_path / "circ_pkg_xyz" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "circ_pkg_xyz"


def test_a_circle_is_found_and_named_by_its_path(circular_package: str) -> None:
    found = circles(circular_package)
    assert "modules: circ_pkg_xyz.a -> circ_pkg_xyz.b -> circ_pkg_xyz.c -> circ_pkg_xyz.a" in found
    # top -> sub.y and sub.x -> top: no module circle, but the package `sub` and `top` import
    # each other, which no layering of circ_pkg_xyz allows.
    assert (
        "children of circ_pkg_xyz: circ_pkg_xyz.sub -> circ_pkg_xyz.top -> circ_pkg_xyz.sub"
        in found
    )
    assert len(found) == 3  # the module circle again, among the children of circ_pkg_xyz
    assert not any("low" in line for line in found)


if __name__ == "__main__":
    lines = circles(sys.argv[1] if len(sys.argv) > 1 else "lmmprobe")
    print("\n".join(lines) if lines else "no import circle")
