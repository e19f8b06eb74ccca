"""docs/architecture.md stays true: its layer drawings are the import contracts, its package
table names every module, and the store version it states is the code's.

The contracts themselves (pyproject.toml, checked by ``lint-imports``) are the source of truth;
this test fails when the page and the contracts part, naming the line to change.
"""

from __future__ import annotations

import pkgutil
import re
import tomllib
from pathlib import Path

import lmmprobe
from lmmprobe.store.layout import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = Path(lmmprobe.__file__).parent


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _layer_contracts() -> dict[str, list[str]]:
    """Container -> its layers (top first), comment lines dropped, as pyproject writes them."""
    out: dict[str, list[str]] = {}
    for contract in _contracts():
        if contract["type"] == "layers":
            (container,) = contract["containers"]  # type: ignore[misc]
            out[str(container)] = [str(layer) for layer in contract["layers"]]  # type: ignore[attr-defined]
    return out


def _names(line: str) -> list[str]:
    """The module names of one drawn layer: ``a | b`` or ``a · b``, parentheses dropped."""
    return [part.strip().strip("()") for part in re.split(r"[|·]", line) if part.strip()]


def _fenced_blocks(text: str) -> list[list[str]]:
    blocks, current, inside = [], [], False
    for line in text.splitlines():
        if line.startswith("```"):
            if inside:
                blocks.append(current)
            current, inside = [], not inside
        elif inside:
            current.append(line)
    return blocks


def test_the_layer_drawing_is_the_layers_contract() -> None:
    doc = DOC.read_text()
    drawing = next(b for b in _fenced_blocks(doc) if b and b[0].strip() == "cli")
    drawn = [sorted(_names(line)) for line in drawing if line.strip()]
    contract = [sorted(_names(layer)) for layer in _layer_contracts()["lmmprobe"]]
    assert drawn == contract, (
        "docs/architecture.md's layer drawing differs from the `layers` contract in "
        f"pyproject.toml:\n drawn:    {drawn}\n contract: {contract}"
    )


def _interior_line(container: str, layers: list[str]) -> str:
    package = container.removeprefix("lmmprobe.")
    return f"{package}: " + " > ".join(" ".join(layer.split()) for layer in layers)


def test_every_interior_contract_is_drawn_and_nothing_else() -> None:
    doc = DOC.read_text()
    contracts = {c: ls for c, ls in _layer_contracts().items() if c != "lmmprobe"}
    want = {_interior_line(c, ls) for c, ls in contracts.items()}
    block = next(
        (b for b in _fenced_blocks(doc) if any(" > " in line for line in b)),
        [],
    )
    drawn = {line.strip() for line in block if line.strip()}
    assert drawn == want, (
        "the 'Inside the packages' block of docs/architecture.md differs from the interior "
        f"contracts:\n missing from the page: {sorted(want - drawn)}\n"
        f" on the page, not a contract: {sorted(drawn - want)}"
    )


def _package_rows(doc: str) -> dict[str, str]:
    """``package name -> its row`` from the package table (first cell is `` `name/` ``)."""
    rows: dict[str, str] = {}
    for line in doc.splitlines():
        m = re.match(r"\| `([a-z_]+)(/|\.py)` \|(.*)\|\s*$", line)
        if m:
            rows[m.group(1) + m.group(2)] = m.group(3)
    return rows


def test_the_package_table_names_every_package_and_module_as_it_is() -> None:
    rows = _package_rows(DOC.read_text())
    missing: list[str] = []
    for info in pkgutil.iter_modules([str(PACKAGE)]):
        entry = info.name + ("/" if info.ispkg else ".py")
        if entry not in rows:
            missing.append(f"no row for `{entry}`")
            continue
        if not info.ispkg:
            continue
        for sub in pkgutil.iter_modules([str(PACKAGE / info.name)]):
            name = sub.name + ("/" if sub.ispkg else ".py")
            # `name.py`, `name/`, or (for a drawn set) `name` alone as a code span
            if not re.search(rf"`(?:[\w/]*/)?{re.escape(sub.name)}(?:\.py|/)?`", rows[entry]):
                missing.append(f"`{entry}` row does not mention `{name}`")
    stale = [
        entry
        for entry in rows
        if not (PACKAGE / entry.rstrip("/")).exists() and not (PACKAGE / entry).exists()
    ]
    assert not missing and not stale, "\n".join(
        missing + [f"row `{e}` names nothing that exists" for e in stale]
    )


def test_the_store_version_stated_is_the_codes() -> None:
    stated = re.findall(r"SCHEMA_VERSION`?, now (\d+)", DOC.read_text())
    assert stated == [str(SCHEMA_VERSION)], (
        f"docs/architecture.md states store version {stated}; the code's is {SCHEMA_VERSION}"
    )


def test_the_page_points_only_at_files_in_the_repository() -> None:
    doc = DOC.read_text()
    for target in re.findall(r"\]\(([^)#]+)\)", doc):
        if "://" in target:
            continue
        assert (DOC.parent / target).exists(), f"docs/architecture.md links to missing {target}"
    assert "DESIGN.md" not in doc, "docs/architecture.md names DESIGN.md, which is not in the repo"


def test_every_registry_is_listed_among_the_extension_points() -> None:
    section = DOC.read_text().split("## Extension points: one registry", 1)[1].split("\n## ", 1)[0]
    defined = {
        m.group(1): path.relative_to(PACKAGE).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        for m in re.finditer(
            r"^([A-Z][A-Z_]*)(?:\s*:[^=\n]*)?\s*=\s*Registry\(", path.read_text(), re.M
        )
    }
    assert len(defined) >= 10, defined  # the scan finds the registries at all
    missing = [
        f"`{name}` ({where})" for name, where in defined.items() if f"`{name}`" not in section
    ]
    assert not missing, (
        "docs/architecture.md's 'Extension points' section does not name: " + ", ".join(missing)
    )
